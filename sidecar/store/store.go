package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrNotFound means no row has the token asked for.
	ErrNotFound = errors.New("not found")
	// ErrQueueFull means the write queue is at Options.MaxQueue; nothing was
	// queued. Callers fail open.
	ErrQueueFull = errors.New("store write queue full")
	// ErrClosed means Close has been called.
	ErrClosed = errors.New("store closed")
	// ErrInvalid means a row was refused before it was queued; the error says
	// which field is wrong.
	ErrInvalid = errors.New("invalid row")
	// ErrCorrupt is returned by IntegrityCheck when the database fails a check.
	ErrCorrupt = errors.New("database failed integrity check")
)

// Actions a Submission may carry.
const (
	ActionAccept = "accept"
	ActionReject = "reject"
)

// MaxTokenLen is the longest submission token accepted.
const MaxTokenLen = 64

// Submission is one job submission and the decision augurd took on it.
type Submission struct {
	Token      string // primary key: the random hex id the shim gives each submission
	ReceivedAt time.Time
	SubmitUID  uint32 // uid that ran sbatch (root or SlurmUser may submit for others)
	UserID     uint32 // uid the job runs as
	User       string
	Account    string
	Partition  string
	QOS        string
	Name       string
	Script     string // stored once per distinct content, gzipped when over 4 KiB
	Signature  string // normalised script signature, computed by the caller
	Request    []byte // JSON of the request minus the script; opaque here
	Decision   []byte // JSON of the decision; opaque here
	Action     string // ActionAccept or ActionReject

	PredMemMiB       float64 // 0 = unknown
	PredMemHiMiB     float64 // 0 = unknown
	PredRuntimeSec   float64 // 0 = unknown
	PredRuntimeHiSec float64 // 0 = unknown
	PredSource       string

	DecisionMicros int64
	JobID          uint64 // 0 until linked

	// Features is the JSON of the script's features (predictor.Features),
	// which training and history by batch size read back.
	Features []byte
}

// Outcome is how a Slurm job ended. JobID is unique: the first outcome stored
// for a job id is kept and later ones for the same id are ignored, so
// re-sending an outcome is harmless.
type Outcome struct {
	JobID         uint64
	Token         string // submission token if known, "" otherwise
	UserID        uint32
	Signature     string
	GPUType       string
	GPUs          int
	PeakGPUMemMiB float64
	RuntimeSec    float64
	ExitState     string // COMPLETED, FAILED, OUT_OF_MEMORY, TIMEOUT, CANCELLED, NODE_FAIL, ...
	EndedAt       time.Time
	Source        string // "node", "import", ...

	// From a node's report (zero when the outcome came from elsewhere).
	Node       string
	StartedAt  time.Time
	MeanSMUtil float64 // percent
	EnergyJ    float64
	OOMSuspect bool
	// AtCeiling: some GPU held at least 95% of its memory when the job
	// ended (node reports only). With a FAILED final state from Slurm it
	// makes the job an OOM suspect.
	AtCeiling  bool
	Finalized  string // "epilog" or "recovered"
	ReceivedAt time.Time
	Report     []byte // the node's report, JSON; opaque here (History leaves it nil)

	// Features is the JSON of the run's script features, from its
	// submission (History fills it when the job is linked).
	Features []byte
}

