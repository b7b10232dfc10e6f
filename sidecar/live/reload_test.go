package live

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/config"
	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/sidecar/slurm"
	"github.com/augur-hpc/augur/sidecar/store"
)

// TestReloadLeavesDryRun: a loop reloaded out of dry run writes, on its
// next pass, the values it had only recorded, and says so in its status.
func TestReloadLeavesDryRun(t *testing.T) {
	c := blocked(longJob().Obj())
	clk := &clock{t: t0.Add(time.Hour)}
	l, st, _ := newLoop(t, c, clk, true)
	l.Pass(context.Background())
	if c.writes+len(c.signals) != 0 {
		t.Fatalf("dry run acted: %d writes, signals %v", c.writes, c.signals)
	}
	dry := len(rows(t, st))
	if dry == 0 {
		t.Fatal("dry run recorded nothing")
	}
	cfg := l.cfg
	cfg.DryRun = false
	if err := l.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	if l.Status().DryRun {
		t.Error("status still says dry run")
	}
	l.Pass(context.Background())
	if c.writes == 0 || len(c.signals) != 1 {
		t.Errorf("after reload: %d writes, signals %v; want the SiteFactor written and the blocker signalled", c.writes, c.signals)
	}
	for _, r := range rows(t, st)[dry:] {
		if r.DryRun {
			t.Errorf("action after reload still marked dry run: %+v", r)
		}
	}
}

// TestReloadPolicy: the next pass orders by the new policy; a policy that
// does not exist is refused and the old one stays.
func TestReloadPolicy(t *testing.T) {
	c := &fakeCluster{nodes: []slurm.Node{{Name: "vm", State: "IDLE", Gres: "gpu:a100:1"}}}
	// Job 1 is the oldest and the longest: fifo puts it first, augur last.
	for i := uint64(1); i <= 3; i++ {
		c.jobs = append(c.jobs, jb(i).GPUs("gres:gpu:a100:1").Pred(fmt.Sprintf("pred_time=%02d:00:00", 4-i)).Obj())
	}
	clk := &clock{t: t0.Add(time.Hour)}
	l, _, _ := newLoop(t, c, clk, false)
	l.Pass(context.Background())
	if !(c.jobs[2].SiteFactor > c.jobs[0].SiteFactor) {
		t.Fatalf("augur: job 3 (1 h) SiteFactor %d not above job 1 (3 h) %d", c.jobs[2].SiteFactor, c.jobs[0].SiteFactor)
	}
	cfg := l.cfg
	cfg.Policy = "no-such-policy"
	if err := l.Reload(cfg); err == nil {
		t.Fatal("unknown policy accepted")
	}
	if got := l.Status().Policy; got != "augur" {
		t.Fatalf("policy %q after a refused reload, want augur", got)
	}
	cfg.Policy = "fifo"
	if err := l.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	l.Pass(context.Background())
	// fifo's order is by job id: one run of equal values, Slurm's tie-break
	// by job id puts job 1 first.
	if l.Status().Policy != "fifo" || c.jobs[0].SiteFactor < c.jobs[2].SiteFactor {
		t.Errorf("fifo: policy %q, job 1 SiteFactor %d, job 3 %d; want job 1 not below job 3", l.Status().Policy, c.jobs[0].SiteFactor, c.jobs[2].SiteFactor)
	}
}

// TestReloadInterval: a running loop picks up a shorter interval at once.
func TestReloadInterval(t *testing.T) {
	c := blocked(longJob().Obj())
	clk := &clock{t: t0.Add(time.Hour)}
	l, _, _ := newLoop(t, c, clk, true)
	cfg := l.cfg
	cfg.Interval = time.Hour
	if err := l.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go l.Run(ctx)
	waitUntil(t, "the first pass", func() bool { return l.Status().Passes >= 1 })
	cfg.Interval = 10 * time.Millisecond
	if err := l.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "passes every 10ms", func() bool { return l.Status().Passes >= 5 })
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestRunnerReload: live.enabled turned on by a reload starts the loop and
// its admin socket; turned off stops both; other settings go to the loop.
func TestRunnerReload(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "augur.db"), store.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := config.Default()
	cfg.SlurmUser = "root"
	cfg.Live.AdminSocket = filepath.Join(t.TempDir(), "admin.sock")
	cfg.Live.Interval = time.Hour
	cfg.Cluster.GPUTypes = []config.GPUType{{Name: "a100", Memory: 80 << 30}}
	c := blocked(longJob().Obj())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := start(ctx, &cfg, func() Cluster { return c }, st, metrics.New(func() float64 { return 0 }), quiet)
	if err != nil {
		t.Fatal(err)
	}
	if r.Loop() != nil {
		t.Fatal("loop running with live.enabled false")
	}

	on := cfg
	on.Live.Enabled, on.Live.DryRun = true, true
	if err := r.Reload(&on); err != nil {
		t.Fatal(err)
	}
	if r.Loop() == nil {
		t.Fatal("live.enabled true: no loop")
	}
	actx, acancel := context.WithTimeout(ctx, 5*time.Second)
	defer acancel()
	if os.Getuid() == 0 {
		resp, err := AdminCall(actx, on.Live.AdminSocket, "status")
		if err != nil || !resp.Status.DryRun {
			t.Fatalf("status over the admin socket: %+v, %v", resp, err)
		}
	}

	changed := on
	changed.Live.Policy, changed.Live.DryRun = "fifo", false
	if err := r.Reload(&changed); err != nil {
		t.Fatal(err)
	}
	if s := r.Loop().Status(); s.Policy != "fifo" || s.DryRun {
		t.Errorf("after reload: policy %q dry run %v, want fifo, false", s.Policy, s.DryRun)
	}

	if err := r.Reload(&cfg); err != nil {
		t.Fatal(err)
	}
	if r.Loop() != nil {
		t.Error("live.enabled false: loop still there")
	}
	if _, err := os.Stat(on.Live.AdminSocket); !os.IsNotExist(err) {
		t.Errorf("admin socket left behind: %v", err)
	}
}
