package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mattn/go-sqlite3"
)

// opKind says what a queued write does.
type opKind uint8

const (
	opSubmit opKind = iota + 1
	opLink
	opOutcome
	opExitState
	opOrphan
)

// op is one queued write and the channel its caller waits on.
type op struct {
	kind  opKind
	sub   *Submission // opSubmit
	sum   [32]byte    // opSubmit: sha256 of sub.Script
	token string      // opLink, opOrphan; opExitState: the state
	jobID int64       // opLink, opExitState
	start int64       // opExitState: Slurm's start time (Unix ns), 0 when unknown
	end   int64       // opExitState: Slurm's end time (Unix ns), 0 when unknown
	out   *Outcome    // opOutcome
	added *bool       // opOutcome: set when the row was new or merged; opOrphan: when it was marked
	put   *PutResult  // opOutcome: what became of the outcome
	// detached: nobody waits for the result (Queue); the writer logs failures.
	detached bool
	done     chan error // capacity 1; gets the op's result once committed
}

type writeStmts struct {
	scriptExists, insertScript, insertSubmission, linkJob, insertOutcome *sql.Stmt
	linkOutcome, fillOutcome, exitState, finalState, orphan              *sql.Stmt
	insertNodeReport, mergeOutcome                                       *sql.Stmt
	reportEnds, dropReports, resetOutcome                                *sql.Stmt
}

