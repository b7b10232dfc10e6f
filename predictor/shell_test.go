package predictor

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// sh joins lines into a batch script.
func sh(lines ...string) string { return "#!/bin/bash\n" + strings.Join(lines, "\n") + "\n" }

// TestShellReading: the shell constructs scripts use to build their launch
// command, each read as a person reading the script would.
func TestShellReading(t *testing.T) {
	cases := featureCases{
		"a launcher set two ways by if/else, then run with the same arguments": {
			script: sh(`#SBATCH --gpus-per-node=4`, `if [ "$SLURM_NNODES" -gt 1 ]; then`,
				`  header="srun torchrun --nnodes=$SLURM_NNODES --nproc-per-node=4 -m training.train"`,
				`else`, `  header="torchrun --standalone --nproc-per-node=4 -m training.train"`, `fi`,
				`args=(--model_name_or_path Qwen/Qwen2.5-1.5B --per_device_train_batch_size 2 --bf16)`, `${header} "${args[@]}"`),
			want: Features{Launcher: "torchrun", Program: "training.train", Model: "qwen/qwen2.5-1.5b", ModelFrom: "flag",
				BatchSize: 2, Precision: "bf16", GPUs: 4},
		},
		"arguments set two ways by if/else: what both ways say is sure, the rest unknown": {
			script: sh(`if [ "$SLURM_NNODES" -gt 1 ]; then`, `  EXTRA="--bf16 --per_device_train_batch_size 4 --ddp_timeout 600"`,
				`else`, `  EXTRA="--bf16 --per_device_train_batch_size 8"`, `fi`, `python train.py --model_name_or_path gpt2 $EXTRA`),
			want: Features{Launcher: "python", Program: "train.py", Model: "gpt2", ModelFrom: "flag", Precision: "bf16"},
		},
		"a quoted list of settings set two ways: the settings both hold": {
			script: sh(`if [ "$TP" = True ]; then`, `  A="model_name=Qwen/Qwen2.5-7B,dtype=bfloat16,tensor_parallel_size=4"`,
				`else`, `  A="model_name=Qwen/Qwen2.5-7B,dtype=float16,data_parallel_size=4"`, `fi`, `lighteval vllm "$A" "lighteval|aime24|0|0"`),
			want: Features{Launcher: "python", Program: "lighteval vllm", Model: "qwen/qwen2.5-7b", ModelFrom: "flag"},
		},
		"function called with arguments": {
			script: sh(`train() {`, `  local model=$1`, `  python train.py --model "$model" --batch-size "$2"`, `}`, `train vit_b_16 96`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "vit_b_16", ModelFrom: "flag", BatchSize: 96},
		},
		"local variables end with their function": {
			script: sh(`bs=64`, `warmup() { local bs=2; python smoke.py --bs $bs; }`, `warmup`,
				`torchrun --nproc_per_node 4 train.py --model resnet50 --bs $bs`),
			want: Features{Launcher: "torchrun", Program: "train.py", Model: "resnet50", ModelFrom: "flag", BatchSize: 64, GPUs: 4},
		},
		"array joined inside a string, run by bash -c": {
			script: sh(`OPTS=(--micro-batch-size 2 --bf16)`, `CMD="torchrun --nproc-per-node 4 pretrain_gpt.py ${OPTS[@]}"`,
				`srun -lu --cpus-per-task $SLURM_CPUS_PER_TASK bash -c "$CMD"`),
			want: Features{Launcher: "torchrun", Program: "pretrain_gpt.py", Model: "gpt", ModelFrom: "path",
				BatchSize: 2, Precision: "bf16", GPUs: 4},
		},
		"array indexed by the array task: known when its elements agree": {
			script: sh(`models=(gpt2-medium gpt2-medium)`, `bs=(8 16)`,
				`python train.py --model ${models[$SLURM_ARRAY_TASK_ID]} --batch-size ${bs[$SLURM_ARRAY_TASK_ID]}`),
			want: Features{Launcher: "python", Program: "train.py", Model: "gpt2-medium", ModelFrom: "flag",
				Unknown: []string{"batch_size"}},
		},
		"a branch that only adds words keeps what both agree on": {
			script: sh(`CMD="python train.py --model resnet50 --batch-size 64"`, `P="numactl --membind=0-3"`,
				`if [ -n "$WANDB_API_KEY" ]; then CMD="$CMD --wandb-project p"; fi`,
				`if [ "$NSYS" = 1 ]; then CMD="nsys profile $CMD --profile"; P="NCCL_DEBUG=INFO $P"; fi`,
				`srun bash -c "$P $CMD"`),
			want: Features{Launcher: "srun", Program: "train.py", Model: "resnet50", ModelFrom: "flag", BatchSize: 64},
		},
		"function defined but never called": {
			script: sh(`unused() { python train.py --model bert-base-uncased; }`, `echo done`),
			want:   Features{},
		},
		"array of arguments expanded": {
			script: sh(`args=(--model_name_or_path gpt2-medium --per_device_train_batch_size 8)`, `args+=(--fp16)`,
				`torchrun --nproc_per_node 4 run_clm.py "${args[@]}"`),
			want: Features{Launcher: "torchrun", Program: "run_clm.py", Model: "gpt2-medium", ModelFrom: "flag",
				BatchSize: 8, Precision: "fp16", GPUs: 4},
		},
		"defaults, assign-defaults and braces": {
			script: sh(`: ${BS:=24}`, `MODEL=${MODEL:-resnet152}`, `python train.py --arch ${MODEL} -b $BS --epochs ${EPOCHS:-30}`),
			want: Features{Launcher: "python", Program: "train.py", Model: "resnet152", ModelFrom: "flag",
				BatchSize: 24, Epochs: 30},
		},
		"unset variable is never a model or a number": {
			script: sh(`python train.py --model $MODEL_NAME --batch_size $BATCH --epochs $1`),
			want:   Features{Launcher: "python", Program: "train.py", Unknown: []string{"model", "batch_size"}},
		},
		"command substitution is unknown": {
			script: sh(`BS=$(cat bs.txt)`, `M=$(basename $CKPT)`, `python train.py --model $M --batch-size $BS`),
			want:   Features{Launcher: "python", Program: "train.py", Unknown: []string{"model", "batch_size"}},
		},
		"sourced file makes defaults unknown": {
			script: sh(`source ./experiment.env`, `python finetune.py --model ${MODEL:-t5-base} --bs ${BS:-8}`),
			want:   Features{Launcher: "python", Program: "finetune.py", Unknown: []string{"model", "batch_size"}},
		},
		"conda activation does not hide defaults": {
			script: sh(`source ~/miniconda3/etc/profile.d/conda.sh`, `conda activate torch`, `source .venv/bin/activate`,
				`python finetune.py --model ${MODEL:-t5-base} --bs ${BS:-8}`),
			want: Features{Launcher: "python", Program: "finetune.py", Model: "t5-base", ModelFrom: "flag", BatchSize: 8},
		},
		"line continuations": {
			script: sh(`deepspeed --num_gpus 8 \`, `    train.py \`, `    --model_name_or_path facebook/opt-1.3b \`,
				`    --per_device_train_batch_size 2 \`, `    --bf16 True`),
			want: Features{Launcher: "deepspeed", Program: "train.py", Model: "facebook/opt-1.3b", ModelFrom: "flag",
				BatchSize: 2, Precision: "bf16", GPUs: 8},
		},
		"if, for and while bodies": {
			script: sh(`if [ -n "$SLURM_JOB_ID" ]; then`, `  for seed in 1 2 3; do`,
				`    while true; do python train.py --arch densenet121 --seed $seed -b 40; break; done`, `  done`, `fi`),
			want: Features{Launcher: "python", Program: "train.py", Model: "densenet121", ModelFrom: "flag", BatchSize: 40},
		},
		"case on an array index keeps only what branches agree on": {
			script: sh(`PREC=bf16`, `case $SLURM_ARRAY_TASK_ID in`, `  0) M=resnet18 ;;`, `  1) M=resnet34 ;;`, `esac`,
				`python train.py --model $M --precision $PREC`),
			want: Features{Launcher: "python", Program: "train.py", Precision: "bf16", Unknown: []string{"model"}},
		},
		"case on a known word takes its branch": {
			script: sh(`SIZE=small`, `case $SIZE in`, `  small) M=gpt2 ;;`, `  large) M=gpt2-large ;;`, `esac`,
				`python train.py --model $M`),
			want: Features{Launcher: "python", Program: "train.py", Model: "gpt2", ModelFrom: "flag"},
		},
		"case with glob patterns on a known word": {
			script: sh(`GPU=a100-80g`, `case $GPU in`, `  v100*) BS=16 ;;`, `  a100*|h100*) BS=64 ;;`, `esac`, `python train.py --model vit_h_14 --bs $BS`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "vit_h_14", ModelFrom: "flag", BatchSize: 64},
		},
		"CUDA_VISIBLE_DEVICES names the GPUs a command uses": {
			script: sh(`CUDA_VISIBLE_DEVICES=0,1 python train.py --model resnet50`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag", GPUs: 2},
		},
		"the allocation, not the devices one command sees, is what the job asks for": {
			script: sh(`#SBATCH --gres=gpu:4`, `CUDA_VISIBLE_DEVICES=0,1 python train.py --model resnet50`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag", GPUs: 4},
		},
		"a command written out with read -d '' and a heredoc": {
			script: sh(`read -r -d '' cmd <<EOF`, `cd /workspace && python3 train.py --model_name_or_path gpt2-xl \`, `  --per_device_train_batch_size 2 --bf16`, `EOF`,
				`srun --container-image=$IMG bash -c "${cmd}"`),
			want: Features{Launcher: "srun", Program: "train.py", Model: "gpt2-xl", ModelFrom: "flag", BatchSize: 2, Precision: "bf16"},
		},
		"the script's first argument, with a default beside it": {
			script: sh(`MODEL=${1:-mpt-7b}`, `BS=$2`, `python train.py --model $MODEL --batch-size $BS`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "mpt-7b", ModelFrom: "flag", Unknown: []string{"batch_size"}},
		},
		"read from elsewhere stays unknown": {
			script: sh(`read -r MODEL < model.txt`, `python train.py --model "$MODEL"`),
			want:   Features{Launcher: "python", Program: "train.py", Unknown: []string{"model"}},
		},
		"a console script's data directory is not its model": {
			script: sh(`fairseq-train data-bin/wmt16_en_de --arch transformer_wmt_en_de_big --fp16 --max-tokens 3584`),
			want:   Features{Launcher: "python", Program: "fairseq-train", Model: "transformer_wmt_en_de_big", ModelFrom: "flag", Precision: "fp16"},
		},
		"default set only when unset": {
			script: sh(`if [ -z "$BS" ]; then BS=32; fi`, `python train.py --bs $BS --model mobilenet_v3_large`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "mobilenet_v3_large", ModelFrom: "flag", BatchSize: 32},
		},
		"pipeline, && and || lists, subshell": {
			script: sh(`mkdir -p out && (cd src && python main.py --arch wide_resnet50_2 --batch-size 256 2>&1 | tee log.txt) || exit 1`),
			want:   Features{Launcher: "python", Program: "main.py", Model: "wide_resnet50_2", ModelFrom: "flag", BatchSize: 256},
		},
		"heredoc fed to bash is read as shell": {
			script: sh(`srun --ntasks 1 bash <<EOF`, `export BS=12`, `python train.py --model swin_t --batch-size \$BS`, `EOF`),
			want:   Features{Launcher: "srun", Program: "train.py", Model: "swin_t", ModelFrom: "flag", BatchSize: 12, GPUs: 1},
		},
		"script written with a heredoc, then run": {
			script: sh(`cat > run_$SLURM_JOB_ID.sh <<EOF`, `never read: the name is unknown`, `EOF`,
				`cat > job.sh <<'EOF'`, `#!/bin/bash`, `python train.py --model "$1" --bs 24`, `EOF`,
				`srun bash job.sh efficientnet_b4`),
			want: Features{Launcher: "srun", Program: "train.py", Model: "efficientnet_b4", ModelFrom: "flag", BatchSize: 24},
		},
		"file written with a heredoc, then sourced": {
			script: sh(`cat <<EOF > env.sh`, `export MODEL=gpt2-medium`, `EOF`, `source env.sh`, `python train.py --model $MODEL`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "gpt2-medium", ModelFrom: "flag"},
		},
		"heredoc fed to python is not shell": {
			script: sh(`python - <<'EOF'`, `import torch`, `print(torch.cuda.device_count())`, `EOF`,
				`torchrun --nproc_per_node=2 train.py --model convnext_tiny`),
			want: Features{Launcher: "torchrun", Program: "train.py", Model: "convnext_tiny", ModelFrom: "flag", GPUs: 2},
		},
		"bash -c string read as shell": {
			script: sh(`srun bash -c "cd /w/project && python train.py --model regnet_y_8gf --batch-size 64"`),
			want:   Features{Launcher: "srun", Program: "train.py", Model: "regnet_y_8gf", ModelFrom: "flag", BatchSize: 64},
		},
		"eval of a built command": {
			script: sh(`CMD="python train.py --model efficientnet_b3 --bs 20"`, `eval $CMD`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "efficientnet_b3", ModelFrom: "flag", BatchSize: 20},
		},
		"command in a variable, unquoted": {
			script: sh(`LAUNCH="torchrun --nproc_per_node 4"`, `$LAUNCH pretrain.py --model gpt2-xl --micro_batch_size 1`),
			want:   Features{Launcher: "torchrun", Program: "pretrain.py", Model: "gpt2-xl", ModelFrom: "flag", BatchSize: 1, GPUs: 4},
		},
		"arithmetic": {
			script: sh(`NGPU=4`, `BS=$((16 * NGPU))`, `python train.py --global-batch-size $BS --model gpt2`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "gpt2", ModelFrom: "flag", GlobalBatchSize: 64},
		},
		"syntax error falls back to lines": {
			script: sh(`#SBATCH --gres=gpu:a100:1`, `if [ -f x ]; then`, `python train.py --model resnet50 --bs 128`, `echo "unterminated`),
			want: Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag", BatchSize: 128,
				GPUs: 1, GPUType: "a100"},
		},
		"syntax error after a multi-line array": {
			script: sh(`args=(`, `  --model_name_or_path google/gemma-2b`, `  --per_device_train_batch_size 6`, `)`,
				`if [ -d ckpt ]; then`, `  echo resuming`, `fi`, `accelerate launch train.py "${args[@]}"`, `echo "oops`),
			want: Features{Launcher: "accelerate", Program: "train.py", Model: "google/gemma-2b", ModelFrom: "flag", BatchSize: 6},
		},
		"torchrun per node under srun on two nodes": {
			script: sh(`#SBATCH -N 2`, `#SBATCH --gpus-per-node=4`, `srun torchrun --nnodes $SLURM_NNODES --nproc_per_node 4 train.py --model gpt2`,
				`torchrun --nproc_per_node 4 other.py`),
			want: Features{Launcher: "torchrun", Program: "train.py", Model: "gpt2", ModelFrom: "flag", GPUs: 8},
		},
		"process count from the environment is unknown": {
			script: sh(`torchrun --nproc_per_node $NGPUS train.py --model gpt2`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "gpt2", ModelFrom: "flag", Unknown: []string{"gpus"}},
		},
		"unknown resolved by the header": {
			script: sh(`#SBATCH --gres=gpu:2`, `torchrun --nproc_per_node $NGPUS train.py --model gpt2`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "gpt2", ModelFrom: "flag", GPUs: 2},
		},
		"torchrun without srun runs on one node": {
			script: sh(`#SBATCH -N 2`, `torchrun --nproc_per_node 4 train.py --model gpt2`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "gpt2", ModelFrom: "flag", GPUs: 4},
		},
		"model directory hidden, model name not": {
			script: sh(`python train.py --model_name_or_path $MODELS/Llama-2-13b-hf --output_dir $OUT/ckpt`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "llama-2-13b-hf", ModelFrom: "flag"},
		},
		"hidden checkpoint directory is not a model": {
			script: sh(`python train.py --model_name_or_path $OUT/checkpoint-500`),
			want:   Features{Launcher: "python", Program: "train.py", Unknown: []string{"model"}},
		},
		"checkpoint directory is not a model": {
			script: sh(`python eval.py --model_name_or_path ./out/checkpoint-1000`, `python eval.py --model runs/exp3/final`,
				`python eval.py --model_path /scratch/me/models`),
			want: Features{Launcher: "python", Program: "eval.py"},
		},
		"bare shell script with training arguments": {
			script: sh(`./distributed_train.sh 4 /data/imagenet --model seresnext50_32x4d -b 96 --amp`),
			want:   Features{Program: "distributed_train.sh", Model: "seresnext50_32x4d", ModelFrom: "flag", BatchSize: 96, Precision: "amp"},
		},
		"a shell script in a directory named for its model": {
			script: sh(`bash scripts/roberta-large/finetune.sh QNLI FT $1`),
			want:   Features{Program: "finetune.sh", Model: "roberta-large", ModelFrom: "path"},
		},
		"a shell script in a directory of no model's name": {
			script: sh(`bash scripts/glue/finetune.sh QNLI FT $1`),
			want:   Features{},
		},
		"bare shell script without them": {
			script: sh(`./setup.sh --quiet`),
			want:   Features{},
		},
		"export then use": {
			script: sh(`export MODEL_ID=mistralai/Mistral-7B-v0.1`, `accelerate launch --num_processes 8 sft.py --model_id $MODEL_ID`),
			want:   Features{Launcher: "accelerate", Program: "sft.py", Model: "mistralai/mistral-7b-v0.1", ModelFrom: "flag", GPUs: 8},
		},
	}
	runFeatureCases(t, cases)
}

