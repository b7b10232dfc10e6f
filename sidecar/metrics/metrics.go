// Package metrics defines every Prometheus metric augurd exports, in this one
// file, under the augur_ namespace and in base units. Per-job data (job ids,
// users) never becomes a label: it lives in the store.
//
//	shim stats ─┐
//	decisions ──┼─> *Metrics ─> prometheus.Registry ─> GET /metrics
//	store ──────┘
package metrics

import (
	"net/http"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const namespace = "augur"

// Label values are typed so that a typo cannot invent a series.
type (
	// Action is a decision's action: accept or reject.
	Action string
	// RefuseReason says why a shim connection was refused.
	RefuseReason string
	// StoreOp names a store operation.
	StoreOp string
	// OutcomeResult says what became of a node's job report.
	OutcomeResult string
	// LivePassResult says how a live scheduling pass ended.
	LivePassResult string
	// LiveActionKind is what a live action does.
	LiveActionKind string
	// LiveActionResult says what became of a live action.
	LiveActionResult string
	// JobFileResult says what became of a config file a script names
	// (predictor.job_files).
	JobFileResult string
)

// The label values in use.
const (
	ActionAccept Action = "accept"
	ActionReject Action = "reject"

	RefusePeer   RefuseReason = "peer"   // caller not root or SlurmUser
	RefuseDecode RefuseReason = "decode" // garbage on the socket
	RefusePanic  RefuseReason = "panic"  // the decision panicked; answered fail-open

	JobFileRead    JobFileResult = "read"    // read and used
	JobFileAbsent  JobFileResult = "absent"  // no such file, or no directory to find it in
	JobFileRefused JobFileResult = "refused" // not a regular file the job's user owns, or too large
	JobFileLate    JobFileResult = "late"    // not read within the budget
	JobFileBusy    JobFileResult = "busy"    // too many reads already waiting (a hung file system)
	JobFileFailed  JobFileResult = "failed"  // the read failed
	// JobFileUnparsed: a shell file the script sources that does not
	// parse, not kept (it reads as a file not seen).
	JobFileUnparsed JobFileResult = "unparsed"

	StoreRecord  StoreOp = "record"
	StoreHistory StoreOp = "history"
	StoreActions StoreOp = "actions"

	OutcomeStored    OutcomeResult = "stored"
	OutcomeDuplicate OutcomeResult = "duplicate"
	OutcomeUnsigned  OutcomeResult = "unsigned"  // not a valid MUNGE credential
	OutcomeReplayed  OutcomeResult = "replayed"  // a credential seen before
	OutcomeForbidden OutcomeResult = "forbidden" // signed by a user other than root or SlurmUser
	OutcomeMalformed OutcomeResult = "malformed"
	OutcomeFailed    OutcomeResult = "failed" // augurd could not store it (the node retries)

	LivePassOK          LivePassResult = "ok"
	LivePassPaused      LivePassResult = "paused"      // read and decided, nothing applied
	LivePassUnavailable LivePassResult = "unavailable" // slurmctld did not answer; nothing done
	LivePassError       LivePassResult = "error"

	LiveSiteFactor LiveActionKind = "site_factor"
	LiveSignal     LiveActionKind = "signal"
	LiveRequeue    LiveActionKind = "requeue"
	LiveOOMRequeue LiveActionKind = "oom_requeue" // live.oom_recovery
	LiveIdleFlag   LiveActionKind = "idle_flag"   // live.idle_gpu: flagged without a warning
	LiveIdleWarn   LiveActionKind = "idle_warn"   // flagged with a warning of cancel
	LiveIdleCancel LiveActionKind = "idle_cancel"

	LiveApplied LiveActionResult = "applied"
	LiveDryRun  LiveActionResult = "dry_run"
	LiveFailed  LiveActionResult = "failed"
)

// Metrics holds augurd's collectors.
type Metrics struct {
	Registry *prometheus.Registry

	Decisions        *prometheus.CounterVec
	DecisionDuration prometheus.Histogram
	Predictions      *prometheus.CounterVec
	GPURewrites      prometheus.Counter
	// ReusedDecisions counts submissions the shim answered from an earlier
	// decision (shim.reuse_window), by whether augurd could record them
	// ("recorded") or left them to the linker ("unknown": the decision
	// they reused was not found).
	ReusedDecisions *prometheus.CounterVec
	SiteFactors     prometheus.Counter
	Refused         *prometheus.CounterVec
	ShimFailOpen    prometheus.Counter
	ShimSkipped     prometheus.Counter
	ShimRoundTrip   prometheus.Histogram
	StoreErrors     *prometheus.CounterVec
	StoreCommitWait prometheus.Histogram
	Outcomes        *prometheus.CounterVec
	OutcomeLag      prometheus.Histogram
	PredictionError *prometheus.HistogramVec
	PredictionOver  *prometheus.CounterVec
	GPUOOMJobs      prometheus.Counter
	QueueJobs       *prometheus.GaugeVec
	BalanceRequests *prometheus.CounterVec
	BalanceJobs     *prometheus.GaugeVec
	BalanceSlowdown prometheus.Histogram
	BalancePlans    prometheus.Counter
	BalanceGain     prometheus.Histogram

	LivePasses       *prometheus.CounterVec
	LivePassDuration prometheus.Histogram
	LiveActions      *prometheus.CounterVec
	LivePending      prometheus.Gauge
	LivePaused       prometheus.Gauge

	// IdleJobs and IdleGPUs are the running jobs flagged idle now
	// (live.idle_gpu) and their GPUs; LivePeriods counts the node agents'
	// live periods received.
	IdleJobs    prometheus.Gauge
	IdleGPUs    prometheus.Gauge
	LivePeriods *prometheus.CounterVec

	// OrphanedSubmissions counts records the linker marked ORPHANED.
	OrphanedSubmissions prometheus.Counter

	// JobFiles counts the config files scripts name that augurd went to
	// read (predictor.job_files), by what became of each.
	JobFiles *prometheus.CounterVec
}

// New creates the metrics and registers them, with the Go and process
// collectors, in a fresh registry. storePending reports the records waiting
// to be committed.
func New(storePending func() float64) *Metrics {
	fq := func(sub, name string) string { return prometheus.BuildFQName(namespace, sub, name) }
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: fq("", "decisions_total"),
			Help: "Submission decisions made, by action.",
		}, []string{"action"}),
		DecisionDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    fq("", "decision_duration_seconds"),
			Help:    "Time augurd spent on one submission, from the request read to the answer written.",
			Buckets: prometheus.ExponentialBuckets(25e-6, 2, 14),
		}),
		Predictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: fq("", "predictions_total"),
			Help: "Predictions made at submission, by what the GPU memory prediction came from.",
		}, []string{"source"}),
		ReusedDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: fq("", "reused_decisions_total"),
			Help: "Submissions the shim answered from an identical earlier request's decision (shim.reuse_window), by record: recorded, or unknown (left to the linker).",
		}, []string{"record"}),
		GPURewrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: fq("", "gpu_type_rewrites_total"),
			Help: "Typeless GPU requests given a GPU type at submission.",
		}),
		SiteFactors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: fq("", "initial_site_factors_total"),
			Help: "Submissions given an initial SiteFactor.",
		}),
		Refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: fq("shim", "requests_refused_total"),
			Help: "Requests on the shim socket that got no decision, by reason.",
		}, []string{"reason"}),
		ShimFailOpen: prometheus.NewCounter(prometheus.CounterOpts{
			Name: fq("shim", "fail_open_total"),
			Help: "Submissions the shim accepted unchanged because augurd failed, as the shim reports them.",
		}),
		ShimSkipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: fq("shim", "cooldown_skipped_total"),
			Help: "Of the fail-opens, submissions accepted during a cool-down without asking augurd.",
		}),
		ShimRoundTrip: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    fq("shim", "round_trip_seconds"),
			Help:    "Round trip shim to augurd and back, as the shim measured it (reported with its next request).",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 14),
		}),
		StoreErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: fq("store", "errors_total"),
			Help: "Store operations that failed or ran out of time, by operation.",
		}, []string{"op"}),
		StoreCommitWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    fq("store", "commit_wait_seconds"),
			Help:    "Time a submission's answer waited for its record to be committed.",
			Buckets: prometheus.ExponentialBuckets(25e-6, 2, 14),
		}),
		Outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: fq("", "job_reports_total"),
			Help: "Job reports from compute nodes, by what became of them.",
		}, []string{"result"}),
		PredictionError: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    fq("", "prediction_error_ratio"),
			Help:    "Measured over predicted median, for each finished job linked to its prediction.",
			Buckets: prometheus.ExponentialBuckets(0.125, 1.4142135623730951, 13),
		}, []string{"resource", "source"}),
		PredictionOver: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: fq("", "prediction_over_upper_total"),
			Help: "Finished jobs that used more than their prediction's upper quantile.",
		}, []string{"resource", "source"}),
		GPUOOMJobs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: fq("", "gpu_oom_jobs_total"),
			Help: "Node reports of finished jobs that look like GPU out-of-memory (memory near capacity at a failed end); a multi-node job counts once per such node.",
		}),
		BalanceRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: fq("balance", "requests_total"),
			Help: "Requests to the rebalancing endpoint, by endpoint and result.",
		}, []string{"endpoint", "result"}),
		BalanceJobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: fq("balance", "jobs"),
			Help: "Running jobs the rebalancing endpoint follows, and of them those with a slow rank.",
		}, []string{"kind"}),
		BalanceSlowdown: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    fq("balance", "slowdown_ratio"),
			Help:    "Each assessed job's slowest rank against its median rank (1: no skew).",
			Buckets: []float64{1, 1.05, 1.1, 1.2, 1.5, 2, 3, 5, 10},
		}),
		BalancePlans: prometheus.NewCounter(prometheus.CounterOpts{
			Name: fq("balance", "plan_changes_total"),
			Help: "Rebalancing plans changed for running jobs.",
		}),
		BalanceGain: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    fq("balance", "plan_gain_ratio"),
			Help:    "Predicted speed-up of a job when its plan changes (0.1: 10% faster).",
			Buckets: []float64{0.03, 0.05, 0.1, 0.2, 0.5, 1, 2, 5},
		}),
		QueueJobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: fq("", "queue_jobs"),
			Help: "Jobs in Slurm's queue by state, as augurd last read it.",
		}, []string{"state"}),
		OutcomeLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    fq("", "job_report_delay_seconds"),
			Help:    "Time from a job's end to its report being stored.",
			Buckets: prometheus.ExponentialBuckets(0.1, 3, 12),
		}),
		LivePasses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: fq("live", "passes_total"),
			Help: "Live scheduling passes, by how they ended.",
		}, []string{"result"}),
		LivePassDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    fq("live", "pass_duration_seconds"),
			Help:    "Time of one live scheduling pass: read Slurm, decide, apply, record.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}),
		LiveActions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: fq("live", "actions_total"),
			Help: "Actions of the live scheduler, by kind and by what became of them.",
		}, []string{"kind", "result"}),
		LivePending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: fq("live", "pending_jobs"),
			Help: "Pending jobs the last live pass ranked.",
		}),
		LivePaused: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: fq("live", "paused"),
			Help: "1 while an admin has paused the live scheduler's actions, else 0.",
		}),
		IdleJobs: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: fq("", "idle_gpu_jobs"),
			Help: "Running jobs flagged now because all their GPUs stayed idle (live.idle_gpu).",
		}),
		IdleGPUs: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: fq("", "idle_gpus"),
			Help: "GPUs held by the running jobs flagged idle now.",
		}),
		LivePeriods: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: fq("node", "live_periods_total"),
			Help: "Live periods (running jobs' GPU use) received from the node agents, by result.",
		}, []string{"result"}),
	}
	version := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	buildInfo := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        fq("", "build_info"),
		Help:        "Augur's build, as labels; always 1.",
		ConstLabels: prometheus.Labels{"version": version},
	}, func() float64 { return 1 })
	pending := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: fq("store", "pending_records"),
		Help: "Records accepted but not yet committed to SQLite.",
	}, storePending)
	m.Registry.MustRegister(
		m.Decisions, m.DecisionDuration, m.Predictions, m.GPURewrites, m.SiteFactors, m.ReusedDecisions,
		m.Refused, m.ShimFailOpen, m.ShimSkipped, m.ShimRoundTrip,
		m.StoreErrors, m.StoreCommitWait, m.Outcomes, m.OutcomeLag, m.PredictionError, m.PredictionOver, m.GPUOOMJobs, m.QueueJobs,
		m.BalanceRequests, m.BalanceJobs, m.BalanceSlowdown, m.BalancePlans, m.BalanceGain, buildInfo, pending,
		m.LivePasses, m.LivePassDuration, m.LiveActions, m.LivePending, m.LivePaused,
		m.IdleJobs, m.IdleGPUs, m.LivePeriods,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	m.OrphanedSubmissions = prometheus.NewCounter(prometheus.CounterOpts{
		Name: fq("", "orphaned_submissions_total"),
		Help: "Decisions that no Slurm job carries (the shim had stopped waiting, or slurmctld refused the job), marked ORPHANED by the linker.",
	})
	m.Registry.MustRegister(m.OrphanedSubmissions)
	m.JobFiles = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: fq("", "job_files_total"),
		Help: "Config files named by batch scripts that augurd went to read (predictor.job_files), by result.",
	}, []string{"result"})
	m.Registry.MustRegister(m.JobFiles)
	for _, r := range []JobFileResult{JobFileRead, JobFileAbsent, JobFileRefused, JobFileLate, JobFileBusy, JobFileFailed, JobFileUnparsed} {
		m.JobFiles.WithLabelValues(string(r))
	}
	for _, a := range []Action{ActionAccept, ActionReject} {
		m.Decisions.WithLabelValues(string(a))
	}
	for _, r := range []RefuseReason{RefusePeer, RefuseDecode, RefusePanic} {
		m.Refused.WithLabelValues(string(r))
	}
	for _, op := range []StoreOp{StoreRecord, StoreHistory, StoreActions} {
		m.StoreErrors.WithLabelValues(string(op))
	}
	for _, r := range []OutcomeResult{OutcomeStored, OutcomeDuplicate, OutcomeUnsigned, OutcomeReplayed,
		OutcomeForbidden, OutcomeMalformed, OutcomeFailed} {
		m.Outcomes.WithLabelValues(string(r))
	}
	for _, r := range []LivePassResult{LivePassOK, LivePassPaused, LivePassUnavailable, LivePassError} {
		m.LivePasses.WithLabelValues(string(r))
	}
	for _, r := range []OutcomeResult{OutcomeStored, OutcomeMalformed} {
		m.LivePeriods.WithLabelValues(string(r))
	}
	for _, k := range []LiveActionKind{LiveSiteFactor, LiveSignal, LiveRequeue, LiveOOMRequeue, LiveIdleFlag, LiveIdleWarn, LiveIdleCancel} {
		for _, r := range []LiveActionResult{LiveApplied, LiveDryRun, LiveFailed} {
			m.LiveActions.WithLabelValues(string(k), string(r))
		}
	}
	return m
}

