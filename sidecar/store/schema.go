package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// migrations are the schema, one step per version: migrations[i] takes a
// database from user_version i to i+1. Steps are only ever appended; a step
// that has shipped is never edited.
//
// Times are integer nanoseconds since the Unix epoch (UTC), 0 when unknown.
// Request and decision JSON are stored as TEXT so that sqlite3's JSON
// functions work on them in ad-hoc queries.
var migrations = []string{
	// 1: scripts, submissions, outcomes.
	`
CREATE TABLE scripts (
	sha256      BLOB PRIMARY KEY,  -- of the uncompressed script
	size_bytes  INTEGER NOT NULL,  -- uncompressed length
	compression TEXT NOT NULL CHECK (compression IN ('none', 'gzip')),
	body        BLOB NOT NULL
) WITHOUT ROWID;

CREATE TABLE submissions (
	token               TEXT PRIMARY KEY,
	received_at_ns      INTEGER NOT NULL,
	submit_uid          INTEGER NOT NULL,
	user_id             INTEGER NOT NULL,
	user_name           TEXT NOT NULL,
	account             TEXT NOT NULL,
	partition_name      TEXT NOT NULL,
	qos                 TEXT NOT NULL,
	job_name            TEXT NOT NULL,
	script_sha256       BLOB NOT NULL REFERENCES scripts (sha256),
	signature           TEXT NOT NULL,
	request_json        TEXT,
	decision_json       TEXT,
	action              TEXT NOT NULL CHECK (action IN ('accept', 'reject')),
	pred_mem_mib        REAL NOT NULL,
	pred_mem_hi_mib     REAL NOT NULL,
	pred_runtime_sec    REAL NOT NULL,
	pred_runtime_hi_sec REAL NOT NULL,
	pred_source         TEXT NOT NULL,
	decision_us         INTEGER NOT NULL,
	job_id              INTEGER,           -- NULL until linked
	features_json       TEXT               -- the script's features (predictor.Features)
);
CREATE INDEX submissions_job_id ON submissions (job_id) WHERE job_id IS NOT NULL;
CREATE INDEX submissions_script ON submissions (script_sha256);

CREATE TABLE outcomes (
	job_id            INTEGER PRIMARY KEY,
	token             TEXT NOT NULL,       -- '' until known; no foreign key, the submission may still be queued
	user_id           INTEGER NOT NULL,
	signature         TEXT NOT NULL,       -- '' until the job is linked to its submission
	gpu_type          TEXT NOT NULL,
	gpus              INTEGER NOT NULL,
	peak_gpu_mem_mib  REAL NOT NULL,
	runtime_sec       REAL NOT NULL,
	exit_state        TEXT NOT NULL,
	ended_at_ns       INTEGER NOT NULL,
	source            TEXT NOT NULL,
	node              TEXT NOT NULL DEFAULT '',
	started_at_ns     INTEGER NOT NULL DEFAULT 0,
	mean_sm_util      REAL NOT NULL DEFAULT 0,  -- percent, mean over the job's GPUs
	energy_j          REAL NOT NULL DEFAULT 0,
	oom_suspect       INTEGER NOT NULL DEFAULT 0,
	finalized         TEXT NOT NULL DEFAULT '',  -- epilog, recovered
	received_at_ns    INTEGER NOT NULL DEFAULT 0,
	report_json       TEXT                       -- the node's whole report
);
-- History: newest first for one user and signature. job_id is the rowid, so
-- the index also orders ties by job_id without a sort.
CREATE INDEX outcomes_history ON outcomes (user_id, signature, ended_at_ns);
-- Training reads the newest outcomes.
CREATE INDEX outcomes_ended ON outcomes (ended_at_ns);
`,
	// 2: actions of the live scheduler (SiteFactor writes, signals,
	// requeues, pause and resume), applied or, in dry-run mode, only planned.
	`
CREATE TABLE actions (
	id        INTEGER PRIMARY KEY,
	at_ns     INTEGER NOT NULL,
	job_id    INTEGER NOT NULL,          -- 0 for pause and resume
	kind      TEXT NOT NULL CHECK (kind IN ('site_factor', 'signal', 'requeue', 'pause', 'resume')),
	value     INTEGER NOT NULL DEFAULT 0, -- site_factor: the new SiteFactor; signal: the signal number
	previous  INTEGER,                    -- site_factor: the value it replaced (NULL: unknown)
	reason    TEXT NOT NULL,
	policy    TEXT NOT NULL DEFAULT '',
	dry_run   INTEGER NOT NULL DEFAULT 0, -- 1: planned only, not applied
	error     TEXT NOT NULL DEFAULT ''    -- '' when applied (or dry run); else why it failed
);
CREATE INDEX actions_job ON actions (job_id, at_ns);
CREATE INDEX actions_kind ON actions (kind, at_ns);
`,
	// 3: Slurm's final state of each job, also for jobs that never ran
	// (cancelled while pending) and so have no outcome.
	`
ALTER TABLE submissions ADD COLUMN final_state TEXT NOT NULL DEFAULT '';
`,
	// 4: skew within running jobs (sidecar/balance): each change of a job's
	// slow ranks or of its rebalancing plan.
	`
CREATE TABLE skew (
	id            INTEGER PRIMARY KEY,
	job_id        INTEGER NOT NULL,
	at_ns         INTEGER NOT NULL,
	user_id       INTEGER NOT NULL,
	event         TEXT NOT NULL CHECK (event IN ('plan', 'slow', 'recovered')),
	ranks         INTEGER NOT NULL,
	slow_ranks    TEXT NOT NULL,               -- JSON array of rank numbers
	max_slowdown  REAL NOT NULL,               -- slowest rank's time over the median rank's for the same work
	imbalance     REAL NOT NULL,               -- slowest step time over the mean, minus 1, with the shares in use
	plan_version  INTEGER NOT NULL DEFAULT 0,
	gain          REAL NOT NULL DEFAULT 0,     -- the plan's predicted throughput gain
	plan_json     TEXT,                        -- the plan served (skew.Plan, and the pipeline split if any)
	detail_json   TEXT                         -- the assessment (skew.Assessment)
);
CREATE INDEX skew_job ON skew (job_id, at_ns);
`,
	// 5: the linker's orphan sweep (Store.Unlinked) reads accepted
	// submissions that no job has claimed yet; this index holds only those,
	// so the sweep stays cheap however large the table grows.
	`
CREATE INDEX submissions_unlinked ON submissions (received_at_ns)
	WHERE job_id IS NULL AND final_state = '' AND action = 'accept';
`,
	// 6: facts about the store's contents, such as the version of the
	// signatures its rows were keyed under (see Store.Resign).
	`
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
`,
	// 7: every node's report of a job (a multi-node job sends one from each
	// node); the outcomes row is their union. Reports already stored are
	// each one node's.
	`
CREATE TABLE node_reports (
	job_id         INTEGER NOT NULL,
	node           TEXT    NOT NULL,
	received_at_ns INTEGER NOT NULL,
	report_json    TEXT    NOT NULL,
	PRIMARY KEY (job_id, node)
) WITHOUT ROWID;
INSERT INTO node_reports (job_id, node, received_at_ns, report_json)
	SELECT job_id, node, received_at_ns, report_json FROM outcomes
	WHERE node <> '' AND report_json IS NOT NULL AND report_json <> '';
-- at_ceiling: some GPU of the job held >= 95% of its memory when the job
-- ended (on any node). With Slurm's final state FAILED it makes the job an
-- OOM suspect even when the node that saw it could not tell the job failed.
ALTER TABLE outcomes ADD COLUMN at_ceiling INTEGER NOT NULL DEFAULT 0;
UPDATE outcomes SET at_ceiling = oom_suspect;
-- actions gains the kind oom_requeue (live.oom_recovery); SQLite changes a
-- CHECK only by copying the table.
CREATE TABLE actions_7 (
	id        INTEGER PRIMARY KEY,
	at_ns     INTEGER NOT NULL,
	job_id    INTEGER NOT NULL,
	kind      TEXT NOT NULL CHECK (kind IN ('site_factor', 'signal', 'requeue', 'pause', 'resume', 'oom_requeue')),
	value     INTEGER NOT NULL DEFAULT 0,
	previous  INTEGER,
	reason    TEXT NOT NULL,
	policy    TEXT NOT NULL DEFAULT '',
	dry_run   INTEGER NOT NULL DEFAULT 0,
	error     TEXT NOT NULL DEFAULT ''
);
INSERT INTO actions_7 SELECT id, at_ns, job_id, kind, value, previous, reason, policy, dry_run, error FROM actions;
DROP TABLE actions;
ALTER TABLE actions_7 RENAME TO actions;
CREATE INDEX actions_job ON actions (job_id, at_ns);
CREATE INDEX actions_kind ON actions (kind, at_ns);
`,
	// 8: actions gains the kinds of live.idle_gpu: idle_flag, idle_warn and
	// idle_cancel.
	`
CREATE TABLE actions_8 (
	id        INTEGER PRIMARY KEY,
	at_ns     INTEGER NOT NULL,
	job_id    INTEGER NOT NULL,
	kind      TEXT NOT NULL CHECK (kind IN ('site_factor', 'signal', 'requeue', 'pause', 'resume', 'oom_requeue',
		'idle_flag', 'idle_warn', 'idle_cancel')),
	value     INTEGER NOT NULL DEFAULT 0,
	previous  INTEGER,
	reason    TEXT NOT NULL,
	policy    TEXT NOT NULL DEFAULT '',
	dry_run   INTEGER NOT NULL DEFAULT 0,
	error     TEXT NOT NULL DEFAULT ''
);
INSERT INTO actions_8 SELECT id, at_ns, job_id, kind, value, previous, reason, policy, dry_run, error FROM actions;
DROP TABLE actions;
ALTER TABLE actions_8 RENAME TO actions;
CREATE INDEX actions_job ON actions (job_id, at_ns);
CREATE INDEX actions_kind ON actions (kind, at_ns);
`,
}

// ErrSchemaTooNew means the database was written by a newer build of augurd.
var ErrSchemaTooNew = errors.New("database schema is newer than this build")

// migrate brings the database up to SchemaVersion in one transaction.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see dsn): one migrator at a time
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit

	var have int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if have > len(migrations) {
		return fmt.Errorf("database schema version %d, this build knows up to %d: %w",
			have, len(migrations), ErrSchemaTooNew)
	}
	if have == len(migrations) {
		return nil
	}
	for v := have; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrate schema %d to %d: %w", v, v+1, err)
		}
	}
	// PRAGMA takes no bound parameters; the value is our own integer.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migration: %w", err)
	}
	return nil
}
