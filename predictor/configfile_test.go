package predictor

import (
	"strings"
	"testing"
)

// TestConfigFilesWrittenByTheScript: a YAML or JSON config the script
// writes with a heredoc is read as the program reading it would.
func TestConfigFilesWrittenByTheScript(t *testing.T) {
	cases := map[string]struct {
		script string
		want   Features
		from   map[string]string
	}{
		"axolotl recipe behind a variable with hidden parts": {
			script: sh(`CFG=$SLURM_SUBMIT_DIR/axo_$SLURM_JOB_ID.yml`, `cat > $CFG <<'YAML'`, `base_model: mistralai/Mistral-7B-v0.1`,
				`model_type: MistralForCausalLM`, `micro_batch_size: 2`, `sequence_len: 4096`, `bf16: auto`, `YAML`, `axolotl train $CFG`),
			want: Features{Launcher: "python", Program: "axolotl train", Model: "mistralai/mistral-7b-v0.1", ModelFrom: "flag",
				BatchSize: 2, SeqLen: 4096, Precision: "bf16"},
			from: map[string]string{"model": "line 10: axo_${SLURM_JOB_ID}.yml: base_model"},
		},
		"DeepSpeed JSON: micro batch, bf16 enabled, ZeRO stage, global batch": {
			script: sh(`cat > ds.json <<EOF`, `{"train_batch_size": 256, "train_micro_batch_size_per_gpu": 4,`,
				` "bf16": {"enabled": true}, "fp16": {"enabled": false}, "zero_optimization": {"stage": 3}}`, `EOF`,
				`deepspeed --num_gpus 8 train.py --deepspeed ds.json --model_name_or_path gpt2-large`),
			want: Features{Launcher: "deepspeed", Program: "train.py", Model: "gpt2-large", ModelFrom: "flag", BatchSize: 4,
				GlobalBatchSize: 256, Precision: "bf16", ZeROStage: 3, GPUs: 8},
			from: map[string]string{"precision": "line 6: ds.json: bf16", "zero_stage": "line 6: ds.json: zero_stage"},
		},
		"the command's own flags win over its config": {
			script: sh(`cat > c.yaml <<EOF`, `per_device_train_batch_size: 8`, `fp16: true`, `EOF`,
				`python train.py c.yaml --per_device_train_batch_size 2`),
			want: Features{Launcher: "python", Program: "train.py", BatchSize: 2, Precision: "fp16"},
		},
		"a Hydra experiment's defaults list chooses the model group": {
			script: sh(`cat > conf/experiment/eeg.yaml <<'EOF'`, `# @package _global_`, `defaults:`,
				`  - override /data: eeg_pkl`, `  - override /model: mae_small # the ViT-S encoder`,
				`  - override /callbacks: null`, `  - override /hydra/launcher: submitit_slurm`, `  - _self_`,
				`data:`, `  batch_size: 10`, `trainer:`, `  precision: bf16-mixed`, `EOF`,
				`srun python src/train.py --config conf/experiment/eeg.yaml`),
			want: Features{Launcher: "srun", Program: "train.py", Model: "mae_small", ModelFrom: "flag",
				BatchSize: 10, Precision: "bf16"},
			from: map[string]string{"model": "line 15: eeg.yaml: model"},
		},
		"defaults that choose no model: _self_, a null group, an interpolation, a list": {
			script: sh(`cat > c.yaml <<'EOF'`, `defaults:`, `  - _self_`, `  - model: null`,
				"  - optional encoder: ${oc.env:ENC}", `  - callbacks: [ckpt, lr]`, `  - /model@net: ${net}`, `EOF`,
				`python train.py --config c.yaml`),
			want: Features{Launcher: "python", Program: "train.py"},
		},
		"a config the script does not write is not read": {
			script: sh(`python train.py configs/other.yaml`),
			want:   Features{Launcher: "python", Program: "train.py"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := ParseScript(tc.script).Features
			if diff := cmpDiff(tc.want, f); diff != "" {
				t.Errorf("features (-want +got):\n%s", diff)
			}
			for k, v := range tc.from {
				if f.From[k] != v {
					t.Errorf("%s from %q, want %q", k, f.From[k], v)
				}
			}
		})
	}
}

// TestConfigTooLarge: a config file longer than maxConfigBytes is not
// parsed (YAML parses at a few MB/s); one just within it is.
func TestConfigTooLarge(t *testing.T) {
	const script = "#!/bin/bash\npython train.py --config run.yaml\n"
	pad := func(n int) string {
		var b strings.Builder
		b.WriteString("model_name_or_path: gpt2-large\ndata_files:\n")
		for b.Len() < n {
			b.WriteString("  - /data/shards/part-00000.jsonl\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		size int
		want string
	}{{maxConfigBytes - 64, "gpt2-large"}, {maxConfigBytes + 64, ""}} {
		text := pad(tc.size)
		if got := ParseScriptFiles(script, nil, nil, map[string]string{"run.yaml": text}).Features.Model; got != tc.want {
			t.Errorf("a config of %d bytes: model %q, want %q", len(text), got, tc.want)
		}
	}
}
