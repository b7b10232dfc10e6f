// Package fakegpu is go-nvml's dgxa100 mock (eight A100-40GB) with the calls
// it lacks filled in from a load function: memory in use, utilisation,
// power, compute processes and their SM utilisation, and NVML accounting
// (each process's most memory held, kept after it exits). It stands in for
// NVML where no GPU exists, in tests and in the test build of augur-node;
// nothing else in Augur fakes NVML.
//
//	load(index) ─> Load{memory, utilisation, power, processes} ─> dgxa100.Server (nvml.Interface)
//
// Accounting starts off, as on a real GPU, and anyone may turn it on
// (SetAccountingMode); while it is on, every call that reads the load
// records each process's memory (its PeakMiB where more) as its maximum.
package fakegpu

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// Proc is one process on a fake GPU.
type Proc struct {
	PID     uint32
	UsedMiB float64
	SMUtil  uint32 // percent, its GetProcessUtilization sample
	// PeakMiB, when above UsedMiB, is what the process held at an instant
	// between two calls: only NVML accounting's maximum shows it.
	PeakMiB float64
	// Gone: the process has exited. It is no longer listed, uses nothing,
	// and its accounting record stays, with its PeakMiB noted.
	Gone bool
}

// Load is what a fake GPU reports at one call.
type Load struct {
	MemUsedMiB float64 // 0: the sum of the processes' memory
	// SMUtil is the GPU's utilisation; 0: the sum of the processes' SMUtil,
	// capped at 100, as on a GPU that jobs share. A Load that sets SMUtil
	// and no process's (written before processes had one) has no
	// per-process figures: GetProcessUtilization answers NO_DATA, so
	// readers fall back on the GPU's figure as they did then.
	SMUtil  uint32
	MemUtil uint32
	PowerW  float64
	Procs   []Proc
	// NoProcs makes GetComputeRunningProcesses and GetProcessUtilization
	// answer NOT_SUPPORTED, as some GPUs and containers do.
	NoProcs bool
}

const mib = 1 << 20

// running is l's processes that have not exited.
func running(l Load) []Proc {
	return slices.DeleteFunc(slices.Clone(l.Procs), func(p Proc) bool { return p.Gone })
}

// smUtil is the GPU's SM utilisation under l.
func smUtil(l Load) uint32 {
	if l.SMUtil > 0 {
		return l.SMUtil
	}
	var sum uint32
	for _, p := range running(l) {
		sum += p.SMUtil
	}
	return min(sum, 100)
}

// procUtilGiven says whether l has per-process SM utilisation: some process
// has one, or the GPU's is their sum (0, with every process idle).
func procUtilGiven(l Load) bool {
	if l.SMUtil == 0 {
		return true
	}
	for _, p := range running(l) {
		if p.SMUtil > 0 {
			return true
		}
	}
	return false
}

