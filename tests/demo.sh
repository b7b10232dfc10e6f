#!/usr/bin/env bash
# A guided tour of Augur on the local test cluster (run as root):
#
#   1. four realistic training jobs, never seen before: annotated from what the
#      binaries ship (src=prior for image models, src=formula for transformers)
#   2. Augur learns: earlier runs of two of them are recorded in its store
#   3. the same jobs again: a typeless request is placed on a GPU type that
#      fits, gets a priority boost; a job that cannot fit a T4 is refused
#   4. fail-open: with augurd stopped, submissions still go through
#   5. what augurd decided, and its metrics
#   6. idle GPUs: a job holding two GPUs at 0% is warned and cancelled (this
#      step runs its jobs, on the stand-in GPUs, for about half a minute)
#   7. GPU out-of-memory recovery: a T4 job that dies at its card's ceiling is
#      requeued onto an A100 and completes there (about two and a half
#      minutes, most of it Slurm's own wait before a requeued job may start)
#
# Steps 1-5 submit every job held (-H), so nothing runs on the stand-in GPUs.
# The cluster is left running at the end.
#
#   usage: tests/demo.sh [DIR]        (default tests/.cluster; make demo)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
CLUSTER="$REPO/tests/cluster"
AUGUR="${AUGUR_BIN:-$REPO/bin}/augur"

DIR="${1:-$REPO/tests/.cluster}"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
DEMO="$DIR/demo"
DB="$DIR/var/augur.db"
METRICS_PORT="${AUGUR_TEST_METRICS_PORT:-19467}"

for tool in sbatch squeue scontrol sqlite3 jq curl; do
	command -v "$tool" >/dev/null || { echo "$tool not found (run tests/cluster/install-deps.sh)" >&2; exit 2; }
done
[[ -x "$AUGUR" ]] || { echo "$AUGUR missing: run 'make build build-test-plugin' first" >&2; exit 2; }

if [[ -t 1 ]]; then
	BOLD=$'\e[1m' DIM=$'\e[2m' RESET=$'\e[0m'
else
	BOLD="" DIM="" RESET=""
fi

# header TITLE: a header; step TITLE: a numbered one (the story's steps).
STEP=0
header() { printf '\n%s== %s ==%s\n' "$BOLD" "$1" "$RESET"; }
step() {
	STEP=$((STEP + 1))
	header "$STEP. $1"
}
# fd 3 is the terminal's stdout, for commands echoed inside $(...).
exec 3>&1
say() { printf '%s\n' "$*"; }
# run CMD...: show a command, then run it.
run() {
	printf '%s$ %s%s\n' "$DIM" "$*" "$RESET"
	"$@"
}
sql() { sqlite3 -cmd '.timeout 5000' "$DB" "$@"; }

# ---------------------------------------------------------------- cluster
header "Setup: bring up the test cluster (slurmctld + Augur plugin, slurmd, augurd)"
say "tests/cluster/up.sh $DIR   (fresh state, empty augurd store)"
if ! AUGUR_TEST_KEEP_DB=0 AUGUR_TEST_NO_PLUGIN=0 AUGUR_TEST_NO_AUGURD=0 \
	"$CLUSTER/up.sh" "$DIR" >"$DIR/demo-up.log" 2>&1; then
	cat "$DIR/demo-up.log" >&2
	echo "up.sh failed" >&2
	exit 1
fi
grep -E '^  (node|augurd|plugin) ' "$DIR/demo-up.log" || true
# shellcheck source=/dev/null # written by up.sh
source "$DIR/env"

# ---------------------------------------------------------------- scripts
mkdir -p "$DEMO/logs"
cd "$DEMO"

