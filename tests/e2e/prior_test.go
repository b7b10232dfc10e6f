//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/augur-hpc/augur/tests/clustertest"
)

// priorScript is a one-GPU image-model training job; the shipped prior
// knows both models it is used with here, and no other test trains them, so
// nothing but the prior speaks for them.
func priorScript(model string, batch int) string {
	return fmt.Sprintf(`#!/bin/bash
#SBATCH --job-name=prior-%s
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=1
#SBATCH --output=/dev/null
source /opt/venvs/torch/bin/activate
torchrun --standalone --nproc_per_node 1 train.py --model %s --batch-size %d --data /datasets/imagenet
`, model, model, batch)
}

// argsScript takes its model and batch as arguments, as sites' wrapper
// scripts do (sbatch job.sh MODEL BATCH): the shim sends them with the
// script, and augurd reads $1 and $2 as the job will.
const argsScript = `#!/bin/bash
#SBATCH --job-name=prior-args
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=1
#SBATCH --output=/dev/null
source /opt/venvs/torch/bin/activate
torchrun --standalone --nproc_per_node 1 train.py --model "$1" --batch-size "$2" --data /datasets/imagenet
`

// optionsScript reads its own options in a loop over its arguments, with
// defaults for those not given, as many sites' scripts do: augurd runs the
// loop with the arguments sbatch passed, and reads the defaults without.
const optionsScript = `#!/bin/bash
#SBATCH --job-name=prior-options
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=1
#SBATCH --output=/dev/null
MODEL=convnext_tiny
BS=32
while [[ $# -gt 0 ]]; do
  case "$1" in
    -m|--model) MODEL="$2"; shift 2 ;;
    --bs=*) BS="${1#*=}"; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
source /opt/venvs/torch/bin/activate
torchrun --standalone --nproc_per_node 1 train.py --model "$MODEL" --batch-size "$BS" --data /datasets/imagenet
`

// formulaScript is a full bf16 fine-tune of a 7B-parameter model on one
// GPU: by formula far beyond any GPU type of the cluster.
const formulaScript = `#!/bin/bash
#SBATCH --job-name=prior-llama
#SBATCH --time=04:00:00
#SBATCH --cpus-per-task=1
#SBATCH --output=/dev/null
python finetune.py --model_name_or_path meta-llama/Llama-2-7b-hf --bf16 True \
    --per_device_train_batch_size 4 --max_seq_length 2048 --output_dir /scratch/llama
`

