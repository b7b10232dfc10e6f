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
		{"relative to the submission directory", "python train.py --config configs/llama.yaml", []string{"configs/llama.yaml", "train.py"}},
		{"flag=value", "python train.py --config=configs/a.yml", []string{"configs/a.yml", "train.py"}},
		{"an override's value", "python train.py config=exp/a.json", []string{"exp/a.json", "train.py"}},
		{"after cd to an absolute directory", "cd /scratch/u/proj\npython train.py --config configs/a.yaml", []string{"/scratch/u/proj/configs/a.yaml", "/scratch/u/proj/train.py"}},
		{"after cd $SLURM_SUBMIT_DIR", "cd /tmp\ncd $SLURM_SUBMIT_DIR\npython train.py c.yaml", []string{"c.yaml", "train.py"}},
		{"a path under $SLURM_SUBMIT_DIR", "cd /tmp\npython train.py ${SLURM_SUBMIT_DIR}/exp/c.yaml", []string{"exp/c.yaml", "/tmp/train.py"}},
		{"after cd ~/proj", "cd ~/proj\npython train.py cfg.yml", []string{"~/proj/cfg.yml", "~/proj/train.py"}},
		{"after cd $HOME/proj", "cd $HOME/proj\npython train.py cfg.yml", []string{"~/proj/cfg.yml", "~/proj/train.py"}},
		{"after cd alone", "cd\npython train.py cfg.yml", []string{"~/cfg.yml", "~/train.py"}},
		{"relative cd after relative cd", "cd a\ncd ../b\npython train.py x.json", []string{"b/x.json", "b/train.py"}},
		{"a variable the script sets", "CFG=configs/b.yaml\npython train.py --config $CFG", []string{"configs/b.yaml", "train.py"}},
		{"two commands' files", "accelerate launch --config_file ds.yaml train.py --config exp.yaml", []string{"ds.yaml", "exp.yaml", "train.py"}},
		{"a subshell's cd ends with it", "(cd /x && python t.py a.yaml)\npython t.py b.yaml", []string{"/x/a.yaml", "/x/t.py", "b.yaml", "t.py"}},
		{"absolute after an unknown cd", "cd \"$(dirname \"$0\")\"\npython t.py --config /abs/a.yaml", []string{"/abs/a.yaml"}},
		{"at most MaxJobFiles", long, capped},
		{"relative after an unknown cd", "cd \"$(dirname \"$0\")\"\npython t.py --config a.yaml", nil},
		{"relative after cd -", "cd /x\ncd -\npython t.py --config a.yaml", nil},
		{"an unknown variable", "python t.py --config ${CFG}", []string{"t.py"}},
		{"a glob", "python t.py --config configs/*.yaml", []string{"t.py"}},
		{"another user's home", "python t.py --config ~bob/a.yaml", []string{"t.py"}},
		{"one the script wrote", "cat > cfg.yaml <<EOF\nmodel: resnet50\nEOF\npython t.py --config cfg.yaml", []string{"t.py"}},
		{"not a launch", "echo configs/x.yaml\ncp a.yaml b.yaml", nil},
		{"not a config", "python t.py --data train.csv --out run.pt", []string{"t.py"}},
		{"a module's file", "cd /w\npython -m pkg.train --config a.yaml", []string{"/w/a.yaml", "/w/pkg/train.py"}},
		{"a program under an unknown variable", "python $SRC/train.py", nil},
		{"docker's mounts, not a wrapper's option, name the host's files", "srun docker run --rm -v $HOME/proj/train.py:/app/train.py \\\n" +
			"  --volume=$HOME/proj/configs:/app/configs:ro img python3 /app/train.py --config /app/configs/a.yaml", []string{"~/proj/configs/a.yaml", "~/proj/train.py"}},
		{"--mount type=bind", "docker run --mount type=bind,source=/data/u/code,target=/code img python /code/t.py", []string{"/data/u/code/t.py"}},
		{"a docker image's own files are not the host's", "docker run -v /data:/data img python /opt/code/train.py --config cfg.yaml", nil},
		{"singularity's binds", "singularity exec --nv -B /scratch/u/code:/code,/data img.sif python /code/train.py --config /data/c.yaml", []string{"/data/c.yaml", "/scratch/u/code/train.py"}},
		{"singularity mounts the working directory", "apptainer exec img.sif python train.py", []string{"train.py"}},
		{"pyxis's container mounts", "srun --container-image=nvcr.io/nvidia/pytorch:24.01-py3 --container-mounts=/lustre/u/proj:/workspace python /workspace/train.py", []string{"/lustre/u/proj/train.py"}},
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
	if want := []string{"/scratch/u/sft/configs/run.yaml", "/scratch/u/sft/train.py"}; !slices.Equal(alone.Files, want) {
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
	if want := []string{"/scratch/u/sft/train.py"}; !slices.Equal(s.Files, want) {
		t.Errorf("Files = %q after the config was given, want the program alone", s.Files)
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
	// Each set of files misses once, then is found; the reading without
	// files, parsed for the first of them and kept, is found after.
	c.ParseEnv(script, nil, nil)
	if hits, misses := c.Stats(); hits != 3 || misses != 2 {
		t.Errorf("hits %d, misses %d; want 3, 2", hits, misses)
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
	f.Add("python src/t.py -cp ../c -cn t experiment=x model=y", "# @package _global_\ndefaults:\n - experiment: z\n - override /model: m\n - /data@d: q\nbatch_size: 4\n")
	f.Add("python -m a.b --config-path=/c --config-name=t +experiment=x", `@hydra.main(config_path="c", config_name="t")`)
	f.Add("cd /w\nsource env.sh\n. ./.env a b\npython t.py --model $MODEL", "MODEL=gpt2\nsource env.sh\n. ../x.sh\n")
	f.Fuzz(func(t *testing.T, script, file string) {
		alone := ParseScript(script)
		if len(alone.Files) > MaxJobFiles {
			t.Fatalf("%d files named", len(alone.Files))
		}
		// Every file the readings name has the fuzzer's text, read in
		// rounds as augurd reads them.
		rounds, asked := 0, 0
		s, _ := ReadJobFiles(alone, script, nil, nil, func(paths []string) map[string]string {
			if len(paths) > MaxJobFiles {
				t.Fatalf("%d files named", len(paths))
			}
			rounds++
			asked += len(paths)
			given := map[string]string{}
			for _, p := range paths {
				given[p] = file
			}
			return given
		})
		if s.Signature != alone.Signature {
			t.Fatal("the files changed the signature")
		}
		if rounds > MaxJobFileRounds || asked > MaxJobFilesRead {
			t.Fatalf("%d rounds, %d files", rounds, asked)
		}
	})
}

// trainPy and sftPy are programs of the kinds real sites run, written for
// these tests: argparse options with defaults (one taking no value, one
// whose default is computed), and Hugging Face dataclass fields.
const trainPy = `import argparse, os

model_names = ["resnet18", "resnet50", "vit_base_patch16_224"]


def get_args():
    parser = argparse.ArgumentParser(description="train (default model: resnet50)")
    parser.add_argument("--arch", "-a", type=str, default="resnet50",
                        choices=model_names, help="model architecture (default: resnet50)")
    parser.add_argument('-b', '--batch-size', default=256, type=int,
                        metavar='N', help='mini-batch size (default: 256), per GPU')
    parser.add_argument("--amp", action="store_true", help="mixed precision")
    parser.add_argument("--precision", default='bf16', choices=("bf16", "fp16"))
    parser.add_argument("--data", default=os.environ.get("DATA", "/data"))
    return parser.parse_args()


def main():
    args = get_args()
    loader = DataLoader(dataset, batch_size=1)  # code, not an option
    return args
`

const sftPy = `from dataclasses import dataclass, field
from typing import Optional

from transformers import HfArgumentParser, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(
        default="facebook/opt-350m", metadata={"help": "the model (a hub id)"}
    )
    lora_rank: int = 8


if __name__ == "__main__":
    model_args, training_args = HfArgumentParser((ModelArguments, TrainingArguments)).parse_args_into_dataclasses()
`

func TestProgramDefaults(t *testing.T) {
	for _, tc := range []struct {
		name, command     string
		model, precision  string
		batch             float64
		modelFrom, bsFrom string
	}{
		{"the program's defaults", "python train.py", "resnet50", "bf16", 256,
			"line 2: train.py: default of --arch", "line 2: train.py: default of --batch-size"},
		{"the command's over the defaults", "python train.py --arch vit_base_patch16_224 -b 64 --precision fp16",
			"vit_base_patch16_224", "fp16", 64, "line 2: --arch", "line 2: -b"},
		{"an option the command sets unknown keeps no default", "python train.py --arch $ARCH --batch-size=$BS",
			"", "bf16", 0, "", ""},
		{"a config the command names over the program's default", "python train.py --config configs/vit_base_patch16_224.yaml -b 32",
			"vit-base", "bf16", 32, "line 2: --config configs/vit_base_patch16_224.yaml", "line 2: -b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := "#!/bin/bash\n" + tc.command + "\n"
			f := ParseScriptFiles(script, nil, nil, map[string]string{"train.py": trainPy}).Features
			if f.Model != tc.model || f.Precision != tc.precision || f.BatchSize != tc.batch ||
				f.From["model"] != tc.modelFrom || f.From["batch_size"] != tc.bsFrom {
				t.Errorf("model %q (%q), batch %v (%q), precision %q", f.Model, f.From["model"],
					f.BatchSize, f.From["batch_size"], f.Precision)
			}
		})
	}
	// HfArgumentParser's dataclass fields are options too.
	hf := "#!/bin/bash\ntorchrun --nproc_per_node 4 sft.py --per_device_train_batch_size 4\n"
	f := ParseScriptFiles(hf, nil, nil, map[string]string{"sft.py": sftPy}).Features
	if f.Model != "facebook/opt-350m" || f.From["model"] != "line 2: sft.py: default of --model_name_or_path" || f.BatchSize != 4 {
		t.Errorf("dataclass: model %q (%q), batch %v", f.Model, f.From["model"], f.BatchSize)
	}
}

// TestProgramExcerpt: the excerpt holds the declarations and nothing of
// the code, and reading it is reading the program.
func TestProgramExcerpt(t *testing.T) {
	ex := ProgramExcerpt(trainPy) + ProgramExcerpt(sftPy)
	for _, want := range []string{`.add_argument("--arch", "-a", type=str, default="resnet50", choices=model_names,`,
		"    model_name_or_path: Optional[str] = field(\n        default=\"facebook/opt-350m\"", "    lora_rank: int = 8"} {
		if !strings.Contains(ex, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, ex)
		}
	}
	for _, code := range []string{"import", "def ", "return", "DataLoader", "HfArgumentParser"} {
		if strings.Contains(ex, code) {
			t.Errorf("excerpt holds code (%s):\n%s", code, ex)
		}
	}
	for _, prog := range []string{trainPy, sftPy} {
		if ex := ProgramExcerpt(prog); ProgramExcerpt(ex) != ex {
			t.Errorf("the excerpt of the excerpt differs:\n%s\n---\n%s", ex, ProgramExcerpt(ex))
		}
	}
}

