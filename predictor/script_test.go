package predictor

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const trainScript = `#!/bin/bash
#SBATCH --job-name=resnet
#SBATCH --gres=gpu:a100:2
#SBATCH -t 04:00:00   # four hours
#SBATCH --mem 64G
# set up
module load cuda/12.1
export OUT=/scratch/alice/run17
torchrun --nproc_per_node 2 train.py --model resnet50 --batch-size 64 --lr 0.1 --out $OUT
#SBATCH --ignored=after-first-command
`

func TestParseScriptOptions(t *testing.T) {
	s := ParseScript(trainScript)
	want := []Option{
		{"--job-name", "resnet"}, {"--gres", "gpu:a100:2"}, {"-t", "04:00:00"}, {"--mem", "64G"},
	}
	if diff := cmp.Diff(want, s.Sbatch); diff != "" {
		t.Errorf("#SBATCH options (-want +got):\n%s", diff)
	}
	if v, ok := s.SbatchValue("--gres", "-G"); !ok || v != "gpu:a100:2" {
		t.Errorf("SbatchValue(--gres) = %q, %v", v, ok)
	}
}

// hfScript is a fine-tuning job as people resubmit it: a job name with a
// counter, dated run names, seeds and learning rates that change.
const hfScript = `#!/bin/bash
#SBATCH --job-name=sft-llama-7b-v3
#SBATCH --nodes=2
#SBATCH --gres=gpu:a100:8
#SBATCH --output=logs/%x-%j.out
#SBATCH --time=12:00:00
export WANDB_PROJECT=sft
export RUN_NAME=llama7b-2024-05-01-seed1
SEED=1
srun torchrun --nnodes 2 --nproc_per_node 8 --master_port 29500 finetune.py \
  --model_name_or_path meta-llama/Llama-2-7b-hf --per_device_train_batch_size 4 \
  --learning_rate 2e-5 --seed $SEED --output_dir out/sft-v3 --run_name "$RUN_NAME" --bf16 True
`

// TestSignature: "the same job again" keeps its signature across what
// changes between runs, and gets another when the model, its size, the
// program or the GPU type changes.
func TestSignature(t *testing.T) {
	for _, base := range []string{trainScript, hfScript, script200} {
		sig := ParseScript(base).Signature
		rep := func(old, new string) string {
			if !strings.Contains(base, old) {
				return ""
			}
			return strings.Replace(base, old, new, 1)
		}
		same := map[string]string{
			"other batch size":       rep("--batch-size 64", "--batch-size 128"),
			"other output path":      rep("/scratch/alice/run17", "/scratch/alice/run18"),
			"other comment":          rep("# set up", "# second try"),
			"other spacing":          rep("--nproc_per_node 2", "--nproc_per_node    2"),
			"other learning rate":    rep("--lr 0.1", "--lr 3e-4"),
			"other lr variable":      rep("1) LR=2e-5", "1) LR=3e-5"),
			"other job name counter": rep("sft-llama-7b-v3", "sft-llama-7b-v4"),
			"other dated run name":   rep("llama7b-2024-05-01-seed1", "llama7b-2024-06-12-seed2"),
			"another run name":       rep("llama7b-2024-05-01-seed1", "baseline-rerun"),
			"other seed":             rep("SEED=1", "SEED=1234"),
			"other seed flag":        rep("--seed $SEED", "--seed 7"),
			"other output dir":       rep("--output_dir out/sft-v3", "--output_dir sft_v4"),
			"other master port":      rep("--master_port 29500", "--master_port 29611"),
			"other log file":         rep("logs/%x-%j.out", "slurm-%j.log"),
			"other time limit":       rep("12:00:00", "1-00:00:00"),
			"other per-device batch": rep("--per_device_train_batch_size 4", "--per_device_train_batch_size 8"),
			"other padding":          rep("# padding to 200 lines", "# padded to 200 lines"),
			"other gradient accum":   rep("ACCUM=${ACCUM:-8}", "ACCUM=${ACCUM:-16}"),
		}
		for name, script := range same {
			if script == "" {
				continue
			}
			if got := ParseScript(script).Signature; got != sig {
				t.Errorf("%s: signature changed", name)
			}
		}
		different := map[string]string{
			"other model":           rep("resnet50", "resnet101"),
			"other program":         rep("train.py", "finetune.py"),
			"other HF model":        rep("--model resnet50", "--model meta-llama/Llama-2-13b-hf"),
			"other model size":      rep("meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-13b-hf"),
			"other model family":    rep("meta-llama/Llama-2-7b-hf", "mistralai/Mistral-7B-v0.1"),
			"model in a local path": rep("meta-llama/Llama-2-7b-hf", "/models/llama-2-13b"),
			"other gres":            rep("gpu:a100:2", "gpu:t4:2"),
			"a10 rather than a100":  rep("gpu:a100:8", "gpu:a10:8"),
			"other default model":   rep("MODEL=${MODEL:-meta-llama/Llama-2-7b-hf}", "MODEL=${MODEL:-meta-llama/Llama-2-70b-hf}"),
			"other launcher":        rep("srun torchrun", "srun deepspeed"),
		}
		for name, script := range different {
			if script == "" {
				continue
			}
			if got := ParseScript(script).Signature; got == sig {
				t.Errorf("%s: signature did not change", name)
			}
		}
	}
	// A Megatron model's size is its shape.
	shape := func(layers string) string {
		return sh(`torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers ` + layers + ` --hidden-size 4096 --seed 3`)
	}
	if ParseScript(shape("32")).Signature == ParseScript(shape("40")).Signature {
		t.Error("32 and 40 layers share a signature")
	}
	if ParseScript(shape("32")).Signature != ParseScript(strings.Replace(shape("32"), "--seed 3", "--seed 4", 1)).Signature {
		t.Error("another seed changed a Megatron job's signature")
	}
}

