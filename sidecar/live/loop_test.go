package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/sidecar/policy"
	"github.com/augur-hpc/augur/sidecar/slurm"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var rules = Rules{SiteFactorMax: 1000, Grace: 5 * time.Second, Signal: 10, MinRun: 10 * time.Minute, MaxPreemptions: 2}

// blocked is a head-of-line case: a long job holds all four a100s and a
// short one waits for them.
func blocked(long slurm.Job) *fakeCluster {
	return &fakeCluster{
		nodes: []slurm.Node{{Name: "vm", State: "ALLOCATED", Gres: "gpu:a100:4", GresUsed: "gpu:a100:4(IDX:0-3)"}},
		jobs: []slurm.Job{
			long,
			jb(2).GPUs("gres:gpu:a100:4").Pred("pred_time=00:10:00").SiteFactor(5000).Obj(), // the submission's initial value, out of range
		},
	}
}

func longJob() *jobBuilder {
	return jb(1).GPUs("gres:gpu:a100:4").Pred("pred_time=10:00:00").Running(t0, "vm", "gpu:a100:4(IDX:0-3)")
}

func newLoop(t *testing.T, c Cluster, clk *clock, dry bool) (*Loop, *store.Store, *metrics.Metrics) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "augur.db"), store.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := metrics.New(func() float64 { return 0 })
	l, err := New(context.Background(), Config{Interval: time.Second, Policy: "augur", DryRun: dry, Rules: rules,
		Types: []policy.GPUType{{Name: "a100", MemMiB: 81920}}}, c, st, m, quiet, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	return l, st, m
}

type row struct {
	Job    uint64
	Kind   string
	Value  int64
	DryRun bool
	Error  string
}

