package sim

import (
	"container/heap"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/sidecar/policy"
)

// Config is one simulation's set-up.
type Config struct {
	Cluster Cluster
	// RestartCost is the time a preempted job loses when it starts again.
	RestartCost float64
	// OOMAfter is how long a job placed where it does not fit runs before
	// it fails (seconds).
	OOMAfter float64
	// Predictor, when set, predicts every job at its submission from the
	// outcomes of jobs of the same Group and GPU count that finished before
	// then (newest first), replacing the jobs' own predictions.
	Predictor predictor.Predictor
	// Progress, when set, is called now and then with the jobs finished.
	Progress func(done, total int)
	// Limits says what time limit the policies see as each job's estimate
	// (policy.Job.Estimate, which EASY backfill reserves by): LimitsNone
	// (the prediction, as before), LimitsUser (the job's own Limit) or
	// LimitsAugur (the Limit lowered to Augur's time_hint where the job is
	// predictable, predictor.TimeHint), or LimitsTimeMin (the job's own
	// Limit, with Slurm's TimeMin set to Augur's upper prediction where the
	// job is predictable: live.time_min).
	Limits string
}

// Config.Limits values.
const (
	LimitsNone  = ""
	LimitsUser  = "user limits"
	LimitsAugur = "augur limits"
	// LimitsTimeMin: backfill may start a job before the head's
	// reservation on a limit cut to fit, down to the upper prediction; a
	// job that runs past its cut limit is killed (its work lost) and
	// queued again on its own limit, as a user would resubmit it.
	LimitsTimeMin = "user limits, augur time_min"
)

// Result is what a policy achieved on a trace.
type Result struct {
	Policy      string
	Jobs        int
	AvgJCT      float64
	MedianJCT   float64
	P95JCT      float64
	P99JCT      float64
	AvgQueue    float64 // submission to first start
	Makespan    float64 // first submission to last completion
	Utilization float64 // allocated GPU time / (GPUs x makespan)
	// Speed is the jobs' work (GPU-seconds at each job's reference speed,
	// on Gavel traces its fastest type) over the GPU time allocated to them:
	// 1 when every job ran at its best speed and lost nothing to restarts.
	Speed       float64
	MaxSlowdown float64 // JCT / ideal run time, the ideal floored at 60 s
	Preemptions int
	// Migrations are the preemptions whose job started again at once, in
	// the same plan, on another GPU type.
	Migrations  int
	OOMFailures int
	// LimitMisses counts the jobs (LimitsAugur) that ran longer than the
	// limit Augur lowered theirs to: in Slurm they could have been killed
	// for time had backfill started them on the lowered limit. With
	// LimitsTimeMin it counts the runs killed at a limit TimeMin cut.
	LimitMisses int
	// TimeMinStarts counts the runs backfill started on a cut limit.
	TimeMinStarts int
	Calls         int // Schedule calls
	// JCTs are the jobs' completion times, ascending.
	JCTs []float64
}

type state struct {
	pj      policy.Job
	sj      *Job
	end     float64 // completion (or failure) of the current run
	ver     int     // bumps when a run ends, to drop stale heap entries
	oom     bool
	timeout bool    // the current run ends at a limit TimeMin cut, unfinished
	limit0  float64 // the job's own Estimate, while a cut one stands in
	runIdx  int
	overOff float64 // restart overhead of the current run
	done0   float64 // Done at the start of the current run
	att0    float64
	rate    float64
	first   float64
	started bool
}

type endEvent struct {
	t   float64
	s   *state
	ver int
}

