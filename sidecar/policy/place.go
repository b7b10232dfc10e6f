package policy

import "math"

// Placement is consolidated and best fit, as on the clusters the traces come
// from: a job that fits on one node gets the node of its type with the
// fewest free GPUs that still holds it; a larger job gets whole free nodes.
// Among GPU types, a type-aware placer never uses a type the job's predicted
// memory does not fit (nor one in Job.Avoid, nor one with Rate 0); which
// type each job gets is the allocator's matching (Match). A type-blind
// placer takes the best-fitting node of any type, breaking ties among equally
// good nodes at a seeded per-job offset, so that no GPU type is favoured by
// the order the nodes happen to be listed in.

// placer holds one Schedule call's view of the free GPUs and of the running
// jobs that may be preempted.
type placer struct {
	s       *Snapshot
	p       Params
	free    []int
	victims [][]*Job // per node: running jobs that may be preempted, worst first
	taken   map[int64]bool
	// exclude marks nodes a placement must not use (EASY's reservation).
	exclude []bool
	// Per GPU type, the most free GPUs on one node and the wholly free
	// nodes, off excluded nodes; recomputed when dirty.
	maxFree, wholeFree []int
	dirty              bool
	// price is, per GPU type, the mean speed there of the jobs in the
	// snapshot: how much the cluster's work wants that type.
	price []float64
}

// advantage is j's comparative advantage on type t: its speed there over
// the type's price. Placing each job where its advantage is highest puts
// jobs that barely gain from a fast type on slow ones, and keeps the fast
// ones for the jobs that gain most (the idea behind Gavel's effective
// throughput), without a solver.
func (pl *placer) advantage(j *Job, t int) float64 {
	if len(pl.price) <= t || pl.price[t] <= 0 {
		return j.RateOn(t)
	}
	return j.RateOn(t) / pl.price[t]
}

func (pl *placer) setPrices(s *Snapshot) {
	pl.price = pl.price[:0]
	if len(s.Types) < 2 || pl.p.TypeBlind {
		return
	}
	pl.price = append(pl.price, make([]float64, len(s.Types))...)
	n := 0
	for _, l := range [][]*Job{s.Running, s.Pending} {
		for _, j := range l {
			for t := range s.Types {
				pl.price[t] += j.RateOn(t)
			}
			n++
		}
	}
	for t := range pl.price {
		pl.price[t] /= float64(max(n, 1))
	}
}

// touch marks the free-GPU summary stale.
func (pl *placer) touch() { pl.dirty = true }

// mayFit reports cheaply whether j could fit on free GPUs of the types in
// mask without preemption; false means it certainly cannot.
func (pl *placer) mayFit(j *Job, mask uint64) bool {
	if pl.dirty {
		nt := len(pl.s.Types)
		pl.maxFree = append(pl.maxFree[:0], make([]int, nt)...)
		pl.wholeFree = append(pl.wholeFree[:0], make([]int, nt)...)
		for n, nd := range pl.s.Nodes {
			if len(pl.exclude) > 0 && pl.exclude[n] {
				continue
			}
			pl.maxFree[nd.Type] = max(pl.maxFree[nd.Type], pl.free[n])
			if pl.free[n] == nd.Total {
				pl.wholeFree[nd.Type]++
			}
		}
		pl.dirty = false
	}
	for t := range pl.maxFree {
		if mask&(1<<uint(t)) == 0 {
			continue
		}
		if j.GPUs <= pl.maxFree[t] {
			return true
		}
		if size := pl.nodeSize(t); j.GPUs > size && size > 0 && pl.wholeFree[t]*size >= j.GPUs {
			return true
		}
	}
	return false
}

// nodeSize is the GPUs per node of type t (the largest, if they differ).
func (pl *placer) nodeSize(t int) int {
	size := 0
	for _, nd := range pl.s.Nodes {
		if nd.Type == t {
			size = max(size, nd.Total)
		}
	}
	return size
}

