// Package forest is a quantile regression forest (Meinshausen 2006): an
// ensemble of regression trees grown on bootstrap samples whose leaves keep
// the training targets that fell into them, so that a prediction is a whole
// conditional distribution and any quantile of it can be read off.
//
//	rows [][]float64, targets []float64 ──Fit──> *Forest ──Quantiles(x, 0.5, 0.95)──> []float64
//	*Forest ──MarshalBinary──> bytes ──UnmarshalBinary──> *Forest (bounds-checked, fuzzed)
//
// Splits are searched on pre-computed bins (at most Config.Bins per feature,
// quantile edges), which keeps training linear in the number of rows per
// level: 100,000 rows train in seconds on two cores. The package is pure and
// deterministic for a given Config.Seed, whatever the number of workers.
package forest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
)

// Config tunes training. The zero value gets the defaults noted per field.
type Config struct {
	Trees       int    // number of trees (default 100)
	MinLeaf     int    // fewest bootstrap rows in a leaf (default 5)
	MaxFeatures int    // features tried per split (default max(1, p/3))
	MaxSamples  int    // bootstrap sample size cap per tree (default 20,000)
	MaxDepth    int    // default 24
	Bins        int    // histogram bins per feature, 2..256 (default 64)
	Seed        uint64 // randomness, for reproducible forests
	Workers     int    // parallel tree builders (default GOMAXPROCS)
}

func (c Config) withDefaults(p int) Config {
	if c.Trees <= 0 {
		c.Trees = 100
	}
	if c.MinLeaf <= 0 {
		c.MinLeaf = 5
	}
	if c.MaxFeatures <= 0 || c.MaxFeatures > p {
		c.MaxFeatures = max(1, p/3)
	}
	if c.MaxSamples <= 0 {
		c.MaxSamples = 20000
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = 24
	}
	if c.Bins < 2 || c.Bins > 256 {
		c.Bins = 64
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

// Forest is a trained quantile regression forest.
type Forest struct {
	NFeatures int
	Trees     []Tree
}

// Tree is one regression tree. Node 0 is the root.
type Tree struct {
	Nodes []Node
}

// Node is an inner node (Feature >= 0: x[Feature] <= Threshold goes Left,
// anything else, NaN included, goes Right) or a leaf (Feature < 0) holding the
// sorted training targets that reached it.
type Node struct {
	Feature     int32
	Threshold   float64
	Left, Right int32
	Values      []float64
}

// ErrNoData is returned by Fit when there is nothing to learn from.
var ErrNoData = errors.New("forest: no training rows")

// Fit grows a forest on rows (each of the same length) and their targets.
// NaN and infinite targets are rejected; NaN features are allowed.
func Fit(rows [][]float64, y []float64, cfg Config) (*Forest, error) {
	if len(rows) == 0 || len(rows) != len(y) {
		return nil, fmt.Errorf("%w (%d rows, %d targets)", ErrNoData, len(rows), len(y))
	}
	p := len(rows[0])
	if p == 0 {
		return nil, fmt.Errorf("forest: rows have no features: %w", ErrNoData)
	}
	for i, r := range rows {
		if len(r) != p {
			return nil, fmt.Errorf("forest: row %d has %d features, want %d", i, len(r), p)
		}
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return nil, fmt.Errorf("forest: target %d is %v", i, y[i])
		}
	}
	cfg = cfg.withDefaults(p)
	b := newBinned(rows, cfg.Bins)
	f := &Forest{NFeatures: p, Trees: make([]Tree, cfg.Trees)}
	var wg sync.WaitGroup
	next := make(chan int)
	for range cfg.Workers {
		wg.Go(func() {
			g := grower{b: b, y: y, cfg: cfg}
			for t := range next {
				f.Trees[t] = g.grow(rand.New(rand.NewPCG(cfg.Seed, uint64(t)+1)))
			}
		})
	}
	for t := range cfg.Trees {
		next <- t
	}
	close(next)
	wg.Wait()
	return f, nil
}

// binned holds each feature's bin edges and every row's bin per feature.
type binned struct {
	n, p  int
	edges [][]float64 // per feature, ascending; bin(x) = #edges < x
	bins  []uint8     // feature-major: bins[f*n+i]
}

func newBinned(rows [][]float64, nbins int) *binned {
	n, p := len(rows), len(rows[0])
	b := &binned{n: n, p: p, edges: make([][]float64, p), bins: make([]uint8, n*p)}
	col := make([]float64, 0, n)
	for f := range p {
		col = col[:0]
		for _, r := range rows {
			if !math.IsNaN(r[f]) {
				col = append(col, r[f])
			}
		}
		slices.Sort(col)
		uniq := slices.Compact(slices.Clone(col))
		var edges []float64
		if len(uniq) <= nbins {
			for i := 1; i < len(uniq); i++ {
				edges = append(edges, uniq[i-1]+(uniq[i]-uniq[i-1])/2)
			}
		} else {
			for k := 1; k < nbins; k++ {
				i := k * len(col) / nbins
				e := col[i-1] + (col[i]-col[i-1])/2
				if len(edges) == 0 || e > edges[len(edges)-1] {
					edges = append(edges, e)
				}
			}
		}
		b.edges[f] = edges
		for i, r := range rows {
			b.bins[f*n+i] = binOf(edges, r[f])
		}
	}
	return b
}

// binOf puts NaN in the last bin, past every edge, so that it goes right.
func binOf(edges []float64, x float64) uint8 {
	if math.IsNaN(x) {
		return uint8(len(edges))
	}
	return uint8(sort.SearchFloat64s(edges, x))
}

type grower struct {
	b   *binned
	y   []float64
	cfg Config
	// scratch
	cnt  [256]float64
	sum  [256]float64
	feat []int
}

type task struct {
	node       int32
	lo, hi     int // idx[lo:hi]
	depth      int
	sum, sumsq float64
}

func (g *grower) grow(rng *rand.Rand) Tree {
	n := min(g.b.n, g.cfg.MaxSamples)
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(rng.IntN(g.b.n))
	}
	if len(g.feat) != g.b.p {
		g.feat = make([]int, g.b.p)
	}
	var t Tree
	t.Nodes = append(t.Nodes, Node{})
	s, ss := 0.0, 0.0
	for _, i := range idx {
		s += g.y[i]
		ss += g.y[i] * g.y[i]
	}
	stack := []task{{node: 0, lo: 0, hi: n, sum: s, sumsq: ss}}
	for len(stack) > 0 {
		tk := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		part := idx[tk.lo:tk.hi]
		feat, bin, ls, lss, ok := g.bestSplit(rng, part, tk)
		if !ok || tk.depth >= g.cfg.MaxDepth {
			vals := make([]float64, len(part))
			for k, i := range part {
				vals[k] = g.y[i]
			}
			slices.Sort(vals)
			t.Nodes[tk.node] = Node{Feature: -1, Values: summarise(vals)}
			continue
		}
		// Partition part: bins <= bin first.
		col := g.b.bins[feat*g.b.n:]
		m := 0
		for k, i := range part {
			if col[i] <= bin {
				part[k], part[m] = part[m], part[k]
				m++
			}
		}
		left, right := int32(len(t.Nodes)), int32(len(t.Nodes)+1)
		t.Nodes = append(t.Nodes, Node{}, Node{})
		t.Nodes[tk.node] = Node{Feature: int32(feat), Threshold: g.b.edges[feat][bin], Left: left, Right: right}
		stack = append(stack,
			task{node: left, lo: tk.lo, hi: tk.lo + m, depth: tk.depth + 1, sum: ls, sumsq: lss},
			task{node: right, lo: tk.lo + m, hi: tk.hi, depth: tk.depth + 1, sum: tk.sum - ls, sumsq: tk.sumsq - lss})
	}
	return t
}

