// Package sim is Augur's discrete-event cluster simulator. It replays a
// trace against a policy from sidecar/policy, the same code augurd runs: at
// every arrival, completion or requested wake-up it builds a policy.Snapshot,
// calls Schedule, and applies the Plan (preempt, then start) to its model of
// the cluster.
//
//	trace.Job ──FromTrace──> []Job ──Run(Config, policy.Policy)──> Result (JCTs, utilisation, ...)
//	                          ^ predictions: Noise (stated error) or Config.Predictor (history, online)
//
// The simulator is pure: simulated time only, no wall clock, no I/O beyond
// the writers its caller passes in (WriteCDF). Honest inputs: a policy sees
// a job's true duration only if it implements policy.Oracle; other policies
// see predictions, either the true duration with seeded lognormal noise of a
// stated sigma (Noise), or a predictor.Predictor fed only the outcomes of
// jobs that finished before the job's submission (Config.Predictor).
//
// Model: consolidated placement (a job runs on one GPU type, on one node if
// it fits one, else on whole nodes); a preempted job loses RestartCost
// seconds when it starts again, and so does a job a policy moves to another
// GPU type (a preemption and a start in the same Plan, counted in
// Result.Migrations as well as Preemptions); a job placed on a GPU type it
// cannot run on (a Rate of 0: Gavel's out-of-memory entries) fails after
// OOMAfter seconds and is requeued, avoiding that type from then on, as a
// user would after reading the error.
package sim
