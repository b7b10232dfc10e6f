package live

import (
	"fmt"
	"time"

	"github.com/augur-hpc/augur/sidecar/policy"
)

// Kind is what an Action does.
type Kind string

// The kinds of Action (the same words as the store's).
const (
	KindSiteFactor Kind = "site_factor"
	KindSignal     Kind = "signal"
	KindRequeue    Kind = "requeue"
)

// Action is one change to make in Slurm, with its reason.
type Action struct {
	Kind  Kind
	JobID int64
	// Value is the SiteFactor (KindSiteFactor) or the signal (KindSignal).
	Value int64
	// Previous is the SiteFactor replaced, when known.
	Previous *int64
	Reason   string
}

// Rules are the limits Decide keeps, from the live config section.
type Rules struct {
	SiteFactorMax  int64
	Grace          time.Duration
	Signal         int
	MinRun         time.Duration
	MaxPreemptions int // 0: never preempt
}

// Decision is what one pass decided.
type Decision struct {
	Actions []Action
	// Signalled is the set of jobs signalled and not yet requeued after
	// this pass (the caller keeps it for the next pass).
	Signalled map[int64]time.Time
	// Notes say why something expected was not done (for the log).
	Notes []string
}

// Decide turns a plan over view into actions. It is pure: now, the view,
// the plan and the jobs signalled earlier are its whole input.
//
// SiteFactors follow plan.Order (see AssignSiteFactors). A job the plan
// preempts is signalled (when rules.Grace > 0) and requeued once the grace
// period has passed; a signalled job is requeued even if a later plan no
// longer asks for it, since the signal told it to stop. Guards are checked
// again here, whatever the policy did: the job must be requeueable and
// running, have run rules.MinRun, and have been requeued fewer than
// rules.MaxPreemptions times; and no node may be in an unsettled state.
func Decide(now time.Time, v View, plan policy.Plan, pol string, signalled map[int64]time.Time, r Rules) Decision {
	d := Decision{Signalled: map[int64]time.Time{}}
	cur := make(map[int64]int64, len(plan.Order))
	for _, id := range plan.Order {
		if j := v.Jobs[id]; j != nil && j.SiteFactorKnown {
			cur[id] = j.SiteFactor
		}
	}
	n := len(plan.Order)
	for _, c := range AssignSiteFactors(plan.Order, cur, r.SiteFactorMax) {
		d.Actions = append(d.Actions, Action{Kind: KindSiteFactor, JobID: c.JobID, Value: c.Value, Previous: c.Previous,
			Reason: fmt.Sprintf("%s ranks it %d of %d pending", pol, c.Rank+1, n)})
	}

	// Signalled jobs: requeue after the grace period; forget those that left.
	for id, at := range signalled {
		j := v.Jobs[id]
		if j == nil || j.State != "RUNNING" {
			continue // ended, cancelled or requeued by someone else
		}
		if now.Sub(at) < r.Grace {
			d.Signalled[id] = at
			continue
		}
		d.Actions = append(d.Actions, Action{Kind: KindRequeue, JobID: id,
			Reason: fmt.Sprintf("preempted by %s: grace of %s after the signal is over", pol, r.Grace)})
	}

	if len(plan.Preempt) == 0 {
		return d
	}
	if r.MaxPreemptions <= 0 {
		d.Notes = append(d.Notes, "preemption off (live.max_preemptions is 0)")
		return d
	}
	if v.NodesUnsettled {
		d.Notes = append(d.Notes, "preemption suspended: a node's state is unknown or it does not respond")
		return d
	}
	for _, p := range plan.Preempt {
		if _, done := signalled[p.ID]; done {
			continue
		}
		j := v.Jobs[p.ID]
		switch {
		case j == nil || j.State != "RUNNING":
			d.Notes = append(d.Notes, fmt.Sprintf("job %d: not running; not preempted", p.ID))
			continue
		case !j.Requeue:
			d.Notes = append(d.Notes, fmt.Sprintf("job %d: not requeueable; not preempted", p.ID))
			continue
		case now.Sub(j.Start) < r.MinRun:
			d.Notes = append(d.Notes, fmt.Sprintf("job %d: ran %s, less than live.min_run_time; not preempted", p.ID, now.Sub(j.Start).Round(time.Second)))
			continue
		case j.Restarts >= r.MaxPreemptions:
			d.Notes = append(d.Notes, fmt.Sprintf("job %d: requeued %d times already; not preempted", p.ID, j.Restarts))
			continue
		}
		reason := fmt.Sprintf("preempted by %s: %s", pol, p.Reason)
		if r.Grace <= 0 {
			d.Actions = append(d.Actions, Action{Kind: KindRequeue, JobID: p.ID, Reason: reason})
			continue
		}
		d.Actions = append(d.Actions, Action{Kind: KindSignal, JobID: p.ID, Value: int64(r.Signal),
			Reason: fmt.Sprintf("%s; requeue in %s", reason, r.Grace)})
		d.Signalled[p.ID] = now
	}
	return d
}

// Guarded prepares the policy's view of the guards that Slurm knows and the
// policy does not: a job that is not requeueable is given the preemption
// count of the cap, so the policy never picks it as a victim (and never
// plans a start on GPUs it cannot free). With preemption off every job is.
func Guarded(v View, r Rules) {
	for _, j := range v.Snapshot.Running {
		sj := v.Jobs[j.ID]
		if r.MaxPreemptions <= 0 || sj == nil || !sj.Requeue {
			j.Preemptions = max(j.Preemptions, r.MaxPreemptions, 1)
		}
	}
}

// PolicyParams are the policy parameters for rules.
func PolicyParams(r Rules) policy.Params {
	p := policy.DefaultParams()
	p.MinRun = r.MinRun.Seconds()
	p.MaxPreemptions = max(r.MaxPreemptions, 1)
	return p
}
