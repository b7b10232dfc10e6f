package skew

import (
	"fmt"
	"math"
)

// PipelinePlan is a split of a model's layers across pipeline stages.
type PipelinePlan struct {
	// Bounds has one entry more than there are stages: stage k runs layers
	// Bounds[k] up to, not including, Bounds[k+1]; Bounds[0] is 0 and the
	// last entry the number of layers.
	Bounds []int `json:"bounds"`
	// StageSeconds is the predicted time of each stage per micro-batch, and
	// MaxStageSeconds the slowest of them: the pipeline's pace.
	StageSeconds    []float64 `json:"stage_seconds"`
	MaxStageSeconds float64   `json:"max_stage_seconds"`
	// CurrentMaxStageSeconds is the slowest stage with the split in use,
	// and Gain CurrentMaxStageSeconds/MaxStageSeconds - 1.
	CurrentMaxStageSeconds float64 `json:"current_max_stage_seconds"`
	Gain                   float64 `json:"gain"`
}

func checkPipeline(costs, speeds []float64) error {
	switch {
	case len(speeds) == 0:
		return fmt.Errorf("%w: no pipeline stages", ErrInput)
	case len(speeds) > MaxStages:
		return fmt.Errorf("%w: %d stages, at most %d", ErrInput, len(speeds), MaxStages)
	case len(costs) > MaxLayers:
		return fmt.Errorf("%w: %d layers, at most %d", ErrInput, len(costs), MaxLayers)
	case len(costs) < len(speeds):
		return fmt.Errorf("%w: %d layers cannot fill %d stages (each needs one)", ErrInput, len(costs), len(speeds))
	}
	for i, c := range costs {
		if !(c >= 0) || math.IsInf(c, 0) {
			return fmt.Errorf("%w: layer_costs[%d] is %v; give a cost of 0 or more", ErrInput, i, c)
		}
	}
	for k, s := range speeds {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("%w: stage %d speed is %v; must be above 0", ErrInput, k, s)
		}
	}
	return nil
}

// SplitLayers returns the contiguous split of layers (with these costs, in
// any unit) across stages (with these relative speeds, cost units per
// second, in pipeline order) that minimises the slowest stage's time
// cost/speed, every stage holding at least one layer. It is exact: a dynamic
// program over (stage, prefix) in O(stages·layers²), at most ~7·10⁷ steps
// within MaxLayers and MaxStages. Speeds are not monotone in the prefix when
// stages differ (a slow last stage makes a longer prefix cheaper), which
// rules out the usual binary-search shortcut. Among optimal splits it
// prefers the one that puts layers in earlier stages.
func SplitLayers(costs, speeds []float64) ([]int, error) {
	if err := checkPipeline(costs, speeds); err != nil {
		return nil, err
	}
	L, S := len(costs), len(speeds)
	pre := make([]float64, L+1)
	for i, c := range costs {
		pre[i+1] = pre[i] + c
	}
	inf := math.Inf(1)
	// best[k][j]: the least max stage time for layers [0,j) on stages [0,k].
	best := make([][]float64, S)
	from := make([][]int, S)
	for k := range best {
		best[k] = make([]float64, L+1)
		from[k] = make([]int, L+1)
		for j := range best[k] {
			best[k][j] = inf
		}
	}
	for j := 1; j <= L-(S-1); j++ {
		best[0][j] = pre[j] / speeds[0]
	}
	for k := 1; k < S; k++ {
		for j := k + 1; j <= L-(S-1-k); j++ {
			b, arg := inf, -1
			// Scan i from high to low: ties keep the largest i (earlier
			// stages fuller).
			for i := j - 1; i >= k; i-- {
				v := max(best[k-1][i], (pre[j]-pre[i])/speeds[k])
				if v < b {
					b, arg = v, i
				}
			}
			best[k][j], from[k][j] = b, arg
		}
	}
	bounds := make([]int, S+1)
	bounds[S] = L
	for k, j := S-1, L; k > 0; k-- {
		j = from[k][j]
		bounds[k] = j
	}
	return bounds, nil
}

// EqualSplit gives every stage the same number of layers, the first
// layers%stages stages one more: what a job does without measurements.
func EqualSplit(layers, stages int) []int {
	b := make([]int, stages+1)
	for k := 0; k < stages; k++ {
		n := layers / stages
		if k < layers%stages {
			n++
		}
		b[k+1] = b[k] + n
	}
	return b
}

// StageSeconds is each stage's time (its layers' cost over its speed).
func StageSeconds(costs, speeds []float64, bounds []int) []float64 {
	out := make([]float64, len(speeds))
	for k := range speeds {
		c := 0.0
		for _, x := range costs[bounds[k]:bounds[k+1]] {
			c += x
		}
		out[k] = c / speeds[k]
	}
	return out
}

// StageSpeeds infers each stage's speed (cost units per second) from its
// measured time per micro-batch under the split in use; a stage with no
// usable time gets the median speed of the others.
func StageSpeeds(costs []float64, bounds []int, seconds []float64) []float64 {
	sp := make([]float64, len(seconds))
	for k, s := range seconds {
		c := 0.0
		for _, x := range costs[bounds[k]:bounds[k+1]] {
			c += x
		}
		if s > 0 && c > 0 {
			sp[k] = c / s
		}
	}
	return fillUnknown(sp)
}

// ValidBounds reports whether bounds is a split of layers into stages
// non-empty stages.
func ValidBounds(bounds []int, layers, stages int) bool {
	if len(bounds) != stages+1 || bounds[0] != 0 || bounds[stages] != layers {
		return false
	}
	for k := 0; k < stages; k++ {
		if bounds[k+1] <= bounds[k] {
			return false
		}
	}
	return true
}

// PlanPipeline turns measured stage times under the split in use (current;
// nil means EqualSplit) into a new split.
func PlanPipeline(costs []float64, current []int, stageSeconds []float64) (PipelinePlan, error) {
	S := len(stageSeconds)
	if err := checkPipeline(costs, make1(S)); err != nil {
		return PipelinePlan{}, err
	}
	if current == nil {
		current = EqualSplit(len(costs), S)
	}
	if !ValidBounds(current, len(costs), S) {
		return PipelinePlan{}, fmt.Errorf("%w: bounds %v do not split %d layers into %d non-empty stages", ErrInput, current, len(costs), S)
	}
	speeds := StageSpeeds(costs, current, stageSeconds)
	b, err := SplitLayers(costs, speeds)
	if err != nil {
		return PipelinePlan{}, err
	}
	p := PipelinePlan{Bounds: b, StageSeconds: StageSeconds(costs, speeds, b)}
	p.MaxStageSeconds = maxOf(p.StageSeconds)
	p.CurrentMaxStageSeconds = maxOf(StageSeconds(costs, speeds, current))
	if p.MaxStageSeconds >= p.CurrentMaxStageSeconds {
		// Never serve a split predicted no better than the one in use.
		p.Bounds, p.StageSeconds, p.MaxStageSeconds = current, StageSeconds(costs, speeds, current), p.CurrentMaxStageSeconds
	}
	p.Gain = gain(p.CurrentMaxStageSeconds, p.MaxStageSeconds)
	return p, nil
}

func make1(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
