package policy

import (
	"math"
	"slices"
)

// FIFOName is the FIFO policy's name.
const FIFOName = "fifo"

// DefaultEstimate is the time estimate of a job with none and no
// prediction (seconds): a week, a typical partition MaxTime.
const DefaultEstimate = 7 * 24 * 3600

// FIFO is Slurm's default: priority by age, with EASY backfill. Jobs start
// oldest first while they fit; the first that does not gets a reservation at
// the earliest time the running jobs' estimates free enough GPUs for it, and
// later jobs start now only if they fit and do not delay that reservation
// (they end before it by their estimate, or use GPUs it does not need).
// Estimates are Job.Estimate (a time limit) or else the predicted upper
// quantile. A job with Job.EstimateMin (Slurm's TimeMin) that would end
// after the reservation by its estimate may still start before it, on a
// limit cut to the time left (Start.Limit), when that is at least its
// EstimateMin. FIFO never preempts.
type FIFO struct {
	p    Params
	a    allocator
	plan Plan
	ends []runEnd
}

type runEnd struct {
	end float64
	j   *Job
}

var _ Policy = (*FIFO)(nil)

// NewFIFO returns the FIFO policy.
func NewFIFO(p Params) *FIFO { return &FIFO{p: p} }

func init() { register(FIFOName, func(p Params) Policy { return NewFIFO(p) }) }

// Name implements Policy.
func (*FIFO) Name() string { return FIFOName }

// estimate is the time a job is expected to take in all (seconds).
func estimate(j *Job) float64 {
	switch {
	case j.Estimate > 0:
		return j.Estimate
	case j.Runtime.Hi > 0:
		return j.Runtime.Hi / j.BestRate()
	case j.Runtime.P50 > 0:
		return j.Runtime.P50 / j.BestRate()
	}
	return DefaultEstimate
}

// Schedule implements Policy.
func (f *FIFO) Schedule(s *Snapshot) Plan {
	f.plan.Order = f.plan.Order[:0]
	f.plan.Start = f.plan.Start[:0]
	f.plan.Preempt = f.plan.Preempt[:0]
	for _, j := range s.Pending {
		f.plan.Order = append(f.plan.Order, j.ID)
	}
	al := &f.a
	al.pl.reset(s, f.p)
	free := s.FreeGPUs()
	i := 0
	for ; i < len(s.Pending) && free > 0; i++ {
		j := s.Pending[i]
		if j.GPUs > free {
			break
		}
		place, ok := al.fill(s, f.p, j)
		if !ok {
			break
		}
		free -= j.GPUs
		f.plan.Start = append(f.plan.Start, Start{ID: j.ID, Placement: place})
	}
	if i >= len(s.Pending) || free <= 0 {
		return f.plan
	}
	// The head job waits: reserve for it, then backfill.
	head := s.Pending[i]
	shadow, extra := f.reserve(s, &al.pl, head)
	reserved := al.pl.exclude
	for _, j := range s.Pending[i+1:] {
		if free <= 0 {
			break
		}
		if j.GPUs > free {
			continue
		}
		// Ending before the reservation, anywhere; otherwise off the
		// reserved nodes, or on them within the GPUs the head leaves.
		before := s.Now+estimate(j) <= shadow
		f.setExclude(reserved, !before)
		place, ok := al.fill(s, f.p, j)
		if !ok && !before && extra >= j.GPUs {
			f.setExclude(reserved, false)
			if place, ok = al.fill(s, f.p, j); ok {
				extra -= j.GPUs
			}
		}
		limit := 0.0
		if !ok && !before && j.EstimateMin > 0 && s.Now+j.EstimateMin <= shadow {
			// Slurm's TimeMin: it starts now, anywhere, on a limit cut
			// to end before the reservation.
			f.setExclude(reserved, false)
			if place, ok = al.fill(s, f.p, j); ok {
				limit = shadow - s.Now
			}
		}
		if ok {
			free -= j.GPUs
			f.plan.Start = append(f.plan.Start, Start{ID: j.ID, Placement: place, Limit: limit})
		}
	}
	f.setExclude(nil, false)
	return f.plan
}

// setExclude turns the reservation's node exclusion on or off.
func (f *FIFO) setExclude(reserved []bool, on bool) {
	var want []bool
	if on {
		want = reserved
	}
	if len(want) != len(f.a.pl.exclude) {
		f.a.pl.exclude = want
		f.a.pl.touch()
	}
}

// reserve finds when head can start if the running jobs end by their
// estimates: it marks the reserved nodes in pl.exclude and returns the
// reservation time and the GPUs on the reserved node head does not need.
func (f *FIFO) reserve(s *Snapshot, pl *placer, head *Job) (float64, int) {
	f.ends = f.ends[:0]
	for _, j := range s.Running {
		f.ends = append(f.ends, runEnd{math.Max(j.Started+estimate(j), s.Now), j})
	}
	slices.SortFunc(f.ends, func(a, b runEnd) int {
		switch {
		case a.end < b.end:
			return -1
		case a.end > b.end:
			return 1
		}
		return int(a.j.ID - b.j.ID)
	})
	nodes := s.Nodes
	later := append([]int(nil), pl.free...)
	ok := func(n int) bool { return f.p.TypeBlind || pl.allowed(head, nodes[n].Type) }
	size := 0
	for n := range nodes {
		if ok(n) {
			size = max(size, nodes[n].Total)
		}
	}
	excl := make([]bool, len(nodes))
	pl.exclude = excl
	pl.touch()
	check := func() (bool, int) {
		if head.GPUs <= size {
			best := -1
			for n := range nodes {
				if ok(n) && later[n] >= head.GPUs && (best < 0 || later[n] < later[best]) {
					best = n
				}
			}
			if best < 0 {
				return false, 0
			}
			excl[best] = true
			return true, later[best] - head.GPUs
		}
		k := (head.GPUs + size - 1) / size
		var got []int
		for n := range nodes {
			if ok(n) && later[n] == nodes[n].Total && nodes[n].Total == size {
				got = append(got, n)
			}
		}
		if len(got) < k {
			return false, 0
		}
		for _, n := range got[:k] {
			excl[n] = true
		}
		return true, 0
	}
	if found, extra := check(); found {
		return s.Now, extra
	}
	for _, e := range f.ends {
		for _, sh := range e.j.Placement.Shares {
			later[sh.Node] += sh.GPUs
		}
		if found, extra := check(); found {
			return e.end, extra
		}
	}
	// Never fits (larger than the cluster): reserve nothing.
	pl.exclude = nil
	pl.touch()
	return math.Inf(1), 0
}