const (
	scriptExistsSQL = `SELECT EXISTS (SELECT 1 FROM scripts WHERE sha256 = ?)`
	insertScriptSQL = `
INSERT INTO scripts (sha256, size_bytes, compression, body) VALUES (?, ?, ?, ?)
ON CONFLICT (sha256) DO NOTHING`
	// ON CONFLICT (token) DO NOTHING makes a retried Record exactly-once while,
	// unlike INSERT OR IGNORE, still failing on any other constraint.
	insertSubmissionSQL = `
INSERT INTO submissions (
	token, received_at_ns, submit_uid, user_id, user_name, account, partition_name, qos,
	job_name, script_sha256, signature, request_json, decision_json, action,
	pred_mem_mib, pred_mem_hi_mib, pred_runtime_sec, pred_runtime_hi_sec, pred_source,
	decision_us, job_id, features_json
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (token) DO NOTHING`
	// A submission marked ORPHANED whose job turns up after all is one
	// again: the mark goes.
	linkJobSQL = `
UPDATE submissions SET job_id = ?, final_state = iif(final_state = 'ORPHANED', '', final_state)
WHERE token = ?`
	// orphanSQL marks a submission no job claimed (see Store.MarkOrphaned).
	orphanSQL = `UPDATE submissions SET final_state = 'ORPHANED'
WHERE token = ? AND job_id IS NULL AND final_state = '' AND action = 'accept'`
	insertOutcomeSQL = `
INSERT INTO outcomes (
	job_id, token, user_id, signature, gpu_type, gpus, peak_gpu_mem_mib, runtime_sec,
	exit_state, ended_at_ns, source, node, started_at_ns, mean_sm_util, energy_j,
	oom_suspect, finalized, received_at_ns, report_json, at_ceiling
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (job_id) DO NOTHING`
	// insertNodeReportSQL keeps one report per job and node: a node's
	// report sent again (a retry) changes nothing.
	insertNodeReportSQL = `
INSERT INTO node_reports (job_id, node, received_at_ns, report_json) VALUES (?, ?, ?, ?)
ON CONFLICT (job_id, node) DO NOTHING`
	// mergeOutcomeSQL folds another node's report of a job into its row:
	// GPUs and energy add up, the peak is the highest of any GPU, the mean
	// SM utilisation is weighted by GPUs, the job ran from the earliest
	// start to the latest end, and it is an OOM suspect if any node saw one
	// (or any was at the ceiling and the job is known to have failed).
	// A node that did not complete decides the node-side exit state (Slurm's
	// final state replaces it at the link anyway). Parameters: gpus, peak,
	// mean SM, energy, OOM suspect, start, end, exit state, job id, at
	// ceiling.
	mergeOutcomeSQL = `
UPDATE outcomes SET
	mean_sm_util = iif(gpus + ?1 > 0, (mean_sm_util * gpus + ?3 * ?1) / (gpus + ?1), mean_sm_util),
	gpus = gpus + ?1,
	peak_gpu_mem_mib = max(peak_gpu_mem_mib, ?2),
	energy_j = energy_j + ?4,
	oom_suspect = oom_suspect OR ?5 OR (?10 AND iif(exit_state = 'COMPLETED' AND ?8 <> '', ?8, exit_state) = 'FAILED'),
	at_ceiling = at_ceiling OR ?10,
	started_at_ns = iif(?6 > 0 AND (started_at_ns = 0 OR ?6 < started_at_ns), ?6, started_at_ns),
	ended_at_ns = max(ended_at_ns, ?7),
	runtime_sec = (max(ended_at_ns, ?7) - iif(?6 > 0 AND (started_at_ns = 0 OR ?6 < started_at_ns), ?6, started_at_ns)) / 1e9,
	exit_state = iif(exit_state = 'COMPLETED' AND ?8 <> '', ?8, exit_state)
WHERE job_id = ?9 AND source = 'node'`
	// reportEndsSQL lists when each stored node report of a job says its
	// run ended (RFC 3339), to tell a later run of a requeued job.
	reportEndsSQL  = `SELECT coalesce(json_extract(report_json, '$.end'), '') FROM node_reports WHERE job_id = ?`
	dropReportsSQL = `DELETE FROM node_reports WHERE job_id = ?`
	// resetOutcomeSQL makes a job's row a later run's (see PutRerun),
	// keeping its link to its submission. Parameters: gpus, peak, runtime,
	// exit state, end, node, start, mean SM, energy, OOM suspect, finalized,
	// received, report, at ceiling, job id.
	resetOutcomeSQL = `
UPDATE outcomes SET gpus = ?, peak_gpu_mem_mib = ?, runtime_sec = ?, exit_state = ?, ended_at_ns = ?, node = ?,
	started_at_ns = ?, mean_sm_util = ?, energy_j = ?, oom_suspect = ?, finalized = ?, received_at_ns = ?,
	report_json = ?, at_ceiling = ?
WHERE job_id = ? AND source = 'node'`
	// An outcome that arrived before its job was linked learns its
	// submission's token and signature at the link ...
	linkOutcomeSQL = `
UPDATE outcomes SET token = s.token, signature = s.signature
FROM submissions s
WHERE outcomes.job_id = ? AND s.token = ? AND outcomes.signature = ''`
	// Slurm's final state is authoritative: the node cannot tell a
	// cancelled job from a completed one (the Epilog sees exit 0:0), and
	// the nodes of a multi-node job other than the batch host may not know
	// it failed. So the OOM verdict follows it: a failed job at the ceiling
	// is a suspect, a job Slurm says did not fail is not.
	// exitStateSQL's parameters: state, start, end, job id (a start or end
	// of 0 keeps the node's).
	exitStateSQL = `
UPDATE outcomes SET exit_state = ?1,
	oom_suspect = iif(?1 = 'FAILED', oom_suspect OR at_ceiling, 0),
	started_at_ns = CASE WHEN ?2 > 0 THEN ?2 ELSE started_at_ns END,
	ended_at_ns = CASE WHEN ?3 > 0 THEN ?3 ELSE ended_at_ns END
WHERE job_id = ?4 AND (exit_state <> ?1 OR (?2 > 0 AND started_at_ns <> ?2) OR (?3 > 0 AND ended_at_ns <> ?3))`
	finalStateSQL = `UPDATE submissions SET final_state = ? WHERE job_id = ? AND final_state <> ?`
	// ... and one that arrives after, at once.
	fillOutcomeSQL = `
UPDATE outcomes SET token = s.token, signature = s.signature
FROM submissions s
WHERE outcomes.job_id = ? AND s.job_id = outcomes.job_id AND outcomes.signature = ''`
)

