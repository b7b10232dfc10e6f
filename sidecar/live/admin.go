package live

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"syscall"
	"time"
)

// AdminRequest is one line on the admin socket.
type AdminRequest struct {
	Command string `json:"command"` // pause, resume, status
}

// AdminResponse is the answer line.
type AdminResponse struct {
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
	Status Status `json:"status"`
}

// Admin is the part of the loop the admin socket drives.
type Admin interface {
	SetPaused(ctx context.Context, paused bool, who string) (Status, error)
	Status() Status
}

// adminTimeout bounds one admin connection.
const adminTimeout = 10 * time.Second

// ServeAdmin answers `augur pause|resume|status` on ln until ctx ends. Only
// callers whose SO_PEERCRED uid is in allowed (root and SlurmUser) are
// served; others get an error line and are logged.
func ServeAdmin(ctx context.Context, ln *net.UnixListener, a Admin, allowed map[uint32]bool, log *slog.Logger) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("admin socket: %w", err)
		}
		go serveAdminConn(ctx, c, a, allowed, log)
	}
}

// maxAdminRequest bounds one admin request line (real ones are ~20 bytes).
const maxAdminRequest = 4096

func serveAdminConn(ctx context.Context, c *net.UnixConn, a Admin, allowed map[uint32]bool, log *slog.Logger) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(adminTimeout))
	enc := json.NewEncoder(c)
	// The request is read before anything is answered, also from a caller
	// about to be refused: closing on an unread request would give that
	// caller a broken pipe instead of the reason.
	line, rerr := bufio.NewReader(io.LimitReader(c, maxAdminRequest)).ReadBytes('\n')
	uid, pid, err := peerUID(c)
	if err != nil || !allowed[uid] {
		log.Warn("admin command refused", "peer_uid", uid, "peer_pid", pid, "err", err)
		enc.Encode(AdminResponse{Error: "only root and slurm_user may control augurd"})
		return
	}
	var req AdminRequest
	err = rerr
	if err == nil {
		err = json.Unmarshal(line, &req)
	}
	if err != nil {
		enc.Encode(AdminResponse{Error: "bad request: " + err.Error()})
		return
	}
	who := "uid " + strconv.FormatUint(uint64(uid), 10) + " (augur " + req.Command + ")"
	var resp AdminResponse
	switch req.Command {
	case "pause", "resume":
		st, err := a.SetPaused(ctx, req.Command == "pause", who)
		resp = AdminResponse{OK: err == nil, Status: st}
		if err != nil {
			resp.Error = err.Error()
		}
	case "status":
		resp = AdminResponse{OK: true, Status: a.Status()}
	default:
		resp = AdminResponse{Error: fmt.Sprintf("unknown command %q (pause, resume, status)", req.Command)}
	}
	enc.Encode(resp)
}

func peerUID(c *net.UnixConn) (uint32, int32, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if credErr != nil {
		return 0, 0, fmt.Errorf("SO_PEERCRED: %w", credErr)
	}
	return cred.Uid, cred.Pid, nil
}

// AdminCall sends one command to augurd's admin socket and returns the answer.
func AdminCall(ctx context.Context, path, command string) (AdminResponse, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return AdminResponse{}, fmt.Errorf("augurd's admin socket %s: %w (is augurd running with live.enabled: true?)", path, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if err := json.NewEncoder(c).Encode(AdminRequest{Command: command}); err != nil {
		return AdminResponse{}, err
	}
	var resp AdminResponse
	if err := json.NewDecoder(c).Decode(&resp); err != nil {
		return AdminResponse{}, fmt.Errorf("augurd's answer: %w", err)
	}
	if !resp.OK {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}
