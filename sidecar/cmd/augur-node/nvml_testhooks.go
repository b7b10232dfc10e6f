//go:build augur_testhooks

package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/augur-hpc/augur/sidecar/nodeagent"
	"github.com/augur-hpc/augur/sidecar/nodestore"
	"github.com/augur-hpc/augur/sidecar/telemetry/fakegpu"
)

// openNVML returns the GPU backend node.nvml names. This test build (tag
// augur_testhooks, bin/test/augur-node) also accepts "mock-dgxa100": eight
// fake A100s whose load comes from the node's job processes, so that the
// e2e suite sees real jobs use GPU memory. A process of a job uses GPU i
// when its environment has AUGUR_FAKE_GPU_MEM_MIB=<n> and i is in its
// SLURM_JOB_GPUS (or CUDA_VISIBLE_DEVICES): the GPU then lists one process
// per such job (its lowest pid) using n MiB. That process's SM utilisation
// is AUGUR_FAKE_GPU_SM_UTIL=<0..100> from the same environment (80 when
// unset or not in 0..100), and the GPU's is its processes' sum capped at
// 100, so that jobs sharing a GPU (gres/shard) can be told apart: sharded
// jobs at 0 and 60 show a GPU at 60 and processes at 0 and 60. A GPU with
// any process is at 40% memory utilisation and 250 W, else 50 W.
// `sbatch --export=ALL,AUGUR_FAKE_GPU_MEM_MIB=12000 --gres=gpu:a100:1
// --wrap 'sleep 5'` thus peaks at 12000 MiB.
//
// Several simulated nodes on one host (tests/cluster/multinode-up.sh: one
// network namespace per slurmd, one pid namespace for all) start each
// agent with AUGUR_FAKE_GPU_NODE=<node>: its fake GPUs then count only the
// processes whose SLURMD_NODENAME is that node, not the other nodes' tasks
// of the same job.
func openNVML(kind string) (nvml.Interface, error) {
	switch kind {
	case "real":
		return nvml.New(), nil
	case "mock-dgxa100":
		f := &fakeLoad{procs: nodeagent.ProcFS{}, node: os.Getenv(FakeNodeEnv)}
		return fakegpu.New(f.load), nil
	}
	return nil, fmt.Errorf("node.nvml is %q: give real or mock-dgxa100", kind)
}

// FakeMemEnv names the environment variable a test job sets.
const FakeMemEnv = "AUGUR_FAKE_GPU_MEM_MIB"

// FakeUtilEnv names the environment variable a test job may set for its
// process's SM utilisation; defaultFakeUtil is what it shows without.
const (
	FakeUtilEnv     = "AUGUR_FAKE_GPU_SM_UTIL"
	defaultFakeUtil = 80
)

// FakeNodeEnv, in the agent's environment, names the Slurm node whose job
// processes its fake GPUs count (all when unset).
const FakeNodeEnv = "AUGUR_FAKE_GPU_NODE"

type fakeLoad struct {
	procs nodeagent.ProcFS
	node  string
	mu    sync.Mutex
	at    time.Time
	byGPU map[int][]fakegpu.Proc
}

// load is called several times per GPU per sampling round: /proc is
// scanned at most every 200 ms.
func (f *fakeLoad) load(index int) fakegpu.Load {
	f.mu.Lock()
	defer f.mu.Unlock()
	if time.Since(f.at) > 200*time.Millisecond {
		f.byGPU = f.scan()
		f.at = time.Now()
	}
	ps := f.byGPU[index]
	if len(ps) == 0 {
		return fakegpu.Load{PowerW: 50}
	}
	var sm uint32
	for _, p := range ps {
		sm += p.SMUtil
	}
	return fakegpu.Load{Procs: ps, SMUtil: min(sm, 100), MemUtil: 40, PowerW: 250}
}

func (f *fakeLoad) scan() map[int][]fakegpu.Proc {
	ps, err := f.procs.Scan(FakeMemEnv, FakeUtilEnv, "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES", "SLURMD_NODENAME")
	if err != nil {
		return nil
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].PID < ps[j].PID })
	seen := map[[2]uint64]bool{}
	out := map[int][]fakegpu.Proc{}
	for _, p := range ps {
		if f.node != "" && p.Env["SLURMD_NODENAME"] != f.node {
			continue // another simulated node's process
		}
		mem, err := strconv.ParseFloat(p.Env[FakeMemEnv], 64)
		if err != nil || mem <= 0 {
			continue
		}
		list := p.Env["SLURM_JOB_GPUS"]
		if list == "" {
			list = p.Env["CUDA_VISIBLE_DEVICES"]
		}
		gpus, err := nodestore.ParseGPUs(list)
		if err != nil {
			continue
		}
		for _, g := range gpus {
			if k := [2]uint64{p.Job, uint64(g)}; !seen[k] {
				seen[k] = true
				out[g] = append(out[g], fakegpu.Proc{PID: p.PID, UsedMiB: mem, SMUtil: fakeUtil(p.Env[FakeUtilEnv])})
			}
		}
	}
	return out
}

// fakeUtil is the SM utilisation an AUGUR_FAKE_GPU_SM_UTIL value asks for.
func fakeUtil(v string) uint32 {
	u, err := strconv.ParseUint(v, 10, 32)
	if err != nil || u > 100 {
		return defaultFakeUtil
	}
	return uint32(u)
}
