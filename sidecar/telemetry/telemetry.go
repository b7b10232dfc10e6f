// Package telemetry reads a node's GPUs through NVML and ties what it reads to
// Slurm jobs. NVML comes in as go-nvml's nvml.Interface, so the same code runs
// on real GPUs and, in tests, on go-nvml's own mocks.
//
//	nvml.Interface ─Sampler.Sample─> []Reading (per GPU: memory, utilisation, power, processes)
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
	noUtil, noPower, noProcs bool
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
		out = append(out, rd)
	}
	return out, errors.Join(errs...)
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
}

// Attribute turns readings into per-job samples. jobs maps each running job
// to the GPU indices Slurm gave it; jobOf says which job a process belongs
// to. Memory is the job's own processes' memory where NVML lists processes
// (right even when several jobs share a GPU through gres/shard), else the
// whole GPU's. Utilisation is per GPU in NVML, so sharing jobs each see the
// GPU's; power is split evenly between them.
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
		for _, job := range holders {
			s := JobSample{JobID: job, GPU: rd.Index, SMUtil: rd.SMUtil, MemUtil: rd.MemUtil,
				PowerW: rd.PowerW / float64(len(holders))}
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

func contains(xs []uint64, x uint64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
