// Package nodeagent is augur-node's logic on a compute node: the Prolog and
// Epilog hooks that slurmd runs, and the long-running agent that samples the
// node's GPUs for every job, finalises jobs whose Epilog never came, and
// delivers finished jobs' reports to augurd.
//
//	slurmd ─Prolog─> Prolog: StartJob ─> node SQLite ─> dcgm job map ─> poke agent
//	agent, every interval: NVML readings (+ accounting peaks) + /proc (pid ─> job, remembered) ─Attribute─> AddSamples
//	slurmd ─Epilog─> Epilog: "round" poke ─> agent samples once more, answers (≤ 2 s) ─>
//	                 Summary ─> exit state ─> EndJob ─> report ─> outbox ─> poke agent
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
// # The last instant of a job
//
// A job that dies of a CUDA out-of-memory error dies of an allocation that
// may last well under the sampling interval, and its last sample can sit
// far below the ceiling it hit (an H200 run: PyTorch reserved 142,272 of
// 143,771 MiB, the last sample read 107,740). Where NVML accounting is on
// (telemetry.WithAccounting, node.nvml_accounting), each sample also
// carries the most the job's processes can have held since the previous
// one, from the driver's per-process maxima, which outlive the process.
// slurmd runs the Epilog right after the job's processes exit, before the
// agent's next round would read them, so the Epilog first asks the agent
// for one round now over its socket and waits for the answer, at most
// RoundWait; an agent that is down, older or slow costs only that wait,
// and the Epilog then sums the job up from what is stored, as it always
// did. A process that has exited is no longer in /proc, so the agent
// remembers which job each GPU process belonged to for a few rounds.
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
