package telemetry_test

import (
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/augur-hpc/augur/sidecar/telemetry"
	"github.com/augur-hpc/augur/sidecar/telemetry/fakegpu"
)

// loadOf is a fake GPU 0 whose load a test sets between rounds; the
// other GPUs are idle.
type loadOf struct {
	mu sync.Mutex
	l  fakegpu.Load
}

func (g *loadOf) set(l fakegpu.Load) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.l = l
}

func (g *loadOf) load(i int) fakegpu.Load {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i != 0 {
		return fakegpu.Load{}
	}
	return g.l
}

// statsCalls counts GPU 0's GetAccountingStats calls per pid.
func statsCalls(lib *dgxa100.Server) map[uint32]int {
	dev := lib.Devices[0].(*dgxa100.Device)
	inner := dev.GetAccountingStatsFunc
	calls := map[uint32]int{}
	dev.GetAccountingStatsFunc = func(pid uint32) (nvml.AccountingStats, nvml.Return) {
		calls[pid]++
		return inner(pid)
	}
	return calls
}

// TestAccountingPeaks: Open turns accounting on; each Sample reports the
// processes whose accounting maximum rose since the previous one (a spike
// between two samples included), and a process gone since the previous
// Sample once, with its last maximum.
func TestAccountingPeaks(t *testing.T) {
	g := &loadOf{}
	lib := fakegpu.New(g.load)
	calls := statsCalls(lib)
	s, err := telemetry.Open(lib, telemetry.WithAccounting(true))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, a := range s.Accounting() {
		if !a.On || !a.Enabled || a.Err != nil {
			t.Fatalf("gpu %d: accounting %+v, want turned on", a.Index, a)
		}
	}
	type round struct {
		procs []fakegpu.Proc
		peaks map[uint32]float64
		ended []uint32
	}
	rounds := []round{
		{procs: []fakegpu.Proc{{PID: 7, UsedMiB: 1000}}, peaks: map[uint32]float64{7: 1000}},
		{procs: []fakegpu.Proc{{PID: 7, UsedMiB: 1000}, {PID: 8, UsedMiB: 500}}, peaks: map[uint32]float64{8: 500}},
		// 7 spiked to 30000 between the two samples and is back at 1000
		{procs: []fakegpu.Proc{{PID: 7, UsedMiB: 1000, PeakMiB: 30000}, {PID: 8, UsedMiB: 500}}, peaks: map[uint32]float64{7: 30000}},
		{procs: []fakegpu.Proc{{PID: 7, UsedMiB: 2000}, {PID: 8, UsedMiB: 500}}, peaks: map[uint32]float64{}},
		// 7 rose to 39000 in its last instants and exited; 8 exited quietly
		{procs: []fakegpu.Proc{{PID: 7, PeakMiB: 39000, Gone: true}, {PID: 8, Gone: true}}, peaks: map[uint32]float64{7: 39000}, ended: []uint32{7, 8}},
		{procs: nil, peaks: map[uint32]float64{}},
	}
	for i, r := range rounds {
		g.set(fakegpu.Load{Procs: r.procs})
		rs, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		rd := rs[0]
		if !rd.Accounting || !rd.ProcsKnown {
			t.Fatalf("round %d: accounting %v, processes known %v", i, rd.Accounting, rd.ProcsKnown)
		}
		if d := cmp.Diff(r.peaks, rd.ProcPeakMiB); d != "" {
			t.Errorf("round %d: peaks (-want +got):\n%s", i, d)
		}
		if d := cmp.Diff(r.ended, rd.EndedPIDs, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("round %d: ended (-want +got):\n%s", i, d)
		}
	}
	// 7: asked in rounds 0-3 running, once ended; 8: rounds 1-3, once ended
	if d := cmp.Diff(map[uint32]int{7: 5, 8: 4}, calls); d != "" {
		t.Errorf("GetAccountingStats calls per pid (-want +got):\n%s", d)
	}
}

