package live

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func p64(v int64) *int64 { return &v }

func TestAssignSiteFactors(t *testing.T) {
	// Ids fall along most orders here, so each job is its own run.
	cases := map[string]struct {
		order []int64
		cur   map[int64]int64
		max   int64
		want  []SiteFactorChange
	}{
		"empty": {max: 100},
		"fresh jobs spread over the range": {
			order: []int64{3, 2, 1}, cur: map[int64]int64{}, max: 99,
			want: []SiteFactorChange{{JobID: 3, Value: 75, Rank: 0}, {JobID: 2, Value: 50, Rank: 1}, {JobID: 1, Value: 25, Rank: 2}},
		},
		"already in order: no writes": {
			order: []int64{3, 2, 1}, cur: map[int64]int64{3: 75, 2: 50, 1: 25}, max: 99,
		},
		"a new job slots into a gap: one write": {
			order: []int64{30, 25, 20, 10}, cur: map[int64]int64{30: 75, 20: 50, 10: 25}, max: 99,
			want: []SiteFactorChange{{JobID: 25, Value: 63, Rank: 1}},
		},
		"a job moved to the front: one write": {
			order: []int64{5, 3, 2}, cur: map[int64]int64{3: 75, 2: 50, 5: 25}, max: 99,
			want: []SiteFactorChange{{JobID: 5, Value: 88, Previous: p64(25), Rank: 0}},
		},
		"all zero (Slurm's default): the last keeps 0": {
			order: []int64{3, 2, 1}, cur: map[int64]int64{1: 0, 2: 0, 3: 0}, max: 8,
			want: []SiteFactorChange{{JobID: 3, Value: 6, Previous: p64(0), Rank: 0}, {JobID: 2, Value: 3, Previous: p64(0), Rank: 1}},
		},
		"no room in a gap: neighbours move": {
			order: []int64{30, 25, 20}, cur: map[int64]int64{30: 10, 20: 9}, max: 10,
			want: []SiteFactorChange{{JobID: 25, Value: 7, Rank: 1}, {JobID: 20, Value: 3, Previous: p64(9), Rank: 2}},
		},
		"values out of range are rewritten": {
			order: []int64{2, 1}, cur: map[int64]int64{2: 500, 1: -3}, max: 9,
			want: []SiteFactorChange{{JobID: 2, Value: 7, Previous: p64(500), Rank: 0}, {JobID: 1, Value: 3, Previous: p64(-3), Rank: 1}},
		},
		"more runs than values: buckets": {
			order: []int64{4, 3, 2, 1}, cur: map[int64]int64{}, max: 1,
			want: []SiteFactorChange{{JobID: 4, Value: 1}, {JobID: 3, Value: 1, Rank: 1}, {JobID: 2, Value: 0, Rank: 2}, {JobID: 1, Value: 0, Rank: 3}},
		},
		"rising ids share a value: Slurm orders them by id": {
			order: []int64{1, 2, 3, 7, 5, 6}, cur: map[int64]int64{}, max: 98,
			want: []SiteFactorChange{{JobID: 1, Value: 66}, {JobID: 2, Value: 66, Rank: 1}, {JobID: 3, Value: 66, Rank: 2},
				{JobID: 7, Value: 66, Rank: 3}, {JobID: 5, Value: 33, Rank: 4}, {JobID: 6, Value: 33, Rank: 5}},
		},
		"a new job at the end of a run: one write": {
			order: []int64{1, 2, 3, 4}, cur: map[int64]int64{1: 0, 2: 0, 3: 0}, max: 98,
			want: []SiteFactorChange{{JobID: 4, Value: 0, Rank: 3}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := AssignSiteFactors(tc.order, tc.cur, tc.max)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestAssignSiteFactorsProperties: on random orders and histories the
// result is within range and falls along the order (equal only where ids
// rise, which Slurm's tie-break by id orders), and a
// second pass over the result writes nothing.
func TestAssignSiteFactorsProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		n := rng.IntN(60)
		max := int64(n) + rng.Int64N(200)
		order := make([]int64, n)
		cur := map[int64]int64{}
		for i := range order {
			order[i] = int64(i + 1)
			if rng.IntN(3) > 0 {
				cur[order[i]] = rng.Int64N(max+20) - 10
			}
		}
		rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		final := map[int64]int64{}
		for k, v := range cur {
			final[k] = v
		}
		for _, c := range AssignSiteFactors(order, cur, max) {
			final[c.JobID] = c.Value
		}
		for i, id := range order {
			v, ok := final[id]
			if !ok || v < 0 || v > max {
				t.Fatalf("iter %d: job %d has %d (set %v) outside [0,%d]", iter, id, v, ok, max)
			}
			if i > 0 && (final[order[i-1]] < v || final[order[i-1]] == v && order[i-1] > id) {
				t.Fatalf("iter %d: not decreasing at %d: %d then %d", iter, i, final[order[i-1]], v)
			}
		}
		if again := AssignSiteFactors(order, final, max); len(again) != 0 {
			t.Fatalf("iter %d: second pass writes %v", iter, again)
		}
	}
}

func BenchmarkAssignSiteFactors10k(b *testing.B) {
	order := make([]int64, 10000)
	cur := map[int64]int64{}
	for i := range order {
		order[i] = int64(i)
		cur[int64(i)] = int64((10000 - i) * 10)
	}
	order[0], order[5000] = order[5000], order[0]
	for b.Loop() {
		AssignSiteFactors(order, cur, 100000)
	}
}
