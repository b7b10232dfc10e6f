package policy

import "math"

// TiresiasName is the Tiresias policy's name.
const TiresiasName = "tiresias"

// Tiresias is 2D-LAS with discretised queues (Gu et al., NSDI'19): a job's
// queue is set by its attained GPU service (GPUs x seconds run), lower
// queues first; inside a queue jobs go in the order they entered it. It
// needs no prediction.
type Tiresias struct {
	p Params
	// Thresholds split the queues (GPU-seconds, ascending).
	Thresholds []float64
	// PreemptedFirst puts a preempted job at the front of its queue, as in
	// Tiresias' own simulator; otherwise a queue is first come, first
	// served by the time each job entered it (its submission, or the
	// instant its attained service crossed the queue's threshold), which a
	// preemption does not change.
	PreemptedFirst bool
	a              allocator
	// entered remembers when each job entered its queue: a pending job's
	// snapshot no longer shows when it crossed a threshold in an earlier
	// run. Losing it (a restart) falls back to the requeue time.
	entered, next map[int64]entry
}

type entry struct {
	level int
	at    float64
}

var _ Policy = (*Tiresias)(nil)

// NewTiresias returns Tiresias with the paper's simulator settings: three
// queues split at 3,250 and 7,200 GPU-seconds, preempted jobs first.
func NewTiresias(p Params) *Tiresias {
	return &Tiresias{p: p, Thresholds: []float64{3250, 7200}, PreemptedFirst: true,
		entered: map[int64]entry{}, next: map[int64]entry{}}
}

func init() { register(TiresiasName, func(p Params) Policy { return NewTiresias(p) }) }

// Name implements Policy.
func (*Tiresias) Name() string { return TiresiasName }

func (t *Tiresias) level(gpuSec float64) int {
	l := 0
	for l < len(t.Thresholds) && gpuSec >= t.Thresholds[l] {
		l++
	}
	return l
}

// front is subtracted from a requeue time to put a job ahead of its queue.
const front = 1e11

// key orders a job: its queue, then its place in the queue. A pending job's
// attained service does not change, so its queue is the one it was preempted
// from; a running job that crossed a threshold during this run entered its
// queue at that instant.
func (t *Tiresias) key(j *Job, now float64) float64 {
	g := float64(j.GPUs)
	l := t.level(j.Attained * g)
	at := j.Submit
	crossed := false
	if j.Running {
		a0 := j.Attained - (now - j.Started)
		if l0 := t.level(a0 * g); l0 < l {
			at, crossed = j.Started+t.Thresholds[l-1]/g-a0, true
		}
	}
	if e, ok := t.entered[j.ID]; ok && e.level == l {
		at = e.at
	} else if !crossed && l > 0 && j.Preemptions > 0 {
		at = j.Requeued // entered in a run we did not see
	}
	t.next[j.ID] = entry{l, at}
	switch {
	case !t.PreemptedFirst:
		return float64(l)*4*front + at
	case crossed:
		return float64(l)*4*front + at
	case j.Preemptions > 0:
		// Inserted at the front: the latest preempted is first.
		return float64(l)*4*front - front - j.Requeued
	}
	return float64(l)*4*front + j.Submit
}

// Schedule implements Policy.
func (t *Tiresias) Schedule(s *Snapshot) Plan {
	t.a.begin()
	clear(t.next)
	for _, j := range s.Running {
		t.a.add(j, t.key(j, s.Now))
	}
	for _, j := range s.Pending {
		t.a.add(j, t.key(j, s.Now))
	}
	t.entered, t.next = t.next, t.entered
	plan := t.a.run(s, t.p, true)
	// Ask again when a running job is next demoted.
	for _, j := range s.Running {
		g := float64(j.GPUs)
		if l := t.level(j.Attained * g); l < len(t.Thresholds) {
			t.a.wake(s.Now + math.Max(t.Thresholds[l]/g-j.Attained, 1))
		}
	}
	plan.Wake = t.a.plan.Wake
	return plan
}
