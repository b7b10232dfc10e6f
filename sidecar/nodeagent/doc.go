// Package nodeagent is augur-node's logic on a compute node: the Prolog and
// Epilog hooks that slurmd runs, and the long-running agent that samples the
// node's GPUs for every job, finalises jobs whose Epilog never came, and
// delivers finished jobs' reports to augurd.
//
//	slurmd ─Prolog─> Prolog: StartJob ─> node SQLite ─> dcgm job map ─> poke agent
//	agent, every interval: NVML readings + /proc (pid ─> job) ─Attribute─> AddSamples
//	slurmd ─Epilog─> Epilog: Summary ─> exit state ─> EndJob ─> report ─> outbox ─> poke agent
//	agent: outbox ─munge─> TCP "AUO1" frame ─> augurd ─> Ack ─> Delivered | Retry (backoff, cap 5 min)
//	agent, every minute: Downsample, Prune, recover jobs with no processes left, report ended-but-unreported jobs
//
// # Why one agent per node, and not a sampler per job
//
// A per-job sampler started by the Prolog would be simpler to picture but
// is the wrong shape here. NVML's per-process figures are per GPU, not per
// job: under GPU sharing (gres/shard, several jobs on one device) one
// reading of a GPU has to be split between its jobs, which only something
// that sees all the node's jobs at once can do (telemetry.Attribute). One
// long-lived process also holds one NVML handle instead of initialising
// NVML (hundreds of milliseconds on a real driver) per job, costs one
// sampling loop per node however many jobs run, and is the natural owner of
// the outbox, its retries and the crash recovery that a detached per-job
// process, killed with its job or the node, could not provide.
//
// The hooks stay small and independent of the agent: the Prolog only records
// the job in the node's SQLite and pokes the agent, so it takes milliseconds
// and works while the agent is down (the agent finds the job in the store
// when it comes back). The Epilog ends the job, computes its summary from
// the stored samples and puts the report in the outbox itself, so a report
// exists even if the agent never runs again; the agent only sends it. Both
// hooks always exit 0 (a failing Prolog or Epilog drains the node) and log
// why they could not work on stderr, which slurmd logs.
//
// # Nothing lost, nothing counted twice
//
// The node's SQLite is the truth. A job is ended once (EndJob only moves a
// running job), its report is enqueued once (the outbox is keyed by job id),
// a report leaves the outbox only on an acknowledgement that says augurd
// stored it, has it already, or will never take it, and augurd keeps one row
// per job id. Every resend carries a fresh MUNGE credential, so augurd's
// replay check refuses copies of a credential, not honest retries; a retry
// of a report augurd already stored is answered "duplicate". A job whose
// Epilog never came (node reboot, killed slurmd) is found by the agent: it
// is still running in the store but no process on the node belongs to it for
// RecoverAfter; it is then ended with exit state UNKNOWN and finalised
// "recovered". A hook or agent killed between ending a job and enqueueing its
// report leaves an ended job with no report, which the same pass reports.
package nodeagent
