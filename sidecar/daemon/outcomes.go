package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/sidecar/munge"
	"github.com/augur-hpc/augur/sidecar/outcome"
	"github.com/augur-hpc/augur/sidecar/store"
)

// Verifier checks a MUNGE credential and returns its payload and signer.
type Verifier interface {
	Decode(cred string) ([]byte, munge.Identity, error)
}

// OutcomeStore is what the outcome endpoint needs of the store.
type OutcomeStore interface {
	PutNodeOutcome(ctx context.Context, o store.Outcome) (store.PutResult, error)
	Accuracy(ctx context.Context, jobID uint64) (store.Accuracy, bool, error)
}

// OutcomeServer receives the compute nodes' job reports: one MUNGE-signed
// report per TCP connection, answered with an outcome.Ack. The same
// connections bring the node agents' live periods (outcome.Live), signed
// and checked alike, for the idle-GPU watcher. A report is
// stored only if MUNGE verifies it, it was signed by root or the SlurmUser
// (slurmd runs the node hooks as one of them), it is not a replay, and it
// is well formed; anything else is refused and counted.
type OutcomeServer struct {
	Verifier Verifier
	Store    OutcomeStore
	Allowed  map[uint32]bool
	GPUTypes []string // configured gres types, to name the GPU type of a report
	Metrics  *metrics.Metrics
	Log      *slog.Logger
	Now      func() time.Time
	// Stored is called after each new outcome (to drop cached histories).
	Stored func()
	// Live takes the node agents' live periods (nil: refused as malformed
	// reports, as before they existed).
	Live func(*outcome.Live)

	wg sync.WaitGroup
}

// outcomeDeadline bounds one connection: a report is a few KiB.
const outcomeDeadline = 10 * time.Second

// Serve accepts connections on ln until ctx ends.
func (s *OutcomeServer) Serve(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			s.wg.Wait()
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("outcomes: accept: %w", err)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			c.SetDeadline(s.Now().Add(outcomeDeadline))
			s.serve(ctx, c)
		}()
	}
}

func (s *OutcomeServer) serve(ctx context.Context, c net.Conn) {
	body, err := outcome.ReadFrame(c)
	if err != nil {
		if !errors.Is(err, outcome.ErrMalformed) {
			// A timeout or a cut connection is no verdict on the report:
			// the node keeps it and tries again.
			s.Metrics.Outcomes.WithLabelValues(string(metrics.OutcomeFailed)).Inc()
			s.Log.Debug("job report connection failed", "from", c.RemoteAddr().String(), "err", err)
			outcome.WriteFrame(c, mustJSON(outcome.Ack{Status: outcome.Failed, Error: "incomplete frame"}))
			return
		}
		s.refused(metrics.OutcomeMalformed, c.RemoteAddr(), 0, err)
		outcome.WriteFrame(c, mustJSON(outcome.Ack{Status: outcome.Refused, Error: "malformed frame"}))
		return
	}
	ack := s.handle(ctx, c.RemoteAddr(), string(body))
	outcome.WriteFrame(c, mustJSON(ack))
}

