package policy

import (
	"fmt"
	"slices"
	"sort"

	"github.com/augur-hpc/augur/predictor"
)

// Policy decides, from a snapshot of the cluster, what should run.
type Policy interface {
	Name() string
	// Schedule returns the plan for s. The Plan's slices belong to the
	// policy and stay valid until the next call.
	Schedule(s *Snapshot) Plan
}

// Oracle is implemented by policies that are given jobs' true service
// (Job.True). A driver fills Job.True for these and for no other policy.
type Oracle interface {
	UsesTrueDurations() bool
}

// GPUType is one kind of GPU in the cluster.
type GPUType struct {
	Name   string
	MemMiB float64
}

// Node is one machine: its GPU type (an index into Snapshot.Types) and GPUs.
type Node struct {
	Name        string
	Type        int
	Total, Free int
}

// Share is part of a placement: GPUs on one node.
type Share struct {
	Node int // index into Snapshot.Nodes
	GPUs int
}

// Placement is where a job runs: one GPU type, one or more nodes.
type Placement struct {
	Type   int
	Shares []Share
}

// Job is a pending or running job as policies see it. Policies must not
// modify it.
type Job struct {
	ID   int64
	GPUs int
	// Kind names the workload (e.g. a Gavel job type); informational.
	Kind   string
	Submit float64
	// Runtime is the predicted service (reference seconds); MemMiB the
	// predicted peak GPU memory per GPU. Zero quantiles mean unknown.
	Runtime     predictor.Quantiles
	MemMiB      predictor.Quantiles
	Predictable bool
	// Estimate is the user's time estimate (Slurm's time limit), used by
	// EASY backfill; 0 means "use Runtime.Hi".
	Estimate float64
	// EstimateMin is Slurm's TimeMin (0: none): backfill may start the job
	// before a reservation with its limit cut to the time left before it,
	// as long as that is at least EstimateMin (Start.Limit).
	EstimateMin float64
	// True is the job's true total service; drivers set it only for
	// policies that implement Oracle, and leave it 0 otherwise.
	True float64
	// Attained is the wall time the job has run so far, over all its runs;
	// Done is the service it has completed (reference seconds).
	Attained, Done float64
	Preemptions    int
	// Requeued is when the job was last preempted (0: never).
	Requeued float64
	// Rate is the job's speed on each GPU type relative to the reference
	// (index = Snapshot.Types); nil means 1 everywhere, 0 means the job
	// cannot run on that type.
	Rate []float64
	// Avoid is a bit set of GPU types the job must not be placed on (e.g.
	// where it ran out of memory before).
	Avoid uint64
	// Running jobs only: when the current run started and where it is.
	Running   bool
	Started   float64
	Placement Placement
}

// RateOn returns the job's speed on GPU type t.
func (j *Job) RateOn(t int) float64 {
	if j.Rate == nil {
		return 1
	}
	if t < 0 || t >= len(j.Rate) {
		return 0
	}
	return j.Rate[t]
}

// BestRate returns the job's highest speed over the types for which ok holds.
func (j *Job) BestRate() float64 {
	if j.Rate == nil {
		return 1
	}
	b := 0.0
	for t, r := range j.Rate {
		if j.Avoid&(1<<uint(t)) == 0 && r > b {
			b = r
		}
	}
	if b == 0 {
		return 1
	}
	return b
}

// Snapshot is the cluster at one instant.
type Snapshot struct {
	Now   float64
	Types []GPUType
	Nodes []Node
	// Pending jobs, oldest submission first (ties by ID).
	Pending []*Job
	Running []*Job
}

// TotalGPUs returns the GPUs of all nodes.
func (s *Snapshot) TotalGPUs() int {
	n := 0
	for _, nd := range s.Nodes {
		n += nd.Total
	}
	return n
}

// FreeGPUs returns the free GPUs of all nodes.
func (s *Snapshot) FreeGPUs() int {
	n := 0
	for _, nd := range s.Nodes {
		n += nd.Free
	}
	return n
}

