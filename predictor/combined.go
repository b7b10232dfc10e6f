package predictor

import (
	"fmt"
	"math"
	"strings"
)

// CombinedName is the Combined predictor's name.
const CombinedName = "combined"

// Combined is the predictor augurd uses once a model is trained. For peak
// memory it tries, in order: the job's own history at this or other batch
// sizes (linear in batch size, margins calibrated by training, never above
// what a larger batch size of it peaked at), the memory forest for a job
// never seen, the analytic floor of a recognised transformer, and the
// History default (the whole GPU). The analytic floor also raises any lower
// estimate. For runtime: the job's own completed runs, then the runtime
// forest (the time limit is one of its features); a wide forest interval
// marks the job unpredictable. Upper bounds never exceed
// the GPU's memory or the time limit, which the job cannot outgrow anyway.
type Combined struct {
	// Model is the trained model; nil serves history and defaults only.
	Model *Model
	// History supplies the defaults, GPU memory sizes and runtime history.
	History History
	// Prior answers for models it knows when neither history nor a
	// trained model does; nil uses none.
	Prior *Prior
	// MaxSpread is the widest runtime Hi/P50 still called predictable (2).
	MaxSpread float64
}

var _ Predictor = (*Combined)(nil)

// NewCombined returns a Combined predictor over a trained model (or nil).
func NewCombined(m *Model, h History) *Combined {
	return &Combined{Model: m, History: h, MaxSpread: 2, Prior: ShippedPrior()}
}

// Name implements Predictor.
func (*Combined) Name() string { return CombinedName }

// Predict implements Predictor.
func (c *Combined) Predict(job Job, history []Outcome) Prediction {
	p := c.History.Predict(job, history)
	f := jobFeatures(job)
	var why []string
	c.predictMem(&p, job, f, history, &why)
	c.predictRuntime(&p, job, f, &why)
	if len(why) > 0 {
		p.Why = strings.Join(why, "; ")
	}
	return p
}

func (c *Combined) predictMem(p *Prediction, job Job, f Features, history []Outcome, why *[]string) {
	m := c.Model
	floor := AnalyticFloorMiB(ModelParams(f.Model), f.ZeROStage, f.GPUs)
	if f.Params > 0 {
		floor = AnalyticFloorMiB(f.Params, f.ZeROStage, f.GPUs)
	}
	if f.Tuning != "" {
		floor = 0 // adapters: the frozen weights have no gradients or optimizer state
	}
	if e, ok := memFromHistory(f.BatchSize, history, c.memShape(f)); ok {
		margin := m.margin(e.group)
		if e.group == groupSame {
			margin = math.Max(margin, c.History.MemMargin)
		}
		hi := e.upper * (1 + margin)
		p.GPUMemMiB = Quantiles{P50: e.p50, Hi: math.Min(hi, e.cap)}
		p.MemSource = SourceHistory
		switch {
		case e.group == groupSame:
			*why = append(*why, fmt.Sprintf("memory from %d earlier runs at this batch size", e.runs))
		case e.group == groupOnePoint:
			*why = append(*why, fmt.Sprintf("memory from %d earlier runs at batch size %g, scaled by %s", e.runs, e.points[0].batch, c.shapeName(f)))
		default:
			*why = append(*why, fmt.Sprintf("memory linear in batch size through %d earlier batch sizes (%s, margin %.0f%%)", len(e.points), e.group, 100*margin))
		}
		if hi > e.cap {
			*why = append(*why, fmt.Sprintf("upper bound held to the %.0f MiB a larger batch size peaked at", e.cap))
		}
	} else if p.MemSource == SourceHistory {
		// Earlier runs of this script whose batch sizes are not known: the
		// History figures (all of them, widest run plus a margin) stand.
		*why = append(*why, fmt.Sprintf("memory from %d earlier runs of this script (their batch sizes not recorded)", p.Runs))
	} else if m != nil && m.Mem != nil && (f.Model != "" && !f.JobNameOnly() || f.BatchSize > 0) {
		q := m.Mem.Quantiles(m.memInput(f), 0.5, m.upper())
		if !math.IsNaN(q[0]) {
			p.GPUMemMiB = Quantiles{P50: math.Exp(q[0]), Hi: math.Exp(q[1])}
			p.MemSource = SourceForest
			*why = append(*why, fmt.Sprintf("memory from the forest (%d outcomes) for model %q at batch size %g", m.MemRows, f.Model, f.BatchSize))
		}
	} else if q, pwhy, ok := c.Prior.Predict(f); ok {
		p.GPUMemMiB = q
		p.MemSource = SourcePrior
		*why = append(*why, pwhy)
	} else if q, fwhy, ok := FormulaPredict(f); ok {
		p.GPUMemMiB = q
		p.MemSource = SourceFormula
		*why = append(*why, fwhy)
		floor = 0 // the formula counts the state itself, as the job trains it
	} else if floor > 0 {
		// The parameters give a floor (weights, gradients, optimizer
		// state), nothing about activations: the median is at least the
		// floor, and the upper bound stays what the request allows (the
		// GPU's memory when the type is known, else unknown). A floor is
		// never a reason to place a job on a smaller GPU.
		p.GPUMemMiB = Quantiles{P50: floor, Hi: math.Max(p.GPUMemMiB.Hi, floor)}
		if p.GPUMemMiB.Hi == floor && p.MemSource == SourceDefault && len(c.History.GPUMemMiB) > 0 {
			if _, typed := c.History.GPUMemMiB[job.memType()]; !typed {
				p.GPUMemMiB.Hi = 0 // typeless request: the upper bound is unknown
			}
		}
		p.MemSource = SourceAnalytic
		*why = append(*why, fmt.Sprintf("memory at least %.0f MiB from %s's %.3g parameters (weights, gradients, optimizer state); activations unknown", floor, f.Model, ModelParams(f.Model)))
	}
	if floor > 0 && p.MemSource != SourceDefault && p.GPUMemMiB.P50 < floor {
		p.GPUMemMiB.P50 = floor
		p.GPUMemMiB.Hi = math.Max(p.GPUMemMiB.Hi, floor)
		*why = append(*why, fmt.Sprintf("raised to the analytic floor of %.0f MiB", floor))
	}
	if gpu, ok := c.History.GPUMemMiB[job.memType()]; ok && p.MemSource != SourceDefault && p.GPUMemMiB.Hi > gpu && p.GPUMemMiB.P50 <= gpu {
		p.GPUMemMiB.Hi = gpu
	}
}

