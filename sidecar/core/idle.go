package core

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// IdleOptOut in a job's --comment keeps Augur from cancelling it for idle
// GPUs; it is still flagged.
const IdleOptOut = "augur:no-idle-cancel"

// IdleSettings is live.idle_gpu (see DecideIdle).
type IdleSettings struct {
	// ThresholdPct: a GPU under this SM utilisation (percent) is idle.
	ThresholdPct float64
	// Grace is the time from the job's start that is never judged (data
	// loading, compilation, a container image being pulled).
	Grace time.Duration
	// Window: a job whose GPUs have all stayed idle this long is flagged.
	Window time.Duration
	// Cancel turns on the warning and, WarnDelay after it, the cancel.
	Cancel    bool
	WarnDelay time.Duration
	// ExemptPartitions are never judged (interactive partitions, where an
	// idle GPU is a person thinking).
	ExemptPartitions []string
}

// IdleTrack is what augurd knows of one running job's GPU use, built from
// the node agents' live periods with Observe. The zero value is a job not
// seen yet.
type IdleTrack struct {
	// Start is the job's start (the earliest a node recorded it).
	Start time.Time
	// LastSeen is the end of the latest period observed.
	LastSeen time.Time
	// IdleSince is the start of the run of idle periods the job is in now
	// (zero: its last period was busy, or it is still in its grace).
	IdleSince time.Time
	// Busiest is the highest utilisation of any of its GPUs in the current
	// idle run; GPUs how many GPUs the last period covered.
	Busiest float64
	GPUs    int
	// Busy says the last period judged (past the grace) was busy.
	Busy bool
	// FlaggedAt and WarnedAt are set when the job was flagged and warned in
	// its current idle run; a busy period clears them.
	FlaggedAt, WarnedAt time.Time
}

// Observe folds one period of the job's figures into the track: the period
// ended at at and lasted period; busiest is the highest SM utilisation of
// any of the job's GPUs on every node that reported it, gpus how many GPUs
// that covers. A period that reaches back into the grace is not judged; a
// busy one ends the idle run (and with it any flag or warning). Periods
// older than the last one observed change nothing.
func (t IdleTrack) Observe(s IdleSettings, start, at time.Time, period time.Duration, busiest float64, gpus int) IdleTrack {
	if t.Start.IsZero() || (!start.IsZero() && start.Before(t.Start)) {
		t.Start = start
	}
	if at.Before(t.LastSeen) {
		return t
	}
	t.LastSeen, t.GPUs = at, gpus
	from := at.Add(-period)
	switch {
	case from.Before(t.Start.Add(s.Grace)):
		// still in its grace: not judged
	case busiest >= s.ThresholdPct || gpus == 0:
		t.IdleSince, t.Busiest, t.FlaggedAt, t.WarnedAt, t.Busy = time.Time{}, 0, time.Time{}, time.Time{}, true
	case t.IdleSince.IsZero():
		t.IdleSince, t.Busiest, t.Busy = from, busiest, false
	default:
		t.Busiest, t.Busy = max(t.Busiest, busiest), false
	}
	return t
}

// IdleFor is how long the job has been idle, by its figures (not by the
// clock: figures that stop coming do not make a job idler).
func (t IdleTrack) IdleFor() time.Duration {
	if t.IdleSince.IsZero() {
		return 0
	}
	return t.LastSeen.Sub(t.IdleSince)
}

// IdleAction is what to do to an idle job.
type IdleAction int

// The actions, in the order a job goes through them.
const (
	IdleNone   IdleAction = iota
	IdleFlag              // note it: AdminComment, metric, augur job
	IdleWarn              // flagged with cancel on: tell the owner when it will be cancelled (and signal it)
	IdleCancel            // the warning's delay is over and it is still idle
)

// IdleInput is one running job at one pass.
type IdleInput struct {
	Track     IdleTrack
	Settings  IdleSettings
	Now       time.Time
	Partition string
	Comment   string // the user's --comment
	// Stale: figures older than this say nothing of the job now (its node
	// agent stopped reporting); nothing is done on them.
	Stale time.Duration
}

// IdleDecision says what to do, and why in words for the job's owner.
type IdleDecision struct {
	Action IdleAction
	// CancelAt is when a warned job will be cancelled if it stays idle.
	CancelAt time.Time
	Reason   string
}

// DecideIdle is the idle-GPU decision: a running job whose every GPU has
// stayed under the threshold for the window after its grace is flagged;
// with cancel on, the flag is a warning that names the time of the cancel,
// and a job still idle WarnDelay after its warning is cancelled. A job in
// an exempt partition is never judged; one that opted out (IdleOptOut) is
// flagged but never warned or cancelled. Pure; never panics.
func DecideIdle(in IdleInput) IdleDecision {
	t, s := in.Track, in.Settings
	if t.IdleSince.IsZero() || s.Window <= 0 || slices.Contains(s.ExemptPartitions, in.Partition) {
		return IdleDecision{}
	}
	if in.Stale > 0 && in.Now.Sub(t.LastSeen) > in.Stale {
		return IdleDecision{}
	}
	idle := t.IdleFor()
	if idle < s.Window {
		return IdleDecision{}
	}
	what := fmt.Sprintf("GPUs idle: %s under %s%% SM utilisation for %s (busiest %s%%)",
		gpuWord(t.GPUs), trim(s.ThresholdPct), roundDur(idle), trim(t.Busiest))
	optedOut := strings.Contains(in.Comment, IdleOptOut)
	switch {
	case t.FlaggedAt.IsZero() && (!s.Cancel || optedOut):
		reason := what + "; release the GPUs (scancel) if the job is done, or ask for fewer"
		if s.Cancel {
			reason += "; not cancelled: the job opted out (" + IdleOptOut + ")"
		}
		return IdleDecision{Action: IdleFlag, Reason: reason}
	case t.WarnedAt.IsZero() && s.Cancel && !optedOut:
		at := in.Now.Add(s.WarnDelay)
		return IdleDecision{Action: IdleWarn, CancelAt: at, Reason: fmt.Sprintf(
			"%s; will be cancelled at %s unless its GPUs get busy (add %s to --comment to opt out)",
			what, at.UTC().Format("2006-01-02T15:04:05Z"), IdleOptOut)}
	case !t.WarnedAt.IsZero() && s.Cancel && !optedOut && !in.Now.Before(t.WarnedAt.Add(s.WarnDelay)) &&
		t.LastSeen.After(t.WarnedAt):
		return IdleDecision{Action: IdleCancel, Reason: fmt.Sprintf("%s; cancelled %s after the warning",
			what, roundDur(in.Now.Sub(t.WarnedAt)))}
	}
	return IdleDecision{}
}

func gpuWord(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("all %d GPUs", n)
}

func roundDur(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	m := int(d.Round(time.Minute) / time.Minute)
	switch h := m / 60; {
	case h == 0:
		return fmt.Sprintf("%dm", m)
	case m%60 == 0:
		return fmt.Sprintf("%dh", h)
	default:
		return fmt.Sprintf("%dh%dm", h, m%60)
	}
}
