package forest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrCorrupt is wrapped by UnmarshalBinary for bytes that are not a forest.
var ErrCorrupt = errors.New("forest: corrupt encoding")

// Limits on what UnmarshalBinary accepts, far above any real forest.
const (
	maxFeatures = 1 << 12
	maxTrees    = 1 << 14
)

// MarshalBinary encodes the forest, little-endian:
//
//	u32 features, u32 trees, then per tree u32 nodes, then per node
//	i32 feature; inner: f64 threshold, u32 left, u32 right; leaf: u32 n, n × f64.
func (f *Forest) MarshalBinary() ([]byte, error) {
	b := binary.LittleEndian.AppendUint32(nil, uint32(f.NFeatures))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(f.Trees)))
	for _, t := range f.Trees {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(t.Nodes)))
		for _, n := range t.Nodes {
			b = binary.LittleEndian.AppendUint32(b, uint32(n.Feature))
			if n.Feature >= 0 {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(n.Threshold))
				b = binary.LittleEndian.AppendUint32(b, uint32(n.Left))
				b = binary.LittleEndian.AppendUint32(b, uint32(n.Right))
				continue
			}
			b = binary.LittleEndian.AppendUint32(b, uint32(len(n.Values)))
			for _, v := range n.Values {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
			}
		}
	}
	return b, nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) u32() uint32 {
	if r.err != nil || len(r.b) < 4 {
		r.fail("truncated")
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) f64() float64 {
	if r.err != nil || len(r.b) < 8 {
		r.fail("truncated")
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *reader) fail(why string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(why, args...))
	}
}

// UnmarshalBinary decodes what MarshalBinary wrote. It checks every count
// against the bytes left, every feature index, and that children come after
// their parent (so that no tree has a cycle), and never panics.
func (f *Forest) UnmarshalBinary(data []byte) error {
	r := &reader{b: data}
	nf := r.u32()
	nt := r.u32()
	if r.err != nil {
		return r.err
	}
	if nf == 0 || nf > maxFeatures || nt > maxTrees {
		return fmt.Errorf("%w: %d features, %d trees", ErrCorrupt, nf, nt)
	}
	trees := make([]Tree, 0, min(int(nt), len(r.b)/4+1))
	for range nt {
		nn := r.u32()
		// Each node takes at least 8 bytes.
		if r.err == nil && (nn == 0 || uint64(nn)*8 > uint64(len(r.b))) {
			r.fail("tree of %d nodes in %d bytes", nn, len(r.b))
		}
		if r.err != nil {
			return r.err
		}
		nodes := make([]Node, nn)
		for i := range nodes {
			feat := int32(r.u32())
			if feat >= 0 {
				if feat >= int32(nf) {
					r.fail("node %d splits on feature %d of %d", i, feat, nf)
				}
				thr, left, right := r.f64(), r.u32(), r.u32()
				if r.err == nil && (uint64(left) <= uint64(i) || uint64(right) <= uint64(i) || left >= nn || right >= nn || math.IsNaN(thr)) {
					r.fail("node %d has children %d, %d of %d", i, left, right, nn)
				}
				nodes[i] = Node{Feature: feat, Threshold: thr, Left: int32(left), Right: int32(right)}
			} else {
				nv := r.u32()
				if r.err == nil && uint64(nv)*8 > uint64(len(r.b)) {
					r.fail("leaf of %d values in %d bytes", nv, len(r.b))
				}
				if r.err != nil {
					return r.err
				}
				vals := make([]float64, nv)
				for k := range vals {
					vals[k] = r.f64()
					if math.IsNaN(vals[k]) {
						r.fail("NaN in leaf %d", i)
					}
				}
				if !slices.IsSorted(vals) {
					r.fail("leaf %d not sorted", i)
				}
				nodes[i] = Node{Feature: -1, Values: vals}
			}
			if r.err != nil {
				return r.err
			}
		}
		trees = append(trees, Tree{Nodes: nodes})
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(r.b))
	}
	f.NFeatures, f.Trees = int(nf), trees
	return nil
}
