package predictor

import (
	"slices"
	"testing"
)

// The examples of a submission that comments show, as sites and projects
// write them; and the lines that only look like one.
func TestUsageExamples(t *testing.T) {
	for name, tc := range map[string]struct {
		comment   string
		args, env []string
		none      bool
	}{
		"usage, with a config and an option":  {comment: "# Usage: sbatch scripts/train.sbatch configs/llama3_fone.yaml [--smoke] [--steps N]", args: []string{"configs/llama3_fone.yaml"}},
		"variables set before sbatch":         {comment: "#   MODEL=qwen2.5-7b TASK=gsm8k sbatch slurm/train.sh", args: []string{}, env: []string{"MODEL=qwen2.5-7b", "TASK=gsm8k"}},
		"sbatch's --export":                   {comment: "# sbatch --array=0-4 --export=ALL,MODEL=xlmr,SETTING=aug slurm/train.slurm", args: []string{}, env: []string{"MODEL=xlmr", "SETTING=aug"}},
		"quoted arguments after options":      {comment: `# Example: sbatch --gres=gpu:8 slurm_train.sh "meta-llama/Llama-2-70b-hf" data/train.json`, args: []string{"meta-llama/Llama-2-70b-hf", "data/train.json"}},
		"a hole for the options":              {comment: "# sbatch [slurm options] scripts/slurm/train.sbatch MODEL DATASET", none: true},
		"holes for the arguments":             {comment: "# sbatch train.sh <model> <data>", none: true},
		"capitals for the arguments":          {comment: "# sbatch train.sh MODEL DATASET", none: true},
		"sbatch in prose, no script":          {comment: "# submit with sbatch, then watch squeue", none: true},
		"a wrapped command":                   {comment: `# sbatch --wrap="python train.py --model gpt2"`, none: true},
		"the script named by a variable":      {comment: "# sbatch $SCRIPT gpt2", none: true},
		"a command substitution, not run":     {comment: "# sbatch train.sh $(cat model.txt)", none: true},
		"a trailing comment is not arguments": {comment: "# sbatch train.sh gpt2  # the small one", args: []string{"gpt2"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := usageExamples("#!/bin/bash\n#SBATCH --gres=gpu:1\n" + tc.comment + "\npython train.py\n")
			if tc.none {
				if len(got) != 0 {
					t.Fatalf("examples %+v, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("examples %+v, want one", got)
			}
			if u := got[0]; u.line != 3 || !slices.Equal(u.args, tc.args) || !slices.Equal(u.env, tc.env) || (u.args == nil) != (tc.args == nil) {
				t.Errorf("line %d, args %q, env %q; want line 3, args %q, env %q", u.line, u.args, u.env, tc.args, tc.env)
			}
		})
	}
}

// A script read on its own takes the model its usage comment gives it,
// where it names none; a job's own arguments always win.
func TestScriptUsage(t *testing.T) {
	script := sh(`# Usage: sbatch slurm/finetune.sh Qwen/Qwen2.5-7B-Instruct data/train.jsonl`,
		`#   or, on your own data: sbatch slurm/finetune.sh Qwen/Qwen2.5-7B-Instruct $DATA`,
		`#SBATCH --gres=gpu:a100:2`,
		`MODEL=$1`, `DATA=$2`,
		`torchrun --nproc_per_node 2 sft.py --model_name_or_path "$MODEL" --train_file "$DATA" --per_device_train_batch_size 4`)
	f := ParseScript(script).Features
	if f.Model != "qwen/qwen2.5-7b-instruct" || f.ModelFrom != "comment" || f.From["model"] == "" || slices.Contains(f.Unknown, "model") {
		t.Errorf("read alone: model %q from %q (%q), unknown %q; want the first example's, from a comment", f.Model, f.ModelFrom, f.From["model"], f.Unknown)
	}
	if f.BatchSize != 4 || f.GPUs != 2 {
		t.Errorf("batch %v, GPUs %d: the example changed what the script says itself", f.BatchSize, f.GPUs)
	}
	if f := ParseScriptArgs(script, []string{"google/gemma-2-9b", "d.jsonl"}).Features; f.Model != "google/gemma-2-9b" || f.ModelFrom != "flag" {
		t.Errorf("with its own arguments: model %q from %q, want the job's", f.Model, f.ModelFrom)
	}
	if f := ParseScriptArgs(script, []string{}).Features; f.Model != "" {
		t.Errorf("with no arguments: model %q, want none", f.Model)
	}
	// A script that names its model keeps it.
	own := sh(`# sbatch train.sh --model gpt2-xl`, `python train.py --model gpt2 "$@"`)
	if f := ParseScript(own).Features; f.Model != "gpt2" || f.ModelFrom != "flag" {
		t.Errorf("a script naming its model: %q from %q, want gpt2 from its flag", f.Model, f.ModelFrom)
	}
}
