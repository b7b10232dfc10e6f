package policy

import (
	"math"
	"slices"
)

// MatchJob is one job in a type-matching problem: its GPUs and the value of
// running it on each GPU type (0: it may not run there).
type MatchJob struct {
	GPUs  int
	Value []float64
}

// MatchValue returns the total value of an assignment (type per job, -1 for
// none), or -1 if it exceeds a capacity or uses a type a job may not run on.
func MatchValue(jobs []MatchJob, capacity []int, assign []int) float64 {
	used := make([]int, len(capacity))
	v := 0.0
	for i, t := range assign {
		if t < 0 {
			continue
		}
		if jobs[i].Value[t] <= 0 {
			return -1
		}
		used[t] += jobs[i].GPUs
		if used[t] > capacity[t] {
			return -1
		}
		v += jobs[i].Value[t]
	}
	return v
}

// Match assigns jobs to GPU types (or to none, -1) so that the total value
// is as high as it can find within the types' capacities (GPUs).
//
// It starts greedily (job-type pairs by value per GPU, best first) and then
// improves by exchanges: it looks for the best chain of moves "a job leaves
// type a for b, another leaves b for c, ..." that ends on a type with room
// or closes into a cycle, where "no type" is one more node, and applies it
// while one gains. The best job for each move depends only on the move's two
// ends, so with few types the search is exhaustive and cheap. A b-matching
// with no improving cycle or chain is optimal, so for jobs of one GPU each
// the result is exact; chains only move jobs of equal size, so with mixed
// sizes it is a heuristic (TestMatchGap measures it against MatchExact).
func Match(jobs []MatchJob, capacity []int) []int {
	var m matcher
	return slices.Clone(m.match(jobs, capacity))
}

// matcher holds Match's buffers between calls.
type matcher struct {
	assign []int
	left   []int
	pairs  []pair
	sizes  []int
	// best[(from*nn+to)*len(sizes)+c] is the best move of a job of size
	// class c (the one that gains most).
	best     []move
	nt, nn   int
	cur, top chain
}

type pair struct {
	i, t int
	d    float64
}

type move struct {
	gain float64
	job  int
}

// maxChain bounds the nodes in an exchange chain (types + "none").
const maxChain = 4

func (m *matcher) match(jobs []MatchJob, capacity []int) []int {
	nt := len(capacity)
	m.assign = m.assign[:0]
	for range jobs {
		m.assign = append(m.assign, -1)
	}
	m.left = append(m.left[:0], capacity...)
	m.pairs = m.pairs[:0]
	for i, j := range jobs {
		for t, v := range j.Value {
			if v > 0 && j.GPUs > 0 {
				m.pairs = append(m.pairs, pair{i, t, v / float64(j.GPUs)})
			}
		}
	}
	slices.SortFunc(m.pairs, func(a, b pair) int {
		switch {
		case a.d > b.d:
			return -1
		case a.d < b.d:
			return 1
		case a.i != b.i:
			return a.i - b.i
		}
		return a.t - b.t
	})
	for _, p := range m.pairs {
		if g := jobs[p.i].GPUs; m.assign[p.i] < 0 && m.left[p.t] >= g {
			m.assign[p.i] = p.t
			m.left[p.t] -= g
		}
	}
	if len(jobs) == 0 || nt == 0 {
		return m.assign
	}
	// Size classes.
	m.sizes = m.sizes[:0]
	for _, j := range jobs {
		if !slices.Contains(m.sizes, j.GPUs) {
			m.sizes = append(m.sizes, j.GPUs)
		}
	}
	m.nn, m.nt = nn(nt), nt
	nc := len(m.sizes)
	if len(m.best) != m.nn*m.nn*nc {
		m.best = make([]move, m.nn*m.nn*nc)
	}
	for range 4*len(jobs) + 16 {
		for k := range m.best {
			m.best[k] = move{math.Inf(-1), -1}
		}
		for i, j := range jobs {
			c := slices.Index(m.sizes, j.GPUs)
			from := m.assign[i]
			vf := 0.0
			if from < 0 {
				from = nt
			} else {
				vf = j.Value[from]
			}
			for to := 0; to < m.nn; to++ {
				if to == from {
					continue
				}
				vt := 0.0
				if to < nt {
					if vt = j.Value[to]; vt <= 0 {
						continue
					}
				}
				if e := &m.best[(from*m.nn+to)*nc+c]; vt-vf > e.gain {
					*e = move{vt - vf, i}
				}
			}
		}
		m.top = chain{gain: 1e-12}
		for start := 0; start < m.nn; start++ {
			m.cur.nodes[0] = start
			m.search(1, 0)
		}
		if m.top.edges == 0 {
			break
		}
		// Each move's job was chosen for its own edge; edges leave distinct
		// nodes, so the jobs are distinct.
		var movers [maxChain]int
		for k := range m.top.edges {
			movers[k] = m.best[(m.top.nodes[k]*m.nn+m.top.nodes[k+1])*nc+m.top.class[k]].job
		}
		for k := range m.top.edges {
			to := m.top.nodes[k+1]
			g := m.sizes[m.top.class[k]]
			if from := m.top.nodes[k]; from < nt {
				m.left[from] += g
			}
			if to < nt {
				m.left[to] -= g
			} else {
				to = -1
			}
			m.assign[movers[k]] = to
		}
	}
	return m.assign
}