func rows(t *testing.T, st *store.Store) []row {
	t.Helper()
	as, err := st.Actions(context.Background(), store.ActionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []row
	for i := len(as) - 1; i >= 0; i-- { // oldest first
		a := as[i]
		out = append(out, row{a.JobID, a.Kind, a.Value, a.DryRun, a.Error})
	}
	return out
}

func TestLoopPreemptsWithGrace(t *testing.T) {
	cases := map[string]struct {
		long         slurm.Job
		dry          bool
		wantSignals  []string
		wantRequeues []uint64
		wantRows     []row
	}{
		"signal, grace, requeue": {
			long: longJob().Obj(), wantSignals: []string{"1:10"}, wantRequeues: []uint64{1},
			wantRows: []row{{2, "site_factor", 500, false, ""}, {1, "signal", 10, false, ""}, {1, "requeue", 0, false, ""}},
		},
		"dry run records, changes nothing": {
			long: longJob().Obj(), dry: true,
			wantRows: []row{{2, "site_factor", 500, true, ""}, {1, "signal", 10, true, ""}, {1, "requeue", 0, true, ""}},
		},
		"not requeueable": {
			long: longJob().NoRequeue().Obj(), wantRows: []row{{2, "site_factor", 500, false, ""}},
		},
		"preempted to the cap already": {
			long: longJob().Restarts(2).Obj(), wantRows: []row{{2, "site_factor", 500, false, ""}},
		},
		"younger than the minimum run time": {
			long:     jb(1).GPUs("gres:gpu:a100:4").Pred("pred_time=10:00:00").Running(t0.Add(55*time.Minute), "vm", "gpu:a100:4(IDX:0-3)").Obj(),
			wantRows: []row{{2, "site_factor", 500, false, ""}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := blocked(tc.long)
			clk := &clock{t: t0.Add(time.Hour)}
			l, st, m := newLoop(t, c, clk, tc.dry)
			for range 3 {
				if r := l.Pass(context.Background()); r.Result != metrics.LivePassOK {
					t.Fatalf("pass: %+v", r)
				}
				clk.Add(3 * time.Second) // the third pass is past the 5 s grace
			}
			if diff := cmp.Diff(tc.wantSignals, c.signals); diff != "" {
				t.Errorf("signals (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRequeues, c.requeues); diff != "" {
				t.Errorf("requeues (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRows, rows(t, st)); diff != "" {
				t.Errorf("stored actions (-want +got):\n%s", diff)
			}
			if n := testutil.ToFloat64(m.LivePasses.WithLabelValues("ok")); n != 3 {
				t.Errorf("ok passes counted %v", n)
			}
		})
	}
}

func TestLoopNeverActsOnAFailedRead(t *testing.T) {
	c := blocked(longJob().Obj())
	c.readErr = fmt.Errorf("%w: connection refused", slurm.ErrUnavailable)
	clk := &clock{t: t0.Add(time.Hour)}
	l, st, m := newLoop(t, c, clk, false)
	if r := l.Pass(context.Background()); r.Result != metrics.LivePassUnavailable {
		t.Errorf("result %s, want unavailable", r.Result)
	}
	c.readErr = errors.New("squeue: garbage")
	if r := l.Pass(context.Background()); r.Result != metrics.LivePassError {
		t.Errorf("result %s, want error", r.Result)
	}
	if c.writes+len(c.signals)+len(c.requeues) != 0 || len(rows(t, st)) != 0 {
		t.Errorf("acted on a failed read: %d writes, %v, %v", c.writes, c.signals, c.requeues)
	}
	if n := testutil.ToFloat64(m.LivePasses.WithLabelValues("unavailable")); n != 1 {
		t.Errorf("unavailable passes %v", n)
	}
	c.readErr = nil
	if r := l.Pass(context.Background()); r.Result != metrics.LivePassOK || len(c.signals) != 1 {
		t.Errorf("after recovery: %s, signals %v", r.Result, c.signals)
	}
}

func TestLoopPauseStopsEverythingAndPersists(t *testing.T) {
	c := blocked(longJob().Obj())
	clk := &clock{t: t0.Add(time.Hour)}
	l, st, _ := newLoop(t, c, clk, false)
	if _, err := l.SetPaused(context.Background(), true, "uid 0"); err != nil {
		t.Fatal(err)
	}
	if r := l.Pass(context.Background()); r.Result != metrics.LivePassPaused {
		t.Errorf("result %s, want paused", r.Result)
	}
	if c.writes+len(c.signals) != 0 {
		t.Errorf("acted while paused")
	}
	// A new loop on the same store (augurd restarted) is still paused.
	l2, err := New(context.Background(), Config{Interval: time.Second, Policy: "augur", Rules: rules}, c, st, nil, quiet, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	if !l2.Paused() {
		t.Error("pause lost across a restart")
	}
	if _, err := l2.SetPaused(context.Background(), false, "uid 0"); err != nil {
		t.Fatal(err)
	}
	if r := l2.Pass(context.Background()); r.Result != metrics.LivePassOK || len(c.signals) != 1 {
		t.Errorf("after resume: %s, signals %v", r.Result, c.signals)
	}
	want := []row{{0, "pause", 0, false, ""}, {0, "resume", 0, false, ""}}
	if diff := cmp.Diff(want, rows(t, st)[:2]); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSiteFactorsOnlyWhenChanged: a second pass over the same queue writes nothing.
func TestSiteFactorsOnlyWhenChanged(t *testing.T) {
	c := &fakeCluster{nodes: []slurm.Node{{Name: "vm", State: "IDLE", Gres: "gpu:a100:1"}}}
	for i := uint64(1); i <= 50; i++ {
		c.jobs = append(c.jobs, jb(i).GPUs("gres:gpu:a100:1").Pred(fmt.Sprintf("pred_time=00:%02d:00", 60-i)).Obj())
	}
	clk := &clock{t: t0.Add(time.Hour)}
	l, _, _ := newLoop(t, c, clk, false)
	l.Pass(context.Background())
	first := c.writes
	l.Pass(context.Background())
	if first != 49 || c.writes != first {
		t.Errorf("writes: first pass %d (want 49: the last keeps its 0), second pass %d (want 0)", first, c.writes-first)
	}
	for i := 1; i < len(c.jobs); i++ { // shorter predicted time ranks higher
		if c.jobs[i].SiteFactor <= c.jobs[i-1].SiteFactor {
			t.Fatalf("job %d SiteFactor %d not above job %d's %d", c.jobs[i].ID, c.jobs[i].SiteFactor, c.jobs[i-1].ID, c.jobs[i-1].SiteFactor)
		}
	}
}