// Options tune a Store. The zero value is usable.
type Options struct {
	// Logger receives the writer's warnings; nil means slog.Default().
	Logger *slog.Logger
	// MaxBatch is the most writes committed in one transaction (default 256).
	MaxBatch int
	// BatchDelay is how long the writer lets rows queued with Queue (which
	// nobody waits for) gather before committing them (default 10ms,
	// negative: none).
	BatchDelay time.Duration
	// MaxQueue is the most writes waiting for the writer; past it writes fail
	// with ErrQueueFull (default 100,000).
	MaxQueue int
	// BusyTimeout is SQLite's busy_timeout: how long a statement waits on a
	// lock another connection or process holds (default 5s).
	BusyTimeout time.Duration
	// RetryMin and RetryMax bound the writer's backoff after a failed commit
	// (defaults 50ms and 2s).
	RetryMin, RetryMax time.Duration
	// CloseTimeout is how long Close waits for queued writes to commit
	// (default 10s). Close can take up to BusyTimeout longer, since SQLite's
	// busy wait cannot be interrupted.
	CloseTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.MaxQueue <= 0 {
		o.MaxQueue = 100_000
	}
	if o.BatchDelay == 0 {
		o.BatchDelay = 10 * time.Millisecond
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.RetryMin <= 0 {
		o.RetryMin = 50 * time.Millisecond
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(2*time.Second, o.RetryMin)
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = 10 * time.Second
	}
	return o
}

// Store is augurd's SQLite database. Its methods are safe for concurrent use.
type Store struct {
	db   *sql.DB
	log  *slog.Logger
	opts Options

	// Read statements, prepared once on db.
	historyStmt, submissionStmt, countStmt, unlinkedStmt *sql.Stmt
	// Write statements, prepared once on db and bound to each transaction.
	writes writeStmts

	mu       sync.Mutex
	queue    []op // queue[head:] waits for the writer
	head     int
	inflight int  // writes the writer has taken and not yet finished
	closed   bool // Close has been called
	lost     int  // writes abandoned when Close gave up; set before done closes

	wake      chan struct{} // capacity 1: the queue may have grown
	closing   chan struct{} // closed by Close
	writeCtx  context.Context
	stopWrite context.CancelFunc // ends the writer's retries when Close gives up
	done      chan struct{}      // closed when the writer has returned
}

// Open opens the database at path, creating it (mode 0640) and its directory
// (0750) if missing, migrates the schema, and starts the writer. ctx bounds
// opening and migrating only.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}

	db, err := sql.Open("sqlite3", dsn(path, opts.BusyTimeout))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// The writer takes one connection; the rest serve readers, which WAL lets
	// run beside it. Idle connections are kept so their prepared statements are.
	conns := max(4, runtime.GOMAXPROCS(0)+2)
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)

	s, err := open(ctx, db, opts)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	go s.run()
	return s, nil
}

// dsn is the go-sqlite3 data source name; the parameters apply to every
// connection in the pool. _txlock=immediate makes BEGIN take the write lock
// at once, so a transaction never fails midway upgrading a read lock.
func dsn(path string, busy time.Duration) string {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_busy_timeout", fmt.Sprint(busy.Milliseconds()))
	q.Set("_foreign_keys", "on")
	q.Set("_txlock", "immediate")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

func open(ctx context.Context, db *sql.DB, opts Options) (*Store, error) {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return nil, err
	}
	if !strings.EqualFold(mode, "wal") {
		return nil, fmt.Errorf("journal_mode is %q, want wal", mode)
	}
	if err := migrate(ctx, db); err != nil {
		return nil, err
	}
	s := &Store{
		db:      db,
		log:     opts.Logger,
		opts:    opts,
		wake:    make(chan struct{}, 1),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
	}
	stmts := []struct {
		p     **sql.Stmt
		query string
	}{
		{&s.historyStmt, historySQL},
		{&s.submissionStmt, submissionSQL},
		{&s.countStmt, `SELECT count(*) FROM submissions`},
		{&s.writes.scriptExists, scriptExistsSQL},
		{&s.writes.insertScript, insertScriptSQL},
		{&s.writes.insertSubmission, insertSubmissionSQL},
		{&s.writes.linkJob, linkJobSQL},
		{&s.writes.insertOutcome, insertOutcomeSQL},
		{&s.writes.linkOutcome, linkOutcomeSQL},
		{&s.writes.fillOutcome, fillOutcomeSQL},
		{&s.writes.exitState, exitStateSQL},
		{&s.writes.finalState, finalStateSQL},
		{&s.writes.orphan, orphanSQL},
		{&s.writes.insertNodeReport, insertNodeReportSQL},
		{&s.writes.mergeOutcome, mergeOutcomeSQL},
		{&s.writes.reportEnds, reportEndsSQL},
		{&s.writes.dropReports, dropReportsSQL},
		{&s.writes.resetOutcome, resetOutcomeSQL},
		{&s.unlinkedStmt, unlinkedSQL},
	}
	for _, st := range stmts {
		p, err := db.PrepareContext(ctx, st.query)
		if err != nil {
			s.closeStmts()
			return nil, fmt.Errorf("prepare %q: %w", firstLine(st.query), err)
		}
		*st.p = p
	}
	s.writeCtx, s.stopWrite = context.WithCancel(context.Background())
	return s, nil
}

func firstLine(q string) string {
	q = strings.TrimSpace(q)
	if i := strings.IndexByte(q, '\n'); i >= 0 {
		return q[:i]
	}
	return q
}

