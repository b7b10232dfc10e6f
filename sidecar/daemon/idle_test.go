package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/augur-hpc/augur/sidecar/config"
	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/sidecar/outcome"
	"github.com/augur-hpc/augur/sidecar/slurm"
)

// idleSlurm records what the watcher writes to Slurm.
type idleSlurm struct{ calls []string }

func (f *idleSlurm) Signal(_ context.Context, id uint64, sig int) error {
	f.calls = append(f.calls, fmt.Sprintf("signal %d %d", id, sig))
	return nil
}
func (f *idleSlurm) Cancel(_ context.Context, id uint64) error {
	f.calls = append(f.calls, fmt.Sprintf("cancel %d", id))
	return nil
}
func (f *idleSlurm) SetAdminComment(_ context.Context, id uint64, c string) error {
	f.calls = append(f.calls, fmt.Sprintf("comment %d %s", id, c))
	return nil
}

// idleRig is a watcher on a fake clock, with one-minute live periods.
type idleRig struct {
	t     *testing.T
	w     *IdleWatcher
	sl    *idleSlurm
	st    *oomStore
	m     *metrics.Metrics
	now   time.Time
	start time.Time
	live  config.Live
}

func newIdleRig(t *testing.T, mut func(*config.Live)) *idleRig {
	r := &idleRig{t: t, sl: &idleSlurm{}, st: &oomStore{}, m: metrics.New(nil),
		start: time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)}
	r.now = r.start
	r.live = config.Default().Live
	r.live.IdleGPU.Enabled = true
	r.live.IdleGPU.Grace, r.live.IdleGPU.Window, r.live.IdleGPU.WarnDelay = 5*time.Minute, 10*time.Minute, 5*time.Minute
	if mut != nil {
		mut(&r.live)
	}
	r.w = &IdleWatcher{Slurm: r.sl, Store: r.st, Settings: func() config.Live { return r.live }, Metrics: r.m,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return r.now }}
	return r
}

// minute advances the clock a minute, has each node report its jobs'
// utilisation (node -> job -> per-GPU util) and runs a pass over queue.
func (r *idleRig) minute(utils map[string]map[uint64][]float64, queue []slurm.Job) {
	r.now = r.now.Add(time.Minute)
	for node, jobs := range utils {
		l := &outcome.Live{V: outcome.Version, Kind: outcome.KindLive, Node: node, At: r.now, PeriodS: 60}
		for id, us := range jobs {
			lj := outcome.LiveJob{JobID: id, Start: r.start}
			for i, u := range us {
				lj.GPUs = append(lj.GPUs, outcome.LiveGPU{Index: i, SMUtil: u, MemMiB: 1000})
			}
			l.Jobs = append(l.Jobs, lj)
		}
		if err := l.Validate(); err != nil {
			r.t.Fatal(err)
		}
		r.w.Observe(l)
	}
	r.w.Pass(context.Background(), queue)
}

func (r *idleRig) kinds() string {
	var ks []string
	for _, a := range r.st.actions {
		k := a.Kind
		if a.DryRun {
			k += "(dry)"
		}
		ks = append(ks, fmt.Sprintf("%d:%s", a.JobID, k))
	}
	return strings.Join(ks, " ")
}

func running(ids ...uint64) []slurm.Job {
	var q []slurm.Job
	for _, id := range ids {
		q = append(q, slurm.Job{ID: id, State: "RUNNING", Partition: "gpu", UserName: "ada",
			AdminComment: "augur:tok=t" + fmt.Sprint(id), Start: time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC), TimeLimit: 2 * time.Hour})
	}
	return q
}

