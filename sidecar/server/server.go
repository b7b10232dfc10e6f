// Package server is augurd's unix-socket endpoint for the job_submit shim:
// it owns the socket file (stale-socket removal, mode), checks every caller
// with SO_PEERCRED, reads wire frames and writes answers. What to answer is
// the Handler's business.
//
//	shim ──connect──> Listen'd socket ──SO_PEERCRED: root/SlurmUser?──> conn loop
//	                                                   └─ no: close, count
//	conn loop: ReadFrame ─> DecodeRequest ─> Handler.Handle ─> Write(Response)
//
// A connection may carry several requests in turn; the shim uses one per
// submission. Garbage closes the connection: the shim then fails open.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// Peer is the verified identity of a connected process.
type Peer struct {
	UID, GID uint32
	PID      int32
}

// Handler answers one request. It must return quickly: slurmctld waits.
// Work that need not delay the answer (recording, metrics, logging) goes in
// the returned function, which the server runs after the answer is written;
// it may be nil.
type Handler interface {
	Handle(ctx context.Context, peer Peer, req *wire.Request) (wire.Response, func())
}

// Events lets the owner count what the server refuses.
type Events struct {
	PeerRefused  func(Peer)
	BadRequest   func(error)
	HandlerPanic func(any)
}

// Options configure a Server.
type Options struct {
	// Allowed uids may talk to the server (root and the SlurmUser).
	Allowed map[uint32]bool
	Logger  *slog.Logger
	Events  Events
	// IdleTimeout closes a connection that sends nothing for this long.
	IdleTimeout time.Duration
	// MaxFrame bounds one request frame.
	MaxFrame int
}

// Server serves one listener.
type Server struct {
	opts Options
	h    Handler
	ln   *net.UnixListener

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// ErrInUse is returned by Listen when another process answers on the socket.
var ErrInUse = errors.New("socket in use by a running process")

// Listen creates the socket at path with the given mode. A leftover socket
// file that nobody answers on is removed first; one that answers means
// another augurd runs, and Listen refuses. Anything at path that is not a
// socket is left alone and reported.
func Listen(path string, mode os.FileMode) (*net.UnixListener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("socket directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket: remove it or change socket.path", path)
		}
		if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: %w (is augurd already running?)", path, ErrInUse)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket %s: %w", path, err)
		}
	}
	// Create the socket with no permissions for others from the first
	// instant, then open it up to exactly mode.
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, mode); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod %s: %w", path, err)
	}
	return ln, nil
}

// New returns a server for ln.
func New(ln *net.UnixListener, h Handler, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = 10 * time.Second
	}
	if opts.MaxFrame == 0 {
		opts.MaxFrame = wire.MaxFrame
	}
	return &Server{opts: opts, h: h, ln: ln, conns: map[net.Conn]struct{}{}}
}

// Serve accepts connections until ctx is done or the listener fails, then
// waits for the requests in flight (at most grace) and returns.
func (s *Server) Serve(ctx context.Context, grace time.Duration) error {
	stop := context.AfterFunc(ctx, func() { s.ln.Close() })
	defer stop()
	var err error
	for {
		var c *net.UnixConn
		c, err = s.ln.AcceptUnix()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			break
		}
		s.track(c, true)
		s.wg.Add(1)
		go s.serveConn(ctx, c)
	}
	s.drain(grace)
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("accept: %w", err)
}

func (s *Server) track(c net.Conn, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		s.conns[c] = struct{}{}
	} else {
		delete(s.conns, c)
	}
}

// drain waits for connections to finish their request, then closes the rest.
func (s *Server) drain(grace time.Duration) {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	s.mu.Lock()
	for c := range s.conns {
		// Wake idle readers; a request being answered still finishes.
		c.SetReadDeadline(time.Now())
	}
	s.mu.Unlock()
	select {
	case <-done:
	case <-time.After(grace):
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		<-done
	}
}

func peerOf(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *syscall.Ucred
	var credErr error
	err = raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	})
	if err == nil {
		err = credErr
	}
	if err != nil {
		return Peer{}, fmt.Errorf("SO_PEERCRED: %w", err)
	}
	return Peer{UID: cred.Uid, GID: cred.Gid, PID: cred.Pid}, nil
}

func (s *Server) serveConn(ctx context.Context, c *net.UnixConn) {
	defer s.wg.Done()
	defer s.track(c, false)
	defer c.Close()
	peer, err := peerOf(c)
	if err != nil {
		s.opts.Logger.Warn("cannot identify caller", "err", err)
		return
	}
	if !s.opts.Allowed[peer.UID] {
		s.opts.Logger.Warn("refused caller: only root and the SlurmUser may use the shim socket",
			"peer_uid", peer.UID, "peer_pid", peer.PID)
		if f := s.opts.Events.PeerRefused; f != nil {
			f(peer)
		}
		return
	}
	for ctx.Err() == nil {
		c.SetReadDeadline(time.Now().Add(s.opts.IdleTimeout))
		body, err := wire.ReadFrame(c, s.opts.MaxFrame)
		if err != nil {
			if !errors.Is(err, io.EOF) && !isTimeout(err) {
				s.bad(peer, err)
			}
			return
		}
		req, err := wire.DecodeRequest(body)
		if err != nil {
			s.bad(peer, err)
			return
		}
		resp, after, ok := s.handle(ctx, peer, req)
		if !ok {
			return // no answer: the shim fails open
		}
		c.SetWriteDeadline(time.Now().Add(time.Second))
		werr := wire.Write(c, resp)
		if after != nil {
			s.safely(req.Token, after)
		}
		if werr != nil {
			s.opts.Logger.Debug("answer not delivered (the shim gave up waiting?)", "err", werr, "token", req.Token)
			return
		}
	}
}

func (s *Server) handle(ctx context.Context, peer Peer, req *wire.Request) (resp wire.Response, after func(), ok bool) {
	defer func() {
		if r := recover(); r != nil {
			s.opts.Logger.Error("panic deciding a submission; the shim will accept it unchanged",
				"panic", fmt.Sprint(r), "token", req.Token, "stack", string(debug.Stack()))
			if f := s.opts.Events.HandlerPanic; f != nil {
				f(r)
			}
			ok = false
		}
	}()
	resp, after = s.h.Handle(ctx, peer, req)
	return resp, after, true
}

// safely runs a handler's after-work, containing a panic in it.
func (s *Server) safely(token string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			s.opts.Logger.Error("panic after answering a submission", "panic", fmt.Sprint(r),
				"token", token, "stack", string(debug.Stack()))
			if f := s.opts.Events.HandlerPanic; f != nil {
				f(r)
			}
		}
	}()
	f()
}

func (s *Server) bad(peer Peer, err error) {
	s.opts.Logger.Warn("malformed request on the shim socket", "err", err, "peer_uid", peer.UID, "peer_pid", peer.PID)
	if f := s.opts.Events.BadRequest; f != nil {
		f(err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
