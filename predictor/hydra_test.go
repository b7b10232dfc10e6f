package predictor

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// A disk laid out as Hydra applications are, written for these tests: a
// program declaring its config, a primary config with a defaults list,
// group options, and an experiment that overrides groups.
var hydraDisk = map[string]string{
	"src/train.py": `import hydra
from omegaconf import DictConfig


@hydra.main(version_base="1.3", config_path="../configs", config_name="train.yaml")
def main(cfg: DictConfig) -> None:
    model = hydra.utils.instantiate(cfg.model)
`,
	"configs/train.yaml": `# @package _global_
defaults:
  - _self_
  - data: mnist
  - model: mnist_mlp
  - trainer: default
  - logger: null
  - experiment: null
  - optional local: default

seed: null
`,
	"configs/data/mnist.yaml":       "_target_: src.data.MNISTDataModule\nbatch_size: 256\n",
	"configs/data/cifar10.yaml":     "_target_: src.data.CIFAR10DataModule\nbatch_size: 64\nnum_workers: 8\n",
	"configs/model/mnist_mlp.yaml":  "_target_: src.models.MLP\nhidden: 128\n",
	"configs/model/vit_small.yaml":  "_target_: src.models.ViT\ndepth: 12\n",
	"configs/model/resnet50.yaml":   "_target_: src.models.ResNet\n",
	"configs/trainer/default.yaml":  "max_epochs: 10\naccelerator: gpu\n",
	"configs/trainer/gpu_bf16.yaml": "accelerator: gpu\ndevices: 4\nprecision: bf16-mixed\n",
	"configs/experiment/cifar_vit.yaml": `# @package _global_
defaults:
  - override /data: cifar10
  - override /model: vit_small.yaml

data:
  batch_size: 128
`,
	"rl/train.py":                           "import hydra\n\n# @hydra.main(config_path=\"old\", config_name=\"x\")\n@hydra.main(version_base=None, config_path=\"configs\", config_name=\"train\")\ndef main(cfg):\n    pass\n",
	"rl/configs/train.yaml":                 "defaults:\n  - base_train\n  - _self_\nenv_name: HalfCheetah-v4\n",
	"rl/configs/base_train.yaml":            "defaults:\n  - method: sac\n  - _self_\nbatch_size: 256\n",
	"rl/configs/method/sac.yaml":            "defaults:\n  - agent: sac_mlp\n",
	"rl/configs/method/dual.yaml":           "defaults:\n  - base_dual\n",
	"rl/configs/method/base_dual.yaml":      "defaults:\n  - agent: dual_sac\nepisodes: 5\n",
	"rl/configs/method/agent/dual_sac.yaml": "arch: resnet18\n",
	"rl/configs/method/agent/sac_mlp.yaml":  "arch: mlp\n",
	"conf/model/pythia69.yaml":              "name_or_path: EleutherAI/pythia-6.9b\nbatch_size: 4\n",
	"conf/sft.yaml":                         "defaults:\n  - model: llama\n  - _self_\ntrainer:\n  precision: 16-mixed\n",
	"conf/model/llama.yaml":                 "pretrained_model_name_or_path: meta-llama/Llama-3.1-8B\nmicro_batch_size: 2\n",
}

// readDisk reads a script with hydraDisk's files in rounds, as augurd does,
// and reports the rounds it took and the paths asked for.
func readDisk(t *testing.T, script string, disk map[string]string) (Script, int, []string) {
	t.Helper()
	rounds := 0
	var asked []string
	s, read := ReadJobFiles(ParseScript(script), script, nil, nil, func(paths []string) map[string]string {
		rounds++
		got := map[string]string{}
		for _, p := range paths {
			if slices.Contains(asked, p) {
				t.Errorf("%s asked for twice", p)
			}
			asked = append(asked, p)
			if text, ok := disk[p]; ok {
				got[p] = text
			}
		}
		return got
	})
	for p := range read {
		if _, ok := disk[p]; !ok {
			t.Errorf("%s read, not on the disk", p)
		}
	}
	return s, rounds, asked
}

