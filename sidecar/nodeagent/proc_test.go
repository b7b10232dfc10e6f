package nodeagent

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCgroupJob(t *testing.T) {
	cases := map[string]struct {
		in   string
		want uint64
		ok   bool
	}{
		"cgroup v2":        {in: "0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n", want: 42, ok: true},
		"cgroup v1":        {in: "12:pids:/\n4:memory:/slurm/uid_1000/job_7/step_batch\n", want: 7, ok: true},
		"job at the end":   {in: "0::/slurm/job_9", want: 9, ok: true},
		"no job":           {in: "0::/user.slice/user-0.slice/session-1.scope\n"},
		"not a component":  {in: "0::/x/myjob_5/\n"},
		"no digits":        {in: "0::/job_/\n"},
		"digits then text": {in: "0::/job_5x/\n"},
		"second match":     {in: "0::/a/myjob_1/job_2/\n", want: 2, ok: true},
		"empty":            {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			id, ok := CgroupJob([]byte(tc.in))
			if d := cmp.Diff([]any{tc.want, tc.ok}, []any{id, ok}); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestEnvironJob(t *testing.T) {
	cases := map[string]struct {
		in   string
		want uint64
		ok   bool
	}{
		"present":        {in: "PATH=/bin\x00SLURM_JOB_ID=77\x00HOME=/root\x00", want: 77, ok: true},
		"last, no NUL":   {in: "A=1\x00SLURM_JOB_ID=78", want: 78, ok: true},
		"first one wins": {in: "SLURM_JOB_ID=1\x00SLURM_JOB_ID=2\x00", want: 1, ok: true},
		"absent":         {in: "SLURM_JOB_IDX=3\x00"},
		"not a number":   {in: "SLURM_JOB_ID=abc\x00"},
		"zero":           {in: "SLURM_JOB_ID=0\x00"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			id, ok := EnvironJob([]byte(tc.in))
			if d := cmp.Diff([]any{tc.want, tc.ok}, []any{id, ok}); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// fakeProc writes a /proc-shaped tree: pid -> (cgroup, environ).
func fakeProc(t *testing.T, procs map[int][2]string) string {
	t.Helper()
	root := t.TempDir()
	for pid, f := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "cgroup"), []byte(f[0]), 0o644)
		os.WriteFile(filepath.Join(dir, "environ"), []byte(f[1]), 0o644)
	}
	os.MkdirAll(filepath.Join(root, "sys"), 0o755) // not a pid
	return root
}

func TestProcFS(t *testing.T) {
	root := fakeProc(t, map[int][2]string{
		100: {"0::/slurm/job_5/step_0\n", "SLURM_JOB_ID=999\x00"}, // the cgroup wins
		101: {"0::/\n", "SLURM_JOB_ID=6\x00AUGUR_FAKE_GPU_MEM_MIB=12000\x00CUDA_VISIBLE_DEVICES=0\x00"},
		102: {"0::/\n", "HOME=/root\x00"},
	})
	p := ProcFS{Root: root}
	type res struct {
		Job uint64
		OK  bool
	}
	got := map[uint32]res{}
	for _, pid := range []uint32{100, 101, 102, 103} {
		j, ok := p.JobOf(pid)
		got[pid] = res{j, ok}
	}
	want := map[uint32]res{100: {5, true}, 101: {6, true}, 102: {}, 103: {}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("JobOf (-want +got):\n%s", d)
	}
	jobs, err := p.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[uint64]bool{5: true, 6: true}, jobs); d != "" {
		t.Errorf("Jobs (-want +got):\n%s", d)
	}
	ps, err := p.Scan("AUGUR_FAKE_GPU_MEM_MIB")
	if err != nil {
		t.Fatal(err)
	}
	wantPS := []Process{{PID: 100, Job: 5, Env: map[string]string{}}, {PID: 101, Job: 6, Env: map[string]string{"AUGUR_FAKE_GPU_MEM_MIB": "12000"}}}
	if d := cmp.Diff(wantPS, ps); d != "" {
		t.Errorf("Scan (-want +got):\n%s", d)
	}
}

func TestProcFSReal(t *testing.T) {
	// This test process is in no job (unless the suite itself runs in one).
	if os.Getenv("SLURM_JOB_ID") != "" {
		t.Skip("running inside a Slurm job")
	}
	if _, ok := (ProcFS{}).JobOf(uint32(os.Getpid())); ok {
		t.Error("this test process was taken for a job's")
	}
}

// FuzzCgroupJob: /proc/<pid>/cgroup is written by whoever controls cgroups.
func FuzzCgroupJob(f *testing.F) {
	for _, s := range []string{"0::/slurm/job_5/step_0\n", "job_", "job_1", "/job_99999999999999999999999/", "4:memory:/job_3\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, ok := CgroupJob(b); ok && id == 0 {
			t.Fatal("job 0")
		}
	})
}

// FuzzEnvironJob: a job's environment is whatever its user made it.
func FuzzEnvironJob(f *testing.F) {
	for _, s := range []string{"SLURM_JOB_ID=1\x00", "=\x00=", "SLURM_JOB_ID=\x00", "SLURM_JOB_ID=-1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, ok := EnvironJob(b); ok && id == 0 {
			t.Fatal("job 0")
		}
		EnvironValues(b, "A", "SLURM_JOB_GPUS")
	})
}