func TestAbstract(t *testing.T) {
	for line, want := range map[string]string{
		"torchrun --nproc_per_node 8 train.py --seed 42 --lr 3e-4": "torchrun --nproc_per_node # train.py --seed * --lr *",
		"--output_dir out/run3 --run_name exp17 --bf16":            "--output_dir * --run_name * --bf#",
		"RUN_NAME=llama-2024-05-01 OUTPUT_DIR=/x python t.py":      "RUN_NAME=* OUTPUT_DIR=* python t.py",
		"--model meta-llama/Llama-2-7b-hf --gres=gpu:a100:2":       "--model meta-llama/Llama-2-7b-hf --gres=gpu:a#:#",
		"#SBATCH --job-name=exp17-2024-05-01":                      "#SBATCH --job-name=exp#-#-#-#",
		"trainer.default_root_dir=/runs/x model=resnet50":          "trainer.default_root_dir=* model=resnet#",
		"--seed --fp16": "--seed --fp#",
	} {
		if got := abstract(line); got != want {
			t.Errorf("abstract(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestIsNumber(t *testing.T) {
	for w, want := range map[string]bool{
		"64": true, "0.001": true, "3e-4": true, "1_000": true, "-5": true, "2x": true, "90%": true,
		"resnet50": false, "e5": false, "v100": false, "": false, "-": false, "1.2.3": true, "x": false,
	} {
		if got := isNumber(w); got != want {
			t.Errorf("isNumber(%q) = %v, want %v", w, got, want)
		}
	}
}

// FuzzAbstract: the allocation-free abstraction is the plain one, so
// signatures stay what they were.
func FuzzAbstract(f *testing.F) {
	for _, line := range strings.Split(trainScript+script200, "\n") {
		f.Add(line)
	}
	f.Add("a=b  c= =d\t\v x=1=2 \u00a0y é=3")
	f.Fuzz(func(t *testing.T, line string) {
		if got, want := string(appendAbstract(nil, line)), abstract(line); got != want {
			t.Fatalf("appendAbstract(%q) = %q, want %q", line, got, want)
		}
	})
}

// FuzzParseScript: any bytes give a signature and never panic.
func FuzzParseScript(f *testing.F) {
	f.Add(trainScript)
	f.Add("#SBATCH -G\n#SBATCH --x=\n\x00\xff")
	f.Add(strings.Repeat("#SBATCH --gres=gpu:1 ", 1000))
	f.Add("#SBATCH --tasks-per-node=2 --constrain=a100|v100 --gpus=4 --gpus-per-nod=2 --gpu=1 --\npython x.py\n")
	f.Fuzz(func(t *testing.T, s string) {
		if sig := ParseScript(s).Signature; len(sig) != 24 {
			t.Fatalf("signature %q", sig)
		}
	})
}

func BenchmarkParseScript(b *testing.B) {
	b.SetBytes(int64(len(trainScript)))
	for b.Loop() {
		ParseScript(trainScript)
	}
}

// TestSbatchArgs: #SBATCH lines split as sbatch splits them.
func TestSbatchArgs(t *testing.T) {
	for in, want := range map[string][]string{
		` --gpus-per-node="a40:8"`:          {"--gpus-per-node=a40:8"},
		` -J "two words" -p gpu`:            {"-J", "two words", "-p", "gpu"},
		` --partition='kira-lab' # the lab`: {"--partition=kira-lab"},
		` --gres=gpu:4#per node`:            {"--gres=gpu:4"},
		` --comment="a # inside quotes"`:    {"--comment=a # inside quotes"},
		` --job-name=a\ b`:                  {"--job-name=a b"},
		` --comment="open quote`:            {"--comment=open quote"},
		`   `:                               nil,
	} {
		if diff := cmp.Diff(want, sbatchArgs(in)); diff != "" {
			t.Errorf("sbatchArgs(%q) (-want +got):\n%s", in, diff)
		}
	}
}

// TestParseScriptArgs: a script read with the arguments sbatch gave it
// reads $1, "$@" and $# as the job will; read without them (nil), they are
// unknown; read with none, ${1:-default} is its default.
func TestParseScriptArgs(t *testing.T) {
	script := "#!/bin/bash\n#SBATCH --gres=gpu:1\nMODEL=${1:-resnet50}\nBS=$2\npython train.py --model \"$MODEL\" --batch-size \"$BS\" \"${@:3}\"\n"
	cases := []struct {
		name      string
		args      []string
		model     string
		batch     float64
		unknown   []string
		precision string
	}{
		{"unknown arguments: a default written beside one is read", nil, "resnet50", 0, []string{"batch_size"}, ""},
		{"no arguments", []string{}, "resnet50", 0, nil, ""},
		{"the model and batch given", []string{"vit_base_patch16_224", "128"}, "vit_base_patch16_224", 128, nil, ""},
		{"more arguments pass through", []string{"convnext_tiny", "32", "--amp"}, "convnext_tiny", 32, nil, "amp"},
	}
	for _, c := range cases {
		f := ParseScriptArgs(script, c.args).Features
		if f.Model != c.model || f.BatchSize != c.batch || !slices.Equal(f.Unknown, c.unknown) || f.Precision != c.precision {
			t.Errorf("%s: model %q batch %v unknown %v precision %q; want %q %v %v %q", c.name, f.Model,
				f.BatchSize, f.Unknown, f.Precision, c.model, c.batch, c.unknown, c.precision)
		}
	}
	sourced := "#!/bin/bash\nsource ~/env.sh\nCONFIG=${1:-configs/sft_qwen3_4b.yaml}\nBS=${BATCH:-8}\npython sft.py --config $CONFIG --batch_size $BS\n"
	if f := ParseScript(sourced).Features; f.Model != "qwen3-4b" || f.BatchSize != 0 {
		t.Errorf("after a sourced file: model %q batch %v, want an argument's default read (qwen3-4b), a variable's not", f.Model, f.BatchSize)
	}
	shifted := "#!/bin/bash\nNAME=$1; shift\ntorchrun --nproc_per_node=$# train.py --model $NAME\n"
	if f := ParseScriptArgs(shifted, []string{"gpt2-medium", "a", "b"}).Features; f.Model != "gpt2-medium" || f.GPUs != 2 {
		t.Errorf("shift and $#: model %q GPUs %d, want gpt2-medium on 2", f.Model, f.GPUs)
	}
	if f := ParseScriptArgs(script, make([]string, MaxScriptArgs+1)).Features; !slices.Equal(f.Unknown, []string{"batch_size"}) {
		t.Errorf("too many arguments are read as unknown, got unknown %v", f.Unknown)
	}
	arr := "#!/bin/bash\nOPTS=(--lr 1e-4 --bf16 --epochs 3)\npython train.py \"${OPTS[@]:2:1}\"\n"
	if f := ParseScript(arr).Features; f.Precision != "bf16" || f.Epochs != 0 {
		t.Errorf("an array's slice: precision %q epochs %v, want bf16 alone", f.Precision, f.Epochs)
	}
}

// TestSubmittedOnStdin: a submitter run with bash (no #SBATCH header of its
// own) that hands sbatch its job on standard input is read for that job,
// its variables expanded where the heredoc lets the shell expand them,
// sbatch's own options over the job's header; its signature stays its own.
func TestSubmittedOnStdin(t *testing.T) {
	const job = "#!/bin/bash\n#SBATCH -J sft\n#SBATCH --gres=gpu:2\n#SBATCH -N 2\nsrun python train.py --model_name_or_path %s --per_device_train_batch_size %s --bf16 True\n"
	cases := []struct {
		name, script    string
		model           string
		batch           float64
		gpus            int
		typ, scriptFrom string
	}{
		{"heredoc, expanded", "#!/bin/bash\nMODEL=gpt2-xl\nBS=8\n\nsbatch --parsable <<EOT\n" + fmt.Sprintf(job, "$MODEL", "$BS") + "EOT\n",
			"gpt2-xl", 8, 4, "", "line 5: the job sbatch is given on its standard input"},
		{"quoted heredoc: the job's own variables", "MODEL=gpt2-xl\nsbatch <<'EOT'\nBS=16\n" + fmt.Sprintf(job, "$MODEL", "$BS")[12:] + "EOT\n",
			"", 16, 0, "", "line 2: the job sbatch is given on its standard input"},
		{"sbatch's options win", "sbatch -J x --gres=gpu:a100:4 -N1 <<EOF\n" + fmt.Sprintf(job, "gpt2", "4") + "EOF\n",
			"gpt2", 4, 4, "a100", "line 1: the job sbatch is given on its standard input"},
		{"here-string", "J=$(cat job.sh)\nsbatch <<< \"#!/bin/bash\n#SBATCH --gres=gpu:a100:1\npython train.py --model_name_or_path t5-small\"\n",
			"t5-small", 0, 1, "a100", "line 2: the job sbatch is given on its standard input"},
		{"a job script it writes, then hands sbatch with its options", "#!/bin/bash\nMODEL=gpt2-xl\ncat > $HOME/jobs/sft.sbatch <<EOT\n" +
			fmt.Sprintf(job, "$MODEL", "8") + "EOT\nchmod +x $HOME/jobs/sft.sbatch\nsbatch -N 1 $HOME/jobs/sft.sbatch\n",
			"gpt2-xl", 8, 2, "", "line 11: the job script ${HOME}/jobs/sft.sbatch it writes and hands sbatch"},
		{"sbatch --wrap: the command is the job, its standard input unread", "sbatch -N 1 --gres=gpu:a100:4 --wrap 'python train.py --model_name_or_path gpt2 --per_device_train_batch_size 4' <<EOT\n" +
			fmt.Sprintf(job, "t5-base", "8") + "EOT\n", "gpt2", 4, 4, "a100", "line 1: the command sbatch --wrap runs"},
		{"a job script it did not write: only sbatch's options are known", "#!/bin/bash\nGPUS=2\nJOB_ID=$(sbatch --job-name=ldm-train --gres=gpu:a100:\"$GPUS\" scripts/train.slurm -b cfg.yaml | awk '{print $4}')\n",
			"ldm", 0, 2, "a100", "line 3: the options sbatch is given with the job script scripts/train.slurm"},
		{"a script named, its standard input unread", "sbatch next.sh <<EOT\n" + fmt.Sprintf(job, "gpt2", "4") + "EOT\n",
			"", 0, 0, "", "line 1: the options sbatch is given with the job script next.sh"},
		{"and its arguments", "cat > run.sh <<'EOT'\n" + fmt.Sprintf(job, "$1", "$2") + "EOT\nsbatch run.sh t5-base 16\n",
			"t5-base", 16, 4, "", "line 8: the job script run.sh it writes and hands sbatch"},
		{"a job script it writes, on sbatch's standard input", "cat <<EOT > job.sh\n" + fmt.Sprintf(job, "t5-base", "8") + "EOT\nsbatch < job.sh\nrm job.sh\n",
			"t5-base", 8, 4, "", "line 8: the job sbatch is given on its standard input"},
		{"one it did not write is not shown", "sbatch < job.sh\n", "", 0, 0, "", ""},
	}
	for _, c := range cases {
		s := ParseScript(c.script)
		f := s.Features
		if f.Model != c.model || f.BatchSize != c.batch || f.GPUs != c.gpus || f.GPUType != c.typ || f.From["script"] != c.scriptFrom {
			t.Errorf("%s: model %q batch %v gpus %d type %q script from %q; want %q %v %d %q %q", c.name, f.Model,
				f.BatchSize, f.GPUs, f.GPUType, f.From["script"], c.model, c.batch, c.gpus, c.typ, c.scriptFrom)
		}
	}
	wrapper := "#!/bin/bash\nMODEL=gpt2-xl\nsbatch <<EOT\n" + fmt.Sprintf(job, "$MODEL", "8") + "EOT\n"
	inner := fmt.Sprintf(job, "gpt2-xl", "8")
	if w, j := ParseScript(wrapper), ParseScript(inner); w.Signature == j.Signature || w.Features.Model != j.Features.Model {
		t.Errorf("the submitter's signature is its own (%s, its job's %s) and its features its job's (%q, %q)",
			w.Signature, j.Signature, w.Features.Model, j.Features.Model)
	}
	if f := ParseScript(wrapper).Features; f.From["batch_size"] != "line 8: --per_device_train_batch_size" {
		t.Errorf("the job's lines are the script's: batch size from %q", f.From["batch_size"])
	}
	for name, script := range map[string]string{
		"a header of its own":       "#!/bin/bash\n#SBATCH --gres=gpu:1\npython a.py --model_name_or_path bert-base-uncased\nsbatch <<EOT\n" + fmt.Sprintf(job, "gpt2", "4") + "EOT\n",
		"another program's heredoc": "python - <<EOT\n" + fmt.Sprintf(job, "gpt2", "4") + "EOT\n",
	} {
		if f := ParseScript(script).Features; f.Model == "gpt2" || f.From["script"] != "" {
			t.Errorf("%s: read the heredoc as the job: model %q, script from %q", name, f.Model, f.From["script"])
		}
	}
	chained := "#!/bin/bash\npython train.py --model_name_or_path gpt2-xl\nsbatch --dependency=afterok:$SLURM_JOB_ID next_stage.sh\n"
	if f := ParseScript(chained).Features; f.Model != "gpt2-xl" || f.From["script"] != "" {
		t.Errorf("a job that trains, then submits the next stage, is read as itself: model %q, script from %q", f.Model, f.From["script"])
	}
	twice := "sbatch <<'A'\n#!/bin/bash\nsbatch <<B\n" + fmt.Sprintf(job, "gpt2", "4") + "B\nA\n"
	if f := ParseScript(twice).Features; f.Model != "" || f.From["script"] == "" {
		t.Errorf("a submitted job that submits another is read as itself: model %q, script from %q", f.Model, f.From["script"])
	}
}

// TestCanonicalSbatchKey: #SBATCH long options read as sbatch 22.05's
// getopt_long reads them (each case checked against the real sbatch: the
// alias and the abbreviations it takes, the ones it calls ambiguous).
func TestCanonicalSbatchKey(t *testing.T) {
	for in, want := range map[string]string{
		"--tasks-per-node":  "--ntasks-per-node", // a hidden alias
		"--tasks":           "--ntasks-per-node", // and its abbreviation
		"--gpus-per-nod":    "--gpus-per-node",   // an abbreviation only one option starts with
		"--constrain":       "--constraint",
		"--err":             "--error",
		"--out":             "--output",
		"--gpu":             "--gpu",             // ambiguous: --gpu-bind, --gpus, ...
		"--ntasks-per":      "--ntasks-per",      // ambiguous
		"--gres":            "--gres",            // exact, though --gres-flags starts with it
		"--container-image": "--container-image", // pyxis's, no prefix of sbatch's own
		"-G":                "-G",
		"--":                "--",
	} {
		if got := canonicalSbatchKey(in); got != want {
			t.Errorf("canonicalSbatchKey(%q) = %q, want %q", in, got, want)
		}
	}
}
