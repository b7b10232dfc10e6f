package telemetry_test

import (
	"sort"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

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
	if rs[0].ProcsKnown || rs[0].ProcUtilKnown || rs[0].MemUsedMiB != 500 {
		t.Errorf("reading %+v", rs[0])
	}
}

// TestSampleProcUtil: two jobs' processes on one fake GPU, one idle and one
// busy, read as such; a GPU with no process (NVML: NOT_FOUND) reads as
// known, nobody busy.
func TestSampleProcUtil(t *testing.T) {
	lib := fakegpu.New(func(i int) fakegpu.Load {
		if i != 0 {
			return fakegpu.Load{}
		}
		return fakegpu.Load{Procs: []fakegpu.Proc{{PID: 1000, UsedMiB: 100}, {PID: 1001, UsedMiB: 100, SMUtil: 60}}}
	})
	s, err := telemetry.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ { // the fake's timestamps move on: every round sees every process
		rs, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		if rs[0].SMUtil != 60 || !rs[0].ProcUtilKnown || !rs[1].ProcUtilKnown {
			t.Errorf("round %d: readings %+v, %+v", round, rs[0], rs[1])
		}
		if d := cmp.Diff(map[uint32]float64{1000: 0, 1001: 60}, rs[0].ProcUtil); d != "" {
			t.Errorf("round %d: gpu 0 (-want +got):\n%s", round, d)
		}
		if len(rs[1].ProcUtil) != 0 {
			t.Errorf("round %d: gpu 1 has %v", round, rs[1].ProcUtil)
		}
	}
}