// mask returns the GPU types j may be placed on (t >= 0: only t).
func (pl *placer) mask(j *Job, t int) uint64 {
	if t >= 0 {
		return 1 << uint(t)
	}
	var m uint64
	for ty := range pl.s.Types {
		if pl.allowed(j, ty) {
			m |= 1 << uint(ty)
		}
	}
	return m
}

func (pl *placer) reset(s *Snapshot, p Params) {
	pl.s, pl.p = s, p
	pl.free = pl.free[:0]
	for _, n := range s.Nodes {
		pl.free = append(pl.free, n.Free)
	}
	if cap(pl.victims) < len(s.Nodes) {
		pl.victims = make([][]*Job, len(s.Nodes))
	}
	pl.victims = pl.victims[:len(s.Nodes)]
	for i := range pl.victims {
		pl.victims[i] = pl.victims[i][:0]
	}
	if pl.taken == nil {
		pl.taken = map[int64]bool{}
	}
	clear(pl.taken)
	pl.exclude = pl.exclude[:0]
	pl.dirty = true
	pl.setPrices(s)
}

// offset is where j's scan of the nodes starts: 0 for a type-aware placer
// (its choice of type is deliberate), and a seeded hash of the job for a
// type-blind one, so that its ties fall on every type alike.
func (pl *placer) offset(j *Job) int {
	if !pl.p.TypeBlind || len(pl.s.Nodes) == 0 {
		return 0
	}
	x := uint64(j.ID) ^ pl.p.Seed*0x9e3779b97f4a7c15
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return int(x % uint64(len(pl.s.Nodes)))
}

// addVictim records a running job that may be preempted; call worst first.
func (pl *placer) addVictim(j *Job) {
	for _, sh := range j.Placement.Shares {
		pl.victims[sh.Node] = append(pl.victims[sh.Node], j)
	}
}

// allowed reports whether job j may be placed on GPU type t.
func (pl *placer) allowed(j *Job, t int) bool {
	if j.Avoid&(1<<uint(t)) != 0 {
		return false // known not to work there (it failed there before)
	}
	if pl.p.TypeBlind {
		return true
	}
	if j.RateOn(t) <= 0 {
		return false
	}
	if m := pl.s.Types[t].MemMiB; m > 0 && j.MemMiB.Known() && j.MemMiB.Hi > m {
		return false
	}
	return true
}

func (pl *placer) victimGPUs(n int) int {
	g := 0
	for _, v := range pl.victims[n] {
		if pl.taken[v.ID] {
			continue
		}
		for _, sh := range v.Placement.Shares {
			if sh.Node == n {
				g += sh.GPUs
			}
		}
	}
	return g
}

