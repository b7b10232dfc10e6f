package nodeagent

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/augur-hpc/augur/sidecar/outcome"
	"github.com/augur-hpc/augur/sidecar/telemetry/fakegpu"
)

const a100MiB = 40960 // dgxa100's A100-SXM4-40GB

var approx = cmpopts.EquateApprox(0, 1e-9)

// rounds runs n sampling rounds one interval apart.
func rounds(t *testing.T, a *Agent, c *clock, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		c.Advance(time.Second)
		if err := a.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func gpu(index int, peak, sm, energy float64, att string) outcome.GPU {
	return outcome.GPU{Index: index, Name: "Mock NVIDIA A100-SXM4-40GB", MemTotalMiB: a100MiB,
		PeakMiB: peak, MeanSMUtil: sm, P95SMUtil: sm, MeanMemUtil: sm / 2, EnergyJ: energy, EndMiB: peak, Attribution: att}
}

// TestOOMEvidence: a job is an OOM suspect when it failed with a GPU's
// memory at the ceiling in its last seconds; not when it completed there,
// and not when it reached the ceiling earlier and failed later with its
// memory lower (a failure for another reason).
func TestOOMEvidence(t *testing.T) {
	cases := map[string]struct {
		mib     []float64 // the job's memory in each phase of 10 rounds
		code2   string
		state   string
		suspect bool
	}{
		"failed at the ceiling":                {mib: []float64{20000, 39500}, code2: "1:0", state: StateFailed, suspect: true},
		"completed at the ceiling":             {mib: []float64{20000, 39500}, code2: "0:0", state: StateCompleted},
		"at the ceiling earlier, failed lower": {mib: []float64{39500, 10000, 10000}, code2: "1:0", state: StateFailed},
		"failed far from the ceiling":          {mib: []float64{10000}, code2: "1:0", state: StateFailed},
		"killed at the ceiling (SIGKILL): a GPU OOM the runtime turned into a kill": {mib: []float64{39500}, code2: "0:9", state: StateFailed, suspect: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, c, loads := openStore(t), newClock(), &gpuLoads{}
			h, _ := hooks(st, c)
			pid := jobProcess(t, 1)
			prolog(t, h, 1, 0)
			a := New(Config{Node: "node1"}, st, sampler(t, loads), ProcFS{}, &deliverFake{}, c.Now, quiet())
			for _, mib := range tc.mib {
				loads.set(0, fakegpu.Load{SMUtil: 80, MemUtil: 40, PowerW: 250, Procs: []fakegpu.Proc{{PID: pid, UsedMiB: mib}}})
				rounds(t, a, c, 10)
			}
			epilog(t, h, 1, tc.code2)
			r := outbox(t, st)[1]
			if r.ExitState != tc.state || r.OOMSuspect != tc.suspect {
				t.Errorf("%s, suspect %v; want %s, %v (GPUs %+v)", r.ExitState, r.OOMSuspect, tc.state, tc.suspect, r.GPUs)
			}
		})
	}
}

