package policy

import (
	"testing"

	"github.com/augur-hpc/augur/predictor"
)

// TestTypeConstrainedPreemption: a short job that fits only the a100s waits
// behind long a100 jobs while the t4s are free: free t4s must not hide that
// it needs preemption on the a100s (the live scheduler's case).
func TestTypeConstrainedPreemption(t *testing.T) {
	s := &Snapshot{Now: 10000,
		Types: []GPUType{{Name: "a100", MemMiB: 81920}, {Name: "t4", MemMiB: 16384}},
		Nodes: []Node{{Name: "n", Type: 0, Total: 4, Free: 0}, {Name: "n", Type: 1, Total: 4, Free: 4}},
	}
	for i := 0; i < 4; i++ {
		s.Running = append(s.Running, &Job{ID: int64(i + 1), GPUs: 1, Submit: 0, Running: true, Started: 100,
			Runtime: predictor.Quantiles{P50: 1e6, Hi: 2e6}, MemMiB: predictor.Quantiles{P50: 1000, Hi: 2000},
			Attained: 9900, Done: 9900, Rate: []float64{1, 0},
			Placement: Placement{Type: 0, Shares: []Share{{Node: 0, GPUs: 1}}}})
	}
	s.Pending = []*Job{{ID: 9, GPUs: 4, Submit: 5000, Runtime: predictor.Quantiles{P50: 600, Hi: 900},
		MemMiB: predictor.Quantiles{P50: 30000, Hi: 40000}, Rate: []float64{1, 0}, Avoid: 1 << 1}}
	pol, err := ByName("augur", Params{RestartCost: 60})
	if err != nil {
		t.Fatal(err)
	}
	plan := pol.Schedule(s)
	if len(plan.Preempt) != 4 || len(plan.Start) != 1 || plan.Start[0].ID != 9 || plan.Start[0].Placement.Type != 0 {
		t.Errorf("the a100-only job was not started on the a100s by preempting their jobs: start %+v, preempt %+v",
			plan.Start, plan.Preempt)
	}
}
