package live

import "sort"

// SiteFactorChange is one SiteFactor to write.
type SiteFactorChange struct {
	JobID int64
	Value int64
	// Previous is the value replaced; nil when it was unknown or outside
	// the range.
	Previous *int64
	Rank     int // 0-based position in the order
}

// AssignSiteFactors gives the jobs of order (best first) SiteFactor values
// in [0, max] that fall along the order, changing as few as it can.
//
// Jobs that follow each other in the order with rising job ids form a run
// and share one value: Slurm breaks ties of priority by job id, so the run
// keeps its order without values of its own, and a job joining the end of a
// run (the usual case: a new job among equals, ordered by submission) costs
// one write and no renumbering. Runs get strictly falling values: the
// longest subsequence of runs whose current values already fall with room
// for the runs between them is kept, and the others are spread evenly over
// the gaps, which leaves room for later insertions. With more runs than
// values, neighbours share values (buckets). It returns only the changes,
// in order.
func AssignSiteFactors(order []int64, cur map[int64]int64, max int64) []SiteFactorChange {
	n := len(order)
	if n == 0 || max < 0 {
		return nil
	}
	// Runs: starts[r] is the first index of run r.
	var starts []int
	for i := range order {
		if i == 0 || order[i] <= order[i-1] {
			starts = append(starts, i)
		}
	}
	nr := len(starts)
	end := func(r int) int {
		if r+1 < nr {
			return starts[r+1]
		}
		return n
	}
	// A run's current value: the most common in-range value of its members.
	old := make([]int64, nr)
	known := make([]bool, nr)
	for r := range nr {
		counts := map[int64]int{}
		best, bestN := int64(0), 0
		for _, id := range order[starts[r]:end(r)] {
			if v, ok := cur[id]; ok && v >= 0 && v <= max {
				counts[v]++
				if c := counts[v]; c > bestN || (c == bestN && v > best) {
					best, bestN = v, c
				}
			}
		}
		old[r], known[r] = best, bestN > 0
	}
	runv := make([]int64, nr)
	if int64(nr) > max+1 {
		for r := range runv {
			runv[r] = max - int64(r)*(max+1)/int64(nr)
		}
	} else {
		assignRuns(old, known, max, runv)
	}
	newv := make([]int64, n)
	for r := range nr {
		for i := starts[r]; i < end(r); i++ {
			newv[i] = runv[r]
		}
	}
	return changes(order, cur, newv)
}

// assignRuns fills out with strictly falling values in [0, max] for n
// runs, keeping as many of the known old values as it can.
//
// Runs i < j can both keep their values when old[i] - old[j] >= j - i (room
// for the runs between), that is w[i] >= w[j] with w = old + index; the
// first kept run needs room above it (w <= max), the last below it
// (w >= n-1). So the kept runs are a longest non-increasing subsequence of
// w among the runs within those bounds.
func assignRuns(old []int64, known []bool, max int64, out []int64) {
	n := len(old)
	type cand struct {
		i int
		w int64
	}
	var cands []cand
	for i := range old {
		if known[i] {
			if w := old[i] + int64(i); w >= int64(n-1) && w <= max {
				cands = append(cands, cand{i, w})
			}
		}
	}
	// Longest non-increasing subsequence of w (patience sorting).
	var tails []int // tails[k]: index into cands ending a run of length k+1
	prev := make([]int, len(cands))
	for ci, c := range cands {
		k := sort.Search(len(tails), func(k int) bool { return cands[tails[k]].w < c.w })
		prev[ci] = -1
		if k > 0 {
			prev[ci] = tails[k-1]
		}
		if k == len(tails) {
			tails = append(tails, ci)
		} else {
			tails[k] = ci
		}
	}
	keep := make([]bool, n)
	if len(tails) > 0 {
		for ci := tails[len(tails)-1]; ci >= 0; ci = prev[ci] {
			keep[cands[ci].i] = true
		}
	}
	// Fill the gaps between kept values (virtual bounds max+1 and -1).
	hiIx, hiV := -1, max+1
	for i := 0; i <= n; i++ {
		if i < n && !keep[i] {
			continue
		}
		loV := int64(-1)
		if i < n {
			loV = old[i]
			out[i] = loV
		}
		k := int64(i - hiIx - 1)
		for t := int64(1); t <= k; t++ {
			out[hiIx+int(t)] = hiV - t*(hiV-loV)/(k+1)
		}
		hiIx, hiV = i, loV
	}
}

func changes(order []int64, cur map[int64]int64, newv []int64) []SiteFactorChange {
	var out []SiteFactorChange
	for i, id := range order {
		old, ok := cur[id]
		if ok && old == newv[i] {
			continue
		}
		c := SiteFactorChange{JobID: id, Value: newv[i], Rank: i}
		if ok {
			o := old
			c.Previous = &o
		}
		out = append(out, c)
	}
	return out
}