// enqueue queues o for the writer and waits for its result or ctx.
func (s *Store) enqueue(ctx context.Context, o op) error {
	o.done = make(chan error, 1)
	if err := s.push(o); err != nil {
		return err
	}
	select {
	case err := <-o.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("not yet committed, stays queued: %w", ctx.Err())
	}
}

// push appends o to the queue and wakes the writer.
func (s *Store) push(o op) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if s.pendingLocked() >= s.opts.MaxQueue {
		s.mu.Unlock()
		return ErrQueueFull
	}
	if s.head > 0 && len(s.queue) == cap(s.queue) {
		// Reuse the space the writer has consumed rather than grow.
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue, s.head = s.queue[:n], 0
	}
	s.queue = append(s.queue, o)
	s.mu.Unlock()

	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
	return nil
}

// run is the writer goroutine: it commits whatever is queued, up to MaxBatch
// writes per transaction, until Close and the queue is empty.
func (s *Store) run() {
	defer close(s.done)
	w := &writer{seen: make(map[[32]byte]struct{})}
	for {
		batch, ok := s.take(w.batch[:0])
		if !ok {
			return
		}
		if s.opts.BatchDelay > 0 && allDetached(batch) && len(batch) < s.opts.MaxBatch {
			// Nobody waits for these rows: gather a few more into the same
			// transaction, so that a steady trickle of submissions costs one
			// commit per BatchDelay rather than one per submission.
			s.putBack(batch)
			select {
			case <-time.After(s.opts.BatchDelay):
			case <-s.closing:
			}
			if batch, ok = s.take(w.batch[:0]); !ok {
				return
			}
		}
		w.batch = batch
		if err := s.flush(w); err != nil {
			s.abandon(batch, err)
			return
		}
	}
}

func allDetached(batch []op) bool {
	for _, o := range batch {
		if !o.detached {
			return false
		}
	}
	return true
}

// putBack returns a batch just taken to the front of the queue, in order.
func (s *Store) putBack(batch []op) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rest := s.queue[s.head:]
	q := make([]op, 0, len(batch)+len(rest))
	q = append(append(q, batch...), rest...)
	s.queue, s.head, s.inflight = q, 0, 0
}

// writer is the writer goroutine's reusable state.
type writer struct {
	batch   []op
	results []error
	seen    map[[32]byte]struct{} // scripts written or found in this transaction
}

// take moves up to MaxBatch ops from the queue into buf and counts them as in
// flight. It blocks while the queue is empty, and reports false once the
// store is closed and the queue drained.
func (s *Store) take(buf []op) ([]op, bool) {
	for {
		s.mu.Lock()
		if n := min(len(s.queue)-s.head, s.opts.MaxBatch); n > 0 {
			buf = append(buf, s.queue[s.head:s.head+n]...)
			clear(s.queue[s.head : s.head+n]) // let the GC have the rows
			s.head += n
			if s.head == len(s.queue) {
				s.queue, s.head = s.queue[:0], 0
			}
			s.inflight = n
			s.mu.Unlock()
			return buf, true
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-s.wake:
		case <-s.closing:
		}
	}
}

