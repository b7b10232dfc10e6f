package predictor

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sort"
)

// Memory history groups: how a job's batch size sits among the batch sizes
// its earlier runs used. Each group has its own calibrated margin.
const (
	groupSame     = "same"      // an earlier run used this batch size (or none is known)
	groupOnePoint = "one_point" // one other batch size: the forest gives the shape
	groupInterp   = "interp"    // between two earlier batch sizes
	groupUp       = "extrap_up" // above all earlier batch sizes
	groupDown     = "extrap_down"
)

// bendRatio is how much steeper than the shallowest segment of a history
// the steepest may be for the history to count as straight; groupBent
// marks the others (their margins default to their straight group's).
const (
	bendRatio = 2.0
	groupBent = "_bent"
)

// defaultMargins widen the history's upper bound before calibration has
// anything to go on.
var defaultMargins = map[string]float64{
	groupSame: 0.05, groupOnePoint: 0.5,
	groupInterp + "_2": 0.3, groupInterp + "_3": 0.1, groupInterp + "_4": 0.05,
	groupUp + "_2": 0.4, groupUp + "_3": 0.15, groupUp + "_4": 0.08,
	groupDown + "_2": 0.4, groupDown + "_3": 0.15, groupDown + "_4": 0.08,
}

// memPoint is the median peak of the earlier runs at one batch size, and
// the largest.
type memPoint struct{ batch, mib, top float64 }

// memEstimate is the history's raw estimate before the margin.
type memEstimate struct {
	p50, upper float64
	// cap is the largest peak measured at the next larger batch size,
	// +Inf when there is none or the history does not rise with the batch
	// size (see memCap). No bound, margin included, goes above it.
	cap    float64
	group  string
	points []memPoint
	runs   int
}

// usableMem reports whether an earlier run's peak says what the job needs:
// a run killed for memory only says it needed more than it had.
func usableMem(o Outcome) bool {
	return o.PeakGPUMemMiB > 0 && o.ExitState != "OUT_OF_MEMORY" && !math.IsInf(o.PeakGPUMemMiB, 0)
}

// memFromHistory estimates a job's peak memory from the earlier runs of the
// same job. Memory is close to linear in the batch size for a fixed model
// (weights, gradients and optimizer state are fixed; activations grow with
// the batch), so runs at other batch sizes place the line: between two known
// batch sizes it interpolates between the nearest ones, outside it continues
// the nearest segment. The raw upper bound is the envelope of the steepest
// (going up) or shallowest (going down) segment seen, so that a history that
// bends widens its own bound. shape, when not nil, gives a similar model's
// memory at a batch size (its curve) for the one- and two-point cases.
// Neither estimate goes above the cap (memCap).
func memFromHistory(batch float64, hist []Outcome, shape func(batch float64) float64) (memEstimate, bool) {
	byBatch := map[float64][]float64{}
	var all []float64
	for _, o := range hist {
		if !usableMem(o) {
			continue
		}
		all = append(all, o.PeakGPUMemMiB)
		byBatch[o.Features.BatchSize] = append(byBatch[o.Features.BatchSize], o.PeakGPUMemMiB)
	}
	if len(all) == 0 {
		return memEstimate{}, false
	}
	if same, ok := byBatch[batch]; ok || batch <= 0 {
		if !ok {
			same = all
		}
		return memEstimate{p50: median(same), upper: maxOf(same), cap: math.Inf(1), group: groupSame, runs: len(same)}, true
	}
	var pts []memPoint
	runs := 0
	for b, ms := range byBatch {
		if b > 0 {
			pts = append(pts, memPoint{b, median(ms), maxOf(ms)})
			runs += len(ms)
		}
	}
	if len(pts) == 0 {
		// Runs without a known batch size say nothing about this one's.
		return memEstimate{}, false
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].batch < pts[j].batch })
	e := lineEstimate(batch, pts, shape)
	e.runs = runs
	e.cap = memCap(batch, pts)
	e.p50, e.upper = math.Min(e.p50, e.cap), math.Min(e.upper, e.cap)
	return e, true
}

