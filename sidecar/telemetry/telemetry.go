// Package telemetry reads a node's GPUs through NVML and ties what it reads to
// Slurm jobs. NVML comes in as go-nvml's nvml.Interface, so the same code runs
// on real GPUs and, in tests, on go-nvml's own mocks.
//
//	nvml.Interface ─Sampler.Sample─> []Reading (per GPU: memory, utilisation, power, processes and their SM utilisation,
//	                                            and, where NVML accounting is on, processes' peaks, ended ones' too)
//	[]Reading + job→GPUs + pid→job ─Attribute─> []JobSample (per job and GPU)
//
// Attribute is pure; finding which job a process belongs to (/proc) is the
// caller's business, passed in as a function.
//
// # Peaks between samples
//
// A sample once a second misses what happens between two: a job that dies
// of a CUDA out-of-memory error dies of an allocation that lasted well
// under a second, and its last sample can sit far below the ceiling it hit.
// NVML's accounting mode has the driver itself keep, per process, the most
// GPU memory it ever held (nvmlDeviceGetAccountingStats' maxMemoryUsage),
// and keeps it after the process exits. Open reads each GPU's accounting
// mode and, asked to (WithAccounting), turns it on where it is off (root
// only; it stays on until the driver unloads; `nvidia-smi -am 0` turns it
// off). Sample then reads the maximum of every process listed and of every
// process listed in the previous Sample that has gone since, once, and
// reports it where it rose (Reading.ProcPeakMiB), so that the peak a
// process reached between two samples, even in its last instant, reaches
// the job's samples (JobSample.PeakMiB).
package telemetry

import (
	"errors"
	"fmt"
	"slices"

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
	// Accounting is set when NVML accounting is on for the GPU and its
	// processes were listed. ProcPeakMiB then has, for each process whose
	// most memory ever held (NVML's accounting maximum) rose since the
	// previous Sample, or that is read for the first time, that maximum:
	// the process held that much at some instant since the previous
	// Sample. A running process missing from it held at most its maximum
	// of before, which an earlier reading reported. EndedPIDs lists the
	// processes of the previous Sample's list that have gone since, whose
	// accounting was read (once: a later Sample does not list them again);
	// their maxima are in ProcPeakMiB where they rose.
	Accounting  bool
	ProcPeakMiB map[uint32]float64
	EndedPIDs   []uint32
	// ProcLife is each process's lifetime as accounting read it, for the
	// processes ProcPeakMiB could hold: two processes whose lifetimes do
	// not overlap never held their maxima at the same instant.
	ProcLife map[uint32]Lifetime
}

// Lifetime is when a process held a GPU context, in µs of the CPU clock as
// NVML accounting gives it: EndUs is 0 while it runs.
type Lifetime struct{ StartUs, EndUs uint64 }

// overlaps reports whether l was alive when o started.
func (l Lifetime) overlaps(o Lifetime) bool {
	return l.StartUs <= o.StartUs && (l.EndUs == 0 || l.EndUs > o.StartUs)
}

// Sampler reads every GPU of the node.
type Sampler struct {
	lib        nvml.Interface
	devs       []device
	enableAcct bool
}

// Option changes how Open sets the Sampler up.
type Option func(*Sampler)

// WithAccounting, when enable is set, makes Open turn NVML accounting mode
// on for each GPU where it is off (nvmlDeviceSetAccountingMode, which
// needs root). Without it Open only reads the mode, and uses accounting
// where someone else turned it on.
func WithAccounting(enable bool) Option {
	return func(s *Sampler) { s.enableAcct = enable }
}

// AccountingState is what Open found of one GPU's NVML accounting mode.
type AccountingState struct {
	Index int
	// On: Sample reads the GPU's processes' peaks.
	On bool
	// Enabled: Open turned it on.
	Enabled bool
	// Err says why it is off, when Open could not read or turn it on
	// (NVML's NOT_SUPPORTED, NO_PERMISSION, ...); nil when it is off
	// because nobody asked for it.
	Err error
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
	// acct: accounting is on and answers. acctMax holds the processes of
	// the previous Sample's list with their accounting maximum then (MiB;
	// 0 when it could not be read), so that the next Sample knows whose
	// maximum rose and who has gone.
	acct    bool
	acctErr error
	enabled bool
	acctMax map[uint32]float64
}