cat >resnet50.sh <<'EOF'
#!/bin/bash
#SBATCH --job-name=resnet50-imagenet
#SBATCH --partition=gpu
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=1
#SBATCH --mem=2G
#SBATCH --time=08:00:00
#SBATCH --output=logs/%x-%j.out
# ResNet-50 on ImageNet-1k, one GPU, mixed precision.
module load cuda/12.1
source /opt/venvs/torch-2.1/bin/activate
python train_imagenet.py --arch resnet50 --data /datasets/imagenet-1k \
    --epochs 90 --batch-size 256 --lr 0.1 --amp --workers 8 \
    --output /scratch/$USER/resnet50/$SLURM_JOB_ID
EOF

cat >vit.sh <<'EOF'
#!/bin/bash
#SBATCH --job-name=vit-b16
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --gpus=4
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
#SBATCH --time=12:00:00
#SBATCH --output=logs/%x-%j.out
# ViT-B/16 on ImageNet-1k, 4 GPUs on one node (DDP via torchrun).
module load cuda/12.1 nccl/2.18
source /opt/venvs/torch-2.1/bin/activate
export OMP_NUM_THREADS=4
torchrun --standalone --nproc_per_node=4 train_vit.py \
    --model vit_base_patch16_224 --data-path /datasets/imagenet-1k \
    --epochs 300 --batch-size 128 --lr 3e-3 --weight-decay 0.3 --amp \
    --output-dir /scratch/$USER/vit-b16/$SLURM_JOB_ID
EOF

cat >llama2-7b-ft.sh <<'EOF'
#!/bin/bash
#SBATCH --job-name=llama2-7b-sft
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --gres=gpu:a100:2
#SBATCH --cpus-per-task=1
#SBATCH --mem=8G
#SBATCH --time=1-00:00:00
#SBATCH --output=logs/%x-%j.out
# Llama-2-7b supervised fine-tune, DeepSpeed ZeRO-2, bf16, 2 GPUs.
module load cuda/12.1
source /opt/venvs/hf-4.35/bin/activate
deepspeed --num_gpus=2 finetune.py \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --dataset tatsu-lab/alpaca --bf16 --deepspeed ds_zero2.json \
    --per_device_train_batch_size 8 --gradient_accumulation_steps 4 \
    --num_train_epochs 3 --learning_rate 2e-5 \
    --output_dir /scratch/$USER/llama2-7b-sft/$SLURM_JOB_ID
EOF

cat >bert.sh <<'EOF'
#!/bin/bash
#SBATCH --job-name=bert-base-glue
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --gpus-per-node=t4:1
#SBATCH --cpus-per-task=1
#SBATCH --mem=2G
#SBATCH --time=02:00:00
#SBATCH --output=logs/%x-%j.out
# BERT-base fine-tune on GLUE/MNLI, one T4.
source /opt/venvs/hf-4.35/bin/activate
python run_glue.py --model_name_or_path bert-base-uncased --task_name mnli \
    --do_train --do_eval --max_seq_length 128 --per_device_train_batch_size 32 \
    --learning_rate 2e-5 --num_train_epochs 3 --fp16 \
    --output_dir /scratch/$USER/bert-mnli/$SLURM_JOB_ID
EOF

# ---------------------------------------------------------------- helpers

# job_json ID: the job as squeue --json shows it.
job_json() { squeue --json | jq --argjson id "$1" '.jobs[] | select(.job_id == $id)'; }

# gpu_request ID: the GPU request as Slurm stored it (the non-empty tres_per_*).
gpu_request() {
	job_json "$1" | jq -r '[to_entries[] | select((.key | test("^tres_per_(node|job|task|socket)$")) and .value != "")
		| "\(.key)=\(.value)"] | if length == 0 then "none" else join(" ") end'
}

# annotation ID: the job's AdminComment ("" when it has none).
annotation() { job_json "$1" | jq -r '.admin_comment // ""'; }

# show_job ID: one job's id, GPU request and annotation.
show_job() {
	local ann
	ann="$(annotation "$1")"
	printf '  job %-5s %s\n' "$1" "$(job_json "$1" | jq -r .name)"
	printf '    GPU request (Slurm)  %s\n' "$(gpu_request "$1")"
	printf '    AdminComment         %s\n' "${ann:-(none)}"
}

