package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/augur-hpc/augur/sidecar/config"
	"github.com/augur-hpc/augur/sidecar/core"
	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/sidecar/outcome"
	"github.com/augur-hpc/augur/sidecar/slurm"
	"github.com/augur-hpc/augur/sidecar/store"
)

// IdleWatcher is live.idle_gpu. The node agents' live periods (Observe)
// build each running job's core.IdleTrack; every linker pass (Pass) hands
// it the queue, and each running job the watcher follows is judged by
// core.DecideIdle and acted on: flagged (AdminComment, metric, actions
// table), warned (the same, with the time of its cancel, and the site's
// signal) and cancelled. live.dry_run records what it would do and writes
// nothing to Slurm; augur pause holds every action back (the job is judged
// again next pass). A job that gets busy again loses its flag.
type IdleWatcher struct {
	Slurm interface {
		Signal(ctx context.Context, id uint64, sig int) error
		Cancel(ctx context.Context, id uint64) error
		SetAdminComment(ctx context.Context, id uint64, comment string) error
	}
	Store interface {
		AddActions(ctx context.Context, as []store.Action) error
		Paused(ctx context.Context) (bool, error)
	}
	// Settings returns the current live settings.
	Settings func() config.Live
	Metrics  *metrics.Metrics
	Log      *slog.Logger
	Now      func() time.Time

	mu   sync.Mutex
	jobs map[uint64]*idleJob
}

// idleJob is one running job the watcher follows.
type idleJob struct {
	track core.IdleTrack
	nodes map[string]nodePeriod // each node's latest period of the job
	// flagged: counted in the gauges and its AdminComment says so;
	// cancelled: the cancel was made (or recorded, in a dry run); cleared:
	// its note was taken off since it was last flagged.
	flagged, cancelled, cleared bool
}

type nodePeriod struct {
	at      time.Time
	period  time.Duration
	busiest float64
	gpus    int
}

// maxIdleJobs bounds the jobs followed (a cluster runs far fewer at once).
const maxIdleJobs = 200000

func (w *IdleWatcher) settings() core.IdleSettings {
	g := w.Settings().IdleGPU
	return core.IdleSettings{ThresholdPct: g.ThresholdPct, Grace: g.Grace, Window: g.Window,
		Cancel: g.Cancel, WarnDelay: g.WarnDelay, ExemptPartitions: g.ExemptPartitions}
}

// Observe folds a node's live period into its jobs' tracks. A multi-node
// job's period is judged on every node that reported it lately: its
// busiest GPU anywhere decides.
func (w *IdleWatcher) Observe(l *outcome.Live) {
	if !w.Settings().IdleGPU.Enabled {
		return
	}
	s := w.settings()
	period := time.Duration(l.PeriodS * float64(time.Second))
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.jobs == nil {
		w.jobs = map[uint64]*idleJob{}
	}
	for _, lj := range l.Jobs {
		if len(lj.GPUs) == 0 {
			continue
		}
		j := w.jobs[lj.JobID]
		if j == nil {
			if len(w.jobs) >= maxIdleJobs {
				continue
			}
			j = &idleJob{nodes: map[string]nodePeriod{}}
			w.jobs[lj.JobID] = j
		}
		np := nodePeriod{at: l.At, period: period, gpus: len(lj.GPUs)}
		for _, g := range lj.GPUs {
			np.busiest = max(np.busiest, g.SMUtil)
		}
		j.nodes[l.Node] = np
		busiest, gpus := 0.0, 0
		for _, p := range j.nodes {
			if l.At.Sub(p.at) <= 2*max(p.period, period) {
				busiest, gpus = max(busiest, p.busiest), gpus+p.gpus
			}
		}
		j.track = j.track.Observe(s, lj.Start, l.At, period, busiest, gpus)
	}
}