func TestAgentRecordsJobs(t *testing.T) {
	type proc struct {
		job uint64
		mib float64
	}
	cases := map[string]struct {
		jobs  map[uint64][]int  // job -> GPUs (prolog)
		procs map[int][]proc    // GPU -> its processes
		noPS  bool              // NVML lists no processes
		code2 map[uint64]string // epilog exit codes
		want  map[uint64]outcome.Report
	}{
		"one job on one GPU": {
			jobs:  map[uint64][]int{1: {0}},
			procs: map[int][]proc{0: {{1, 12000}}},
			code2: map[uint64]string{1: "0:0"},
			want: map[uint64]outcome.Report{1: {ExitState: StateCompleted, Samples: 3,
				GPUs: []outcome.GPU{gpu(0, 12000, 80, 750, "process")}}},
		},
		"two GPUs, one idle": {
			jobs:  map[uint64][]int{1: {2, 3}},
			procs: map[int][]proc{2: {{1, 30000}}},
			code2: map[uint64]string{1: "1:0"},
			want: map[uint64]outcome.Report{1: {ExitState: StateFailed, ExitCode: 1, Samples: 6,
				GPUs: []outcome.GPU{gpu(2, 30000, 80, 750, "process"), gpu(3, 0, 0, 0, "process")}}},
		},
		// Job 99 (a process of a job this node has no record of) is not
		// reported, but it uses the GPU too: power splits three ways.
		"shared GPU: memory per process, power split": {
			jobs:  map[uint64][]int{1: {0}, 2: {0}},
			procs: map[int][]proc{0: {{1, 10000}, {2, 5000}, {99, 1000}}}, // job 99: not on this node's books
			code2: map[uint64]string{1: "0:0", 2: "0:15"},
			want: map[uint64]outcome.Report{
				1: {ExitState: StateCompleted, Samples: 3, GPUs: []outcome.GPU{gpu(0, 10000, 80, 250, "process")}},
				2: {ExitState: StateCancelled, ExitCode: 143, Samples: 3, GPUs: []outcome.GPU{gpu(0, 5000, 80, 250, "process")}},
			},
		},
		"no process list: whole device": {
			jobs:  map[uint64][]int{1: {0}},
			procs: map[int][]proc{0: {{1, 20000}}},
			noPS:  true,
			code2: map[uint64]string{1: "0:0"},
			want: map[uint64]outcome.Report{1: {ExitState: StateCompleted, Samples: 3,
				GPUs: []outcome.GPU{gpu(0, 20000, 80, 750, "device")}}},
		},
		"killed near capacity: failed, OOM suspect": {
			jobs:  map[uint64][]int{1: {0}},
			procs: map[int][]proc{0: {{1, 39500}}},
			code2: map[uint64]string{1: "0:9"},
			want: map[uint64]outcome.Report{1: {ExitState: StateFailed, ExitCode: 137, OOMSuspect: true, Samples: 3,
				GPUs: []outcome.GPU{gpu(0, 39500, 80, 750, "process")}}},
		},
		"killed far from capacity: cancelled": {
			jobs:  map[uint64][]int{1: {0}},
			procs: map[int][]proc{0: {{1, 20000}}},
			code2: map[uint64]string{1: "0:9"},
			want: map[uint64]outcome.Report{1: {ExitState: StateCancelled, ExitCode: 137, Samples: 3,
				GPUs: []outcome.GPU{gpu(0, 20000, 80, 750, "process")}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, c, loads := openStore(t), newClock(), &gpuLoads{}
			h, _ := hooks(st, c)
			pids := map[uint64]uint32{}
			for g, ps := range tc.procs {
				l := fakegpu.Load{SMUtil: 80, MemUtil: 40, PowerW: 250, NoProcs: tc.noPS}
				for _, p := range ps {
					if pids[p.job] == 0 {
						pids[p.job] = jobProcess(t, p.job)
					}
					l.Procs = append(l.Procs, fakegpu.Proc{PID: pids[p.job], UsedMiB: p.mib})
				}
				if tc.noPS {
					l.MemUsedMiB = l.Procs[0].UsedMiB
				}
				loads.set(g, l)
			}
			for id, gpus := range tc.jobs {
				prolog(t, h, id, gpus...)
			}
			a := New(Config{Node: "node1"}, st, sampler(t, loads), ProcFS{}, &deliverFake{}, c.Now, quiet())
			rounds(t, a, c, 3)
			for id, code := range tc.code2 {
				epilog(t, h, id, code)
			}
			for id, w := range tc.want {
				w.V, w.Node, w.JobID, w.UserID, w.Finalized = outcome.Version, "node1", id, 1000, FinalizedEpilog
				w.Start, w.End = t0, t0.Add(3*time.Second)
				tc.want[id] = w
			}
			got := outbox(t, st)
			// The mock makes up UUIDs: they only have to be there.
			if d := cmp.Diff(tc.want, got, approx, cmpopts.IgnoreFields(outcome.GPU{}, "UUID")); d != "" {
				t.Errorf("reports (-want +got):\n%s", d)
			}
			for _, r := range got {
				for _, g := range r.GPUs {
					if !strings.HasPrefix(g.UUID, "GPU-") {
						t.Errorf("GPU %d has UUID %q", g.Index, g.UUID)
					}
				}
			}
		})
	}
}

// TestAgentRecoversOnceAndOnlyOnce: the agent was killed while jobs ran and
// their Epilogs never came (node reboot). A new agent finalises each job
// whose processes are gone, once, however often it or a later agent looks,
// and a late Epilog changes nothing.
func TestAgentRecoversOnceAndOnlyOnce(t *testing.T) {
	ctx := context.Background()
	st, c := openStore(t), newClock()
	h, _ := hooks(st, c)
	for id := uint64(1); id <= 4; id++ {
		prolog(t, h, id, int(id))
	}
	// Job 4's hook died between EndJob and Enqueue: ended, no report.
	if ok, err := st.EndJob(ctx, 4, t0.Add(time.Minute), StateCompleted, 0, FinalizedEpilog); !ok || err != nil {
		t.Fatal(ok, err)
	}
	procs := &procsFake{alive: map[uint64]bool{3: true}} // job 3 still runs
	cfg := Config{Node: "node1", RecoverAfter: 5 * time.Minute}

	c.Advance(time.Hour) // the node comes back
	restart := c.Now()
	a := New(cfg, st, nil, procs, &deliverFake{}, c.Now, quiet())
	if err := a.Housekeep(ctx); err != nil {
		t.Fatal(err)
	}
	// Job 4 is reported at once; jobs 1 and 2 only after RecoverAfter.
	if d := cmp.Diff([]uint64{4}, keys(outbox(t, st))); d != "" {
		t.Fatalf("after the first look (-want +got):\n%s", d)
	}
	c.Advance(4 * time.Minute)
	a.Housekeep(ctx)
	if n := len(outbox(t, st)); n != 1 {
		t.Fatalf("%d reports before RecoverAfter", n)
	}
	c.Advance(time.Minute)
	a.Housekeep(ctx)
	// The agent is killed again and a new one starts; both look again.
	b := New(cfg, st, nil, procs, &deliverFake{}, c.Now, quiet())
	for i := 0; i < 3; i++ {
		c.Advance(10 * time.Minute)
		a.Housekeep(ctx)
		b.Housekeep(ctx)
	}
	epilog(t, h, 1, "0:0") // a late Epilog

	got := outbox(t, st)
	want := map[uint64]outcome.Report{}
	for _, id := range []uint64{1, 2} {
		want[id] = outcome.Report{V: 1, Node: "node1", JobID: id, UserID: 1000, Start: t0, End: restart,
			ExitState: StateUnknown, GPUs: []outcome.GPU{}, Finalized: FinalizedRecovered}
	}
	want[4] = outcome.Report{V: 1, Node: "node1", JobID: 4, UserID: 1000, Start: t0, End: t0.Add(time.Minute),
		ExitState: StateCompleted, GPUs: []outcome.GPU{}, Finalized: FinalizedEpilog}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("reports (-want +got):\n%s", d)
	}
	if n := a.Stats.Recovered.Load() + b.Stats.Recovered.Load(); n != 2 {
		t.Errorf("recovered %d jobs, want 2", n)
	}
	if j, _ := st.Job(ctx, 3); !j.Running {
		t.Errorf("job 3, which still has processes, was finalised: %+v", j)
	}
}

