package predictor

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGPURequests(t *testing.T) {
	cases := map[string]struct {
		node, job, task, socket string
		want                    []GPURequest
		wantErr                 bool
	}{
		"sbatch --gres=gpu:2 (22.05)":       {node: "gres:gpu:2", want: []GPURequest{{Scope: "node", Count: 2}}},
		"--gres=gpu:a100:2":                 {node: "gres:gpu:a100:2", want: []GPURequest{{Scope: "node", Type: "a100", Count: 2}}},
		"23.11 spelling":                    {node: "gres/gpu:a100:2", want: []GPURequest{{Scope: "node", Type: "a100", Count: 2}}},
		"--gpus=4":                          {job: "gres:gpu:4", want: []GPURequest{{Scope: "job", Count: 4}}},
		"--gpus-per-task=t4:1":              {task: "gres:gpu:t4:1", want: []GPURequest{{Scope: "task", Type: "t4", Count: 1}}},
		"--gpus-per-socket":                 {socket: "gres:gpu:1", want: []GPURequest{{Scope: "socket", Count: 1}}},
		"a type named by its number":        {node: "gres:gpu:3090:8", want: []GPURequest{{Scope: "node", Type: "3090", Count: 8}}},
		"type only means one":               {node: "gpu:v100", want: []GPURequest{{Scope: "node", Type: "v100", Count: 1}}},
		"bare gpu":                          {node: "gpu", want: []GPURequest{{Scope: "node", Count: 1}}},
		"socket binding kept apart":         {node: "gpu:2(S:0-1)", want: []GPURequest{{Scope: "node", Count: 2}}},
		"shard":                             {node: "gres:shard:3", want: []GPURequest{{Scope: "node", Count: 3, Shard: true}}},
		"mixed with other gres":             {node: "gres:gpu:a100:1,gres:nvme:1", want: []GPURequest{{Scope: "node", Type: "a100", Count: 1}}},
		"semicolon list":                    {node: "gres:gpu:1;gres:shard:2", want: []GPURequest{{Scope: "node", Count: 1}, {Scope: "node", Count: 2, Shard: true}}},
		"k multiplier":                      {node: "gres:shard:1k", want: []GPURequest{{Scope: "node", Count: 1024, Shard: true}}},
		"none":                              {},
		"garbage":                           {node: "gres:gpu:a100:two", wantErr: true},
		"absurd count":                      {node: "gres:gpu:99999999999999999999", wantErr: true},
		"bad one does not hide a good one":  {node: "gres::", job: "gres:gpu:2", want: []GPURequest{{Scope: "job", Count: 2}}, wantErr: true},
		"shell metacharacters are rejected": {node: "gres:gpu:$(reboot):1", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := GPURequests(tc.node, tc.job, tc.task, tc.socket)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrBadGres) {
				t.Errorf("err %v does not wrap ErrBadGres", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetGPUType(t *testing.T) {
	cases := map[string]struct {
		in, typ, want string
		changed       bool
	}{
		"typeless":            {"gres:gpu:2", "a100", "gres:gpu:a100:2", true},
		"23.11 spelling kept": {"gres/gpu:2", "t4", "gres/gpu:t4:2", true},
		"typed left alone":    {"gres:gpu:v100:2", "a100", "gres:gpu:v100:2", false},
		"other gres kept":     {"gres:gpu:1,gres:nvme:1", "t4", "gres:gpu:t4:1,gres:nvme:1", true},
		"semicolons kept":     {"gres:gpu:1;gres:nvme:1", "t4", "gres:gpu:t4:1;gres:nvme:1", true},
		"socket binding kept": {"gpu:2(S:0-1)", "t4", "gpu:t4:2(S:0-1)", true},
		"empty":               {"", "t4", "", false},
		"shard is not a gpu":  {"gres:shard:2", "t4", "gres:shard:2", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, changed, err := SetGPUType(tc.in, tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || changed != tc.changed {
				t.Errorf("SetGPUType(%q) = %q, %v; want %q, %v", tc.in, got, changed, tc.want, tc.changed)
			}
		})
	}
}

// FuzzGres: any string parses or fails cleanly, and whatever parses writes
// back to a string that parses to the same entries.
func FuzzGres(f *testing.F) {
	for _, s := range []string{"gres:gpu:a100:2", "gres/gpu:2", "gpu:2(S:0-1)", "gres:shard:1k", "gpu", "gres:gpu:1;gres:nvme:1", ":::", "gres:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		entries, err := ParseGres(s)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Count < 0 || e.Count > MaxGresCount {
				t.Fatalf("count %d out of range from %q", e.Count, s)
			}
			again, err := ParseGres(e.String())
			if err != nil || len(again) != 1 {
				t.Fatalf("%q -> %q does not parse back: %v", s, e.String(), err)
			}
			if again[0].Name != e.Name || again[0].Type != e.Type || again[0].Count != e.Count {
				t.Fatalf("%q -> %+v -> %+v", s, e, again[0])
			}
		}
		if _, _, err := SetGPUType(s, "a100"); err != nil {
			t.Fatalf("SetGPUType failed on a parseable %q: %v", s, err)
		}
	})
}

func TestReplaceGPUType(t *testing.T) {
	for in, want := range map[string]string{
		"gres:gpu:t4:2":             "gres:gpu:a100:2",
		"gres/gpu:t4:1,gres:nvme:1": "gres/gpu:a100:1,gres:nvme:1",
		"gres:gpu:v100:2":           "gres:gpu:v100:2",
		"gres:gpu:2":                "gres:gpu:2",
	} {
		if got, _, err := ReplaceGPUType(in, "t4", "a100"); err != nil || got != want {
			t.Errorf("ReplaceGPUType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestTRESWithOtherResources: from 23.02 on tres_per_task also carries the
// CPUs of --cpus-per-task ("cpu=1"); the GPU entries still read and
// rewrite, the others are kept as written.
func TestTRESWithOtherResources(t *testing.T) {
	cases := map[string]struct {
		in, typ, want string
		gpus          int64
	}{
		"cpu only":               {in: "cpu=1", typ: "t4", want: "cpu=1"},
		"cpu then typeless":      {in: "cpu=2,gres/gpu:1", typ: "t4", want: "cpu=2,gres/gpu:t4:1", gpus: 1},
		"typeless then memory":   {in: "gres/gpu:2,mem=4G", typ: "a100", want: "gres/gpu:a100:2,mem=4G", gpus: 2},
		"a license":              {in: "license/matlab=1,gres:gpu:1", typ: "t4", want: "license/matlab=1,gres:gpu:t4:1", gpus: 1},
		"26.05's per-task GPUs":  {in: "gres/gpu=1", typ: "t4", want: "gres/gpu:t4=1", gpus: 1},
		"26.05's typed per task": {in: "cpu=1,gres/gpu:a100=2", typ: "t4", want: "cpu=1,gres/gpu:a100=2", gpus: 2},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			reqs, err := GPURequests("", "", c.in, "")
			if err != nil {
				t.Fatal(err)
			}
			var n int64
			for _, r := range reqs {
				n += r.Count
			}
			if n != c.gpus {
				t.Errorf("GPUs %d, want %d (%+v)", n, c.gpus, reqs)
			}
			got, _, err := SetGPUType(c.in, c.typ)
			if err != nil || got != c.want {
				t.Errorf("SetGPUType = %q, %v; want %q", got, err, c.want)
			}
		})
	}
	for _, bad := range []string{"=1", "cpu=", "cpu=1=2", "c pu=1", "cpu=gpu:1", "gres/gpu=x", "gres/=1", "gres/gpu=1:2"} {
		if _, err := ParseGres(bad); err == nil {
			t.Errorf("ParseGres(%q) accepted", bad)
		}
	}
}