func (s *Store) closeStmts() error {
	var errs []error
	for _, st := range []*sql.Stmt{
		s.historyStmt, s.submissionStmt, s.countStmt,
		s.writes.scriptExists, s.writes.insertScript, s.writes.insertSubmission,
		s.writes.linkJob, s.writes.insertOutcome, s.writes.linkOutcome, s.writes.fillOutcome, s.writes.exitState,
		s.writes.finalState, s.writes.orphan, s.unlinkedStmt, s.writes.insertNodeReport, s.writes.mergeOutcome,
		s.writes.reportEnds, s.writes.dropReports, s.writes.resetOutcome,
	} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// Close stops taking writes, waits up to Options.CloseTimeout for everything
// queued to commit, and closes the database. If queued writes could not be
// committed in time they are lost and Close says how many.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	close(s.closing)

	var errs []error
	t := time.NewTimer(s.opts.CloseTimeout)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
		s.stopWrite()
		<-s.done
	}
	s.stopWrite()
	if s.lost > 0 {
		errs = append(errs, fmt.Errorf("store: close: %d queued writes not committed within %s", s.lost, s.opts.CloseTimeout))
	}
	errs = append(errs, s.closeStmts(), s.db.Close())
	return errors.Join(errs...)
}

// Record stores a submission. It returns once the transaction holding the
// row has committed. If ctx ends first, Record returns ctx's error wrapped,
// but the row stays queued and will still be written. Recording a token that
// is already stored is a no-op: the first row kept wins.
func (s *Store) Record(ctx context.Context, sub Submission) error {
	if err := validSubmission(&sub); err != nil {
		return fmt.Errorf("store: record %q: %w", sub.Token, err)
	}
	o := op{kind: opSubmit, sub: &sub, sum: sha256.Sum256([]byte(sub.Script))}
	if err := s.enqueue(ctx, o); err != nil {
		return fmt.Errorf("store: record %s: %w", sub.Token, err)
	}
	return nil
}

// SetFinal records the job's end as slurmctld reports it: its final state
// on its submission (so jobs that never ran have one) and over whatever the
// node reported on its outcome, and Slurm's start and end times (where not
// zero) over the node's, so that reports agree with sacct. The node's
// measured runtime, what predictions learn from, stays. It says whether an
// outcome row changed; false also when no outcome for the job is stored
// yet.
func (s *Store) SetFinal(ctx context.Context, jobID uint64, state string, start, end time.Time) (bool, error) {
	if jobID == 0 || jobID > math.MaxInt64 || state == "" || len(state) > 32 {
		return false, fmt.Errorf("store: exit state %q of job %d: %w", state, jobID, ErrInvalid)
	}
	var changed bool
	o := op{kind: opExitState, jobID: int64(jobID), token: state, added: &changed,
		start: unixNano(start), end: unixNano(end)}
	if err := s.enqueue(ctx, o); err != nil {
		return false, fmt.Errorf("store: exit state of job %d: %w", jobID, err)
	}
	return changed, nil
}

// Queue is Record without the wait: it returns once the row is queued, and
// the writer commits it with its next batch (within milliseconds), retrying
// through failures like any other row. It fails at once only when the store
// is closed or its queue is full.
func (s *Store) Queue(sub Submission) error {
	if err := validSubmission(&sub); err != nil {
		return fmt.Errorf("store: record %q: %w", sub.Token, err)
	}
	o := op{kind: opSubmit, sub: &sub, sum: sha256.Sum256([]byte(sub.Script)), token: sub.Token,
		detached: true, done: make(chan error, 1)}
	if err := s.push(o); err != nil {
		return fmt.Errorf("store: record %s: %w", sub.Token, err)
	}
	return nil
}

// LinkJob sets the Slurm job id of the submission with token. It goes through
// the same queue as Record, so it may follow a Record whose row is not yet
// committed. It returns an error wrapping ErrNotFound if no submission has the
// token, and, like Record, ctx's error if ctx ends first.
func (s *Store) LinkJob(ctx context.Context, token string, jobID uint64) error {
	if err := validToken(token); err != nil {
		return fmt.Errorf("store: link %q: %w", token, err)
	}
	if jobID == 0 || jobID > math.MaxInt64 {
		return fmt.Errorf("store: link %s: job id %d: %w", token, jobID, ErrInvalid)
	}
	if err := s.enqueue(ctx, op{kind: opLink, token: token, jobID: int64(jobID)}); err != nil {
		return fmt.Errorf("store: link %s to job %d: %w", token, jobID, err)
	}
	return nil
}

// AddOutcome stores how a job ended. An outcome for a job id already stored
// is ignored (the first one is kept), so re-sending is harmless. Like Record
// it waits for the commit or ctx.
func (s *Store) AddOutcome(ctx context.Context, o Outcome) error {
	_, err := s.PutOutcome(ctx, o)
	return err
}