// featureCases are table tests of ParseScript: each script, by name, with
// the features a person reads from it.
type featureCases = map[string]struct {
	script string
	want   Features
}

// runFeatureCases runs each case as a subtest, comparing every feature but
// the notes of where each came from.
func runFeatureCases(t *testing.T, cases featureCases) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ParseScript(tc.script).Features
			if diff := cmpDiff(tc.want, got); diff != "" {
				t.Errorf("features (-want +got):\n%s\nscript:\n%s", diff, tc.script)
			}
		})
	}
}

// TestWrappers: container and environment wrappers are looked through to
// the program; they are never the model and never the launcher.
func TestWrappers(t *testing.T) {
	cases := featureCases{
		"singularity exec with --nv and binds": {
			script: sh(`singularity exec --nv -B /data:/data --bind /scratch $HOME/img/pytorch.sif python train.py --model resnet50 --batch-size 32`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag", BatchSize: 32},
		},
		"a serving image's entrypoint given the options, under dotenvx": {
			script: sh(`#SBATCH --gres=gpu:2`, `~/.local/bin/dotenvx run -- apptainer run --nv docker://vllm/vllm-openai:latest \`,
				`    --model Qwen/Qwen3-Coder-Next --quantization fp8 --kv-cache-dtype fp8 --tensor-parallel-size 2`),
			want: Features{Launcher: "python", Program: "-m vllm.entrypoints.openai.api_server", Model: "qwen/qwen3-coder-next",
				ModelFrom: "flag", Precision: "fp8", GPUs: 2},
		},
		"docker run of vLLM's image, its server given the options": {
			script: sh(`docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.8.5 --model Qwen/Qwen3-8B --dtype bfloat16`),
			want: Features{Launcher: "python", Program: "-m vllm.entrypoints.openai.api_server", Model: "qwen/qwen3-8b",
				ModelFrom: "flag", Precision: "bf16"},
		},
		"an image of no known entrypoint given options runs nothing Augur can read": {
			script: sh(`apptainer run --nv my_server.sif --model Qwen/Qwen3-8B`),
			want:   Features{},
		},
		"apptainer run with --env": {
			script: sh(`apptainer run --nv --env WANDB_MODE=offline --cleanenv pt.sif torchrun --nproc_per_node 4 train.py --arch vit_l_16`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "vit_l_16", ModelFrom: "flag", GPUs: 4},
		},
		"srun with pyxis container": {
			script: sh(`srun --container-image=nvcr.io#nvidia/pytorch:24.01-py3 --container-mounts=/data:/data --no-container-mount-home python train.py --model bert-large-uncased --batch_size 16 --fp16`),
			want:   Features{Launcher: "srun", Program: "train.py", Model: "bert-large-uncased", ModelFrom: "flag", BatchSize: 16, Precision: "fp16"},
		},
		"srun with --mpi and a container image, then singularity": {
			script: sh(`IMG=/shared/containers/ngc.sif`, `srun --mpi pmix -n 8 singularity exec --nv $IMG python pretrain.py --model gpt2-medium`),
			want:   Features{Launcher: "srun", Program: "pretrain.py", Model: "gpt2-medium", ModelFrom: "flag"},
		},
		"enroot start": {
			script: sh(`enroot start --rw -m /data:/data pytorch -- python main.py --arch resnet101 -b 64`),
			want:   Features{Launcher: "python", Program: "main.py", Model: "resnet101", ModelFrom: "flag", BatchSize: 64},
		},
		"docker run": {
			script: sh(`docker run --rm -it --gpus all -v $PWD:/w -w /w --shm-size 16g nvcr.io/nvidia/pytorch:23.10-py3 python train.py --model deit_small_patch16_224 --bs 128`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "deit_small_patch16_224", ModelFrom: "flag", BatchSize: 128},
		},
		"podman run": {
			script: sh(`podman run --device nvidia.com/gpu=all img:latest torchrun --nproc_per_node 2 fit.py --model t5-large`),
			want:   Features{Launcher: "torchrun", Program: "fit.py", Model: "t5-large", ModelFrom: "flag", GPUs: 2},
		},
		"NERSC's podman-hpc run, its GPU and NCCL switches and --net's value": {
			script: sh(`podman-hpc run --rm -u 0 --gpu --nccl-cu12 --net host -v $SCRATCH:/s -e A=1 -w /tmp nvcr.io/nvidia/sglang:1.1 python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B`),
			want:   Features{Launcher: "python", Program: "-m sglang.launch_server", Model: "qwen/qwen3-8b", ModelFrom: "flag"},
		},
		"lm_eval's settings list": {
			script: sh(`lm_eval --model hf --model_args pretrained=meta-llama/Llama-2-7b-hf,dtype=bfloat16 --tasks hellaswag`),
			want:   Features{Launcher: "python", Program: "lm_eval", Model: "meta-llama/llama-2-7b-hf", ModelFrom: "flag", Precision: "bf16"},
		},
		"lm_eval's --model is its backend, where the settings list the model": {
			script: sh(`lm_eval --model vllm --model_args pretrained=$MODEL,dtype=bfloat16 --tasks gsm8k`),
			want:   Features{Launcher: "python", Program: "lm_eval", Precision: "bf16", Unknown: []string{"model"}},
		},
		"lighteval's settings list is positional, and its accelerate backend no launcher": {
			script: sh(`lighteval accelerate "model_name=Qwen/Qwen2.5-7B,dtype=float16" "leaderboard|truthfulqa:mc|0|0"`),
			want:   Features{Launcher: "python", Program: "lighteval accelerate", Model: "qwen/qwen2.5-7b", ModelFrom: "flag", Precision: "fp16"},
		},
		"Nsight Systems profiles a shell script named for the family it trains": {
			script: sh(`srun --prolog job_prolog.sh --epilog job_epilog.sh /usr/local/cuda/bin/nsys profile -t cuda,nvtx -s none -x true bert.sh`),
			want:   Features{Launcher: "srun", Program: "bert.sh", Model: "bert", ModelFrom: "path"},
		},
		"a retrieval job's model under the part it plays": {
			script: sh(`python -m pyserini.encode input --corpus c.jsonl output --embeddings e.faiss encoder --encoder facebook/contriever-msmarco --batch 64 --fp16`),
			want: Features{Launcher: "python", Program: "-m pyserini.encode", Model: "facebook/contriever-msmarco", ModelFrom: "flag",
				BatchSize: 64, Precision: "fp16"},
		},
		"a reranker's and an embedder's hub models": {
			script: sh(`python -m reranking --model_class monoT5 --reranker_name_or_path cross-encoder/ms-marco-MiniLM-L-12-v2`,
				`python mine.py --embedder_name_or_path BAAI/bge-m3`),
			want: Features{Launcher: "python", Program: "-m reranking", Model: "cross-encoder/ms-marco-minilm-l-12-v2", ModelFrom: "flag"},
		},
		"a retriever's model named by its family, through a variable": {
			script: sh(`mo=bert-base-multilingual-cased`, `srun python3 contriever/train.py --model_path none --retriever_model_id $mo --pooling average`),
			want:   Features{Launcher: "srun", Program: "train.py", Model: "bert-base-multilingual-cased", ModelFrom: "flag"},
		},
		"--net_type and --depth": {
			script: sh(`python train.py --net_type pyramidnet --depth 110 --alpha 64`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "pyramidnet110", ModelFrom: "flag"},
		},
		"Helmholtz's perun monitor runs the program": {
			script: sh(`perun monitor src/model_training/train.py -c config/maskRCNN_train.yaml`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "maskrcnn", ModelFrom: "config"},
		},
		"shifter": {
			script: sh(`srun shifter --image=docker:nersc/pytorch:2.1 python train.py --model unet --batch-size 4`),
			want:   Features{Launcher: "srun", Program: "train.py", Model: "unet", ModelFrom: "flag", BatchSize: 4},
		},
		"ch-run": {
			script: sh(`ch-run -b /data:/mnt/data /var/tmp/torch -- python train.py --model alexnet`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "alexnet", ModelFrom: "flag"},
		},
		"an executable image runs the command after it": {
			script: sh(`IMG=/scratch/u/msamp.sif`, `"$IMG" bash -c "accelerate launch --config_file fp8.yaml train.py --model_name_or_path gpt2-large --per_device_train_batch_size 8"`),
			want: Features{Launcher: "accelerate", Program: "train.py", Model: "gpt2-large", ModelFrom: "flag", BatchSize: 8,
				Precision: "fp8"},
		},
		"conda run and micromamba run": {
			script: sh(`conda run -n torch --no-capture-output python train.py --arch vgg16 -b 64`,
				`micromamba run -n jax python other.py`),
			want: Features{Launcher: "python", Program: "train.py", Model: "vgg16", ModelFrom: "flag", BatchSize: 64},
		},
		"mamba the conda tool is a wrapper; Mamba the architecture a model": {
			script: sh(`mamba activate ssm`, `mamba run -n ssm python train.py --batch_size 16`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "ssm", ModelFrom: "path", BatchSize: 16},
		},
		"a model flag naming Mamba": {
			script: sh(`mamba run -n ssm python train.py --model_name mamba`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "mamba", ModelFrom: "flag"},
		},
		"uv run python and uv run a script": {
			script: sh(`uv run --frozen python train.py --model gpt2 --batch_size 12`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "gpt2", ModelFrom: "flag", BatchSize: 12},
		},
		"uv run of a module": {
			script: sh(`CUDA_LAUNCH_BLOCKING=1 uv run --isolated --with wandb -m src.train trainer.micro_train_batch_size_per_gpu=2`),
			want:   Features{Launcher: "python", Program: "-m src.train", BatchSize: 2},
		},
		"uv run of a module given as --module=": {
			script: sh(`uv run --module=ppo.train --batch_size 64`),
			want:   Features{Launcher: "python", Program: "-m ppo.train", BatchSize: 64},
		},
		"uv run of a script alone": {
			script: sh(`uv run train_ddp.py --bs 4`),
			want:   Features{Launcher: "python", Program: "train_ddp.py", BatchSize: 4},
		},
		"the shell's builtins and utilities in a script srun runs are not its launch": {
			script: sh(`srun --label --ntasks=4 bash <<'EOF'`, `ROOT_DIR="${ROOT_DIR:?}"`, `for ((i=0; i<2; i++)); do`, `  [[ -z "$ROW" ]] && continue`,
				`  TMP="$(mktemp /tmp/row_XXXX.tsv)"`, `  python "${ROOT_DIR}/scripts/run_train.py" train.tasks_tsv "$TMP" device 0`, `done`, `EOF`),
			want: Features{Launcher: "srun", Program: "run_train.py", GPUs: 4},
		},
		"an environment runner Python runs as a module is a wrapper": {
			script: sh(`python -m pipenv run ./main.py train --env cfg/env/cluster.yaml --batch-size 6`),
			want:   Features{Launcher: "python", Program: "main.py", BatchSize: 6},
		},
		"pixi run and poetry run": {
			script: sh(`pixi run -e cuda torchrun --nproc_per_node 8 train.py --model llama-7b`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "llama-7b", ModelFrom: "flag", GPUs: 8},
		},
		"poetry run": {
			script: sh(`poetry run python -m trainer.fit --model roberta-base`),
			want:   Features{Launcher: "python", Program: "-m trainer.fit", Model: "roberta-base", ModelFrom: "flag"},
		},
		"python -m module names the program": {
			script: sh(`python -m cyclegan --bs 1`),
			want:   Features{Launcher: "python", Program: "-m cyclegan", Model: "cyclegan", ModelFrom: "program", BatchSize: 1},
		},
		"python -m torch.distributed.launch": {
			script: sh(`python -m torch.distributed.launch --nproc_per_node=4 --use_env train.py --model resnext50_32x4d`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "resnext50_32x4d", ModelFrom: "flag", GPUs: 4},
		},
		"accelerate launch with config": {
			script: sh(`accelerate launch --config_file fsdp.yaml --num_processes 8 train.py --model_name_or_path EleutherAI/pythia-1b`),
			want:   Features{Launcher: "accelerate", Program: "train.py", Model: "eleutherai/pythia-1b", ModelFrom: "flag", GPUs: 8},
		},
		"composer": {
			script: sh(`composer -n 8 train.py --model mpt-125m`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "mpt-125m", ModelFrom: "flag", GPUs: 8},
		},
		"lightning run model": {
			script: sh(`lightning run model --accelerator cuda --devices 4 fabric_train.py --model gpt2`),
			want:   Features{Launcher: "python", Program: "fabric_train.py", Model: "gpt2", ModelFrom: "flag", GPUs: 4},
		},
		"time, env, nohup, numactl, stdbuf, exec": {
			script: sh(`exec nohup time -p env CUDA_VISIBLE_DEVICES=0 numactl --cpunodebind=0 --membind 0 stdbuf -oL python train.py --model resnet18 -b 512`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet18", ModelFrom: "flag", BatchSize: 512, GPUs: 1},
		},
		"nvidia-smi and container shell are not launches": {
			script: sh(`srun nvidia-smi`, `singularity exec --nv img.sif bash run.sh`, `apptainer exec img.sif nvidia-smi -L`),
			want:   Features{},
		},
		"srun of a shell script": {
			script: sh(`srun bash scripts/train.sh`),
			want:   Features{Launcher: "srun", Program: "train.sh"},
		},
		"image variable never becomes the model": {
			script: sh(`singularity exec --nv "${SIF}" python "${SCRIPT}" --batch-size 8`),
			want:   Features{Launcher: "python", Program: "${SCRIPT}", BatchSize: 8, Unknown: []string{"program"}},
		},
	}
	runFeatureCases(t, cases)
}

// TestFrameworkConventions: the arguments and files each training framework
// uses to name the model, the batch and the precision.
func TestFrameworkConventions(t *testing.T) {
	cases := featureCases{
		"Hugging Face Trainer": {
			script: sh(`#SBATCH --gres=gpu:h100:4`, `torchrun --nproc_per_node 4 run_clm.py --model_name_or_path meta-llama/Llama-2-7b-hf \`,
				`  --per_device_train_batch_size 2 --gradient_accumulation_steps 16 --bf16 True --num_train_epochs 1`),
			want: Features{Launcher: "torchrun", Program: "run_clm.py", Model: "meta-llama/llama-2-7b-hf", ModelFrom: "flag",
				BatchSize: 2, GradAccum: 16, Precision: "bf16", Epochs: 1, GPUs: 4, GPUType: "h100"},
		},
		"a launch whose line lost its backslash": {
			script: sh(`torchrun --nproc_per_node=3 train.py \`, `  --model_size 300m \`, `  --prediction_loss_only`,
				`  --learning_rate 6e-4 \ `, `  --per_device_train_batch_size 4 --bf16`, `echo done`, `--not-continued 1`),
			want: Features{Launcher: "torchrun", Program: "train.py", BatchSize: 4, Precision: "bf16", GPUs: 3},
		},
		"OpenRLHF's sections: the rollout's batch is not the training's": {
			script: sh(`python3 -m openrlhf.cli.train_ppo_ray --rollout.micro_batch_size 16 --train.micro_batch_size 8 --rollout.batch_size 1024 --eval.batch_size 64 --eval_dataset.hf.batch_size 128`),
			want:   Features{Launcher: "python", Program: "-m openrlhf.cli.train_ppo_ray", Model: "openrlhf", ModelFrom: "path", BatchSize: 8},
		},
		"a variable named for a per-GPU batch, scaled by GPUs counted at run time": {
			script: sh(`NUM_GPUS=$(nvidia-smi -L | wc -l)`, `BATCH_SIZE_PER_GPU=128`, `BATCH_SIZE=$(($BATCH_SIZE_PER_GPU * $NUM_GPUS))`,
				`accelerate launch --num_processes $NUM_GPUS train.py --model SiT-L/2 --batch-size=$BATCH_SIZE`),
			want: Features{Launcher: "accelerate", Program: "train.py", Model: "sit-l/2", ModelFrom: "flag", BatchSize: 128,
				Unknown: []string{"gpus"}},
		},
		"a launch whose last quote is never closed, in a script that does not parse": {
			script: sh(`for s in 1 2; do`, `  srun python train.py --init_from='scratch' --batch_size=1 \`, `    --dtype='float32' --impl='xllm`, `done`),
			want:   Features{Launcher: "srun", Program: "train.py", BatchSize: 1, Precision: "fp32"},
		},
		"a ResNet named by its family and its depth": {
			script: sh(`srun python main.py --model-name resnet --model-variant 50 --batch-size 256 --amp`),
			want: Features{Launcher: "srun", Program: "main.py", Model: "resnet50", ModelFrom: "flag", BatchSize: 256,
				Precision: "amp"},
		},
		"a depth flag does not size a family not counted by depth": {
			script: sh(`python train.py --model vit --depth 12`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "vit", ModelFrom: "flag"},
		},
		"LLaMA-Factory's command line run as a python module": {
			script: sh(`srun python -m llamafactory.cli train examples/train_lora/llama3_8b_lora_sft.yaml`),
			want:   Features{Launcher: "srun", Program: "llamafactory-cli train", Model: "llama3-8b", ModelFrom: "config"},
		},
		"axolotl's trainer run as a python module": {
			script: sh(`python -m axolotl.cli.train examples/llama-3/lora-8b.yml`),
			want:   Features{Launcher: "python", Program: "axolotl", Model: "llama-3-8b", ModelFrom: "config"},
		},
		"a tool's subcommand run on a hub model": {
			script: sh(`elk elicit huggyllama/llama-13b imdb_misspelled`),
			want:   Features{Launcher: "python", Program: "elk elicit", Model: "huggyllama/llama-13b", ModelFrom: "flag"},
		},
		"a tool that is no training run on a hub model is no launch": {
			script: sh(`huggingface-cli download meta-llama/Llama-2-7b-hf`, `git clone org/repo`),
			want:   Features{},
		},
		"GPT-NeoX's config files in one word": {
			script: sh(`CONFIG="configs/llama/7B.yml configs/local_setup.yml"`, `python ./deepy.py train.py "$CONFIG"`),
			want:   Features{Launcher: "python", Program: "deepy.py", Model: "llama-7b", ModelFrom: "config"},
		},
		"Hugging Face Trainer, --fp16 before a positional": {
			script: sh(`python run_glue.py --model_name_or_path roberta-large --fp16 --per_device_train_batch_size 32`),
			want: Features{Launcher: "python", Program: "run_glue.py", Model: "roberta-large", ModelFrom: "flag",
				BatchSize: 32, Precision: "fp16"},
		},
		"Lightning CLI": {
			script: sh(`srun python main.py fit --model.model_name_or_path google/flan-t5-base --data.batch_size 16 --trainer.precision bf16-mixed --trainer.devices 4 --trainer.max_epochs 5`),
			want: Features{Launcher: "srun", Program: "main.py", Model: "google/flan-t5-base", ModelFrom: "flag",
				BatchSize: 16, Precision: "bf16", Epochs: 5, GPUs: 4},
		},
		"Lightning CLI, 16-mixed": {
			script: sh(`python cli.py fit --config cfg.yaml --trainer.precision=16-mixed --data.init_args.batch_size=48`),
			want:   Features{Launcher: "python", Program: "cli.py", BatchSize: 48, Precision: "fp16"},
		},
		"Hydra overrides": {
			script: sh(`python train.py model=resnet50 data.batch_size=64 trainer.precision=bf16-mixed +experiment=imagenet trainer.max_epochs=90`),
			want: Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag",
				BatchSize: 64, Precision: "bf16", Epochs: 90},
		},
		"Hydra model group with a path": {
			script: sh(`python src/train.py experiment=cifar model=vit/small ++trainer.devices=2 datamodule.batch_size=256`),
			want: Features{Launcher: "python", Program: "train.py", Model: "vit/small", ModelFrom: "flag",
				BatchSize: 256, GPUs: 2},
		},
		"torchtitan flavor sizes the model": {
			script: sh(`torchrun --nproc_per_node 8 -m torchtitan.train --job.config_file ./train_configs/debug.toml --model.name llama3 --model.flavor 8B --training.local_batch_size 2`),
			want: Features{Launcher: "torchrun", Program: "torchtitan.train", Model: "llama3-8b", ModelFrom: "flag",
				BatchSize: 2, GPUs: 8},
		},
		"Python fed by a heredoc": {
			script: sh(`python - <<'PY'`, `from ultralytics import YOLO`, `model = YOLO("yolov8s.pt")`,
				`model.train(data="coco.yaml", epochs=50, imgsz=640, batch=32)`, `PY`),
			want: Features{Launcher: "python", Program: "-", Model: "yolov8s", ModelFrom: "flag",
				BatchSize: 32, ImageSize: 640, Epochs: 50},
		},
		"python -c with a model and Trainer arguments": {
			script: sh(`#SBATCH --gres=gpu:1`, `srun python -u -c "`,
				`from transformers import AutoModelForCausalLM, TrainingArguments`,
				`m = AutoModelForCausalLM.from_pretrained('Qwen/Qwen2-1.5B', torch_dtype=torch.bfloat16)`,
				`a = TrainingArguments(output_dir=out, per_device_train_batch_size=8)`, `"`),
			want: Features{Launcher: "srun", Program: "-", Model: "qwen/qwen2-1.5b", ModelFrom: "flag",
				BatchSize: 8, Precision: "bf16", GPUs: 1},
		},
		"a smoke test in python -c is no launch": {
			script: sh(`python -c "import torch; print(torch.cuda.is_available())"`, `torchrun --nproc_per_node 2 train.py --model resnet50`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "resnet50", ModelFrom: "flag", GPUs: 2},
		},
		"a model named alone as an argument": {
			script: sh(`python3 bench.py train -O n_gpus=4,batch_size=256 -t times.tsv resnet56v1`),
			want:   Features{Launcher: "python", Program: "bench.py", Model: "resnet56v1", ModelFrom: "flag"},
		},
		"a Hugging Face model id under a flag of the program's own": {
			script: sh(`BASE="Qwen/Qwen2.5-7B-Instruct"`, `python -u train_lora.py --base "$BASE" --train_file data/train.json --batch_size 2`),
			want:   Features{Launcher: "python", Program: "train_lora.py", Model: "qwen/qwen2.5-7b-instruct", ModelFrom: "flag", BatchSize: 2},
		},
		"a dataset's id is no model": {
			script: sh(`python sft.py --dataset_name HuggingFaceH4/llama-3-chat-mix --bf16`),
			want:   Features{Launcher: "python", Program: "sft.py", Precision: "bf16"},
		},
		"a template's hole is no model": {
			script: sh(`srun python -u main.py --model {model} --batch-size {batch_size} --precision amp_bfloat16`),
			want:   Features{Launcher: "srun", Program: "main.py", Precision: "bf16"},
		},
		"a run named after its model and size": {
			script: sh(`bash scripts/finetune.sh data/rollouts.json qwen3-1.7b-sft_v1.3`),
			want:   Features{Program: "finetune.sh", Model: "qwen3-1.7b", ModelFrom: "flag"},
		},
		"torchtitan's config file sizes a bare --model.name": {
			script: sh(`srun torchrun --nproc_per_node 8 -m torchtitan.train --job.config_file train_configs/llama3_70b.toml --model.name llama3`),
			want:   Features{Launcher: "torchrun", Program: "torchtitan.train", Model: "llama3-70b", ModelFrom: "config", GPUs: 8},
		},
		"a name, a version and a size": {
			script: sh(`#SBATCH --job-name=bdc-1.0-100m`, `python train.py`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "bdc-1.0-100m", ModelFrom: "job_name", JobName: "bdc-1.0-100m"},
		},
		"a config named after its model under a flag of the program's own": {
			script: sh(`torchrun --nproc_per_node 8 distill.py --model_config llama3_1_405b/distill_llama3_1_405b_lk --distill_config llama3_1_405b/rp`),
			want:   Features{Launcher: "torchrun", Program: "distill.py", Model: "llama3.1-405b", ModelFrom: "config", GPUs: 8},
		},
		"QLoRA, checkpointing and a paged optimizer, as HF Trainer flags": {
			script: sh(`accelerate launch sft.py --model_name_or_path meta-llama/Llama-2-13b-hf --load_in_4bit --use_peft --lora_r 64 \`,
				`  --gradient_checkpointing True --optim paged_adamw_32bit --per_device_train_batch_size 4 --max_seq_length 2048 --bf16`),
			want: Features{Launcher: "accelerate", Program: "sft.py", Model: "meta-llama/llama-2-13b-hf", ModelFrom: "flag",
				BatchSize: 4, SeqLen: 2048, Precision: "bf16", Tuning: "qlora", LoRARank: 64, Checkpointing: true, Optimizer: "paged"},
		},
		"LoRA by LLaMA-Factory's finetuning_type": {
			script: sh(`llamafactory-cli train --model_name_or_path Qwen/Qwen2.5-7B --finetuning_type lora --per_device_train_batch_size 2 --optim adamw_8bit`),
			want: Features{Launcher: "python", Program: "llamafactory-cli train", Model: "qwen/qwen2.5-7b", ModelFrom: "flag",
				BatchSize: 2, Tuning: "lora", Optimizer: "adamw8bit"},
		},
		"Megatron's recomputation": {
			script: sh(`torchrun pretrain_gpt.py --num-layers 32 --hidden-size 4096 --recompute-granularity full --micro-batch-size 1`),
			want: Features{Launcher: "torchrun", Program: "pretrain_gpt.py", Model: "gpt", ModelFrom: "path", BatchSize: 1,
				Params: 12 * 32 * 4096 * 4096, ParamsFrom: "shape", Layers: 32, Hidden: 4096, Checkpointing: true},
		},
		"a model in the program's name": {
			script: sh(`srun python finetune_llama2_7b.py --lr 2e-5 --batch_size 4`),
			want: Features{Launcher: "srun", Program: "finetune_llama2_7b.py", Model: "llama2-7b", ModelFrom: "program",
				BatchSize: 4},
		},
		"a family alone in the program's name names the workload, no model": {
			script: sh(`python pretrain_bert.py --micro-batch-size 8`),
			want:   Features{Launcher: "python", Program: "pretrain_bert.py", Model: "bert", ModelFrom: "path", BatchSize: 8},
		},
		"a per-GPU batch flag beats a plain one, in either order": {
			script: sh(`#SBATCH --gres=gpu:4`, `torchrun --nproc-per-node 4 train.py --batch-gpu 16 --batch 128 --fp16 True`),
			want:   Features{Launcher: "torchrun", Program: "train.py", BatchSize: 16, Precision: "fp16", GPUs: 4},
		},
		"images per GPU": {
			script: sh(`torchrun --nproc_per_node=8 tools/train_seg.py --images-per-gpu 12`),
			want:   Features{Launcher: "torchrun", Program: "train_seg.py", Model: "seg", ModelFrom: "path", BatchSize: 12, GPUs: 8},
		},
		"a global batch over the GPUs": {
			script: sh(`#SBATCH --gpus-per-node=4`, `#SBATCH --nodes=2`,
				`srun torchrun --nnodes 2 --nproc_per_node 4 sample_ddp.py --global-batch-size 512 --grad-accum 2`),
			want: Features{Launcher: "torchrun", Program: "sample_ddp.py", BatchSize: 32, GlobalBatchSize: 512, GradAccum: 2,
				GPUs: 8},
		},
		"a global batch that does not divide stays global": {
			script: sh(`#SBATCH --gres=gpu:3`, `python fit.py --global_batch_size 1000`),
			want:   Features{Launcher: "python", Program: "fit.py", Model: "fit", ModelFrom: "path", GlobalBatchSize: 1000, GPUs: 3},
		},
		"torchpack dist-run starts the program with mpirun": {
			script: sh(`#SBATCH --gres=gpu:4`, `torchpack dist-run -np 4 -v python tools/train.py configs/seg/b2.yaml --fp16 --run-dir runs/b2`),
			want:   Features{Launcher: "mpirun", Program: "train.py", Precision: "fp16", GPUs: 4},
		},
		"ray job submit runs its entrypoint after --": {
			script: sh(`#SBATCH --nodes=2`, `#SBATCH --gres=gpu:h100:8`, `MODEL=Qwen/Qwen3-8B`, `MICRO=2`,
				`ray job submit --address "$HEAD:8265" --no-wait -- python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \`,
				`  data.train_batch_size=512 actor_rollout_ref.model.path=$MODEL \`,
				`  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=$MICRO actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8`),
			want: Features{Launcher: "python", Program: "-m verl.trainer.main_ppo", Model: "qwen/qwen3-8b", ModelFrom: "flag",
				BatchSize: 2, GPUs: 16, GPUType: "h100"},
		},
		"a section's model_path beats the config file's family": {
			script: sh(`torchrun --nproc_per_node=8 tasks/train_vlm.py configs/qwen2_vl/qwen2_vl.yaml --model.model_path /mnt/llm/Qwen2.5-VL-7B-Instruct`),
			want:   Features{Launcher: "torchrun", Program: "train_vlm.py", Model: "qwen2.5-vl-7b-instruct", ModelFrom: "flag", GPUs: 8},
		},
		"a camel-case program's name": {
			script: sh(`singularity exec --nv pytorch.simg python3 src/trainParticleTransformer.py`),
			want:   Features{Launcher: "python", Program: "trainParticleTransformer.py", Model: "particletransformer", ModelFrom: "path"},
		},
		"a size under a model word is no model": {
			script: sh(`#SBATCH -J OpenFold2Train`, `srun python training.py -model_name model_small -precision bf16`),
			want: Features{Launcher: "srun", Program: "training.py", Model: "openfold2", ModelFrom: "path", Precision: "bf16",
				JobName: "OpenFold2Train"},
		},
		"a run's weights, described, are no model": {
			script: sh(`python train.py --pretrained_model tiktok_ft_model --batch_size 8`),
			want:   Features{Launcher: "python", Program: "train.py", BatchSize: 8},
		},
		"a run's weights file leaves the model a flag named": {
			script: sh(`torchrun --nproc_per_node 4 -m src.training.main --model ViT-B-16 --pretrained /scratch/distill/student_warm_start.pt --batch-size 256`),
			want: Features{Launcher: "torchrun", Program: "src.training.main", Model: "vit-b-16", ModelFrom: "flag", BatchSize: 256,
				GPUs: 4},
		},
		"the directories after an unknown one are the program's": {
			script: sh(`#SBATCH --gres=gpu:1`, `DIR=$HOME/re-dreamerv3/`, `srun python "${DIR}/dreamerv3/main.py" --seed 1`),
			want:   Features{Launcher: "srun", Program: "main.py", Model: "dreamerv3", ModelFrom: "path", GPUs: 1},
		},
		"a run's step is no model": {
			script: sh(`python sft.py --model_name_or_path out/pretrained-models/model_step_3000 --per_device_train_batch_size 4`),
			want:   Features{Launcher: "python", Program: "sft.py", BatchSize: 4},
		},
		"a run's own output is no model": {
			script: sh(`python render.py --model_path output/dnerf/bouncingballs/ --skip_train`),
			want:   Features{Launcher: "python", Program: "render.py", Model: "render", ModelFrom: "path"}, // the program's name stands in
		},
		"a run's output named for its model names it": {
			script: sh(`python generate.py --model_name_or_path outputs/llama-2-7b-sft --batch_size 8`),
			want:   Features{Launcher: "python", Program: "generate.py", Model: "llama-2-7b", ModelFrom: "flag", BatchSize: 8},
		},
		"a release named for its step is one": {
			script: sh(`python finetune.py --model_name_or_path bert-base-wp-30k_msl-512-full-1000000-step --batch_size 32`),
			want: Features{Launcher: "python", Program: "finetune.py", Model: "bert-base-wp-30k_msl-512-full-1000000-step",
				ModelFrom: "flag", BatchSize: 32},
		},
		"a family's weights, described, name it": {
			script: sh(`python train.py --model llama_finetuned_model --batch_size 8`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "llama_finetuned_model", ModelFrom: "flag", BatchSize: 8},
		},
		"a directory under models/ names the model": {
			script: sh(`#SBATCH -J kol`, `cd src/models/CGKN/KMG`, `python kol_trainer.py`),
			want:   Features{Launcher: "python", Program: "kol_trainer.py", Model: "cgkn", ModelFrom: "path", JobName: "kol"},
		},
		"the job's name is the head of the directory's": {
			script: sh(`#SBATCH --job-name=spherenet`, `cd /work/code/GRPN_adam_spherenet`, `conda run -n graph python train.py`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "spherenet", ModelFrom: "path", JobName: "spherenet"},
		},
		"a directory's first word is no head": {
			script: sh(`#SBATCH --job-name=avp`, `cd /work/avp_vit`, `python train.py`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "avp_vit", ModelFrom: "path", JobName: "avp"},
		},
		"a variable of hidden container options before more options": {
			script: sh(`apptainer exec $APPT_COMMON --env CUDA_VISIBLE_DEVICES=1,2 crrl.sif accelerate launch --num_processes 2 \`,
				`  --module src.train_grpo -- grpo.per_device_train_batch_size=4`),
			want: Features{Launcher: "accelerate", Program: "src.train_grpo", BatchSize: 4, GPUs: 2},
		},
		"a heterogeneous job's components each ask for GPUs": {
			script: sh(`#SBATCH --nodes=4`, `#SBATCH --constraint=public&1v100`, `#SBATCH --gres=gpu:1`, `#SBATCH hetjob`,
				`#SBATCH --nodes=2`, `#SBATCH --gres=gpu:2`, `srun --het-group=0 python train.py`),
			want: Features{Launcher: "srun", Program: "train.py", GPUs: 8, GPUType: "v100"},
		},
		"a training program named for a family beats the job's word": {
			script: sh(`#SBATCH --job-name=LLM4AMR`, `python qwen_lora_amr.py`),
			want:   Features{Launcher: "python", Program: "qwen_lora_amr.py", Model: "qwen", ModelFrom: "path", JobName: "LLM4AMR"},
		},
		"a name the family ends stays whole": {
			script: sh(`python avp_vit.py`),
			want:   Features{Launcher: "python", Program: "avp_vit.py", Model: "avp_vit", ModelFrom: "path"},
		},
		"a module's deepest package that names a project": {
			script: sh(`srun python -m astroclip.astrodino.trainer --config-file cfg.yaml`),
			want:   Features{Launcher: "srun", Program: "-m astroclip.astrodino.trainer", Model: "astrodino", ModelFrom: "path"},
		},
		"a job named for the family a module's package trains": {
			script: sh(`#SBATCH --job-name=convnext_full_run_test`, `srun python -m the_well.benchmark.train`),
			want: Features{Launcher: "srun", Program: "-m the_well.benchmark.train", Model: "convnext", ModelFrom: "path",
				JobName: "convnext_full_run_test"},
		},
		"a job name of no family leaves the module's package": {
			script: sh(`#SBATCH --job-name=full_run_test`, `srun python -m the_well.benchmark.train`),
			want:   Features{Launcher: "srun", Program: "-m the_well.benchmark.train", Model: "well", ModelFrom: "path", JobName: "full_run_test"},
		},
		"an OpenMMLab config's name gives the batch per GPU": {
			script: sh(`python -m torch.distributed.launch --nproc_per_node=8 tools/train.py configs/rtmpose/rtmw-l_8xb320-270e_cocktail14-384x288.py --launcher pytorch`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "rtmw-l", ModelFrom: "config", BatchSize: 320, GPUs: 8},
		},
		"--enable_amp": {
			script: sh(`python train.py --enable_amp --yaml_config=config/AFNO.yaml`),
			want:   Features{Launcher: "python", Program: "train.py", Precision: "amp", Model: "afno", ModelFrom: "config"},
		},
		"mpirun's -mca takes a parameter and its value": {
			script: sh(`mpirun -np 16 -x PATH -bind-to none -map-by slot -mca pml ob1 -mca btl ^openib python3 train.py --batch_size 4`),
			want:   Features{Launcher: "mpirun", Program: "train.py", BatchSize: 4, GPUs: 16},
		},
		"a model kind ends a config's name": {
			script: sh(`python main.py --config configs/llama_vision.yaml`),
			want:   Features{Launcher: "python", Program: "main.py", Model: "llama-vision", ModelFrom: "config"},
		},
		"branches that each extend an array agree on its start": {
			script: sh(`ARGS=(--per-gpu-batch-size 2 --mixed-precision bf16)`, `if [[ -n "$SCENES" ]]; then`, `  ARGS+=(--scenes $SCENES)`,
				`elif [[ -f "$LIST" ]]; then`, `  ARGS+=(--scenes-file "$LIST")`, `else`, `  exit 1`, `fi`,
				`torchrun -m css.train.train_relight "${ARGS[@]}"`),
			want: Features{Launcher: "torchrun", Program: "css.train.train_relight", Model: "css", ModelFrom: "path",
				BatchSize: 2, Precision: "bf16"},
		},
		"branches that disagree on a flag's value drop the flag": {
			script: sh(`ARGS=(--bf16 --model)`, `if [ -n "$BIG" ]; then ARGS+=(gpt2-xl); else ARGS+=(gpt2); fi`, `python train.py "${ARGS[@]}" data/`),
			want:   Features{Launcher: "python", Program: "train.py", Precision: "bf16"},
		},
		"a config's name stands in where nothing else names the work": {
			script: sh(`python train.py --config configs/glowtts.yaml`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "glowtts", ModelFrom: "path"},
		},
		"a program's name beats a config's": {
			script: sh(`python train_whisper.py --config configs/indicspeech.yaml`),
			want:   Features{Launcher: "python", Program: "train_whisper.py", Model: "whisper", ModelFrom: "path"},
		},
		"a Hydra experiment's name stands in": {
			script: sh(`python train.py experiment=aero_2-16_512_64 dset=2-16`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "aero", ModelFrom: "path"},
		},
		"a DeepSpeed config names no workload": {
			script: sh(`python train.py --config ds_zero2.json`),
			want:   Features{Launcher: "python", Program: "train.py"},
		},
		"a Hydra group's value with the family inside": {
			script: sh(`poetry run python run_speech.py -m network=speech_wav2vec2_linear optim.lr=1e-4`),
			want:   Features{Launcher: "python", Program: "run_speech.py", Model: "wav2vec2", ModelFrom: "flag"},
		},
		"python -m pdb runs the program under the debugger": {
			script: sh(`#SBATCH --gres=gpu:rtx8000:1`, `python3 -m pdb src/train/train_asr.py -c cfg/xlsr.ini --batch_size 8`),
			want: Features{Launcher: "python", Program: "train_asr.py", Model: "asr", ModelFrom: "path", BatchSize: 8, GPUs: 1,
				GPUType: "rtx8000"},
		},
		"python -m cProfile with its options": {
			script: sh(`python -m cProfile -o prof.out -s cumtime train.py --model resnet18`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet18", ModelFrom: "flag"},
		},
		"an RL algorithm stands in for the model": {
			script: sh(`#SBATCH -J crafter_run`, `python train.py --env crafter --algorithm ppo --steps 1000000`),
			want: Features{Launcher: "python", Program: "train.py", Model: "ppo", ModelFrom: "path", Steps: 1e6,
				JobName: "crafter_run"},
		},
		"a model's name beats the RL algorithm": {
			script: sh(`python train_grpo.py --algo grpo --model_name_or_path Qwen/Qwen2.5-1.5B`),
			want:   Features{Launcher: "python", Program: "train_grpo.py", Model: "qwen/qwen2.5-1.5b", ModelFrom: "flag"},
		},
		"a part's checkpoint under --model. is no model": {
			script: sh(`python tools/train.py configs/det/fuser.yaml --model.encoders.camera.backbone.init_cfg.checkpoint pretrained/swint-nuimages.pth --model.init_args.name_or_path gpt2-medium`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "gpt2-medium", ModelFrom: "flag"},
		},
		"a package's training command": {
			script: sh(`#SBATCH --gres=gpu:a100:1`, `mace_run_train \`, `  --name="run1" --model="MACE" --batch_size=32 --device=cuda`),
			want: Features{Launcher: "python", Program: "mace_run_train", Model: "mace", ModelFrom: "flag", BatchSize: 32, GPUs: 1,
				GPUType: "a100"},
		},
		"a package's training command names its work": {
			script: sh(`nequip-train configs/minimal.yaml`),
			want:   Features{Launcher: "python", Program: "nequip-train", Model: "nequip", ModelFrom: "path"},
		},
		"a program's path resolved by realpath, handed with its flags to a launch script": {
			script: sh(`PROG="$(realpath "$HOME/tutorials/btcv/main.py")"`, `CMD="$PROG --batch_size=1 --noamp"`,
				`LAUNCH=$(readlink -f "$HOME/utils/run_on_multinode.sh")`, `srun --unbuffered "$LAUNCH" "$CMD" "singularity exec --nv img.sif python3"`),
			want: Features{Launcher: "srun", Program: "main.py", Model: "btcv", ModelFrom: "path", BatchSize: 1, Precision: "fp32"},
		},
		"mixed precision turned off, then on": {
			script: sh(`python train.py --no-amp --bf16`, `python train.py --fp32`),
			want:   Features{Launcher: "python", Program: "train.py", Precision: "bf16"},
		},
		"a section's key nested by a double underscore": {
			script: sh(`srun python main.py --data__batch_size 128 --optimization__epochs 100`),
			want:   Features{Launcher: "srun", Program: "main.py", BatchSize: 128, Epochs: 100},
		},
		"a model's revision directory, exported to the script the job runs": {
			script: sh(`export BASE_MODEL=model/Qwen2.5-0.5B/snapshots/060db6499f32faf8b98477b0a26969ef7d8b9987`, `bash ./scripts/train_tiny_zero.sh`),
			want:   Features{Program: "train_tiny_zero.sh", Model: "qwen2.5-0.5b", ModelFrom: "env"},
		},
		"a script the job writes, then runs as its own program in a container": {
			script: sh(`WD="$PROJECT_DIR/$USER/course"`, `CONFIG_FILE="${WD}/configs/qlora/llama3_1_8B_qlora_alpaca.yaml"`,
				`INNER="./.inner_${SLURM_JOB_ID}"`, `cat > "$INNER" << EOF`, `#!/bin/bash -e`, `export RANK=\$SLURM_PROCID`,
				`python "${WD}/recipes/lora_finetune_distributed.py" --config "${CONFIG_FILE}"`, `EOF`, `chmod +x "$INNER"`,
				`srun apptainer exec --nv -B "${WD}:/workspace" img.sif "$INNER"`),
			want: Features{Launcher: "srun", Program: "lora_finetune_distributed.py", Model: "llama3.1-8b", ModelFrom: "config"},
		},
		"a program's subcommand names the family it trains": {
			script: sh(`python src/main.py train_mamba --lr 1e-3 --batch_size 64`, `python main.py train_model --epochs 2`),
			want:   Features{Launcher: "python", Program: "main.py", Model: "mamba", ModelFrom: "path", BatchSize: 64},
		},
		"a check of the machine and the data's preparation, then the model's program": {
			script: sh(`python scripts/pytorch_info_cuda.py`, `python scripts/smiles_preprocessing.py`, `python scripts/attentivefp.py`),
			want:   Features{Launcher: "python", Program: "attentivefp.py", Model: "attentivefp", ModelFrom: "path"},
		},
		"Ultralytics' batch= is split over the devices listed": {
			script: sh(`#SBATCH --gpus-per-node=4`, `# batch is the total over the 4 devices`, `yolo detect train model=yolov8s.pt data=caltech.yaml batch=16 device=0,1,2,3 epochs=4`),
			want: Features{Launcher: "python", Program: "yolo detect train", Model: "yolov8s", ModelFrom: "flag", BatchSize: 4, Epochs: 4,
				GPUs: 4},
		},
		"a config under the program's own flag, in a directory named for a ViT's size and patch": {
			script: sh(`torchrun --standalone --nproc_per_node=8 app/main.py --fname configs/train/vitl16/k400-16x8x3.yaml`),
			want:   Features{Launcher: "torchrun", Program: "main.py", Model: "vit-l16", ModelFrom: "config", GPUs: 8},
		},
		"LLaVA's --version and a chat template name a family's template, not the model": {
			script: sh(`deepspeed llava/train/train_mem.py --version llama3 --chat_template qwen2 --per_device_train_batch_size 8`),
			want:   Features{Launcher: "deepspeed", Program: "train_mem.py", BatchSize: 8},
		},
		"a config under -f; a data flag's YAML is no config of the model": {
			script: sh(`python main.py -f conf/llama2_7b.yaml --data configs/data/qwen2_7b.yaml`),
			want:   Features{Launcher: "python", Program: "main.py", Model: "llama2-7b", ModelFrom: "config"},
		},
		"a job named for its model, with a version written with a p": {
			script: sh(`#SBATCH --job-name=apertus-1p5-8b`, `srun python pretrain_gpt.py --micro-batch-size 2`),
			want: Features{Launcher: "srun", Program: "pretrain_gpt.py", Model: "apertus-1p5-8b", ModelFrom: "job_name", BatchSize: 2,
				JobName: "apertus-1p5-8b"},
		},
		"a model type that is a count of dimensions names no model": {
			script: sh(`python train.py --model_type 3d --batch_size 4`),
			want:   Features{Launcher: "python", Program: "train.py", BatchSize: 4},
		},
		"nerfstudio's ns-train names its method first": {
			script: sh(`ns-train nerfacto --data data/poster --max-num-iterations 3000 --pipeline.model.predict-normals True`),
			want:   Features{Launcher: "python", Program: "ns-train", Model: "nerfacto", ModelFrom: "flag"},
		},
		"training, then evaluation of its checkpoint": {
			script: sh(`bs=4096`, `python main.py --batch-size $bs --epochs 20`,
				`for t in coco flickr; do python eval.py --task $t --vision-model facebook/dinov2-large --batch_size 32; done`),
			// The evaluation fills in what the training leaves unsaid: its model.
			want: Features{Launcher: "python", Program: "main.py", Model: "facebook/dinov2-large", ModelFrom: "flag", BatchSize: 4096,
				Epochs: 20},
		},
		"--bsize": {
			script: sh(`python -m code.train_contrastive --net dinov3_vitl16 --bsize 8`),
			want:   Features{Launcher: "python", Program: "-m code.train_contrastive", BatchSize: 8, Model: "dinov3_vitl16", ModelFrom: "flag"},
		},
		"torchtune run as a python module": {
			script: sh(`#SBATCH --gpus-per-node=8`, `python -m torchtune._cli.tune run --nproc_per_node=8 lora_finetune_distributed --config llama3_1/70B_lora`),
			want: Features{Launcher: "torchrun", Program: "lora_finetune_distributed", Model: "llama3.1-70b", ModelFrom: "config",
				Tuning: "lora", GPUs: 8},
		},
		"a checkpoint of a run named for its model": {
			script: sh(`MODEL_PATH=/share/ckpts/Qwen3-8B-SFT_hotpotqa_ep3/checkpoint-368`, `python grpo.py --model_path ${MODEL_PATH}`),
			want:   Features{Launcher: "python", Program: "grpo.py", Model: "qwen3-8b", ModelFrom: "flag"},
		},
		"a network probe under srun is no program": {
			script: sh(`#SBATCH --job-name=aurora-train`, `srun --ntasks=2 ip addr show eno2np0`, `torchrun --nproc_per_node 4 train.py`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "aurora", ModelFrom: "path", GPUs: 4, JobName: "aurora-train"},
		},
		"the job's name says more than the program's": {
			script: sh(`#SBATCH -J scoresde`, `python unet.py --epochs 5`),
			want:   Features{Launcher: "python", Program: "unet.py", Model: "scoresde", ModelFrom: "path", Epochs: 5, JobName: "scoresde"},
		},
		"a program's name the job's name agrees with": {
			script: sh(`#SBATCH -J surgery_colorizer_v2`, `accelerate launch train_colorizer.py`),
			want: Features{Launcher: "accelerate", Program: "train_colorizer.py", Model: "colorizer", ModelFrom: "path",
				JobName: "surgery_colorizer_v2"},
		},
		"a run directory under Hydra's dated outputs names no model": {
			script: sh(`#SBATCH --gres=gpu:1`, `python scripts/evaluate.py --model_path /home/u/hydra_jobs/singlerun/2024-10-10/mp_20_train --dataset mp_20`),
			want:   Features{Launcher: "python", Program: "evaluate.py", GPUs: 1},
		},
		"a weights file is named for its model, not for being weights": {
			script: sh(`#SBATCH --gres=gpu:1`, `python prediction.py --image data/ --model output_folder/weights_gcn.hdf5`),
			want:   Features{Launcher: "python", Program: "prediction.py", Model: "gcn", ModelFrom: "flag", GPUs: 1},
		},
		"a model downloaded, then a launch that names none": {
			script: sh(`#SBATCH --gres=gpu:1`, `if [ ! -d ckpt/lap ]; then`,
				`  uv run huggingface-cli download lihzha/LAP-3B --local-dir ./ckpt/lap --repo-type model`, `fi`,
				`uv run scripts/train.py lap_rby1 --batch-size 32`),
			want: Features{Launcher: "python", Program: "train.py", Model: "lihzha/lap-3b", ModelFrom: "download", BatchSize: 32, GPUs: 1},
		},
		"a data set downloaded, or two models, say no model": {
			script: sh(`#SBATCH --gres=gpu:1`, `hf download HuggingFaceFW/fineweb-edu --repo-type dataset --local-dir data`,
				`huggingface-cli download Qwen/Qwen2.5-7B --local-dir base`, `huggingface-cli download Skywork/Skywork-Reward-Llama-3.1-8B`,
				`python train.py --batch-size 32`),
			want: Features{Launcher: "python", Program: "train.py", BatchSize: 32, GPUs: 1},
		},
		"a flag's model over the one downloaded": {
			script: sh(`#SBATCH --gres=gpu:1`, `huggingface-cli download openai/clip-vit-large-patch14`,
				`python train.py --model_name_or_path Qwen/Qwen2.5-7B`),
			want: Features{Launcher: "python", Program: "train.py", Model: "qwen/qwen2.5-7b", ModelFrom: "flag", GPUs: 1},
		},
		"a hidden file sourced last does the work with the variables set before it": {
			script: sh(`#SBATCH --gres=gpu:1`, `NAME='mixtralM_instruct'`, `MODEL_NAME='mistralai/Mixtral-8x7B-Instruct-v0.1'`,
				`BACKEND='vllm'`, `source ./jobs/scripts/submit/fire/fire_M.sh`),
			want: Features{Program: "fire_M.sh", Model: "mistralai/mixtral-8x7b-instruct-v0.1", ModelFrom: "env", GPUs: 1},
		},
		"a hidden file sourced before the launch only sets it up": {
			script: sh(`#SBATCH --gres=gpu:1`, `source ./env/setup_cluster.sh`, `MODEL_NAME=bert-base-uncased`, `python train.py`),
			want:   Features{Launcher: "python", Program: "train.py", GPUs: 1},
		},
		"a run's project names the model where nothing else does": {
			script: sh(`#SBATCH -J knee-tunner`, `#SBATCH --gres=gpu:1`, `srun python3 -m src.evaluate --project_name xception_hyperband`),
			want: Features{Launcher: "srun", Program: "-m src.evaluate", Model: "xception", ModelFrom: "job_name", GPUs: 1,
				JobName: "knee-tunner"},
		},
		"a run's name is read after the job's": {
			script: sh(`#SBATCH -J llama-3-8b-sft`, `#SBATCH --gres=gpu:1`, `python train.py --run_name mistral-7b-baseline`),
			want: Features{Launcher: "python", Program: "train.py", Model: "llama-3-8b", ModelFrom: "job_name", GPUs: 1,
				JobName: "llama-3-8b-sft"},
		},
		"a project's console given a kind and then train": {
			script: sh(`#SBATCH --gres=gpu:1`, `source .venv/bin/activate`, `instanovo diffusion train`),
			want:   Features{Launcher: "python", Program: "instanovo diffusion train", Model: "instanovo", ModelFrom: "path", GPUs: 1},
		},
		"a build tool's two words are no training console": {
			script: sh(`#SBATCH --gres=gpu:1`, `make model train`),
			want:   Features{GPUs: 1},
		},
		"a variable named for the model that the script uses, though no option is given it": {
			script: sh(`#SBATCH --gres=gpu:1`, `MODEL=gpt2`, `SAE=artifacts/saes/$MODEL`,
				`python -m aspd.cli.matching --run-dir out --sae-dir "$SAE"`),
			want: Features{Launcher: "python", Program: "-m aspd.cli.matching", Model: "gpt2", ModelFrom: "env", GPUs: 1},
		},
		"MLPerf's benchmark name is a task, no model": {
			script: sh(`#SBATCH --exclusive`, `export MODEL_NAME="language_model"`, `srun --container-image=$CONT ./run_and_time.sh`),
			want:   Features{Launcher: "srun", Program: "run_and_time.sh"},
		},
		"several models under one option are none the job's": {
			script: sh(`#SBATCH --gres=gpu:1`, `LLAMA=meta-llama/Llama-3.1-8B-Instruct`, `NLLB=facebook/nllb-200-3.3B`, `ALL=($NLLB $LLAMA)`,
				`python src/evaluate.py --output-dir out --models ${ALL[@]} --corpora a b`),
			want: Features{Launcher: "python", Program: "evaluate.py", GPUs: 1},
		},
		"a run's final weights under the directory that names their model": {
			script: sh(`#SBATCH --gres=gpu:1`, `MODEL="${MODEL:-runs/qwen7b/final}"`, `python -u src/eval_generate.py --model "$MODEL" --batch-size 32`),
			want:   Features{Launcher: "python", Program: "eval_generate.py", Model: "qwen7b", ModelFrom: "flag", BatchSize: 32, GPUs: 1},
		},
		"a LoRA adapter under a hidden root, its directory named for its base model": {
			script: sh(`#SBATCH --gres=gpu:1`, `ADAPTER_PATH="$FT_LLMS_ROOT/checkpoints/llama3_2_3B_lora/epoch_0/"`,
				`srun python scripts/inference.py --adapter-path "$ADAPTER_PATH" --batch-size 16`),
			want: Features{Launcher: "srun", Program: "inference.py", Model: "llama3.2-3b", ModelFrom: "flag", BatchSize: 16, GPUs: 1},
		},
		"an adapter named for no model says none": {
			script: sh(`python scripts/inference.py --adapter-path ckpt/my_adapter --batch-size 16`),
			want:   Features{Launcher: "python", Program: "inference.py", BatchSize: 16},
		},
		"an architecture a program is named for": {
			script: sh(`#SBATCH -J surgery_controlnet_v2`, `accelerate launch train_controlnet.py`),
			want: Features{Launcher: "accelerate", Program: "train_controlnet.py", Model: "controlnet", ModelFrom: "program",
				JobName: "surgery_controlnet_v2"},
		},
		"a package's name says more than the job's": {
			script: sh(`#SBATCH -J distill-a100`, `srun python -m canvit_train.harness.run distill`),
			want:   Features{Launcher: "srun", Program: "-m canvit_train.harness.run", Model: "canvit", ModelFrom: "path", JobName: "distill-a100"},
		},
		"a dataset in a job's name names no model": {
			script: sh(`#SBATCH -J horovod_tensorflow_mnist`, `python Unet.py`),
			want:   Features{Launcher: "python", Program: "Unet.py", Model: "unet", ModelFrom: "path", JobName: "horovod_tensorflow_mnist"},
		},
		"a project's console script given a training subcommand": {
			script: sh(`CONFIG="${2:-configs/models/bert-base.yaml}"`, `exec uv run hatelens train "$CONFIG" --dataset dynahate`),
			want:   Features{Launcher: "python", Program: "hatelens train", Model: "bert-base", ModelFrom: "config"},
		},
		"a project's train command under uv run": {
			script: sh(`uv run train --model vicreg --wandb`),
			want:   Features{Launcher: "python", Program: "train", Model: "vicreg", ModelFrom: "flag"},
		},
		"make train runs what the script does not show": {
			script: sh(`make train`, `find train -name '*.tmp' -delete`),
			want:   Features{},
		},
		"short options with their values attached": {
			script: sh(`#SBATCH -N4 --gres=gpu:A100:1`, `#SBATCH -t24:00:00`, `srun torchrun --nproc_per_node 1 training.py`),
			want:   Features{Launcher: "torchrun", Program: "training.py", GPUs: 4, GPUType: "A100"},
		},
		"nodes from tasks over tasks per node": {
			script: sh(`#SBATCH --ntasks=24`, `#SBATCH --ntasks-per-node=1`, `#SBATCH --gres=gpu:1`, `srun python -u train_learner.py --cuda`),
			want:   Features{Launcher: "srun", Program: "train_learner.py", Model: "learner", ModelFrom: "path", GPUs: 24},
		},
		"a step's tasks times its GPUs per task": {
			script: sh(`#SBATCH -N 4`, `srun -N ${SLURM_NNODES} -n 32 --gpus-per-task=1 --gpu-bind=closest python -u scripts/train.py`),
			want:   Features{Launcher: "srun", Program: "train.py", GPUs: 32},
		},
		"a step's --gres is each node's; its --gpus the step's": {
			script: sh(`#SBATCH --nodes=8`, `#SBATCH --ntasks-per-node=8`, `srun --container-image "$IMG" --gres=gpu:8 --mpi=pmix python run.py`,
				`srun --gpus=4 python eval.py`),
			want: Features{Launcher: "srun", Program: "run.py", GPUs: 64},
		},
		"DiffSynth-Studio names the model trained first among its parts": {
			script: sh(`accelerate launch examples/qwen_image/model_training/train.py \`,
				`  --model_id_with_origin_paths "Qwen/Qwen-Image-Edit-2511:transformer/diffusion_pytorch_model*.safetensors,Qwen/Qwen-Image:vae/diffusion_pytorch_model.safetensors" \`,
				`  --lora_rank 32 --learning_rate 1e-4`),
			want: Features{Launcher: "accelerate", Program: "train.py", Model: "qwen/qwen-image-edit-2511", ModelFrom: "flag",
				Tuning: "lora", LoRARank: 32},
		},
		"nanochat's --device-batch-size is each GPU's": {
			script: sh(`#SBATCH --gres=gpu:4`, `torchrun --nproc_per_node=4 -m scripts.base_train --depth=26 --device-batch-size 8`),
			want:   Features{Launcher: "torchrun", Program: "scripts.base_train", BatchSize: 8, GPUs: 4},
		},
		"LAION-CLAP trains the audio model its --amodel names": {
			script: sh(`srun python -m training.main --amodel PANN-14 --tmodel roberta --batch-size 96 --precision fp32`),
			want: Features{Launcher: "srun", Program: "-m training.main", Model: "pann-14", ModelFrom: "flag", BatchSize: 96,
				Precision: "fp32"},
		},
		"a model's whole name under a flag no reader knows": {
			script: sh(`python -m model.train_decoder --dataset_name='rocstories' --encoder_name='bert-base-cased'`),
			want:   Features{Launcher: "python", Program: "-m model.train_decoder", Model: "bert-base-cased", ModelFrom: "flag"},
		},
		"a template's hole is a value not shown, not a redirection": {
			script: sh(`export ACCELERATE_DIR="<your_accelerate_dir>"`, `export SCRIPT="${ACCELERATE_DIR}/examples/complete_nlp_example.py"`,
				`export CMD="accelerate launch --num_processes 8 $SCRIPT --mixed_precision bf16"`, `srun bash -c "$CMD"`),
			want: Features{Launcher: "accelerate", Program: "complete_nlp_example.py", Model: "complete_nlp", ModelFrom: "path",
				Precision: "bf16", GPUs: 8},
		},
		"a config's name exported to a launcher script not shown": {
			script: sh(`export CONFIG_NAME=${CONFIG_NAME:="draftp_sdxl"}`, `srun bash /opt/nemo-aligner/examples/mm/stable_diffusion/launch_draft_xl.sh`),
			want:   Features{Launcher: "srun", Program: "launch_draft_xl.sh", Model: "sdxl", ModelFrom: "config"},
		},
		"the settings a hidden launcher is given on its command line (NVIDIA's T5X GPU scripts)": {
			script: sh(`BSIZE_PER_GPU=${BSIZE_PER_GPU:=32}`, `srun bash -c "PREC=bfloat16 ENABLE_FP8=0 BSIZE_PER_GPU=${BSIZE_PER_GPU} bash $T5X_DIR/scripts_gpu/multiprocess_pretrain_pile.sh"`),
			want:   Features{Launcher: "srun", Program: "multiprocess_pretrain_pile.sh", Model: "pile", ModelFrom: "path", BatchSize: 32, Precision: "bf16"},
		},
		"FP8 switched on for a hidden launcher, over its dtype": {
			script: sh(`ENABLE_FP8=${ENABLE_FP8:=1}`, `srun bash -c "PREC=bfloat16 ENABLE_FP8=${ENABLE_FP8} bash scripts_gpu/multiprocess_pretrain_pile.sh"`),
			want:   Features{Launcher: "srun", Program: "multiprocess_pretrain_pile.sh", Model: "pile", ModelFrom: "path", Precision: "fp8"},
		},
		"SpeechBrain's mixed-precision switches": {
			script: sh(`python -m torch.distributed.run --nproc_per_node=8 wav2vec2/train_sb_wav2vec2.py wav2vec2/hparams/wav2vec2_base.yaml --find_unused_parameters --bfloat16_mix_prec`),
			want: Features{Launcher: "torchrun", Program: "train_sb_wav2vec2.py", Model: "wav2vec2-base", ModelFrom: "config", Precision: "bf16",
				GPUs: 8},
		},
		"bz is a batch's size": {
			script: sh(`python main.py --model_name gpt2-medium --bz 16`),
			want:   Features{Launcher: "python", Program: "main.py", Model: "gpt2-medium", ModelFrom: "flag", BatchSize: 16},
		},
		"a family under a model flag, its size under another": {
			script: sh(`python run_pretrain.py --model_name llama3 --model_size 70b -a dummy -p dummy`),
			want:   Features{Launcher: "python", Program: "run_pretrain.py", Model: "llama3-70b", ModelFrom: "flag"},
		},
		"one type in several memories": {
			script: sh(`#SBATCH --gres=gpu:1`, `#SBATCH --constraint="(a100)&(gpu40g|gpu80g)"`, `uv run python train.py`),
			want:   Features{Launcher: "python", Program: "train.py", GPUs: 1, GPUType: "a100"},
		},
		"an RTX 5880 partition": {
			script: sh(`#SBATCH --partition=gpu-rtx5880`, `#SBATCH --gpus-per-node=1`, `python train.py`),
			want:   Features{Launcher: "python", Program: "train.py", GPUs: 1, GPUType: "rtx5880", Partition: "gpu-rtx5880"},
		},
		"what Slurm exports from the header": {
			script: sh(`#SBATCH -N 4`, `#SBATCH --gres=gpu:8`, `GBS=8192`, `MBS=$(( GBS / (SLURM_NNODES * SLURM_GPUS_ON_NODE) ))`,
				`srun -n $((SLURM_NNODES * 8)) --gpus-per-task=1 python -u train.py --batch_size $MBS`),
			want: Features{Launcher: "srun", Program: "train.py", BatchSize: 256, GPUs: 32},
		},
		"the nodes a nodelist names are SLURM_NNODES too": {
			script: sh(`#SBATCH --nodelist=gpu[01-02]`, `#SBATCH --gres=gpu:4`, `GBS=64`, `MBS=$(( GBS / (SLURM_NNODES * 4) ))`,
				`srun python -u train.py --batch_size $MBS`),
			want: Features{Launcher: "srun", Program: "train.py", BatchSize: 8, GPUs: 8},
		},
		"the nodes tasks over tasks per node make are SLURM_NNODES too": {
			script: sh(`#SBATCH --ntasks=8`, `#SBATCH --ntasks-per-node=4`, `#SBATCH --gpus-per-node=4`, `GBS=256`,
				`srun python -u train.py --batch_size $(( GBS / (SLURM_NNODES * 4) ))`),
			want: Features{Launcher: "srun", Program: "train.py", BatchSize: 32, GPUs: 8},
		},
		"a preparation program's name is no stand-in for the training's": {
			script: sh(`#SBATCH -J wind_p2p`, `python preprocess_csv.py --in raw/ --out data/`, `python train.py --epochs 10`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "wind", ModelFrom: "path", Epochs: 10, JobName: "wind_p2p"},
		},
		"Megatron-LM shape": {
			script: sh(`GPT_ARGS="--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 --micro-batch-size 4 --global-batch-size 256 --bf16"`,
				`torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py $GPT_ARGS --train-iters 100000`),
			want: Features{Launcher: "torchrun", Program: "pretrain_gpt.py", Model: "gpt", ModelFrom: "path",
				BatchSize: 4, GlobalBatchSize: 256, Precision: "bf16", SeqLen: 2048, Steps: 100000, GPUs: 16,
				Params: 12 * 24 * 2048 * 2048, ParamsFrom: "shape", Layers: 24, Hidden: 2048},
		},
		"Megatron-DeepSpeed shape with vocabulary": {
			script: sh(`deepspeed pretrain_gpt.py --num-layers 12 --hidden-size 768 --vocab-size 50304 --fp16 --micro-batch-size 8 --deepspeed_config ds_zero1.json`),
			want: Features{Launcher: "deepspeed", Program: "pretrain_gpt.py", Model: "gpt2", ModelFrom: "path",
				BatchSize: 8, Precision: "fp16", ZeROStage: 1, Params: 12*12*768*768 + 50304*768, ParamsFrom: "shape+vocab", Layers: 12, Hidden: 768},
		},
		"NeMo Hydra overrides": {
			script: sh(`#SBATCH --gres=gpu:8`, `srun python megatron_gpt_pretraining.py --config-path=conf --config-name=megatron_gpt_config \`,
				`  trainer.devices=8 trainer.precision=bf16 model.micro_batch_size=4 model.global_batch_size=256 \`,
				`  model.num_layers=24 model.hidden_size=2048 model.encoder_seq_length=2048`),
			want: Features{Launcher: "srun", Program: "megatron_gpt_pretraining.py", Model: "gpt", ModelFrom: "config",
				BatchSize: 4, GlobalBatchSize: 256, Precision: "bf16", SeqLen: 2048, GPUs: 8, Params: 12 * 24 * 2048 * 2048, ParamsFrom: "shape", Layers: 24, Hidden: 2048},
		},
		"torchtune": {
			script: sh(`tune run --nproc_per_node 4 lora_finetune_distributed --config llama3/8B_lora batch_size=2 dtype=bf16`),
			want: Features{Launcher: "torchrun", Program: "lora_finetune_distributed", Model: "llama3-8b", ModelFrom: "config",
				BatchSize: 2, Precision: "bf16", GPUs: 4, Tuning: "lora"},
		},
		"torchtune single device": {
			script: sh(`tune run lora_finetune_single_device --config qwen2_5/7B_lora_single_device`),
			want:   Features{Launcher: "python", Program: "lora_finetune_single_device", Model: "qwen2.5-7b", ModelFrom: "config", Tuning: "lora"},
		},
		"model only in a config file name": {
			script: sh(`accelerate launch train.py --config configs/llama2-7b.yaml`),
			want:   Features{Launcher: "accelerate", Program: "train.py", Model: "llama2-7b", ModelFrom: "config"},
		},
		"LLaMA-Factory positional yaml": {
			script: sh(`FORCE_TORCHRUN=1 llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml`, `python train.py examples/train_lora/llama3_lora_sft.yaml`),
			want:   Features{Launcher: "python", Program: "llamafactory-cli train", Model: "llama3", ModelFrom: "config"},
		},
		"nanoGPT config file": {
			script: sh(`torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py --batch_size=12`),
			want:   Features{Launcher: "torchrun", Program: "train.py", Model: "gpt2", ModelFrom: "config", BatchSize: 12, GPUs: 8},
		},
		"model only in the job name": {
			script: sh(`#SBATCH -J sft-mistral-7b-run3`, `python finetune.py --lr 2e-5`),
			want:   Features{Launcher: "python", Program: "finetune.py", Model: "mistral-7b", ModelFrom: "job_name", JobName: "sft-mistral-7b-run3"},
		},
		"job name without a model": {
			script: sh(`#SBATCH -J myrun`, `python finetune.py`),
			want:   Features{Launcher: "python", Program: "finetune.py", JobName: "myrun"},
		},
		"exported environment variables": {
			script: sh(`export MODEL_NAME=Qwen/Qwen2-1.5B`, `export MICRO_BATCH_SIZE=4`, `export PRECISION=bf16`, `python train.py`),
			want: Features{Launcher: "python", Program: "train.py", Model: "qwen/qwen2-1.5b", ModelFrom: "env",
				BatchSize: 4, Precision: "bf16"},
		},
		"unexported variable is not the program's environment": {
			script: sh(`BATCH_SIZE=4`, `python train.py`),
			want:   Features{Launcher: "python", Program: "train.py"},
		},
		"command-line environment": {
			script: sh(`MODEL=gpt2-large BATCH_SIZE=6 python train.py`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "gpt2-large", ModelFrom: "env", BatchSize: 6},
		},
		"precision spellings": {
			script: sh(`python a.py --precision amp_bfloat16 --model m1`),
			want:   Features{Launcher: "python", Program: "a.py", Model: "m1", ModelFrom: "flag", Precision: "bf16"},
		},
		"accelerate --mixed_precision and --half": {
			script: sh(`accelerate launch --mixed_precision fp16 t.py --model m2`, `python b.py --half`),
			want:   Features{Launcher: "accelerate", Program: "t.py", Model: "m2", ModelFrom: "flag", Precision: "fp16"},
		},
		"--amp": {
			script: sh(`python train.py --model efficientnet_b0 --amp`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "efficientnet_b0", ModelFrom: "flag", Precision: "amp"},
		},
		"--mixed_precision bf16 on the program": {
			script: sh(`python train.py --model m3 --mixed_precision bf16`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "m3", ModelFrom: "flag", Precision: "bf16"},
		},
	}
	runFeatureCases(t, cases)
}

// TestBoundedWork: scripts built to make a reader work without end (a
// function calling itself, a variable doubled, an array doubled, deep
// nesting, eval of eval) are read in bounded time.
func TestBoundedWork(t *testing.T) {
	cases := map[string]string{
		"recursive function":             "f() { f; f; f; f; f; f; f; f; f; f; }\nf\n",
		"doubled variable":               "a=xxxxxxxxxxxxxxxx\n" + strings.Repeat("a=$a$a$a$a\n", 2000) + "python t.py --model $a\n",
		"doubled array":                  "a=(x y)\n" + strings.Repeat(`a=("${a[@]}" "${a[@]}")`+"\n", 2000) + "python t.py \"${a[@]}\"\n",
		"nested subshells":               strings.Repeat("(", 5000) + "python t.py" + strings.Repeat(")", 5000) + "\n",
		"eval of eval":                   "e='eval \"$e\"'\neval \"$e\"\n",
		"many variables, ifs":            strings.Repeat("v$RANDOM=1\n", 1) + genVars(1200) + strings.Repeat("if x; then a=1; else a=2; fi\n", 5000),
		"many variables, hidden sources": genVars(1020) + strings.Repeat("source /scratch/env.sh\n", 8000),
		"bash -c in bash -c":             strings.Repeat(`bash -c "`, 1) + "f(){ bash -c f; }; f" + "\"\n",
		// A switch given its value after "=" once sent the argument reader
		// back to the same word for ever (found at db6445c).
		"a precision switch given a value":  "python train.py --fp16=auto --amp=native data/\n",
		"a method switch given a value":     "python train.py --lora=x --gradient_checkpointing=full data/\n",
		"lines of options":                  "python t.py\n" + strings.Repeat("--a 1 --b 2 --c 3 --d 4\n", 19000),
		"unclosed quotes, line by line":     "for a in x; do\n" + strings.Repeat("python t.py --a='b \\\n", 3000) + "done\n",
		"a written script that runs itself": "cat > x.sh <<EOF\n./x.sh; ./x.sh\npython train.py\nEOF\nchmod +x x.sh\n./x.sh\n",
	}
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			done := make(chan time.Duration, 1)
			go func() {
				start := time.Now()
				ParseScript(script)
				done <- time.Since(start)
			}()
			select {
			case d := <-done:
				if d > 5*time.Second {
					t.Errorf("took %v", d)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("ParseScript did not return in 30s")
			}
		})
	}
}

func genVars(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "v%d=%d\n", i, i)
	}
	return b.String()
}

// cmpDiff compares features without their sources, which
// TestFeatureSources checks on their own.
func cmpDiff(want, got any) string {
	return cmp.Diff(want, got, cmpopts.IgnoreFields(Features{}, "From"))
}

// TestPlaceholders: the names a shared script leaves its user to fill in
// are no model and stand in for none.
func TestPlaceholders(t *testing.T) {
	for script, want := range map[string]string{
		"cd your_working_directory\nsrun python pretrain.py --batch_size 6\n":              "",
		"python train.py --model_name_or_path your_model_path\n":                           "",
		"python train.py --model_name_or_path /path/to/your-model --bf16\n":                "",
		"python train.py --model_name_or_path /path/to/llama-2-7b-hf\n":                    "llama-2-7b-hf",
		"cd /home/me/YourTTS\npython train.py --config recipes/vctk/yourtts/config.json\n": "yourtts",
	} {
		if f := ParseScript("#!/bin/bash\n#SBATCH --gres=gpu:1\n" + script).Features; f.Model != want {
			t.Errorf("%q: model %q (from %q), want %q", script, f.Model, f.From["model"], want)
		}
	}
}

// TestTrimPatterns: ${v#pat}, ${v##pat}, ${v%pat} and ${v%%pat} with one *
// at either end of a literal, as bash removes them.
func TestTrimPatterns(t *testing.T) {
	cases := map[string]string{
		`${V#*=}`:      "b=c",
		`${V##*=}`:     "c",
		`${P##*/}`:     "llama-2-7b.yaml",
		`${P#*/}`:      "work/configs/llama-2-7b.yaml",
		`${P%/*}`:      "/work/configs",
		`${P%%/*}`:     "",
		`${P%.*}`:      "/work/configs/llama-2-7b",
		`${P%*.yaml}`:  "/work/configs/llama-2-7b",
		`${V#--*}`:     "bs=b=c",
		`${V##--*}`:    "",
		`${V#x*}`:      "--bs=b=c",
		`${P%[0-9]*}`:  "${?}",
		`${P#*/*/}`:    "${?}",
		`${V%=*}`:      "--bs=b",
		`${V%%=*}`:     "--bs",
		`${V%%zz*}`:    "--bs=b=c",
		`${V#*zz}`:     "--bs=b=c",
		`${V%%*}`:      "${?}",
		`${V#"--bs="}`: "b=c",
	}
	for expr, want := range cases {
		r := newShellReader(func(command) {})
		r.setVar("V", shVar{vals: []string{"--bs=b=c"}})
		r.setVar("P", shVar{vals: []string{"/work/configs/llama-2-7b.yaml"}})
		stmts, ok := parseShell("X=" + expr)
		if !ok {
			t.Fatalf("%s does not parse", expr)
		}
		r.stmts(stmts)
		if got := r.vars["X"]; len(got.vals) != 1 || got.vals[0] != want {
			t.Errorf("%s = %v, want %q", expr, got.vals, want)
		}
	}
}

// TestLeadingCommentsKeepLines: the comment lines a script starts with are
// not lexed, and what follows keeps its line numbers.
func TestLeadingCommentsKeepLines(t *testing.T) {
	s := "#!/bin/bash\n#SBATCH --gres=gpu:1\n  # a note \\\n\n#SBATCH -J x\npython train.py \\\n  --bf16\n"
	if got := ParseScript(s).Features.From["precision"]; got != "line 6: --bf16" {
		t.Errorf("precision from %q, want line 6: --bf16", got)
	}
	b, err := io.ReadAll(withoutLeadingComments(s))
	if err != nil || string(b) != "\n\n\n\n\npython train.py \\\n  --bf16\n" {
		t.Errorf("read %q, %v", b, err)
	}
	if b, _ := io.ReadAll(withoutLeadingComments("# only a comment")); string(b) != "# only a comment" {
		t.Errorf("a script of one comment read as %q", b)
	}
}

// TestHeredocEscapes: a bare heredoc's body loses the backslashes that kept
// its $ from expansion, as bash writes it; a quoted one's is kept as it is.
func TestHeredocEscapes(t *testing.T) {
	cases := map[string]struct {
		script string
		want   Features
	}{
		"a bare delimiter: \\$ is the job's own variable": {
			script: sh(`BS=32`, `cat > job.sh <<EOF`, `python train.py --model \${MODEL:-resnet50} --batch_size $BS`, `EOF`, `bash job.sh`),
			want:   Features{Launcher: "python", Program: "train.py", Model: "resnet50", ModelFrom: "flag", BatchSize: 32},
		},
		"a quoted delimiter: nothing expanded, nothing dropped": {
			// job.sh holds \${MODEL:-resnet50}, a word bash does not expand,
			// and $BS, which it expands when job.sh runs.
			script: sh(`BS=32`, `cat > job.sh <<'EOF'`, `python train.py --model \${MODEL:-resnet50} --batch_size $BS`, `EOF`, `bash job.sh`),
			want:   Features{Launcher: "python", Program: "train.py", BatchSize: 32, Unknown: []string{"model"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmpDiff(tc.want, ParseScript(tc.script).Features); diff != "" {
				t.Errorf("features (-want +got):\n%s", diff)
			}
		})
	}
	if got := unescapeHdoc(`a \$X \\ \` + "`" + ` \n \` + "\n"); got != "a $X \\ ` \\n \\\n" {
		t.Errorf("unescapeHdoc = %q", got)
	}
}

// A template's holes in code a string holds are values to fill in, not
// redirections; a real redirection stays one.
func TestWithoutHoles(t *testing.T) {
	for in, want := range map[string]string{
		"python a.py --save <PATH TO CHECKPOINTS> --fp16":  "python a.py --save PLACEHOLDER --fp16",
		"export KEY=<your wandb api key> && accelerate x":  "export KEY=PLACEHOLDER && accelerate x",
		"python a.py <in.txt >out.txt":                     "python a.py <in.txt >out.txt",
		"sort < data.csv > sorted.csv":                     "sort < data.csv > sorted.csv",
		"cat <<EOF":                                        "cat <<EOF",
		"run <SLURM OPTIONS> <DIR>":                        "run PLACEHOLDER PLACEHOLDER",
		"a < b":                                            "a < b",
		"x <PATH\n> y":                                     "x <PATH\n> y",
		"train.py --a <Path to data> --b <path_to_ckpt> 2": "train.py --a <Path to data> --b PLACEHOLDER 2",
	} {
		if got := withoutHoles(in); got != want {
			t.Errorf("withoutHoles(%q) = %q, want %q", in, got, want)
		}
	}
	script := sh(`options="--num-layers 24 --tensorboard-dir <TENSORBOARD DIRECTORY> --fp16"`, `srun sh -c "python -u pretrain_gpt.py ${options}"`)
	if f := ParseScript(script).Features; f.Precision != "fp16" {
		t.Errorf("precision %q after a hole, want fp16", f.Precision)
	}
}

func TestRefersTo(t *testing.T) {
	for text, want := range map[string]bool{
		`SAE=artifacts/$MODEL`:         true,
		`--model "${MODEL}"`:           true,
		`${MODEL:-gpt2}`:               true,
		`echo $MODEL_NAME ${MODELS}`:   false,
		`MODEL=gpt2 # set, never used`: false,
		`$MODEL`:                       true,
	} {
		if got := refersTo(text, "MODEL"); got != want {
			t.Errorf("refersTo(%q, MODEL) = %v, want %v", text, got, want)
		}
	}
}

func TestIsoDate(t *testing.T) {
	for d, want := range map[string]bool{"2024-10-10": true, "2024_10_10": true, "20241010": true, "19991231": true,
		"2024-13-10": false, "2024-10_10": false, "mp_20_train": false, "12345678": false, "outputs": false} {
		if got := isoDate(d); got != want {
			t.Errorf("isoDate(%q) = %v, want %v", d, got, want)
		}
	}
}