// memCap returns the largest peak measured at the next batch size above
// batch: peak memory does not fall as the batch grows (activations grow,
// nothing shrinks), so the job cannot need more than a larger batch of the
// same script did. A history whose own peaks (medians) do not rise with the
// batch size contradicts that (a run that failed early, a stale reading)
// and sets no cap: trusting it could cap the bound at a bad low reading.
// pts are sorted by batch size.
func memCap(batch float64, pts []memPoint) float64 {
	for k := 1; k < len(pts); k++ {
		if pts[k].mib <= pts[k-1].mib {
			return math.Inf(1)
		}
	}
	if i := sort.Search(len(pts), func(i int) bool { return pts[i].batch > batch }); i < len(pts) {
		return pts[i].top
	}
	return math.Inf(1)
}

// lineEstimate is memFromHistory's estimate from the median peaks at other
// batch sizes (sorted, at least one), before the cap.
func lineEstimate(batch float64, pts []memPoint, shape func(batch float64) float64) memEstimate {
	e := memEstimate{points: pts}
	if len(pts) == 1 {
		p := pts[0]
		e.p50 = p.mib
		if shape != nil {
			if a, b := shape(batch), shape(p.batch); a > 0 && b > 0 {
				e.p50 = p.mib * a / b
			}
		}
		e.upper, e.group = e.p50, groupOnePoint
		return e
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i].batch > batch })
	var lo, hi memPoint
	switch {
	case i == 0:
		lo, hi, e.group = pts[0], pts[1], groupDown
	case i == len(pts):
		lo, hi, e.group = pts[i-2], pts[i-1], groupUp
	default:
		lo, hi, e.group = pts[i-1], pts[i], groupInterp
	}
	slope := (hi.mib - lo.mib) / (hi.batch - lo.batch)
	e.p50 = lo.mib + slope*(batch-lo.batch)
	smin, smax := math.Inf(1), math.Inf(-1)
	for k := 1; k < len(pts); k++ {
		s := (pts[k].mib - pts[k-1].mib) / (pts[k].batch - pts[k-1].batch)
		smin, smax = math.Min(smin, s), math.Max(smax, s)
	}
	smin = math.Max(smin, 0)
	switch e.group {
	case groupUp:
		e.upper = pts[len(pts)-1].mib + smax*(batch-pts[len(pts)-1].batch)
	case groupDown:
		e.upper = pts[0].mib - smin*(pts[0].batch-batch)
	default:
		e.upper = math.Min(hi.mib, math.Max(lo.mib+smax*(batch-lo.batch), hi.mib-smin*(hi.batch-batch)))
	}
	if shape != nil && len(pts) == 2 {
		// Two points cannot show a bend: the shape (the nearest-named model's curve), scaled from
		// the nearest point, is a second opinion and the bound takes both.
		near := lo
		if math.Abs(hi.batch-batch) < math.Abs(lo.batch-batch) {
			near = hi
		}
		if a, b := shape(batch), shape(near.batch); a > 0 && b > 0 {
			e.upper = math.Max(e.upper, near.mib*a/b)
		}
	}
	e.upper = math.Max(e.upper, e.p50)
	if e.p50 <= 0 {
		// A line falling below zero going down: the smallest run bounds it.
		e.p50 = pts[0].mib * batch / pts[0].batch
		e.upper = math.Max(e.upper, pts[0].mib)
	}
	e.group += "_" + string(rune('0'+min(len(pts), 4)))
	if len(pts) >= 3 && smax > bendRatio*math.Max(smin, 1e-9) {
		// A history whose segments disagree on the slope (a bend, or a
		// run that read a wrong peak) is its own group: its bound is
		// wider already, and its margin need not be charged to
		// histories on a straight line.
		e.group += groupBent
	}
	return e
}

// calPoint is one leave-one-out trial of the history estimate on training
// data: need is actual/upper - 1 (the margin that would have covered it),
// ratio is upper/actual and capRatio cap/actual (+Inf without a cap: the
// bound is min(upper*(1+margin), cap)).
type calPoint struct {
	group       string
	need, ratio float64
	capRatio    float64
}

// minCalPoints is the fewest trials a group needs to get its own margin.
const minCalPoints = 20

