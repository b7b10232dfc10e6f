package predictor

import (
	"slices"
	"testing"
)

// TestParseScriptEnv: the variables a submission exports to its job
// (MODEL=llama-2-7b sbatch train.sh) are read as the job reads them.
func TestParseScriptEnv(t *testing.T) {
	const launch = `torchrun --nproc_per_node 1 train.py --model_name_or_path ${MODEL:-gpt2} --per_device_train_batch_size 8`
	cases := map[string]struct {
		script string
		env    []string
		want   Features
	}{
		"the submission's value over the script's default": {
			script: sh(launch),
			env:    []string{"HOME=/home/u", "MODEL=meta-llama/Llama-2-7b-hf"},
			want: Features{Launcher: "torchrun", Program: "train.py", Model: "meta-llama/llama-2-7b-hf", ModelFrom: "flag",
				BatchSize: 8, GPUs: 1},
		},
		"no environment: the default": {
			script: sh(launch),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "gpt2", ModelFrom: "flag", BatchSize: 8, GPUs: 1},
		},
		"a variable the script requires": {
			script: sh(`python train.py --model "${MODEL:?set MODEL}" --batch_size 16`),
			env:    []string{"MODEL=resnet50"},
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag", BatchSize: 16},
		},
		"a setting the program reads from its environment": {
			script: sh(`python train.py --model vit_base_patch16_224`),
			env:    []string{"BATCH_SIZE=64", "PRECISION=bf16"},
			want: Features{Launcher: "python", Program: "train.py", Model: "vit_base_patch16_224", ModelFrom: "flag",
				BatchSize: 64, Precision: "bf16"},
		},
		"the script's own assignment over the submission's": {
			script: sh(`MODEL=gpt2-medium`, `python train.py --model $MODEL`),
			env:    []string{"MODEL=gpt2-xl"},
			want:   Features{Launcher: "python", Program: "train.py", Model: "gpt2-medium", ModelFrom: "flag"},
		},
		"a value withheld is unknown": {
			script: sh(`python train.py --model "$MODEL"`),
			env:    []string{"MODEL"},
			want:   Features{Launcher: "python", Program: "train.py", Unknown: []string{"model"}},
		},
		"Slurm's own are Slurm's to set": {
			script: sh(`#SBATCH --nodes=2`, `#SBATCH --gpus-per-node=4`,
				`torchrun --nnodes $SLURM_NNODES --nproc_per_node 4 train.py --model resnet50`),
			env:  []string{"SLURM_NNODES=8", "not a name=1", "=x"},
			want: Features{Launcher: "torchrun", Program: "train.py", Model: "resnet50", ModelFrom: "flag", GPUs: 8},
		},
		"a submitter's job runs with the submitter's environment": {
			script: sh(`sbatch --gres=gpu:1 <<EOF`, `#!/bin/bash`, `python train.py --model \$MODEL --batch_size 4`, `EOF`),
			env:    []string{"MODEL=bert-base-uncased"},
			want: Features{Launcher: "python", Program: "train.py", Model: "bert-base-uncased", ModelFrom: "flag",
				BatchSize: 4, GPUs: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ParseScriptEnv(tc.script, nil, tc.env).Features
			if diff := cmpDiff(tc.want, got); diff != "" {
				t.Errorf("features (-want +got):\n%s\nscript:\n%s", diff, tc.script)
			}
		})
	}
}

// TestParseScriptEnvSignature: the model the environment names keeps two
// jobs of one script apart; a variable that changes nothing read does not.
func TestParseScriptEnvSignature(t *testing.T) {
	script := sh(`#SBATCH --gres=gpu:1`, `python train.py --model ${MODEL:-resnet18} --batch_size 32`)
	base := ParseScriptEnv(script, nil, nil).Signature
	if got := ParseScriptEnv(script, nil, []string{"MODEL=resnet18", "EDITOR=vi"}).Signature; got != base {
		t.Errorf("the default's value given by the environment changed the signature: %s vs %s", got, base)
	}
	if got := ParseScriptEnv(script, nil, []string{"MODEL=vit_large_patch16_224"}).Signature; got == base {
		t.Error("another model from the environment kept the signature")
	}
	if got := ParseScriptArgs(script, nil); !slices.Equal(got.Features.Unknown, ParseScriptEnv(script, nil, nil).Features.Unknown) ||
		got.Signature != base {
		t.Error("a nil environment reads otherwise than ParseScriptArgs")
	}
}

// TestJobEnvCounts: the counts jobEnv gives the job are read as
// headerCount reads them for the GPU total: a range's least, written
// plainly, and none where the header's value is not a count.
func TestJobEnvCounts(t *testing.T) {
	var opts []Option
	for _, l := range []string{" --nodes=2-4", " --ntasks=100000", " --cpus-per-task=08", " --ntasks-per-node=0"} {
		opts = append(opts, parseSbatch(l)...)
	}
	env := jobEnv(opts)
	want := map[string]string{"SLURM_NNODES": "2", "SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS": "100000", "SLURM_NPROCS": "100000",
		"SLURM_CPUS_PER_TASK": "8"}
	if diff := cmpDiff(want, env); diff != "" {
		t.Errorf("jobEnv (-want +got):\n%s", diff)
	}
}