// TestRewriteFromPrior: on day one (augurd with an empty model directory,
// no history for these scripts), typeless GPU requests are predicted from
// what the binaries ship. With policy.rewrite_from_prior off (the default)
// they are annotated but left typeless; with it on, the prior's calibrated
// upper bound places a DeiT-B at batch 128 (upper ~34 GiB) on a100 and a
// ConvNeXt-T at batch 32 (~9 GiB) on t4 (also when a script's option loop
// names them, or its defaults do), while a job whose constraint names
// t4 is never moved against it, and a job no type holds (a 7B full
// fine-tune by formula) is accepted unchanged, never refused.
func TestRewriteFromPrior(t *testing.T) {
	models := "AUGUR_PREDICTOR_MODEL_DIR=" + t.TempDir()
	t.Cleanup(func() {
		c.clearQueue(t)
		c.restartAugurdWith(t)
	})
	big := c.BatchScript(t, priorScript("deit_base_patch16_224", 128))
	small := c.BatchScript(t, priorScript("convnext_tiny", 32))

	submit := func(path string, args ...string) job {
		t.Helper()
		j := c.job(t, c.Sbatch(t, append(append([]string{"-H"}, args...), path)...))
		if !strings.HasPrefix(annotationField(j, "src"), "prior") && !strings.HasPrefix(annotationField(j, "src"), "formula") {
			t.Errorf("job %d: annotation %q does not name the prior or the formula as its source", j.ID, j.AdminComment)
		}
		return j
	}
	notes := func(j job) string {
		t.Helper()
		var dec struct {
			Notes []string `json:"notes"`
		}
		sub := c.stored(t, token(j))
		if err := json.Unmarshal(sub.Decision, &dec); err != nil {
			t.Fatalf("job %d: decision %q: %v", j.ID, sub.Decision, err)
		}
		return strings.Join(dec.Notes, "; ")
	}

	c.restartAugurdWith(t, models)
	j := submit(big, "--gres=gpu:1")
	if got := clustertest.GresPart(j.TRESPerNode); got != c.TRES(t, "gres:gpu:1") || annotationField(j, "gpu_type") != "" {
		t.Errorf("rewrite_from_prior off: job %d tres_per_node %q, annotation %q; want it left typeless", j.ID, got, j.AdminComment)
	}
	if n := notes(j); !strings.Contains(n, "no upper bound") {
		t.Errorf("rewrite_from_prior off: notes %q do not say why the request was left alone", n)
	}

	c.restartAugurdWith(t, models, "AUGUR_POLICY_REWRITE_FROM_PRIOR=true")
	for _, tc := range []struct {
		name, path, want string
	}{
		{"deit_base_patch16_224 at 128", big, "gres:gpu:a100:1"},
		{"convnext_tiny at 32", small, "gres:gpu:t4:1"},
	} {
		j := submit(tc.path, "--gres=gpu:1")
		if got := clustertest.GresPart(j.TRESPerNode); got != c.TRES(t, tc.want) {
			t.Errorf("%s: job %d tres_per_node %q, want %s (annotation %q)", tc.name, j.ID, got, tc.want, j.AdminComment)
		}
	}
	// The same two jobs from one script given the model and batch as
	// arguments: each read with its own.
	withArgs := c.BatchScript(t, argsScript)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"deit_base_patch16_224", "128"}, "gres:gpu:a100:1"},
		{[]string{"convnext_tiny", "32"}, "gres:gpu:t4:1"},
	} {
		j := c.job(t, c.Sbatch(t, append([]string{"-H", "--gres=gpu:1", withArgs}, tc.args...)...))
		if got := clustertest.GresPart(j.TRESPerNode); got != c.TRES(t, tc.want) {
			t.Errorf("sbatch job.sh %s: job %d tres_per_node %q, want %s (annotation %q)", strings.Join(tc.args, " "), j.ID, got, tc.want, j.AdminComment)
		}
	}
	// One script that reads its options in a loop: its defaults without
	// arguments, the options sbatch passes with them.
	withOptions := c.BatchScript(t, optionsScript)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "gres:gpu:t4:1"},
		{[]string{"--model", "deit_base_patch16_224", "--bs=128"}, "gres:gpu:a100:1"},
	} {
		j := c.job(t, c.Sbatch(t, append([]string{"-H", "--gres=gpu:1", withOptions}, tc.args...)...))
		if got := clustertest.GresPart(j.TRESPerNode); got != c.TRES(t, tc.want) {
			t.Errorf("sbatch options.sh %s: job %d tres_per_node %q, want %s (annotation %q)", strings.Join(tc.args, " "), j.ID, got, tc.want, j.AdminComment)
		}
	}
	// The user's constraint rules: t4 only, and no t4 holds the upper bound.
	j = submit(big, "--gres=gpu:1", "--constraint=t4")
	if got := clustertest.GresPart(j.TRESPerNode); got != c.TRES(t, "gres:gpu:1") {
		t.Errorf("--constraint=t4: job %d tres_per_node %q, want it left typeless", j.ID, got)
	}
	if n := notes(j); !strings.Contains(n, "left alone") {
		t.Errorf("--constraint=t4: notes %q", n)
	}
	// Beyond every type: accepted as asked, with the reason.
	j = submit(c.BatchScript(t, formulaScript), "--gres=gpu:1")
	if got := clustertest.GresPart(j.TRESPerNode); got != c.TRES(t, "gres:gpu:1") {
		t.Errorf("7B full fine-tune: job %d tres_per_node %q, want it left typeless", j.ID, got)
	}
	if n := notes(j); !strings.Contains(n, "no GPU type holds") {
		t.Errorf("7B full fine-tune: notes %q, want the reason no type was chosen", n)
	}
}
