// Package nodestore is augur-node's SQLite database on each compute node:
// the jobs the node agent watches, their GPU samples, and the outbox of
// finished-job reports waiting for augurd's acknowledgement.
//
//	Prolog ─StartJob─> jobs (running)
//	sampler ─AddSamples─> samples (raw, at the sampling interval; memory as read, and its peak since the last round)
//	Downsample: raw older than RawRetention ─> one row per minute (max memory and peak, mean utilisation)
//	Epilog ─EndJob─> jobs (ended) ─Summary─> report ─Enqueue─> outbox ─(sent, acked)─> Delivered
//	Prune: delivered jobs older than Retention go, with their samples
//
// Every write is its own short transaction (WAL, synchronous=NORMAL), so a
// killed agent loses at most the samples of its last round and never a job
// or a report.
package nodestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // the SQLite driver
)

// ErrNotFound is returned for a job the store does not have.
var ErrNotFound = errors.New("nodestore: not found")

var migrations = []string{
	`
CREATE TABLE jobs (
	job_id      INTEGER PRIMARY KEY,
	user_id     INTEGER NOT NULL,
	gpus        TEXT NOT NULL,              -- comma-separated GPU indices (SLURM_JOB_GPUS)
	started_ns  INTEGER NOT NULL,
	ended_ns    INTEGER NOT NULL DEFAULT 0,
	state       TEXT NOT NULL CHECK (state IN ('running', 'ended')),
	exit_state  TEXT NOT NULL DEFAULT '',
	exit_code   INTEGER NOT NULL DEFAULT 0,
	finalized   TEXT NOT NULL DEFAULT ''     -- epilog, recovered
);
CREATE TABLE gpus (
	job_id       INTEGER NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
	gpu          INTEGER NOT NULL,
	uuid         TEXT NOT NULL,
	name         TEXT NOT NULL,
	mem_total_mib REAL NOT NULL,
	attribution  TEXT NOT NULL,
	PRIMARY KEY (job_id, gpu)
) WITHOUT ROWID;
CREATE TABLE samples (
	job_id   INTEGER NOT NULL,
	gpu      INTEGER NOT NULL,
	ts_ns    INTEGER NOT NULL,
	dur_s    REAL NOT NULL,     -- seconds this row stands for: the interval, or 60 once downsampled
	mem_mib  REAL NOT NULL,     -- peak within dur_s
	sm_util  REAL NOT NULL,     -- mean within dur_s, percent
	mem_util REAL NOT NULL,
	power_w  REAL NOT NULL,     -- mean within dur_s
	PRIMARY KEY (job_id, gpu, ts_ns)
) WITHOUT ROWID;
CREATE TABLE outbox (
	job_id       INTEGER PRIMARY KEY,
	report       BLOB NOT NULL,
	created_ns   INTEGER NOT NULL,
	attempts     INTEGER NOT NULL DEFAULT 0,
	next_try_ns  INTEGER NOT NULL DEFAULT 0,
	last_error   TEXT NOT NULL DEFAULT '',
	delivered_ns INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX outbox_due ON outbox (next_try_ns) WHERE delivered_ns = 0;
`,
	// peak_mib: the most the job's processes can have held within dur_s,
	// from NVML accounting's per-process maxima (telemetry.JobSample's
	// PeakMiB); 0 in rows written before it, which mem_mib stands for.
	`ALTER TABLE samples ADD COLUMN peak_mib REAL NOT NULL DEFAULT 0;`,
}

// Store is the node database.
type Store struct {
	db *sql.DB
}

