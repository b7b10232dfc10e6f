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
