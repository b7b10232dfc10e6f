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
	// Tiresias' own simulator; otherwise it re-enters at the back (by the
	// time it was requeued).
	PreemptedFirst bool
	a              allocator
}

var _ Policy = (*Tiresias)(nil)

// NewTiresias returns Tiresias with the paper's simulator settings: three
// queues split at 3,250 and 7,200 GPU-seconds, preempted jobs first.
func NewTiresias(p Params) *Tiresias {
	return &Tiresias{p: p, Thresholds: []float64{3250, 7200}, PreemptedFirst: true}
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

// key orders a job: its queue, then the time it entered the queue. All of it
// follows from the snapshot: a pending job's attained service does not
// change, so its queue is the one it was preempted from; a running job that
// crossed a threshold during this run entered its queue at that instant.
func (t *Tiresias) key(j *Job, now float64) float64 {
	g := float64(j.GPUs)
	l := t.level(j.Attained * g)
	entry := j.Submit
	if j.Preemptions > 0 {
		entry = j.Requeued
		if t.PreemptedFirst {
			// Inserted at the front: the latest preempted is first.
			entry = -front - j.Requeued
		}
	}
	if j.Running {
		a0 := j.Attained - (now - j.Started)
		if l0 := t.level(a0 * g); l0 < l {
			entry = j.Started + t.Thresholds[l-1]/g - a0
		}
	}
	return float64(l)*4*front + entry
}

// Schedule implements Policy.
func (t *Tiresias) Schedule(s *Snapshot) Plan {
	t.a.begin()
	for _, j := range s.Running {
		t.a.add(j, t.key(j, s.Now))
	}
	for _, j := range s.Pending {
		t.a.add(j, t.key(j, s.Now))
	}
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
