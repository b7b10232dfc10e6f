//go:build augur_testhooks

package main

import (
	"os"
	"os/exec"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/google/go-cmp/cmp"

	"github.com/augur-hpc/augur/sidecar/telemetry/fakegpu"
)

// TestFakeGPUsFollowJobProcesses: the test build's mock GPUs show the
// memory that job processes ask for in AUGUR_FAKE_GPU_MEM_MIB, once per job.
func TestFakeGPUsFollowJobProcesses(t *testing.T) {
	start := func(env ...string) uint32 { return startProc(t, env...) }
	a := start("SLURM_JOB_ID=900001", "AUGUR_FAKE_GPU_MEM_MIB=12000", "SLURM_JOB_GPUS=6", "CUDA_VISIBLE_DEVICES=6")
	start("SLURM_JOB_ID=900001", "AUGUR_FAKE_GPU_MEM_MIB=12000", "SLURM_JOB_GPUS=6") // a child of the same job: not counted twice
	b := start("SLURM_JOB_ID=900002", "AUGUR_FAKE_GPU_MEM_MIB=3000", "CUDA_VISIBLE_DEVICES=6,7")
	start("SLURM_JOB_ID=900003", "SLURM_JOB_GPUS=6") // no fake memory: not a GPU user

	f := &fakeLoad{}
	got := map[int]fakegpu.Load{6: f.load(6), 7: f.load(7)}
	want := map[int]fakegpu.Load{
		6: {SMUtil: 100, MemUtil: 40, PowerW: 250, Procs: []fakegpu.Proc{{PID: a, UsedMiB: 12000, SMUtil: 80}, {PID: b, UsedMiB: 3000, SMUtil: 80}}},
		7: {SMUtil: 80, MemUtil: 40, PowerW: 250, Procs: []fakegpu.Proc{{PID: b, UsedMiB: 3000, SMUtil: 80}}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if _, err := openNVML("mock-dgxa100"); err != nil {
		t.Errorf("test build refused the mock: %v", err)
	}
}

// TestFakeGPUsOfOneNode: with AUGUR_FAKE_GPU_NODE set (several simulated
// nodes sharing one pid namespace), an agent's fake GPUs count only the
// processes of its own node.
func TestFakeGPUsOfOneNode(t *testing.T) {
	start := func(env ...string) uint32 { return startProc(t, env...) }
	job := []string{"SLURM_JOB_ID=900011", "SLURM_JOB_GPUS=5"}
	n1 := start(append(job, "SLURMD_NODENAME=node1", "AUGUR_FAKE_GPU_MEM_MIB=1000")...)
	n2 := start(append(job, "SLURMD_NODENAME=node2", "AUGUR_FAKE_GPU_MEM_MIB=2000")...)
	cases := map[string]struct {
		node string
		want []fakegpu.Proc
	}{
		"node1": {node: "node1", want: []fakegpu.Proc{{PID: n1, UsedMiB: 1000, SMUtil: 80}}},
		"node2": {node: "node2", want: []fakegpu.Proc{{PID: n2, UsedMiB: 2000, SMUtil: 80}}},
		"node3": {node: "node3"}, // none of its processes: an idle GPU
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeLoad{node: tc.node}
			if d := cmp.Diff(tc.want, f.load(5).Procs); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestFakeGPUSharedByIdleAndBusyJob: two sharded jobs on one GPU, one idle
// (AUGUR_FAKE_GPU_SM_UTIL=0) and one at 60: the GPU shows 60 and its
// processes 0 and 60, and so does NVML's per-process utilisation.
func TestFakeGPUSharedByIdleAndBusyJob(t *testing.T) {
	start := func(env ...string) uint32 { return startProc(t, env...) }
	idle := start("SLURM_JOB_ID=900021", "SLURM_JOB_GPUS=4", "AUGUR_FAKE_GPU_MEM_MIB=1000", "AUGUR_FAKE_GPU_SM_UTIL=0")
	busy := start("SLURM_JOB_ID=900022", "SLURM_JOB_GPUS=4", "AUGUR_FAKE_GPU_MEM_MIB=2000", "AUGUR_FAKE_GPU_SM_UTIL=60")
	odd := start("SLURM_JOB_ID=900023", "SLURM_JOB_GPUS=3", "AUGUR_FAKE_GPU_MEM_MIB=500", "AUGUR_FAKE_GPU_SM_UTIL=lots")

	f := &fakeLoad{}
	got := map[int]fakegpu.Load{3: f.load(3), 4: f.load(4)}
	want := map[int]fakegpu.Load{
		3: {SMUtil: 80, MemUtil: 40, PowerW: 250, Procs: []fakegpu.Proc{{PID: odd, UsedMiB: 500, SMUtil: 80}}},
		4: {SMUtil: 60, MemUtil: 40, PowerW: 250, Procs: []fakegpu.Proc{{PID: idle, UsedMiB: 1000}, {PID: busy, UsedMiB: 2000, SMUtil: 60}}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}

	samples, r := fakegpu.New(f.load).Devices[4].GetProcessUtilization(0)
	perPID := map[uint32]uint32{}
	for _, s := range samples {
		perPID[s.Pid] = s.SmUtil
	}
	if d := cmp.Diff(map[uint32]uint32{idle: 0, busy: 60}, perPID); d != "" || r != nvml.SUCCESS {
		t.Errorf("per-process utilisation: %v; (-want +got):\n%s", r, d)
	}
}

// startProc starts a process with env added to the test's environment, as
// a job's task would carry it, and returns its pid.
func startProc(t *testing.T, env ...string) uint32 {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return uint32(cmd.Process.Pid)
}
