// Package telemetry reads a node's GPUs through NVML and ties what it reads to
// Slurm jobs. NVML comes in as go-nvml's nvml.Interface, so the same code runs
// on real GPUs and, in tests, on go-nvml's own mocks.
//
//	nvml.Interface ─Sampler.Sample─> []Reading (per GPU: memory, utilisation, power, processes and their SM utilisation)
//	[]Reading + job→GPUs + pid→job ─Attribute─> []JobSample (per job and GPU)
//
// Attribute is pure; finding which job a process belongs to (/proc) is the
// caller's business, passed in as a function.
package telemetry

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Proc is one process's use of one GPU.
type Proc struct {
	PID     uint32
	UsedMiB float64
}

// Reading is one GPU at one instant.
type Reading struct {
	Index       int
	UUID, Name  string
	MemTotalMiB float64
	MemUsedMiB  float64
	SMUtil      float64 // percent
	MemUtil     float64 // percent
	PowerW      float64
	// Procs lists the GPU's compute processes when ProcsKnown; some GPUs
	// (and NVML in some containers) do not report them.
	Procs      []Proc
	ProcsKnown bool
	// ProcUtil is each process's SM utilisation (pid -> percent) since the
	// previous Sample, when ProcUtilKnown. NVML lists only processes that
	// used the GPU in that time, so a process missing from it was idle.
	ProcUtil      map[uint32]float64
	ProcUtilKnown bool
}

// Sampler reads every GPU of the node.
type Sampler struct {
	lib  nvml.Interface
	devs []device
}

type device struct {
	h           nvml.Device
	index       int
	uuid, name  string
	memTotalMiB float64
	// what this device turned out not to support, so we stop asking
	noUtil, noPower, noProcs, noProcUtil bool
	// lastSeen is the newest per-process sample's timestamp (µs), so that
	// the next GetProcessUtilization returns only newer samples.
	lastSeen uint64
}

const mib = 1 << 20

// Open initialises NVML and finds the GPUs. The index of a GPU is its minor
// number (/dev/nvidiaN), which is what Slurm's SLURM_JOB_GPUS lists.
func Open(lib nvml.Interface) (*Sampler, error) {
	if r := lib.Init(); r != nvml.SUCCESS {
		return nil, fmt.Errorf("nvml init: %s", errorString(lib, r))
	}
	n, r := lib.DeviceGetCount()
	if r != nvml.SUCCESS {
		lib.Shutdown()
		return nil, fmt.Errorf("nvml device count: %s", errorString(lib, r))
	}
	s := &Sampler{lib: lib}
	for i := 0; i < n; i++ {
		h, r := lib.DeviceGetHandleByIndex(i)
		if r != nvml.SUCCESS {
			lib.Shutdown()
			return nil, fmt.Errorf("nvml device %d: %s", i, errorString(lib, r))
		}
		d := device{h: h, index: i}
		if minor, r := h.GetMinorNumber(); r == nvml.SUCCESS {
			d.index = minor
		}
		d.uuid, _ = h.GetUUID()
		d.name, _ = h.GetName()
		if m, r := h.GetMemoryInfo(); r == nvml.SUCCESS {
			d.memTotalMiB = float64(m.Total) / mib
		}
		s.devs = append(s.devs, d)
	}
	return s, nil
}

// Close shuts NVML down.
func (s *Sampler) Close() error {
	if r := s.lib.Shutdown(); r != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %s", errorString(s.lib, r))
	}
	return nil
}

// GPUs returns how many GPUs the sampler reads.
func (s *Sampler) GPUs() int { return len(s.devs) }

// ErrNoGPU is returned by Sample when a GPU stopped answering (fell off the
// bus, driver reloaded); the other GPUs' readings are still returned.
var ErrNoGPU = errors.New("gpu not answering")

// Sample reads every GPU once. Calls a GPU does not support are asked once
// and then skipped.
func (s *Sampler) Sample() ([]Reading, error) {
	out := make([]Reading, 0, len(s.devs))
	var errs []error
	for i := range s.devs {
		d := &s.devs[i]
		rd := Reading{Index: d.index, UUID: d.uuid, Name: d.name, MemTotalMiB: d.memTotalMiB}
		m, r := d.h.GetMemoryInfo()
		if r != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("%w: gpu %d memory: %s", ErrNoGPU, d.index, errorString(s.lib, r)))
			continue
		}
		rd.MemUsedMiB = float64(m.Used) / mib
		if m.Total > 0 {
			rd.MemTotalMiB = float64(m.Total) / mib
		}
		if !d.noUtil {
			if u, r := d.h.GetUtilizationRates(); r == nvml.SUCCESS {
				rd.SMUtil, rd.MemUtil = float64(u.Gpu), float64(u.Memory)
			} else if r == nvml.ERROR_NOT_SUPPORTED {
				d.noUtil = true
			}
		}
		if !d.noPower {
			if p, r := d.h.GetPowerUsage(); r == nvml.SUCCESS {
				rd.PowerW = float64(p) / 1000
			} else if r == nvml.ERROR_NOT_SUPPORTED {
				d.noPower = true
			}
		}
		if !d.noProcs {
			if ps, r := d.h.GetComputeRunningProcesses(); r == nvml.SUCCESS {
				rd.ProcsKnown = true
				for _, p := range ps {
					rd.Procs = append(rd.Procs, Proc{PID: p.Pid, UsedMiB: float64(p.UsedGpuMemory) / mib})
				}
			} else if r == nvml.ERROR_NOT_SUPPORTED {
				d.noProcs = true
			}
		}
		if !d.noProcUtil {
			rd.ProcUtil, rd.ProcUtilKnown = d.procUtil()
		}
		out = append(out, rd)
	}
	return out, errors.Join(errs...)
}

