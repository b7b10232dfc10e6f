package server

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

type handlerFunc func(ctx context.Context, peer Peer, req *wire.Request) wire.Response

func (f handlerFunc) Handle(ctx context.Context, peer Peer, req *wire.Request) (wire.Response, func()) {
	return f(ctx, peer, req), nil
}

func echo(_ context.Context, peer Peer, req *wire.Request) wire.Response {
	return wire.Response{V: wire.Version, Token: req.Token, Action: wire.Accept, Annotation: "augur:ok"}
}

type counters struct{ refused, bad, panics atomic.Int64 }

func serve(t *testing.T, h Handler, allowed map[uint32]bool, mode os.FileMode) (string, *counters) {
	t.Helper()
	return serveIn(t, t.TempDir(), h, allowed, mode)
}

func serveIn(t *testing.T, dir string, h Handler, allowed map[uint32]bool, mode os.FileMode) (string, *counters) {
	t.Helper()
	path := filepath.Join(dir, "augurd.sock")
	ln, err := Listen(path, mode)
	if err != nil {
		t.Fatal(err)
	}
	var c counters
	srv := New(ln, h, Options{Allowed: allowed, Events: Events{
		PeerRefused:  func(Peer) { c.refused.Add(1) },
		BadRequest:   func(error) { c.bad.Add(1) },
		HandlerPanic: func(any) { c.panics.Add(1) },
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- srv.Serve(ctx, time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket file left behind after stop")
		}
	})
	return path, &c
}

func self() map[uint32]bool { return map[uint32]bool{uint32(os.Getuid()): true} }

func ask(t *testing.T, path string, req any) (*wire.Response, error) {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if err := wire.Write(c, req); err != nil {
		return nil, err
	}
	body, err := wire.ReadFrame(c, 1<<20)
	if err != nil {
		return nil, err
	}
	return wire.DecodeResponse(body)
}

func TestServeAnswers(t *testing.T) {
	path, _ := serve(t, handlerFunc(echo), self(), 0o660)
	resp, err := ask(t, path, &wire.Request{V: 1, Token: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Token != "abc" || resp.Action != wire.Accept {
		t.Errorf("got %+v", resp)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o660 {
		t.Errorf("socket mode %04o, want 0660", got)
	}
}

func TestSeveralRequestsOnOneConnection(t *testing.T) {
	path, _ := serve(t, handlerFunc(echo), self(), 0o660)
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tok := range []string{"a", "b", "c"} {
		wire.Write(c, &wire.Request{V: 1, Token: tok})
		body, err := wire.ReadFrame(c, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		resp, _ := wire.DecodeResponse(body)
		if resp.Token != tok {
			t.Fatalf("token %q, want %q", resp.Token, tok)
		}
	}
}

func TestGarbageClosesAndCounts(t *testing.T) {
	path, cnt := serve(t, handlerFunc(echo), self(), 0o660)
	for _, junk := range [][]byte{
		[]byte("GET / HTTP/1.1\r\n\r\n"),
		[]byte("AUG1\x00\x00\x00\x05hello"),
		[]byte("AUG1\x00\x00\x00\x0f{\"v\":7,\"x\":1}  "),
	} {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(junk)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if n, err := c.Read(make([]byte, 16)); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("after %q: read %d, %v; want the server to hang up", junk, n, err)
		}
		c.Close()
	}
	if got := cnt.bad.Load(); got != 3 {
		t.Errorf("bad requests counted: %d, want 3", got)
	}
}

func TestHandlerPanicIsContained(t *testing.T) {
	path, cnt := serve(t, handlerFunc(func(context.Context, Peer, *wire.Request) wire.Response {
		panic("boom")
	}), self(), 0o660)
	if _, err := ask(t, path, &wire.Request{V: 1, Token: "0e"}); err == nil {
		t.Fatal("a panicking handler answered")
	}
	if cnt.panics.Load() != 1 {
		t.Errorf("panics counted %d", cnt.panics.Load())
	}
	// The server still serves: the next request reaches the handler again.
	if _, err := ask(t, path, &wire.Request{V: 1, Token: "0f"}); err == nil || cnt.panics.Load() != 2 {
		t.Errorf("server stopped serving after a panic (panics %d)", cnt.panics.Load())
	}
}

func TestStaleSocketRemovedLiveOneRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sock")
	// A stale socket: bound, then its listener closed without unlinking.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	ln2, err := Listen(path, 0o660)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	defer ln2.Close()
	if _, err := Listen(path, 0o660); !errors.Is(err, ErrInUse) {
		t.Errorf("second augurd on a live socket: err = %v, want ErrInUse", err)
	}
	regular := filepath.Join(dir, "file")
	os.WriteFile(regular, []byte("x"), 0o600)
	if _, err := Listen(regular, 0o660); err == nil {
		t.Error("a regular file at socket.path was replaced")
	}
}

// TestPeerCredRefusesOthers runs a client as user nobody against a socket
// that file permissions would let in (0666): SO_PEERCRED must refuse it.
func TestPeerCredRefusesOthers(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	if os.Getenv("AUGUR_PEERCRED_CLIENT") != "" {
		return
	}
	// t.TempDir's parent is private; nobody must reach the socket and binary.
	dir, err := os.MkdirTemp("", "augur-peercred-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	path, cnt := serveIn(t, dir, handlerFunc(echo), map[uint32]bool{0: true}, 0o666)
	bin := filepath.Join(dir, "client.test")
	self, _ := os.Executable()
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^TestPeerCredClient$")
	cmd.Env = append(os.Environ(), "AUGUR_PEERCRED_CLIENT="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client as nobody: %v\n%s", err, out)
	}
	if cnt.refused.Load() != 1 {
		t.Errorf("refused %d callers, want 1", cnt.refused.Load())
	}
	// Root still gets answers.
	if _, err := ask(t, path, &wire.Request{V: 1, Token: "00"}); err != nil {
		t.Errorf("root refused: %v", err)
	}
}

// TestPeerCredClient is the child half of TestPeerCredRefusesOthers.
func TestPeerCredClient(t *testing.T) {
	path := os.Getenv("AUGUR_PEERCRED_CLIENT")
	if path == "" {
		t.Skip("child of TestPeerCredRefusesOthers")
	}
	if os.Getuid() == 0 {
		t.Fatal("child runs as root")
	}
	if resp, err := ask(t, path, &wire.Request{V: 1, Token: "01"}); err == nil {
		t.Fatalf("user %d got an answer: %+v", os.Getuid(), resp)
	}
}