# submit ARGS...: sbatch -H --parsable ARGS; prints the job id.
submit() {
	printf '%s$ sbatch -H %s%s\n' "$DIM" "$*" "$RESET" >&3
	sbatch -H --parsable "$@" | cut -d';' -f1
}

# signature_of ID: the script signature augurd stored for job ID's submission
# (found by the token in its AdminComment; augurd commits within ~20 ms).
signature_of() {
	local tok sig="" i
	tok="$(annotation "$1" | sed -n 's/^augur:tok=\([0-9a-f]*\).*/\1/p')"
	[[ -n "$tok" ]] || { echo "job $1 has no augur token" >&2; return 1; }
	for ((i = 0; i < 50; i++)); do
		sig="$(sql "SELECT signature FROM submissions WHERE token = '$tok'")"
		[[ -n "$sig" ]] && break
		sleep 0.1
	done
	[[ -n "$sig" ]] || { echo "augurd's store has no submission $tok" >&2; return 1; }
	echo "$sig"
}

# ---------------------------------------------------------------- 1
step "Four training jobs Augur has never seen"
say "Each script is submitted held (-H): Slurm keeps it queued, nothing runs."
say "The plugin asks augurd about every submission and appends its answer to"
say "the job's AdminComment: a token, the predicted peak GPU memory per GPU and"
say "runtime, and where they came from. This site has no history yet, so memory"
say "comes from what the binaries ship: src=prior for the image models timm's"
say "benchmark knows (ResNet-50, ViT-B/16), src=formula for the transformers (from"
say "size, batch, sequence length, precision; the Llama job states no sequence"
say "length or checkpointing, so 2048 tokens without it is assumed, and it would"
say "not fit). Runtime is still the time limit (src=.../default)."
declare -A JOB
for s in resnet50 vit llama2-7b-ft bert; do
	JOB[$s]="$(submit "$s.sh")"
done
for s in resnet50 vit llama2-7b-ft bert; do
	show_job "${JOB[$s]}"
done

# ---------------------------------------------------------------- 2
step "Augur learns from finished runs"
say "In production the node agent (augur-node) records each finished job's peak"
say "GPU memory and runtime. Here we write earlier runs straight into augurd's"
say "store ($DB; SQLite in WAL mode, so a second writer is fine while augurd runs)."
say "Runs are matched to new submissions by user and script signature (the"
say "script with numbers and paths abstracted), taken from the step-1 submissions:"
UID_NOW="$(id -u)"
SIG_VIT="$(signature_of "${JOB[vit]}")"
SIG_LLAMA="$(signature_of "${JOB[llama2-7b-ft]}")"
printf '  vit.sh           signature %s\n' "$SIG_VIT"
printf '  llama2-7b-ft.sh  signature %s\n' "$SIG_LLAMA"
NOW_NS="$(date +%s%N)"
DAY_NS=86400000000000
sql "INSERT INTO outcomes (job_id, token, user_id, signature, gpu_type, gpus,
                           peak_gpu_mem_mib, runtime_sec, exit_state, ended_at_ns, source)
     VALUES (900101, '', $UID_NOW, '$SIG_VIT',   'a100', 4, 30000, 1500, 'COMPLETED', $NOW_NS - 3 * $DAY_NS, 'demo'),
            (900102, '', $UID_NOW, '$SIG_VIT',   'a100', 4, 29400, 1440, 'COMPLETED', $NOW_NS - 2 * $DAY_NS, 'demo'),
            (900201, '', $UID_NOW, '$SIG_LLAMA', 'a100', 2, 39000,  610, 'FAILED',    $NOW_NS - 2 * $DAY_NS, 'demo'),
            (900202, '', $UID_NOW, '$SIG_LLAMA', 'a100', 2, 38800,  590, 'FAILED',    $NOW_NS - 1 * $DAY_NS, 'demo')"