// PutOutcome is AddOutcome that also says whether the outcome was new or
// added a node's report (false: nothing new was stored). An outcome whose
// job is already linked to a submission takes that submission's token and
// signature; one that arrives first gets them when LinkJob comes.
func (s *Store) PutOutcome(ctx context.Context, o Outcome) (bool, error) {
	put, err := s.PutNodeOutcome(ctx, o)
	return put != PutDuplicate, err
}

// PutResult is what became of an outcome given to PutNodeOutcome.
type PutResult int

const (
	// PutDuplicate: nothing new (the job's outcome, or this node's report
	// of it, was already stored).
	PutDuplicate PutResult = iota
	// PutNew: the job's first outcome.
	PutNew
	// PutMerged: another node's report of a job already stored, folded
	// into its row (see mergeOutcomeSQL) and kept in node_reports.
	PutMerged
	// PutRerun: the report of a later run of a job Slurm requeued (it
	// started after every stored report of the job had ended): the job's
	// row and node reports are this run's now, as its first report's were
	// the earlier run's. A job's outcome is its last run's.
	PutRerun
)

// PutNodeOutcome is PutOutcome that tells a job's first outcome from
// another node's report of it. A report from a node (Node and Report set)
// is kept per job and node; the job's row is the union of its nodes'.
func (s *Store) PutNodeOutcome(ctx context.Context, o Outcome) (PutResult, error) {
	if o.JobID == 0 || o.JobID > math.MaxInt64 {
		return PutDuplicate, fmt.Errorf("store: outcome: job id %d: %w", o.JobID, ErrInvalid)
	}
	if o.Token != "" {
		if err := validToken(o.Token); err != nil {
			return PutDuplicate, fmt.Errorf("store: outcome of job %d: %w", o.JobID, err)
		}
	}
	var put PutResult
	if err := s.enqueue(ctx, op{kind: opOutcome, out: &o, put: &put}); err != nil {
		return PutDuplicate, fmt.Errorf("store: outcome of job %d: %w", o.JobID, err)
	}
	return put, nil
}

func validToken(t string) error {
	if t == "" || len(t) > MaxTokenLen {
		return fmt.Errorf("token is %d bytes, want 1 to %d: %w", len(t), MaxTokenLen, ErrInvalid)
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return fmt.Errorf("token has non-hex byte %q: %w", c, ErrInvalid)
		}
	}
	return nil
}

func validSubmission(sub *Submission) error {
	if err := validToken(sub.Token); err != nil {
		return err
	}
	if sub.Action != ActionAccept && sub.Action != ActionReject {
		return fmt.Errorf("action %q, want %q or %q: %w", sub.Action, ActionAccept, ActionReject, ErrInvalid)
	}
	if sub.JobID > math.MaxInt64 {
		return fmt.Errorf("job id %d: %w", sub.JobID, ErrInvalid)
	}
	return nil
}

// Pending is the number of writes queued or being committed.
func (s *Store) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingLocked()
}

func (s *Store) pendingLocked() int { return len(s.queue) - s.head + s.inflight }

const historySQL = `
SELECT o.job_id, o.token, o.user_id, o.signature, o.gpu_type, o.gpus, o.peak_gpu_mem_mib,
       o.runtime_sec, o.exit_state, o.ended_at_ns, o.source, o.node, o.started_at_ns,
       o.mean_sm_util, o.energy_j, o.oom_suspect, o.finalized, o.received_at_ns,
       coalesce(s.features_json, '')
FROM outcomes o LEFT JOIN submissions s ON s.job_id = o.job_id
WHERE o.user_id = ? AND o.signature = ?
ORDER BY o.ended_at_ns DESC, o.job_id DESC
LIMIT ?`

// scanOutcome reads the columns historySQL selects.
func scanOutcome(rows interface{ Scan(...any) error }) (Outcome, error) {
	var (
		o                        Outcome
		ended, started, received int64
		features                 string
	)
	err := rows.Scan(&o.JobID, &o.Token, &o.UserID, &o.Signature, &o.GPUType, &o.GPUs,
		&o.PeakGPUMemMiB, &o.RuntimeSec, &o.ExitState, &ended, &o.Source, &o.Node, &started,
		&o.MeanSMUtil, &o.EnergyJ, &o.OOMSuspect, &o.Finalized, &received, &features)
	o.EndedAt, o.StartedAt, o.ReceivedAt = fromUnixNano(ended), fromUnixNano(started), fromUnixNano(received)
	if features != "" {
		o.Features = []byte(features)
	}
	return o, err
}

