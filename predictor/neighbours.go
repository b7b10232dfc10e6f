package predictor

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
)

// Nearest-name memory: a model never seen is often a close relative of one
// that was (deit3_large_patch16_384 of vit_large_patch16_384, resnetrs101 of
// resnet101d), and its name says so. Training keeps the memory curve of
// every model it saw (the median peak per batch size); a cold prediction
// finds the training model whose name is most alike (Jaccard similarity of
// character trigrams and '_'-separated tokens) and gives the memory forest
// that model's peak at the job's batch size, and the similarity, as two
// more features. The forest learns how far to trust it: in training each
// model's neighbour is looked up among the other families only (ModelFamily),
// which is the situation of a model nobody has run, so the forest never
// learns to trust a neighbour more than a stranger deserves.

// MaxNeighbourModels bounds the models a Model keeps curves of (the most
// run ones), which bounds the model file and the cost of a lookup.
const MaxNeighbourModels = 4096

// NeighbourCurve is one model's measured memory: its name and the median
// peak at each batch size it ran with, batch sizes ascending.
type NeighbourCurve struct {
	Name  string    `json:"name"`
	Batch []float64 `json:"batch"`
	MiB   []float64 `json:"mib"`
}

// neighbours indexes curves by name trigrams and tokens.
type neighbours struct {
	curves []NeighbourCurve
	family []string
	size   []int32            // grams per curve
	index  map[string][]int32 // gram -> curves holding it
}

// ModelFamily is a model's family: the letters its name (after any "org/")
// starts with ("resnet" for resnet50 and resnet101d, "vit" for
// vit_base_patch16_224). Training looks neighbours up outside a model's
// family, as the evaluation holds whole families out.
func ModelFamily(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.IndexFunc(m, func(r rune) bool { return r < 'a' || r > 'z' }); i > 0 {
		return m[:i]
	}
	return m
}

// nameGrams returns the distinct character trigrams of "^name$" and the
// name's tokens (marked, so that a token never equals a trigram).
func nameGrams(name string) []string {
	s := "^" + strings.ToLower(name) + "$"
	var out []string
	for i := 0; i+3 <= len(s); i++ {
		out = append(out, s[i:i+3])
	}
	for _, tok := range strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == '/' }) {
		out = append(out, "\x00"+tok)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// curvesFrom returns the memory curve of every named model in samples with
// a usable peak and a batch size, the MaxNeighbourModels most run ones.
func curvesFrom(samples []Sample) []NeighbourCurve {
	type key struct {
		model string
		batch float64
	}
	peaks := map[key][]float64{}
	runs := map[string]int{}
	for _, s := range samples {
		f := jobFeatures(s.Job)
		name := learnedName(f)
		if name == "" || !(f.BatchSize > 0) || !usableMem(s.Outcome) {
			continue
		}
		k := key{strings.ToLower(name), f.BatchSize}
		peaks[k] = append(peaks[k], s.Outcome.PeakGPUMemMiB)
		runs[k.model]++
	}
	names := make([]string, 0, len(runs))
	for n := range runs {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(runs[b], runs[a]), cmp.Compare(a, b)) })
	names = names[:min(len(names), MaxNeighbourModels)]
	slices.Sort(names)
	byName := map[string]*NeighbourCurve{}
	out := make([]NeighbourCurve, len(names))
	for i, n := range names {
		out[i].Name = n
		byName[n] = &out[i]
	}
	keys := make([]key, 0, len(peaks))
	for k := range peaks {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.model, b.model), cmp.Compare(a.batch, b.batch)) })
	for _, k := range keys {
		if c := byName[k.model]; c != nil {
			c.Batch = append(c.Batch, k.batch)
			c.MiB = append(c.MiB, median(peaks[k]))
		}
	}
	return out
}

// newNeighbours indexes curves; curves that are not well formed (lengths
// differ, batch sizes not ascending, a peak not positive) are left out.
func newNeighbours(curves []NeighbourCurve) *neighbours {
	n := &neighbours{index: map[string][]int32{}}
	for _, c := range curves {
		if c.Name == "" || len(c.Batch) == 0 || len(c.Batch) != len(c.MiB) || len(n.curves) >= MaxNeighbourModels {
			continue
		}
		ok := true
		for i := range c.Batch {
			if !(c.Batch[i] > 0) || !(c.MiB[i] > 0) || math.IsInf(c.Batch[i], 0) || math.IsInf(c.MiB[i], 0) || i > 0 && !(c.Batch[i] > c.Batch[i-1]) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		id := int32(len(n.curves))
		g := nameGrams(c.Name)
		for _, s := range g {
			n.index[s] = append(n.index[s], id)
		}
		n.curves = append(n.curves, c)
		n.family = append(n.family, ModelFamily(c.Name))
		n.size = append(n.size, int32(len(g)))
	}
	return n
}

// nearest returns the curve whose name is most like model's, outside the
// family skip when skip is not empty, and the similarity in (0, 1]; ok is
// false when no curve shares anything with the name. Ties go to the first
// curve (curves are sorted by name).
func (n *neighbours) nearest(model, skip string) (c *NeighbourCurve, sim float64, ok bool) {
	if n == nil || len(n.curves) == 0 || model == "" {
		return nil, 0, false
	}
	g := nameGrams(strings.ToLower(model))
	common := make([]int32, len(n.curves))
	for _, s := range g {
		for _, id := range n.index[s] {
			common[id]++
		}
	}
	best := -1
	for id, k := range common {
		if k == 0 || skip != "" && n.family[id] == skip {
			continue
		}
		s := float64(k) / float64(len(g)+int(n.size[id])-int(k))
		if s > sim {
			best, sim = id, s
		}
	}
	if best < 0 {
		return nil, 0, false
	}
	return &n.curves[best], sim, true
}

// at returns the curve's memory at batch: the measured median at that
// batch size, else linear through the nearest two batch sizes (continuing
// the nearest segment outside them, never below half the smallest peak),
// else, with one batch size known, that peak scaled by the square root of
// the batch ratio (between fixed and linear). batch <= 0 gives the peak of
// the smallest batch size.
func (c *NeighbourCurve) at(batch float64) float64 {
	b, m := c.Batch, c.MiB
	if !(batch > 0) {
		return m[0]
	}
	if len(b) == 1 {
		return m[0] * math.Sqrt(batch/b[0])
	}
	i := sort.SearchFloat64s(b, batch)
	if i < len(b) && b[i] == batch {
		return m[i]
	}
	lo := min(max(i-1, 0), len(b)-2)
	v := m[lo] + (m[lo+1]-m[lo])/(b[lo+1]-b[lo])*(batch-b[lo])
	return math.Max(v, m[0]/2)
}
