package balance

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/augur-hpc/augur/sidecar/slurm"
)

// JobLister reads Slurm's jobs (slurm.Lib or slurm.CLI).
type JobLister interface {
	Jobs(ctx context.Context) ([]slurm.Job, error)
}

// SlurmOwners answers Owner from one read of all of Slurm's jobs, kept for
// TTL. A job id it does not hold triggers a fresh read, but not more often
// than every MinRefresh, so a stream of made-up ids cannot make augurd
// hammer slurmctld. Only running jobs count: a finished job has nothing to
// rebalance, and a pending one has no ranks yet.
type SlurmOwners struct {
	Slurm      JobLister
	TTL        time.Duration
	MinRefresh time.Duration
	Now        func() time.Time

	mu     sync.Mutex
	owners map[uint64]uint32
	read   time.Time
}

var _ Owners = (*SlurmOwners)(nil)

// Owner returns the uid the running job jobID belongs to, or ErrNoJob.
func (o *SlurmOwners) Owner(ctx context.Context, jobID uint64) (uint32, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.Now()
	uid, ok := o.owners[jobID]
	age := now.Sub(o.read)
	if (ok && age < o.TTL) || (!ok && o.owners != nil && age < o.MinRefresh) {
		if ok {
			return uid, nil
		}
		return 0, fmt.Errorf("%w %d running", ErrNoJob, jobID)
	}
	jobs, err := o.Slurm.Jobs(ctx)
	if err != nil {
		return 0, fmt.Errorf("balance: read Slurm's jobs: %w", err)
	}
	o.owners = make(map[uint64]uint32, len(jobs))
	for _, j := range jobs {
		if j.State == "RUNNING" {
			o.owners[j.ID] = j.UserID
		}
	}
	o.read = now
	if uid, ok := o.owners[jobID]; ok {
		return uid, nil
	}
	return 0, fmt.Errorf("%w %d running", ErrNoJob, jobID)
}
