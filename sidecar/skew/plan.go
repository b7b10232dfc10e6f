package skew

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Errors a caller tells apart.
var (
	// ErrInput: the numbers cannot make a plan (the error says which).
	ErrInput = errors.New("skew: invalid input")
)

// Limits on what one plan covers; the endpoint refuses more.
const (
	MaxRanks  = 4096
	MaxLayers = 1024
	MaxStages = 128
	// MaxGlobalBatch bounds the global batch (in micro-batches or samples).
	MaxGlobalBatch = 1 << 24
)

// Shares splits a global batch of global units (samples or micro-batches)
// across ranks in proportion to their throughputs (units per second), as
// integers that sum exactly to global, by the largest-remainder method.
//
// Every rank keeps at least one unit. A running data-parallel job cannot drop
// a rank without re-forming its process group, and a rank with no data
// still takes part in every gradient exchange, so "exclude the slow rank" is
// not a plan the job can apply in place; giving it the minimum is. A rank
// whose throughput is unknown (zero, negative or not finite) is given the
// median of the known ones, so that a missing report neither starves nor
// floods it. global must be at least len(throughput).
func Shares(throughput []float64, global int) ([]int, error) {
	n := len(throughput)
	switch {
	case n == 0:
		return nil, fmt.Errorf("%w: no ranks", ErrInput)
	case n > MaxRanks:
		return nil, fmt.Errorf("%w: %d ranks, at most %d", ErrInput, n, MaxRanks)
	case global < n:
		return nil, fmt.Errorf("%w: global batch %d is smaller than the %d ranks (each needs at least 1)", ErrInput, global, n)
	case global > MaxGlobalBatch:
		return nil, fmt.Errorf("%w: global batch %d over %d", ErrInput, global, MaxGlobalBatch)
	}
	thr := fillUnknown(throughput)
	// Give every rank its minimum of 1, then split the rest in proportion.
	// Proportional to thr but with the floor of 1 taken first, a slow rank
	// whose ideal share is below 1 gets exactly 1 and the others share the
	// remainder by their throughput.
	shares := make([]int, n)
	rest := global - n
	total := 0.0
	for _, t := range thr {
		total += t
	}
	if rest == 0 {
		for i := range shares {
			shares[i] = 1
		}
		return shares, nil
	}
	// Ideal real shares x_i = global*t_i/total, clamped below at 1 and the
	// clamped mass taken from the others (water-filling), then rounded by
	// largest remainder.
	ideal := waterfill(thr, float64(global))
	type rem struct {
		i int
		r float64
	}
	rems := make([]rem, n)
	sum := 0
	for i, x := range ideal {
		f := math.Floor(x)
		if f < 1 {
			f = 1
		}
		shares[i] = int(f)
		sum += shares[i]
		rems[i] = rem{i, x - f}
	}
	// Largest remainders first; ties to the faster rank, then the lower rank.
	sort.Slice(rems, func(a, b int) bool {
		if rems[a].r != rems[b].r {
			return rems[a].r > rems[b].r
		}
		if thr[rems[a].i] != thr[rems[b].i] {
			return thr[rems[a].i] > thr[rems[b].i]
		}
		return rems[a].i < rems[b].i
	})
	for k := 0; sum < global; k = (k + 1) % n {
		shares[rems[k].i]++
		sum++
	}
	// Floors never overshoot (sum of floors ≤ sum of ideals = global, and
	// the ideal is ≥ 1 wherever the floor was raised to 1), so sum ≤ global.
	return shares, nil
}

// waterfill returns real shares proportional to thr that sum to global, with
// every share at least 1.
func waterfill(thr []float64, global float64) []float64 {
	n := len(thr)
	x := make([]float64, n)
	fixed := make([]bool, n)
	for {
		free, budget := 0.0, global
		for i := range thr {
			if fixed[i] {
				budget--
			} else {
				free += thr[i]
			}
		}
		changed := false
		for i := range thr {
			if fixed[i] {
				x[i] = 1
				continue
			}
			x[i] = budget * thr[i] / free
			if x[i] < 1 {
				fixed[i], changed = true, true
			}
		}
		if !changed {
			return x
		}
	}
}