// Start is a job to start, and where.
type Start struct {
	ID        int64
	Placement Placement
	// Limit, when not 0, is the job's time limit for this run, cut down
	// from Estimate to fit before a reservation (Slurm's TimeMin): the job
	// is killed if it runs longer.
	Limit float64
}

// Reason says why a job is preempted.
type Reason string

// The reasons a plan preempts a job.
const (
	ReasonPriority Reason = "a job of higher priority needs its GPUs"
	ReasonDemoted  Reason = "demoted below waiting jobs by its attained service"
	// ReasonMigrate: the job is requeued and started again at once on
	// another GPU type (Plan.Start lists it too), where it runs faster or
	// where the cluster's work as a whole goes faster.
	ReasonMigrate Reason = "moved to a GPU type where the cluster's work runs faster"
)

// Preemption is a running job to stop and requeue.
type Preemption struct {
	ID     int64
	Reason Reason
}

// Plan is what a policy decides.
type Plan struct {
	// Order ranks every pending job, best first; augurd turns it into
	// SiteFactor values.
	Order []int64
	// Start lists jobs to start now; Preempt lists running jobs to requeue
	// first (their GPUs are free for Start).
	Start   []Start
	Preempt []Preemption
	// Wake is when the policy wants to be asked again even if nothing
	// happens (a guard expires, a job is demoted); 0 means no such time.
	Wake float64
}

// Params are the knobs every policy shares.
type Params struct {
	// RestartCost is the service-free time a preempted job loses when it
	// starts again (seconds); policies weigh it against a preemption's gain.
	RestartCost float64
	// MinRun is how long a job runs before it may be preempted (seconds).
	MinRun float64
	// MaxPreemptions caps how often one job is preempted; 0 means no cap.
	MaxPreemptions int
	// TypeBlind places jobs ignoring GPU types, throughputs and memory (the
	// baseline that heterogeneity-aware placement is compared with).
	TypeBlind bool
	// MigrateGain is how much more a running job must be worth on another
	// GPU type before it is moved there, as a fraction (0.1: 10%); it keeps
	// jobs from bouncing between types on small changes of rank. Moving costs
	// RestartCost too, and is a preemption for MinRun and MaxPreemptions.
	MigrateGain float64
	// Seed makes the type-blind placer's tie-breaks repeatable.
	Seed uint64
}

// DefaultParams are the defaults `augur simulate` and augurd start from.
func DefaultParams() Params {
	return Params{RestartCost: 60, MigrateGain: 0.1, Seed: 1}
}

// preemptible reports whether the guards allow preempting j now.
func (p Params) preemptible(j *Job, now float64) bool {
	if !j.Running {
		return false
	}
	if p.MaxPreemptions > 0 && j.Preemptions >= p.MaxPreemptions {
		return false
	}
	return now-j.Started >= p.MinRun
}

// Constructor builds a policy from the shared parameters.
type Constructor func(Params) Policy

var constructors = map[string]Constructor{}

func register(name string, c Constructor) { constructors[name] = c }

// Names lists the known policies, sorted.
func Names() []string {
	out := make([]string, 0, len(constructors))
	for n := range constructors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ByName builds the named policy.
func ByName(name string, p Params) (Policy, error) {
	c, ok := constructors[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (known: %v)", name, Names())
	}
	return c(p), nil
}

// ranked is a job with the key a policy orders it by (lower first).
type ranked struct {
	j   *Job
	key float64
	// rem is the time the job still needs at its best speed (seconds) when
	// the policy knows it (augur, srtf-oracle); 0 otherwise.
	rem  float64
	want bool
}

func sortRanked(r []ranked) {
	slices.SortFunc(r, func(a, b ranked) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		case a.j.Submit < b.j.Submit:
			return -1
		case a.j.Submit > b.j.Submit:
			return 1
		case a.j.ID < b.j.ID:
			return -1
		case a.j.ID > b.j.ID:
			return 1
		}
		return 0
	})
}
