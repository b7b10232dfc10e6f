package eval

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/augur-hpc/augur/predictor"
)

// TestEvalScripts scores a small corpus with one script per outcome.
func TestEvalScripts(t *testing.T) {
	dir := fstest.MapFS{
		"labels.json": {Data: []byte(`{
			"right.sbatch": {"pattern": "all read", "model": "meta-llama/Llama-2-7b-hf", "model_source": "command", "batch_size": 4, "gpus": 8, "gpu_type": "a100", "precision": "bf16"},
			"wrong.sbatch": {"model": "resnet101", "model_source": "comment", "batch_size": 64},
			"silent.sbatch": {}
		}`)},
		"right.sbatch": {Data: []byte("#!/bin/bash\n#SBATCH --gres=gpu:nvidia_a100_80gb:8\n" +
			"torchrun --nproc_per_node 8 train.py --model_name_or_path llama-2-7b-hf --per_device_train_batch_size 4 --bf16\n")},
		"wrong.sbatch":  {Data: []byte("#!/bin/bash\npython train.py --arch resnet50 --fp16\n")},
		"silent.sbatch": {Data: []byte("#!/bin/bash\ncd $HOME/cifar10\npython main.py\n")},
	}
	calls := 0
	rep, err := EvalScripts(dir, func(predictor.Script) error {
		if calls++; calls == 2 {
			panic("boom")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Score{
		{Feature: "model", Stated: 2, Correct: 1, Wrong: 1},
		{Feature: "batch_size", Stated: 2, Correct: 1, Missed: 1},
		{Feature: "gpus", Stated: 1, Correct: 1},
		{Feature: "gpu_type", Stated: 1, Correct: 1},
		{Feature: "precision", Stated: 1, Correct: 1, Spurious: 1},
	}
	if diff := cmp.Diff(want, rep.Scores); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
	wantBySource := []Score{{Feature: "command", Stated: 1, Correct: 1}, {Feature: "comment", Stated: 1, Wrong: 1}}
	if diff := cmp.Diff(wantBySource, rep.ModelBySource); diff != "" {
		t.Errorf("model by source (-want +got):\n%s", diff)
	}
	if rep.Scripts != 3 || rep.PredictErrs != 1 || rep.BadModels != 0 {
		t.Errorf("scripts %d, predict errors %d, bad models %d; want 3, 1, 0", rep.Scripts, rep.PredictErrs, rep.BadModels)
	}
	// The directory standing in for a model in silent.sbatch names none.
	for _, r := range rep.Results {
		if r.File == "silent.sbatch" && r.Outcomes["model"].Outcome != Silent {
			t.Errorf("silent.sbatch model: %+v", r.Outcomes["model"])
		}
	}
}

func TestEvalScriptsRefusesAnUnlabelledCorpus(t *testing.T) {
	for name, tc := range map[string]struct {
		dir  fstest.MapFS
		want string
	}{
		"no labels":       {fstest.MapFS{"a.sbatch": {}}, "needs labels.json"},
		"bad labels":      {fstest.MapFS{"labels.json": {Data: []byte(`{"a.sbatch": {"gpus": "four"}}`)}}, "labels.json"},
		"unlabelled file": {fstest.MapFS{"labels.json": {Data: []byte(`{"a.sbatch": {}}`)}, "a.sbatch": {}, "b.sbatch": {}}, "b.sbatch has no label"},
		"missing script":  {fstest.MapFS{"labels.json": {Data: []byte(`{"a.sbatch": {}, "c.sbatch": {}}`)}, "a.sbatch": {}}, "label c.sbatch has no script"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := EvalScripts(tc.dir, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
	if _, err := EvalScripts(fstest.MapFS{"labels.json": {Data: []byte(`{}`)}}, nil); !errors.Is(err, ErrNoScripts) {
		t.Errorf("empty corpus: %v", err)
	}
}

func TestSameNames(t *testing.T) {
	for _, tc := range []struct {
		f          func(a, b string) bool
		want, got  string
		equivalent bool
	}{
		{SameModel, "meta-llama/llama-2-7b-hf", "meta-llama/Llama-2-7b-hf", true},
		{SameModel, "llama-2-7b-hf", "meta-llama/llama-2-7b-hf", true},
		{SameModel, "llama-2-7b", "llama-2-13b", false},
		{SameModel, "llama3_1-8b", "llama3.1-8b", true},
		{SameModel, "vit_b_16", "vit-b-16", true},
		{SameModel, "phi-4", "phi4", true},
		{SameModel, "llama-3.1", "llama31", true},
		{SameModel, "qwen2.5-7b", "qwen2.5-72b", false},
		{SameModel, "jit-b/16", "jit-b16", true},
		{SameModel, "decoder-only ssm", "decoder_only_ssm", true},
		{SameModel, "dit-l/4", "dit-l/2", false},
		{SameModel, "dit-xl/2", "2", false},
		{SameGPUType, "a100", "nvidia_a100_80gb", true},
		{SameGPUType, "a100", "a100-sxm4-80gb", true},
		{SameGPUType, "a10", "a100", false},
		{SameGPUType, "v100", "tesla_v100", true},
	} {
		if got := tc.f(tc.want, tc.got); got != tc.equivalent {
			t.Errorf("%q vs %q: %v, want %v", tc.want, tc.got, got, tc.equivalent)
		}
	}
}

func TestWrapperOrVariable(t *testing.T) {
	for m, want := range map[string]bool{
		"singularity": true, "${args[@]}": true, "$MODEL": true, "uv": true, "/usr/bin/bash": true, "python3.11": true,
		"resnet50": false, "meta-llama/llama-2-7b-hf": false, "bert-base-uncased": false,
	} {
		if got := WrapperOrVariable(m); got != want {
			t.Errorf("WrapperOrVariable(%q) = %v, want %v", m, got, want)
		}
	}
}

// FuzzEvalScripts: any labels and any script give a report or an error,
// never a panic.
func FuzzEvalScripts(f *testing.F) {
	f.Add(`{"a.sbatch": {"model": "resnet50", "batch_size": 64, "gpus": 2, "gpu_type": "v100", "precision": "amp"}}`,
		"#!/bin/bash\n#SBATCH --gres=gpu:v100:2\npython train.py --arch resnet50 -b 64 --amp\n")
	f.Add(`{"a.sbatch": {"batch_size": -1e308, "gpus": 0}}`, "#SBATCH --time=1-2:3:4\n")
	f.Fuzz(func(t *testing.T, labels, script string) {
		dir := fstest.MapFS{"labels.json": {Data: []byte(labels)}, "a.sbatch": {Data: []byte(script)}}
		rep, err := EvalScripts(dir, PredictCold)
		if err == nil && rep.Scripts != 1 {
			t.Fatalf("%d scripts", rep.Scripts)
		}
	})
}

// TestEvalScriptsFiles: with the config files the scripts name beside
// them, each script is read with its own (a.sbatch's and b.sbatch's
// configs/run.yaml are two files), and a file not there is read without.
func TestEvalScriptsFiles(t *testing.T) {
	script := "#!/bin/bash\ncd /scratch/u\npython train.py --config configs/run.yaml\n"
	dir := fstest.MapFS{
		"labels.json": {Data: []byte(`{"a.sbatch": {"model": "resnet50"}, "b.sbatch": {"model": "vit_base_patch16_224"},
			"c.sbatch": {"model": "convnext_tiny"}}`)},
		"a.sbatch": {Data: []byte(script)},
		"b.sbatch": {Data: []byte(script)},
		"c.sbatch": {Data: []byte(script)},
	}
	files := fstest.MapFS{
		"a.sbatch/abs/scratch/u/configs/run.yaml": {Data: []byte("model: resnet50\n")},
		"b.sbatch/abs/scratch/u/configs/run.yaml": {Data: []byte("model:\n  arch: vit_base_patch16_224\n")},
	}
	rep, err := EvalScriptsFiles(dir, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Score{Feature: "model", Stated: 3, Correct: 2, Missed: 1}, rep.Scores[0]); diff != "" {
		t.Errorf("model (-want +got):\n%s", diff)
	}
	for _, r := range rep.Results {
		// The program, train.py, is not beside any of them.
		if read := len(r.Files) == 1; read == (r.File == "c.sbatch") {
			t.Errorf("%s: files left unread %q", r.File, r.Files)
		}
	}
	if alone, _ := EvalScripts(dir, nil); alone.Scores[0].Correct != 0 {
		t.Errorf("the scripts alone: %+v", alone.Scores[0])
	}
}

func TestFileKey(t *testing.T) {
	for p, want := range map[string]string{
		"configs/a.yaml":     "configs/a.yaml",
		"./configs/a.yaml":   "configs/a.yaml",
		"../../x/a.yaml":     "up/up/x/a.yaml",
		"/scratch/u/a.yaml":  "abs/scratch/u/a.yaml",
		"/scratch/../a.yaml": "abs/a.yaml",
		"~/sft/a.yaml":       "home/sft/a.yaml",
	} {
		if got := FileKey(p); got != want {
			t.Errorf("FileKey(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestBadModelMamba: a wrapper's word is a bad model unless the person read
// the same word as the model (Mamba the architecture; mamba is conda's tool).
func TestBadModelMamba(t *testing.T) {
	dir := fstest.MapFS{
		"labels.json": {Data: []byte(`{"ssm.sbatch": {"model": "mamba", "model_source": "command"}, "other.sbatch": {},
			"cfd.sbatch": {"model": "mamba autoencoder", "model_source": "comment"}}`)},
		"ssm.sbatch":   {Data: []byte("#!/bin/bash\npython train.py --model_name mamba\n")},
		"cfd.sbatch":   {Data: []byte("#!/bin/bash\n#SBATCH --job-name=mamba-cfd\n# a mamba autoencoder for flow fields\npython train.py\n")},
		"other.sbatch": {Data: []byte("#!/bin/bash\n#SBATCH --job-name=mamba_run\npython train.py\n")},
	}
	rep, err := EvalScripts(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]bool{}
	for _, r := range rep.Results {
		bad[r.File] = r.BadModel
		if r.File == "cfd.sbatch" && r.Features.Model != "mamba" {
			t.Errorf("cfd.sbatch read %q, want the job name's mamba", r.Features.Model)
		}
	}
	if bad["ssm.sbatch"] || bad["cfd.sbatch"] || !bad["other.sbatch"] {
		t.Errorf("bad models: %v; want other.sbatch's mamba only", bad)
	}
}