// Pass judges every followed job against the queue: jobs no longer
// running are forgotten, idle ones acted on. Slurm is written to without
// the watcher's lock, so live periods keep coming in meanwhile.
func (w *IdleWatcher) Pass(ctx context.Context, queue []slurm.Job) {
	live := w.Settings()
	if !live.IdleGPU.Enabled {
		w.mu.Lock()
		w.jobs = nil
		w.gauges()
		w.mu.Unlock()
		return
	}
	steps := w.judge(queue, live)
	if len(steps) > 0 {
		if paused, err := w.Store.Paused(ctx); err != nil || paused {
			steps = nil // augur pause: judged again next pass
		}
	}
	for i := range steps {
		w.act(ctx, &steps[i], live)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, st := range steps {
		j := w.jobs[st.job.ID]
		if j == nil {
			continue
		}
		switch {
		case st.busyAgain:
			j.flagged, j.cancelled, j.cleared = false, false, true
		case st.d.Action == core.IdleFlag:
			j.track.FlaggedAt, j.flagged, j.cleared = st.at, true, false
		case st.d.Action == core.IdleWarn:
			j.track.FlaggedAt, j.track.WarnedAt, j.flagged, j.cleared = st.at, st.at, true, false
		case st.d.Action == core.IdleCancel:
			j.cancelled, j.flagged = true, true
		}
	}
	w.gauges()
}

// idleStep is one thing to do to one job in a pass.
type idleStep struct {
	job       slurm.Job
	d         core.IdleDecision
	busyAgain bool // flagged, and busy since: take the flag off
	gpus      int
	at        time.Time
}

// judge decides, under the lock, what each followed job needs.
func (w *IdleWatcher) judge(queue []slurm.Job, live config.Live) []idleStep {
	byID := make(map[uint64]*slurm.Job, len(queue))
	for i := range queue {
		byID[queue[i].ID] = &queue[i]
	}
	s, now := w.settings(), w.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	var steps []idleStep
	for id, j := range w.jobs {
		sj := byID[id]
		if sj == nil || sj.State != "RUNNING" {
			delete(w.jobs, id)
			continue
		}
		stale := time.Duration(0)
		for _, p := range j.nodes {
			stale = max(stale, 3*p.period)
		}
		d := core.DecideIdle(core.IdleInput{Track: j.track, Settings: s, Now: now, Partition: sj.Partition,
			Comment: sj.Comment, Stale: stale})
		// A job flagged before augurd restarted carries the note, not the
		// flag: its first busy period takes the note off too.
		noted := !live.DryRun && !j.cleared && idleNote.MatchString(sj.AdminComment)
		busyAgain := (j.flagged || noted) && j.track.FlaggedAt.IsZero() && j.track.Busy
		st := idleStep{job: *sj, d: d, busyAgain: busyAgain, gpus: j.track.GPUs, at: now}
		if st.busyAgain || d.Action != core.IdleNone && !(d.Action == core.IdleCancel && j.cancelled) {
			steps = append(steps, st)
		}
	}
	return steps
}

// gauges sets the flagged jobs and GPUs; w.mu is held.
func (w *IdleWatcher) gauges() {
	jobs, gpus := 0, 0
	for _, j := range w.jobs {
		if j.flagged {
			jobs, gpus = jobs+1, gpus+j.track.GPUs
		}
	}
	w.Metrics.IdleJobs.Set(float64(jobs))
	w.Metrics.IdleGPUs.Set(float64(gpus))
}

// idleNote is the watcher's part of an AdminComment, replaced at each step.
var idleNote = regexp.MustCompile(` ?idle_gpu="[^"]*"`)

func withIdleNote(admin, note string) string {
	admin = idleNote.ReplaceAllString(admin, "")
	if note == "" {
		return admin
	}
	return strings.TrimSpace(admin + ` idle_gpu="` + strings.ReplaceAll(note, `"`, "'") + `"`)
}

// act records one step, and writes it to Slurm unless in a dry run. A
// failed step is not tried again in the same idle run: the error is in the
// actions table and the log.
func (w *IdleWatcher) act(ctx context.Context, st *idleStep, live config.Live) {
	sj, d := &st.job, st.d
	log := w.Log.With("job_id", sj.ID, "uid", sj.UserID)
	if st.busyAgain {
		w.busyAgain(ctx, sj, live.DryRun, log)
		return
	}
	a := store.Action{At: st.at, JobID: sj.ID, Value: int64(st.gpus), Reason: d.Reason, Policy: "idle_gpu", DryRun: live.DryRun}
	kind := metrics.LiveIdleFlag
	switch d.Action {
	case core.IdleFlag:
		a.Kind = store.ActionIdleFlag
	case core.IdleWarn:
		a.Kind, kind = store.ActionIdleWarn, metrics.LiveIdleWarn
	case core.IdleCancel:
		a.Kind, kind, a.Value = store.ActionIdleCancel, metrics.LiveIdleCancel, 0
		if sj.TimeLimit > 0 {
			left := max(sj.TimeLimit-st.at.Sub(sj.Start), 0)
			a.Value = int64(left.Seconds()) * int64(st.gpus)
		}
	}
	result := metrics.LiveDryRun
	if live.DryRun {
		log.Info("idle GPUs: would act (live.dry_run)", "action", a.Kind, "reason", d.Reason)
	} else if err := w.apply(ctx, sj, d, live.IdleGPU.Signal); err != nil {
		a.Error, result = err.Error(), metrics.LiveFailed
		log.Error("idle GPUs: action failed", "action", a.Kind, "err", err)
	} else {
		result = metrics.LiveApplied
		log.Info("idle GPUs", "action", a.Kind, "reason", d.Reason)
	}
	w.Metrics.LiveAction(kind, result, 1)
	if err := w.Store.AddActions(ctx, []store.Action{a}); err != nil {
		log.Error("idle GPU action not recorded in the actions table", "err", err)
	}
}

// apply writes a step to Slurm: the reason into the AdminComment, then the
// warning's signal or the cancel.
func (w *IdleWatcher) apply(ctx context.Context, sj *slurm.Job, d core.IdleDecision, signal string) error {
	if err := w.Slurm.SetAdminComment(ctx, sj.ID, withIdleNote(sj.AdminComment, d.Reason)); err != nil {
		return err
	}
	switch d.Action {
	case core.IdleWarn:
		if sig, ok := config.PreemptSignals[signal]; ok {
			if err := w.Slurm.Signal(ctx, sj.ID, sig); err != nil {
				return fmt.Errorf("warning signal %s: %w", signal, err)
			}
		}
	case core.IdleCancel:
		return w.Slurm.Cancel(ctx, sj.ID)
	}
	return nil
}

// busyAgain takes the flag off a job whose GPUs got busy again.
func (w *IdleWatcher) busyAgain(ctx context.Context, sj *slurm.Job, dryRun bool, log *slog.Logger) {
	if dryRun {
		log.Info("idle GPUs: job busy again; would clear its flag (live.dry_run)")
		return
	}
	if err := w.Slurm.SetAdminComment(ctx, sj.ID, withIdleNote(sj.AdminComment, "")); err != nil {
		log.Warn("idle GPUs: job busy again, but its AdminComment still says idle", "err", err)
		return
	}
	log.Info("idle GPUs: job busy again; flag cleared")
}
