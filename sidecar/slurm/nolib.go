//go:build !cgo

package slurm

import (
	"context"
	"errors"

	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// Lib needs cgo and libslurm; this build has neither, so every call fails.
type Lib struct {
	Workers  int
	NoDetail bool
}

var errNoLib = errors.New("slurm: augurd was built without cgo, so without libslurm")

// Jobs fails: no libslurm.
func (l *Lib) Jobs(context.Context) ([]Job, error) { return nil, errNoLib }

// Nodes fails: no libslurm.
func (l *Lib) Nodes(context.Context) ([]Node, error) { return nil, errNoLib }

// Reservations fails: no libslurm.
func (l *Lib) Reservations(context.Context) ([]Reservation, error) { return nil, errNoLib }

// DefaultPartition fails: no libslurm.
func (l *Lib) DefaultPartition(context.Context) (string, error) { return "", errNoLib }

// SetSiteFactors fails: no libslurm.
func (l *Lib) SetSiteFactors(_ context.Context, ups []SiteFactor) []error {
	errs := make([]error, len(ups))
	for i := range errs {
		errs[i] = errNoLib
	}
	return errs
}

// Signal fails: no libslurm.
func (l *Lib) Signal(context.Context, uint64, int) error { return errNoLib }

// Requeue fails: no libslurm.
func (l *Lib) Requeue(context.Context, uint64) error { return errNoLib }

// Cancel fails: no libslurm.
func (l *Lib) Cancel(context.Context, uint64) error { return errNoLib }

// SetAdminComment fails: no libslurm.
func (l *Lib) SetAdminComment(context.Context, uint64, string) error { return errNoLib }

// RequeueOnto fails: no libslurm.
func (l *Lib) RequeueOnto(context.Context, uint64, wire.TRES, string) error { return errNoLib }