// TestSampleProcUtilLastSeen: each call passes the newest timestamp seen so
// far, a process's several samples are averaged, NOT_FOUND is "nobody
// busy", another error "not known", and NOT_SUPPORTED ends the asking.
func TestSampleProcUtilLastSeen(t *testing.T) {
	type answer struct {
		samples []nvml.ProcessUtilizationSample
		r       nvml.Return
	}
	rounds := []struct {
		lastSeen uint64 // what the sampler should pass
		answer
		want  map[uint32]float64
		known bool
	}{
		{0, answer{[]nvml.ProcessUtilizationSample{{Pid: 7, TimeStamp: 100, SmUtil: 40}, {Pid: 7, TimeStamp: 200, SmUtil: 60},
			{Pid: 8, TimeStamp: 150, SmUtil: 10}}, nvml.SUCCESS}, map[uint32]float64{7: 50, 8: 10}, true},
		{200, answer{nil, nvml.ERROR_NOT_FOUND}, map[uint32]float64{}, true},
		{200, answer{nil, nvml.ERROR_UNKNOWN}, nil, false},
		{200, answer{[]nvml.ProcessUtilizationSample{{Pid: 8, TimeStamp: 300, SmUtil: 90}}, nvml.SUCCESS}, map[uint32]float64{8: 90}, true},
		{300, answer{nil, nvml.ERROR_NOT_SUPPORTED}, nil, false},
		{300, answer{}, nil, false}, // not asked any more
	}
	lib := fakegpu.New(func(int) fakegpu.Load { return fakegpu.Load{} })
	var calls []uint64
	var next answer
	lib.Devices[0].(*dgxa100.Device).GetProcessUtilizationFunc = func(lastSeen uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		calls = append(calls, lastSeen)
		return next.samples, next.r
	}
	s, err := telemetry.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	for i, rd := range rounds {
		next = rd.answer
		rs, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(rd.want, rs[0].ProcUtil); d != "" || rs[0].ProcUtilKnown != rd.known {
			t.Errorf("round %d: known %v, want %v; (-want +got):\n%s", i, rs[0].ProcUtilKnown, rd.known, d)
		}
		if i < 5 && (len(calls) != i+1 || calls[i] != rd.lastSeen) {
			t.Errorf("round %d: calls with lastSeen %v, want %d last", i, calls, rd.lastSeen)
		}
	}
	if len(calls) != 5 {
		t.Errorf("%d calls, want 5: NOT_SUPPORTED should end them", len(calls))
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
			want: []telemetry.JobSample{{JobID: 1, GPU: 0, MemMiB: 7000, PeakMiB: 7000, SMUtil: 90, PowerW: 300, Attribution: "process"}},
		},
		"shared GPU, no per-process utilisation: each job its own memory, the GPU's utilisation, power split": {
			readings: []telemetry.Reading{{Index: 2, MemUsedMiB: 6000, SMUtil: 50, PowerW: 200, ProcsKnown: true,
				Procs: []telemetry.Proc{{11, 1000}, {21, 5000}}}},
			jobs: map[uint64][]int{1: {2}, 2: {2}},
			want: []telemetry.JobSample{
				{JobID: 1, GPU: 2, MemMiB: 1000, PeakMiB: 1000, SMUtil: 50, PowerW: 100, Attribution: "process", Shared: true},
				{JobID: 2, GPU: 2, MemMiB: 5000, PeakMiB: 5000, SMUtil: 50, PowerW: 100, Attribution: "process", Shared: true},
			},
		},
		// Job 1 idles next to busy job 2: an idle-GPU detector must see
		// job 1 at 0, not at the GPU's 60.
		"shared GPU: each job its own processes' utilisation": {
			readings: []telemetry.Reading{{Index: 2, MemUsedMiB: 6000, SMUtil: 60, MemUtil: 30, PowerW: 200, ProcsKnown: true,
				Procs: []telemetry.Proc{{11, 1000}, {21, 5000}}, ProcUtil: map[uint32]float64{21: 60}, ProcUtilKnown: true}},
			jobs: map[uint64][]int{1: {2}, 2: {2}},
			want: []telemetry.JobSample{
				{JobID: 1, GPU: 2, MemMiB: 1000, PeakMiB: 1000, SMUtil: 0, MemUtil: 30, PowerW: 100, Attribution: "process", Shared: true},
				{JobID: 2, GPU: 2, MemMiB: 5000, PeakMiB: 5000, SMUtil: 60, MemUtil: 30, PowerW: 100, Attribution: "process", Shared: true},
			},
		},
		"shared GPU: a job's processes summed, at most 100": {
			readings: []telemetry.Reading{{Index: 0, SMUtil: 100, ProcsKnown: true,
				Procs:    []telemetry.Proc{{11, 0}, {12, 0}, {21, 0}},
				ProcUtil: map[uint32]float64{11: 70, 12: 50, 21: 5, 99: 40}, ProcUtilKnown: true}},
			jobs: map[uint64][]int{1: {0}, 2: {0}},
			want: []telemetry.JobSample{
				{JobID: 1, GPU: 0, SMUtil: 100, Attribution: "process", Shared: true},
				{JobID: 2, GPU: 0, SMUtil: 5, Attribution: "process", Shared: true},
			},
		},
		"one job: the GPU's utilisation, whatever its processes show": {
			readings: []telemetry.Reading{{Index: 0, MemUsedMiB: 4000, SMUtil: 90, ProcsKnown: true,
				Procs: []telemetry.Proc{{11, 4000}}, ProcUtil: map[uint32]float64{11: 85}, ProcUtilKnown: true}},
			jobs: map[uint64][]int{1: {0}},
			want: []telemetry.JobSample{{JobID: 1, GPU: 0, MemMiB: 4000, PeakMiB: 4000, SMUtil: 90, Attribution: "process"}},
		},
		"no process list: whole device": {
			readings: []telemetry.Reading{{Index: 1, MemUsedMiB: 12000, SMUtil: 70, PowerW: 250}},
			jobs:     map[uint64][]int{3: {1}},
			want:     []telemetry.JobSample{{JobID: 3, GPU: 1, MemMiB: 12000, PeakMiB: 12000, SMUtil: 70, PowerW: 250, Attribution: "device"}},
		},
		"job with no process yet reads zero": {
			readings: []telemetry.Reading{{Index: 0, MemUsedMiB: 300, ProcsKnown: true}},
			jobs:     map[uint64][]int{1: {0}},
			want:     []telemetry.JobSample{{JobID: 1, GPU: 0, Attribution: "process"}},
		},
		"process on a GPU its job was not given is still charged": {
			readings: []telemetry.Reading{{Index: 5, MemUsedMiB: 800, ProcsKnown: true, Procs: []telemetry.Proc{{31, 800}}}},
			jobs:     map[uint64][]int{3: {4}},
			want:     []telemetry.JobSample{{JobID: 3, GPU: 5, MemMiB: 800, PeakMiB: 800, Attribution: "process"}},
		},
		"accounting: a process's peak since the last reading, one without its memory now": {
			readings: []telemetry.Reading{{Index: 0, MemUsedMiB: 9000, ProcsKnown: true, Accounting: true,
				Procs: []telemetry.Proc{{11, 4000}, {12, 3000}, {21, 2000}}, ProcPeakMiB: map[uint32]float64{11: 30000, 21: 2500}}},
			jobs: map[uint64][]int{1: {0}, 2: {0}},
			want: []telemetry.JobSample{
				{JobID: 1, GPU: 0, MemMiB: 7000, PeakMiB: 33000, Attribution: "process", Shared: true},
				{JobID: 2, GPU: 0, MemMiB: 2000, PeakMiB: 2500, Attribution: "process", Shared: true},
			},
		},
		"accounting: an ended process's peak goes to its job, even with nothing left running": {
			readings: []telemetry.Reading{{Index: 3, MemUsedMiB: 100, ProcsKnown: true, Accounting: true,
				EndedPIDs: []uint32{11, 21, 99}, ProcPeakMiB: map[uint32]float64{11: 39000, 99: 5000}}},
			jobs: map[uint64][]int{1: {3}},
			want: []telemetry.JobSample{{JobID: 1, GPU: 3, PeakMiB: 39000, Attribution: "process"}},
		},
		"accounting: an ended process of a job not given the GPU is charged to it": {
			readings: []telemetry.Reading{{Index: 3, ProcsKnown: true, Accounting: true,
				EndedPIDs: []uint32{31}, ProcPeakMiB: map[uint32]float64{31: 700}}},
			jobs: map[uint64][]int{3: {4}},
			want: []telemetry.JobSample{{JobID: 3, GPU: 3, PeakMiB: 700, Attribution: "process"}},
		},
		"accounting: a sum of maxima past the card is capped at the card": {
			readings: []telemetry.Reading{{Index: 0, MemTotalMiB: 40960, ProcsKnown: true, Accounting: true,
				Procs: []telemetry.Proc{{12, 100}}, EndedPIDs: []uint32{11}, ProcPeakMiB: map[uint32]float64{11: 30000, 12: 30000}}},
			jobs: map[uint64][]int{1: {0}},
			want: []telemetry.JobSample{{JobID: 1, GPU: 0, MemMiB: 100, PeakMiB: 40960, Attribution: "process"}},
		},
		"accounting: a process that ended before the next one started never held its maximum beside it": {
			readings: []telemetry.Reading{{Index: 0, MemTotalMiB: 81920, ProcsKnown: true, Accounting: true,
				Procs: []telemetry.Proc{{12, 100}}, EndedPIDs: []uint32{11}, ProcPeakMiB: map[uint32]float64{11: 30000, 12: 20000},
				ProcLife: map[uint32]telemetry.Lifetime{11: {StartUs: 1e6, EndUs: 5e6}, 12: {StartUs: 6e6}}}},
			jobs: map[uint64][]int{1: {0}},
			want: []telemetry.JobSample{{JobID: 1, GPU: 0, MemMiB: 100, PeakMiB: 30000, Attribution: "process"}},
		},
		"accounting: lifetimes that overlap add up": {
			readings: []telemetry.Reading{{Index: 0, MemTotalMiB: 81920, ProcsKnown: true, Accounting: true,
				Procs: []telemetry.Proc{{12, 100}}, EndedPIDs: []uint32{11}, ProcPeakMiB: map[uint32]float64{11: 30000, 12: 20000},
				ProcLife: map[uint32]telemetry.Lifetime{11: {StartUs: 1e6, EndUs: 7e6}, 12: {StartUs: 6e6}}}},
			jobs: map[uint64][]int{1: {0}},
			want: []telemetry.JobSample{{JobID: 1, GPU: 0, MemMiB: 100, PeakMiB: 50000, Attribution: "process"}},
		},
		"accounting: a lifetime unknown, the maxima add up": {
			readings: []telemetry.Reading{{Index: 0, MemTotalMiB: 81920, ProcsKnown: true, Accounting: true,
				Procs: []telemetry.Proc{{12, 100}}, EndedPIDs: []uint32{11}, ProcPeakMiB: map[uint32]float64{11: 30000, 12: 20000},
				ProcLife: map[uint32]telemetry.Lifetime{11: {StartUs: 1e6, EndUs: 5e6}}}},
			jobs: map[uint64][]int{1: {0}},
			want: []telemetry.JobSample{{JobID: 1, GPU: 0, MemMiB: 100, PeakMiB: 50000, Attribution: "process"}},
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