func nn(nt int) int { return nt + 1 } // node nt is "no type"

// chain is a sequence of moves: the job of class class[k] moves from
// nodes[k] to nodes[k+1]; a cycle repeats nodes[0] at the end.
type chain struct {
	nodes [maxChain + 1]int
	class [maxChain]int
	edges int
	gain  float64
}

// search extends m.cur (depth nodes so far, gain acc) and keeps the best
// feasible chain in m.top. A chain must leave room on every type it passes:
// a node takes the size of the job coming in and gives the size going out.
// Chains that mix job sizes are at most two moves long, which keeps the
// search small.
func (m *matcher) search(depth int, acc float64) {
	nc := len(m.sizes)
	last := m.cur.nodes[depth-1]
	in := 0 // the GPUs arriving at last
	if depth >= 2 {
		in = m.sizes[m.cur.class[depth-2]]
	}
	mixed := false
	for k := 1; k < depth-1; k++ {
		mixed = mixed || m.cur.class[k] != m.cur.class[0]
	}
	for next := 0; next < m.nn; next++ {
		closing := depth >= 2 && next == m.cur.nodes[0]
		if !closing && slices.Contains(m.cur.nodes[:depth], next) {
			continue
		}
		for c := range nc {
			e := m.best[(last*m.nn+next)*nc+c]
			if e.job < 0 {
				continue
			}
			out := m.sizes[c]
			if depth >= 2 && last < m.nt && m.left[last]-in+out < 0 {
				continue // last cannot take the job coming in
			}
			same := !mixed && (depth == 1 || c == m.cur.class[0])
			if !same && depth > 2 {
				continue
			}
			gain := acc + e.gain
			m.cur.class[depth-1] = c
			m.cur.nodes[depth] = next
			if closing {
				first := m.cur.nodes[0]
				if (first == m.nt || m.left[first]+m.sizes[m.cur.class[0]]-out >= 0) && gain > m.top.gain {
					m.top, m.top.edges, m.top.gain = m.cur, depth, gain
				}
				continue
			}
			if (next == m.nt || m.left[next] >= out) && gain > m.top.gain {
				m.top, m.top.edges, m.top.gain = m.cur, depth, gain
			}
			if depth+1 <= min(m.nn, maxChain) {
				m.search(depth+1, gain)
			}
		}
	}
}

// MatchExact returns an assignment of the highest total value by exhaustive
// search; it is meant for small instances (tests).
func MatchExact(jobs []MatchJob, capacity []int) []int {
	best := make([]int, len(jobs))
	cur := make([]int, len(jobs))
	for i := range best {
		best[i] = -1
	}
	left := append([]int(nil), capacity...)
	bestV := 0.0
	var rec func(i int, v float64)
	rec = func(i int, v float64) {
		if i == len(jobs) {
			if v > bestV {
				bestV = v
				copy(best, cur)
			}
			return
		}
		cur[i] = -1
		rec(i+1, v)
		for t := range capacity {
			if jobs[i].Value[t] > 0 && left[t] >= jobs[i].GPUs {
				left[t] -= jobs[i].GPUs
				cur[i] = t
				rec(i+1, v+jobs[i].Value[t])
				left[t] += jobs[i].GPUs
			}
		}
		cur[i] = -1
	}
	rec(0, 0)
	return best
}