func (c *Combined) predictRuntime(p *Prediction, job Job, f Features, why *[]string) {
	m := c.Model
	limit := job.TimeLimit.Seconds()
	if p.RuntimeSource == SourceHistory {
		*why = append(*why, fmt.Sprintf("runtime from %d earlier runs", p.Runs))
	} else if m != nil && m.Runtime != nil {
		q := m.Runtime.Quantiles(vector(f, limit), 0.5, m.upper())
		if !math.IsNaN(q[0]) {
			p.RuntimeSec = Quantiles{P50: math.Exp(q[0]), Hi: math.Exp(q[1])}
			p.RuntimeSource = SourceForest
			spread := c.MaxSpread
			if spread <= 0 {
				spread = 2
			}
			p.Predictable = p.RuntimeSec.Hi <= spread*p.RuntimeSec.P50
			if p.Predictable {
				*why = append(*why, "runtime from the forest")
			} else {
				*why = append(*why, fmt.Sprintf("runtime unpredictable: the forest's p%.0f is %.1fx its median", 100*m.upper(), p.RuntimeSec.Hi/p.RuntimeSec.P50))
			}
		}
	} else {
		*why = append(*why, "runtime unknown: the time limit")
	}
	if limit > 0 {
		p.RuntimeSec.Hi = math.Min(p.RuntimeSec.Hi, limit)
		p.RuntimeSec.P50 = math.Min(p.RuntimeSec.P50, limit)
	}
}

// memShape is the curve that carries a job's one earlier batch size to
// its new one: the trained model's nearest-named model's measured curve,
// else the shipped prior's curve of the job's own model, else the
// formula's; nil (the earlier peak stands) when there is none.
func (c *Combined) memShape(f Features) func(batch float64) float64 {
	if shape := c.Model.memShape(f, ""); shape != nil {
		return shape
	}
	at := func(median func(Features) (float64, bool)) func(float64) float64 {
		return func(batch float64) float64 {
			g := f
			g.BatchSize = batch
			v, _ := median(g)
			return v
		}
	}
	if _, ok := c.Prior.median(f); ok {
		return at(c.Prior.median)
	}
	if _, _, ok := FormulaPredict(f); ok {
		return at(func(g Features) (float64, bool) {
			q, _, ok := FormulaPredict(g)
			return q.P50, ok
		})
	}
	return nil
}

// shapeName says which curve memShape used.
func (c *Combined) shapeName(f Features) string {
	switch {
	case c.Model.memShape(f, "") != nil:
		return "the shape of the nearest-named model's curve"
	case c.Prior.knows(f):
		return "the shape of the shipped prior's curve"
	}
	if _, _, ok := FormulaPredict(f); ok {
		return "the shape of the formula's curve"
	}
	return "nothing (no curve known for the model: the earlier peak stands)"
}
