package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/augur-hpc/augur/sidecar/slurm"
	"github.com/augur-hpc/augur/sidecar/store"
)

// JobLister is what the linker needs of Slurm.
type JobLister interface {
	Jobs(ctx context.Context) ([]slurm.Job, error)
}

// LinkStore is what the linker needs of the store.
type LinkStore interface {
	LinkJob(ctx context.Context, token string, jobID uint64) error
	Accuracy(ctx context.Context, jobID uint64) (store.Accuracy, bool, error)
	Queue(sub store.Submission) error
	SetFinal(ctx context.Context, jobID uint64, state string, start, end time.Time) (bool, error)
	Unlinked(ctx context.Context, from, to time.Time, limit int) ([]store.Unlinked, error)
	MarkOrphaned(ctx context.Context, token string) (bool, error)
}

// Linker ties submissions to the job ids Slurm gave them. At submission the
// job has no id yet (job_submit runs before slurmctld assigns one), so the
// plugin puts a token in the job's AdminComment; the linker reads the
// queue, finds the tokens, and records which job each became. An outcome
// that arrives for a job id then finds its submission (and so its script
// signature: the history the predictor learns from).
//
// A token augurd has no record of (its record died with a killed augurd
// before the writer committed it) is recovered from the job itself: the
// annotation in AdminComment is the decision, so nothing is lost. Not at
// once: a job the shim answered from its reuse window is reported to augurd
// a moment after slurmctld queued it (shim.reuse_window), and the full
// record that report makes must not lose to a bare recovered one. So a job
// younger than RecoverAfter is left for a later pass.
//
// The reverse, a record whose token no job carries, is an orphan: augurd's
// answer reached the shim after its deadline (the job went in unchanged),
// or slurmctld refused the job after Augur accepted it. After each pass the
// linker marks such records final_state ORPHANED (store.FinalOrphaned), but
// only once it is sure: a record received at R is an orphan when a pass
// that succeeded at some P with R+OrphanAfter <= P <= R+JobHorizon found no
// job carrying its token. Before R+OrphanAfter the job may not exist yet;
// after R+JobHorizon (slurmctld's MinJobAge) a job that ended may be gone
// from the queue. Held jobs stay in the queue, so they are always found; a
// record from before this augurd's first pass (it was down) is judged only
// if that pass came within JobHorizon of it, and otherwise left unmarked.
type Linker struct {
	Slurm JobLister
	Store LinkStore
	Log   *slog.Logger

	// StateChanged is called when a stored outcome's exit state was
	// corrected (histories cached elsewhere are stale).
	StateChanged func()
	// Linked is called with a job's prediction and outcome when linking
	// joined an outcome that had arrived first.
	Linked func(store.Accuracy)
	// Queue is called after each pass with the number of jobs by state.
	Queue func(byState map[string]int)
	// Orphaned is called with the number of records marked ORPHANED by a pass.
	Orphaned func(n int)
	// Finished is called with each finished job of Augur's a pass lists,
	// after its outcome carries Slurm's final state (GPU out-of-memory
	// recovery looks at it).
	Finished func(ctx context.Context, j slurm.Job)
	// Listed is called with the whole queue of each pass, after the jobs
	// in it are linked (the idle-GPU watcher judges the running ones).
	Listed func(ctx context.Context, jobs []slurm.Job)

	// OrphanAfter is how old a record must be before a pass that misses its
	// token counts (default DefaultOrphanAfter); JobHorizon is how long
	// slurmctld lists a finished job (MinJobAge; default DefaultJobHorizon).
	OrphanAfter, JobHorizon time.Duration
	// RecoverAfter is how old a job must be (by its submit time) before a
	// missing record is rebuilt from it (default DefaultRecoverAfter).
	RecoverAfter time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	linked map[uint64]bool      // job ids already linked (or recovered)
	passes []time.Time          // successful passes within the last JobHorizon, oldest first
	final  map[uint64]time.Time // finished jobs: when first seen finished
	poke   chan struct{}
}

// Defaults of Linker.OrphanAfter and Linker.JobHorizon. Slurm's MinJobAge
// defaults to 300 s; a site that lowers it should lower JobHorizon too.
const (
	DefaultOrphanAfter = time.Minute
	DefaultJobHorizon  = 5 * time.Minute
	// DefaultRecoverAfter is well past the shim's report delay (at most
	// about 0.3 s, or the next submission's round trip) and the writer's
	// commit wait.
	DefaultRecoverAfter = 10 * time.Second
)

