package skew

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestShares(t *testing.T) {
	cases := map[string]struct {
		thr     []float64
		global  int
		want    []int
		wantErr error
	}{
		"equal speeds":           {thr: []float64{10, 10, 10, 10}, global: 64, want: []int{16, 16, 16, 16}},
		"two to one":             {thr: []float64{2, 1}, global: 30, want: []int{20, 10}},
		"largest remainder":      {thr: []float64{1, 1, 1}, global: 10, want: []int{4, 3, 3}},
		"remainder to faster":    {thr: []float64{1, 2, 2}, global: 7, want: []int{1, 3, 3}},
		"floor of one":           {thr: []float64{1000, 1}, global: 8, want: []int{7, 1}},
		"exactly one each":       {thr: []float64{5, 1, 3}, global: 3, want: []int{1, 1, 1}},
		"unknown gets median":    {thr: []float64{4, 0, 4, math.NaN()}, global: 8, want: []int{2, 2, 2, 2}},
		"all unknown":            {thr: []float64{0, 0}, global: 5, want: []int{3, 2}},
		"gavel v100 k80 mix":     {thr: []float64{7.79 * 32, 7.79 * 32, 1.24 * 32, 1.24 * 32}, global: 128, want: []int{55, 55, 9, 9}},
		"no ranks":               {thr: nil, global: 4, wantErr: ErrInput},
		"batch under rank count": {thr: []float64{1, 1, 1}, global: 2, wantErr: ErrInput},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Shares(tc.thr, tc.global)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Shares (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSharesProperties: on random inputs the shares sum to the batch, are
// all ≥ 1, and the step time is within one unit of the best integer split
// (checked against brute force on small cases).
func TestSharesProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 300; it++ {
		n := 1 + rng.IntN(4)
		global := n + rng.IntN(12)
		thr := make([]float64, n)
		for i := range thr {
			thr[i] = 0.1 + rng.Float64()*10
		}
		got, err := Shares(thr, global)
		if err != nil {
			t.Fatal(err)
		}
		if sum(got) != global {
			t.Fatalf("Shares(%v, %d) = %v sums to %d", thr, global, got, sum(got))
		}
		for _, s := range got {
			if s < 1 {
				t.Fatalf("Shares(%v, %d) = %v has a share under 1", thr, global, got)
			}
		}
		best := bruteShares(thr, global)
		// Largest remainder is not always the min-max integer split, but it
		// is never worse than the best by more than one unit on the slowest
		// rank it touched.
		slack := 0.0
		for _, x := range thr {
			slack = max(slack, 1/x)
		}
		if StepSeconds(got, thr) > best+slack+1e-12 {
			t.Fatalf("Shares(%v, %d) = %v: step %v, best %v", thr, global, got, StepSeconds(got, thr), best)
		}
	}
}

func bruteShares(thr []float64, global int) float64 {
	best := math.Inf(1)
	cur := make([]int, len(thr))
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == len(thr)-1 {
			if left < 1 {
				return
			}
			cur[i] = left
			best = min(best, StepSeconds(cur, thr))
			return
		}
		for s := 1; s <= left-(len(thr)-1-i); s++ {
			cur[i] = s
			rec(i+1, left-s)
		}
	}
	rec(0, global)
	return best
}

func TestReplan(t *testing.T) {
	cases := map[string]struct {
		prev        Plan
		thr         []float64
		current     []int
		global      int
		want        Plan
		wantChanged bool
	}{
		"first plan": {
			thr: []float64{3, 1}, current: []int{4, 4}, global: 8,
			want: Plan{Version: 1, GlobalBatch: 8, Shares: []int{6, 2}, LossScale: []float64{1.5, 0.5},
				CurrentStepSeconds: 4, PredictedStepSeconds: 2, Gain: 1},
			wantChanged: true,
		},
		"gain under threshold keeps the previous plan": {
			prev: Plan{Version: 3, GlobalBatch: 8, Shares: []int{6, 2}},
			thr:  []float64{3.2, 1}, current: []int{6, 2}, global: 8,
			want: Plan{Version: 3, GlobalBatch: 8, Shares: []int{6, 2}, LossScale: []float64{1.5, 0.5},
				CurrentStepSeconds: 2, PredictedStepSeconds: 2},
		},
		"already balanced, no previous plan": {
			thr: []float64{1, 1}, current: nil, global: 8,
			want: Plan{Version: 1, GlobalBatch: 8, Shares: []int{4, 4}, LossScale: []float64{1, 1},
				CurrentStepSeconds: 4, PredictedStepSeconds: 4},
			wantChanged: true,
		},
		"speeds swapped": {
			prev: Plan{Version: 2, GlobalBatch: 8, Shares: []int{6, 2}},
			thr:  []float64{1, 3}, current: []int{6, 2}, global: 8,
			want: Plan{Version: 3, GlobalBatch: 8, Shares: []int{2, 6}, LossScale: []float64{0.5, 1.5},
				CurrentStepSeconds: 6, PredictedStepSeconds: 2, Gain: 2},
			wantChanged: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, changed, err := Replan(tc.prev, tc.thr, tc.current, tc.global, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("Replan (-want +got):\n%s", diff)
			}
			if changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
		})
	}
}