// Open opens or creates the database at path (mode 0600, directory 0700).
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("nodestore: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("nodestore: %w", err)
	}
	f.Close()
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_busy_timeout", "5000")
	q.Set("_foreign_keys", "on")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("nodestore: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	s := &Store{db: db}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("nodestore: %s: %w", path, err)
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this augur-node (%d)", v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(len(migrations))); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Job is a job the node watches.
type Job struct {
	JobID     uint64
	UserID    uint32
	GPUs      []int
	Started   time.Time
	Ended     time.Time
	Running   bool
	ExitState string
	ExitCode  int
	Finalized string
}

func ns(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// FormatGPUs writes GPU indices as Slurm does: "0,1,3".
func FormatGPUs(gpus []int) string {
	parts := make([]string, len(gpus))
	for i, g := range gpus {
		parts[i] = strconv.Itoa(g)
	}
	return strings.Join(parts, ",")
}

// ParseGPUs reads SLURM_JOB_GPUS / CUDA_VISIBLE_DEVICES ("0,1,3"); ranges
// ("0-3") are accepted too. Entries that are not indices (GPU UUIDs) are
// refused.
func ParseGPUs(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(strings.TrimSpace(s), ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > 1<<16 {
			return nil, fmt.Errorf("GPU list %q: %q is not a GPU index", s, f)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b > 1<<16 {
				return nil, fmt.Errorf("GPU list %q: bad range %q", s, f)
			}
		}
		for g := a; g <= b; g++ {
			out = append(out, g)
		}
		if len(out) > 4096 {
			return nil, fmt.Errorf("GPU list %q: too many GPUs", s)
		}
	}
	return out, nil
}

// StartJob records a job the Prolog announced. Announcing it again while
// it runs (a re-run Prolog) is harmless. A Prolog for a job this node saw
// end is a later run of it (Slurm requeued it): the job runs again from
// this start, its earlier run's samples go, and so does its delivered
// report, so that the later run's report is sent in its turn. (A report of
// the earlier run not delivered yet is kept, and is the one sent.)
func (s *Store) StartJob(ctx context.Context, j Job) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("nodestore: start job %d: %w", j.JobID, err)
	}
	defer tx.Rollback()
	var state string
	var endedNs int64
	switch err := tx.QueryRowContext(ctx, `SELECT state, ended_ns FROM jobs WHERE job_id = ?`, int64(j.JobID)).Scan(&state, &endedNs); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO jobs (job_id, user_id, gpus, started_ns, state) VALUES (?, ?, ?, ?, 'running')`,
			int64(j.JobID), j.UserID, FormatGPUs(j.GPUs), ns(j.Started)); err != nil {
			return fmt.Errorf("nodestore: start job %d: %w", j.JobID, err)
		}
	case err != nil:
		return fmt.Errorf("nodestore: start job %d: %w", j.JobID, err)
	case state == "ended" && ns(j.Started) >= endedNs:
		for _, q := range []string{
			`DELETE FROM samples WHERE job_id = ?`,
			`DELETE FROM outbox WHERE job_id = ? AND delivered_ns > 0`,
		} {
			if _, err := tx.ExecContext(ctx, q, int64(j.JobID)); err != nil {
				return fmt.Errorf("nodestore: start job %d again: %w", j.JobID, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `
UPDATE jobs SET user_id = ?, gpus = ?, started_ns = ?, ended_ns = 0, state = 'running', exit_state = '', exit_code = 0,
	finalized = '' WHERE job_id = ?`, j.UserID, FormatGPUs(j.GPUs), ns(j.Started), int64(j.JobID)); err != nil {
			return fmt.Errorf("nodestore: start job %d again: %w", j.JobID, err)
		}
	default:
		return nil // running already: the same run announced again
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("nodestore: start job %d: %w", j.JobID, err)
	}
	return nil
}

// EndJob marks a running job ended. It reports false when the job was not
// running (unknown, or already ended: an Epilog seen twice).
func (s *Store) EndJob(ctx context.Context, jobID uint64, at time.Time, exitState string, exitCode int, finalized string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `
UPDATE jobs SET state = 'ended', ended_ns = ?, exit_state = ?, exit_code = ?, finalized = ?
WHERE job_id = ? AND state = 'running'`, ns(at), exitState, exitCode, finalized, int64(jobID))
	if err != nil {
		return false, fmt.Errorf("nodestore: end job %d: %w", jobID, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

func scanJobs(rows *sql.Rows) ([]Job, error) {
	defer rows.Close()
	var out []Job
	for rows.Next() {
		var (
			j              Job
			gpus, state    string
			started, ended int64
		)
		if err := rows.Scan(&j.JobID, &j.UserID, &gpus, &started, &ended, &state, &j.ExitState, &j.ExitCode, &j.Finalized); err != nil {
			return nil, err
		}
		j.GPUs, _ = ParseGPUs(gpus)
		j.Started, j.Ended, j.Running = fromNS(started), fromNS(ended), state == "running"
		out = append(out, j)
	}
	return out, rows.Err()
}

const jobCols = `job_id, user_id, gpus, started_ns, ended_ns, state, exit_state, exit_code, finalized`

// Running returns the jobs started and not ended.
func (s *Store) Running(ctx context.Context) ([]Job, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE state = 'running' ORDER BY job_id`)
	if err != nil {
		return nil, fmt.Errorf("nodestore: running jobs: %w", err)
	}
	return scanJobs(rows)
}

