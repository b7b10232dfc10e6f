package skew

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
)

// DPJob is a simulated synchronous data-parallel job: one StepModel per
// rank (its GPU's speed for the model), a global batch in samples, and an
// epoch of EpochSamples.
type DPJob struct {
	Name         string
	GPUs         []string // GPU type per rank, for the report
	Ranks        []StepModel
	GlobalBatch  int
	EpochSamples int
	// ReplanEvery is how many steps pass between two reports to augurd
	// (the client's "every N steps").
	ReplanEvery int
	// Noise is the relative standard deviation of each step time.
	Noise float64
	Seed  uint64
	// MinGain is Replan's threshold.
	MinGain float64
}

// DPResult compares one epoch with equal shares against one that follows
// the plans, both under the same noise.
type DPResult struct {
	Name              string   `json:"name"`
	GPUs              []string `json:"gpus"`
	GlobalBatch       int      `json:"global_batch"`
	Steps             int      `json:"steps"`
	EqualEpochSeconds float64  `json:"equal_epoch_seconds"`
	PlanEpochSeconds  float64  `json:"plan_epoch_seconds"`
	// IdealEpochSeconds is the bound for real-valued shares with no noise
	// (every rank finishing together).
	IdealEpochSeconds float64 `json:"ideal_epoch_seconds"`
	// Gain is EqualEpochSeconds/PlanEpochSeconds - 1, the steps spent
	// measuring before the first plan included.
	Gain float64 `json:"gain"`
	// EqualStepSeconds and PlanStepSeconds are the mean step times over the
	// epoch's last ReplanEvery steps, and SteadyGain their ratio minus 1:
	// the gain once the plan has settled.
	EqualStepSeconds float64 `json:"equal_step_seconds"`
	PlanStepSeconds  float64 `json:"plan_step_seconds"`
	SteadyGain       float64 `json:"steady_gain"`
	FinalShares      []int   `json:"final_shares"`
	SlowRanks        []int   `json:"slow_ranks"`
	PlanChanges      int     `json:"plan_changes"`
}