// TestIdleWatcherFlags: an idle job is flagged once, after grace and
// window, with its AdminComment and the gauges saying so; a busy job and a
// job whose second node is busy are left alone; a busy period clears the
// flag; a job that leaves the queue is forgotten.
func TestIdleWatcherFlags(t *testing.T) {
	r := newIdleRig(t, nil)
	q := running(1, 2, 3)
	for i := 0; i < 15; i++ {
		r.minute(map[string]map[uint64][]float64{
			"n1": {1: {0, 1}, 2: {0, 60}, 3: {0}},
			"n2": {3: {70}},
		}, q)
		if i == 13 && r.kinds() != "" {
			t.Fatalf("acted before grace+window: %s", r.kinds())
		}
	}
	if got := r.kinds(); got != "1:idle_flag" {
		t.Fatalf("actions %q, want job 1 flagged only", got)
	}
	a := r.st.actions[0]
	if a.Value != 2 || !strings.Contains(a.Reason, "all 2 GPUs under 5% SM utilisation for 10m (busiest 1%)") {
		t.Errorf("flag %+v", a)
	}
	if len(r.sl.calls) != 1 || !strings.HasPrefix(r.sl.calls[0], `comment 1 augur:tok=t1 idle_gpu="GPUs idle: all 2 GPUs`) {
		t.Errorf("slurm calls %q", r.sl.calls)
	}
	if j, g := testutil.ToFloat64(r.m.IdleJobs), testutil.ToFloat64(r.m.IdleGPUs); j != 1 || g != 2 {
		t.Errorf("gauges %v jobs %v GPUs", j, g)
	}
	if got := testutil.ToFloat64(r.m.LiveActions.WithLabelValues("idle_flag", "applied")); got != 1 {
		t.Errorf("idle_flag applied: %v", got)
	}
	// Still idle: not flagged again. Then busy: flag cleared.
	r.minute(map[string]map[uint64][]float64{"n1": {1: {0, 0}}}, q)
	r.minute(map[string]map[uint64][]float64{"n1": {1: {0, 90}}}, q)
	if got := r.kinds(); got != "1:idle_flag" {
		t.Errorf("actions after busy: %q", got)
	}
	if last := r.sl.calls[len(r.sl.calls)-1]; last != "comment 1 augur:tok=t1" {
		t.Errorf("busy again: last call %q, want the flag taken off the AdminComment", last)
	}
	if j := testutil.ToFloat64(r.m.IdleJobs); j != 0 {
		t.Errorf("gauge after busy: %v", j)
	}
	// Off the queue: forgotten.
	r.minute(map[string]map[uint64][]float64{"n1": {1: {0, 0}}}, nil)
	if n := len(r.w.jobs); n != 0 {
		t.Errorf("%d jobs followed after the queue emptied", n)
	}
}

// TestIdleWatcherCancels: with cancel on, the flag is a warning with the
// site's signal; warn_delay later the still-idle job is cancelled; an
// opted-out job is only flagged.
func TestIdleWatcherCancels(t *testing.T) {
	r := newIdleRig(t, func(l *config.Live) { l.IdleGPU.Cancel, l.IdleGPU.Signal = true, "USR1" })
	q := running(1, 2)
	q[1].Comment = "keep " + "augur:no-idle-cancel"
	for i := 0; i < 15; i++ {
		r.minute(map[string]map[uint64][]float64{"n1": {1: {0}, 2: {0}}}, q)
	}
	if got := r.kinds(); got != "1:idle_warn 2:idle_flag" && got != "2:idle_flag 1:idle_warn" {
		t.Fatalf("actions %q", got)
	}
	calls := strings.Join(r.sl.calls, "\n")
	if !strings.Contains(calls, "signal 1 10") || !strings.Contains(calls, "will be cancelled at 2026-11-24T08:20:00Z") {
		t.Errorf("warning calls:\n%s", calls)
	}
	for i := 0; i < 5; i++ {
		r.minute(map[string]map[uint64][]float64{"n1": {1: {0}, 2: {0}}}, q)
	}
	if !strings.Contains(r.kinds(), "1:idle_cancel") || strings.Contains(r.kinds(), "2:idle_warn") || strings.Contains(r.kinds(), "2:idle_cancel") {
		t.Fatalf("actions %q", r.kinds())
	}
	c := r.st.actions[len(r.st.actions)-1]
	// 2 h limit, cancelled at 08:20: 100 minutes of one GPU freed.
	if c.Kind != "idle_cancel" || c.Value != 6000 {
		t.Errorf("cancel %+v", c)
	}
	if last := r.sl.calls[len(r.sl.calls)-1]; last != "cancel 1" {
		t.Errorf("last call %q", last)
	}
	n := len(r.sl.calls)
	r.minute(map[string]map[uint64][]float64{"n1": {1: {0}}}, q)
	if len(r.sl.calls) != n {
		t.Errorf("cancelled twice: %q", r.sl.calls[n:])
	}
}