// maxOrphanSweep bounds the records one pass reads for the orphan sweep.
const maxOrphanSweep = 1000

// finalWindow is how long after a job is first seen finished the linker
// keeps trying to correct its outcome's exit state (the node's report
// usually arrives within seconds).
const finalWindow = 2 * time.Minute

// terminal are Slurm's final job states.
var terminal = map[string]bool{
	"COMPLETED": true, "FAILED": true, "CANCELLED": true, "TIMEOUT": true, "OUT_OF_MEMORY": true,
	"NODE_FAIL": true, "PREEMPTED": true, "BOOT_FAIL": true, "DEADLINE": true,
}

// NewLinker returns a linker.
func NewLinker(sl JobLister, st LinkStore, log *slog.Logger) *Linker {
	return &Linker{Slurm: sl, Store: st, Log: log, poke: make(chan struct{}, 1)}
}

// Poke asks for a pass now (a job report arrived, so a job has ended and
// should be linked while Slurm still lists it).
func (l *Linker) Poke() {
	select {
	case l.poke <- struct{}{}:
	default:
	}
}

// maxLinked bounds the memory of linked job ids; past it the set starts
// over (re-linking an id is a harmless UPDATE).
const maxLinked = 1_000_000

// Pass links every job in the queue once. It returns how many it linked and
// how many records it recovered.
func (l *Linker) Pass(ctx context.Context) (linked, recovered int, err error) {
	if l.linked == nil || len(l.linked) > maxLinked {
		l.linked = map[uint64]bool{}
	}
	if l.final == nil || len(l.final) > maxLinked {
		l.final = map[uint64]time.Time{}
	}
	clock := l.Now
	if clock == nil {
		clock = time.Now
	}
	// The pass's time is taken before reading the queue: a job submitted
	// after it may be missing from what squeue returns.
	now := clock()
	jobs, err := l.Slurm.Jobs(ctx)
	if err != nil {
		return 0, 0, err
	}
	if l.Queue != nil {
		byState := map[string]int{"PENDING": 0, "RUNNING": 0}
		for _, j := range jobs {
			if j.State == "PENDING" || j.State == "RUNNING" {
				byState[j.State]++
			}
		}
		l.Queue(byState)
	}
	for _, j := range jobs {
		tok := j.Token()
		if tok != "" && terminal[j.State] {
			l.correct(ctx, j, now)
			if l.Finished != nil {
				l.Finished(ctx, j)
			}
		}
		if tok == "" || l.linked[j.ID] {
			continue
		}
		err := l.Store.LinkJob(ctx, tok, j.ID)
		switch {
		case err == nil:
			linked++
			if l.Linked != nil {
				if a, ok, err := l.Store.Accuracy(ctx, j.ID); err == nil && ok {
					l.Linked(a)
				}
			}
		case errors.Is(err, store.ErrNotFound):
			if l.young(j, now) {
				continue // its record may still be on its way; not marked linked
			}
			if err := l.Store.Queue(recoveredSubmission(j, tok)); err != nil {
				l.Log.Warn("cannot recover a lost submission record", "job_id", j.ID, "token", tok, "err", err)
				continue
			}
			recovered++
			l.Log.Info("submission record recovered from the job's AdminComment", "job_id", j.ID, "token", tok)
		case errors.Is(err, store.ErrInvalid):
			// Not one of ours (a user cannot set AdminComment, but an admin can).
		default:
			return linked, recovered, err
		}
		l.linked[j.ID] = true
	}
	if l.Listed != nil {
		l.Listed(ctx, jobs)
	}
	// Every token in the queue is linked (or recovered) now: what is still
	// unlinked was not in the queue at now.
	l.passes = append(l.passes, now)
	if n, err := l.sweepOrphans(ctx, now); err != nil {
		l.Log.Warn("orphan sweep failed; retrying next pass", "err", err)
	} else if n > 0 && l.Orphaned != nil {
		l.Orphaned(n)
	}
	return linked, recovered, nil
}

