package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
)

// Reader is a read-only view of augurd's database for the CLI and reports:
// it never writes, migrates or starts a writer, so it can run beside a live
// augurd (WAL lets readers and the writer proceed together).
type Reader struct {
	db *sql.DB
}

// OpenReadOnly opens an existing database for reading.
func OpenReadOnly(ctx context.Context, path string) (*Reader, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("store: %s does not exist: has augurd run with this store.path?", path)
		}
		return nil, fmt.Errorf("store: %w", err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("_busy_timeout", "5000")
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if version > len(migrations) {
		db.Close()
		return nil, fmt.Errorf("store: %s has schema version %d, this augur reads up to %d: %w", path, version, len(migrations), ErrSchemaTooNew)
	}
	return &Reader{db: db}, nil
}

// Close closes the database.
func (r *Reader) Close() error { return r.db.Close() }

// Latest returns the n newest submissions, newest first, without their
// scripts (with their features).
func (r *Reader) Latest(ctx context.Context, n int) ([]Submission, error) {
	rows, err := r.db.QueryContext(ctx, `
SELECT token, received_at_ns, submit_uid, user_id, user_name, account, partition_name, qos,
       job_name, signature, request_json, decision_json, action, pred_mem_mib, pred_mem_hi_mib,
       pred_runtime_sec, pred_runtime_hi_sec, pred_source, decision_us, job_id, coalesce(features_json, '')
FROM submissions ORDER BY received_at_ns DESC LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("store: latest submissions: %w", err)
	}
	defer rows.Close()
	var out []Submission
	for rows.Next() {
		var (
			sub      Submission
			received int64
			jobID    sql.NullInt64
			features string
		)
		if err := rows.Scan(&sub.Token, &received, &sub.SubmitUID, &sub.UserID, &sub.User, &sub.Account,
			&sub.Partition, &sub.QOS, &sub.Name, &sub.Signature, &sub.Request, &sub.Decision,
			&sub.Action, &sub.PredMemMiB, &sub.PredMemHiMiB, &sub.PredRuntimeSec, &sub.PredRuntimeHiSec,
			&sub.PredSource, &sub.DecisionMicros, &jobID, &features); err != nil {
			return nil, fmt.Errorf("store: latest submissions: %w", err)
		}
		sub.ReceivedAt = fromUnixNano(received)
		sub.JobID = uint64(jobID.Int64)
		if features != "" {
			sub.Features = []byte(features)
		}
		out = append(out, sub)
	}
	return out, rows.Err()
}