// TestIdleWatcherDryRunPauseOff: dry run records every step and writes
// nothing to Slurm; pause holds every step back until resumed; with the
// switch off nothing is followed.
func TestIdleWatcherDryRunPauseOff(t *testing.T) {
	r := newIdleRig(t, func(l *config.Live) { l.DryRun, l.IdleGPU.Cancel = true, true })
	q := running(1)
	for i := 0; i < 25; i++ {
		r.minute(map[string]map[uint64][]float64{"n1": {1: {0}}}, q)
	}
	if got := r.kinds(); got != "1:idle_warn(dry) 1:idle_cancel(dry)" || len(r.sl.calls) != 0 {
		t.Fatalf("dry run: actions %q, slurm calls %q", got, r.sl.calls)
	}

	r = newIdleRig(t, nil)
	r.st.paused = true
	for i := 0; i < 20; i++ {
		r.minute(map[string]map[uint64][]float64{"n1": {1: {0}}}, q)
	}
	if r.kinds() != "" || len(r.sl.calls) != 0 {
		t.Fatalf("paused: actions %q, calls %q", r.kinds(), r.sl.calls)
	}
	r.st.paused = false
	r.minute(map[string]map[uint64][]float64{"n1": {1: {0}}}, q)
	if r.kinds() != "1:idle_flag" {
		t.Fatalf("resumed: actions %q", r.kinds())
	}

	r = newIdleRig(t, func(l *config.Live) { l.IdleGPU.Enabled = false })
	for i := 0; i < 20; i++ {
		r.minute(map[string]map[uint64][]float64{"n1": {1: {0}}}, q)
	}
	if r.kinds() != "" || len(r.w.jobs) != 0 {
		t.Fatalf("off: actions %q, followed %d", r.kinds(), len(r.w.jobs))
	}
}

// TestIdleWatcherRestart: a job augurd flagged before it restarted has the
// note in its AdminComment but no flag in memory; its first busy period
// takes the note off. A job still idle keeps it until flagged again.
func TestIdleWatcherRestart(t *testing.T) {
	r := newIdleRig(t, nil)
	q := running(1, 2)
	for i := range q {
		q[i].AdminComment += ` idle_gpu="GPUs idle: 1 GPU under 5% SM utilisation for 30m"`
	}
	for i := 0; i < 7; i++ { // past the grace, not the window
		r.minute(map[string]map[uint64][]float64{"n1": {1: {50}, 2: {0}}}, q)
	}
	if len(r.sl.calls) != 1 || r.sl.calls[0] != "comment 1 augur:tok=t1" {
		t.Errorf("slurm calls %q; want job 1's note taken off, once", r.sl.calls)
	}
}

func TestWithIdleNote(t *testing.T) {
	for _, c := range []struct{ admin, note, want string }{
		{"augur:tok=a", "GPUs idle", `augur:tok=a idle_gpu="GPUs idle"`},
		{`augur:tok=a idle_gpu="old" oom_requeue=1:t4->a100`, `say "x"`, `augur:tok=a oom_requeue=1:t4->a100 idle_gpu="say 'x'"`},
		{`augur:tok=a idle_gpu="old"`, "", "augur:tok=a"},
		{"", "n", `idle_gpu="n"`},
	} {
		if got := withIdleNote(c.admin, c.note); got != c.want {
			t.Errorf("withIdleNote(%q, %q) = %q, want %q", c.admin, c.note, got, c.want)
		}
	}
}
