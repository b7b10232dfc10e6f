// Package policy holds Augur's scheduling policies: pure functions from a
// Snapshot of the cluster at one instant to a Plan (an order of the pending
// jobs, the jobs to start with their placement, the jobs to preempt and why).
//
//	augurd:        Slurm state ──Snapshot──> Policy.Schedule ──Plan──> actuator (SiteFactor, gres type, requeue)
//	augur simulate: trace + simulated clock ──Snapshot──> Policy.Schedule ──Plan──> sim (events)
//
// The same code runs in both drivers, so what the simulator reports is what
// augurd does. A Plan is expressible in Slurm's terms: Order becomes
// SiteFactor values, Start is a gres type plus a node list, Preempt is a
// signal and requeue.
//
// Policies hold no clock and do no I/O. Some keep small per-job state between
// calls (Tiresias remembers when a job entered its queue, mlfq-borda which
// queue it was in); a driver keeps one Policy value per cluster and passes
// every Snapshot to it in time order. Losing that state (a restart) only
// changes tie-breaks and where hysteresis starts.
//
// On a cluster of several GPU types with type-aware placement, the
// preempting policies re-place running jobs as well as pending ones at every
// decision (hetero.go): one matching (match.go) of jobs to types by their
// effective throughput, weighted by the policy's ranking; a job that moves
// is preempted and started again on its new type in the same Plan. With
// Params.TypeBlind the same policies place on any type, as if the cluster
// were homogeneous: the baseline type-aware placement is measured against.
//
// All times are seconds on the driver's clock (augurd: Unix seconds; the
// simulator: seconds since the trace began). Service is measured in
// reference seconds: the time a job needs on a GPU type whose Rate is 1. On
// a homogeneous cluster that is plain run time.
package policy
