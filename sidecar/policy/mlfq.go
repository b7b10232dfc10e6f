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
// (it has paid its start-up), which keeps the queues from churning.
type MLFQBorda struct {
	p      Params
	Queues int
	a      allocator
	pred   []*Job
	unpred []*Job
}

var _ Policy = (*MLFQBorda)(nil)

// NewMLFQBorda returns the policy with four queues.
func NewMLFQBorda(p Params) *MLFQBorda {
	return &MLFQBorda{p: p, Queues: 4}
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
	for _, l := range [][]*Job{m.pred, m.unpred} {
		for i, j := range l {
			q := i * m.Queues / len(l)
			if j.Running && q > 0 {
				q--
			}
			m.a.add(j, float64(q)*4*front+j.Submit)
		}
	}
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