// MaxLeafValues bounds what a leaf keeps: a larger leaf keeps this many
// evenly spaced order statistics of its targets instead, each standing for
// an equal share, so that prediction cost does not grow with the data.
const MaxLeafValues = 16

// summarise returns sorted vals, or MaxLeafValues evenly spaced order
// statistics (the midpoints of equal shares) of them.
func summarise(vals []float64) []float64 {
	if len(vals) <= MaxLeafValues {
		return vals
	}
	out := make([]float64, MaxLeafValues)
	for k := range out {
		out[k] = vals[(2*k+1)*len(vals)/(2*MaxLeafValues)]
	}
	return out
}

// bestSplit returns the feature and bin (go left when bin <= it) that most
// reduce the squared error, with the left side's sum and sum of squares.
func (g *grower) bestSplit(rng *rand.Rand, part []int32, tk task) (int, uint8, float64, float64, bool) {
	n := float64(len(part))
	minLeaf := float64(g.cfg.MinLeaf)
	if n < 2*minLeaf {
		return 0, 0, 0, 0, false
	}
	parentSSE := tk.sumsq - tk.sum*tk.sum/n
	if parentSSE <= 1e-12*math.Max(1, tk.sumsq) {
		return 0, 0, 0, 0, false
	}
	for i := range g.feat {
		g.feat[i] = i
	}
	rng.Shuffle(len(g.feat), func(i, j int) { g.feat[i], g.feat[j] = g.feat[j], g.feat[i] })
	bestGain, bestF, bestBin := 0.0, -1, uint8(0)
	var bestLS float64
	for _, f := range g.feat[:g.cfg.MaxFeatures] {
		nb := len(g.b.edges[f]) + 1
		if nb < 2 {
			continue
		}
		clear(g.cnt[:nb])
		clear(g.sum[:nb])
		col := g.b.bins[f*g.b.n:]
		for _, i := range part {
			k := col[i]
			g.cnt[k]++
			g.sum[k] += g.y[i]
		}
		lc, lsum := 0.0, 0.0
		for k := 0; k < nb-1; k++ {
			lc += g.cnt[k]
			lsum += g.sum[k]
			rc := n - lc
			if lc < minLeaf {
				continue
			}
			if rc < minLeaf {
				break
			}
			if g.cnt[k] == 0 && k > 0 {
				continue // same partition as the previous bin
			}
			rsum := tk.sum - lsum
			// SSE reduction = lsum²/lc + rsum²/rc - sum²/n
			gain := lsum*lsum/lc + rsum*rsum/rc - tk.sum*tk.sum/n
			if gain > bestGain+1e-12 {
				bestGain, bestF, bestBin, bestLS = gain, f, uint8(k), lsum
			}
		}
	}
	if bestF < 0 {
		return 0, 0, 0, 0, false
	}
	lss := 0.0
	col := g.b.bins[bestF*g.b.n:]
	for _, i := range part {
		if col[i] <= bestBin {
			lss += g.y[i] * g.y[i]
		}
	}
	return bestF, bestBin, bestLS, lss, true
}

