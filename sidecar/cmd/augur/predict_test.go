package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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