// calibrate picks one margin per group so that at most underRate of the
// trials would be under-predicted, spending that budget where covering
// costs the most reservation: it minimises the mean over-reservation
// (min(upper*(1+margin), cap)/actual - 1, the cap counted) subject to the
// under-rate, by a Lagrangian search over the price of one miss. Groups
// with too few trials keep their default.
//
// The misses are counted as a new job would meet them, not as the trials
// did: a margin that leaves k of a group's n trials uncovered leaves an
// exchangeable new one uncovered with probability (k+1)/(n+1) (the
// finite-sample correction of split conformal prediction), so the group is
// charged n(k+1)/(n+1) misses. Counting k alone fits each margin to the
// order statistic that just meets the budget, and held-out jobs then miss
// more often than underRate says (1.8% against 1.5% on the timm data
// before this correction). The correction charges most where a group is
// small and its quantile least certain.
func calibrate(points []calPoint, underRate float64) map[string]float64 {
	margins := map[string]float64{}
	for g, m := range defaultMargins {
		margins[g] = m
	}
	byGroup := map[string][]calPoint{}
	for _, p := range points {
		if math.IsNaN(p.need) || math.IsInf(p.need, -1) || !(p.ratio > 0) || math.IsInf(p.ratio, 0) || math.IsNaN(p.capRatio) {
			continue
		}
		if p.capRatio == 0 {
			p.capRatio = math.Inf(1)
		}
		if p.capRatio < 1 {
			// The job needed more than the cap: no margin covers it.
			p.need = math.Inf(1)
		}
		p.need = math.Max(p.need, 0)
		byGroup[p.group] = append(byGroup[p.group], p)
	}
	const maxMargin = 3.0
	// A group's options: for each candidate margin (0 and each trial's
	// need up to maxMargin), the summed bound/actual and the misses.
	type option struct {
		margin, cost, misses float64
	}
	options := map[string][]option{}
	total := 0
	for name, ps := range byGroup {
		n := len(ps)
		if n < minCalPoints {
			continue
		}
		total += n
		needs := make([]float64, n)
		for i, p := range ps {
			needs[i] = p.need
		}
		slices.Sort(needs)
		// Trials in the order their cap starts to bind as the margin grows.
		binds := func(p calPoint) float64 { return p.capRatio/p.ratio - 1 }
		slices.SortFunc(ps, func(a, b calPoint) int { return cmp.Compare(binds(a), binds(b)) })
		free, capped, c := 0.0, 0.0, 0
		for _, p := range ps {
			free += p.ratio
		}
		for k := -1; k < n; k++ {
			d := 0.0
			if k >= 0 {
				d = needs[k]
			}
			if d > maxMargin {
				break
			}
			for ; c < n && binds(ps[c]) <= d; c++ {
				free -= ps[c].ratio
				capped += ps[c].capRatio
			}
			// Covered: needs <= d.
			miss := n - sort.SearchFloat64s(needs, math.Nextafter(d, math.Inf(1)))
			options[name] = append(options[name], option{margin: d, cost: free*(1+d) + capped,
				misses: float64(n) * float64(miss+1) / float64(n+1)})
		}
	}
	if total == 0 {
		return margins
	}
	// Groups in a fixed order: the misses are fractions, and their sum
	// must not depend on map order, or neither would the margins.
	names := slices.Sorted(maps.Keys(options))
	// choose returns each group's margin at miss price lambda, and the misses.
	choose := func(lambda float64) (map[string]float64, float64) {
		out, misses := map[string]float64{}, 0.0
		for _, name := range names {
			opts := options[name]
			best := opts[0]
			for _, o := range opts[1:] {
				if o.cost+lambda*o.misses < best.cost+lambda*best.misses {
					best = o
				}
			}
			out[name], misses = best.margin, misses+best.misses
		}
		return out, misses
	}
	budget := underRate * float64(total)
	lo, hi := 0.0, 1e6
	for range 60 {
		mid := (lo + hi) / 2
		if _, m := choose(mid); m <= budget {
			hi = mid
		} else {
			lo = mid
		}
	}
	chosen, _ := choose(hi)
	for g, m := range chosen {
		margins[g] = m
	}
	return margins
}
