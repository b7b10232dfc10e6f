package policy

// hetero is how the allocator plans for a cluster of several GPU types when
// placement is type-aware. Like Gavel, which re-allocates every round, it
// re-places the running jobs too at every decision: which jobs run, and on
// which type, is one matching (Match) over the running and the best-ranked
// pending jobs, maximising the sum of
//
//	value(job, type) = GPUs / (remaining time at that type's speed + restart cost)
//
// for policies that know a job's remaining time (augur from its predicted
// distribution, srtf-oracle from the truth): the rate at which jobs finish,
// which is what the average JCT rewards, so a job gets a fast type when it is
// short and gains from it, and a slow type goes to the jobs that lose least
// there (e.g. Gavel's recommendation models run at 0.5-0.7 of their best
// speed on a K80, ResNets at 0.1-0.3). For the policies that only rank
// (tiresias, hrrn, mlfq-borda) the value is the job's normalised speed on
// the type (its effective throughput) weighted by its rank:
//
//	value(job, type) = GPUs x speed on type / best speed x 1 / (1 + GPUs ranked ahead / cluster GPUs)
//
// The restart cost is paid on a type other than the one a job runs on (and
// anywhere by a job that was preempted), and a running job's current type is
// worth MigrateGain more, so a job moves only for a real gain. A running job
// that the matching moves is preempted and started at once on its new type
// (ReasonMigrate); one it drops is preempted only when its GPUs are needed
// (ReasonPriority), as in the single-type path. Jobs held by the guards
// (MinRun, MaxPreemptions) stay where they are and only reduce the capacity.
// Types a job must not use (memory, Avoid, Rate 0) have no value, so the
// matching never picks them.
type hetero struct {
	m     matcher
	mj    []MatchJob
	vals  []float64
	cand  []int // a.r index of each MatchJob
	typ   []int // per a.r index: the type it is to run on, -1 none
	capac []int
	move  []int // a.r indices of running jobs to move
}

// window bounds the matching's candidates: the best-ranked jobs whose GPUs
// add up to window times the cluster's.
const window = 3

// hetero fills a.plan for a heterogeneous cluster and returns the GPUs left
// free.
func (a *allocator) hetero(s *Snapshot, p Params, free int) int {
	h := &a.het
	pl := &a.pl
	nt := len(s.Types)
	h.capac = append(h.capac[:0], make([]int, nt)...)
	total := 0
	for _, nd := range s.Nodes {
		h.capac[nd.Type] += nd.Total
		total += nd.Total
	}
	h.typ = h.typ[:0]
	h.cand = h.cand[:0]
	h.vals = h.vals[:0]
	ahead := 0
	for i := range a.r {
		r := &a.r[i]
		j := r.j
		h.typ = append(h.typ, -1)
		r.want = false
		if j.Running && !p.preemptible(j, s.Now) {
			h.capac[j.Placement.Type] -= j.GPUs
			h.typ[i] = j.Placement.Type
			r.want = true
			ahead += j.GPUs
			if p.MinRun > 0 && s.Now-j.Started < p.MinRun && (p.MaxPreemptions == 0 || j.Preemptions < p.MaxPreemptions) {
				a.wake(j.Started + p.MinRun)
			}
			continue
		}
		if ahead >= window*total {
			continue
		}
		weight := 1 / (1 + float64(ahead)/float64(total))
		ahead += j.GPUs
		h.cand = append(h.cand, i)
		best := j.BestRate()
		g := float64(j.GPUs)
		for t := range nt {
			v := 0.0
			if pl.allowed(j, t) {
				speed := j.RateOn(t) / best
				if r.rem > 0 {
					cost := 0.0
					if (j.Running && t != j.Placement.Type) || (!j.Running && j.Preemptions > 0) {
						cost = p.RestartCost
					}
					v = g / (r.rem/speed + cost)
				} else {
					v = g * weight * speed
				}
				if j.Running && t == j.Placement.Type {
					v *= 1 + p.MigrateGain
				}
			}
			h.vals = append(h.vals, v)
		}
	}
	h.mj = h.mj[:0]
	for k, i := range h.cand {
		h.mj = append(h.mj, MatchJob{GPUs: a.r[i].j.GPUs, Value: h.vals[k*nt : (k+1)*nt]})
	}
	for t := range h.capac {
		h.capac[t] = max(h.capac[t], 0)
	}
	assign := h.m.match(h.mj, h.capac)
	for k, i := range h.cand {
		h.typ[i] = assign[k]
		a.r[i].want = assign[k] >= 0
	}
	// Running jobs left out may be preempted for the others, worst first.
	for i := len(a.r) - 1; i >= 0; i-- {
		if r := &a.r[i]; r.j.Running && !r.want {
			pl.addVictim(r.j)
		}
	}
	// Lift the jobs that move, then place them, then the pending jobs.
	h.move = h.move[:0]
	for i := range a.r {
		if j := a.r[i].j; j.Running && a.r[i].want && h.typ[i] != j.Placement.Type {
			for _, sh := range j.Placement.Shares {
				pl.free[sh.Node] += sh.GPUs
			}
			h.move = append(h.move, i)
		}
	}
	pl.touch()
	for _, i := range h.move {
		j := a.r[i].j
		place, victims, ok := pl.place(j, h.typ[i], true)
		if !ok {
			// It does not fit there after all (fragmentation): back where
			// it was, unless its GPUs went to a job moved before it.
			back := true
			for _, sh := range j.Placement.Shares {
				back = back && pl.free[sh.Node] >= sh.GPUs
			}
			if back {
				for _, sh := range j.Placement.Shares {
					pl.free[sh.Node] -= sh.GPUs
				}
				pl.touch()
				continue
			}
			place, ok = a.fill(s, p, j)
		}
		free = a.preempt(victims, free)
		a.plan.Preempt = append(a.plan.Preempt, Preemption{ID: j.ID, Reason: ReasonMigrate})
		if ok {
			a.plan.Start = append(a.plan.Start, Start{ID: j.ID, Placement: place})
		} else {
			a.r[i].want = false
			free += j.GPUs
		}
	}
	for i := range a.r {
		r := &a.r[i]
		if r.j.Running || !r.want {
			continue
		}
		place, victims, ok := pl.place(r.j, h.typ[i], true)
		if !ok {
			r.want = false // the fill may still find it room elsewhere
			continue
		}
		free = a.preempt(victims, free) - r.j.GPUs
		a.plan.Start = append(a.plan.Start, Start{ID: r.j.ID, Placement: place})
	}
	return free
}

// preempt adds victims to the plan and returns free plus their GPUs.
func (a *allocator) preempt(victims []*Job, free int) int {
	for _, v := range victims {
		a.plan.Preempt = append(a.plan.Preempt, Preemption{ID: v.ID, Reason: ReasonPriority})
		free += v.GPUs
	}
	return free
}