say "augurd caches each job's history for 2 s; reports from the node agent clear"
say "that cache at once, but these rows were written behind augurd's back, so we"
say "give it those 2 seconds."
sleep 2.5
say "Recorded runs (outcomes table):"
sql -header -column "SELECT job_id, signature, gpu_type, gpus, peak_gpu_mem_mib AS peak_mib,
                            runtime_sec, exit_state FROM outcomes ORDER BY job_id"

# ---------------------------------------------------------------- 3
step "The same jobs again: placed, prioritised, or refused"
say "vit.sh again, unchanged: it asks for 4 GPUs of any type (--gpus=4). Its runs"
say "peaked at ~30 GB, more than a T4's 16 GB, so Augur names the first type that"
say "fits (a100), and gives it an initial SiteFactor from its predicted runtime."
say "(--begin=now+1hour keeps it from starting when we release it to read its priority.)"
VIT2="$(submit --begin=now+1hour vit.sh)"
show_job "$VIT2"
run scontrol release "$VIT2"
PRIO="$(job_json "$VIT2" | jq -r .priority)"
run scontrol hold "$VIT2"
SITE_FACTOR="$("$AUGUR" decisions --json -n 20 |
	jq -r --arg tok "$(annotation "$VIT2" | sed -n 's/^augur:tok=\([0-9a-f]*\).*/\1/p')" \
		'.[] | select(.token == $tok) | .decision.site_factor // "none"')"
printf '    SiteFactor (augurd)  %s\n' "$SITE_FACTOR"
printf '    Priority (released)  %s   (priority = SiteFactor here: all other weights are 0)\n' "$PRIO"
printf '    Why                  %s\n' "$("$AUGUR" decisions --json -n 20 |
	jq -r --arg tok "$(annotation "$VIT2" | sed -n 's/^augur:tok=\([0-9a-f]*\).*/\1/p')" \
		'.[] | select(.token == $tok) | .decision.prediction.Why')"

say ""
say "llama2-7b-ft.sh on a T4 (--gres=gpu:t4:1 on the command line overrides the"
say "script's gpu:a100:2). Both earlier runs peaked above 38 GB: on a 16 GB T4 it"
say "would die of GPU out-of-memory, so Augur refuses it at submission:"
printf '%s$ sbatch -H --gres=gpu:t4:1 llama2-7b-ft.sh%s\n' "$DIM" "$RESET"
if out="$(sbatch -H --parsable --gres=gpu:t4:1 llama2-7b-ft.sh 2>&1)"; then
	echo "UNEXPECTED: sbatch accepted it as job $out" >&2
	exit 1
else
	rc=$?
	printf '%s\n' "$out" | sed 's/^/    /'
	say "    (sbatch exit status $rc: the job was never queued)"
fi

# ---------------------------------------------------------------- 4
step "Fail-open: augurd down, submissions still go through"
say "Augur must never stand between users and Slurm. Stop augurd and submit:"
run "$CLUSTER/augurd.sh" "$DIR" stop 2>&1
DOWN_JOB="$(submit resnet50.sh)"
show_job "$DOWN_JOB"
say "The plugin accepted it unchanged and said so in slurmctld's log:"
printf '%s$ grep job_submit/augur %s | tail -2%s\n' "$DIM" "$DIR/log/slurmctld.log" "$RESET"
grep 'job_submit/augur' "$DIR/log/slurmctld.log" | tail -2 | sed 's/^/    /'
say "Start augurd again; the next submission is decided as usual:"
run "$CLUSTER/augurd.sh" "$DIR" start 2>&1
UP_JOB="$(submit resnet50.sh)"
show_job "$UP_JOB"

