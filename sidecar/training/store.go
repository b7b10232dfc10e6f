package training

import (
	"context"
	"encoding/json"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// StoreRows is what augurd's store (and its read-only Reader) offers.
type StoreRows interface {
	TrainingRows(ctx context.Context, since time.Time, limit int) ([]store.TrainingRow, error)
}

// FromStore adapts the store to a Source.
func FromStore(st StoreRows) Source { return storeSource{st} }

type storeSource struct{ st StoreRows }

func (s storeSource) TrainingRows(ctx context.Context, since time.Time, limit int) ([]Row, error) {
	rows, err := s.st.TrainingRows(ctx, since, limit)
	if err != nil {
		return nil, err
	}
	return Rows(rows), nil
}

// Rows turns stored rows into training rows. A row whose request does not
// decode is skipped: it cannot be featurised as serving would.
func Rows(rows []store.TrainingRow) []Row {
	out := make([]Row, 0, len(rows))
	for _, r := range rows {
		var req wire.Request
		if err := json.Unmarshal(r.Request, &req); err != nil {
			continue
		}
		req.Script = r.Script
		o := r.Outcome
		po := predictor.Outcome{JobID: o.JobID, PeakGPUMemMiB: o.PeakGPUMemMiB, RuntimeSec: o.RuntimeSec,
			ExitState: o.ExitState, GPUType: o.GPUType, EndedAt: o.EndedAt}
		if len(o.Features) > 0 {
			_ = json.Unmarshal(o.Features, &po.Features)
		}
		out = append(out, Row{Request: req, Outcome: po})
	}
	return out
}
