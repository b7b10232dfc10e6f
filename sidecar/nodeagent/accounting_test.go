package nodeagent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/outcome"
	"github.com/augur-hpc/augur/sidecar/telemetry"
	"github.com/augur-hpc/augur/sidecar/telemetry/fakegpu"
)

// endProcess kills a process started by jobProcess and reaps it, as
// slurmd does before it runs the Epilog.
func endProcess(t testing.TB, pid uint32) {
	t.Helper()
	p, err := os.FindProcess(int(pid))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.Wait()
}

// keepFake is a Deliverer that keeps the reports.
type keepFake struct {
	mu      sync.Mutex
	reports map[uint64][]byte
}

func (k *keepFake) Deliver(_ context.Context, jobID uint64, report []byte) (outcome.Ack, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.reports == nil {
		k.reports = map[uint64][]byte{}
	}
	k.reports[jobID] = report
	return outcome.Ack{JobID: jobID, Status: outcome.Stored}, nil
}

func (k *keepFake) report(t testing.TB, jobID uint64) outcome.Report {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	var r outcome.Report
	if err := json.Unmarshal(k.reports[jobID], &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestEpilogSeesTheLastSpike is the H200 case: a job's process grows, its
// last allocation takes the GPU to 99% for an instant between two samples,
// and it dies of it. With NVML accounting on, the Epilog's round (asked
// over the agent's real socket) reads the dead process's peak, so the
// report's peak is the spike and a failed job is an OOM suspect; a job
// that completed is not. Without accounting the spike is missed, as before.
func TestEpilogSeesTheLastSpike(t *testing.T) {
	const spike = 40550 // MiB: 99% of the A100's 40960
	cases := map[string]struct {
		accounting bool
		code2      string
		peak       float64
		suspect    bool
	}{
		"failed at the spike":                  {accounting: true, code2: "1:0", peak: spike, suspect: true},
		"completed after the spike":            {accounting: true, code2: "0:0", peak: spike},
		"failed, accounting off: spike unseen": {code2: "1:0", peak: 20000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, loads := openStore(t), &gpuLoads{}
			sock := filepath.Join(t.TempDir(), "node.sock")
			l, err := ListenPokes(sock)
			if err != nil {
				t.Fatal(err)
			}
			gpus, err := telemetry.Open(fakegpu.New(loads.load), telemetry.WithAccounting(tc.accounting))
			if err != nil {
				t.Fatal(err)
			}
			if on := gpus.Accounting()[0].On; on != tc.accounting {
				t.Fatalf("accounting on %v, want %v", on, tc.accounting)
			}
			pid := jobProcess(t, 1)
			send := &keepFake{}
			loads.set(0, fakegpu.Load{SMUtil: 80, PowerW: 250, Procs: []fakegpu.Proc{{PID: pid, UsedMiB: 20000}}})
			// Long intervals: only the hooks' pokes make rounds.
			a := New(Config{Node: "n", Interval: time.Hour, Housekeeping: time.Hour, SendEvery: time.Hour, LiveEvery: time.Hour},
				st, gpus, ProcFS{}, send, time.Now, quiet())
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- a.Run(ctx, l) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Error(err)
				}
			}()
			h := &Hooks{Store: st, Node: "n", Now: time.Now, Log: quiet(),
				Poke:  func(ctx context.Context, p Poke) error { return SendPoke(ctx, sock, p, time.Second) },
				Round: func(ctx context.Context, id uint64) error { return AskRound(ctx, sock, id, 5*time.Second) }}
			prolog(t, h, 1, 0)
			waitFor(t, func() bool { return a.Stats.Samples.Load() >= 1 })

			// The last allocation: 99% for an instant, then the process is gone.
			loads.set(0, fakegpu.Load{SMUtil: 80, PowerW: 250, Procs: []fakegpu.Proc{{PID: pid, PeakMiB: spike, Gone: true}}})
			endProcess(t, pid)
			epilog(t, h, 1, tc.code2)
			if n := a.Stats.Rounds.Load(); n != 2 {
				t.Errorf("%d rounds, want 2: the prolog's and the epilog's", n)
			}
			// The epilog's poke has the agent send the report at once.
			waitFor(t, func() bool { return a.Stats.Delivered.Load() == 1 })
			r := send.report(t, 1)
			if len(r.GPUs) != 1 {
				t.Fatalf("report GPUs %+v", r.GPUs)
			}
			if g := r.GPUs[0]; g.PeakMiB != tc.peak || g.EndMiB != tc.peak || r.OOMSuspect != tc.suspect {
				t.Errorf("peak %v, end %v, suspect %v; want %v, %v, %v", g.PeakMiB, g.EndMiB, r.OOMSuspect, tc.peak, tc.peak, tc.suspect)
			}
		})
	}
}