// FuzzProgramExcerpt: a program's text is anything at all: its excerpt is
// bounded and is its own excerpt, so that a program read through the
// excerpt augurd keeps reads as it did when the job was decided.
func FuzzProgramExcerpt(f *testing.F) {
	f.Add(trainPy)
	f.Add(sftPy)
	f.Add("p.add_argument('--m', default='x')\n    a: int = field(default=3)\n")
	f.Add("    x: str = \".add_argument('--model', default='y')\"\n")
	f.Add("# @hydra.main(config_path='a')\n@hydra.main(\n    config_path=\"../c\",\n    config_name='t')\ndef main(c): p.add_argument('-b', default=4)\n")
	f.Add("@hydra_runner(config_path=\"conf\", config_name=\".add_argument('--x', default=1)\")\n")
	f.Fuzz(func(t *testing.T, text string) {
		ex := ProgramExcerpt(text)
		if len(ex) > maxExcerpt {
			t.Fatalf("excerpt of %d bytes", len(ex))
		}
		if again := ProgramExcerpt(ex); again != ex {
			t.Fatalf("excerpt not its own:\n%q\n%q", ex, again)
		}
	})
}

// FuzzShellExcerpt: a sourced file's text is the submitter's, anything at
// all: its excerpt never panics and is its own excerpt, so that a file read
// through the excerpt augurd keeps reads as it did when the job was
// decided.
func FuzzShellExcerpt(f *testing.F) {
	f.Add("export HF_TOKEN=hf_x MODEL=gpt2\nwandb login abc\n")
	f.Add("# c\nif [ -n \"$A\" ]; then B=$(cat <<EOF\nx\nEOF\n); fi\nf() { curl --api-key=k -H 'x' \"$@\"; }\n")
	f.Add("a=(1 2 [3]=x)\ndeclare -A m=([k]=v)\nPASSWORD[0]=p\nlet x=1+2\n")
	f.Add("case $x in a|b) y=1;; *) ;; esac; for i in 1 2; do echo $i & done\n")
	f.Fuzz(func(t *testing.T, text string) {
		ex, ok := ShellExcerpt(text)
		if !ok {
			return
		}
		again, ok := ShellExcerpt(ex)
		if !ok || again != ex {
			t.Fatalf("excerpt not its own (parses: %v):\n%q\n%q", ok, ex, again)
		}
	})
}