# ---------------------------------------------------------------- 5
step "What augurd decided, and its metrics"
run "$AUGUR" decisions -n 10
say ""
printf '%s$ curl -s 127.0.0.1:%s/metrics | grep ^augur_ | grep -v _bucket | head -20%s\n' "$DIM" "$METRICS_PORT" "$RESET"
say "(augurd's counters start at its restart in step 4; augur_shim_fail_open_total is"
say " reported by the plugin, which counted the submission it let through while augurd was down)"
curl -s --max-time 5 "127.0.0.1:$METRICS_PORT/metrics" | grep '^augur_' | grep -v '_bucket' | head -20 || true

# ---------------------------------------------------------------- 6
step "Idle GPUs: flagged, warned, cancelled"
say "The node agent sends augurd each running job's GPU use (every 2 s here, every"
say "minute by default). With live.idle_gpu on, a job whose GPUs all stay under 5%"
say "SM utilisation past its grace and window is flagged; with cancel on, warned,"
say "then cancelled. Seconds here, where a site would use minutes:"
IDLE_ENV=(AUGUR_LIVE_IDLE_GPU_ENABLED=true AUGUR_LIVE_IDLE_GPU_CANCEL=true AUGUR_LIVE_IDLE_GPU_GRACE=2s
	AUGUR_LIVE_IDLE_GPU_WINDOW=6s AUGUR_LIVE_IDLE_GPU_WARN_DELAY=5s)
say "    ${IDLE_ENV[*]}"
"$CLUSTER/augurd.sh" "$DIR" stop >/dev/null 2>&1
env "${IDLE_ENV[@]}" "$CLUSTER/augurd.sh" "$DIR" start >/dev/null 2>&1
cat >hold-gpus.sh <<'EOF'
#!/bin/bash
#SBATCH --job-name=notebook-left-open
#SBATCH --time=60
while true; do sleep 1 & wait $!; done
EOF
say "Two jobs of 2 a100s and a 1-hour limit each; the stand-in GPUs show what the"
say "job's environment says (AUGUR_FAKE_GPU_SM_UTIL): one at 0%, one at 85%."
IDLE_JOB="$(sbatch --parsable --gres=gpu:a100:2 -o /dev/null \
	--export=ALL,AUGUR_FAKE_GPU_MEM_MIB=3000,AUGUR_FAKE_GPU_SM_UTIL=0 hold-gpus.sh)"
BUSY_JOB="$(sbatch --parsable --gres=gpu:a100:2 -o /dev/null \
	--export=ALL,AUGUR_FAKE_GPU_MEM_MIB=3000,AUGUR_FAKE_GPU_SM_UTIL=85 hold-gpus.sh)"
say "    idle job $IDLE_JOB, busy job $BUSY_JOB; waiting for augurd to act (about 30 s)"
for ((i = 0; i < 120; i++)); do
	state="$(squeue -h -j "$IDLE_JOB" -o %T 2>/dev/null || true)"
	[[ "$state" == RUNNING || "$state" == PENDING || "$state" == CONFIGURING ]] || break
	sleep 1
done
say "    idle job: $(scontrol show job "$IDLE_JOB" | grep -o 'JobState=[A-Z]*')    busy job: $(scontrol show job "$BUSY_JOB" | grep -o 'JobState=[A-Z]*')"
printf '%s$ augur job %s | grep live.idle_gpu%s\n' "$DIM" "$IDLE_JOB" "$RESET"
"$AUGUR" job "$IDLE_JOB" 2>&1 | grep 'live.idle_gpu' | sed 's/^/    /' || true
printf '%s$ augur report | grep -A1 "Idle GPUs"%s\n' "$DIM" "$RESET"
"$AUGUR" report 2>/dev/null | grep -A1 'Idle GPUs' | sed 's/^/    /' || true
scancel "$BUSY_JOB"

