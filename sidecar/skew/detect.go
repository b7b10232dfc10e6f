package skew

import (
	"fmt"
	"math"
)

// Step is one rank's compute time for one training step.
type Step struct {
	Rank int `json:"rank"`
	// Step is the training step's number (informative).
	Step int64 `json:"step"`
	// Seconds is the rank's compute time for its share of the step, without
	// the time spent waiting for the other ranks.
	Seconds float64 `json:"seconds"`
	// Samples is the rank's share of the global batch in that step, in the
	// unit of the plan's global batch; 0 means equal shares.
	Samples int `json:"samples"`
}

// GPU is one rank's GPU as its telemetry last saw it. Zero means unknown.
type GPU struct {
	Rank          int     `json:"rank"`
	SMUtil        float64 `json:"sm_util"`  // percent
	MemUtil       float64 `json:"mem_util"` // percent (memory bandwidth)
	PowerW        float64 `json:"power_w"`
	PowerLimitW   float64 `json:"power_limit_w"`
	SMClockMHz    float64 `json:"sm_clock_mhz"`
	MaxSMClockMHz float64 `json:"max_sm_clock_mhz"`
	MemUsedMiB    float64 `json:"mem_used_mib"`
	MemTotalMiB   float64 `json:"mem_total_mib"`
}

// Causes a slow rank may be given, from its GPU's telemetry.
const (
	CauseClock   = "clock_throttled" // SM clock well under its maximum (thermal or power)
	CausePower   = "power_capped"    // drawing at its power limit
	CauseMemory  = "memory_full"     // GPU memory nearly full (allocator churn)
	CauseInput   = "input_bound"     // slow yet its SM mostly idle: data loading or CPU
	CauseCompute = "slower_gpu"      // busy, unthrottled and still slower: a slower GPU or a noisy neighbour
	CauseUnknown = "unknown"         // no telemetry
)

// Config tunes detection.
type Config struct {
	// Window is how many step times are kept per rank (a sliding window;
	// the median over it is the rank's pace).
	Window int
	// Enter is the slowdown (the median rank's throughput over this rank's)
	// at or above which a rank counts as slow in one assessment, and Exit
	// the slowdown below which it stops: Exit < Enter is the hysteresis.
	Enter, Exit float64
	// Persist is how many assessments in a row a rank must be over Enter
	// before it is reported slow.
	Persist int
	// MinSteps is how many step times a rank needs before it is judged.
	MinSteps int
}

// DefaultConfig is what augurd uses unless configured otherwise.
func DefaultConfig() Config {
	return Config{Window: 20, Enter: 1.10, Exit: 1.05, Persist: 3, MinSteps: 3}
}

// Validate names what is wrong with c.
func (c Config) Validate() error {
	switch {
	case c.Window < 1 || c.Window > 1000:
		return fmt.Errorf("window %d: give 1 to 1000", c.Window)
	case !(c.Enter > 1) || c.Enter > 10:
		return fmt.Errorf("enter %v: give a slowdown ratio above 1 (e.g. 1.10) up to 10", c.Enter)
	case !(c.Exit >= 1) || c.Exit > c.Enter:
		return fmt.Errorf("exit %v: give 1 up to enter (%v)", c.Exit, c.Enter)
	case c.Persist < 1 || c.Persist > 1000:
		return fmt.Errorf("persist %d: give 1 to 1000", c.Persist)
	case c.MinSteps < 1 || c.MinSteps > c.Window:
		return fmt.Errorf("min_steps %d: give 1 up to window (%d)", c.MinSteps, c.Window)
	}
	return nil
}

// Tracker keeps a job's recent step times per rank and each rank's slow
// state. It is not safe for concurrent use; augurd holds one per job under
// its own lock.
type Tracker struct {
	cfg   Config
	ranks []rankState
}

type rankState struct {
	thr     []float64 // ring of throughputs (units per second)
	secs    []float64 // ring of step seconds
	shares  []int     // ring of shares (units)
	next, n int
	over    int  // assessments in a row over Enter
	slow    bool // reported slow (hysteresis state)
}

// NewTracker returns an empty tracker for a job of n ranks.
func NewTracker(cfg Config, n int) (*Tracker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxRanks {
		return nil, fmt.Errorf("%w: %d ranks; give 1 to %d", ErrInput, n, MaxRanks)
	}
	t := &Tracker{cfg: cfg, ranks: make([]rankState, n)}
	for i := range t.ranks {
		t.ranks[i] = rankState{thr: make([]float64, cfg.Window), secs: make([]float64, cfg.Window), shares: make([]int, cfg.Window)}
	}
	return t, nil
}

// Ranks is the job's rank count.
func (t *Tracker) Ranks() int { return len(t.ranks) }

// Observe adds step times. equal is the equal share of one rank, used when
// a step reports no Samples. Steps of ranks outside the job, and
// non-positive or non-finite times, are skipped and counted in the result.
func (t *Tracker) Observe(steps []Step, equal int) (skipped int) {
	for _, s := range steps {
		if s.Rank < 0 || s.Rank >= len(t.ranks) || !(s.Seconds > 0) || math.IsInf(s.Seconds, 0) || s.Samples < 0 {
			skipped++
			continue
		}
		units := s.Samples
		if units == 0 {
			units = max(equal, 1)
		}
		r := &t.ranks[s.Rank]
		r.thr[r.next], r.secs[r.next], r.shares[r.next] = float64(units)/s.Seconds, s.Seconds, units
		r.next = (r.next + 1) % len(r.thr)
		r.n = min(r.n+1, len(r.thr))
	}
	return skipped
}