// WatchScriptCache exports the submit path's script cache as
// augur_script_cache_lookups_total{result="hit"|"miss"}: a hit is a script
// read once before and not parsed again.
func (m *Metrics) WatchScriptCache(stats func() (hits, misses uint64)) {
	for _, r := range []struct {
		result string
		n      func() float64
	}{
		{"hit", func() float64 { h, _ := stats(); return float64(h) }},
		{"miss", func() float64 { _, miss := stats(); return float64(miss) }},
	} {
		m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        prometheus.BuildFQName(namespace, "script_cache", "lookups_total"),
			Help:        "Batch scripts looked up in augurd's cache of script readings, by result: a hit is not parsed again.",
			ConstLabels: prometheus.Labels{"result": r.result},
		}, r.n))
	}
}

// LivePass counts one live pass and its duration.
func (m *Metrics) LivePass(r LivePassResult, seconds float64) {
	m.LivePasses.WithLabelValues(string(r)).Inc()
	m.LivePassDuration.Observe(seconds)
}

// LiveAction counts n live actions.
func (m *Metrics) LiveAction(k LiveActionKind, r LiveActionResult, n int) {
	m.LiveActions.WithLabelValues(string(k), string(r)).Add(float64(n))
}

// Decided counts one decision.
func (m *Metrics) Decided(a Action) { m.Decisions.WithLabelValues(string(a)).Inc() }

// RefusedFor counts one refused request.
func (m *Metrics) RefusedFor(r RefuseReason) { m.Refused.WithLabelValues(string(r)).Inc() }

// StoreFailed counts one failed store operation.
func (m *Metrics) StoreFailed(op StoreOp) { m.StoreErrors.WithLabelValues(string(op)).Inc() }

// Handler serves the registry.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// JobFile counts one config file augurd went to read.
func (m *Metrics) JobFile(r JobFileResult) { m.JobFiles.WithLabelValues(string(r)).Inc() }