// place finds a placement for j on type t (t < 0: any type), preempting
// victims when preempt is set. It commits the placement to pl.free and
// returns the jobs to preempt.
func (pl *placer) place(j *Job, t int, preempt bool) (Placement, []*Job, bool) {
	nodes := pl.s.Nodes
	g := j.GPUs
	mask := pl.mask(j, t)
	if !preempt && !pl.mayFit(j, mask) {
		return Placement{}, nil, false
	}
	pl.dirty = true
	ok := func(n int) bool {
		if len(pl.exclude) > 0 && pl.exclude[n] {
			return false
		}
		return mask&(1<<uint(nodes[n].Type)) != 0
	}
	size := 0
	for n := range nodes {
		if ok(n) && nodes[n].Total > size {
			size = nodes[n].Total
		}
	}
	if size == 0 || g <= 0 {
		return Placement{}, nil, false
	}
	off := pl.offset(j)
	if g <= size {
		best, bestFree := -1, math.MaxInt
		for k := range nodes {
			n := (k + off) % len(nodes)
			if ok(n) && pl.free[n] >= g && pl.free[n] < bestFree {
				best, bestFree = n, pl.free[n]
			}
		}
		if best >= 0 {
			pl.free[best] -= g
			return Placement{Type: nodes[best].Type, Shares: []Share{{best, g}}}, nil, true
		}
		if !preempt {
			return Placement{}, nil, false
		}
		best, bestCost := -1, math.MaxInt
		for k := range nodes {
			n := (k + off) % len(nodes)
			if !ok(n) || len(pl.victims[n]) == 0 {
				continue
			}
			need := g - pl.free[n]
			cost := pl.cost(n, need)
			if cost >= 0 && cost < bestCost {
				best, bestCost = n, cost
			}
		}
		if best < 0 {
			return Placement{}, nil, false
		}
		vs := pl.evict(best, g-pl.free[best], nil)
		pl.free[best] -= g
		return Placement{Type: nodes[best].Type, Shares: []Share{{best, g}}}, vs, true
	}
	// Whole nodes of one type.
	k := (g + size - 1) / size
	for i := range pl.s.Types {
		ty := (i + off) % len(pl.s.Types)
		if mask&(1<<uint(ty)) == 0 {
			continue
		}
		var chosen []int
		for n := range nodes {
			if nodes[n].Type == ty && nodes[n].Total == size && pl.free[n] == size && (len(pl.exclude) == 0 || !pl.exclude[n]) {
				chosen = append(chosen, n)
				if len(chosen) == k {
					break
				}
			}
		}
		var vs []*Job
		if len(chosen) < k && preempt {
			// Add the nodes that cost the fewest preempted GPUs.
			type cand struct{ n, cost int }
			var cands []cand
			for n := range nodes {
				if nodes[n].Type == ty && nodes[n].Total == size && pl.free[n] < size && (len(pl.exclude) == 0 || !pl.exclude[n]) {
					if c := pl.cost(n, size-pl.free[n]); c >= 0 && pl.free[n]+pl.victimGPUs(n) == size {
						cands = append(cands, cand{n, c})
					}
				}
			}
			for len(chosen) < k && len(cands) > 0 {
				bi := 0
				for i, c := range cands {
					if c.cost < cands[bi].cost {
						bi = i
					}
				}
				chosen = append(chosen, cands[bi].n)
				cands[bi] = cands[len(cands)-1]
				cands = cands[:len(cands)-1]
			}
			if len(chosen) == k {
				for _, n := range chosen {
					vs = pl.evict(n, size-pl.free[n], vs)
				}
			}
		}
		if len(chosen) < k {
			continue
		}
		pl2 := Placement{Type: ty}
		left := g
		for _, n := range chosen {
			use := min(left, size)
			pl.free[n] -= use
			left -= use
			pl2.Shares = append(pl2.Shares, Share{n, use})
		}
		return pl2, vs, true
	}
	return Placement{}, nil, false
}

// cost returns the GPUs that preempting victims on node n worst first frees
// before at least need GPUs are free there, or -1 if they cannot.
func (pl *placer) cost(n, need int) int {
	got := 0
	for _, v := range pl.victims[n] {
		if got >= need {
			break
		}
		if pl.taken[v.ID] {
			continue
		}
		for _, sh := range v.Placement.Shares {
			if sh.Node == n {
				got += sh.GPUs
			}
		}
	}
	if got < need {
		return -1
	}
	return got
}

// evict takes victims on node n, worst first, until need GPUs are free,
// and frees every GPU they hold.
func (pl *placer) evict(n, need int, vs []*Job) []*Job {
	for _, v := range pl.victims[n] {
		if need <= 0 {
			break
		}
		if pl.taken[v.ID] {
			continue
		}
		pl.taken[v.ID] = true
		vs = append(vs, v)
		for _, sh := range v.Placement.Shares {
			pl.free[sh.Node] += sh.GPUs
			if sh.Node == n {
				need -= sh.GPUs
			}
		}
	}
	return vs
}

// capacity returns, per GPU type, the free GPUs plus those of victims.
func (pl *placer) capacity() []int {
	c := make([]int, len(pl.s.Types))
	for n, nd := range pl.s.Nodes {
		c[nd.Type] += pl.free[n] + pl.victimGPUs(n)
	}
	return c
}