// Job returns one job.
func (s *Store) Job(ctx context.Context, jobID uint64) (Job, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE job_id = ?`, int64(jobID))
	if err != nil {
		return Job{}, fmt.Errorf("nodestore: job %d: %w", jobID, err)
	}
	jobs, err := scanJobs(rows)
	if err != nil {
		return Job{}, fmt.Errorf("nodestore: job %d: %w", jobID, err)
	}
	if len(jobs) == 0 {
		return Job{}, fmt.Errorf("nodestore: job %d: %w", jobID, ErrNotFound)
	}
	return jobs[0], nil
}

// Unreported returns the ended jobs that have no report in the outbox: a
// hook or agent that died between EndJob and Enqueue leaves one, and the
// agent's recovery pass reports it.
func (s *Store) Unreported(ctx context.Context) ([]Job, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+jobCols+` FROM jobs
WHERE state = 'ended' AND job_id NOT IN (SELECT job_id FROM outbox) ORDER BY job_id`)
	if err != nil {
		return nil, fmt.Errorf("nodestore: unreported jobs: %w", err)
	}
	return scanJobs(rows)
}

// GPUInfo is what the node knows of one of a job's GPUs.
type GPUInfo struct {
	JobID       uint64
	GPU         int
	UUID, Name  string
	MemTotalMiB float64
	Attribution string
}

// Sample is one job's use of one GPU over DurS seconds ending at TS.
type Sample struct {
	JobID  uint64
	GPU    int
	TS     time.Time
	DurS   float64
	MemMiB float64
	// PeakMiB is the most the job can have held within DurS, where NVML
	// accounting saw more than MemMiB (telemetry.JobSample.PeakMiB); 0 or
	// MemMiB where it did not.
	PeakMiB float64
	SMUtil  float64
	MemUtil float64
	PowerW  float64
}

// AddSamples stores one sampling round (and the GPUs' descriptions, the
// first time a job is seen on them) in one transaction.
func (s *Store) AddSamples(ctx context.Context, gpus []GPUInfo, samples []Sample) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("nodestore: samples: %w", err)
	}
	defer tx.Rollback()
	if len(gpus) > 0 {
		st, err := tx.PrepareContext(ctx, `
INSERT INTO gpus (job_id, gpu, uuid, name, mem_total_mib, attribution)
SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM jobs WHERE job_id = ?)
ON CONFLICT (job_id, gpu) DO UPDATE SET attribution = excluded.attribution`)
		if err != nil {
			return fmt.Errorf("nodestore: samples: %w", err)
		}
		defer st.Close()
		for _, g := range gpus {
			if _, err := st.ExecContext(ctx, int64(g.JobID), g.GPU, g.UUID, g.Name, g.MemTotalMiB, g.Attribution, int64(g.JobID)); err != nil {
				return fmt.Errorf("nodestore: gpu %d of job %d: %w", g.GPU, g.JobID, err)
			}
		}
	}
	st, err := tx.PrepareContext(ctx, `
