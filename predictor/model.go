package predictor

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/augur-hpc/augur/predictor/forest"
)

// Sample is one finished job as training sees it: the job as it was
// submitted and what its run did.
type Sample struct {
	Job     Job
	Outcome Outcome
}

// features returns the job's script features with the request filling what
// the script left unsaid (GPU count and type).
func jobFeatures(j Job) Features {
	f := j.Script.Features
	if f.GPUs == 0 {
		for _, g := range j.GPUs {
			if !g.Shard && g.Count > 0 {
				f.GPUs += int(g.Count)
			}
		}
	}
	if f.GPUType == "" {
		f.GPUType = j.GPUType()
	}
	return f
}

// Model is everything training learns: a quantile regression forest for
// peak memory and one for runtime (either nil when there was too little to
// learn from) and the calibrated margins of the memory history estimate.
type Model struct {
	// Upper is the upper quantile the forests answer with (0.95).
	Upper float64 `json:"upper"`
	// Margins widen the memory history's upper bound, per history group.
	Margins map[string]float64 `json:"margins"`
	// MemRows and RuntimeRows are how many outcomes each forest learnt from.
	MemRows     int `json:"mem_rows"`
	RuntimeRows int `json:"runtime_rows"`
	// Schema is the FeatureSchema the forests were trained with.
	Schema int `json:"schema"`
	// Note is free text the trainer adds (where the data came from, when).
	Note string `json:"note,omitempty"`

	// Neighbours are the memory curves of the models training saw, for
	// the forest's nearest-name features (see neighbours.go).
	Neighbours []NeighbourCurve `json:"neighbours,omitempty"`

	Mem     *forest.Forest `json:"-"`
	Runtime *forest.Forest `json:"-"`
	nb      *neighbours
}

// TrainConfig tunes Train. The zero value gets the defaults.
type TrainConfig struct {
	Forest forest.Config
	// Upper is the forests' upper quantile (default 0.95).
	Upper float64
	// HistoryUnderRate is the share of history estimates the calibrated
	// margins may leave under the actual peak (default 0.015), counted as
	// new jobs would meet it (see calibrate). It is stricter than 1-Upper
	// because history bounds are tight, so covering costs little, and a
	// job predicted from its own history is trusted more.
	HistoryUnderRate float64
	// MinRows is the fewest outcomes a forest is trained on (default 20).
	MinRows int
}

func (c TrainConfig) withDefaults() TrainConfig {
	if c.Upper <= 0 || c.Upper >= 1 {
		c.Upper = 0.95
	}
	if c.HistoryUnderRate <= 0 || c.HistoryUnderRate >= 1 {
		c.HistoryUnderRate = 0.015
	}
	if c.MinRows <= 0 {
		c.MinRows = 20
	}
	if c.Forest.Trees == 0 {
		// 50 trees keep a cold prediction (two forests) well inside its
		// 100 µs budget; more buy little accuracy on outcome data.
		c.Forest.Trees = 50
	}
	if c.Forest.MaxFeatures == 0 {
		c.Forest.MaxFeatures = nFeatures / 2
	}
	if c.Forest.MinLeaf == 0 {
		c.Forest.MinLeaf = 3
	}
	return c
}

// ErrTooFewOutcomes is returned by Train when no model could be learnt.
var ErrTooFewOutcomes = errors.New("too few outcomes to train on")