// TestAccountingOff: where accounting cannot be read or turned on, or was
// not asked for, Open says so and Sample reads the GPUs as it always did;
// a GPU whose accounting stops answering mid-way is not asked again.
func TestAccountingOff(t *testing.T) {
	procs := []fakegpu.Proc{{PID: 7, UsedMiB: 1000, PeakMiB: 5000}}
	cases := map[string]struct {
		opts    []telemetry.Option
		setup   func(d *dgxa100.Device)
		on, err bool
	}{
		"not supported": {opts: []telemetry.Option{telemetry.WithAccounting(true)}, setup: func(d *dgxa100.Device) {
			d.GetAccountingModeFunc = func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		}, err: true},
		"permission denied (not root)": {opts: []telemetry.Option{telemetry.WithAccounting(true)}, setup: func(d *dgxa100.Device) {
			d.SetAccountingModeFunc = func(nvml.EnableState) nvml.Return { return nvml.ERROR_NO_PERMISSION }
		}, err: true},
		"a mock without accounting (its methods panic)": {opts: []telemetry.Option{telemetry.WithAccounting(true)}, setup: func(d *dgxa100.Device) {
			d.GetAccountingModeFunc, d.SetAccountingModeFunc, d.GetAccountingStatsFunc = nil, nil, nil
		}, err: true},
		"not asked for": {setup: func(d *dgxa100.Device) {
			d.SetAccountingModeFunc = func(nvml.EnableState) nvml.Return { panic("turned on unasked") }
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			lib := fakegpu.New(func(int) fakegpu.Load { return fakegpu.Load{Procs: procs} })
			for _, d := range lib.Devices {
				tc.setup(d.(*dgxa100.Device))
			}
			s, err := telemetry.Open(lib, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			a := s.Accounting()[0]
			if a.On || a.Enabled || (a.Err != nil) != tc.err {
				t.Errorf("accounting %+v; want off, error %v", a, tc.err)
			}
			for round := 0; round < 2; round++ {
				rs, err := s.Sample()
				if err != nil {
					t.Fatal(err)
				}
				want := telemetry.Reading{Index: 0, UUID: rs[0].UUID, Name: "Mock NVIDIA A100-SXM4-40GB", MemTotalMiB: 40960,
					MemUsedMiB: 1000, SMUtil: 0, Procs: []telemetry.Proc{{PID: 7, UsedMiB: 1000}}, ProcsKnown: true,
					ProcUtil: map[uint32]float64{7: 0}, ProcUtilKnown: true}
				if d := cmp.Diff(want, rs[0]); d != "" {
					t.Errorf("round %d (-want +got):\n%s", round, d)
				}
			}
		})
	}

	t.Run("already on, not asked to turn it on", func(t *testing.T) {
		lib := fakegpu.New(func(int) fakegpu.Load { return fakegpu.Load{Procs: procs} })
		for _, d := range lib.Devices {
			d.SetAccountingMode(nvml.FEATURE_ENABLED) // an administrator's nvidia-smi -am 1
		}
		s, err := telemetry.Open(lib)
		if err != nil {
			t.Fatal(err)
		}
		if a := s.Accounting()[0]; !a.On || a.Enabled || a.Err != nil {
			t.Errorf("accounting %+v, want on, not by Open", a)
		}
		rs, _ := s.Sample()
		if d := cmp.Diff(map[uint32]float64{7: 5000}, rs[0].ProcPeakMiB); d != "" || !rs[0].Accounting {
			t.Errorf("peaks (-want +got):\n%s", d)
		}
	})

	t.Run("turned off mid-way: asked once more, then not", func(t *testing.T) {
		lib := fakegpu.New(func(int) fakegpu.Load { return fakegpu.Load{Procs: procs} })
		calls := statsCalls(lib)
		s, err := telemetry.Open(lib, telemetry.WithAccounting(true))
		if err != nil {
			t.Fatal(err)
		}
		if rs, _ := s.Sample(); !rs[0].Accounting {
			t.Fatal("accounting off at the start")
		}
		lib.Devices[0].SetAccountingMode(nvml.FEATURE_DISABLED) // nvidia-smi -am 0
		for round := 0; round < 3; round++ {
			rs, err := s.Sample()
			if err != nil {
				t.Fatal(err)
			}
			if rs[0].Accounting || rs[0].ProcPeakMiB != nil || rs[0].EndedPIDs != nil || rs[0].MemUsedMiB != 1000 {
				t.Errorf("round %d: reading %+v", round, rs[0])
			}
		}
		if calls[7] != 2 {
			t.Errorf("%d GetAccountingStats calls, want 2", calls[7])
		}
	})
}

// TestAccountingLifetimes: Sample gives each process read its lifetime from
// NVML accounting's start time and, once it has ended, its running time
// (ms); a running process has no end.
func TestAccountingLifetimes(t *testing.T) {
	g := &loadOf{}
	lib := fakegpu.New(g.load)
	dev := lib.Devices[0].(*dgxa100.Device)
	inner := dev.GetAccountingStatsFunc
	dev.GetAccountingStatsFunc = func(pid uint32) (nvml.AccountingStats, nvml.Return) {
		st, r := inner(pid)
		st.StartTime = uint64(pid) * 1e6
		if st.IsRunning == 0 {
			st.Time = 3000
		}
		return st, r
	}
	s, err := telemetry.Open(lib, telemetry.WithAccounting(true))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g.set(fakegpu.Load{Procs: []fakegpu.Proc{{PID: 7, UsedMiB: 1000}, {PID: 8, UsedMiB: 500}}})
	if _, err := s.Sample(); err != nil {
		t.Fatal(err)
	}
	g.set(fakegpu.Load{Procs: []fakegpu.Proc{{PID: 7, UsedMiB: 1000}, {PID: 8, Gone: true}}})
	rs, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint32]telemetry.Lifetime{7: {StartUs: 7e6}, 8: {StartUs: 8e6, EndUs: 8e6 + 3000*1000}}
	if d := cmp.Diff(want, rs[0].ProcLife); d != "" {
		t.Errorf("lifetimes (-want +got):\n%s", d)
	}
}