// sweepOrphans marks the records that a pass should have found but did not
// (see Linker) and returns how many it marked.
func (l *Linker) sweepOrphans(ctx context.Context, now time.Time) (int, error) {
	after, horizon := l.OrphanAfter, l.JobHorizon
	if after <= 0 {
		after = DefaultOrphanAfter
	}
	if horizon <= 0 {
		horizon = DefaultJobHorizon
	}
	if horizon < after {
		horizon = after
	}
	// A pass older than now-horizon can only vouch for records older than
	// it minus horizon plus after, all of which it has been asked about.
	keep := 0
	for keep < len(l.passes) && l.passes[keep].Before(now.Add(-horizon)) {
		keep++
	}
	l.passes = l.passes[keep:]
	if len(l.passes) == 0 {
		return 0, nil
	}
	from := l.passes[0].Add(-horizon)
	to := l.passes[len(l.passes)-1].Add(-after).Add(time.Nanosecond) // to is exclusive
	if !to.After(from) {
		return 0, nil
	}
	recs, err := l.Store.Unlinked(ctx, from, to, maxOrphanSweep)
	if err != nil {
		return 0, err
	}
	marked := 0
	for _, r := range recs {
		if !l.vouched(r.ReceivedAt, after, horizon) {
			continue
		}
		ok, err := l.Store.MarkOrphaned(ctx, r.Token)
		if err != nil {
			return marked, err
		}
		if ok {
			marked++
			l.Log.Info("submission marked ORPHANED: no job carries its token (the shim had stopped waiting, or slurmctld refused the job)",
				"token", r.Token, "received_at", r.ReceivedAt, "age_seconds", now.Sub(r.ReceivedAt).Seconds())
		}
	}
	return marked, nil
}

// vouched says whether a successful pass came within [at+after, at+horizon].
func (l *Linker) vouched(at time.Time, after, horizon time.Duration) bool {
	lo, hi := at.Add(after), at.Add(horizon)
	for _, p := range l.passes {
		if !p.Before(lo) && !p.After(hi) {
			return true
		}
	}
	return false
}

// correct makes a finished job's stored outcome carry Slurm's final state
// and start and end times (the node's Prolog can start a second after the
// start Slurm records: it did on 26.05 in the e2e tests), for finalWindow
// after the job is first seen finished.
func (l *Linker) correct(ctx context.Context, j slurm.Job, now time.Time) {
	first, seen := l.final[j.ID]
	if !seen {
		l.final[j.ID] = now
		first = now
	}
	if first.IsZero() || now.Sub(first) > finalWindow {
		return
	}
	changed, err := l.Store.SetFinal(ctx, j.ID, j.State, j.Start, j.End)
	if err != nil {
		l.Log.Warn("cannot correct a job's exit state", "job_id", j.ID, "state", j.State, "err", err)
		return
	}
	if changed {
		l.final[j.ID] = time.Time{} // done
		l.Log.Info("job's exit state corrected from slurmctld", "job_id", j.ID, "state", j.State)
		if l.StateChanged != nil {
			l.StateChanged()
		}
	}
}

// young reports whether job j was submitted less than RecoverAfter before
// now. A job with no submit time, or one from further in the future than
// that (clocks apart), is not young: waiting would never end.
func (l *Linker) young(j slurm.Job, now time.Time) bool {
	after := l.RecoverAfter
	if after <= 0 {
		after = DefaultRecoverAfter
	}
	if j.Submit.IsZero() {
		return false
	}
	age := now.Sub(j.Submit)
	return age < after && age > -after
}

// recoveredSubmission rebuilds a submission's row from what Slurm shows.
func recoveredSubmission(j slurm.Job, tok string) store.Submission {
	req, _ := json.Marshal(map[string]any{
		"token": tok, "user_id": j.UserID, "name": j.Name, "partition": j.Partition, "account": j.Account,
		"tres": map[string]string{"per_node": j.TRESPerNode, "per_job": j.TRESPerJob, "per_task": j.TRESPerTask, "per_socket": j.TRESPerSock},
	})
	dec, _ := json.Marshal(map[string]any{"action": "accept", "annotation": j.AdminComment, "recovered": true})
	at := j.Submit
	if at.IsZero() {
		at = time.Now()
	}
	return store.Submission{
		Token: tok, ReceivedAt: at, UserID: j.UserID, User: j.UserName, Account: j.Account,
		Partition: j.Partition, QOS: j.QOS, Name: j.Name, Request: req, Decision: dec,
		Action: store.ActionAccept, PredSource: "recovered", JobID: j.ID,
	}
}

// Run links every interval until ctx ends. While Slurm does not answer it
// waits for the next round; nothing is acted on from stale data.
func (l *Linker) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		linked, recovered, err := l.Pass(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			l.Log.Warn("linking jobs to submissions failed; retrying next round", "err", err)
		case linked+recovered > 0:
			l.Log.Debug("jobs linked to their submissions", "linked", linked, "recovered", recovered)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-l.poke:
		}
	}
}
