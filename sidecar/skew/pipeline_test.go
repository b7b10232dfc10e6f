package skew

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSplitLayers(t *testing.T) {
	cases := map[string]struct {
		costs, speeds []float64
		want          []int
		wantErr       error
	}{
		"one stage":         {costs: []float64{1, 2, 3}, speeds: []float64{1}, want: []int{0, 3}},
		"even":              {costs: []float64{1, 1, 1, 1}, speeds: []float64{1, 1}, want: []int{0, 2, 4}},
		"fast first stage":  {costs: []float64{1, 1, 1, 1, 1, 1}, speeds: []float64{2, 1}, want: []int{0, 4, 6}},
		"heavy head":        {costs: []float64{1, 1, 1, 1, 4}, speeds: []float64{1, 1}, want: []int{0, 4, 5}},
		"one layer a stage": {costs: []float64{5, 1, 1}, speeds: []float64{1, 1, 1}, want: []int{0, 1, 2, 3}},
		"too few layers":    {costs: []float64{1}, speeds: []float64{1, 1}, wantErr: ErrInput},
		"zero speed":        {costs: []float64{1, 1}, speeds: []float64{1, 0}, wantErr: ErrInput},
		"negative cost":     {costs: []float64{1, -1}, speeds: []float64{1}, wantErr: ErrInput},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := SplitLayers(tc.costs, tc.speeds)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SplitLayers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSplitLayersBruteForce checks the DP's optimum against every split of
// small random cases, including non-monotone ones (a very slow last stage).
func TestSplitLayersBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for it := 0; it < 500; it++ {
		S := 1 + rng.IntN(4)
		L := S + rng.IntN(7)
		costs := make([]float64, L)
		for i := range costs {
			costs[i] = math.Round(rng.Float64()*100) / 10 // ties happen
		}
		speeds := make([]float64, S)
		for k := range speeds {
			speeds[k] = []float64{0.05, 0.5, 1, 1, 2, 3}[rng.IntN(6)]
		}
		got, err := SplitLayers(costs, speeds)
		if err != nil {
			t.Fatal(err)
		}
		if !ValidBounds(got, L, S) {
			t.Fatalf("SplitLayers(%v, %v) = %v: not a split", costs, speeds, got)
		}
		want := bruteSplit(costs, speeds)
		if g := maxOf(StageSeconds(costs, speeds, got)); math.Abs(g-want) > 1e-9*max(1, want) {
			t.Fatalf("SplitLayers(%v, %v) = %v with max %v; brute force %v", costs, speeds, got, g, want)
		}
	}
}

func bruteSplit(costs, speeds []float64) float64 {
	L, S := len(costs), len(speeds)
	best := math.Inf(1)
	b := make([]int, S+1)
	b[S] = L
	var rec func(k int)
	rec = func(k int) {
		if k == S {
			best = min(best, maxOf(StageSeconds(costs, speeds, b)))
			return
		}
		for x := b[k-1] + 1; x <= L-(S-k); x++ {
			b[k] = x
			rec(k + 1)
		}
	}
	if S == 1 {
		return maxOf(StageSeconds(costs, speeds, b))
	}
	rec(1)
	return best
}

func TestPlanPipeline(t *testing.T) {
	costs := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	cases := map[string]struct {
		current []int
		seconds []float64
		want    PipelinePlan
	}{
		"second stage half speed": {
			current: []int{0, 4, 8}, seconds: []float64{4, 8},
			want: PipelinePlan{Bounds: []int{0, 6, 8}, StageSeconds: []float64{6, 4}, MaxStageSeconds: 6,
				CurrentMaxStageSeconds: 8, Gain: 8.0/6 - 1},
		},
		"balanced stays": {
			current: []int{0, 4, 8}, seconds: []float64{4, 4},
			want: PipelinePlan{Bounds: []int{0, 4, 8}, StageSeconds: []float64{4, 4}, MaxStageSeconds: 4,
				CurrentMaxStageSeconds: 4},
		},
		"nil current is the equal split": {
			current: nil, seconds: []float64{8, 4},
			want: PipelinePlan{Bounds: []int{0, 3, 8}, StageSeconds: []float64{6, 5}, MaxStageSeconds: 6,
				CurrentMaxStageSeconds: 8, Gain: 8.0/6 - 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := PlanPipeline(costs, tc.current, tc.seconds)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("PlanPipeline (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := PlanPipeline(costs, []int{0, 9, 8}, []float64{1, 1}); !errors.Is(err, ErrInput) {
		t.Errorf("bad bounds: err = %v", err)
	}
}

func BenchmarkSplitLayersMax(b *testing.B) {
	costs := make([]float64, 256)
	for i := range costs {
		costs[i] = float64(1 + i%7)
	}
	speeds := make([]float64, 16)
	for k := range speeds {
		speeds[k] = float64(1 + k%3)
	}
	for b.Loop() {
		SplitLayers(costs, speeds)
	}
}
