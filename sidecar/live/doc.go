// Package live is augurd's live scheduler: every interval it reads Slurm's
// queue and nodes, builds the same policy.Snapshot the simulator builds, asks
// the configured policy for a Plan, turns the Plan into actions (data), and
// applies them through Slurm's own mechanisms.
//
//	Cluster.Jobs, Cluster.Nodes ──> BuildSnapshot (pure) ──> policy.Schedule ──> Decide (pure) ──> []Action
//	                                                                                  │
//	           Cluster.SetSiteFactors / Signal / Requeue <── Loop.apply (actuator) <──┘──> Store.AddActions, metrics, log
//	augur pause|resume|status ──admin socket (SO_PEERCRED: root, SlurmUser)──> Loop.Pause / Resume / Status
//
// Plan.Order becomes SiteFactor values (added unweighted to Slurm's
// multifactor priority), written only where they change: AssignSiteFactors
// keeps the longest run of jobs whose current values already follow the
// order and fits the others into the gaps, so a new job costs one write.
// Plan.Preempt becomes a signal to every step of the victim, then, after
// the grace period, a requeue; only requeueable jobs, never before the
// minimum run time, never past the per-job cap (Slurm's restart count).
// Plan.Start is not applied: Slurm starts jobs in priority order, and the
// GPU type was chosen at submission.
//
// Safety: every pass reads Slurm afresh and acts only on what it just read;
// a failed read (slurmctld down or restarting) skips the pass, and nodes in
// an unknown state suspend preemption. Jobs submitted while augurd was down
// are simply in the next read (without an annotation they are ranked with
// the policy's prior). A pause (stored, so it outlives restarts) stops
// every action; dry-run records the actions without applying them.
package live
