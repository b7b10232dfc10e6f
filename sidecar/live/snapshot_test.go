package live

import (
	"testing"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/sidecar/policy"
	"github.com/augur-hpc/augur/sidecar/slurm"
	"github.com/google/go-cmp/cmp"
)

var testTypes = []policy.GPUType{{Name: "t4", MemMiB: 16384}, {Name: "a100", MemMiB: 81920}}

func TestBuildSnapshot(t *testing.T) {
	now := t0.Add(time.Hour)
	node := slurm.Node{Name: "vm", State: "MIXED", Gres: "gpu:a100:4,gpu:t4:4", GresUsed: "gpu:a100:1(IDX:0),gpu:t4:0(IDX:N/A)"}
	cases := map[string]struct {
		jobs      []slurm.Job
		nodes     []slurm.Node
		want      *policy.Snapshot
		unsettled bool
		held      int
	}{
		"running, pending typeless with a prediction, held and finished": {
			jobs: []slurm.Job{
				jb(3).GPUs("gres:gpu:2").Pred("augur:tok=a pred_gpu_mem=20G pred_time=00:10:00(p95:00:20:00)").Obj(),
				jb(1).GPUs("gres:gpu:a100:1").Running(t0, "vm", "gpu:a100:1(IDX:0)").Restarts(1).Obj(),
				jb(2).Held().Obj(),
				jb(4).State("COMPLETED").Obj(),
			},
			nodes: []slurm.Node{node},
			held:  1,
			want: &policy.Snapshot{
				Now:   float64(now.Unix()),
				Types: testTypes,
				Nodes: []policy.Node{{Name: "vm/a100", Type: 1, Total: 4, Free: 3}, {Name: "vm/t4", Type: 0, Total: 4, Free: 4}},
				Pending: []*policy.Job{{ID: 3, GPUs: 2, Submit: float64(t0.Unix() + 3),
					Runtime: predictor.Quantiles{P50: 600, Hi: 1200}, MemMiB: predictor.Quantiles{P50: 20480, Hi: 20480}, Predictable: true}},
				Running: []*policy.Job{{ID: 1, GPUs: 1, Submit: float64(t0.Unix() + 1), Avoid: ^uint64(0) &^ 2, Preemptions: 1,
					Running: true, Started: float64(t0.Unix()), Attained: 3600, Done: 3600,
					Placement: policy.Placement{Type: 1, Shares: []policy.Share{{Node: 0, GPUs: 1}}}}},
			},
		},
		"gres_used empty (libslurm without SHOW_DETAIL): running jobs' GPUs are not free": {
			jobs:  []slurm.Job{jb(1).GPUs("gres:gpu:t4:3").Running(t0, "vm", "gpu:t4:3(IDX:4-6)").NoRequeue().Obj()},
			nodes: []slurm.Node{{Name: "vm", State: "MIXED", Gres: "gpu:a100:4,gpu:t4:4"}},
			want: &policy.Snapshot{Now: float64(now.Unix()), Types: testTypes,
				Nodes: []policy.Node{{Name: "vm/a100", Type: 1, Total: 4, Free: 4}, {Name: "vm/t4", Type: 0, Total: 4, Free: 1}},
				Running: []*policy.Job{{ID: 1, GPUs: 3, Submit: float64(t0.Unix() + 1), Avoid: ^uint64(0) &^ 1,
					Running: true, Started: float64(t0.Unix()), Attained: 3600, Done: 3600,
					Placement: policy.Placement{Type: 0, Shares: []policy.Share{{Node: 1, GPUs: 3}}}}}},
		},
		"a drained node has no free GPUs; an unknown type is added": {
			nodes: []slurm.Node{{Name: "n1", State: "IDLE+DRAIN", Gres: "gpu:h100:8"}},
			want: &policy.Snapshot{Now: float64(now.Unix()), Types: append(append([]policy.GPUType(nil), testTypes...), policy.GPUType{Name: "h100"}),
				Nodes: []policy.Node{{Name: "n1/h100", Type: 2, Total: 8}}},
		},
		"a node slurmctld does not know yet is unsettled": {
			nodes:     []slurm.Node{{Name: "n1", State: "UNKNOWN", Gres: "gpu:a100:8"}},
			unsettled: true,
			want:      &policy.Snapshot{Now: float64(now.Unix()), Types: testTypes, Nodes: []policy.Node{{Name: "n1/a100", Type: 1, Total: 8}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := BuildSnapshot(now, tc.jobs, tc.nodes, testTypes)
			if diff := cmp.Diff(tc.want, v.Snapshot); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
			if v.NodesUnsettled != tc.unsettled || v.Held != tc.held {
				t.Errorf("unsettled %v held %d, want %v %d", v.NodesUnsettled, v.Held, tc.unsettled, tc.held)
			}
		})
	}
}
