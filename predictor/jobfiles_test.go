package predictor

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestScriptFiles(t *testing.T) {
	long := "python train.py"
	for i := range MaxJobFiles + 2 {
		long += fmt.Sprintf(" c%d.yaml", i)
	}
	var capped []string
	for i := range MaxJobFiles {
		capped = append(capped, fmt.Sprintf("c%d.yaml", i))
	}
	for _, tc := range []struct {
		name, script string
		want         []string
	}{
		{"relative to the submission directory", "python train.py --config configs/llama.yaml", []string{"configs/llama.yaml"}},
		{"flag=value", "python train.py --config=configs/a.yml", []string{"configs/a.yml"}},
		{"an override's value", "python train.py config=exp/a.json", []string{"exp/a.json"}},
		{"after cd to an absolute directory", "cd /scratch/u/proj\npython train.py --config configs/a.yaml", []string{"/scratch/u/proj/configs/a.yaml"}},
		{"after cd $SLURM_SUBMIT_DIR", "cd /tmp\ncd $SLURM_SUBMIT_DIR\npython train.py c.yaml", []string{"c.yaml"}},
		{"a path under $SLURM_SUBMIT_DIR", "cd /tmp\npython train.py ${SLURM_SUBMIT_DIR}/exp/c.yaml", []string{"exp/c.yaml"}},
		{"after cd ~/proj", "cd ~/proj\npython train.py cfg.yml", []string{"~/proj/cfg.yml"}},
		{"after cd $HOME/proj", "cd $HOME/proj\npython train.py cfg.yml", []string{"~/proj/cfg.yml"}},
		{"after cd alone", "cd\npython train.py cfg.yml", []string{"~/cfg.yml"}},
		{"relative cd after relative cd", "cd a\ncd ../b\npython train.py x.json", []string{"b/x.json"}},
		{"a variable the script sets", "CFG=configs/b.yaml\npython train.py --config $CFG", []string{"configs/b.yaml"}},
		{"two commands' files", "accelerate launch --config_file ds.yaml train.py --config exp.yaml", []string{"ds.yaml", "exp.yaml"}},
		{"a subshell's cd ends with it", "(cd /x && python t.py a.yaml)\npython t.py b.yaml", []string{"/x/a.yaml", "b.yaml"}},
		{"absolute after an unknown cd", "cd \"$(dirname \"$0\")\"\npython t.py --config /abs/a.yaml", []string{"/abs/a.yaml"}},
		{"at most MaxJobFiles", long, capped},
		{"relative after an unknown cd", "cd \"$(dirname \"$0\")\"\npython t.py --config a.yaml", nil},
		{"relative after cd -", "cd /x\ncd -\npython t.py --config a.yaml", nil},
		{"an unknown variable", "python t.py --config ${CFG}", nil},
		{"a glob", "python t.py --config configs/*.yaml", nil},
		{"another user's home", "python t.py --config ~bob/a.yaml", nil},
		{"one the script wrote", "cat > cfg.yaml <<EOF\nmodel: resnet50\nEOF\npython t.py --config cfg.yaml", nil},
		{"not a launch", "echo configs/x.yaml\ncp a.yaml b.yaml", nil},
		{"not a config", "python t.py --data train.csv --out run.pt", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseScript("#!/bin/bash\n" + tc.script + "\n").Files; !slices.Equal(got, tc.want) {
				t.Errorf("Files = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseScriptFiles(t *testing.T) {
	const script = "#!/bin/bash\n#SBATCH --gres=gpu:4\ncd /scratch/u/sft\n" +
		"torchrun --nproc_per_node 4 train.py --config configs/run.yaml --per_device_train_batch_size 4\n"
	const config = "model_name_or_path: meta-llama/Llama-2-13b-hf\nbf16: true\nper_device_train_batch_size: 8\n"
	alone := ParseScript(script)
	if want := []string{"/scratch/u/sft/configs/run.yaml"}; !slices.Equal(alone.Files, want) {
		t.Fatalf("Files = %q, want %q", alone.Files, want)
	}
	if alone.Features.Model != "" || alone.Features.Precision != "" {
		t.Fatalf("the script alone reads model %q, precision %q", alone.Features.Model, alone.Features.Precision)
	}
	s := ParseScriptFiles(script, nil, nil, map[string]string{"/scratch/u/sft/configs/run.yaml": config})
	f := s.Features
	if f.Model != "meta-llama/llama-2-13b-hf" || f.Precision != "bf16" {
		t.Errorf("with the file: model %q, precision %q", f.Model, f.Precision)
	}
	if f.BatchSize != 4 {
		t.Errorf("batch size %v: the command line's 4 wins over the file's 8", f.BatchSize)
	}
	if from := f.From["model"]; !strings.Contains(from, "run.yaml: model_name_or_path") {
		t.Errorf("model from %q, want the file and key", from)
	}
	if s.Signature != alone.Signature {
		t.Error("the files changed the signature")
	}
	if len(s.Files) != 0 {
		t.Errorf("Files = %q after they were given", s.Files)
	}

	for name, files := range map[string]map[string]string{
		"none":          nil,
		"another path":  {"configs/run.yaml": config},
		"not YAML":      {"/scratch/u/sft/configs/run.yaml": "{{{"},
		"not a mapping": {"/scratch/u/sft/configs/run.yaml": "- a\n- b\n"},
	} {
		got := ParseScriptFiles(script, nil, nil, files)
		if diff := cmpDiff(alone.Features, got.Features); diff != "" || got.Signature != alone.Signature {
			t.Errorf("%s: features (-alone +got):\n%s", name, diff)
		}
	}
}

func TestScriptCacheFiles(t *testing.T) {
	const script = "#!/bin/bash\npython train.py --config a.yaml\n"
	c := NewScriptCache(8)
	a := map[string]string{"a.yaml": "model: resnet50\n"}
	b := map[string]string{"a.yaml": "model: resnet101\n"}
	for range 2 {
		for files, want := range map[*map[string]string]string{&a: "resnet50", &b: "resnet101"} {
			got := c.ParseFiles(script, nil, nil, *files)
			if diff := cmpDiff(ParseScriptFiles(script, nil, nil, *files), got); diff != "" || got.Features.Model != want {
				t.Errorf("model %q, want %q; against ParseScriptFiles (-want +got):\n%s", got.Features.Model, want, diff)
			}
		}
	}
	if hits, misses := c.Stats(); hits != 3 || misses != 1 {
		// The first reading without files is parsed once; each set of files
		// is read once, then found.
		t.Errorf("hits %d, misses %d; want 3, 1", hits, misses)
	}
}

// FuzzScriptFiles: a config file's text is the submitter's, anything at
// all: reading a script with it never panics, never changes the signature,
// and names at most MaxJobFiles files.
func FuzzScriptFiles(f *testing.F) {
	f.Add("#!/bin/bash\ncd /w\ntorchrun train.py --config configs/a.yaml --bf16\n", "model_name_or_path: gpt2\nper_device_train_batch_size: 4\n")
	f.Add("python t.py a.json b.yml", `{"zero_optimization": {"stage": 3}, "bf16": {"enabled": true}}`)
	f.Add("accelerate launch --config_file a.yaml t.py", "a: &x [*x, *x]\n")
	f.Add("python t.py --config=~/x.yaml", "- 1\n- 2\n")
	f.Fuzz(func(t *testing.T, script, file string) {
		alone := ParseScript(script)
		if len(alone.Files) > MaxJobFiles {
			t.Fatalf("%d files named", len(alone.Files))
		}
		given := map[string]string{}
		for _, p := range alone.Files {
			given[p] = file
		}
		s := ParseScriptFiles(script, nil, nil, given)
		if s.Signature != alone.Signature {
			t.Fatal("the files changed the signature")
		}
	})
}
