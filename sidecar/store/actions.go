package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Kinds of Action.
const (
	ActionSiteFactor = "site_factor"
	ActionSignal     = "signal"
	ActionRequeue    = "requeue"
	ActionPause      = "pause"
	ActionResume     = "resume"
	// ActionOOMRequeue: a job requeued onto a larger GPU type after a GPU
	// out-of-memory (live.oom_recovery); Reason says onto which.
	ActionOOMRequeue = "oom_requeue"
	// ActionIdleFlag, ActionIdleWarn and ActionIdleCancel: a running job
	// whose GPUs stayed idle flagged, warned of its cancel, cancelled
	// (live.idle_gpu); Value is its GPUs (for a cancel: the GPU-seconds its
	// time limit had left, what the cancel freed at most).
	ActionIdleFlag   = "idle_flag"
	ActionIdleWarn   = "idle_warn"
	ActionIdleCancel = "idle_cancel"
)

// Action is one thing the live scheduler did to Slurm (or, with DryRun,
// would have done), with its reason.
type Action struct {
	At    time.Time
	JobID uint64 // 0 for pause and resume
	Kind  string // ActionSiteFactor, ActionSignal, ...
	Value int64  // the new SiteFactor, or the signal number
	// Previous is the SiteFactor replaced, when known.
	Previous *int64
	Reason   string
	Policy   string
	DryRun   bool
	Error    string // "" when it worked
}

const insertActionSQL = `
INSERT INTO actions (at_ns, job_id, kind, value, previous, reason, policy, dry_run, error)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

func validAction(a *Action) error {
	switch a.Kind {
	case ActionSiteFactor, ActionSignal, ActionRequeue, ActionPause, ActionResume, ActionOOMRequeue,
		ActionIdleFlag, ActionIdleWarn, ActionIdleCancel:
	default:
		return fmt.Errorf("%w: action kind %q", ErrInvalid, a.Kind)
	}
	if a.At.IsZero() {
		return fmt.Errorf("%w: action without a time", ErrInvalid)
	}
	return nil
}

// AddActions stores actions in one transaction. It bypasses the submission
// writer's queue: a pass's actions are few transactions of many rows, and
// the loop that records them can wait for the disk (slurmctld does not).
func (s *Store) AddActions(ctx context.Context, as []Action) error {
	if len(as) == 0 {
		return nil
	}
	for i := range as {
		if err := validAction(&as[i]); err != nil {
			return err
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: actions: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	st, err := tx.PrepareContext(ctx, insertActionSQL)
	if err != nil {
		return fmt.Errorf("store: actions: %w", err)
	}
	defer st.Close()
	for _, a := range as {
		var prev any
		if a.Previous != nil {
			prev = *a.Previous
		}
		if _, err := st.ExecContext(ctx, unixNano(a.At), int64(a.JobID), a.Kind, a.Value, prev, a.Reason,
			a.Policy, a.DryRun, a.Error); err != nil {
			return fmt.Errorf("store: action for job %d: %w", a.JobID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: actions: %w", err)
	}
	return nil
}

// ActionFilter selects actions; zero fields match everything.
type ActionFilter struct {
	JobID uint64
	Kind  string
	Limit int // default 1000
}

const selectActionsSQL = `
SELECT at_ns, job_id, kind, value, previous, reason, policy, dry_run, error FROM actions
WHERE (?1 = 0 OR job_id = ?1) AND (?2 = '' OR kind = ?2)
ORDER BY at_ns DESC, id DESC LIMIT ?3`

func actions(ctx context.Context, db *sql.DB, f ActionFilter) ([]Action, error) {
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	rows, err := db.QueryContext(ctx, selectActionsSQL, int64(f.JobID), f.Kind, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("store: actions: %w", err)
	}
	defer rows.Close()
	var out []Action
	for rows.Next() {
		var (
			a    Action
			at   int64
			id   int64
			prev sql.NullInt64
		)
		if err := rows.Scan(&at, &id, &a.Kind, &a.Value, &prev, &a.Reason, &a.Policy, &a.DryRun, &a.Error); err != nil {
			return nil, fmt.Errorf("store: actions: %w", err)
		}
		a.At, a.JobID = fromUnixNano(at), uint64(id)
		if prev.Valid {
			v := prev.Int64
			a.Previous = &v
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Actions returns the newest actions matching f, newest first.
func (s *Store) Actions(ctx context.Context, f ActionFilter) ([]Action, error) {
	return actions(ctx, s.db, f)
}

// Actions returns the newest actions matching f, newest first.
func (r *Reader) Actions(ctx context.Context, f ActionFilter) ([]Action, error) {
	return actions(ctx, r.db, f)
}

// Paused reports whether the newest pause or resume action is a pause: an
// admin's pause outlives augurd restarts.
func (s *Store) Paused(ctx context.Context) (bool, error) {
	var kind string
	err := s.db.QueryRowContext(ctx, `SELECT kind FROM actions WHERE kind IN ('pause', 'resume') ORDER BY at_ns DESC, id DESC LIMIT 1`).Scan(&kind)
	switch {
	case err == sql.ErrNoRows:
		return false, nil
	case err != nil:
		return false, fmt.Errorf("store: paused: %w", err)
	}
	return kind == ActionPause, nil
}