func fillUnknown(thr []float64) []float64 {
	var known []float64
	for _, t := range thr {
		if t > 0 && !math.IsInf(t, 0) && !math.IsNaN(t) {
			known = append(known, t)
		}
	}
	med := 1.0
	if len(known) > 0 {
		med = median(known)
	}
	out := make([]float64, len(thr))
	for i, t := range thr {
		if t > 0 && !math.IsInf(t, 0) && !math.IsNaN(t) {
			out[i] = t
		} else {
			out[i] = med
		}
	}
	return out
}

// StepSeconds predicts a synchronous step's time: the slowest rank's
// shares[i]/throughput[i]. Unknown throughputs count as the median.
func StepSeconds(shares []int, throughput []float64) float64 {
	thr := fillUnknown(throughput)
	worst := 0.0
	for i, s := range shares {
		if i < len(thr) {
			worst = max(worst, float64(s)/thr[i])
		}
	}
	return worst
}

// EqualShares splits global as evenly as possible, the first global%n ranks
// taking one more.
func EqualShares(n, global int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = global / n
		if i < global%n {
			out[i]++
		}
	}
	return out
}

// Plan is a data-parallel rebalancing plan.
type Plan struct {
	// Version grows by one each time the shares change.
	Version int `json:"version"`
	// GlobalBatch is what Shares sum to.
	GlobalBatch int `json:"global_batch"`
	// Shares is each rank's part of the global batch, by rank.
	Shares []int `json:"shares"`
	// LossScale is Shares[i]*n/GlobalBatch: multiply rank i's mean loss by
	// it so that the usual gradient all-reduce average equals the mean over
	// the global batch even though the ranks' batches differ.
	LossScale []float64 `json:"loss_scale"`
	// PredictedStepSeconds is the step time the plan should give, and
	// CurrentStepSeconds the one measured with the shares in use.
	PredictedStepSeconds float64 `json:"predicted_step_seconds"`
	CurrentStepSeconds   float64 `json:"current_step_seconds"`
	// Gain is CurrentStepSeconds/PredictedStepSeconds - 1: the expected
	// rise in training throughput.
	Gain float64 `json:"gain"`
}

// Replan decides whether a job should move to new shares. throughput is by
// rank (units per second, from Assessment.Throughputs), current the shares
// the job used while measured (nil or not summing to global: equal
// shares). The candidate replaces prev only when it beats prev's predicted
// step time by at least minGain (e.g. 0.03 for 3%): each change costs the
// job a re-split of its data loader, and measurement noise alone should not
// make the shares flap. With no usable prev (Version 0, other global batch
// or rank count) the candidate is compared with current instead. It
// returns the plan to serve and whether its shares changed.
func Replan(prev Plan, throughput []float64, current []int, global int, minGain float64) (Plan, bool, error) {
	n := len(throughput)
	if len(current) != n || sum(current) != global {
		current = EqualShares(n, global)
	}
	next, err := Shares(throughput, global)
	if err != nil {
		return prev, false, err
	}
	base := current
	havePrev := prev.Version > 0 && prev.GlobalBatch == global && len(prev.Shares) == n && sum(prev.Shares) == global
	if havePrev {
		base = prev.Shares
	}
	serve, version, changed := next, prev.Version+1, true
	if gain(StepSeconds(base, throughput), StepSeconds(next, throughput)) < minGain || equalInts(next, base) {
		serve = base
		if havePrev {
			version, changed = prev.Version, false
		}
	}
	p := Plan{
		Version: version, GlobalBatch: global, Shares: serve, LossScale: lossScale(serve, global),
		CurrentStepSeconds: StepSeconds(current, throughput), PredictedStepSeconds: StepSeconds(serve, throughput),
	}
	p.Gain = gain(p.CurrentStepSeconds, p.PredictedStepSeconds)
	return p, changed, nil
}

// gain is how much faster after than before: before/after - 1.
func gain(before, after float64) float64 {
	if after <= 0 || before <= 0 {
		return 0
	}
	return before/after - 1
}

func lossScale(shares []int, global int) []float64 {
	out := make([]float64, len(shares))
	for i, s := range shares {
		out[i] = float64(s) * float64(len(shares)) / float64(global)
	}
	return out
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