// RankSkew is one rank in an Assessment.
type RankSkew struct {
	Rank int `json:"rank"`
	// Steps is how many step times the window holds for it.
	Steps int `json:"steps"`
	// Throughput is the median of its window (units per second), 0 when it
	// has fewer than MinSteps; StepSeconds likewise.
	Throughput  float64 `json:"throughput"`
	StepSeconds float64 `json:"step_seconds"`
	// Share is its most recent share of the batch.
	Share int `json:"share"`
	// Slowdown is the median rank's throughput over its own: 1.5 means it
	// needs 1.5 times as long as the typical rank for the same work.
	Slowdown float64 `json:"slowdown"`
	// Slow is the hysteresis state: over Enter for Persist assessments in a
	// row, and not yet back under Exit.
	Slow bool `json:"slow"`
	// Cause is the likeliest reason from the GPU's telemetry (Cause...),
	// given for slow ranks only.
	Cause string `json:"cause,omitempty"`
}

// Assessment is a job's skew at one moment.
type Assessment struct {
	Ranks []RankSkew `json:"ranks"`
	// Ready: every rank has MinSteps step times; before that no rank is
	// judged and no plan is made.
	Ready bool `json:"ready"`
	// SlowRanks lists the ranks whose Slow is set.
	SlowRanks []int `json:"slow_ranks"`
	// MaxSlowdown is the largest Slowdown.
	MaxSlowdown float64 `json:"max_slowdown"`
	// Imbalance is, under the shares in use, the slowest rank's step time
	// over the mean step time, minus 1: the part of a step the other ranks
	// spend waiting on average. It is what a plan removes.
	Imbalance float64 `json:"imbalance"`
}

// Throughputs returns the ranks' throughputs in rank order (0 where
// unknown), the input of Replan.
func (a Assessment) Throughputs() []float64 {
	out := make([]float64, len(a.Ranks))
	for i, r := range a.Ranks {
		out[i] = r.Throughput
	}
	return out
}

// Shares returns each rank's latest share (0 where unknown).
func (a Assessment) Shares() []int {
	out := make([]int, len(a.Ranks))
	for i, r := range a.Ranks {
		out[i] = r.Share
	}
	return out
}

// Assess judges every rank from its window and moves the slow states one
// step (so call it once per report). gpus, which may be empty, names
// causes.
func (t *Tracker) Assess(gpus []GPU) Assessment {
	a := Assessment{Ranks: make([]RankSkew, len(t.ranks)), Ready: true}
	var thrs, secs []float64
	for i := range t.ranks {
		r := &t.ranks[i]
		rs := RankSkew{Rank: i, Steps: r.n}
		if r.n > 0 {
			rs.Share = r.shares[(r.next-1+len(r.shares))%len(r.shares)]
		}
		if r.n >= t.cfg.MinSteps {
			rs.Throughput = median(r.thr[:r.n])
			rs.StepSeconds = median(r.secs[:r.n])
			thrs = append(thrs, rs.Throughput)
			secs = append(secs, rs.StepSeconds)
		} else {
			a.Ready = false
		}
		a.Ranks[i] = rs
	}
	if !a.Ready || len(thrs) == 0 {
		return a
	}
	mid := median(thrs)
	byRank := map[int]GPU{}
	for _, g := range gpus {
		byRank[g.Rank] = g
	}
	for i := range a.Ranks {
		rs, r := &a.Ranks[i], &t.ranks[i]
		rs.Slowdown = mid / rs.Throughput
		a.MaxSlowdown = max(a.MaxSlowdown, rs.Slowdown)
		switch {
		case rs.Slowdown >= t.cfg.Enter:
			r.over++
			if r.over >= t.cfg.Persist {
				r.slow = true
			}
		case rs.Slowdown < t.cfg.Exit:
			r.over, r.slow = 0, false
		default:
			r.over = 0 // between Exit and Enter: hold the state
		}
		rs.Slow = r.slow
		if rs.Slow {
			a.SlowRanks = append(a.SlowRanks, i)
			g, ok := byRank[i]
			rs.Cause = cause(g, ok, gpus)
		}
	}
	mean := 0.0
	for _, s := range secs {
		mean += s
	}
	mean /= float64(len(secs))
	if mean > 0 {
		a.Imbalance = maxOf(secs)/mean - 1
	}
	return a
}

// cause reads a slow rank's GPU telemetry against its peers'.
func cause(g GPU, ok bool, all []GPU) string {
	if !ok {
		return CauseUnknown
	}
	var clocks []float64
	for _, p := range all {
		if p.SMClockMHz > 0 {
			clocks = append(clocks, p.SMClockMHz)
		}
	}
	switch {
	case g.MaxSMClockMHz > 0 && g.SMClockMHz > 0 && g.SMClockMHz < 0.9*g.MaxSMClockMHz,
		len(clocks) > 1 && g.SMClockMHz > 0 && g.SMClockMHz < 0.9*median(clocks):
		if g.PowerLimitW > 0 && g.PowerW >= 0.97*g.PowerLimitW {
			return CausePower
		}
		return CauseClock
	case g.PowerLimitW > 0 && g.PowerW >= 0.97*g.PowerLimitW:
		return CausePower
	case g.MemTotalMiB > 0 && g.MemUsedMiB >= 0.97*g.MemTotalMiB:
		return CauseMemory
	case g.SMUtil > 0 && g.SMUtil < 50:
		return CauseInput
	case g.SMUtil > 0 || g.SMClockMHz > 0 || g.PowerW > 0:
		return CauseCompute
	}
	return CauseUnknown
}
