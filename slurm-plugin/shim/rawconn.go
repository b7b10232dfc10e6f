package shim

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

// rawConn is a unix stream socket driven with blocking system calls on the
// calling thread, bounded by SO_SNDTIMEO/SO_RCVTIMEO. Inside slurmctld the
// caller is one of slurmctld's own threads in a cgo call: a blocking read
// there costs one context switch, where Go's network poller would park a
// goroutine and wake runtime threads to hand the answer back, which measured
// as most of the round trip.
type rawConn struct {
	fd       int
	deadline time.Time
}

var errTimeout = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

var _ net.Error = timeoutError{}

// dialRaw connects to the unix socket at path. Connecting to a unix socket
// does not wait for the peer: it succeeds, or fails at once (no socket,
// nobody listening, backlog full).
func dialRaw(path string) (*rawConn, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	sa := &syscall.SockaddrUnix{Name: path}
	for {
		err = syscall.Connect(fd, sa)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: "unix", Addr: &net.UnixAddr{Name: path, Net: "unix"}, Err: os.NewSyscallError("connect", err)}
	}
	return &rawConn{fd: fd}, nil
}

func (c *rawConn) SetDeadline(t time.Time) error {
	c.deadline = t
	return nil
}

// arm sets the kernel timeout for the next call to what is left of the deadline.
func (c *rawConn) arm(opt int) error {
	if c.deadline.IsZero() {
		return nil
	}
	left := time.Until(c.deadline)
	if left <= 0 {
		return errTimeout
	}
	tv := syscall.NsecToTimeval(left.Nanoseconds())
	if tv.Sec == 0 && tv.Usec == 0 {
		tv.Usec = 1 // a zero timeout would mean "wait forever"
	}
	return syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, opt, &tv)
}

func (c *rawConn) Write(p []byte) (int, error) {
	if err := c.arm(syscall.SO_SNDTIMEO); err != nil {
		return 0, err
	}
	done := 0
	for done < len(p) {
		// MSG_NOSIGNAL: a peer that hung up is an EPIPE error here, never a
		// SIGPIPE delivered to slurmctld.
		n, err := syscall.SendmsgN(c.fd, p[done:], nil, nil, syscall.MSG_NOSIGNAL)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return done, errTimeout
		case err != nil:
			return done, os.NewSyscallError("sendmsg", err)
		}
		done += n
	}
	return done, nil
}

func (c *rawConn) Read(p []byte) (int, error) {
	if err := c.arm(syscall.SO_RCVTIMEO); err != nil {
		return 0, err
	}
	for {
		n, err := syscall.Read(c.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, errTimeout
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0 && len(p) > 0:
			return 0, eof
		}
		return n, nil
	}
}

func (c *rawConn) Close() error {
	if c.fd < 0 {
		return errors.New("closed twice")
	}
	err := syscall.Close(c.fd)
	c.fd = -1
	return err
}

func (c *rawConn) String() string { return fmt.Sprintf("unix fd %d", c.fd) }