func TestAgentRecoveryWaitsWhileProcessesComeBack(t *testing.T) {
	ctx := context.Background()
	st, c := openStore(t), newClock()
	h, _ := hooks(st, c)
	prolog(t, h, 1, 0)
	procs := &procsFake{alive: map[uint64]bool{}}
	a := New(Config{Node: "n", RecoverAfter: time.Minute}, st, nil, procs, &deliverFake{}, c.Now, quiet())
	a.Housekeep(ctx) // gone since now
	c.Advance(50 * time.Second)
	procs.mu.Lock()
	procs.alive[1] = true // the job's first step starts late
	procs.mu.Unlock()
	a.Housekeep(ctx)
	procs.mu.Lock()
	procs.alive[1] = false
	procs.mu.Unlock()
	c.Advance(50 * time.Second)
	a.Housekeep(ctx)
	if j, _ := st.Job(ctx, 1); !j.Running {
		t.Fatal("finalised although its processes were gone for less than RecoverAfter")
	}
	c.Advance(time.Minute)
	a.Housekeep(ctx)
	if j, _ := st.Job(ctx, 1); j.Running || j.Finalized != FinalizedRecovered {
		t.Fatalf("job = %+v, want recovered", j)
	}
}

func TestAgentDownsamplesAndPrunes(t *testing.T) {
	ctx := context.Background()
	st, c, loads := openStore(t), newClock(), &gpuLoads{}
	h, _ := hooks(st, c)
	prolog(t, h, 1, 0)
	loads.set(0, fakegpu.Load{MemUsedMiB: 100, SMUtil: 50, PowerW: 100, NoProcs: true})
	a := New(Config{Node: "n", RawRetention: time.Minute, Retention: time.Hour}, st, sampler(t, loads), &procsFake{}, &deliverFake{}, c.Now, quiet())
	rounds(t, a, c, 120)
	epilog(t, h, 1, "0:0")
	a.Flush(ctx)
	c.Advance(2 * time.Hour)
	if err := a.Housekeep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Job(ctx, 1); err == nil {
		t.Error("a delivered job past retention was not pruned")
	}
}