INSERT INTO samples (job_id, gpu, ts_ns, dur_s, mem_mib, sm_util, mem_util, power_w, peak_mib)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
	if err != nil {
		return fmt.Errorf("nodestore: samples: %w", err)
	}
	defer st.Close()
	for _, x := range samples {
		if _, err := st.ExecContext(ctx, int64(x.JobID), x.GPU, ns(x.TS), x.DurS, x.MemMiB, x.SMUtil, x.MemUtil, x.PowerW, x.PeakMiB); err != nil {
			return fmt.Errorf("nodestore: sample: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("nodestore: samples: %w", err)
	}
	return nil
}

// GPUSummary is one GPU's figures over a whole job.
type GPUSummary struct {
	GPUInfo
	// PeakMiB is the most memory the job held (or, from NVML accounting's
	// per-process maxima, can have held) on the GPU at any instant.
	PeakMiB     float64
	MeanSMUtil  float64
	P95SMUtil   float64
	MeanMemUtil float64
	EnergyJ     float64
	Samples     int
	// EndMiB is the most memory the job held on the GPU in its last
	// EndWindow of samples, accounting peaks included: what it held when
	// it ended, the allocation it died of included.
	EndMiB float64
}

// EndWindow is how far back from a GPU's last sample Summary looks for
// GPUSummary.EndMiB: a few sampling intervals, so that a job that failed
// between two samples is still seen at its ceiling.
const EndWindow = 15 * time.Second

// Summary computes a job's per-GPU figures from its samples: peak memory
// (a row's memory or its accounting peak, whichever is more; downsampled
// rows keep the minute's peaks, so it is exact), means weighted
// by the time each row stands for, the 95th percentile of SM utilisation
// over time, and energy as mean power times time.
func (s *Store) Summary(ctx context.Context, jobID uint64) ([]GPUSummary, error) {
	gpus := map[int]*GPUSummary{}
	rows, err := s.db.QueryContext(ctx, `SELECT gpu, uuid, name, mem_total_mib, attribution FROM gpus WHERE job_id = ?`, int64(jobID))
	if err != nil {
		return nil, fmt.Errorf("nodestore: summary of %d: %w", jobID, err)
	}
	for rows.Next() {
		g := &GPUSummary{GPUInfo: GPUInfo{JobID: jobID}}
		if err := rows.Scan(&g.GPU, &g.UUID, &g.Name, &g.MemTotalMiB, &g.Attribution); err != nil {
			rows.Close()
			return nil, err
		}
		gpus[g.GPU] = g
	}
	rows.Close()

	rows, err = s.db.QueryContext(ctx, `
SELECT gpu, dur_s, max(mem_mib, peak_mib), sm_util, mem_util, power_w FROM samples WHERE job_id = ? ORDER BY gpu, ts_ns`, int64(jobID))
	if err != nil {
		return nil, fmt.Errorf("nodestore: summary of %d: %w", jobID, err)
	}
	defer rows.Close()
	type acc struct {
		dur, sm, memu float64
		sms           []weighted
	}
	accs := map[int]*acc{}
	for rows.Next() {
		var gpu int
		var dur, mem, sm, memu, power float64
		if err := rows.Scan(&gpu, &dur, &mem, &sm, &memu, &power); err != nil {
			return nil, err
		}
		g := gpus[gpu]
		if g == nil {
			g = &GPUSummary{GPUInfo: GPUInfo{JobID: jobID, GPU: gpu, Attribution: "device"}}
			gpus[gpu] = g
		}
		a := accs[gpu]
		if a == nil {
			a = &acc{}
			accs[gpu] = a
		}
		g.PeakMiB = math.Max(g.PeakMiB, mem)
		g.EnergyJ += power * dur
		g.Samples++
		a.dur += dur
		a.sm += sm * dur
		a.memu += memu * dur
		a.sms = append(a.sms, weighted{sm, dur})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	ends, err := s.db.QueryContext(ctx, `
SELECT s.gpu, max(max(s.mem_mib, s.peak_mib)) FROM samples s
WHERE s.job_id = ?1 AND s.ts_ns >= (SELECT max(l.ts_ns) FROM samples l WHERE l.job_id = ?1 AND l.gpu = s.gpu) - ?2
GROUP BY s.gpu`, int64(jobID), int64(EndWindow))
	if err != nil {
		return nil, fmt.Errorf("nodestore: summary of %d: %w", jobID, err)
	}
	defer ends.Close()
	for ends.Next() {
		var gpu int
		var mem float64
		if err := ends.Scan(&gpu, &mem); err != nil {
			return nil, err
		}
		if g := gpus[gpu]; g != nil {
			g.EndMiB = mem
		}
	}
	if err := ends.Err(); err != nil {
		return nil, err
	}
	out := make([]GPUSummary, 0, len(gpus))
	for gpu, g := range gpus {
		if a := accs[gpu]; a != nil && a.dur > 0 {
			g.MeanSMUtil, g.MeanMemUtil = a.sm/a.dur, a.memu/a.dur
			g.P95SMUtil = quantile(a.sms, 0.95)
		}
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GPU < out[j].GPU })
	return out, nil
}

type weighted struct{ v, w float64 }

// quantile is the q-quantile of values weighted by the time they stand for.
func quantile(xs []weighted, q float64) float64 {
	sort.Slice(xs, func(i, j int) bool { return xs[i].v < xs[j].v })
	total := 0.0
	for _, x := range xs {
		total += x.w
	}
	run := 0.0
	for _, x := range xs {
		run += x.w
		if run >= q*total {
			return x.v
		}
	}
	return xs[len(xs)-1].v
}

// Downsample folds raw samples older than before into one row per job, GPU
// and minute: the minute's peak memory and accounting peak, mean
// utilisation and power, and the time the rows stood for. It returns how many raw rows it folded.
func (s *Store) Downsample(ctx context.Context, before time.Time) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("nodestore: downsample: %w", err)
	}
	defer tx.Rollback()
	const minute = int64(time.Minute)
	cut := ns(before) / minute * minute // whole minutes only
	if _, err := tx.ExecContext(ctx, `
CREATE TEMP TABLE IF NOT EXISTS folded AS SELECT * FROM samples WHERE 0;
DELETE FROM temp.folded;`); err != nil {
		return 0, fmt.Errorf("nodestore: downsample: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `
INSERT INTO temp.folded (job_id, gpu, ts_ns, dur_s, mem_mib, sm_util, mem_util, power_w, peak_mib)
SELECT job_id, gpu, (ts_ns / ?) * ?, sum(dur_s), max(mem_mib),
       sum(sm_util * dur_s) / sum(dur_s), sum(mem_util * dur_s) / sum(dur_s), sum(power_w * dur_s) / sum(dur_s),
       max(peak_mib)
FROM samples WHERE ts_ns < ? AND dur_s < 60
GROUP BY job_id, gpu, ts_ns / ?`, minute, minute, cut, minute); err != nil {
		return 0, fmt.Errorf("nodestore: downsample: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM samples WHERE ts_ns < ? AND dur_s < 60`, cut)
	if err != nil {
		return 0, fmt.Errorf("nodestore: downsample: %w", err)
	}
	n, _ := res.RowsAffected()
	// A minute already folded earlier (rows that arrived late) merges.
	if _, err := tx.ExecContext(ctx, `
INSERT INTO samples (job_id, gpu, ts_ns, dur_s, mem_mib, sm_util, mem_util, power_w, peak_mib)
SELECT job_id, gpu, ts_ns, dur_s, mem_mib, sm_util, mem_util, power_w, peak_mib FROM temp.folded WHERE true
ON CONFLICT (job_id, gpu, ts_ns) DO UPDATE SET
	mem_mib  = max(mem_mib, excluded.mem_mib),
	peak_mib = max(peak_mib, excluded.peak_mib),
	sm_util  = (sm_util * dur_s + excluded.sm_util * excluded.dur_s) / (dur_s + excluded.dur_s),
	mem_util = (mem_util * dur_s + excluded.mem_util * excluded.dur_s) / (dur_s + excluded.dur_s),
	power_w  = (power_w * dur_s + excluded.power_w * excluded.dur_s) / (dur_s + excluded.dur_s),
	dur_s    = dur_s + excluded.dur_s`); err != nil {
		return 0, fmt.Errorf("nodestore: downsample: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("nodestore: downsample: %w", err)
	}
	return n, nil
}

// Enqueue puts a finished job's report in the outbox (once: a second report
// for the same job is ignored).
func (s *Store) Enqueue(ctx context.Context, jobID uint64, report []byte, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `
INSERT INTO outbox (job_id, report, created_ns, next_try_ns) VALUES (?, ?, ?, ?)
ON CONFLICT (job_id) DO NOTHING`, int64(jobID), report, ns(now), ns(now))
	if err != nil {
		return fmt.Errorf("nodestore: enqueue %d: %w", jobID, err)
	}
	return nil
}

