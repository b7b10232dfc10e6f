package predictor

import "testing"

// proseCase is a script and the name a reader of its prose takes from it,
// with the line it is on ("" and 0: none).
type proseCase struct {
	name, script, want string
	line               uint
}

// runProseCases checks read, commentModel or commentWork, on the prose of
// each case's script.
func runProseCases(t *testing.T, name string, read func([]proseLine) (string, uint), cases []proseCase) {
	t.Helper()
	for _, c := range cases {
		if got, line := read(proseLines(c.script)); got != c.want || line != c.line {
			t.Errorf("%s: %s = %q line %d, want %q line %d", c.name, name, got, line, c.want, c.line)
		}
	}
}

func TestCommentModel(t *testing.T) {
	runProseCases(t, "commentModel", commentModel, []proseCase{
		{"prose names it", "#!/bin/bash\n#SBATCH --gres=gpu:1\n# LoRA fine-tune Qwen3-VL-2B. Wall limit is 6h\npython train.py\n", "qwen3-vl-2b", 3},
		{"spelled with spaces", "# Fine-tune Llama 3.1 8B on Alpaca\n", "llama-3.1-8b", 1},
		{"double hash", "## Train a YOLOv8m detector on the parcel dataset.\n", "yolov8m", 1},
		{"a later line sizes the first", "# Llama 3 LoRA run\n# base: Llama-3-8B\n", "llama-3-8b", 2},
		{"two models named", "# SFT of Mistral-7B-Instruct\n# (an older run used Llama 2 13B)\n", "", 0},
		{"a list of configurations", "#BERT 110M (same config as BERT-Base)\n#num_layers=12\n## BERT 345M (same config as BERT-Large)\n", "", 0},
		{"commented-out command", "# python train.py --model gpt2-xl\n", "", 0},
		{"commented-out flag line", "#   --model_name_or_path meta-llama/Llama-2-7b-hf\n", "", 0},
		{"commented-out assignment", "# MODEL=llama-2-7b\n", "", 0},
		{"hydra override", "# model=resnet50 data.batch_size=64\n", "", 0},
		{"usage example", "# Example: sbatch run.sh meta-llama/Llama-2-70b-hf data.json\n", "", 0},
		{"a numbered example", "# Example 1: sbatch launch.slurm Qwen2.5-0.5B canonmc\n", "", 0},
		{"continued example", "#   e.g. sbatch job.sh \\\n#     facebook/deit-small-patch16-224\n", "", 0},
		{"a script run by path", "# ./finetune_llama2_7b.sh first\n", "", 0},
		{"a file's title before what it does", "# train.sbatch — Train EfficientNet-B4 damage classifier on L4.\n", "efficientnet-b4", 1},
		{"a file's title with a colon", "# finetune.sh: LoRA fine-tune of Mistral-7B\n", "mistral-7b", 1},
		{"a file's title then code", "# run.sh - python train.py --model gpt2-xl\n", "", 0},
		{"a variable", "# uses ${MODEL:-gpt2-large} by default\n", "", 0},
		{"a GPU, not a model", "# 839M params, 200 epochs on a single A100 80GB GPU\n", "", 0},
		{"a size without a family", "# the 70B run needs 8 nodes\n", "", 0},
		{"a family word alone", "# GPT-style decoder on our data\n", "", 0},
		{"a directive", "#SBATCH --job-name=llama-2-7b\n", "", 0},
		{"code, not a comment", "echo llama-2-7b\n", "", 0},
		{"a message the script logs", "python prep.py\necho \"Step 2: Fine-tuning T5-small for simplification...\"\n", "t5-small", 2},
		{"a banner the script logs", "echo \"=== Gemma 3 4B-IT Fine-tuning Pipeline ===\"\n", "gemma-3-4b-it", 1},
		{"a banner comment", "# ----- Llama 3.1 8B SFT -----\n", "llama-3.1-8b", 1},
		{"a message with an expansion", "echo \"Fine-tuning Llama-2-7B on $DATA\"\n", "", 0},
		{"a message written to a file", "echo 'Fine-tune Qwen2.5-7B' > notes.txt\n", "", 0},
		{"a logged command", "echo \"python train.py --model gpt2-xl\"\n", "", 0},
	})
}

// TestCommentModelRank: a comment names the model only where the
// commands name none, stand in for it, or give a family word it sizes.
func TestCommentModelRank(t *testing.T) {
	cases := []struct {
		name, script, model, from string
	}{
		{"nothing else names it", "# Fine-tune Qwen2.5-7B\npython train.py \"$@\"\n", "qwen2.5-7b", "comment"},
		{"over a program's stand-in", "# Pretrain ESM2-35M\npython train_esm.py\n", "esm2-35m", "comment"},
		{"sizes a flag's family word", "# LoRA of Llama 3.1 8B\npython finetune.py --model llama31\n", "llama-3.1-8b", "comment"},
		{"a flag's model wins", "# Fine-tune Qwen2.5-7B\npython train.py --model_name_or_path mistralai/Mistral-7B-v0.1\n", "mistralai/mistral-7b-v0.1", "flag"},
	}
	for _, c := range cases {
		f := ParseScript(c.script).Features
		if f.Model != c.model || f.ModelFrom != c.from {
			t.Errorf("%s: model %q from %q, want %q from %q", c.name, f.Model, f.ModelFrom, c.model, c.from)
		}
	}
	if f := ParseScript("# Fine-tune Qwen2.5-7B\npython train.py\n").Features; f.From["model"] != "comment, line 1" {
		t.Errorf("from = %q, want the comment's line", f.From["model"])
	}
}

// TestCommentWork: the prose's name for the work, where it is no known
// family's, read only in a frame of training and only where it is written
// as a name.
func TestCommentWork(t *testing.T) {
	runProseCases(t, "commentWork", commentWork, []proseCase{
		{"a verb before it, a preposition after", "#!/bin/bash\n# fine-tune cellpose-SAM on a TissueNet subset.\npython train.py\n", "cellpose-sam", 2},
		{"its noun after it, after a title", "# SLURM job script — DeepLabV3+ training on RUGD\n", "deeplabv3+", 1},
		{"the model before the noun", "# SLURM batch script for MINT+ model training on HPC4\n", "mint+", 1},
		{"a camel-case name at the end", "# Phase 1: domain-adaptive pre-training of SimMIM\n", "simmim", 1},
		{"a logged message", "echo \"lilyBERT training — 4 GPUs\"\n", "lilybert", 1},
		{"a name and the part it plays", "# KGSAGE generator training on a GPU node: Phase 1\n", "kgsage", 1},
		{"a frame the next line goes on with", "# Phase 2 (Adversarial Generator Training, dual-discriminator\n# architecture, LP-free).\n", "", 0},
		{"a plain word is no name", "# Avvio training on 4 GPUs\n# Distributed training with DeepSpeed\n", "", 0},
		{"methods and scales are no names", "# Multi-node training for 2 days\n# QLoRA fine-tuning of the adapter\n# 1-GPU training\n", "", 0},
		{"a data set is no name", "# Train on STL-10\n# STL-10 training from scratch\n", "", 0},
		{"a name without a frame", "# cellpose-SAM needs torch 2.1\n", "", 0},
		{"a verb's object followed by more than a name", "# Train DeepWiener models for each sky patch\n", "", 0},
		{"two works named", "# DeepLabV3+ training\n# SegFormer-B2 training\n", "", 0},
		{"code commented out", "# python train.py --model SimMIM-base\n", "", 0},
	})
}