// leaf returns the leaf x falls into.
func (t *Tree) leaf(x []float64) *Node {
	n := &t.Nodes[0]
	for n.Feature >= 0 {
		if x[n.Feature] <= n.Threshold {
			n = &t.Nodes[n.Left]
		} else {
			n = &t.Nodes[n.Right]
		}
	}
	return n
}

// Quantiles returns the forest's conditional quantiles of the target at x,
// one per q (each in [0, 1]): the weighted empirical distribution of the
// training targets sharing a leaf with x, each weighted by one over its
// leaf's size (Meinshausen's estimator). x must have NFeatures values.
//
// The quantile is found by bisection on the mixture's distribution
// function, sum over trees of (values <= y)/(leaf size), which costs
// trees x log(leaf size) per step whatever the leaves hold.
func (f *Forest) Quantiles(x []float64, qs ...float64) []float64 {
	out := make([]float64, len(qs))
	if len(x) != f.NFeatures || len(f.Trees) == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	var leavesBuf [128][]float64
	leaves := leavesBuf[:0]
	lo, hi := math.Inf(1), math.Inf(-1)
	for t := range f.Trees {
		l := f.Trees[t].leaf(x)
		if len(l.Values) == 0 {
			continue
		}
		leaves = append(leaves, l.Values)
		lo = math.Min(lo, l.Values[0])
		hi = math.Max(hi, l.Values[len(l.Values)-1])
	}
	if len(leaves) == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	if total := totalLen(leaves); total <= smallMixture {
		return sortedQuantiles(leaves, total, qs, out)
	}
	cdf := func(y float64) float64 {
		s := 0.0
		for _, v := range leaves {
			k, _ := slices.BinarySearch(v, math.Nextafter(y, math.Inf(1)))
			s += float64(k) / float64(len(v))
		}
		return s / float64(len(leaves))
	}
	for i, q := range qs {
		a, b := lo, hi
		if cdf(a) >= q {
			out[i] = a
			continue
		}
		// Invariant: cdf(a) < q <= cdf(b).
		for range bisections {
			mid := a + (b-a)/2
			if mid <= a || mid >= b {
				break
			}
			if cdf(mid) >= q {
				b = mid
			} else {
				a = mid
			}
		}
		out[i] = b
	}
	return out
}

const (
	// smallMixture is the most leaf values merged by sorting; past it
	// Quantiles bisects, which does not grow with the leaves.
	smallMixture = 2048
	// bisections narrow the quantile to 2^-30 of the leaves' range.
	bisections = 30
)

func totalLen(leaves [][]float64) int {
	n := 0
	for _, v := range leaves {
		n += len(v)
	}
	return n
}

type weighted struct{ y, w float64 }

var pool = sync.Pool{New: func() any { s := make([]weighted, 0, smallMixture); return &s }}

// sortedQuantiles merges small leaves by sorting their weighted values.
func sortedQuantiles(leaves [][]float64, total int, qs, out []float64) []float64 {
	bp := pool.Get().(*[]weighted)
	buf := (*bp)[:0]
	for _, v := range leaves {
		w := 1 / float64(len(v))
		for _, y := range v {
			buf = append(buf, weighted{y, w})
		}
	}
	slices.SortFunc(buf, func(a, b weighted) int {
		// Leaf values are never NaN (Fit rejects NaN targets, decoding too).
		if a.y < b.y {
			return -1
		}
		if a.y > b.y {
			return 1
		}
		return 0
	})
	sum := 0.0
	for _, e := range buf {
		sum += e.w
	}
	for i, q := range qs {
		target, acc := q*sum, 0.0
		out[i] = buf[len(buf)-1].y
		for _, e := range buf {
			acc += e.w
			if acc >= target-1e-12 {
				out[i] = e.y
				break
			}
		}
	}
	*bp = buf
	pool.Put(bp)
	return out
}

// Mean returns the forest's mean prediction at x (the ordinary random forest).
func (f *Forest) Mean(x []float64) float64 {
	if len(x) != f.NFeatures || len(f.Trees) == 0 {
		return math.NaN()
	}
	s, k := 0.0, 0
	for t := range f.Trees {
		l := f.Trees[t].leaf(x)
		if len(l.Values) == 0 {
			continue
		}
		m := 0.0
		for _, v := range l.Values {
			m += v
		}
		s += m / float64(len(l.Values))
		k++
	}
	return s / float64(k)
}