// Pending is a report waiting to be delivered.
type Pending struct {
	JobID    uint64
	Report   []byte
	Created  time.Time
	Attempts int
}

// Due returns up to n undelivered reports whose next attempt is due.
func (s *Store) Due(ctx context.Context, now time.Time, n int) ([]Pending, error) {
	rows, err := s.db.QueryContext(ctx, `
SELECT job_id, report, created_ns, attempts FROM outbox
WHERE delivered_ns = 0 AND next_try_ns <= ? ORDER BY next_try_ns LIMIT ?`, ns(now), n)
	if err != nil {
		return nil, fmt.Errorf("nodestore: due reports: %w", err)
	}
	defer rows.Close()
	var out []Pending
	for rows.Next() {
		var p Pending
		var created int64
		if err := rows.Scan(&p.JobID, &p.Report, &created, &p.Attempts); err != nil {
			return nil, err
		}
		p.Created = fromNS(created)
		out = append(out, p)
	}
	return out, rows.Err()
}

// Delivered marks a report acknowledged.
func (s *Store) Delivered(ctx context.Context, jobID uint64, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE outbox SET delivered_ns = ?, last_error = '' WHERE job_id = ?`, ns(at), int64(jobID))
	if err != nil {
		return fmt.Errorf("nodestore: delivered %d: %w", jobID, err)
	}
	return nil
}

// Retry records a failed attempt and when to try again.
func (s *Store) Retry(ctx context.Context, jobID uint64, next time.Time, cause error) error {
	msg := ""
	if cause != nil {
		msg = cause.Error()
	}
	_, err := s.db.ExecContext(ctx, `
UPDATE outbox SET attempts = attempts + 1, next_try_ns = ?, last_error = ? WHERE job_id = ?`, ns(next), msg, int64(jobID))
	if err != nil {
		return fmt.Errorf("nodestore: retry %d: %w", jobID, err)
	}
	return nil
}

// Undelivered counts reports not yet acknowledged.
func (s *Store) Undelivered(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM outbox WHERE delivered_ns = 0`).Scan(&n)
	return n, err
}

