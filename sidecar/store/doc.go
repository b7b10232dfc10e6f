// Package store is augurd's SQLite database, the record of truth: every
// submission augurd was asked about, the decision it took, the Slurm job id
// the submission became, and how each job ended are rows here. Predictions
// are learnt from it (History) and reports are built from it.
//
// # Tables
//
//   - scripts: batch scripts keyed by the sha256 of their content, so a
//     script submitted a thousand times is stored once; bodies over 4 KiB are
//     gzipped.
//   - submissions: one row per submission token, with the request and
//     decision as JSON text, the prediction, and the job id once linked.
//   - outcomes: one row per Slurm job id: GPUs, peak GPU memory, runtime and
//     exit state, indexed on (user_id, signature, ended_at_ns) for History.
//
// The schema is an ordered list of migration steps; PRAGMA user_version
// records how many are applied, and a database from a newer build is refused.
// The database runs in WAL mode with synchronous=NORMAL: readers never block
// the writer, and a commit costs no fsync of the main database.
//
// # Group commit
//
// Record sits on the submission path while slurmctld holds its job lock, and
// a SQLite commit is the expensive part of a write. So all writes (Record,
// LinkJob, AddOutcome) go to one queue, and one writer goroutine commits
// whatever is queued, up to Options.MaxBatch rows, in a single transaction:
// under load a commit carries many rows, and idle a row commits at once. A
// caller waits for the commit holding its row or for its ctx, whichever comes
// first; a caller that stops waiting leaves its row queued, and it is still
// written. Rows are inserted with ON CONFLICT DO NOTHING on their key, so a
// retried submission or re-sent outcome is stored exactly once.
//
// When a commit fails (disk full, a lock held past busy_timeout) the writer
// keeps the rows in memory and retries with capped backoff; Pending says how
// many writes wait. The queue is bounded (Options.MaxQueue): past it writes
// fail at once with ErrQueueFull, and augurd fails open rather than wait.
// One writer also means writes never contend with each other for SQLite's
// single write lock, and going through the queue keeps LinkJob after the
// Record it refers to.
package store