// handle verifies and stores one report.
func (s *OutcomeServer) handle(ctx context.Context, from net.Addr, cred string) outcome.Ack {
	payload, who, err := s.Verifier.Decode(cred)
	switch {
	case errors.Is(err, munge.ErrReplayed):
		s.refused(metrics.OutcomeReplayed, from, 0, err)
		return outcome.Ack{Status: outcome.Refused, Error: "replayed credential"}
	case errors.Is(err, munge.ErrUnavailable):
		// Not the node's fault: let it try again.
		s.Metrics.Outcomes.WithLabelValues(string(metrics.OutcomeFailed)).Inc()
		s.Log.Error("cannot verify a job report: munged unavailable", "err", err)
		return outcome.Ack{Status: outcome.Failed, Error: "augurd cannot reach munged"}
	case err != nil:
		s.refused(metrics.OutcomeUnsigned, from, 0, err)
		return outcome.Ack{Status: outcome.Refused, Error: "not a valid MUNGE credential"}
	}
	if !s.Allowed[who.UID] {
		s.refused(metrics.OutcomeForbidden, from, who.UID, fmt.Errorf("signed by uid %d", who.UID))
		return outcome.Ack{Status: outcome.Refused, Error: "report not signed by root or the SlurmUser"}
	}
	if s.Live != nil && outcome.IsLive(payload) {
		l, err := outcome.DecodeLive(payload)
		if err != nil {
			s.Metrics.LivePeriods.WithLabelValues(string(metrics.OutcomeMalformed)).Inc()
			s.Log.Warn("live period refused", "from", from.String(), "err", err)
			return outcome.Ack{Status: outcome.Refused, Error: "malformed live period"}
		}
		s.Live(l)
		s.Metrics.LivePeriods.WithLabelValues(string(metrics.OutcomeStored)).Inc()
		return outcome.Ack{Status: outcome.Stored}
	}
	r, err := outcome.Decode(payload)
	if err != nil {
		s.refused(metrics.OutcomeMalformed, from, who.UID, err)
		return outcome.Ack{Status: outcome.Refused, Error: "malformed report"}
	}
	now := s.Now()
	put, err := s.Store.PutNodeOutcome(ctx, s.toStore(r, payload, now))
	if err != nil {
		s.Metrics.Outcomes.WithLabelValues(string(metrics.OutcomeFailed)).Inc()
		s.Log.Error("job report not stored; the node will send it again", "job_id", r.JobID, "node", r.Node, "err", err)
		return outcome.Ack{JobID: r.JobID, Status: outcome.Failed, Error: "not stored, try again"}
	}
	switch put {
	case store.PutDuplicate:
		s.Metrics.Outcomes.WithLabelValues(string(metrics.OutcomeDuplicate)).Inc()
		return outcome.Ack{JobID: r.JobID, Status: outcome.Duplicate}
	case store.PutMerged:
		// Another node of a multi-node job: its GPUs join the job's row.
		// The job was counted, and compared with its prediction, with the
		// first node's report.
		s.Metrics.Outcomes.WithLabelValues(string(metrics.OutcomeStored)).Inc()
		if r.OOMSuspect {
			s.Metrics.GPUOOMJobs.Inc() // a report, like the first node's
		}
		if s.Stored != nil {
			s.Stored()
		}
		s.Log.Info("job report of another node merged", "job_id", r.JobID, "node", r.Node, "from", from.String(),
			"peak_gpu_mem_mib", r.PeakMiB(), "gpus", len(r.GPUs), "oom_suspect", r.OOMSuspect)
		return outcome.Ack{JobID: r.JobID, Status: outcome.Stored}
	case store.PutRerun:
		// A later run of a requeued job: its outcome is this run's now, and
		// is counted and compared with its prediction as a job's first.
		s.Log.Info("job report of a later run replaces the earlier run's", "job_id", r.JobID, "node", r.Node)
	}
	s.Metrics.Outcomes.WithLabelValues(string(metrics.OutcomeStored)).Inc()
	s.Metrics.OutcomeLag.Observe(now.Sub(r.End).Seconds())
	if r.OOMSuspect {
		s.Metrics.GPUOOMJobs.Inc()
	}
	// A job already linked to its submission is compared with its
	// prediction now; one not yet linked, when the linker links it.
	if a, ok, err := s.Store.Accuracy(ctx, r.JobID); err == nil && ok {
		observeAccuracy(s.Metrics, a)
	}
	if s.Stored != nil {
		s.Stored()
	}
	s.Log.Info("job report stored", "job_id", r.JobID, "node", r.Node, "from", from.String(), "peak_gpu_mem_mib", r.PeakMiB(),
		"runtime_seconds", r.End.Sub(r.Start).Seconds(), "exit_state", r.ExitState, "oom_suspect", r.OOMSuspect)
	return outcome.Ack{JobID: r.JobID, Status: outcome.Stored}
}

func (s *OutcomeServer) refused(kind metrics.OutcomeResult, from any, uid uint32, err error) {
	s.Metrics.Outcomes.WithLabelValues(string(kind)).Inc()
	s.Log.Warn("job report refused", "reason", string(kind), "from", fmt.Sprint(from), "signer_uid", uid, "err", err)
}

// toStore turns a report into the store's row. The GPU type is the
// configured gres type whose name the GPU's model name contains.
func (s *OutcomeServer) toStore(r *outcome.Report, raw []byte, now time.Time) store.Outcome {
	o := store.Outcome{
		JobID: r.JobID, UserID: r.UserID, GPUs: len(r.GPUs), PeakGPUMemMiB: r.PeakMiB(),
		RuntimeSec: r.End.Sub(r.Start).Seconds(), ExitState: r.ExitState, EndedAt: r.End, Source: "node",
		Node: r.Node, StartedAt: r.Start, MeanSMUtil: r.MeanSMUtil(), EnergyJ: r.EnergyJ(),
		OOMSuspect: r.OOMSuspect, AtCeiling: r.AtCeiling(), Finalized: r.Finalized, ReceivedAt: now, Report: raw,
	}
	if len(r.GPUs) > 0 {
		o.GPUType = gpuType(r.GPUs[0].Name, s.GPUTypes)
	}
	return o
}

// gpuType finds the configured type in an NVML model name: "a100" in
// "NVIDIA A100-SXM4-40GB". The longest match wins (so "a100" beats "a10").
func gpuType(name string, types []string) string {
	lower, best := strings.ToLower(name), ""
	for _, t := range types {
		if strings.Contains(lower, strings.ToLower(t)) && len(t) > len(best) {
			best = t
		}
	}
	return best
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own plain types
	}
	return b
}