// procUtil reads the SM utilisation of each process on d since the previous
// call, averaging a process's samples. NVML answers NOT_FOUND when no
// process has run since lastSeen: known, every process idle.
func (d *device) procUtil() (map[uint32]float64, bool) {
	samples, r := d.h.GetProcessUtilization(d.lastSeen)
	switch r {
	case nvml.SUCCESS:
	case nvml.ERROR_NOT_FOUND:
		return map[uint32]float64{}, true
	case nvml.ERROR_NOT_SUPPORTED:
		d.noProcUtil = true
		return nil, false
	default:
		return nil, false
	}
	sum, n := map[uint32]float64{}, map[uint32]float64{}
	for _, p := range samples {
		sum[p.Pid] += float64(p.SmUtil)
		n[p.Pid]++
		d.lastSeen = max(d.lastSeen, p.TimeStamp)
	}
	for pid := range sum {
		sum[pid] /= n[pid]
	}
	return sum, true
}

func errorString(lib nvml.Interface, r nvml.Return) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("nvml error %d", int(r))
		}
	}()
	return lib.ErrorString(r)
}

// JobSample is one job's use of one GPU at one instant.
type JobSample struct {
	JobID   uint64
	GPU     int
	MemMiB  float64
	SMUtil  float64
	MemUtil float64
	PowerW  float64
	// Attribution is "process" or "device"; see outcome.GPU.
	Attribution string
	// Shared is set when the GPU had more than one job. SMUtil is then the
	// job's own processes' where the reading had per-process utilisation
	// (ProcUtilKnown), else still the whole GPU's.
	Shared bool
}

// Attribute turns readings into per-job samples. jobs maps each running job
// to the GPU indices Slurm gave it; jobOf says which job a process belongs
// to. Memory is the job's own processes' memory where NVML lists processes
// (right even when several jobs share a GPU through gres/shard), else the
// whole GPU's. SM utilisation of a GPU that several jobs share is each job's
// own processes' sum where NVML gave per-process figures, so that an idle job
// is not called busy because its neighbour is (or the reverse); a job alone
// on its GPU, or one whose GPU gave none, gets the GPU's. Memory-controller
// utilisation stays the GPU's, and power is split evenly between the jobs.
func Attribute(readings []Reading, jobs map[uint64][]int, jobOf func(pid uint32) (uint64, bool)) []JobSample {
	byGPU := map[int][]uint64{}
	for job, gpus := range jobs {
		for _, g := range gpus {
			byGPU[g] = append(byGPU[g], job)
		}
	}
	var out []JobSample
	for _, rd := range readings {
		holders := byGPU[rd.Index]
		mem := map[uint64]float64{}
		if rd.ProcsKnown {
			for _, p := range rd.Procs {
				if job, ok := jobOf(p.PID); ok {
					mem[job] += p.UsedMiB
				}
			}
			// A job using a GPU Slurm did not give it (rare: a shard, or
			// CUDA_VISIBLE_DEVICES overridden) is still charged for it.
			for job := range mem {
				if !contains(holders, job) {
					holders = append(holders, job)
				}
			}
		}
		if len(holders) == 0 {
			continue
		}
		shared := len(holders) > 1
		var sm map[uint64]float64
		if shared && rd.ProcUtilKnown {
			sm = jobSMUtil(rd.ProcUtil, jobOf)
		}
		for _, job := range holders {
			s := JobSample{JobID: job, GPU: rd.Index, SMUtil: rd.SMUtil, MemUtil: rd.MemUtil,
				PowerW: rd.PowerW / float64(len(holders)), Shared: shared}
			if sm != nil {
				s.SMUtil = sm[job]
			}
			if rd.ProcsKnown {
				s.MemMiB, s.Attribution = mem[job], "process"
			} else {
				s.MemMiB, s.Attribution = rd.MemUsedMiB, "device"
			}
			out = append(out, s)
		}
	}
	return out
}

// jobSMUtil sums each job's processes' SM utilisation, capped at 100 like
// the GPU's own figure: processes running side by side (MPS) can add up to
// more.
func jobSMUtil(procUtil map[uint32]float64, jobOf func(pid uint32) (uint64, bool)) map[uint64]float64 {
	sm := map[uint64]float64{}
	for pid, u := range procUtil {
		if job, ok := jobOf(pid); ok {
			sm[job] = min(sm[job]+u, 100)
		}
	}
	return sm
}

func contains(xs []uint64, x uint64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
