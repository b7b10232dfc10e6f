package skew

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// steps builds one report: each rank's seconds for share units.
func steps(share int, secs ...float64) []Step {
	out := make([]Step, len(secs))
	for r, s := range secs {
		out[r] = Step{Rank: r, Seconds: s, Samples: share}
	}
	return out
}

func TestTrackerHysteresis(t *testing.T) {
	cfg := Config{Window: 3, Enter: 1.2, Exit: 1.05, Persist: 2, MinSteps: 1}
	type round struct {
		secs     []float64
		wantSlow []int
	}
	cases := map[string]struct {
		rounds []round
	}{
		"one spike is not persistent": {rounds: []round{
			{secs: []float64{1, 1, 1}},
			{secs: []float64{1, 1, 1}},
			{secs: []float64{1, 1, 2}},
			{secs: []float64{1, 1, 1}},
		}},
		"slow after Persist rounds, stays slow between Exit and Enter, clears under Exit": {rounds: []round{
			{secs: []float64{1, 1, 1.5}},
			{secs: []float64{1, 1, 1.5}, wantSlow: []int{2}},
			// Window 3 median: 1.5, 1.5, 1.1 -> 1.5 still.
			{secs: []float64{1, 1, 1.1}, wantSlow: []int{2}},
			// 1.5, 1.1, 1.1 -> 1.1: between Exit and Enter, held.
			{secs: []float64{1, 1, 1.1}, wantSlow: []int{2}},
			// 1.1, 1.1, 1.0 -> 1.1 held; then 1.1, 1.0, 1.0 -> 1.0 clears.
			{secs: []float64{1, 1, 1.0}, wantSlow: []int{2}},
			{secs: []float64{1, 1, 1.0}},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tr, err := NewTracker(cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range tc.rounds {
				tr.Observe(steps(4, r.secs...), 4)
				a := tr.Assess(nil)
				if diff := cmp.Diff(r.wantSlow, a.SlowRanks, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("round %d slow ranks (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestAssess(t *testing.T) {
	cfg := Config{Window: 5, Enter: 1.1, Exit: 1.05, Persist: 1, MinSteps: 2}
	cases := map[string]struct {
		reports [][]Step
		gpus    []GPU
		want    Assessment
	}{
		"not ready until every rank has MinSteps": {
			reports: [][]Step{steps(2, 1, 1)},
			want:    Assessment{Ranks: []RankSkew{{Rank: 0, Steps: 1, Share: 2}, {Rank: 1, Steps: 1, Share: 2}}},
		},
		"throttled rank": {
			reports: [][]Step{steps(2, 1, 1, 2), steps(2, 1, 1, 2)},
			gpus: []GPU{{Rank: 0, SMClockMHz: 1400, MaxSMClockMHz: 1410, SMUtil: 90}, {Rank: 1, SMClockMHz: 1400, SMUtil: 90},
				{Rank: 2, SMClockMHz: 900, MaxSMClockMHz: 1410, SMUtil: 99, PowerW: 200, PowerLimitW: 300}},
			want: Assessment{Ready: true, SlowRanks: []int{2}, MaxSlowdown: 2, Imbalance: 2/(4.0/3) - 1, Ranks: []RankSkew{
				{Rank: 0, Steps: 2, Throughput: 2, StepSeconds: 1, Share: 2, Slowdown: 1},
				{Rank: 1, Steps: 2, Throughput: 2, StepSeconds: 1, Share: 2, Slowdown: 1},
				{Rank: 2, Steps: 2, Throughput: 1, StepSeconds: 2, Share: 2, Slowdown: 2, Slow: true, Cause: CauseClock},
			}},
		},
		"a slow majority is the median: the fast rank is not slow": {
			reports: [][]Step{steps(2, 1, 3, 3), steps(2, 1, 3, 3)},
			gpus:    []GPU{{Rank: 1, SMUtil: 20}},
			want: Assessment{Ready: true, SlowRanks: []int{}, MaxSlowdown: 1, Imbalance: 3/(7.0/3) - 1, Ranks: []RankSkew{
				{Rank: 0, Steps: 2, Throughput: 2, StepSeconds: 1, Share: 2, Slowdown: 1.0 / 3},
				{Rank: 1, Steps: 2, Throughput: 2.0 / 3, StepSeconds: 3, Share: 2, Slowdown: 1},
				{Rank: 2, Steps: 2, Throughput: 2.0 / 3, StepSeconds: 3, Share: 2, Slowdown: 1},
			}},
		},
		"rebalanced shares: same throughput is not slow": {
			reports: [][]Step{{{Rank: 0, Seconds: 1, Samples: 6}, {Rank: 1, Seconds: 1, Samples: 2}}, {{Rank: 0, Seconds: 1, Samples: 6}, {Rank: 1, Seconds: 1, Samples: 2}}},
			want: Assessment{Ready: true, SlowRanks: []int{1}, MaxSlowdown: 2, Imbalance: 0, Ranks: []RankSkew{
				{Rank: 0, Steps: 2, Throughput: 6, StepSeconds: 1, Share: 6, Slowdown: 4.0 / 6},
				{Rank: 1, Steps: 2, Throughput: 2, StepSeconds: 1, Share: 2, Slowdown: 2, Slow: true, Cause: CauseUnknown},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := len(tc.reports[0])
			tr, err := NewTracker(cfg, n)
			if err != nil {
				t.Fatal(err)
			}
			var got Assessment
			for _, r := range tc.reports {
				tr.Observe(r, 2)
				got = tr.Assess(tc.gpus)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Assess (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObserveSkips(t *testing.T) {
	tr, _ := NewTracker(DefaultConfig(), 2)
	got := tr.Observe([]Step{{Rank: -1, Seconds: 1}, {Rank: 2, Seconds: 1}, {Rank: 0, Seconds: 0}, {Rank: 1, Seconds: 1, Samples: -3}, {Rank: 1, Seconds: 1}}, 1)
	if got != 4 {
		t.Errorf("skipped = %d, want 4", got)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := map[string]Config{
		"exit over enter": {Window: 5, Enter: 1.1, Exit: 1.2, Persist: 1, MinSteps: 1},
		"enter of 1":      {Window: 5, Enter: 1, Exit: 1, Persist: 1, MinSteps: 1},
		"min over window": {Window: 5, Enter: 1.1, Exit: 1, Persist: 1, MinSteps: 6},
	}
	for name, c := range bad {
		if c.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Error(err)
	}
}
