package fakegpu_test

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/augur-hpc/augur/sidecar/telemetry/fakegpu"
)

// TestProcessUtilization: the GPU's SM utilisation is its processes' sum
// unless the Load sets it, and GetProcessUtilization answers as NVML would.
func TestProcessUtilization(t *testing.T) {
	busy := []fakegpu.Proc{{PID: 1, SMUtil: 70}, {PID: 2, SMUtil: 50}}
	cases := map[string]struct {
		load    fakegpu.Load
		gpu     uint32
		samples int
		r       nvml.Return
	}{
		"processes' sum, capped":       {load: fakegpu.Load{Procs: busy}, gpu: 100, samples: 2, r: nvml.SUCCESS},
		"the Load's figure wins":       {load: fakegpu.Load{SMUtil: 30, Procs: busy}, gpu: 30, samples: 2, r: nvml.SUCCESS},
		"idle processes":               {load: fakegpu.Load{Procs: []fakegpu.Proc{{PID: 1}}}, samples: 1, r: nvml.SUCCESS},
		"no process":                   {load: fakegpu.Load{}, r: nvml.ERROR_NOT_FOUND},
		"GPU's figure only: no data":   {load: fakegpu.Load{SMUtil: 80, Procs: []fakegpu.Proc{{PID: 1}}}, gpu: 80, r: nvml.ERROR_NO_DATA},
		"no process list: unsupported": {load: fakegpu.Load{Procs: busy, NoProcs: true}, gpu: 100, r: nvml.ERROR_NOT_SUPPORTED},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dev := fakegpu.New(func(int) fakegpu.Load { return tc.load }).Devices[0]
			if u, _ := dev.GetUtilizationRates(); u.Gpu != tc.gpu {
				t.Errorf("GPU at %d%%, want %d%%", u.Gpu, tc.gpu)
			}
			s, r := dev.GetProcessUtilization(0)
			if len(s) != tc.samples || r != tc.r {
				t.Errorf("%d samples, %v; want %d, %v", len(s), r, tc.samples, tc.r)
			}
		})
	}
}

// TestProcessUtilizationLastSeen: every call is newer than the one before,
// and a lastSeen in the future gets NOT_FOUND.
func TestProcessUtilizationLastSeen(t *testing.T) {
	dev := fakegpu.New(func(int) fakegpu.Load {
		return fakegpu.Load{Procs: []fakegpu.Proc{{PID: 1, SMUtil: 40}}}
	}).Devices[0]
	first, r := dev.GetProcessUtilization(0)
	if r != nvml.SUCCESS || len(first) != 1 || first[0].SmUtil != 40 {
		t.Fatalf("first call: %v, %v", first, r)
	}
	again, r := dev.GetProcessUtilization(first[0].TimeStamp)
	if r != nvml.SUCCESS || len(again) != 1 || again[0].TimeStamp <= first[0].TimeStamp {
		t.Errorf("second call: %v, %v after timestamp %d", again, r, first[0].TimeStamp)
	}
	if s, r := dev.GetProcessUtilization(1 << 62); r != nvml.ERROR_NOT_FOUND {
		t.Errorf("lastSeen in the future: %v, %v", s, r)
	}
}

// TestAccounting: off at first, as on a real GPU; once on, each process's
// most memory held (a spike between calls included) is kept, after it
// exits too; turning it off clears it.
func TestAccounting(t *testing.T) {
	var l fakegpu.Load
	dev := fakegpu.New(func(int) fakegpu.Load { return l }).Devices[0]
	if m, r := dev.GetAccountingMode(); m != nvml.FEATURE_DISABLED || r != nvml.SUCCESS {
		t.Fatalf("mode %v, %v; want off", m, r)
	}
	if _, r := dev.GetAccountingStats(1); r != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("stats while off: %v", r)
	}
	if r := dev.SetAccountingMode(nvml.FEATURE_ENABLED); r != nvml.SUCCESS {
		t.Fatal(r)
	}
	const mib = 1 << 20
	steps := []struct {
		procs   []fakegpu.Proc
		maxMiB  uint64
		running uint32
	}{
		{[]fakegpu.Proc{{PID: 1, UsedMiB: 100}}, 100, 1},
		{[]fakegpu.Proc{{PID: 1, UsedMiB: 50, PeakMiB: 900}}, 900, 1},
		{[]fakegpu.Proc{{PID: 1, UsedMiB: 300}}, 900, 1},
		{[]fakegpu.Proc{{PID: 1, PeakMiB: 1000, Gone: true}}, 1000, 0},
		{nil, 1000, 0},
	}
	for i, s := range steps {
		l = fakegpu.Load{Procs: s.procs}
		ps, _ := dev.GetComputeRunningProcesses()
		if len(ps) != int(s.running) {
			t.Errorf("step %d: %d processes listed", i, len(ps))
		}
		st, r := dev.GetAccountingStats(1)
		if r != nvml.SUCCESS || st.MaxMemoryUsage != s.maxMiB*mib || st.IsRunning != s.running {
			t.Errorf("step %d: %+v, %v; want max %d MiB, running %d", i, st, r, s.maxMiB, s.running)
		}
	}
	if pids, r := dev.GetAccountingPids(); r != nvml.SUCCESS || len(pids) != 1 || pids[0] != 1 {
		t.Errorf("pids %v, %v", pids, r)
	}
	if _, r := dev.GetAccountingStats(2); r != nvml.ERROR_NOT_FOUND {
		t.Errorf("unknown pid: %v", r)
	}
	dev.SetAccountingMode(nvml.FEATURE_DISABLED)
	dev.SetAccountingMode(nvml.FEATURE_ENABLED)
	if _, r := dev.GetAccountingStats(1); r != nvml.ERROR_NOT_FOUND {
		t.Errorf("after off and on again: %v, want cleared", r)
	}
}
