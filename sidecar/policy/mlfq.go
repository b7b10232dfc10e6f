package policy

import "slices"

// MLFQBordaName is the Borda-count multi-level feedback queue's name.
const MLFQBordaName = "mlfq-borda"

// MLFQBorda ranks predictable and unpredictable jobs each by what is known
// of them, and merges the two rankings by Borda count into feedback queues:
// predictable jobs (Job.Predictable with a runtime prediction) are ranked by
// predicted remaining GPU service, the others by attained GPU service (least
// first, as in LAS); each job scores its position in its own ranking divided
// by that ranking's length, and the score picks one of Queues queues. Inside
// a queue jobs go in submission order. A running job counts one queue better
// (it has paid its start-up).
//
// Queue assignment is sticky: a job keeps its queue until its score is
// Sticky of a queue's width beyond that queue's bounds. Without it, every
// arrival and completion shifts every position by a little, jobs near a
// boundary flip queues at each decision, and each flip of a running job is
// a preemption (796k on the Philly trace; 102k with Sticky 0.5, and a lower
// average JCT). The
// remembered queues are per-job state the policy keeps between calls;
// losing them (a restart) only resets where the hysteresis starts.
type MLFQBorda struct {
	p      Params
	Queues int
	// Sticky is the hysteresis of queue changes, in queue widths.
	Sticky float64
	a      allocator
	pred   []*Job
	unpred []*Job
	queue  map[int64]int // the queue each job was in at the last call
	next   map[int64]int
}

var _ Policy = (*MLFQBorda)(nil)

// NewMLFQBorda returns the policy with four queues.
func NewMLFQBorda(p Params) *MLFQBorda {
	return &MLFQBorda{p: p, Queues: 4, Sticky: 0.5, queue: map[int64]int{}, next: map[int64]int{}}
}

func init() { register(MLFQBordaName, func(p Params) Policy { return NewMLFQBorda(p) }) }

// Name implements Policy.
func (*MLFQBorda) Name() string { return MLFQBordaName }

func predictedGPUService(j *Job) float64 {
	return max(j.Runtime.P50-j.Done, 0) / j.BestRate() * float64(j.GPUs)
}

// Schedule implements Policy.
func (m *MLFQBorda) Schedule(s *Snapshot) Plan {
	m.pred, m.unpred = m.pred[:0], m.unpred[:0]
	for _, l := range [][]*Job{s.Running, s.Pending} {
		for _, j := range l {
			if j.Predictable && j.Runtime.P50 > 0 {
				m.pred = append(m.pred, j)
			} else {
				m.unpred = append(m.unpred, j)
			}
		}
	}
	slices.SortFunc(m.pred, func(a, b *Job) int { return cmpF(predictedGPUService(a), predictedGPUService(b), a, b) })
	slices.SortFunc(m.unpred, func(a, b *Job) int {
		return cmpF(a.Attained*float64(a.GPUs), b.Attained*float64(b.GPUs), a, b)
	})
	m.a.begin()
	clear(m.next)
	for _, l := range [][]*Job{m.pred, m.unpred} {
		for i, j := range l {
			x := float64(i*m.Queues) / float64(len(l)) // position in queue widths
			q := int(x)
			if old, ok := m.queue[j.ID]; ok && x >= float64(old)-m.Sticky && x < float64(old+1)+m.Sticky {
				q = old
			}
			m.next[j.ID] = q
			if j.Running && q > 0 {
				q--
			}
			m.a.add(j, float64(q)*4*front+j.Submit)
		}
	}
	m.queue, m.next = m.next, m.queue
	return m.a.run(s, m.p, true)
}

func cmpF(x, y float64, a, b *Job) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	case a.Submit < b.Submit:
		return -1
	case a.Submit > b.Submit:
		return 1
	}
	return int(a.ID - b.ID)
}
