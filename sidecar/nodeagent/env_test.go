package nodeagent

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// envOf turns a map into a getenv.
func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseHookEnv(t *testing.T) {
	cases := map[string]struct {
		env     map[string]string
		want    HookEnv
		wantErr bool
		notJob  bool
	}{
		"prolog with one GPU": {
			env:  map[string]string{"SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURM_JOB_ID": "42", "SLURM_JOB_UID": "1000", "SLURM_JOB_GPUS": "0", "CUDA_VISIBLE_DEVICES": "0", "SLURMD_NODENAME": "n1"},
			want: HookEnv{Context: "prolog_slurmd", JobID: 42, UserID: 1000, GPUs: []int{0}, Node: "n1"},
		},
		"epilog, exit 3": {
			env:  map[string]string{"SLURM_SCRIPT_CONTEXT": "epilog_slurmd", "SLURM_JOB_ID": "43", "SLURM_JOB_GPUS": "4,5", "SLURM_JOB_EXIT_CODE2": "3:0", "SLURM_JOB_EXIT_CODE": "768"},
			want: HookEnv{Context: "epilog_slurmd", JobID: 43, GPUs: []int{4, 5}, Exit: Exit{Known: true, Code: 3}},
		},
		"epilog, killed, only the raw wait status": {
			env:  map[string]string{"SLURM_JOB_ID": "44", "CUDA_VISIBLE_DEVICES": "1", "SLURM_JOB_EXIT_CODE": "9"},
			want: HookEnv{JobID: 44, GPUs: []int{1}, Exit: Exit{Known: true, Signal: 9}},
		},
		"no GPUs":                {env: map[string]string{"SLURM_JOB_ID": "45", "CUDA_VISIBLE_DEVICES": "NoDevFiles"}, want: HookEnv{JobID: 45}},
		"duplicate GPUs dropped": {env: map[string]string{"SLURM_JOB_ID": "46", "SLURM_JOB_GPUS": "1,1,2"}, want: HookEnv{JobID: 46, GPUs: []int{1, 2}}},
		"no job":                 {env: map[string]string{}, wantErr: true, notJob: true},
		"bad job id":             {env: map[string]string{"SLURM_JOB_ID": "4x"}, wantErr: true},
		"zero job id":            {env: map[string]string{"SLURM_JOB_ID": "0"}, wantErr: true},
		"GPU UUIDs refused":      {env: map[string]string{"SLURM_JOB_ID": "47", "CUDA_VISIBLE_DEVICES": "GPU-5f2e"}, wantErr: true},
		"bad exit code":          {env: map[string]string{"SLURM_JOB_ID": "48", "SLURM_JOB_EXIT_CODE2": "3"}, wantErr: true},
		"bad uid":                {env: map[string]string{"SLURM_JOB_ID": "49", "SLURM_JOB_UID": "-1"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseHookEnv(envOf(tc.env))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if errors.Is(err, ErrNotAJob) != tc.notJob {
				t.Errorf("errors.Is(err, ErrNotAJob) = %v", !tc.notJob)
			}
			if err != nil {
				return
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestExitState(t *testing.T) {
	cases := map[string]struct {
		code2    string
		nearCap  bool
		want     string
		wantCode int
	}{
		"completed":                  {code2: "0:0", want: StateCompleted},
		"completed near capacity":    {code2: "0:0", nearCap: true, want: StateCompleted},
		"exit 1":                     {code2: "1:0", want: StateFailed, wantCode: 1},
		"scancel (SIGKILL)":          {code2: "0:9", want: StateCancelled, wantCode: 137},
		"time limit (SIGTERM)":       {code2: "0:15", want: StateCancelled, wantCode: 143},
		"SIGKILL near capacity: OOM": {code2: "0:9", nearCap: true, want: StateFailed, wantCode: 137},
		"segfault":                   {code2: "0:11", want: StateFailed, wantCode: 139},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x, err := ParseExitCode2(tc.code2)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{ExitState(x, tc.nearCap), ExitCode(x)}
			if d := cmp.Diff([]any{tc.want, tc.wantCode}, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if got := ExitState(Exit{}, true); got != StateUnknown {
		t.Errorf("unknown exit = %s", got)
	}
}

func TestParseWaitStatus(t *testing.T) {
	cases := map[string]Exit{"0": {Known: true}, "768": {Known: true, Code: 3}, "9": {Known: true, Signal: 9}, "15": {Known: true, Signal: 15}}
	for in, want := range cases {
		got, err := ParseWaitStatus(in)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", in, d)
		}
	}
	for _, bad := range []string{"", "-1", "x", "70000"} {
		if _, err := ParseWaitStatus(bad); err == nil {
			t.Errorf("ParseWaitStatus(%q) accepted", bad)
		}
	}
}

// FuzzParseHookEnv: slurmd's environment is outside input.
func FuzzParseHookEnv(f *testing.F) {
	f.Add("42", "1000", "0,1", "", "3:0", "768")
	f.Add("1", "", "", "NoDevFiles", "", "9")
	f.Add("18446744073709551615", "4294967296", "0-99999", "GPU-1", "0:999", "x")
	f.Fuzz(func(t *testing.T, id, uid, gpus, cuda, code2, code string) {
		e, err := ParseHookEnv(envOf(map[string]string{"SLURM_JOB_ID": id, "SLURM_JOB_UID": uid, "SLURM_JOB_GPUS": gpus,
			"CUDA_VISIBLE_DEVICES": cuda, "SLURM_JOB_EXIT_CODE2": code2, "SLURM_JOB_EXIT_CODE": code}))
		if err != nil {
			return
		}
		if e.JobID == 0 || e.JobID > 1<<63-1 || len(e.GPUs) > 4096 {
			t.Fatalf("accepted %+v", e)
		}
		seen := map[int]bool{}
		for _, g := range e.GPUs {
			if g < 0 || seen[g] {
				t.Fatalf("GPUs %v", e.GPUs)
			}
			seen[g] = true
		}
		if e.Exit.Known && (e.Exit.Code < 0 || e.Exit.Code > 255 || e.Exit.Signal < 0 || e.Exit.Signal > 128) {
			t.Fatalf("exit %+v", e.Exit)
		}
		_ = ExitState(e.Exit, true)
	})
}
