package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Accuracy is one finished job's prediction beside what it used.
type Accuracy struct {
	JobID                            uint64
	PredSource                       string
	PredMemMiB, PredMemHiMiB         float64
	PredRuntimeSec, PredRuntimeHiSec float64
	PeakGPUMemMiB, RuntimeSec        float64
	ExitState                        string
	OOMSuspect                       bool
}

// Accuracy returns the prediction and outcome of a job, when both are
// stored and linked (false otherwise).
func (s *Store) Accuracy(ctx context.Context, jobID uint64) (Accuracy, bool, error) {
	var a Accuracy
	err := s.db.QueryRowContext(ctx, `
SELECT s.pred_source, s.pred_mem_mib, s.pred_mem_hi_mib, s.pred_runtime_sec, s.pred_runtime_hi_sec,
       o.peak_gpu_mem_mib, o.runtime_sec, o.exit_state, o.oom_suspect
FROM outcomes o JOIN submissions s ON s.job_id = o.job_id
WHERE o.job_id = ?`, int64(jobID)).Scan(&a.PredSource, &a.PredMemMiB, &a.PredMemHiMiB, &a.PredRuntimeSec,
		&a.PredRuntimeHiSec, &a.PeakGPUMemMiB, &a.RuntimeSec, &a.ExitState, &a.OOMSuspect)
	if errors.Is(err, sql.ErrNoRows) {
		return Accuracy{}, false, nil
	}
	if err != nil {
		return Accuracy{}, false, fmt.Errorf("store: accuracy of job %d: %w", jobID, err)
	}
	a.JobID = jobID
	return a, true, nil
}
