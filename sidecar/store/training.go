package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// TrainingRow is a finished job as training needs it: how it ended, and the
// request and script it was submitted with.
type TrainingRow struct {
	Outcome Outcome
	Request []byte // the submission's request JSON, without the script
	Script  string
}

const trainingSQL = `
SELECT o.job_id, o.token, o.user_id, o.signature, o.gpu_type, o.gpus, o.peak_gpu_mem_mib,
       o.runtime_sec, o.exit_state, o.ended_at_ns, o.source, o.node, o.started_at_ns,
       o.mean_sm_util, o.energy_j, o.oom_suspect, o.finalized, o.received_at_ns,
       coalesce(s.features_json, ''),
       coalesce(s.request_json, ''), c.sha256, c.size_bytes, c.compression, c.body
FROM outcomes o
JOIN submissions s ON s.job_id = o.job_id
JOIN scripts c ON c.sha256 = s.script_sha256
WHERE o.ended_at_ns >= ?
ORDER BY o.ended_at_ns DESC, o.job_id DESC
LIMIT ?`

func trainingRows(ctx context.Context, db *sql.DB, since time.Time, limit int) ([]TrainingRow, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("store: training rows limit %d: %w", limit, ErrInvalid)
	}
	rows, err := db.QueryContext(ctx, trainingSQL, unixNano(since), limit)
	if err != nil {
		return nil, fmt.Errorf("store: training rows: %w", err)
	}
	defer rows.Close()
	var out []TrainingRow
	for rows.Next() {
		var (
			r                        TrainingRow
			ended, started, received int64
			features, request        string
			sum, body                []byte
			size                     int64
			compression              string
		)
		o := &r.Outcome
		if err := rows.Scan(&o.JobID, &o.Token, &o.UserID, &o.Signature, &o.GPUType, &o.GPUs,
			&o.PeakGPUMemMiB, &o.RuntimeSec, &o.ExitState, &ended, &o.Source, &o.Node, &started,
			&o.MeanSMUtil, &o.EnergyJ, &o.OOMSuspect, &o.Finalized, &received, &features,
			&request, &sum, &size, &compression, &body); err != nil {
			return nil, fmt.Errorf("store: training rows: %w", err)
		}
		o.EndedAt, o.StartedAt, o.ReceivedAt = fromUnixNano(ended), fromUnixNano(started), fromUnixNano(received)
		if features != "" {
			o.Features = []byte(features)
		}
		r.Request = []byte(request)
		if r.Script, err = decodeScript(body, compression, size, sum); err != nil {
			return nil, fmt.Errorf("store: training rows: job %d: %w", o.JobID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// TrainingRows returns finished jobs linked to their submission that ended
// at or after since, newest first, at most limit.
func (s *Store) TrainingRows(ctx context.Context, since time.Time, limit int) ([]TrainingRow, error) {
	return trainingRows(ctx, s.db, since, limit)
}

// TrainingRows is Store.TrainingRows on a read-only database.
func (r *Reader) TrainingRows(ctx context.Context, since time.Time, limit int) ([]TrainingRow, error) {
	return trainingRows(ctx, r.db, since, limit)
}