// flush commits w.batch, retrying with capped exponential backoff until it
// commits; the rows stay in memory meanwhile. It gives up only when Close
// stops the writer, returning the last error.
func (s *Store) flush(w *writer) error {
	wait := s.opts.RetryMin
	for attempt := 1; ; attempt++ {
		err := s.commit(s.writeCtx, w)
		if err == nil {
			if attempt > 1 {
				s.log.Info("store commit succeeded after retries", "rows", len(w.batch), "attempts", attempt)
			}
			s.mu.Lock()
			s.inflight = 0
			s.mu.Unlock()
			for i := range w.batch {
				if w.batch[i].detached && w.results[i] != nil {
					s.log.Error("queued write failed", "token", w.batch[i].token, "err", w.results[i])
				}
				w.batch[i].done <- w.results[i]
				w.batch[i] = op{}
			}
			return nil
		}
		if s.writeCtx.Err() != nil {
			return err
		}
		s.log.Warn("store commit failed; rows kept in memory, retrying",
			"rows", len(w.batch), "attempt", attempt, "pending", s.Pending(),
			"retry_in_seconds", wait.Seconds(), "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.writeCtx.Done():
			t.Stop()
			return err
		}
		wait = min(2*wait, s.opts.RetryMax)
	}
}

// abandon fails the batch and everything still queued; Close gave up on them.
func (s *Store) abandon(batch []op, cause error) {
	s.mu.Lock()
	rest := s.queue[s.head:]
	s.queue, s.head, s.inflight = nil, 0, 0
	s.lost = len(batch) + len(rest)
	s.mu.Unlock()
	err := fmt.Errorf("%w before the write committed: %w", ErrClosed, cause)
	for _, o := range append(batch, rest...) {
		o.done <- err
	}
	s.log.Error("store closed with writes not committed", "rows", s.lost, "err", cause)
}

