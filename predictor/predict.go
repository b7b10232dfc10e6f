package predictor

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Source says where a prediction came from.
type Source string

// The sources a prediction can have.
const (
	SourceHistory  Source = "history"  // earlier runs of the same job
	SourceForest   Source = "forest"   // the regression forest
	SourcePrior    Source = "prior"    // the prior shipped in the binaries (prior.go)
	SourceFormula  Source = "formula"  // a transformer's training memory by formula (transformer.go)
	SourceAnalytic Source = "analytic" // a model's parameter count
	SourceDefault  Source = "default"  // nothing known: the request itself
)

// Quantiles is a predicted value: its median and an upper quantile (p95 by
// default). Zero means unknown.
type Quantiles struct {
	P50 float64
	Hi  float64
}

// Known reports whether anything was predicted.
func (q Quantiles) Known() bool { return q.Hi > 0 }

// Prediction is what Augur expects of a job before it runs.
type Prediction struct {
	GPUMemMiB     Quantiles // peak GPU memory per GPU, MiB
	RuntimeSec    Quantiles
	MemSource     Source
	RuntimeSource Source
	// Runs is how many earlier runs the history figures rest on.
	Runs int
	// Predictable is true when the runtime prediction is trustworthy enough
	// for shortest-job ordering; false sends the job to attained-service
	// ordering.
	Predictable bool
	// Why explains the prediction in a sentence a user can read.
	Why string
}

// Job is a submission as the predictor sees it.
type Job struct {
	UserID    uint32
	Account   string
	Partition string
	Name      string
	Script    Script
	GPUs      []GPURequest
	// TimeLimit is the job's --time; 0 when it gave none.
	TimeLimit time.Duration
	// GPUTypeHint is the one GPU type the job's constraint, partition,
	// account or QOS leave it when its request names none, as the caller
	// that knows the site's names reads them (core.Decide); "" otherwise.
	// The whole-GPU default and the bound on predicted memory use it as a
	// named type; GPUType, and the decisions on it, do not.
	GPUTypeHint string
}

// memType is the type whose memory bounds the job's: the type it names,
// else its hint.
func (j Job) memType() string {
	if t := j.GPUType(); t != "" {
		return t
	}
	return j.GPUTypeHint
}

// GPUType returns the single GPU type the job names, or "".
func (j Job) GPUType() string {
	t := ""
	for _, g := range j.GPUs {
		if g.Shard || g.Type == "" {
			continue
		}
		if t != "" && t != g.Type {
			return ""
		}
		t = g.Type
	}
	return t
}

// WantsGPUs reports whether the job asks for any GPU or GPU shard.
func (j Job) WantsGPUs() bool {
	for _, g := range j.GPUs {
		if g.Count > 0 {
			return true
		}
	}
	return false
}

// Outcome is what a finished run of a job did.
type Outcome struct {
	JobID         uint64
	PeakGPUMemMiB float64
	RuntimeSec    float64
	ExitState     string // COMPLETED, FAILED, TIMEOUT, OUT_OF_MEMORY, ...
	GPUType       string
	EndedAt       time.Time
	// MeanSMUtil is the run's mean SM utilisation over its GPUs, in percent
	// (0: no telemetry).
	MeanSMUtil float64
	// Features are the run's script features (its batch size above all),
	// zero when the submission is not known; see Sample.
	Features Features
}

// Completed reports whether the run ended by itself, so its runtime is the
// job's true runtime and not a limit or a crash.
func (o Outcome) Completed() bool { return o.ExitState == "COMPLETED" }

// Predictor predicts a job from its own features and its history: the
// earlier outcomes of the same user and script signature, newest first.
type Predictor interface {
	Name() string
	Predict(job Job, history []Outcome) Prediction
}

// HistoryName is the History predictor's name.
const HistoryName = "history"

// History is the estimate Augur makes before it has a trained model: a job it
// has seen before is predicted from what its earlier runs used (median, and
// the largest run plus a margin as the upper quantile); a job it has never
// seen gets the documented default, which is the request itself: all the
// memory of the GPU type it names and its whole time limit.
type History struct {
	// MinRuns earlier runs are needed before history is used.
	MinRuns int
	// MaxRuns bounds how many of the newest runs are looked at.
	MaxRuns int
	// GPUMemMiB is each configured GPU type's memory, for the default.
	GPUMemMiB map[string]float64
	// MemMargin and RuntimeMargin widen the largest run into the upper
	// quantile (0.05 = 5%), covering run-to-run noise.
	MemMargin, RuntimeMargin float64
}

var _ Predictor = History{}

