package predictor

import (
	"strings"
	"testing"
	"time"
)

func TestSlurmTime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"": 0, "UNLIMITED": 0, "infinite": 0, "90": 90 * time.Minute, "10:30": 11 * time.Minute, // seconds round up, as Slurm's do
		"04:00:00": 4 * time.Hour, "2-00": 48 * time.Hour, "1-12:30": 36*time.Hour + 30*time.Minute,
		"1-00:00:05": 24*time.Hour + time.Minute, "1-": 24 * time.Hour, "0-12": 12 * time.Hour, "0-": 0,
		"1:60": 2 * time.Minute,
	} {
		if got, err := SlurmTime(in); err != nil || got != want {
			t.Errorf("SlurmTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"1:2:3:4", "x", "-5", "1--2", "99999999999-00", "1:99999999999", "4h", "2700000:0:0", "36500-23",
		"+5", " 5", "1:", ":30", "-", "1-:30", "1-2-3", "1.5"} {
		if _, err := SlurmTime(in); err == nil || !strings.Contains(err.Error(), "Slurm's formats") {
			t.Errorf("SlurmTime(%q): %v, want an error naming the formats", in, err)
		}
	}
}

func FuzzSlurmTime(f *testing.F) {
	for _, s := range []string{"90", "1-12:30", "04:00:00", "UNLIMITED", "36500-00:00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := SlurmTime(s); err == nil && d < 0 {
			t.Fatalf("SlurmTime(%q) = %v", s, d)
		}
	})
}

// TestScriptJobReadsWhatItCan: a header Augur cannot read still gives a
// job (with warnings); what the caller gives must parse.
func TestScriptJobReadsWhatItCan(t *testing.T) {
	s := ParseScript("#!/bin/bash\n#SBATCH --gres=gpu:a100:$N\n#SBATCH --time=4h\n#SBATCH -J x\npython train.py\n")
	job, warnings, err := ScriptJob(s, SubmitOptions{})
	if err != nil || len(warnings) != 2 || job.GPUs != nil || job.TimeLimit != 0 || job.Name != "x" {
		t.Errorf("job %+v, warnings %q, err %v", job, warnings, err)
	}
	if _, _, err := ScriptJob(s, SubmitOptions{Gres: "gpu:x:y:z"}); err == nil {
		t.Error("a bad --gres given by the caller was accepted")
	}
	if _, _, err := ScriptJob(s, SubmitOptions{Time: "4h"}); err == nil {
		t.Error("a bad --time given by the caller was accepted")
	}
	job, _, err = ScriptJob(s, SubmitOptions{GPUs: "2", Time: "1:00:00"})
	if err != nil || len(job.GPUs) != 1 || job.TimeLimit != time.Hour {
		t.Errorf("given request: job %+v, err %v", job, err)
	}
}

// TestScriptJobGPUTypeHint: a typeless request gets the one type its
// constraint, partition, QOS or reservation name, and the command line's
// options override the header's as sbatch's do.
func TestScriptJobGPUTypeHint(t *testing.T) {
	s := ParseScript("#!/bin/bash\n#SBATCH --gres=gpu:2\n#SBATCH -C v100\n#SBATCH -p gpu\npython train.py\n")
	for name, tc := range map[string]struct {
		o          SubmitOptions
		hint, from string
	}{
		"header":                               {SubmitOptions{}, "v100", "#SBATCH --constraint"},
		"command line -C":                      {SubmitOptions{Constraint: "a100"}, "a100", "command line --constraint"},
		"-C and -p together":                   {SubmitOptions{Constraint: "a100|h100", Partition: "gpu_h100"}, "h100", "command line --constraint + command line --partition"},
		"a partition the constraint rules out": {SubmitOptions{Partition: "gpu_a100"}, "v100", "#SBATCH --constraint"},
		"partition and QOS that disagree":      {SubmitOptions{Constraint: "ib", Partition: "gpu_a100", QOS: "h100"}, "", ""},
		"a reservation":                        {SubmitOptions{Constraint: "ib", Reservation: "h100_maint"}, "h100", "command line --reservation"},
		"a typed request":                      {SubmitOptions{Gres: "gpu:t4:1", Constraint: "a100"}, "", ""},
	} {
		t.Run(name, func(t *testing.T) {
			job, _, err := ScriptJob(s, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if job.GPUTypeHint != tc.hint {
				t.Errorf("hint %q, want %q", job.GPUTypeHint, tc.hint)
			}
			if typ, from := tc.o.GPUTypeHint(s); tc.hint != "" && (typ != tc.hint || from != tc.from) {
				t.Errorf("GPUTypeHint = %q from %q, want %q from %q", typ, from, tc.hint, tc.from)
			}
		})
	}
}
