package nodeagent

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/telemetry/fakegpu"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRound is one sampling round of a busy 8-GPU node: eight jobs,
// one per GPU, each with a real process; NVML is go-nvml's dgxa100 mock;
// each process is tied to its job through /proc (environ, as under
// proctrack/linuxproc); the eight samples are stored in one transaction.
// cpu-ms/round is the process's user+system CPU time per round, and
// cpu-%-at-1s what that costs one core at the default 1 s interval
// (target: under 1%).
func BenchmarkRound(b *testing.B) {
	st, c, loads := openStore(b), newClock(), &gpuLoads{}
	h, _ := hooks(st, c)
	for g := 0; g < 8; g++ {
		id := uint64(100 + g)
		prolog(b, h, id, g)
		pid := jobProcess(b, id)
		loads.set(g, fakegpu.Load{SMUtil: 70, MemUtil: 30, PowerW: 300, Procs: []fakegpu.Proc{{PID: pid, UsedMiB: 20000}}})
	}
	a := New(Config{Node: "n"}, st, sampler(b, loads), ProcFS{}, &deliverFake{}, c.Now, quiet())
	ctx := context.Background()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		c.Advance(time.Second)
		if err := a.Round(ctx); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - cpu0
	if a.Stats.Samples.Load() != int64(8*b.N) {
		b.Fatalf("%d samples in %d rounds", a.Stats.Samples.Load(), b.N)
	}
	perRound := cpu.Seconds() / float64(b.N)
	b.ReportMetric(perRound*1e3, "cpu-ms/round")
	b.ReportMetric(perRound*100, "cpu-%-at-1s")
}
