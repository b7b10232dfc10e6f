package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPredictEnv: --env gives the script the variables its submission
// exports, as MODEL=... sbatch SCRIPT does; a malformed one is refused
// with what to write instead.
func TestPredictEnv(t *testing.T) {
	script := filepath.Join(t.TempDir(), "train.sh")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:1\npython train.py --model ${MODEL:-resnet18} --batch_size 32\n"), 0o644)
	for env, want := range map[string]string{"": "resnet18", "MODEL=vit_large_patch16_224": "vit_large_patch16_224"} {
		args := []string{"--json"}
		if env != "" {
			args = append(args, "--env", env)
		}
		stdout, err := capture(t, func() error { return runPredict(append(args, script)) })
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var out struct {
			Features struct {
				Model string `json:"model"`
			} `json:"features"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil || out.Features.Model != want {
			t.Errorf("--env %q: model %q (%v), want %q", env, out.Features.Model, err, want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"predict", "--env", "MODEL", script}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "is not NAME=VALUE") {
		t.Errorf("--env MODEL: exit %d, stderr %q", code, &stderr)
	}
}

// TestPredictFiles: the config files a script names are read from the
// directory -D gives, as sbatch -D runs the job; those not there are said
// to be missing, and the script is read without them.
func TestPredictFiles(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "train.sh")
	os.WriteFile(script, []byte("#!/bin/bash\n#SBATCH --gres=gpu:1\n"+
		"torchrun --nproc_per_node 1 train.py --config configs/sft.yaml --deepspeed ds.json\n"), 0o644)
	sub := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(sub, "configs"), 0o755)
	os.WriteFile(filepath.Join(sub, "configs/sft.yaml"),
		[]byte("model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nper_device_train_batch_size: 2\nbf16: true\n"), 0o644)
	type result struct {
		Features struct {
			Model     string  `json:"model"`
			BatchSize float64 `json:"batch_size"`
		} `json:"features"`
		FilesRead   []string `json:"files_read"`
		FilesUnread []string `json:"files_unread"`
	}
	for _, tc := range []struct {
		dir, model   string
		read, unread []string
	}{
		{sub, "qwen/qwen2.5-7b-instruct", []string{"configs/sft.yaml"}, []string{"ds.json", "train.py"}},
		{dir, "", nil, []string{"configs/sft.yaml", "ds.json", "train.py"}},
	} {
		stdout, err := capture(t, func() error { return runPredict([]string{"--json", "-D", tc.dir, script}) })
		if err != nil {
			t.Fatal(err)
		}
		var out result
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		if out.Features.Model != tc.model || !slices.Equal(out.FilesRead, tc.read) || !slices.Equal(out.FilesUnread, tc.unread) {
			t.Errorf("-D %s: model %q, read %q, unread %q; want %q, %q, %q", tc.dir, out.Features.Model,
				out.FilesRead, out.FilesUnread, tc.model, tc.read, tc.unread)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"predict", "-D", script, script}, &stdout, &stderr); code == 0 ||
		!strings.Contains(stderr.String(), "not a directory") {
		t.Errorf("-D FILE: exit %d, stderr %q", code, &stderr)
	}
}