// TestSourcedFiles: a shell file the script sources is one of the job's
// own files: unseen, every variable it could set is unknown and its path
// is asked for; read, what it sets is known (and what it leaves unset is
// unset, so a ${VAR:-default} is its default).
func TestSourcedFiles(t *testing.T) {
	const script = "#!/bin/bash\n#SBATCH --gres=gpu:2\ncd /scratch/u/proj\nsource ~/.bashrc\nconda activate llm\n. /dev/null\n" +
		"source scripts/env.sh\nset -a; . ./.env; set +a\n" +
		"torchrun --nproc_per_node 2 train.py --model_name_or_path \"$MODEL\" --per_device_train_batch_size \"${BS:-8}\" --lr \"$LR\"\n"
	alone := ParseScript(script)
	if want := []string{"/scratch/u/proj/scripts/env.sh", "/scratch/u/proj/.env", "/scratch/u/proj/train.py"}; !slices.Equal(alone.Files, want) {
		t.Fatalf("Files = %q, want %q (never the shell's, conda's or a device)", alone.Files, want)
	}
	if f := alone.Features; f.Model != "" || f.BatchSize != 0 || !slices.Contains(f.Unknown, "batch_size") {
		t.Fatalf("unseen: model %q, batch %v, unknown %q; want both unknown", f.Model, f.BatchSize, f.Unknown)
	}
	files := map[string]string{
		"/scratch/u/proj/scripts/env.sh": "export MODEL=meta-llama/Llama-2-7b-hf\nLR=2e-5\n",
		"/scratch/u/proj/.env":           "HF_TOKEN=hf_abc\nWANDB_PROJECT=sft\n",
	}
	f := ParseScriptFiles(script, nil, nil, files).Features
	if f.Model != "meta-llama/llama-2-7b-hf" || f.BatchSize != 8 || slices.Contains(f.Unknown, "batch_size") {
		t.Errorf("read: model %q, batch %v, unknown %q; want the file's model and the default batch", f.Model, f.BatchSize, f.Unknown)
	}
	// One of the two unseen: what the other could set stays unknown.
	delete(files, "/scratch/u/proj/.env")
	if f := ParseScriptFiles(script, nil, nil, files).Features; f.BatchSize != 0 || f.Model != "meta-llama/llama-2-7b-hf" {
		t.Errorf(".env unseen: model %q, batch %v; want the model set before it and the batch unknown", f.Model, f.BatchSize)
	}
}