// commit writes w.batch in one transaction, putting each op's own result in
// w.results. An op that fails on its own (a constraint, an unknown token) does
// not stop the others; any other error rolls the whole batch back and is
// returned, for flush to retry.
func (s *Store) commit(ctx context.Context, w *writer) error {
	w.results = w.results[:0]
	clear(w.seen)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	st := writeStmts{
		scriptExists:     tx.StmtContext(ctx, s.writes.scriptExists),
		insertScript:     tx.StmtContext(ctx, s.writes.insertScript),
		insertSubmission: tx.StmtContext(ctx, s.writes.insertSubmission),
		linkJob:          tx.StmtContext(ctx, s.writes.linkJob),
		insertOutcome:    tx.StmtContext(ctx, s.writes.insertOutcome),
		linkOutcome:      tx.StmtContext(ctx, s.writes.linkOutcome),
		fillOutcome:      tx.StmtContext(ctx, s.writes.fillOutcome),
		exitState:        tx.StmtContext(ctx, s.writes.exitState),
		finalState:       tx.StmtContext(ctx, s.writes.finalState),
		orphan:           tx.StmtContext(ctx, s.writes.orphan),
		insertNodeReport: tx.StmtContext(ctx, s.writes.insertNodeReport),
		mergeOutcome:     tx.StmtContext(ctx, s.writes.mergeOutcome),
		reportEnds:       tx.StmtContext(ctx, s.writes.reportEnds),
		dropReports:      tx.StmtContext(ctx, s.writes.dropReports),
		resetOutcome:     tx.StmtContext(ctx, s.writes.resetOutcome),
	}
	for i := range w.batch {
		err := st.apply(ctx, w, &w.batch[i])
		if err != nil && !ownFault(err) {
			return err
		}
		w.results = append(w.results, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// ownFault reports whether err belongs to one op rather than the transaction:
// retrying would fail the same way, so the op's caller gets the error instead.
func ownFault(err error) bool {
	if errors.Is(err, ErrNotFound) {
		return true
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrConstraint, sqlite3.ErrMismatch, sqlite3.ErrTooBig, sqlite3.ErrRange:
			return true
		}
	}
	return false
}

func (st *writeStmts) apply(ctx context.Context, w *writer, o *op) error {
	switch o.kind {
	case opSubmit:
		if err := st.putScript(ctx, w, o.sub.Script, o.sum); err != nil {
			return err
		}
		sub := o.sub
		var jobID any
		if sub.JobID != 0 {
			jobID = int64(sub.JobID)
		}
		_, err := st.insertSubmission.ExecContext(ctx,
			sub.Token, unixNano(sub.ReceivedAt), sub.SubmitUID, sub.UserID, sub.User, sub.Account,
			sub.Partition, sub.QOS, sub.Name, o.sum[:], sub.Signature,
			jsonText(sub.Request), jsonText(sub.Decision), sub.Action,
			sub.PredMemMiB, sub.PredMemHiMiB, sub.PredRuntimeSec, sub.PredRuntimeHiSec, sub.PredSource,
			sub.DecisionMicros, jobID, jsonText(sub.Features))
		if err != nil {
			return fmt.Errorf("insert submission: %w", err)
		}
		return nil
	case opLink:
		res, err := st.linkJob.ExecContext(ctx, o.jobID, o.token)
		if err != nil {
			return fmt.Errorf("link job: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("link job: %w", err)
		} else if n == 0 {
			return fmt.Errorf("no submission with token %s: %w", o.token, ErrNotFound)
		}
		if _, err := st.linkOutcome.ExecContext(ctx, o.jobID, o.token); err != nil {
			return fmt.Errorf("link outcome: %w", err)
		}
		return nil
	case opExitState:
		if _, err := st.finalState.ExecContext(ctx, o.token, o.jobID, o.token); err != nil {
			return fmt.Errorf("final state: %w", err)
		}
		res, err := st.exitState.ExecContext(ctx, o.token, o.start, o.end, o.jobID)
		if err != nil {
			return fmt.Errorf("exit state: %w", err)
		}
		if o.added != nil {
			n, _ := res.RowsAffected()
			*o.added = n == 1
		}
		return nil
	case opOrphan:
		res, err := st.orphan.ExecContext(ctx, o.token)
		if err != nil {
			return fmt.Errorf("mark orphaned: %w", err)
		}
		if o.added != nil {
			n, _ := res.RowsAffected()
			*o.added = n == 1
		}
		return nil
	case opOutcome:
		out := o.out
		fromNode := out.Node != "" && len(out.Report) > 0
		newNode := false
		if fromNode {
			rerun, err := st.laterRun(ctx, out)
			if err != nil {
				return err
			}
			if rerun {
				return st.putRerun(ctx, o)
			}
			res, err := st.insertNodeReport.ExecContext(ctx, int64(out.JobID), out.Node, unixNano(out.ReceivedAt), jsonText(out.Report))
			if err != nil {
				return fmt.Errorf("insert node report: %w", err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return fmt.Errorf("insert node report: %w", err)
			}
			newNode = n == 1
		}
		res, err := st.insertOutcome.ExecContext(ctx,
			int64(out.JobID), out.Token, out.UserID, out.Signature, out.GPUType, out.GPUs,
			out.PeakGPUMemMiB, out.RuntimeSec, out.ExitState, unixNano(out.EndedAt), out.Source,
			out.Node, unixNano(out.StartedAt), out.MeanSMUtil, out.EnergyJ, out.OOMSuspect,
			out.Finalized, unixNano(out.ReceivedAt), jsonText(out.Report), out.AtCeiling)
		if err != nil {
			return fmt.Errorf("insert outcome: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("insert outcome: %w", err)
		}
		if n == 0 && newNode {
			// Another node's report of a job already stored: the row
			// becomes the union of the nodes' views.
			exit := ""
			if out.ExitState != "COMPLETED" {
				exit = out.ExitState
			}
			if _, err := st.mergeOutcome.ExecContext(ctx, out.GPUs, out.PeakGPUMemMiB, out.MeanSMUtil, out.EnergyJ,
				out.OOMSuspect, unixNano(out.StartedAt), unixNano(out.EndedAt), exit, int64(out.JobID), out.AtCeiling); err != nil {
				return fmt.Errorf("merge outcome: %w", err)
			}
		}
		if o.added != nil {
			*o.added = n == 1 || newNode
		}
		if o.put != nil {
			switch {
			case n == 1:
				*o.put = PutNew
			case newNode:
				*o.put = PutMerged
			default:
				*o.put = PutDuplicate
			}
		}
		if n == 1 && out.Signature == "" {
			if _, err := st.fillOutcome.ExecContext(ctx, int64(out.JobID)); err != nil {
				return fmt.Errorf("fill outcome: %w", err)
			}
		}
		return nil
	}
	panic(fmt.Sprintf("store: unknown op kind %d", o.kind))
}

// laterRun reports whether a node's report is of a later run of a job
// already stored: one that started after every stored report of the job
// had ended (Slurm requeued it, by hand or for live.oom_recovery).
func (st *writeStmts) laterRun(ctx context.Context, out *Outcome) (bool, error) {
	if out.StartedAt.IsZero() {
		return false, nil
	}
	rows, err := st.reportEnds.QueryContext(ctx, int64(out.JobID))
	if err != nil {
		return false, fmt.Errorf("read node reports: %w", err)
	}
	defer rows.Close()
	seen := false
	for rows.Next() {
		var end string
		if err := rows.Scan(&end); err != nil {
			return false, fmt.Errorf("read node reports: %w", err)
		}
		t, err := time.Parse(time.RFC3339Nano, end)
		if err != nil || !out.StartedAt.After(t) {
			return false, nil // this run's, or a report whose end cannot be read: not later
		}
		seen = true
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("read node reports: %w", err)
	}
	return seen, nil
}

// putRerun makes a later run's report the job's outcome (see PutRerun).
func (st *writeStmts) putRerun(ctx context.Context, o *op) error {
	out := o.out
	if _, err := st.dropReports.ExecContext(ctx, int64(out.JobID)); err != nil {
		return fmt.Errorf("drop the earlier run's node reports: %w", err)
	}
	if _, err := st.insertNodeReport.ExecContext(ctx, int64(out.JobID), out.Node, unixNano(out.ReceivedAt), jsonText(out.Report)); err != nil {
		return fmt.Errorf("insert node report: %w", err)
	}
	if _, err := st.resetOutcome.ExecContext(ctx, out.GPUs, out.PeakGPUMemMiB, out.RuntimeSec, out.ExitState,
		unixNano(out.EndedAt), out.Node, unixNano(out.StartedAt), out.MeanSMUtil, out.EnergyJ, out.OOMSuspect,
		out.Finalized, unixNano(out.ReceivedAt), jsonText(out.Report), out.AtCeiling, int64(out.JobID)); err != nil {
		return fmt.Errorf("reset outcome: %w", err)
	}
	if o.added != nil {
		*o.added = true
	}
	if o.put != nil {
		*o.put = PutRerun
	}
	return nil
}

// putScript makes sure the script with sum is stored. Small scripts are just
// inserted; a large one is looked up first so that it is compressed only the
// first time it is seen.
func (st *writeStmts) putScript(ctx context.Context, w *writer, script string, sum [32]byte) error {
	if _, ok := w.seen[sum]; ok {
		return nil
	}
	if len(script) > compressOver {
		var exists bool
		if err := st.scriptExists.QueryRowContext(ctx, sum[:]).Scan(&exists); err != nil {
			return fmt.Errorf("look up script: %w", err)
		}
		if exists {
			w.seen[sum] = struct{}{}
			return nil
		}
	}
	body, compression, err := encodeScript(script)
	if err != nil {
		return err
	}
	if _, err := st.insertScript.ExecContext(ctx, sum[:], len(script), compression, body); err != nil {
		return fmt.Errorf("insert script: %w", err)
	}
	w.seen[sum] = struct{}{}
	return nil
}

// jsonText stores JSON as TEXT so sqlite3's JSON functions read it; nil is NULL.
func jsonText(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}