// Train learns a Model from finished jobs. Memory learns from every run with
// a recorded peak except those killed for memory; runtime from completed
// runs only (a timeout or crash is not the job's runtime).
func Train(samples []Sample, cfg TrainConfig) (*Model, error) {
	cfg = cfg.withDefaults()
	var memX, rtX [][]float64
	var memY, rtY []float64
	m := &Model{Upper: cfg.Upper, Schema: FeatureSchema}
	m.Neighbours = curvesFrom(samples)
	m.nb = newNeighbours(m.Neighbours)
	type near struct {
		c   *NeighbourCurve
		sim float64
	}
	nearOf := map[string]near{}
	for _, s := range samples {
		f := jobFeatures(s.Job)
		o := s.Outcome
		if usableMem(o) {
			// Each model's neighbour comes from another family, as a
			// model never seen would find it.
			name := learnedName(f)
			nr, ok := nearOf[name]
			if !ok {
				nr.c, nr.sim, _ = m.nb.nearest(name, ModelFamily(name))
				nearOf[name] = nr
			}
			memX = append(memX, memVector(f, nr.c, nr.sim))
			memY = append(memY, math.Log(o.PeakGPUMemMiB))
		}
		if o.Completed() && o.RuntimeSec > 0 && !math.IsInf(o.RuntimeSec, 0) {
			rtX = append(rtX, vector(f, s.Job.TimeLimit.Seconds()))
			rtY = append(rtY, math.Log(o.RuntimeSec))
		}
	}
	m.MemRows, m.RuntimeRows = len(memY), len(rtY)
	var err error
	if len(memY) >= cfg.MinRows {
		if m.Mem, err = forest.Fit(memX, memY, cfg.Forest); err != nil {
			return nil, fmt.Errorf("train memory forest: %w", err)
		}
	}
	if len(rtY) >= cfg.MinRows {
		rc := cfg.Forest
		rc.Seed++
		if m.Runtime, err = forest.Fit(rtX, rtY, rc); err != nil {
			return nil, fmt.Errorf("train runtime forest: %w", err)
		}
	}
	m.Margins = calibrate(m.historyTrials(samples), cfg.HistoryUnderRate)
	if m.Mem == nil && m.Runtime == nil && len(samples) < cfg.MinRows {
		return m, fmt.Errorf("%w: %d outcomes, %d with memory, %d completed (need %d)",
			ErrTooFewOutcomes, len(samples), len(memY), len(rtY), cfg.MinRows)
	}
	return m, nil
}

// historyTrials replays the memory history estimate on the training data:
// for every job (user and signature) run at several batch sizes, each batch
// size is estimated from the others.
func (m *Model) historyTrials(samples []Sample) []calPoint {
	type key struct {
		user uint32
		sig  string
	}
	jobs := map[key][]Outcome{}
	for _, s := range samples {
		if !usableMem(s.Outcome) {
			continue
		}
		o := s.Outcome
		o.Features = jobFeatures(s.Job)
		k := key{s.Job.UserID, s.Job.Script.Signature}
		jobs[k] = append(jobs[k], o)
	}
	keys := make([]key, 0, len(jobs))
	for k := range jobs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.user, b.user), cmp.Compare(a.sig, b.sig)) })
	var out []calPoint
	for _, k := range keys {
		runs := jobs[k]
		batches := map[float64]bool{}
		for _, o := range runs {
			if o.Features.BatchSize > 0 {
				batches[o.Features.BatchSize] = true
			}
		}
		if len(batches) < 2 {
			continue
		}
		for b := range batches {
			var others []Outcome
			var actual []float64
			var f Features
			for _, o := range runs {
				if o.Features.BatchSize == b {
					actual = append(actual, o.PeakGPUMemMiB)
					f = o.Features
				} else {
					others = append(others, o)
				}
			}
			e, ok := memFromHistory(b, others, m.memShape(f, ModelFamily(f.Model)))
			if !ok {
				continue
			}
			for _, a := range actual {
				out = append(out, calPoint{group: e.group, need: a/e.upper - 1, ratio: e.upper / a, capRatio: e.cap / a})
			}
		}
	}
	return out
}

// memShape returns the shape of memory against batch size for a job like
// f, for history with too few batch sizes to show it: the curve of the
// nearest-named model, outside the family skip when skip is not empty (as
// training's trials see it), or nil when there is none.
func (m *Model) memShape(f Features, skip string) func(batch float64) float64 {
	if m == nil {
		return nil
	}
	c, _, ok := m.nb.nearest(learnedName(f), skip)
	if !ok {
		return nil
	}
	return c.at
}

// memVector is the memory forest's input: the job's features and, when a
// neighbour was found, its peak at the job's batch size and the similarity.
func memVector(f Features, c *NeighbourCurve, sim float64) []float64 {
	v := vector(f, 0)
	if c != nil {
		v[fLogNeighbour] = math.Log2(c.at(f.BatchSize))
		v[fNeighbourSim] = sim
	}
	return v
}

// memInput is memVector with the nearest curve of all the model knows.
func (m *Model) memInput(f Features) []float64 {
	c, sim, _ := m.nb.nearest(learnedName(f), "")
	return memVector(f, c, sim)
}

// margin returns the calibrated margin of a history group.
func (m *Model) margin(group string) float64 {
	if m != nil {
		if v, ok := m.Margins[group]; ok {
			return v
		}
	}
	if v, ok := defaultMargins[strings.TrimSuffix(group, groupBent)]; ok {
		return v
	}
	return 0.5
}

// upper returns the model's upper quantile, 0.95 by default.
func (m *Model) upper() float64 {
	if m == nil || m.Upper <= 0 || m.Upper >= 1 {
		return 0.95
	}
	return m.Upper
}