func TestHydraComposition(t *testing.T) {
	cases := map[string]struct {
		script string
		want   Features
		from   map[string]string
		rounds int
	}{
		"the primary's defaults: a model group's option": {
			script: sh(`python src/train.py trainer.max_epochs=20`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "mlp", ModelFrom: "flag", BatchSize: 256, Epochs: 20},
			from:   map[string]string{"model": "line 2: train.yaml defaults: model", "batch_size": "line 2: mnist.yaml: data.batch_size"},
			rounds: 3, // the program; its primary config; the groups it chooses
		},
		"an experiment overrides the groups, and its settings win over theirs": {
			script: sh(`srun python -m src.train experiment=cifar_vit trainer=gpu_bf16 logger=wandb`),
			want: Features{Launcher: "srun", Program: "-m src.train", Model: "vit_small", ModelFrom: "flag", BatchSize: 128,
				Precision: "bf16"},
			from: map[string]string{"model": "line 2: cifar_vit.yaml defaults: model", "batch_size": "line 2: cifar_vit.yaml: data.batch_size",
				"precision": "line 2: gpu_bf16.yaml: trainer.precision"},
			rounds: 4,
		},
		"the command line's choice wins over an experiment's": {
			script: sh(`python src/train.py +experiment=cifar_vit model=resnet50 data.batch_size=32`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag", BatchSize: 32},
			from:   map[string]string{"model": "line 2: model", "batch_size": "line 2: data.batch_size"},
			rounds: 4,
		},
		"--config-path and --config-name on the command line, relative to the program": {
			script: sh(`cd $SLURM_SUBMIT_DIR`, `torchrun --nproc_per_node 8 tools/../sft.py --config-path=conf --config-name sft`),
			want: Features{Launcher: "torchrun", Program: "sft.py", Model: "meta-llama/llama-3.1-8b", ModelFrom: "flag",
				BatchSize: 2, Precision: "fp16", GPUs: 8},
			rounds: 2, // the program and the primary config at once; then the model group
		},
		"a config that includes another, and a group's own subgroup": {
			script: sh(`cd rl`, `python train.py method=dual`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet18", ModelFrom: "flag", BatchSize: 256},
			from:   map[string]string{"model": "line 3: dual_sac.yaml: method.agent.arch", "batch_size": "line 3: base_train.yaml: batch_size"},
			rounds: 6, // train.py; train.yaml; base_train.yaml; method/dual.yaml; base_dual.yaml; method/agent/dual_sac.yaml
		},
		"a group the command line chooses means what its file names": {
			script: sh(`python sft.py -cp conf -cn sft model=pythia69`),
			want: Features{Launcher: "python", Program: "sft.py", Model: "eleutherai/pythia-6.9b", ModelFrom: "flag",
				BatchSize: 4, Precision: "fp16"},
			from:   map[string]string{"model": "line 2: pythia69.yaml: model.name_or_path"},
			rounds: 2,
		},
		"-cp and -cn": {
			script: sh(`python sft.py -cp conf -cn sft.yaml`),
			want: Features{Launcher: "python", Program: "sft.py", Model: "meta-llama/llama-3.1-8b", ModelFrom: "flag",
				BatchSize: 2, Precision: "fp16"},
			rounds: 2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, rounds, _ := readDisk(t, tc.script, hydraDisk)
			f := s.Features
			if diff := cmpDiff(tc.want, f); diff != "" {
				t.Errorf("features (-want +got):\n%s", diff)
			}
			for k, v := range tc.from {
				if f.From[k] != v {
					t.Errorf("%s from %q, want %q", k, f.From[k], v)
				}
			}
			if rounds != tc.rounds {
				t.Errorf("%d rounds of reads, want %d", rounds, tc.rounds)
			}
			if alone := ParseScript(tc.script); s.Signature != alone.Signature {
				t.Error("the files changed the signature")
			}
		})
	}
}

// TestHydraReadsOnlyWhatItNeeds: the files asked for are those the
// composition chooses, an experiment's before the groups it may change;
// a program that is no Hydra application names no config by its
// key=value arguments.
func TestHydraReadsOnlyWhatItNeeds(t *testing.T) {
	_, _, asked := readDisk(t, sh(`python src/train.py experiment=cifar_vit`), hydraDisk)
	for _, p := range []string{"configs/model/mnist_mlp.yaml", "configs/data/mnist.yaml", "configs/logger/null.yaml"} {
		if slices.Contains(asked, p) {
			t.Errorf("%s asked for: the experiment chose another (or none)", p)
		}
	}
	for _, p := range []string{"src/train.py", "configs/train.yaml", "configs/experiment/cifar_vit.yaml", "configs/model/vit_small.yaml"} {
		if !slices.Contains(asked, p) {
			t.Errorf("%s not asked for; asked %q", p, asked)
		}
	}

	disk := maps.Clone(hydraDisk)
	disk["plain.py"] = "import argparse\nparser.add_argument('--model', default='resnet18')\n"
	_, _, asked = readDisk(t, sh(`python plain.py model=vit_small experiment=cifar_vit`), disk)
	if want := []string{"plain.py"}; !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
}

// TestReadJobFilesBounds: however many files each file read names (here
// every config chooses MaxJobFiles new groups), the rounds and the files
// read stay bounded, and no path is asked twice.
func TestReadJobFilesBounds(t *testing.T) {
	const script = "#!/bin/bash\npython t.py -cp c -cn t\n"
	n, rounds, total := 0, 0, 0
	s, files := ReadJobFiles(ParseScript(script), script, nil, nil, func(paths []string) map[string]string {
		rounds++
		total += len(paths)
		if len(paths) > MaxJobFiles {
			t.Errorf("%d paths in one round", len(paths))
		}
		got := map[string]string{}
		for _, p := range paths {
			var b strings.Builder
			b.WriteString("defaults:\n")
			for range MaxJobFiles {
				n++
				fmt.Fprintf(&b, "  - /g%d: o\n", n)
			}
			got[p] = b.String()
		}
		return got
	})
	if rounds > MaxJobFileRounds || total > MaxJobFilesRead || len(files) != total || len(s.Files) == 0 {
		t.Errorf("%d rounds, %d files asked, %d read, %d named after", rounds, total, len(files), len(s.Files))
	}
	if _, files := ReadJobFiles(ParseScript(script), script, nil, nil, func([]string) map[string]string { return nil }); files != nil {
		t.Errorf("files %v, want none", files)
	}
}
