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
// unix socket: "prolog 42\n", "epilog 42\n" or "round 42\n". It carries
// no data the agent must trust: the job is in the store already, and the
// poke only makes the agent act now rather than at its next tick (sample a
// new job at once; send a finished job's report at once). A "round" poke
// alone gets an answer, one line: "ok\n" once the agent has sampled the
// GPUs and stored the round, "error <why>\n" when that failed. The
// Epilog sends it (AskRound) before it sums its job up, so that the
// accounting peaks of the job's processes, which exited a moment ago, are
// in the store; an agent older than the "round" poke closes the connection
// without an answer.
type Poke struct {
	Kind  string // PokeProlog, PokeEpilog or PokeRound
	JobID uint64
}

// Poke kinds.
const (
	PokeProlog = "prolog"
	PokeEpilog = "epilog"
	PokeRound  = "round"
)

// RoundWait is how long the Epilog waits for the agent's answer to a
// "round" poke before it sums the job up without it.
const RoundWait = 2 * time.Second

// roundAnswerWait bounds how long the agent's socket holds a "round"
// poke's connection for the answer (the round waits for the agent's loop,
// which may be busy housekeeping). The hook has given up long before.
const roundAnswerWait = 10 * time.Second

// pokeReq is a poke handed to the agent's loop; done, for a "round" poke,
// takes the round's result.
type pokeReq struct {
	Poke
	done chan<- error
}

// maxPoke bounds a poke line, maxAnswer the answer to a "round" poke.
const (
	maxPoke   = 64
	maxAnswer = 512
)

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
	if !ok || (kind != PokeProlog && kind != PokeEpilog && kind != PokeRound) {
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
	c, err := dialAgent(ctx, socket)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = io.WriteString(c, p.String()+"\n")
	return err
}

// dialAgent connects to the agent's socket, ctx's deadline the
// connection's.
func dialAgent(ctx context.Context, socket string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	return c, nil
}

// ErrNoRound is wrapped by AskRound when the agent closed the connection
// without an answer: an agent older than the "round" poke.
var ErrNoRound = errors.New("agent gave no answer to a round poke")

// AskRound asks the agent at socket for a sampling round now, for the
// Epilog of job jobID, and waits for it to be stored, at most timeout. An
// error (agent down, old or slow) means the round may not have happened.
func AskRound(ctx context.Context, socket string, jobID uint64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := dialAgent(ctx, socket)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) }) // a cancelled ctx ends the wait too
	defer stop()
	if _, err := io.WriteString(c, Poke{Kind: PokeRound, JobID: jobID}.String()+"\n"); err != nil {
		return err
	}
	line, err := bufio.NewReaderSize(io.LimitReader(c, maxAnswer), maxAnswer).ReadString('\n')
	switch {
	case line == "ok\n":
		return nil
	case strings.HasPrefix(line, "error "):
		return fmt.Errorf("agent's round: %s", strings.TrimSpace(strings.TrimPrefix(line, "error ")))
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%w (an augur-node older than this hook?)", ErrNoRound)
	case err != nil:
		return err
	}
	return fmt.Errorf("%w: %q", ErrNoRound, line)
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

// servePokes reads one poke per connection and hands it to out; a "round"
// poke's connection gets the round's result as its answer.
func servePokes(ctx context.Context, l net.Listener, out chan<- pokeReq, bad func(error)) {
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
			req := pokeReq{Poke: p}
			var done chan error
			if p.Kind == PokeRound {
				done = make(chan error, 1)
				req.done = done
				c.SetDeadline(time.Now().Add(roundAnswerWait))
			}
			select {
			case out <- req:
			case <-ctx.Done():
				return
			}
			if done == nil {
				return
			}
			answer := "ok\n"
			select {
			case err := <-done:
				if err != nil {
					msg := strings.ReplaceAll(err.Error(), "\n", " ")
					answer = "error " + msg[:min(len(msg), maxAnswer-8)] + "\n"
				}
			case <-ctx.Done():
				answer = "error agent stopping\n"
			}
			io.WriteString(c, answer)
		}()
	}
}