// History returns up to limit outcomes of jobs by userID with signature,
// newest first (by EndedAt, then job id). limit must be positive.
func (s *Store) History(ctx context.Context, userID uint32, signature string, limit int) ([]Outcome, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("store: history limit %d: %w", limit, ErrInvalid)
	}
	rows, err := s.historyStmt.QueryContext(ctx, userID, signature, limit)
	if err != nil {
		return nil, fmt.Errorf("store: history: %w", err)
	}
	defer rows.Close()
	var out []Outcome
	for rows.Next() {
		o, err := scanOutcome(rows)
		if err != nil {
			return nil, fmt.Errorf("store: history: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: history: %w", err)
	}
	return out, nil
}

const submissionSQL = `
SELECT s.token, s.received_at_ns, s.submit_uid, s.user_id, s.user_name, s.account,
       s.partition_name, s.qos, s.job_name, s.signature, s.request_json, s.decision_json,
       s.action, s.pred_mem_mib, s.pred_mem_hi_mib, s.pred_runtime_sec, s.pred_runtime_hi_sec,
       s.pred_source, s.decision_us, s.job_id, coalesce(s.features_json, ''),
       c.sha256, c.size_bytes, c.compression, c.body
FROM submissions s JOIN scripts c ON c.sha256 = s.script_sha256
WHERE s.token = ?`

// Submission returns the stored submission with token, or an error wrapping
// ErrNotFound. Only committed rows are seen.
func (s *Store) Submission(ctx context.Context, token string) (Submission, error) {
	var (
		sub         Submission
		received    int64
		jobID       sql.NullInt64
		sum, body   []byte
		size        int64
		compression string
		features    string
	)
	err := s.submissionStmt.QueryRowContext(ctx, token).Scan(
		&sub.Token, &received, &sub.SubmitUID, &sub.UserID, &sub.User, &sub.Account,
		&sub.Partition, &sub.QOS, &sub.Name, &sub.Signature, &sub.Request, &sub.Decision,
		&sub.Action, &sub.PredMemMiB, &sub.PredMemHiMiB, &sub.PredRuntimeSec, &sub.PredRuntimeHiSec,
		&sub.PredSource, &sub.DecisionMicros, &jobID, &features,
		&sum, &size, &compression, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return Submission{}, fmt.Errorf("store: submission %s: %w", token, ErrNotFound)
	}
	if err != nil {
		return Submission{}, fmt.Errorf("store: submission %s: %w", token, err)
	}
	sub.ReceivedAt = fromUnixNano(received)
	sub.JobID = uint64(jobID.Int64)
	if features != "" {
		sub.Features = []byte(features)
	}
	if sub.Script, err = decodeScript(body, compression, size, sum); err != nil {
		return Submission{}, fmt.Errorf("store: submission %s: %w", token, err)
	}
	return sub, nil
}

// CountSubmissions is the number of committed submissions.
func (s *Store) CountSubmissions(ctx context.Context) (int64, error) {
	var n int64
	if err := s.countStmt.QueryRowContext(ctx).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count submissions: %w", err)
	}
	return n, nil
}

// IntegrityCheck runs SQLite's integrity_check and foreign_key_check and
// checks the schema version. A failed check wraps ErrCorrupt. It reads the
// whole database, so it is for start-up and operators, not the hot path.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	problems, err := s.queryStrings(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("store: integrity check: %w", err)
	}
	if len(problems) != 1 || problems[0] != "ok" {
		if len(problems) > 10 {
			problems = append(problems[:10], fmt.Sprintf("and %d more", len(problems)-10))
		}
		return fmt.Errorf("store: integrity_check: %s: %w", strings.Join(problems, "; "), ErrCorrupt)
	}
	var orphans int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM pragma_foreign_key_check").Scan(&orphans); err != nil {
		return fmt.Errorf("store: foreign key check: %w", err)
	}
	if orphans > 0 {
		return fmt.Errorf("store: foreign_key_check: %d rows reference missing rows: %w", orphans, ErrCorrupt)
	}
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("store: schema version: %w", err)
	}
	if version != len(migrations) {
		return fmt.Errorf("store: schema version %d, want %d: %w", version, len(migrations), ErrCorrupt)
	}
	return nil
}

func (s *Store) queryStrings(ctx context.Context, query string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// unixNano stores a time; the zero time is stored as 0.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
