package telemetry_test

import (
	"sort"
	"testing"

	"github.com/augur-hpc/augur/sidecar/telemetry"
	"github.com/augur-hpc/augur/sidecar/telemetry/fakegpu"
	"github.com/google/go-cmp/cmp"
)

func TestSampleReadsEveryGPU(t *testing.T) {
	lib := fakegpu.New(func(i int) fakegpu.Load {
		return fakegpu.Load{SMUtil: uint32(10 * i), MemUtil: 5, PowerW: 100 + float64(i),
			Procs: []fakegpu.Proc{{PID: uint32(1000 + i), UsedMiB: 1024 * float64(i+1)}}}
	})
	s, err := telemetry.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rs, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 8 || s.GPUs() != 8 {
		t.Fatalf("%d readings of %d GPUs, want 8", len(rs), s.GPUs())
	}
	r := rs[3]
	want := telemetry.Reading{Index: 3, UUID: r.UUID, Name: "Mock NVIDIA A100-SXM4-40GB", MemTotalMiB: 40960, MemUsedMiB: 4096,
		SMUtil: 30, MemUtil: 5, PowerW: 103, Procs: []telemetry.Proc{{PID: 1003, UsedMiB: 4096}}, ProcsKnown: true}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSampleWithoutProcessList(t *testing.T) {
	lib := fakegpu.New(func(i int) fakegpu.Load { return fakegpu.Load{MemUsedMiB: 500, NoProcs: true} })
	s, err := telemetry.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := s.Sample()
	if rs[0].ProcsKnown || rs[0].MemUsedMiB != 500 {
		t.Errorf("reading %+v", rs[0])
	}
}

func TestAttribute(t *testing.T) {
	jobOf := func(pid uint32) (uint64, bool) {
		j, ok := map[uint32]uint64{11: 1, 12: 1, 21: 2, 31: 3}[pid]
		return j, ok
	}
	cases := map[string]struct {
		readings []telemetry.Reading
		jobs     map[uint64][]int
		want     []telemetry.JobSample
	}{
		"one job, process memory": {
			readings: []telemetry.Reading{{Index: 0, MemUsedMiB: 9000, SMUtil: 90, PowerW: 300, ProcsKnown: true,
				Procs: []telemetry.Proc{{11, 4000}, {12, 3000}, {99, 2000}}}},
			jobs: map[uint64][]int{1: {0}},
			want: []telemetry.JobSample{{JobID: 1, GPU: 0, MemMiB: 7000, SMUtil: 90, PowerW: 300, Attribution: "process"}},
		},
		"shared GPU: each job its own processes, power split": {
			readings: []telemetry.Reading{{Index: 2, MemUsedMiB: 6000, SMUtil: 50, PowerW: 200, ProcsKnown: true,
				Procs: []telemetry.Proc{{11, 1000}, {21, 5000}}}},
			jobs: map[uint64][]int{1: {2}, 2: {2}},
			want: []telemetry.JobSample{
				{JobID: 1, GPU: 2, MemMiB: 1000, SMUtil: 50, PowerW: 100, Attribution: "process"},
				{JobID: 2, GPU: 2, MemMiB: 5000, SMUtil: 50, PowerW: 100, Attribution: "process"},
			},
		},
		"no process list: whole device": {
			readings: []telemetry.Reading{{Index: 1, MemUsedMiB: 12000, SMUtil: 70, PowerW: 250}},
			jobs:     map[uint64][]int{3: {1}},
			want:     []telemetry.JobSample{{JobID: 3, GPU: 1, MemMiB: 12000, SMUtil: 70, PowerW: 250, Attribution: "device"}},
		},
		"job with no process yet reads zero": {
			readings: []telemetry.Reading{{Index: 0, MemUsedMiB: 300, ProcsKnown: true}},
			jobs:     map[uint64][]int{1: {0}},
			want:     []telemetry.JobSample{{JobID: 1, GPU: 0, Attribution: "process"}},
		},
		"process on a GPU its job was not given is still charged": {
			readings: []telemetry.Reading{{Index: 5, MemUsedMiB: 800, ProcsKnown: true, Procs: []telemetry.Proc{{31, 800}}}},
			jobs:     map[uint64][]int{3: {4}},
			want:     []telemetry.JobSample{{JobID: 3, GPU: 5, MemMiB: 800, Attribution: "process"}},
		},
		"idle GPU, no job": {
			readings: []telemetry.Reading{{Index: 7, MemUsedMiB: 1, ProcsKnown: true}},
			jobs:     map[uint64][]int{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := telemetry.Attribute(tc.readings, tc.jobs, jobOf)
			sort.Slice(got, func(i, j int) bool { return got[i].JobID < got[j].JobID })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// BenchmarkSample8GPUs is the sampler's cost per round on an 8-GPU node
// (the mock's own cost included, so an upper bound on Augur's).
func BenchmarkSample8GPUs(b *testing.B) {
	lib := fakegpu.New(func(i int) fakegpu.Load {
		return fakegpu.Load{SMUtil: 80, MemUtil: 30, PowerW: 300,
			Procs: []fakegpu.Proc{{PID: uint32(1000 + i), UsedMiB: 20000}}}
	})
	s, err := telemetry.Open(lib)
	if err != nil {
		b.Fatal(err)
	}
	jobs := map[uint64][]int{1: {0, 1, 2, 3}, 2: {4, 5, 6, 7}}
	jobOf := func(pid uint32) (uint64, bool) { return uint64(1 + (pid-1000)/4), true }
	b.ReportAllocs()
	for b.Loop() {
		rs, _ := s.Sample()
		telemetry.Attribute(rs, jobs, jobOf)
	}
}