// Prune deletes jobs that ended before cutoff and whose report was
// delivered, with their samples. Nothing undelivered is ever pruned.
func (s *Store) Prune(ctx context.Context, cutoff time.Time) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("nodestore: prune: %w", err)
	}
	defer tx.Rollback()
	const victims = `SELECT j.job_id FROM jobs j JOIN outbox o ON o.job_id = j.job_id
WHERE j.state = 'ended' AND j.ended_ns < ? AND o.delivered_ns <> 0`
	if _, err := tx.ExecContext(ctx, `DELETE FROM samples WHERE job_id IN (`+victims+`)`, ns(cutoff)); err != nil {
		return 0, fmt.Errorf("nodestore: prune: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM outbox WHERE job_id IN (`+victims+`)`, ns(cutoff)); err != nil {
		return 0, fmt.Errorf("nodestore: prune: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM jobs WHERE state = 'ended' AND ended_ns < ? AND job_id NOT IN (SELECT job_id FROM outbox)`, ns(cutoff))
	if err != nil {
		return 0, fmt.Errorf("nodestore: prune: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, tx.Commit()
}

// IntegrityCheck runs SQLite's integrity check.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	var r string
	if err := s.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&r); err != nil {
		return err
	}
	if r != "ok" {
		return fmt.Errorf("nodestore: integrity_check: %s", r)
	}
	return nil
}