// NewHistory returns a History predictor with Augur's defaults.
func NewHistory(minRuns int, gpuMemMiB map[string]float64) History {
	if minRuns < 1 {
		minRuns = 1
	}
	return History{MinRuns: minRuns, MaxRuns: 20, GPUMemMiB: gpuMemMiB, MemMargin: 0.05, RuntimeMargin: 0.10}
}

// Name implements Predictor.
func (History) Name() string { return HistoryName }

// Predict implements Predictor.
func (h History) Predict(job Job, history []Outcome) Prediction {
	if h.MaxRuns > 0 && len(history) > h.MaxRuns {
		history = history[:h.MaxRuns]
	}
	var mems, times []float64
	for _, o := range history {
		if o.PeakGPUMemMiB > 0 {
			mems = append(mems, o.PeakGPUMemMiB)
		}
		if o.Completed() && o.RuntimeSec > 0 {
			times = append(times, o.RuntimeSec)
		}
	}
	var p Prediction
	p.Runs = len(history)
	if len(mems) >= h.MinRuns {
		p.GPUMemMiB = Quantiles{P50: median(mems), Hi: maxOf(mems) * (1 + h.MemMargin)}
		p.MemSource = SourceHistory
	} else if m, ok := h.GPUMemMiB[job.memType()]; ok && job.WantsGPUs() {
		p.GPUMemMiB = Quantiles{P50: m, Hi: m}
		p.MemSource = SourceDefault
	} else {
		p.MemSource = SourceDefault
	}
	if len(times) >= h.MinRuns {
		p.RuntimeSec = Quantiles{P50: median(times), Hi: maxOf(times) * (1 + h.RuntimeMargin)}
		p.RuntimeSource = SourceHistory
		// Runs that vary more than 2x are not a basis for shortest-first ordering.
		p.Predictable = p.RuntimeSec.Hi <= 2*p.RuntimeSec.P50
	} else {
		if job.TimeLimit > 0 {
			s := job.TimeLimit.Seconds()
			p.RuntimeSec = Quantiles{P50: s, Hi: s}
		}
		p.RuntimeSource = SourceDefault
	}
	p.Why = h.explain(p, len(mems), len(times))
	return p
}

func (h History) explain(p Prediction, memRuns, timeRuns int) string {
	switch {
	case p.MemSource == SourceHistory && p.RuntimeSource == SourceHistory:
		return fmt.Sprintf("from %d earlier runs of this script by this user", max(memRuns, timeRuns))
	case p.MemSource == SourceHistory:
		return fmt.Sprintf("memory from %d earlier runs of this script by this user; none completed, so runtime is the time limit", memRuns)
	case p.RuntimeSource == SourceHistory:
		return fmt.Sprintf("runtime from %d earlier completed runs; no GPU memory recorded, so memory is the request", timeRuns)
	default:
		return "no earlier runs of this script by this user: the request itself (whole GPUs, whole time limit)"
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

// TimeMin is the Slurm TimeMin to give a predictable job (live.time_min):
// its upper predicted runtime rounded up to the minute, when that is below
// its time limit. Backfill may then start the job before a reservation on a
// limit cut down to fit, never below TimeMin; the simulator's time_min runs
// use the same rule.
func TimeMin(p Prediction, limit time.Duration) (time.Duration, bool) {
	hi := p.RuntimeSec.Hi
	if !p.Predictable || !p.RuntimeSec.Known() || limit <= 0 || hi <= 0 || math.IsInf(hi, 0) || math.IsNaN(hi) {
		return 0, false
	}
	tm := time.Duration(math.Ceil(hi/60)) * time.Minute
	if tm >= limit {
		return 0, false
	}
	return tm, true
}

// TimeHint is the --time to suggest to a job whose limit is far above the
// runtime predicted for it: the upper prediction rounded up to a quarter
// hour, when the runtime is predictable (from its own runs or a narrow
// forest interval) and the limit is more than twice that and at least an
// hour longer. A shorter limit lets Slurm's backfill scheduler start the
// job in gaps a long limit does not fit. augurd annotates it at submission;
// the simulator's Augur limits are the same rule.
func TimeHint(p Prediction, limit time.Duration) (time.Duration, bool) {
	hi := p.RuntimeSec.Hi
	if !p.Predictable || !p.RuntimeSec.Known() || limit <= 0 || hi <= 0 || math.IsInf(hi, 0) || math.IsNaN(hi) {
		return 0, false
	}
	hint := time.Duration(math.Ceil(hi/900)) * 15 * time.Minute
	if limit.Seconds() <= 2*hi || limit-hint < time.Hour {
		return 0, false
	}
	return hint, true
}