func keys[V any](m map[uint64]V) []uint64 {
	var out []uint64
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestAgentRun drives the whole loop on a real socket and clock: a poked
// Prolog gets a sample at once, an Epilog's report is sent at once.
func TestAgentRun(t *testing.T) {
	st, loads := openStore(t), &gpuLoads{}
	sock := filepath.Join(t.TempDir(), "node.sock")
	l, err := ListenPokes(sock)
	if err != nil {
		t.Fatal(err)
	}
	pid := jobProcess(t, 1)
	loads.set(0, fakegpu.Load{SMUtil: 80, PowerW: 250, Procs: []fakegpu.Proc{{PID: pid, UsedMiB: 12000}}})
	send := &deliverFake{}
	// Long interval and housekeeping: only the pokes make things happen.
	a := New(Config{Node: "n", Interval: time.Hour, Housekeeping: time.Hour, SendEvery: time.Hour}, st, sampler(t, loads), ProcFS{}, send, time.Now, quiet())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- a.Run(ctx, l) }()
	h := &Hooks{Store: st, Node: "n", Now: time.Now, Log: quiet(),
		Poke: func(ctx context.Context, p Poke) error { return SendPoke(ctx, sock, p, time.Second) }}
	prolog(t, h, 1, 0)
	waitFor(t, func() bool { return a.Stats.Samples.Load() >= 1 })
	epilog(t, h, 1, "0:0")
	waitFor(t, func() bool { return a.Stats.Delivered.Load() == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	send.mu.Lock()
	defer send.mu.Unlock()
	if d := cmp.Diff([]uint64{1}, send.sent); d != "" {
		t.Errorf("sent (-want +got):\n%s", d)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5 s")
}

// liveFake records live periods.
type liveFake struct {
	mu    sync.Mutex
	lives []*outcome.Live
	err   error
}

func (d *liveFake) DeliverLive(_ context.Context, b []byte) error {
	l, err := outcome.DecodeLive(b)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return d.err
	}
	d.lives = append(d.lives, l)
	return nil
}

// TestAgentLivePeriod: a live period is each running job's mean SM
// utilisation and most memory per GPU since the last one. Two jobs sharing
// a GPU (gres/shard) each get their own processes' utilisation, so the
// idle one reads idle beside a busy one; a job alone on its GPU gets the
// GPU's. A period with no samples sends nothing.
func TestAgentLivePeriod(t *testing.T) {
	st, c, loads := openStore(t), newClock(), &gpuLoads{}
	h, _ := hooks(st, c)
	busy, idle, alone := jobProcess(t, 1), jobProcess(t, 2), jobProcess(t, 3)
	loads.set(0, fakegpu.Load{MemUtil: 40, PowerW: 250, Procs: []fakegpu.Proc{
		{PID: busy, UsedMiB: 10000, SMUtil: 60}, {PID: idle, UsedMiB: 3000, SMUtil: 0}}})
	loads.set(1, fakegpu.Load{MemUtil: 1, PowerW: 60, Procs: []fakegpu.Proc{{PID: alone, UsedMiB: 2000, SMUtil: 2}}})
	prolog(t, h, 1, 0)
	prolog(t, h, 2, 0)
	prolog(t, h, 3, 1)
	a := New(Config{Node: "node1", LiveEvery: 3 * time.Second}, st, sampler(t, loads), ProcFS{}, &deliverFake{}, c.Now, quiet())
	a.liveFrom = c.Now()
	rounds(t, a, c, 3)
	ld := &liveFake{}
	a.SendLive(context.Background(), ld)
	if len(ld.lives) != 1 {
		t.Fatalf("%d live periods sent, want 1", len(ld.lives))
	}
	l := ld.lives[0]
	if l.Node != "node1" || l.PeriodS != 3 || !l.At.Equal(c.Now()) {
		t.Errorf("period %s %v s at %s", l.Node, l.PeriodS, l.At)
	}
	want := []outcome.LiveJob{
		{JobID: 1, Start: t0, GPUs: []outcome.LiveGPU{{Index: 0, SMUtil: 60, MemMiB: 10000, Shared: true}}},
		{JobID: 2, Start: t0, GPUs: []outcome.LiveGPU{{Index: 0, SMUtil: 0, MemMiB: 3000, Shared: true}}},
		{JobID: 3, Start: t0, GPUs: []outcome.LiveGPU{{Index: 1, SMUtil: 2, MemMiB: 2000}}},
	}
	if d := cmp.Diff(want, l.Jobs, approx); d != "" {
		t.Errorf("live jobs (-want +got):\n%s", d)
	}
	a.SendLive(context.Background(), ld)
	if len(ld.lives) != 1 {
		t.Errorf("a period with no samples was sent")
	}
	// A failed delivery is counted and dropped, not kept for a resend.
	rounds(t, a, c, 1)
	ld.err = errors.New("augurd down")
	a.SendLive(context.Background(), ld)
	if a.Stats.LiveFailed.Load() != 1 || a.Stats.LiveSent.Load() != 1 {
		t.Errorf("sent %d failed %d", a.Stats.LiveSent.Load(), a.Stats.LiveFailed.Load())
	}
	ld.err = nil
	a.SendLive(context.Background(), ld)
	if len(ld.lives) != 1 {
		t.Errorf("the failed period was sent again")
	}
}
