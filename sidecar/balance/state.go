package balance

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/augur-hpc/augur/sidecar/skew"
	"github.com/augur-hpc/augur/sidecar/store"
)

// Options tune the endpoint's decisions.
type Options struct {
	Skew skew.Config
	// MinGain is skew.Replan's threshold.
	MinGain float64
	// MaxJobs and JobIdle bound the jobs held in memory.
	MaxJobs int
	JobIdle time.Duration
}

// job is one job's state. Its methods are pure: they change the job and
// return what to answer and what to store.
type job struct {
	id      uint64
	owner   uint32
	world   int
	global  int
	tracker *skew.Tracker
	reports int
	slow    []int
	last    time.Time
	answer  Answer
	plan    skew.Plan
}

func newJob(id uint64, owner uint32, req *StepsRequest, o Options) (*job, error) {
	tr, err := skew.NewTracker(o.Skew, req.WorldSize)
	if err != nil {
		return nil, err
	}
	return &job{id: id, owner: owner, world: req.WorldSize, global: req.GlobalBatch, tracker: tr}, nil
}

// apply takes one report and returns the answer and the records to store.
func (j *job) apply(req *StepsRequest, now time.Time, o Options) (Answer, []store.SkewRecord) {
	if req.WorldSize != j.world || req.GlobalBatch != j.global {
		// The job restarted with another shape: start over.
		j.tracker, _ = skew.NewTracker(o.Skew, req.WorldSize)
		j.world, j.global, j.plan, j.slow = req.WorldSize, req.GlobalBatch, skew.Plan{}, nil
	}
	j.reports++
	j.last = now
	equal := req.GlobalBatch / req.WorldSize
	skipped := j.tracker.Observe(req.Steps, equal)
	a := j.tracker.Assess(req.GPUs)
	ans := Answer{JobID: j.id, Reports: j.reports, SkippedSteps: skipped, Assessment: a}
	var recs []store.SkewRecord
	rec := func(event string, p any) store.SkewRecord {
		r := store.SkewRecord{
			JobID: j.id, At: now, UserID: j.owner, Event: event, Ranks: j.world, SlowRanks: a.SlowRanks,
			MaxSlowdown: a.MaxSlowdown, Imbalance: a.Imbalance, PlanVersion: j.plan.Version, Gain: j.plan.Gain,
		}
		if p != nil {
			r.Plan, _ = json.Marshal(p)
		}
		r.Detail, _ = json.Marshal(a)
		return r
	}
	if !sameInts(a.SlowRanks, j.slow) {
		event := store.SkewSlow
		if len(a.SlowRanks) == 0 {
			event = store.SkewRecovered
		}
		recs = append(recs, rec(event, nil))
		j.slow = append([]int(nil), a.SlowRanks...)
	}
	if !a.Ready {
		ans.Note = "not enough step times yet: every rank needs a few before a plan is made"
		if j.plan.Version > 0 {
			p := j.plan
			ans.Plan = &p
		}
	} else {
		p, changed, err := skew.Replan(j.plan, a.Throughputs(), a.Shares(), j.global, o.MinGain)
		if err != nil {
			ans.Note = err.Error()
		} else {
			j.plan = p
			ans.Plan = &p
			if changed {
				recs = append(recs, rec(store.SkewPlan, planRecord{Plan: &p}))
			}
		}
	}
	if req.Pipeline != nil {
		pp, err := skew.PlanPipeline(req.Pipeline.LayerCosts, nilIfEmpty(req.Pipeline.Bounds), req.Pipeline.StageSeconds)
		switch {
		case errors.Is(err, skew.ErrInput):
			ans.Note = joinNote(ans.Note, err.Error())
		case err == nil:
			ans.Pipeline = &pp
			if pp.Gain > 0 && !sameInts(pp.Bounds, j.answer.pipelineBounds()) {
				recs = append(recs, rec(store.SkewPlan, planRecord{Plan: ans.Plan, Pipeline: &pp}))
			}
		}
	} else if j.answer.Pipeline != nil {
		ans.Pipeline = j.answer.Pipeline
	}
	j.answer = ans
	return ans, recs
}

type planRecord struct {
	Plan     *skew.Plan         `json:"plan,omitempty"`
	Pipeline *skew.PipelinePlan `json:"pipeline,omitempty"`
}

func (a Answer) pipelineBounds() []int {
	if a.Pipeline == nil {
		return nil
	}
	return a.Pipeline.Bounds
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func nilIfEmpty(b []int) []int {
	if len(b) == 0 {
		return nil
	}
	return b
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
