package policy

import "math"

// allocator turns a ranking of all jobs (running and pending) into a plan.
// It is shared by the ranking policies (srtf, sjf, tiresias, hrrn,
// mlfq-borda, augur); each only says how it ranks.
//
// With preemption, the jobs that should run are the best-ranked ones whose
// GPUs add up to the cluster's (skipping any that would not fit). Each such
// pending job, best first, is placed on free GPUs, or else on GPUs freed by
// preempting running jobs outside that set (worst-ranked first, guards
// permitting, and only where that makes room). Then any GPUs still free go
// to the remaining pending jobs in rank order (work conservation).
type allocator struct {
	pl   placer
	r    []ranked
	plan Plan
	het  hetero
}

// remaining is the placer's estimate of a job's remaining service, for the
// value of a type match: the truth for oracles, else the prediction.
func remaining(j *Job) float64 {
	switch {
	case j.True > 0:
		return math.Max(j.True-j.Done, 1)
	case j.Runtime.P50 > 0:
		return math.Max(j.Runtime.P50-j.Done, 60)
	}
	return 3600
}

func (a *allocator) begin() { a.r = a.r[:0] }

func (a *allocator) add(j *Job, key float64) { a.r = append(a.r, ranked{j: j, key: key}) }

// addTimed adds j with the time it still needs at its best speed (seconds),
// which lets a heterogeneous cluster weigh it by 1/remaining (see hetero).
func (a *allocator) addTimed(j *Job, key, remaining float64) {
	a.r = append(a.r, ranked{j: j, key: key, rem: max(remaining, 1)})
}

// run ranks a.r and returns the plan.
func (a *allocator) run(s *Snapshot, p Params, preempt bool) Plan {
	sortRanked(a.r)
	a.plan.Order = a.plan.Order[:0]
	a.plan.Start = a.plan.Start[:0]
	a.plan.Preempt = a.plan.Preempt[:0]
	a.plan.Wake = 0
	for _, r := range a.r {
		if !r.j.Running {
			a.plan.Order = append(a.plan.Order, r.j.ID)
		}
	}
	pl := &a.pl
	pl.reset(s, p)
	free := s.FreeGPUs()
	if preempt && !p.TypeBlind && len(s.Types) > 1 {
		free = a.hetero(s, p, free)
	} else if preempt {
		total, used := s.TotalGPUs(), 0
		for i := range a.r {
			if g := a.r[i].j.GPUs; used+g <= total {
				a.r[i].want = true
				used += g
			}
		}
		for i := len(a.r) - 1; i >= 0; i-- {
			j := a.r[i].j
			if !j.Running || a.r[i].want {
				continue
			}
			if p.preemptible(j, s.Now) {
				pl.addVictim(j)
			} else if p.MinRun > 0 && (p.MaxPreemptions == 0 || j.Preemptions < p.MaxPreemptions) {
				a.wake(j.Started + p.MinRun)
			}
		}
		for i := range a.r {
			r := &a.r[i]
			if r.j.Running || !r.want {
				continue
			}
			place, victims, ok := pl.place(r.j, -1, true)
			if !ok {
				r.want = false
				continue
			}
			for _, v := range victims {
				a.plan.Preempt = append(a.plan.Preempt, Preemption{ID: v.ID, Reason: ReasonPriority})
				free += v.GPUs
			}
			free -= r.j.GPUs
			a.plan.Start = append(a.plan.Start, Start{ID: r.j.ID, Placement: place})
		}
	} else {
		for i := range a.r {
			a.r[i].want = false
		}
	}
	// Fill what is left, without preempting.
	for i := range a.r {
		if free <= 0 {
			break
		}
		r := &a.r[i]
		if r.j.Running || r.want || r.j.GPUs > free {
			continue
		}
		if place, ok := a.fill(s, p, r.j); ok {
			free -= r.j.GPUs
			r.want = true
			a.plan.Start = append(a.plan.Start, Start{ID: r.j.ID, Placement: place})
		}
	}
	return a.plan
}

func (a *allocator) wake(t float64) {
	if a.plan.Wake == 0 || t < a.plan.Wake {
		a.plan.Wake = t
	}
}

// fill places j on free GPUs only: type-aware, on the allowed type with room
// where its comparative advantage is highest; type-blind, anywhere.
func (a *allocator) fill(s *Snapshot, p Params, j *Job) (Placement, bool) {
	if p.TypeBlind || len(s.Types) < 2 {
		place, _, ok := a.pl.place(j, -1, false)
		return place, ok
	}
	var tried uint64
	for range s.Types {
		best, br := -1, 0.0
		for t := range s.Types {
			if adv := a.pl.advantage(j, t); tried&(1<<uint(t)) == 0 && a.pl.allowed(j, t) && adv > br {
				best, br = t, adv
			}
		}
		if best < 0 {
			break
		}
		tried |= 1 << uint(best)
		if place, _, ok := a.pl.place(j, best, false); ok {
			return place, true
		}
	}
	return Placement{}, false
}