// New returns an eight-GPU mock whose readings come from load.
func New(load func(index int) Load) *dgxa100.Server {
	s := dgxa100.New()
	for i, d := range s.Devices {
		dev := d.(*dgxa100.Device)
		idx := i
		total := dev.MemoryInfo.Total
		used := func(l Load) uint64 {
			if l.MemUsedMiB > 0 {
				return uint64(l.MemUsedMiB * mib)
			}
			var sum float64
			for _, p := range running(l) {
				sum += p.UsedMiB
			}
			return uint64(sum * mib)
		}
		acct := &accounting{stats: map[uint32]*nvml.AccountingStats{}}
		read := func() Load {
			l := load(idx)
			acct.note(l)
			return l
		}
		dev.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			u := min(used(read()), total)
			return nvml.Memory{Total: total, Used: u, Free: total - u}, nvml.SUCCESS
		}
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			l := load(idx)
			return nvml.Utilization{Gpu: smUtil(l), Memory: l.MemUtil}, nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) {
			return uint32(load(idx).PowerW * 1000), nvml.SUCCESS
		}
		dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			l := read()
			if l.NoProcs {
				return nil, nvml.ERROR_NOT_SUPPORTED
			}
			ps := running(l)
			out := make([]nvml.ProcessInfo, len(ps))
			for i, p := range ps {
				out[i] = nvml.ProcessInfo{Pid: p.PID, UsedGpuMemory: uint64(p.UsedMiB * mib)}
			}
			return out, nvml.SUCCESS
		}
		// Every call is a new sampling period (its timestamp, in µs, one
		// past the last), with one sample per process: a reader passing
		// back the newest timestamp it saw thus gets every process again.
		var clock atomic.Uint64
		dev.GetProcessUtilizationFunc = func(lastSeen uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			l := load(idx)
			switch {
			case l.NoProcs:
				return nil, nvml.ERROR_NOT_SUPPORTED
			case !procUtilGiven(l):
				return nil, nvml.ERROR_NO_DATA
			}
			ts := clock.Add(1)
			ps := running(l)
			if len(ps) == 0 || ts <= lastSeen {
				return nil, nvml.ERROR_NOT_FOUND
			}
			out := make([]nvml.ProcessUtilizationSample, len(ps))
			for i, p := range ps {
				out[i] = nvml.ProcessUtilizationSample{Pid: p.PID, TimeStamp: ts, SmUtil: p.SMUtil}
			}
			return out, nvml.SUCCESS
		}
		dev.GetAccountingModeFunc = func() (nvml.EnableState, nvml.Return) {
			acct.mu.Lock()
			defer acct.mu.Unlock()
			return acct.mode, nvml.SUCCESS
		}
		dev.SetAccountingModeFunc = func(m nvml.EnableState) nvml.Return {
			acct.mu.Lock()
			defer acct.mu.Unlock()
			acct.mode = m
			if m != nvml.FEATURE_ENABLED {
				clear(acct.stats) // as NVML does when accounting is turned off
			}
			return nvml.SUCCESS
		}
		dev.GetAccountingStatsFunc = func(pid uint32) (nvml.AccountingStats, nvml.Return) {
			read()
			acct.mu.Lock()
			defer acct.mu.Unlock()
			if acct.mode != nvml.FEATURE_ENABLED {
				return nvml.AccountingStats{}, nvml.ERROR_NOT_SUPPORTED
			}
			if st, ok := acct.stats[pid]; ok {
				return *st, nvml.SUCCESS
			}
			return nvml.AccountingStats{}, nvml.ERROR_NOT_FOUND
		}
		dev.GetAccountingPidsFunc = func() ([]int, nvml.Return) {
			read()
			acct.mu.Lock()
			defer acct.mu.Unlock()
			if acct.mode != nvml.FEATURE_ENABLED {
				return nil, nvml.ERROR_NOT_SUPPORTED
			}
			var out []int
			for pid := range acct.stats {
				out = append(out, int(pid))
			}
			slices.Sort(out)
			return out, nvml.SUCCESS
		}
		dev.ClearAccountingPidsFunc = func() nvml.Return {
			acct.mu.Lock()
			defer acct.mu.Unlock()
			clear(acct.stats)
			return nvml.SUCCESS
		}
	}
	s.ErrorStringFunc = func(r nvml.Return) string { return "fake nvml error " + r.String() }
	return s
}

// accounting is one fake GPU's NVML accounting: its mode and, per process
// seen while it was on, the most memory it held.
type accounting struct {
	mu    sync.Mutex
	mode  nvml.EnableState
	stats map[uint32]*nvml.AccountingStats
}

// note records what l shows of each process, while accounting is on.
func (a *accounting) note(l Load) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mode != nvml.FEATURE_ENABLED || l.NoProcs {
		return
	}
	for _, st := range a.stats {
		st.IsRunning = 0 // unless listed below
	}
	for _, p := range l.Procs {
		st := a.stats[p.PID]
		if st == nil {
			st = &nvml.AccountingStats{}
			a.stats[p.PID] = st
		}
		held := uint64(max(p.PeakMiB, p.UsedMiB) * mib)
		if p.Gone {
			held = uint64(p.PeakMiB * mib)
		}
		st.MaxMemoryUsage = max(st.MaxMemoryUsage, held)
		st.IsRunning = 1
		if p.Gone {
			st.IsRunning = 0
		}
	}
}