// TestEpilogWithoutARound: an agent that is down, older than the "round"
// poke, or too slow to answer leaves the Epilog to report from the
// samples it has; AskRound says why.
func TestEpilogWithoutARound(t *testing.T) {
	cases := map[string]struct {
		agent func(l net.Listener) // nil: nobody listens
		isErr func(error) bool
	}{
		"no agent": {isErr: func(err error) bool { return errors.Is(err, syscall.ENOENT) }},
		"an older agent: reads the poke, closes without an answer": {
			agent: func(l net.Listener) {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					bufio.NewReader(c).ReadString('\n')
					c.Close()
				}
			},
			isErr: func(err error) bool { return errors.Is(err, ErrNoRound) },
		},
		"a stuck agent: never answers": {
			agent: func(l net.Listener) {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					defer c.Close()
				}
			},
			isErr: func(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, c := openStore(t), newClock()
			sock := filepath.Join(t.TempDir(), "node.sock")
			if tc.agent != nil {
				l, err := net.Listen("unix", sock)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				go tc.agent(l)
			}
			err := AskRound(context.Background(), sock, 1, 100*time.Millisecond)
			if err == nil || !tc.isErr(err) {
				t.Errorf("AskRound: %v", err)
			}
			h, _ := hooks(st, c)
			var asked []error
			h.Round = func(ctx context.Context, id uint64) error {
				err := AskRound(ctx, sock, id, 100*time.Millisecond)
				asked = append(asked, err)
				return err
			}
			prolog(t, h, 1, 0)
			epilog(t, h, 1, "1:0")
			if len(asked) != 1 || asked[0] == nil {
				t.Errorf("rounds asked: %v", asked)
			}
			if r, ok := outbox(t, st)[1]; !ok || r.ExitState != StateFailed {
				t.Errorf("report %+v (present %v), want one, FAILED", r, ok)
			}
		})
	}
}

// TestAgentForgetsPids: the pid -> job memory for ended processes holds a
// few sampling rounds, and not past its job's Epilog.
func TestAgentForgetsPids(t *testing.T) {
	st, c, loads := openStore(t), newClock(), &gpuLoads{}
	h, _ := hooks(st, c)
	p1, p2 := jobProcess(t, 1), jobProcess(t, 2)
	loads.set(0, fakegpu.Load{Procs: []fakegpu.Proc{{PID: p1, UsedMiB: 100}}})
	loads.set(1, fakegpu.Load{Procs: []fakegpu.Proc{{PID: p2, UsedMiB: 100}}})
	prolog(t, h, 1, 0)
	prolog(t, h, 2, 1)
	a := New(Config{Node: "n"}, st, sampler(t, loads), ProcFS{}, &deliverFake{}, c.Now, quiet())
	remembered := func() map[uint32]uint64 {
		a.mu.Lock()
		defer a.mu.Unlock()
		out := map[uint32]uint64{}
		for pid, pj := range a.pidJobs {
			out[pid] = pj.job
		}
		return out
	}
	rounds(t, a, c, 1)
	if got := remembered(); len(got) != 2 || got[p1] != 1 || got[p2] != 2 {
		t.Fatalf("remembered %v", got)
	}
	a.forget(2) // job 2's Epilog: its process has gone meanwhile
	loads.set(0, fakegpu.Load{})
	loads.set(1, fakegpu.Load{})
	rounds(t, a, c, pidMemory)
	if got := remembered(); len(got) != 1 {
		t.Errorf("after %d rounds without it: %v, want p1 still", pidMemory, got)
	}
	rounds(t, a, c, 1)
	if got := remembered(); len(got) != 0 {
		t.Errorf("remembered %v, want nothing", got)
	}
}

// TestRoundPokeAnswers: the agent's socket answers a "round" poke with the
// round's result, a failure's reason on one line.
func TestRoundPokeAnswers(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "node.sock")
	l, err := ListenPokes(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan pokeReq, 1)
	go servePokes(ctx, l, got, func(err error) { t.Errorf("bad poke: %v", err) })
	for _, result := range []error{nil, errors.New("disk full\nand more")} {
		asked := make(chan error, 1)
		go func() { asked <- AskRound(ctx, sock, 42, 5*time.Second) }()
		p := <-got
		if p.Poke != (Poke{PokeRound, 42}) || p.done == nil {
			t.Fatalf("poke %+v", p)
		}
		p.done <- result
		err := <-asked
		switch {
		case result == nil && err != nil:
			t.Errorf("AskRound: %v, want nil", err)
		case result != nil && (err == nil || err.Error() != "agent's round: disk full and more"):
			t.Errorf("AskRound: %v, want the agent's reason", err)
		}
	}
}
