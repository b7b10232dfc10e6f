package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/augur-hpc/augur/sidecar/nodestore"
	"github.com/augur-hpc/augur/sidecar/outcome"
)

// OOMFraction: a GPU whose memory stood at this share of its capacity in
// the job's last seconds, in a job that failed, makes the job an OOM
// suspect.
const OOMFraction = outcome.CeilingFraction

// Hooks is what the Prolog and Epilog need; main builds it from the config.
type Hooks struct {
	Store *nodestore.Store
	// Node names this node in reports when the hook's environment has no
	// SLURMD_NODENAME.
	Node string
	// DCGMDir, when set, gets dcgm-exporter's job-mapping files.
	DCGMDir string
	// Poke tells the agent about the job; an error (agent down) is logged
	// and otherwise ignored.
	Poke func(ctx context.Context, m Poke) error
	// Round, when set, asks the agent for a sampling round now and waits
	// for it (AskRound, bounded by RoundWait): the Epilog's job's processes
	// have just exited, and the round stores their NVML accounting peaks,
	// the allocation a job died of included, before the Epilog sums the
	// job up. An error (agent down, old or slow) is logged and the Epilog
	// goes on with the samples stored.
	Round func(ctx context.Context, jobID uint64) error
	Now   func() time.Time
	Log   *slog.Logger
}

// Prolog records the job so that the agent samples its GPUs. A job without
// GPUs is not recorded: there is nothing for Augur to learn from it here.
func (h *Hooks) Prolog(ctx context.Context, env HookEnv) error {
	log := h.Log.With("job_id", env.JobID)
	if len(env.GPUs) == 0 {
		log.Debug("job has no GPUs on this node; not recording it")
		return nil
	}
	err := h.Store.StartJob(ctx, nodestore.Job{JobID: env.JobID, UserID: env.UserID, GPUs: env.GPUs, Started: h.Now()})
	if err != nil {
		return err
	}
	h.mapAndPoke(ctx, log, Poke{Kind: PokeProlog, JobID: env.JobID})
	log.Debug("job recorded", "gpus", nodestore.FormatGPUs(env.GPUs))
	return nil
}

