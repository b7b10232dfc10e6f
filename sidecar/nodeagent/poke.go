package nodeagent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// A Poke is a hook telling the agent about a job, one line on the agent's
// unix socket: "prolog 42\n" or "epilog 42\n". It carries no data the
// agent must trust: the job is in the store already, and the poke only
// makes the agent act now rather than at its next tick (sample a new job at
// once; send a finished job's report at once).
type Poke struct {
	Kind  string // PokeProlog or PokeEpilog
	JobID uint64
}

// Poke kinds.
const (
	PokeProlog = "prolog"
	PokeEpilog = "epilog"
)

// maxPoke bounds a poke line.
const maxPoke = 64

// String is the wire form, without the newline.
func (p Poke) String() string { return p.Kind + " " + strconv.FormatUint(p.JobID, 10) }

// ErrBadPoke is wrapped by ParsePoke.
var ErrBadPoke = errors.New("bad poke")

// ParsePoke decodes one poke line (with or without its newline).
func ParsePoke(line string) (Poke, error) {
	if len(line) > maxPoke {
		return Poke{}, fmt.Errorf("%w: %d bytes", ErrBadPoke, len(line))
	}
	kind, id, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	if !ok || (kind != PokeProlog && kind != PokeEpilog) {
		return Poke{}, fmt.Errorf("%w: %q", ErrBadPoke, line)
	}
	n, err := strconv.ParseUint(id, 10, 63)
	if err != nil || n == 0 {
		return Poke{}, fmt.Errorf("%w: job id in %q", ErrBadPoke, line)
	}
	return Poke{Kind: kind, JobID: n}, nil
}

// SendPoke writes p to the agent's socket, giving up after timeout.
func SendPoke(ctx context.Context, socket string, p Poke, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	_, err = io.WriteString(c, p.String()+"\n")
	return err
}

// ListenPokes creates the agent's socket (removing a stale one), mode 0600:
// only root, which the hooks run as, may poke.
func ListenPokes(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(path)
	}
	if err := os.MkdirAll(dirOf(path), 0o755); err != nil {
		return nil, err
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i > 0 {
		return path[:i]
	}
	return "/"
}

// servePokes reads one poke per connection and hands it to out.
func servePokes(ctx context.Context, l net.Listener, out chan<- Poke, bad func(error)) {
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			bad(err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go func() {
			defer c.Close()
			c.SetDeadline(time.Now().Add(time.Second))
			line, err := bufio.NewReaderSize(io.LimitReader(c, maxPoke+1), maxPoke+1).ReadString('\n')
			if err != nil && line == "" {
				bad(err)
				return
			}
			p, err := ParsePoke(line)
			if err != nil {
				bad(err)
				return
			}
			select {
			case out <- p:
			case <-ctx.Done():
			}
		}()
	}
}