type endHeap []endEvent

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].s.pj.ID < h[j].s.pj.ID
}
func (h endHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(endEvent)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type groupKey struct {
	group string
	gpus  int
}

// Run simulates jobs (sorted by Submit) on cfg.Cluster under p.
func Run(cfg Config, p policy.Policy, jobs []Job) (Result, error) {
	oracle := false
	if o, ok := p.(policy.Oracle); ok {
		oracle = o.UsesTrueDurations()
	}
	if cfg.OOMAfter <= 0 {
		cfg.OOMAfter = 60
	}
	snap := &policy.Snapshot{Types: cfg.Cluster.Types, Nodes: append([]policy.Node(nil), cfg.Cluster.Nodes...)}
	totalGPUs := snap.TotalGPUs()
	maxGPUs := cfg.Cluster.MaxJobGPUs()
	states := make([]state, len(jobs))
	byID := make(map[int64]*state, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		if i > 0 && j.Submit < jobs[i-1].Submit {
			return Result{}, fmt.Errorf("jobs are not sorted by submission (job %d)", j.ID)
		}
		if j.GPUs < 1 || j.GPUs > maxGPUs {
			return Result{}, fmt.Errorf("job %d asks for %d GPUs; a job gets at most the %d of one GPU type", j.ID, j.GPUs, maxGPUs)
		}
		if _, dup := byID[j.ID]; dup {
			return Result{}, fmt.Errorf("job %d appears twice", j.ID)
		}
		st := &states[i]
		st.sj = j
		st.pj = policy.Job{ID: j.ID, GPUs: j.GPUs, Kind: j.Kind, Submit: j.Submit, Runtime: j.Runtime,
			MemMiB: j.MemMiB, Predictable: j.Predictable, Rate: j.Rate}
		if oracle {
			st.pj.True = j.Work
		}
		byID[j.ID] = st
	}
	history := map[groupKey][]predictor.Outcome{}
	res := Result{Policy: p.Name(), Jobs: len(jobs)}
	if cfg.Limits != LimitsNone {
		res.Policy += " (" + cfg.Limits + ")"
	}
	var ends endHeap
	moved := map[int64]int{} // this plan's preempted jobs: their GPU type
	next := 0
	now := 0.0
	wake := 0.0
	finished := 0
	busy := 0.0 // allocated GPU-seconds
	work := 0.0 // finished jobs' work, GPU-seconds at reference speed
	first, last := math.Inf(1), 0.0
	for finished < len(jobs) {
		t := math.Inf(1)
		if next < len(jobs) {
			t = jobs[next].Submit
		}
		for len(ends) > 0 && ends[0].ver != ends[0].s.ver {
			heap.Pop(&ends)
		}
		if len(ends) > 0 {
			t = math.Min(t, ends[0].t)
		}
		if wake > now {
			t = math.Min(t, wake)
		}
		if math.IsInf(t, 1) {
			return res, fmt.Errorf("%s left %d jobs waiting on an idle cluster at t=%.0f", p.Name(), len(snap.Pending), now)
		}
		now = t
		snap.Now = now
		// Completions and failures.
		for len(ends) > 0 && ends[0].t <= now {
			e := heap.Pop(&ends).(endEvent)
			st := e.s
			if e.ver != st.ver {
				continue
			}
			busy += stop(snap, byID, st, now)
			if st.timeout {
				res.LimitMisses++
				st.timeout = false
				st.pj.Done, st.pj.Estimate, st.pj.EstimateMin = st.done0, st.limit0, 0
				st.pj.Placement = policy.Placement{}
				insertPending(snap, &st.pj)
				continue
			}
			if st.oom {
				res.OOMFailures++
				st.pj.Avoid |= 1 << uint(st.pj.Placement.Type)
				st.pj.Placement = policy.Placement{}
				insertPending(snap, &st.pj)
				continue
			}
			st.pj.Placement = policy.Placement{}
			finished++
			jct := now - st.pj.Submit
			res.JCTs = append(res.JCTs, jct)
			res.AvgQueue += st.first - st.pj.Submit
			work += st.sj.Work * float64(st.sj.GPUs)
			ideal := math.Max(st.sj.Work, 60)
			res.MaxSlowdown = math.Max(res.MaxSlowdown, jct/ideal)
			first, last = math.Min(first, st.pj.Submit), math.Max(last, now)
			if cfg.Predictor != nil {
				k := groupKey{st.sj.Group, st.sj.GPUs}
				h := append([]predictor.Outcome{{JobID: uint64(st.pj.ID), RuntimeSec: st.sj.Work, ExitState: "COMPLETED"}}, history[k]...)
				if len(h) > 32 {
					h = h[:32]
				}
				history[k] = h
			}
			if cfg.Progress != nil && finished%1024 == 0 {
				cfg.Progress(finished, len(jobs))
			}
		}
		// Arrivals.
		for next < len(jobs) && jobs[next].Submit <= now {
			st := &states[next]
			if cfg.Predictor != nil {
				pr := cfg.Predictor.Predict(predictor.Job{GPUs: []predictor.GPURequest{{Scope: "job", Count: int64(st.sj.GPUs)}}}, history[groupKey{st.sj.Group, st.sj.GPUs}])
				st.pj.Runtime, st.pj.Predictable = pr.RuntimeSec, pr.Predictable
				if pr.MemSource != predictor.SourceDefault {
					st.pj.MemMiB = pr.GPUMemMiB
				}
			}
			switch cfg.Limits {
			case LimitsUser:
				st.pj.Estimate = st.sj.Limit
			case LimitsTimeMin:
				st.pj.Estimate = st.sj.Limit
				p := predictor.Prediction{RuntimeSec: st.pj.Runtime, Predictable: st.pj.Predictable}
				if tm, ok := predictor.TimeMin(p, time.Duration(st.sj.Limit*float64(time.Second))); ok {
					st.pj.EstimateMin = tm.Seconds()
				}
			case LimitsAugur:
				st.pj.Estimate = st.sj.Limit
				p := predictor.Prediction{RuntimeSec: st.pj.Runtime, Predictable: st.pj.Predictable}
				if hint, ok := predictor.TimeHint(p, time.Duration(st.sj.Limit*float64(time.Second))); ok {
					st.pj.Estimate = hint.Seconds()
					if st.sj.Work > st.pj.Estimate {
						res.LimitMisses++
					}
				}
			}
			insertPending(snap, &st.pj)
			next++
		}
		for _, j := range snap.Running {
			st := byID[j.ID]
			j.Attained = st.att0 + (now - j.Started)
			j.Done = st.done0 + math.Max(now-j.Started-st.overOff, 0)*st.rate
		}
		plan := p.Schedule(snap)
		res.Calls++
		wake = plan.Wake
		clear(moved)
		for _, pr := range plan.Preempt {
			st := byID[pr.ID]
			if st == nil || !st.pj.Running {
				return res, fmt.Errorf("%s preempts job %d, which is not running", p.Name(), pr.ID)
			}
			busy += stop(snap, byID, st, now)
			moved[pr.ID] = st.pj.Placement.Type
			st.pj.Placement = policy.Placement{}
			st.pj.Preemptions++
			st.pj.Requeued = now
			res.Preemptions++
			insertPending(snap, &st.pj)
		}
		for _, s := range plan.Start {
			st := byID[s.ID]
			if st == nil || st.pj.Running || st.pj.Submit > now {
				return res, fmt.Errorf("%s starts job %d, which is not pending", p.Name(), s.ID)
			}
			if err := start(snap, st, s.Placement, now, cfg); err != nil {
				return res, fmt.Errorf("%s: %w", p.Name(), err)
			}
			if from, ok := moved[s.ID]; ok && from != s.Placement.Type {
				res.Migrations++
			}
			if s.Limit > 0 && cfg.Limits == LimitsTimeMin {
				res.TimeMinStarts++
				st.limit0, st.pj.Estimate = st.pj.Estimate, s.Limit
				if !st.oom && st.end > now+s.Limit {
					st.end, st.timeout = now+s.Limit, true
				}
			}
			heap.Push(&ends, endEvent{st.end, st, st.ver})
		}
	}
	sort.Float64s(res.JCTs)
	n := float64(len(res.JCTs))
	if n > 0 {
		sum := 0.0
		for _, x := range res.JCTs {
			sum += x
		}
		res.AvgJCT = sum / n
		res.AvgQueue /= n
		res.MedianJCT = quantile(res.JCTs, 0.5)
		res.P95JCT = quantile(res.JCTs, 0.95)
		res.P99JCT = quantile(res.JCTs, 0.99)
		res.Makespan = last - first
		if busy > 0 {
			res.Speed = work / busy
		}
		if res.Makespan > 0 {
			res.Utilization = busy / (float64(totalGPUs) * res.Makespan)
		}
	}
	return res, nil
}

func quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// insertPending adds j to the pending list, kept in (Submit, ID) order.
func insertPending(s *policy.Snapshot, j *policy.Job) {
	i := sort.Search(len(s.Pending), func(i int) bool {
		p := s.Pending[i]
		return p.Submit > j.Submit || (p.Submit == j.Submit && p.ID > j.ID)
	})
	s.Pending = append(s.Pending, nil)
	copy(s.Pending[i+1:], s.Pending[i:])
	s.Pending[i] = j
}

func removePending(s *policy.Snapshot, j *policy.Job) bool {
	i := sort.Search(len(s.Pending), func(i int) bool {
		p := s.Pending[i]
		return p.Submit > j.Submit || (p.Submit == j.Submit && p.ID >= j.ID)
	})
	if i == len(s.Pending) || s.Pending[i] != j {
		return false
	}
	s.Pending = append(s.Pending[:i], s.Pending[i+1:]...)
	return true
}

// start runs a pending job on a placement, checking it is free.
func start(s *policy.Snapshot, st *state, pl policy.Placement, now float64, cfg Config) error {
	j := &st.pj
	got := 0
	for _, sh := range pl.Shares {
		if sh.Node < 0 || sh.Node >= len(s.Nodes) || sh.GPUs < 1 || s.Nodes[sh.Node].Free < sh.GPUs || s.Nodes[sh.Node].Type != pl.Type {
			return fmt.Errorf("job %d: placement %+v does not fit the free GPUs", j.ID, pl)
		}
		got += sh.GPUs
	}
	if got != j.GPUs {
		return fmt.Errorf("job %d: placement gives %d GPUs, it asks for %d", j.ID, got, j.GPUs)
	}
	if !removePending(s, j) {
		return fmt.Errorf("job %d is not pending", j.ID)
	}
	for _, sh := range pl.Shares {
		s.Nodes[sh.Node].Free -= sh.GPUs
	}
	j.Running, j.Started, j.Placement = true, now, pl
	st.runIdx = len(s.Running)
	s.Running = append(s.Running, j)
	if !st.started {
		st.started, st.first = true, now
	}
	st.done0, st.att0 = j.Done, j.Attained
	st.overOff = 0
	if j.Preemptions > 0 {
		st.overOff = cfg.RestartCost
	}
	st.rate = j.RateOn(pl.Type)
	if st.sj.Rate != nil {
		st.rate = st.sj.Rate[pl.Type]
	}
	st.oom = st.rate <= 0
	if st.oom {
		st.end = now + cfg.OOMAfter
	} else {
		st.end = now + st.overOff + (st.sj.Work-j.Done)/st.rate
	}
	return nil
}

// stop ends the current run of a running job, frees its GPUs and returns
// the GPU-seconds it held.
func stop(s *policy.Snapshot, byID map[int64]*state, st *state, now float64) float64 {
	j := &st.pj
	j.Attained = st.att0 + (now - j.Started)
	if !st.oom {
		j.Done = math.Min(st.done0+math.Max(now-j.Started-st.overOff, 0)*st.rate, st.sj.Work)
	}
	for _, sh := range j.Placement.Shares {
		s.Nodes[sh.Node].Free += sh.GPUs
	}
	i, last := st.runIdx, len(s.Running)-1
	if i < last {
		s.Running[i] = s.Running[last]
		byID[s.Running[i].ID].runIdx = i
	}
	s.Running = s.Running[:last]
	st.ver++
	j.Running = false
	return (now - j.Started) * float64(j.GPUs)
}