// Epilog has the agent sample the job's last moments (Round), ends the
// job, classifies its exit, and puts its report in the outbox for the agent
// to send. An Epilog for a job this node never
// recorded (no GPUs, or its Prolog failed) or already finalised does nothing.
func (h *Hooks) Epilog(ctx context.Context, env HookEnv) error {
	log := h.Log.With("job_id", env.JobID)
	j, err := h.Store.Job(ctx, env.JobID)
	if errors.Is(err, nodestore.ErrNotFound) {
		if len(env.GPUs) > 0 {
			log.Warn("epilog for a job this node never recorded (its prolog did not run or failed); no report", "gpus", nodestore.FormatGPUs(env.GPUs))
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !j.Running {
		log.Info("job already finalised; epilog ignored", "finalized", j.Finalized, "exit_state", j.ExitState)
		return nil
	}
	if h.Round != nil {
		if err := h.Round(ctx, env.JobID); err != nil {
			log.Info("agent did not sample the job's last moments; summing up the samples stored", "err", err)
		}
	}
	sums, err := h.Store.Summary(ctx, env.JobID)
	if err != nil {
		return err
	}
	state := ExitState(env.Exit, NearCapacity(sums))
	if !env.Exit.Known {
		log.Warn("epilog environment has no SLURM_JOB_EXIT_CODE2 or SLURM_JOB_EXIT_CODE; exit state UNKNOWN")
	}
	node := env.Node
	if node == "" {
		node = h.Node
	}
	now := h.Now()
	ended, err := h.Store.EndJob(ctx, env.JobID, now, state, ExitCode(env.Exit), FinalizedEpilog)
	if err != nil {
		return err
	}
	if !ended { // the agent's recovery got there first, a moment ago
		log.Info("job finalised meanwhile by the agent; epilog ignored")
		return nil
	}
	if err := Report(ctx, h.Store, node, env.JobID, now); err != nil {
		return err // the agent's recovery pass reports it later (Unreported)
	}
	h.mapAndPoke(ctx, log, Poke{Kind: PokeEpilog, JobID: env.JobID})
	log.Debug("job finalised", "exit_state", state)
	return nil
}

func (h *Hooks) mapAndPoke(ctx context.Context, log *slog.Logger, p Poke) {
	if h.DCGMDir != "" {
		if err := WriteJobMap(ctx, h.Store, h.DCGMDir); err != nil {
			log.Warn("dcgm-exporter job map not written", "dir", h.DCGMDir, "err", err)
		}
	}
	if h.Poke != nil {
		if err := h.Poke(ctx, p); err != nil {
			log.Info("agent not reachable; it will find the job in the store when it runs", "err", err)
		}
	}
}

// How a job was finalised (outcome.Report.Finalized).
const (
	FinalizedEpilog    = "epilog"
	FinalizedRecovered = "recovered"
)

// NearCapacity says whether any GPU's memory stood at OOMFraction of its
// capacity when the job ended (in its last nodestore.EndWindow of
// samples, NVML accounting's per-process peaks included). This, in a job
// that failed, is the evidence of a GPU out-of-memory death: a CUDA OOM is
// an exception in the job's own process, which exits with its memory still
// held, and Slurm sees only a failure. The allocation that failed may have
// lasted well under a sampling interval; where accounting is on, the
// peak of that last instant reaches the samples (the Epilog's Round reads
// it as the process exits), and where it is off only a sample that
// happened to fall on it shows it. A job that completes near the ceiling, or that reached it
// earlier and then failed with its memory lower, is not a suspect.
func NearCapacity(sums []nodestore.GPUSummary) bool {
	for _, g := range sums {
		if g.MemTotalMiB > 0 && g.EndMiB >= OOMFraction*g.MemTotalMiB {
			return true
		}
	}
	return false
}

// BuildReport turns an ended job and its per-GPU summary into a report.
func BuildReport(node string, j nodestore.Job, sums []nodestore.GPUSummary) outcome.Report {
	r := outcome.Report{
		V: outcome.Version, Node: node, JobID: j.JobID, UserID: j.UserID,
		Start: j.Started.UTC(), End: j.Ended.UTC(),
		ExitState: j.ExitState, ExitCode: j.ExitCode, Finalized: j.Finalized,
		GPUs: []outcome.GPU{},
	}
	if r.End.Before(r.Start) { // a clock stepped back between prolog and epilog
		r.End = r.Start
	}
	for _, g := range sums {
		att := g.Attribution
		if att != "process" {
			att = "device"
		}
		r.GPUs = append(r.GPUs, outcome.GPU{
			Index: g.GPU, UUID: g.UUID, Name: g.Name, MemTotalMiB: g.MemTotalMiB,
			PeakMiB: g.PeakMiB, MeanSMUtil: g.MeanSMUtil, P95SMUtil: g.P95SMUtil,
			MeanMemUtil: g.MeanMemUtil, EnergyJ: g.EnergyJ, EndMiB: g.EndMiB, Attribution: att,
		})
		r.Samples += g.Samples
	}
	r.OOMSuspect = j.ExitState == StateFailed && NearCapacity(sums)
	return r
}

// Report builds the report of an ended job from the store and enqueues it
// (once: the outbox ignores a second report for a job).
func Report(ctx context.Context, st *nodestore.Store, node string, jobID uint64, now time.Time) error {
	j, err := st.Job(ctx, jobID)
	if err != nil {
		return err
	}
	if j.Running {
		return fmt.Errorf("job %d is still running", jobID)
	}
	sums, err := st.Summary(ctx, jobID)
	if err != nil {
		return err
	}
	r := BuildReport(node, j, sums)
	b, err := outcome.Encode(&r)
	if err != nil {
		return fmt.Errorf("report of job %d: %w", jobID, err)
	}
	return st.Enqueue(ctx, jobID, b, now)
}

// NodeName is this host's short name, which is Slurm's NodeName on most
// clusters.
func NodeName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	h, _, _ = strings.Cut(h, ".")
	return h
}