const mib = 1 << 20

// Open initialises NVML and finds the GPUs. The index of a GPU is its minor
// number (/dev/nvidiaN), which is what Slurm's SLURM_JOB_GPUS lists. It
// reads each GPU's accounting mode and, WithAccounting, turns it on where
// it is off; a GPU where it stays off (Accounting says why) is sampled as
// before, without processes' peaks.
func Open(lib nvml.Interface, opts ...Option) (*Sampler, error) {
	if r := lib.Init(); r != nvml.SUCCESS {
		return nil, fmt.Errorf("nvml init: %s", errorString(lib, r))
	}
	n, r := lib.DeviceGetCount()
	if r != nvml.SUCCESS {
		lib.Shutdown()
		return nil, fmt.Errorf("nvml device count: %s", errorString(lib, r))
	}
	s := &Sampler{lib: lib}
	for _, o := range opts {
		o(s)
	}
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
		d.openAccounting(lib, s.enableAcct)
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

// Accounting says, per GPU, whether Sample reads its processes' peaks
// through NVML accounting, as Open left it.
func (s *Sampler) Accounting() []AccountingState {
	out := make([]AccountingState, len(s.devs))
	for i, d := range s.devs {
		out[i] = AccountingState{Index: d.index, On: d.acct, Enabled: d.enabled, Err: d.acctErr}
	}
	return out
}

// openAccounting reads d's accounting mode and, when enable is set, turns
// it on where it is off.
func (d *device) openAccounting(lib nvml.Interface, enable bool) {
	mode, r := ask(d.h.GetAccountingMode)
	switch {
	case r != nvml.SUCCESS:
		d.acctErr = fmt.Errorf("nvml accounting mode of gpu %d: %s", d.index, errorString(lib, r))
		return
	case mode == nvml.FEATURE_ENABLED:
		d.acct = true
		return
	case !enable:
		return
	}
	_, r = ask(func() (struct{}, nvml.Return) { return struct{}{}, d.h.SetAccountingMode(nvml.FEATURE_ENABLED) })
	if r != nvml.SUCCESS {
		d.acctErr = fmt.Errorf("nvml: turning accounting on for gpu %d: %s", d.index, errorString(lib, r))
		return
	}
	d.acct, d.enabled = true, true
}

// ask calls an NVML method that a device may lack: go-nvml's mock devices
// panic on a method they were not given, and a library older than the
// call answers FUNCTION_NOT_FOUND. Both read as NOT_SUPPORTED.
func ask[T any](f func() (T, nvml.Return)) (v T, r nvml.Return) {
	defer func() {
		if recover() != nil {
			var zero T
			v, r = zero, nvml.ERROR_NOT_SUPPORTED
		}
	}()
	v, r = f()
	if r == nvml.ERROR_FUNCTION_NOT_FOUND {
		r = nvml.ERROR_NOT_SUPPORTED
	}
	return v, r
}

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
		if d.acct && rd.ProcsKnown {
			rd.ProcPeakMiB, rd.EndedPIDs, rd.ProcLife = d.peaks(rd.Procs)
			rd.Accounting = d.acct // off when the device answered NOT_SUPPORTED just now
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

// peaks reads the accounting maximum of each running process and of each
// process of the previous call's list that has gone, and returns those
// that rose since the previous call (or are read for the first time), and
// the gone processes read. A device that answers NOT_SUPPORTED (its
// accounting was turned off meanwhile) is not asked again.
func (d *device) peaks(running []Proc) (map[uint32]float64, []uint32, map[uint32]Lifetime) {
	lives := map[uint32]Lifetime{}
	read := func(pid uint32) (float64, bool) {
		st, r := ask(func() (nvml.AccountingStats, nvml.Return) { return d.h.GetAccountingStats(pid) })
		switch r {
		case nvml.SUCCESS:
			l := Lifetime{StartUs: st.StartTime}
			if st.IsRunning == 0 && st.Time > 0 {
				l.EndUs = st.StartTime + st.Time*1000 // Time: ms, once the process has ended
			}
			lives[pid] = l
			return float64(st.MaxMemoryUsage) / mib, true
		case nvml.ERROR_NOT_SUPPORTED:
			d.acct, d.acctMax = false, nil
		}
		return 0, false // NOT_FOUND: started before accounting was on, or out of the driver's buffer
	}
	peaks := map[uint32]float64{}
	now := make(map[uint32]float64, len(running))
	for _, p := range running {
		last, seen := d.acctMax[p.PID]
		m, ok := read(p.PID)
		if !d.acct {
			return nil, nil, nil
		}
		now[p.PID] = last
		if ok {
			now[p.PID] = max(m, last)
			if !seen || m > last {
				peaks[p.PID] = m
			}
		}
	}
	var ended []uint32
	for pid, last := range d.acctMax {
		if _, ok := now[pid]; ok {
			continue
		}
		m, ok := read(pid)
		if !d.acct {
			return nil, nil, nil
		}
		if !ok {
			continue
		}
		ended = append(ended, pid)
		if m > last {
			peaks[pid] = m
		}
	}
	d.acctMax = now
	slices.Sort(ended)
	return peaks, ended, lives
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
	JobID  uint64
	GPU    int
	MemMiB float64
	// PeakMiB is the most memory the job's processes on the GPU can have
	// held at one instant since the previous sample: MemMiB, or more where
	// the reading had NVML accounting and a process's maximum rose since
	// (an allocation between two samples, or the last instants of a process
	// that has ended since). With several processes of one job on one GPU
	// it adds the figures of those alive together (a process that ended
	// before the next one started is not added to it, by their accounting
	// lifetimes); their maxima need not have come at the same instant, so
	// it is then an upper bound, capped at the GPU's memory.
	PeakMiB float64
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
// Where the reading has accounting peaks, a job's peak adds each of its
// processes' (a running process without one counts at its memory now) and
// those of its processes that have ended since the previous reading, of
// the processes alive together (mostAtOnce): jobOf must still know the
// ended ones, which /proc no longer does.
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
		mem, peak := map[uint64]float64{}, map[uint64]float64{}
		held := map[uint64][]heldMem{}
		if rd.ProcsKnown {
			for _, p := range rd.Procs {
				if job, ok := jobOf(p.PID); ok {
					mem[job] += p.UsedMiB
					h := heldMem{mib: p.UsedMiB}
					if m, ok := rd.ProcPeakMiB[p.PID]; ok {
						h.mib = m
					}
					h.life, h.known = rd.ProcLife[p.PID]
					held[job] = append(held[job], h)
				}
			}
			for _, pid := range rd.EndedPIDs {
				if m, ok := rd.ProcPeakMiB[pid]; ok {
					if job, ok := jobOf(pid); ok {
						h := heldMem{mib: m}
						h.life, h.known = rd.ProcLife[pid]
						held[job] = append(held[job], h)
					}
				}
			}
			for job, hs := range held {
				peak[job] = mostAtOnce(hs)
			}
			// A job using a GPU Slurm did not give it (rare: a shard, or
			// CUDA_VISIBLE_DEVICES overridden) is still charged for it.
			for job := range peak {
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
			s.PeakMiB = max(s.MemMiB, peak[job])
			if rd.MemTotalMiB > 0 && s.PeakMiB > rd.MemTotalMiB {
				s.PeakMiB = max(s.MemMiB, rd.MemTotalMiB) // a sum of maxima past what the card holds
			}
			out = append(out, s)
		}
	}
	return out
}

// heldMem is what one process of a job held at most since the previous
// reading (its accounting maximum where it rose, else its memory now), and
// its lifetime where accounting gave it.
type heldMem struct {
	mib   float64
	life  Lifetime
	known bool
}

// mostAtOnce is the most a job's processes can have held at one instant:
// the most of the sums of the processes alive when each of them started,
// a process of unknown lifetime counted as alive with all the others (so
// that with one, it is the sum of all: an upper bound, since their maxima
// need not have come together).
func mostAtOnce(hs []heldMem) float64 {
	most := 0.0
	for _, at := range hs {
		sum := 0.0
		for _, h := range hs {
			if !at.known || !h.known || h.life.overlaps(at.life) {
				sum += h.mib
			}
		}
		most = max(most, sum)
	}
	return most
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
