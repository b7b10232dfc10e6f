package predictor

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParseScriptArgs: any script run with any arguments (one per line of
// args) gives a signature and never panics or loops for ever.
func FuzzParseScriptArgs(f *testing.F) {
	f.Add(sh(`B=1`, `while [[ $# -gt 0 ]]; do case $1 in -b) B=$2; shift 2;; *) break;; esac; done`, `python t.py --batch_size $B`), "-b\n8\nx")
	f.Add(sh(`while getopts ":m:b:a" o; do case $o in m) M=$OPTARG;; esac; done`, `python t.py --model $M`), "-am\nresnet50\n-b")
	f.Add(sh(`while (( $# )); do if [ "$1" = x ]; then shift; fi; shift; done`, `f() { while true; do shift || break; done; }`, `f a b`), "x\n\n--")
	f.Add(sh(`V=${1#*=}; P=${2##*/}; python ${V%.*} ${P%%-*}`), "--a=b.c\n/x/y-z")
	f.Fuzz(func(t *testing.T, s, args string) {
		if sig := ParseScriptArgs(s, strings.Split(args, "\n")).Signature; len(sig) != 24 {
			t.Fatalf("signature %q", sig)
		}
	})
}

// TestArgumentLoops: a script's own options loop (while/case/shift,
// getopts, while true with break) read with the submission's arguments
// as bash would run it, and without them as submitted with none: the
// defaults stand.
func TestArgumentLoops(t *testing.T) {
	shiftLoop := sh(`#SBATCH --gres=gpu:4`,
		`MODEL="Qwen/Qwen2.5-3B-Instruct"`, `BATCH_SIZE=4`, `PRECISION=bf16`,
		`while [[ $# -gt 0 ]]; do`,
		`  case $1 in`,
		`    --model) MODEL="$2"; shift 2 ;;`,
		`    --batch-size) BATCH_SIZE="$2"`, `      shift 2`, `      ;;`,
		`    --fp16) PRECISION=fp16; shift ;;`,
		`    *) echo "Unknown option: $1"; exit 1 ;;`,
		`  esac`,
		`done`,
		`accelerate launch --num_processes 4 train.py --model_name_or_path $MODEL --per_device_train_batch_size $BATCH_SIZE --mixed_precision $PRECISION`)
	getoptsLoop := sh(`#SBATCH --gres=gpu:a100:2`,
		`model=resnet50; bs=128; amp=""`,
		`while getopts ":m:b:ah" opt; do`,
		`  case $opt in`,
		`    m) model=$OPTARG ;;`,
		`    b) bs=$OPTARG ;;`,
		`    a) amp=--amp ;;`,
		`    h) echo "usage: $0 [-m model] [-b batch] [-a]"; exit 0 ;;`,
		`  esac`,
		`done`,
		`shift $((OPTIND-1))`,
		`torchrun --nproc_per_node 2 train.py --model $model --batch-size $bs $amp`)
	breakLoop := sh(`#SBATCH --gpus=1`,
		`BS=16; CFG=configs/llama2-7b.yaml`,
		`while true; do`,
		`  case "$1" in`,
		`    -b|--bs) BS=$2; shift 2 ;;`,
		`    -c) CFG=$2; shift 2 ;;`,
		`    --) shift; break ;;`,
		`    *) break ;;`,
		`  esac`,
		`done`,
		`python finetune.py --config $CFG --batch_size $BS "$@"`)
	arithLoop := sh(`#SBATCH --gres=gpu:1`, `BS=32`,
		`while (( "$#" )); do`, `  if [ "$1" = "--bs" ]; then BS=$2; shift; fi`, `  shift`, `done`,
		`python train.py --model vit_b_16 --batch-size $BS`)
	inFunction := sh(`#SBATCH --gres=gpu:1`, `BS=8`,
		`parse() {`, `  while [ $# -gt 0 ]; do`, `    case $1 in --bs=*) BS=${1#*=} ;; esac`, `    shift`, `  done`, `}`,
		`parse --bs=24 --seed 3`,
		`python train.py --model gpt2 --batch_size $BS`)
	forLoop := sh(`#SBATCH --gres=gpu:2`, `MODEL=gpt2-medium`, `BS=8`,
		`usage() { echo "usage: $0 [--model=M] [--bs=N]"; }`,
		`for arg in "$@"; do`,
		`  case $arg in`,
		`    --model=*) MODEL="${arg#*=}" ;;`,
		`    --bs=*) BS="${arg#*=}" ;;`,
		`    -h|--help) usage; exit 0 ;;`,
		`  esac`,
		`done`,
		`torchrun --nproc_per_node 2 train.py --model_name_or_path $MODEL --per_device_train_batch_size $BS`)
	perConfig := sh(`#SBATCH --gres=gpu:1`, `for cfg in "$@"; do`, `  python train.py --config $cfg --batch_size 16`, `done`)
	cases := []struct {
		name, script string
		args         []string
		model        string
		batch        float64
		precision    string
	}{
		{"for over \"$@\", arguments not known: the defaults", forLoop, nil, "gpt2-medium", 8, ""},
		{"for over \"$@\", key=value options", forLoop, []string{"--bs=2", "--model=gpt2-xl"}, "gpt2-xl", 2, ""},
		{"for over \"$@\" that runs the job for each: read as before", perConfig, nil, "", 16, ""},
		{"for over \"$@\" that runs the job for each, one given", perConfig, []string{"configs/llama2-7b.yaml"}, "llama2-7b", 16, ""},
		{"shift loop, arguments not known: the defaults", shiftLoop, nil, "qwen/qwen2.5-3b-instruct", 4, "bf16"},
		{"shift loop, no arguments", shiftLoop, []string{}, "qwen/qwen2.5-3b-instruct", 4, "bf16"},
		{"shift loop, options given", shiftLoop, []string{"--batch-size", "8", "--model", "meta-llama/Llama-3.1-8B", "--fp16"},
			"meta-llama/llama-3.1-8b", 8, "fp16"},
		{"getopts, arguments not known", getoptsLoop, nil, "resnet50", 128, ""},
		{"getopts, grouped and attached options", getoptsLoop, []string{"-am", "convnext_tiny", "-b64"}, "convnext_tiny", 64, "amp"},
		{"getopts stops at the first word that is not an option", getoptsLoop, []string{"-b", "64", "extra", "-m", "vit_b_16"}, "resnet50", 64, ""},
		{"while true, break at the first other word", breakLoop, []string{"--bs", "4", "--", "--bf16"}, "llama2-7b", 4, "bf16"},
		{"while true, arguments not known", breakLoop, nil, "llama2-7b", 16, ""},
		{"(( $# )) with a shift in an if", arithLoop, []string{"--bs", "256", "--other"}, "vit_b_16", 256, ""},
		{"a function's own loop over the arguments it is called with", inFunction, nil, "gpt2", 24, ""},
	}
	for _, c := range cases {
		f := ParseScriptArgs(c.script, c.args).Features
		if f.Model != c.model || f.BatchSize != c.batch || f.Precision != c.precision {
			t.Errorf("%s: model %q batch %v precision %q (unknown %v); want %q %v %q", c.name, f.Model, f.BatchSize,
				f.Precision, f.Unknown, c.model, c.batch, c.precision)
		}
	}
}

// TestArgumentLoopsBounded: loops that never end in bash (no shift taken,
// a condition never false) and huge argument lists end, and a loop that
// is not over the arguments is read as before: its body once.
func TestArgumentLoopsBounded(t *testing.T) {
	noShift := sh(`BS=2`, `while [[ $# -gt 0 ]]; do`, `  case $1 in --bs) BS=$2 ;; esac`, `  [ -n "$X" ] && shift`, `done`,
		`python train.py --model gpt2 --batch_size $BS`)
	if f := ParseScriptArgs(noShift, []string{"--bs", "12"}).Features; f.Model != "gpt2" {
		t.Errorf("a loop that does not shift: model %q, want gpt2", f.Model)
	}
	many := make([]string, 0, MaxScriptArgs)
	for len(many) < MaxScriptArgs {
		many = append(many, "--bs", "7")
	}
	script := sh(`BS=2`, `while [ "$#" -ne 0 ]; do`, `  case $1 in --bs) BS=$2; shift ;; esac`, `  shift`, `done`,
		`python train.py --model gpt2 --batch_size $BS`)
	if f := ParseScriptArgs(script, many).Features; f.BatchSize != 7 {
		t.Errorf("%d arguments: batch %v, want 7", len(many), f.BatchSize)
	}
	retry := sh(`n=0`, `while [ $n -lt 3 ]; do`, `  srun python train.py --model resnet18 --batch-size 64 && break`, `  n=$((n+1))`, `done`)
	if f := ParseScript(retry).Features; f.Model != "resnet18" || f.BatchSize != 64 {
		t.Errorf("a retry loop: model %q batch %v, want its body read once", f.Model, f.BatchSize)
	}
	if got, used := getopts("m:b", []string{"-m"}); !slices.Equal(got, []getopt{{name: "m"}}) || used != 1 {
		t.Errorf("getopts with a missing argument: %v, %d words", got, used)
	}
	if got, used := getopts(":x", strings.Fields("-y -x -- -x")); !slices.Equal(got, []getopt{{name: "?"}, {name: "x"}}) || used != 3 {
		t.Errorf("getopts with an option it does not list, then --: %v, %d words", got, used)
	}
	afterOpts := sh(`MODEL=resnet50`, `while getopts "m:" o; do case $o in m) MODEL=$OPTARG ;; esac; done`, `shift $((OPTIND - 1))`,
		`python train.py --model $MODEL --batch-size "${1:-32}"`)
	if f := ParseScriptArgs(afterOpts, []string{"-m", "vit_b_16", "48"}).Features; f.Model != "vit_b_16" || f.BatchSize != 48 {
		t.Errorf("shift $((OPTIND-1)) after getopts: model %q batch %v, want vit_b_16 48", f.Model, f.BatchSize)
	}
}

// TestDecidedIf: an if whose conditions test known words takes the branch
// bash takes; one on a file, a command or a value the script does not
// show keeps what its branches agree on.
func TestDecidedIf(t *testing.T) {
	cases := []struct {
		name, script string
		launcher     string
		batch        float64
	}{
		{"one GPU: python, not torchrun", sh(`#SBATCH --gres=gpu:1`, `NGPU=1`,
			`if [ "$NGPU" -gt 1 ]; then torchrun --nproc_per_node=$NGPU train.py --bs 8; else python train.py --bs 16; fi`), "python", 16},
		{"an elif over a known dataset", sh(`DATASET=imagenet`, `if [[ $DATASET == cifar10 ]]; then BS=512`,
			`elif [[ $DATASET == imagenet && -n $DATASET ]]; then BS=256`, `else BS=64; fi`, `python train.py --model resnet50 --batch-size $BS`), "python", 256},
		{"|| of tests, one settling it", sh(`A=x`, `if [ "$A" = x ] || [ -f /nope ]; then BS=4; else BS=9; fi`, `python train.py --model gpt2 --batch_size $BS`), "python", 4},
		{"a file test is not decided", sh(`if [ -f ckpt.pt ]; then BS=4; else BS=8; fi`, `python train.py --model gpt2 --batch_size $BS`), "python", 0},
		{"the environment's variable is not known", sh(`if [ "$BIG" = 1 ]; then BS=4; else BS=8; fi`, `python train.py --model gpt2 --batch_size $BS`), "python", 0},
		{"several commands are not decided", sh(`A=1`, `if cd /tmp; [ "$A" = 1 ]; then BS=4; else BS=8; fi`, `python train.py --model gpt2 --batch_size $BS`), "python", 0},
		{"negated", sh(`A=1`, `if ! (( A > 0 )); then BS=4; else BS=8; fi`, `python train.py --model gpt2 --batch_size $BS`), "python", 8},
	}
	for _, c := range cases {
		f := ParseScript(c.script).Features
		if f.Launcher != c.launcher || f.BatchSize != c.batch {
			t.Errorf("%s: launcher %q batch %v, want %q %v", c.name, f.Launcher, f.BatchSize, c.launcher, c.batch)
		}
	}
}