# ---------------------------------------------------------------- 7
step "GPU out-of-memory recovery: requeued onto a larger GPU"
say "A CUDA out-of-memory error is an exception in the job's own process: Slurm sees"
say "only FAILED. With live.oom_recovery on, a failed job whose GPU held 95% of its"
say "memory in its last 15 s is requeued held, its request moved to the smallest GPU"
say "type of its partition and constraint that holds its peak plus a margin, and"
say "released. Slurm keeps a requeued batch job back for CredExpire (120 s) before"
say "it may start again, so this step takes about two and a half minutes. (The"
say "stand-in GPUs all report 40 GiB, so here a T4 is full at 40 GiB.)"
OOM_ENV=(AUGUR_LIVE_OOM_RECOVERY_ENABLED=true)
say "    ${OOM_ENV[*]}"
"$CLUSTER/augurd.sh" "$DIR" stop >/dev/null 2>&1
env "${OOM_ENV[@]}" "$CLUSTER/augurd.sh" "$DIR" start >/dev/null 2>&1
cat >oom.sh <<'EOF'
#!/bin/bash
#SBATCH --job-name=vit-l-finetune
#SBATCH --requeue
# The stand-in GPU shows the memory the job's environment names. The first
# run fills its card and dies as a CUDA out-of-memory error does; the run
# Augur requeues onto a larger card fits and completes.
if [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then
	export AUGUR_FAKE_GPU_MEM_MIB=30000 AUGUR_FAKE_GPU_SM_UTIL=90
	sleep 30
	exit 0
fi
export AUGUR_FAKE_GPU_MEM_MIB=40000 AUGUR_FAKE_GPU_SM_UTIL=90
sleep 8
echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB" >&2
exit 1
EOF
OOM_JOB="$(sbatch --parsable --gres=gpu:t4:1 -o /dev/null oom.sh)"
say "    job $OOM_JOB asks for --gres=gpu:t4:1; waiting for it to fail, be requeued and complete"
show="" state="" restarts=0
for ((i = 0; i < 240; i++)); do
	show="$(scontrol show job -o "$OOM_JOB" 2>/dev/null || true)"
	state="$(grep -o 'JobState=[A-Z]*' <<<"$show" || true)"
	restarts="$(grep -o 'Restarts=[0-9]*' <<<"$show" | cut -d= -f2 || true)"
	[[ "$state" == JobState=COMPLETED || ("$state" == JobState=FAILED && "${restarts:-0}" -gt 0) ]] && break
	sleep 1
done
printf '%s$ scontrol show job %s | grep -E "JobState|Restarts|AdminComment|TresPerNode"%s\n' "$DIM" "$OOM_JOB" "$RESET"
scontrol show job "$OOM_JOB" | grep -E 'JobState|Restarts|AdminComment|TresPerNode' | sed 's/^ */    /' || true
# The report counts the run that completed once its node's report is in.
for ((i = 0; i < 30; i++)); do
	"$AUGUR" report 2>/dev/null | grep -A1 'out-of-memory recovery' | grep -q ', 0 of them completed' || break
	sleep 1
done
printf '%s$ augur job %s | grep -i -e oom -e out-of-memory%s\n' "$DIM" "$OOM_JOB" "$RESET"
"$AUGUR" job "$OOM_JOB" 2>&1 | grep -i -e 'oom' -e 'out-of-memory' | sed 's/^/    /' || true
printf '%s$ augur report | grep -A1 "out-of-memory recovery"%s\n' "$DIM" "$RESET"
"$AUGUR" report 2>/dev/null | grep -A1 'out-of-memory recovery' | sed 's/^/    /' || true
"$CLUSTER/augurd.sh" "$DIR" stop >/dev/null 2>&1
"$CLUSTER/augurd.sh" "$DIR" start >/dev/null 2>&1

# ---------------------------------------------------------------- end
header "The cluster is still running: try it yourself"
cat <<EOF
  source $DIR/env
  squeue -O JobID:7,Name:19,Reason:14,tres-per-job:17,tres-per-node:17
  scontrol show job ${JOB[vit]} | grep -E 'AdminComment|TresPer'
  $AUGUR decisions -n 20
  sbatch -H $DEMO/bert.sh
Stop it:
  $CLUSTER/down.sh $DIR
EOF