// TestShellExcerpt: a sourced file kept without its comments and secrets
// reads as the file does.
func TestShellExcerpt(t *testing.T) {
	const file = "# keys for the cluster\nexport HF_TOKEN=hf_SeCrEt1\nWANDB_API_KEY='k-SeCrEt2'\nDB_PASSWORD=SeCrEt3\n" +
		"wandb login SeCrEt4\nhuggingface-cli login --token SeCrEt5 --add-to-git-credential\ncurl --api-key=SeCrEt6 https://x\n" +
		"MODEL=Qwen/Qwen2.5-7B-Instruct  # the policy\nMAX_TOKEN_LEN=4096\nMODEL_KEY=qwen7b\n" +
		"if [ -z \"$BS\" ]; then export BS=4; fi\nsetup() { module load cuda/12.1; }\n"
	got, ok := ShellExcerpt(file)
	if !ok {
		t.Fatal("the file did not parse")
	}
	if strings.Contains(got, "SeCrEt") || strings.Contains(got, "keys for") || strings.Contains(got, "the policy") {
		t.Errorf("kept a secret or a comment:\n%s", got)
	}
	for _, want := range []string{"MODEL=Qwen/Qwen2.5-7B-Instruct", "MAX_TOKEN_LEN=4096", "MODEL_KEY=qwen7b", "export BS=4", "HF_TOKEN="} {
		if !strings.Contains(got, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, got)
		}
	}
	if again, _ := ShellExcerpt(got); again != got {
		t.Errorf("the excerpt of the excerpt differs:\n%s\n---\n%s", got, again)
	}
	const script = "#!/bin/bash\n#SBATCH --gres=gpu:1\nsource env.sh\npython train.py --model_name_or_path $MODEL " +
		"--per_device_train_batch_size $BS --max_seq_length $MAX_TOKEN_LEN\n"
	whole := ParseScriptFiles(script, nil, nil, map[string]string{"env.sh": file})
	kept := ParseScriptFiles(script, nil, nil, map[string]string{"env.sh": got})
	if whole.Features.Model == "" || cmpDiff(whole.Features, kept.Features) != "" {
		t.Errorf("the excerpt reads otherwise (-file +excerpt):\n%s", cmpDiff(whole.Features, kept.Features))
	}
	if _, ok := ShellExcerpt("if then fi ((\n"); ok {
		t.Error("a file that does not parse was kept")
	}
	for p, want := range map[string]bool{"env.sh": false, ".env": false, "configs/a.yaml": true, "train.py": false} {
		text, ok := JobFileText(p, file)
		if !ok || (text == file) != want {
			t.Errorf("JobFileText(%q) kept the text whole: %v, want %v", p, text == file, want)
		}
	}
}