// SimulateDP runs one epoch twice, with equal shares and with the plans
// Replan hands out every ReplanEvery steps, measuring each rank's step time
// from its StepModel with multiplicative Gaussian noise. The planned run
// starts on equal shares, so the steps spent measuring before the first
// plan count against it.
func SimulateDP(job DPJob, cfg Config) (DPResult, error) {
	n := len(job.Ranks)
	if n == 0 || job.GlobalBatch < n || job.EpochSamples < job.GlobalBatch || job.ReplanEvery < 1 {
		return DPResult{}, fmt.Errorf("%w: simulation %q: ranks %d, global batch %d, epoch %d, every %d", ErrInput, job.Name, n, job.GlobalBatch, job.EpochSamples, job.ReplanEvery)
	}
	steps := (job.EpochSamples + job.GlobalBatch - 1) / job.GlobalBatch
	res := DPResult{Name: job.Name, GPUs: job.GPUs, GlobalBatch: job.GlobalBatch, Steps: steps}
	equal := EqualShares(n, job.GlobalBatch)

	tail := min(job.ReplanEvery, steps)
	var tailSecs [2]float64
	run := func(plan bool) (float64, []int, []int, int, error) {
		rng := rand.New(rand.NewPCG(job.Seed, 0x5eed))
		tr, err := NewTracker(cfg, n)
		if err != nil {
			return 0, nil, nil, 0, err
		}
		shares := append([]int(nil), equal...)
		var prev Plan
		var slow []int
		changes, total := 0, 0.0
		rep := make([]Step, n)
		for s := 1; s <= steps; s++ {
			worst := 0.0
			for r, m := range job.Ranks {
				t := m.Seconds(shares[r]) * math.Max(0.05, 1+job.Noise*rng.NormFloat64())
				worst = max(worst, t)
				rep[r] = Step{Rank: r, Step: int64(s), Seconds: t, Samples: shares[r]}
			}
			total += worst
			if s > steps-tail {
				tailSecs[b2i(plan)] += worst / float64(tail)
			}
			if !plan {
				continue
			}
			tr.Observe(rep, 0)
			if s%job.ReplanEvery != 0 {
				continue
			}
			a := tr.Assess(nil)
			slow = a.SlowRanks
			if !a.Ready {
				continue
			}
			p, changed, err := Replan(prev, a.Throughputs(), shares, job.GlobalBatch, job.MinGain)
			if err != nil {
				return 0, nil, nil, 0, err
			}
			prev = p
			if changed && !equalInts(shares, p.Shares) {
				changes++
				shares = append(shares[:0], p.Shares...)
			}
		}
		return total, shares, slow, changes, nil
	}
	var err error
	if res.EqualEpochSeconds, _, _, _, err = run(false); err != nil {
		return res, err
	}
	if res.PlanEpochSeconds, res.FinalShares, res.SlowRanks, res.PlanChanges, err = run(true); err != nil {
		return res, err
	}
	res.Gain = gain(res.EqualEpochSeconds, res.PlanEpochSeconds)
	res.EqualStepSeconds, res.PlanStepSeconds = tailSecs[0], tailSecs[1]
	res.SteadyGain = gain(res.EqualStepSeconds, res.PlanStepSeconds)
	res.IdealEpochSeconds = float64(steps) * idealStep(job.Ranks, float64(job.GlobalBatch))
	return res, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// idealStep is the step time T at which real-valued shares b_r with
// Fixed_r + PerSample_r·b_r = T sum to the global batch (ranks too slow
// to take any work at T are dropped from the sum).
func idealStep(ms []StepModel, global float64) float64 {
	active := make([]bool, len(ms))
	for i := range active {
		active[i] = true
	}
	for {
		var a, c float64
		for i, m := range ms {
			if active[i] {
				a += m.Fixed / m.PerSample
				c += 1 / m.PerSample
			}
		}
		t := (global + a) / c
		dropped := false
		for i, m := range ms {
			if active[i] && m.Fixed >= t {
				active[i], dropped = false, true
			}
		}
		if !dropped {
			return t
		}
	}
}

// PipelineResult compares an equal layer split with the planned one.
type PipelineResult struct {
	Name            string    `json:"name"`
	GPUs            []string  `json:"gpus"`
	Layers          int       `json:"layers"`
	EqualBounds     []int     `json:"equal_bounds"`
	PlanBounds      []int     `json:"plan_bounds"`
	EqualMaxSeconds float64   `json:"equal_max_stage_seconds"`
	PlanMaxSeconds  float64   `json:"plan_max_stage_seconds"`
	PlanStages      []float64 `json:"plan_stage_seconds"`
	// Gain is EqualMaxSeconds/PlanMaxSeconds - 1: the pipeline's
	// steady-state throughput gain (bubbles and transfers aside).
	Gain float64 `json:"gain"`
}

// SimulatePipeline measures the stages under an equal split (layer costs
// over the stages' true speeds), plans from those measurements as augurd
// would, and evaluates the plan on the true speeds.
func SimulatePipeline(name string, gpus []string, costs, speeds []float64) (PipelineResult, error) {
	eq := EqualSplit(len(costs), len(speeds))
	if err := checkPipeline(costs, speeds); err != nil {
		return PipelineResult{}, err
	}
	measured := StageSeconds(costs, speeds, eq)
	p, err := PlanPipeline(costs, eq, measured)
	if err != nil {
		return PipelineResult{}, err
	}
	r := PipelineResult{
		Name: name, GPUs: gpus, Layers: len(costs), EqualBounds: eq, PlanBounds: p.Bounds,
		EqualMaxSeconds: maxOf(measured), PlanStages: StageSeconds(costs, speeds, p.Bounds),
	}
	r.PlanMaxSeconds = maxOf(r.PlanStages)
	r.Gain = gain(r.EqualMaxSeconds, r.PlanMaxSeconds)
	return r, nil
}

// ResNet50Blocks is the approximate forward cost of ResNet-50's pipeline
// units at 224×224 in GFLOPs: the stem, the 16 bottleneck blocks (a
// stage's first block carries its downsampling projection) and the
// classifier. Approximate, from the layer shapes; only ratios matter here.
var ResNet50Blocks = []float64{
	0.118,               // conv1 + pool
	0.231, 0.218, 0.218, // conv2_x
	0.379, 0.218, 0.218, 0.218, // conv3_x
	0.372, 0.218, 0.218, 0.218, 0.218, 0.218, // conv4_x
	0.369, 0.216, 0.216, // conv5_x
	0.002, // pool + fc
}

// Transformer24 is a 24-block decoder with a large vocabulary: embedding,
// 24 equal blocks, and the output projection with its softmax, in units of
// one block. The embedding and head are what an equal split ignores.
func Transformer24() []float64 {
	c := []float64{0.3}
	for range 24 {
		c = append(c, 1)
	}
	return append(c, 3)
}

// GavelPath is where the Gavel throughputs lie beside a checkout at root:
// the shared data folder next to the repository, never copied into it.
func GavelPath(root string) string {
	return filepath.Join(root, "..", "shared", "data", "traces", "gavel", "simulation_throughputs.json")
}

// Evaluation is the standard set of simulated jobs.
type Evaluation struct {
	DataParallel []DPResult       `json:"data_parallel"`
	Pipeline     []PipelineResult `json:"pipeline"`
}

// dpCase is one standard data-parallel scenario.
type dpCase struct {
	name, model string
	perGPU      int // samples per rank with equal shares
	gpus        []string
	epoch       int
}

// Evaluate runs the standard scenarios on measured throughputs: mixed GPU
// types for data parallelism (time per epoch, plan against equal shares)
// and for pipelines (slowest stage, planned split against equal split),
// plus homogeneous controls where the plan should gain nothing (data
// parallel) or only what uneven layer costs allow (pipeline).
func Evaluate(t Throughputs, cfg Config) (Evaluation, error) {
	var ev Evaluation
	rep := func(g string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = g
		}
		return out
	}
	cat := func(xs ...[]string) []string {
		var out []string
		for _, x := range xs {
			out = append(out, x...)
		}
		return out
	}
	const imagenet = 1281167
	const wmt = 4500000
	dp := []dpCase{
		{"ResNet-50, 4 V100 (control)", "ResNet-50", 32, rep("v100", 4), imagenet},
		{"ResNet-50, 2 V100 + 2 P100", "ResNet-50", 32, cat(rep("v100", 2), rep("p100", 2)), imagenet},
		{"ResNet-50, 2 V100 + 2 K80", "ResNet-50", 32, cat(rep("v100", 2), rep("k80", 2)), imagenet},
		{"ResNet-50, 7 V100 + 1 K80", "ResNet-50", 32, cat(rep("v100", 7), rep("k80", 1)), imagenet},
		{"ResNet-50, 2 V100 + 2 P100 + 2 K80", "ResNet-50", 32, cat(rep("v100", 2), rep("p100", 2), rep("k80", 2)), imagenet},
		{"Transformer, 2 V100 + 2 P100 + 2 K80", "Transformer", 64, cat(rep("v100", 2), rep("p100", 2), rep("k80", 2)), wmt},
		{"ResNet-18, 4 V100 + 4 K80", "ResNet-18", 64, cat(rep("v100", 4), rep("k80", 4)), 50000},
	}
	for i, c := range dp {
		job := DPJob{Name: c.name, GPUs: c.gpus, GlobalBatch: c.perGPU * len(c.gpus), EpochSamples: c.epoch,
			ReplanEvery: 50, Noise: 0.03, Seed: uint64(i + 1), MinGain: 0.03}
		for _, g := range c.gpus {
			m, err := t.Model(g, c.model)
			if err != nil {
				return ev, err
			}
			job.Ranks = append(job.Ranks, m)
		}
		r, err := SimulateDP(job, cfg)
		if err != nil {
			return ev, err
		}
		ev.DataParallel = append(ev.DataParallel, r)
	}
	// Stage speeds: the GPU type's training throughput for the model at
	// batch 64 relative to V100's (a stage's speed on its slice of layers
	// is taken to scale as the whole model's does).
	speed := func(model, g string) (float64, error) {
		m, err := t.Model(g, model)
		if err != nil {
			return 0, err
		}
		return 1 / m.Seconds(64), nil
	}
	pipes := []struct {
		name, model string
		gpus        []string
		costs       []float64
	}{
		{"ResNet-50 blocks, 4 V100 (uneven layers only)", "ResNet-50", rep("v100", 4), ResNet50Blocks},
		{"ResNet-50 blocks, 2 V100 + P100 + K80", "ResNet-50", cat(rep("v100", 2), rep("p100", 1), rep("k80", 1)), ResNet50Blocks},
		{"Transformer-24, 4 V100 (uneven layers only)", "Transformer", rep("v100", 4), Transformer24()},
		{"Transformer-24, V100 + 2 P100 + K80", "Transformer", cat(rep("v100", 1), rep("p100", 2), rep("k80", 1)), Transformer24()},
		{"Transformer-24, 7 V100 + 1 K80", "Transformer", cat(rep("v100", 7), rep("k80", 1)), Transformer24()},
	}
	for _, p := range pipes {
		speeds := make([]float64, len(p.gpus))
		for k, g := range p.gpus {
			s, err := speed(p.model, g)
			if err != nil {
				return ev, err
			}
			speeds[k] = s
		}
		r, err := SimulatePipeline(p.name, p.gpus, p.costs, speeds)
		if err != nil {
			return ev, err
		}
		ev.Pipeline = append(ev.Pipeline, r)
	}
	return ev, nil
}
