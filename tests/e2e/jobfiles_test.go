//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/augur-hpc/augur/tests/clustertest"
)

// setJobFiles turns predictor.job_files on or off in augur.yaml and has
// augurd re-read it (SIGHUP), waiting for its "configuration reloaded".
func (c *cluster) setJobFiles(t *testing.T, on bool) {
	t.Helper()
	path := filepath.Join(c.Dir, "etc", "augur.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = jobFilesSection.ReplaceAll(b, nil)
	if on {
		b = retrainAfterLine.ReplaceAll(b, []byte("$0  job_files:\n    enabled: true\n    budget: 30ms\n"))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(c.Dir, "log", "augurd.log")
	reloads := func() int {
		log, _ := os.ReadFile(logPath)
		return strings.Count(string(log), "configuration reloaded")
	}
	before := reloads()
	pid, err := strconv.Atoi(c.augurdPID(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	clustertest.WaitFor(t, 10*time.Second, "augurd to reload augur.yaml", func() bool { return reloads() > before })
}

var (
	retrainAfterLine = regexp.MustCompile(`(?m)^  retrain_after: .*\n`)
	jobFilesSection  = regexp.MustCompile(`(?m)^  job_files:\n(    .*\n)*`)
)

// TestJobConfigFiles: a script that names its model only in a config file
// beside it (torchrun train.py --config configs/vit.yaml), its precision
// only in the program's default, submitted with sbatch --chdir: with
// predictor.job_files on, augurd reads both from the job's submission
// directory, predicts from the model the file names (the shipped prior),
// and keeps the file and the program's option declarations (not its code)
// in the stored request; submitted from
// a directory without it, or with job_files off, the job is read from its
// script alone, and every submission goes through.
func TestJobConfigFiles(t *testing.T) {
	body := `#!/bin/bash
#SBATCH --job-name=cfgtrain
#SBATCH --time=02:00:00
#SBATCH --cpus-per-task=1
torchrun --nproc_per_node 1 train.py --config configs/vit.yaml
`
	const config = "model: vit_large_patch16_224\nbatch_size: 64\n"
	const program = "import argparse\nimport torch\n\nparser = argparse.ArgumentParser()\n" +
		"parser.add_argument('--config', required=True)\nparser.add_argument('--precision', default='bf16',\n" +
		"                    choices=['bf16', 'fp16', 'fp32'])\nargs = parser.parse_args()\nmodel = torch.nn.Linear(8, 8)\n"
	path := c.BatchScript(t, body)
	withFile := filepath.Join(c.Dir, "var", "jobfiles-sub")
	empty := filepath.Join(c.Dir, "var", "jobfiles-empty")
	for _, d := range []string{filepath.Join(withFile, "configs"), empty} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range map[string]string{"configs/vit.yaml": config, "train.py": program} {
		if err := os.WriteFile(filepath.Join(withFile, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.RemoveAll(withFile); os.RemoveAll(empty) })
	submit := func(script, dir, name string) (job, string) {
		t.Helper()
		id, stderr, err := c.TrySbatch(t, "-H", "--chdir="+dir, "--job-name="+name, "--gres=gpu:1", script)
		if err != nil {
			t.Fatalf("sbatch --chdir=%s: %v\n%s", dir, err, stderr)
		}
		j := c.job(t, id)
		sub := c.stored(t, token(j))
		return j, string(sub.Features) + "\n" + string(sub.Request)
	}
	lacks := func(what, stored string, wants ...string) {
		t.Helper()
		for _, want := range wants {
			if !strings.Contains(stored, want) {
				t.Errorf("%s: stored %s\nlacks %s", what, stored, want)
			}
		}
	}
	read := func() float64 {
		v, _ := strconv.ParseFloat(c.metric(t, `augur_job_files_total{result="read"}`), 64)
		return v
	}
	// readWith checks a job read with its files: the prior of the model
	// they name, and reads more files read.
	readWith := func(what string, j job, before float64, reads int) {
		t.Helper()
		if !strings.Contains(j.AdminComment, "src=prior/") {
			t.Errorf("%s: annotation %q, want the prior for the model its files name", what, j.AdminComment)
		}
		if got := read(); got != before+float64(reads) {
			t.Errorf("%s: augur_job_files_total{result=\"read\"} went from %v to %v, want %d more", what, before, got, reads)
		}
	}

	c.setJobFiles(t, true)
	t.Cleanup(func() { c.setJobFiles(t, false) })
	before := read()
	j, stored := submit(path, withFile, "cfg-on")
	lacks("job_files on", stored, `"model":"vit_large_patch16_224"`, `"batch_size":64`, `"precision":"bf16"`,
		`vit.yaml: model`, `train.py: default of --precision`, `"configs/vit.yaml":"model: vit_large_patch16_224`,
		`"train.py":".add_argument('--config', required=True)\n.add_argument('--precision', default='bf16', choices=['bf16', 'fp16', 'fp32'])\n"`)
	if strings.Contains(stored, "torch.nn") {
		t.Errorf("job_files on: the program's code was stored, not only its options: %s", stored)
	}
	readWith("job_files on", j, before, 2) // the config and the program

	// A Hydra application: the files come in rounds (the program, its
	// primary config, the experiment the command line chooses, the groups
	// they choose), and the model is the experiment's override.
	hydra := filepath.Join(c.Dir, "var", "jobfiles-hydra")
	t.Cleanup(func() { os.RemoveAll(hydra) })
	for name, text := range map[string]string{
		"src/train.py": "import hydra\n\n\n@hydra.main(version_base=None, config_path=\"../configs\", config_name=\"train\")\n" +
			"def main(cfg):\n    hydra.utils.instantiate(cfg.model)\n",
		"configs/train.yaml":                       "defaults:\n  - model: mlp\n  - data: imagenet\n  - experiment: null\n  - _self_\nseed: 1\n",
		"configs/experiment/vit.yaml":              "# @package _global_\ndefaults:\n  - override /model: vit_large_patch16_224\ndata:\n  batch_size: 32\n",
		"configs/model/vit_large_patch16_224.yaml": "_target_: timm.create_model\npretrained: true\n",
		"configs/model/mlp.yaml":                   "_target_: src.models.MLP\n",
		"configs/data/imagenet.yaml":               "batch_size: 256\nnum_workers: 8\n",
	} {
		p := filepath.Join(hydra, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hydraScript := c.BatchScript(t, "#!/bin/bash\n#SBATCH --time=02:00:00\n#SBATCH --cpus-per-task=1\nsrun python src/train.py experiment=vit\n")
	before = read()
	j, stored = submit(hydraScript, hydra, "hydra-on")
	lacks("Hydra", stored, `"model":"vit_large_patch16_224"`, `"batch_size":32`, `vit.yaml defaults: model`,
		`"configs/model/vit_large_patch16_224.yaml":"_target_`, `"src/train.py":"@hydra.main(version_base=None, config_path=\"../configs\", config_name=\"train\")\n"`)
	if strings.Contains(stored, "configs/model/mlp.yaml") {
		t.Errorf("Hydra: the model the experiment overrides was read: %s", stored)
	}
	readWith("Hydra", j, before, 5) // the program, train.yaml, the experiment, the model and data it chooses

	// A shell file the script sources sets the model: read, it is known,
	// and the request keeps the file without its secret.
	sourced := filepath.Join(c.Dir, "var", "jobfiles-sourced")
	t.Cleanup(func() { os.RemoveAll(sourced) })
	if err := os.MkdirAll(filepath.Join(sourced, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sourced, "scripts", "env.sh"),
		[]byte("# site setup\nexport HF_TOKEN=hf_e2eSeCrEt\nexport MODEL=vit_large_patch16_224\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	envScript := c.BatchScript(t, "#!/bin/bash\n#SBATCH --time=02:00:00\n#SBATCH --cpus-per-task=1\n"+
		"source scripts/env.sh\ntorchrun --nproc_per_node 1 train.py --model \"$MODEL\" --batch-size 32\n")
	before = read()
	j, stored = submit(envScript, sourced, "sourced-on")
	lacks("sourced", stored, `"model":"vit_large_patch16_224"`, `"scripts/env.sh":"export HF_TOKEN=\nexport MODEL=vit_large_patch16_224\n"`)
	if strings.Contains(stored, "SeCrEt") || strings.Contains(stored, "site setup") {
		t.Errorf("sourced: a secret or comment was stored: %s", stored)
	}
	readWith("sourced", j, before, 1) // env.sh; train.py is not there

	j, stored = submit(path, empty, "cfg-absent")
	if strings.Contains(stored, "vit_large") || strings.Contains(j.AdminComment, "src=prior/") {
		t.Errorf("no file in the submission directory: stored %s, annotation %q", stored, j.AdminComment)
	}

	c.setJobFiles(t, false)
	j, stored = submit(path, withFile, "cfg-off")
	if strings.Contains(stored, "vit_large") || strings.Contains(j.AdminComment, "src=prior/") {
		t.Errorf("job_files off: stored %s, annotation %q", stored, j.AdminComment)
	}
}
