#!/usr/bin/env bash
# slurmctld's own cost of a submission, as sdiag sees it, in three
# configurations, each on a fresh test cluster (tests/cluster/up.sh DIR):
#
#   baseline     no job_submit plugin, no augurd
#   augur        plugin + augurd (what a site runs)
#   augur-reuse  plugin + augurd with shim.reuse_window 1s (the default in
#                etc/augur.yaml; the others run with it off): an identical
#                submission within 1 s of a decided one is answered inside
#                slurmctld
#   augurd-down  plugin, augurd stopped (fail-open: the plugin's cool-down,
#                AUGUR_TEST_SHIM_COOLDOWN, default 30s, skips augurd)
#
# Each: `sdiag -r`, N times `sbatch -H --parsable --gres=gpu:1 train.sh`
# (held: nothing runs), then REQUEST_SUBMIT_BATCH_JOB's count and ave_time
# from sdiag, then scancel. With R > 1 the triple is repeated, interleaved,
# and the median of the rounds is reported (sdiag is noisy on small hosts).
#
# Before measuring, each fresh cluster takes WARMUP (default 300) submissions
# under another name, then cancels them (see warmup below).
#
#   usage: [N=1000] [R=1] [WARMUP=300] [OUT=DIR/bench-submit.json] tests/bench/submit.sh [DIR]
#
# Exits non-zero when a submission failed or a check on the augur run failed
# (a job without an annotation, missing store rows). The ratio targets are
# reported, never asserted. The cluster is brought down at the end.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
CLUSTER="$REPO/tests/cluster"

DIR="${1:-$REPO/tests/.cluster}"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
N="${N:-1000}"
R="${R:-1}"
WARMUP="${WARMUP:-300}"
OUT="${OUT:-$DIR/bench-submit.json}"
TARGET=1.10
JOB_NAME=augur-bench-vit
WORK="$DIR/bench"

[[ "$N" =~ ^[1-9][0-9]*$ ]] || { echo "N must be a positive integer, not '$N'" >&2; exit 2; }
[[ "$R" =~ ^[1-9][0-9]*$ ]] || { echo "R must be a positive integer, not '$R'" >&2; exit 2; }
[[ "$WARMUP" =~ ^[0-9]+$ ]] || { echo "WARMUP must be a number, not '$WARMUP'" >&2; exit 2; }
for tool in sbatch sdiag squeue scancel sqlite3 jq awk; do
	command -v "$tool" >/dev/null || { echo "$tool not found (run tests/cluster/install-deps.sh)" >&2; exit 2; }
done

log() { printf '[bench %s] %s\n' "$(date +%T)" "$*" >&2; }

cleanup() {
	local rc=$?
	log "bringing the cluster down"
	"$CLUSTER/down.sh" "$DIR" >>"$WORK/down.log" 2>&1 || true
	exit "$rc"
}
mkdir -p "$WORK"
: >"$WORK/down.log"
trap cleanup EXIT

# ---------------------------------------------------------------- the job
# A realistic training script: #SBATCH header, environment, torchrun line.
SCRIPT="$WORK/train_vit.sh"
cat >"$SCRIPT" <<EOF
#!/bin/bash
#SBATCH --job-name=$JOB_NAME
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=1
#SBATCH --time=04:00:00
#SBATCH --output=$WORK/logs/%x-%j.out
# ViT-B/16 on ImageNet-1k, one GPU, mixed precision.
set -euo pipefail
module load cuda/12.1 nccl/2.18 2>/dev/null || true
source /opt/venvs/torch-2.1/bin/activate
export OMP_NUM_THREADS=\${SLURM_CPUS_PER_TASK:-1}
export NCCL_DEBUG=WARN
DATA=/datasets/imagenet-1k
CKPT=/scratch/\$USER/vit-b16/\$SLURM_JOB_ID
mkdir -p "\$CKPT"
torchrun --standalone --nproc_per_node=1 train.py \\
    --model vit_base_patch16_224 --data-path "\$DATA" \\
    --epochs 300 --batch-size 256 --lr 3e-3 --weight-decay 0.3 \\
    --amp --workers 8 --output-dir "\$CKPT"
EOF

# ---------------------------------------------------------------- helpers

# up CONFIG: a fresh cluster for CONFIG (its output goes to WORK/up-CONFIG.log).
up() {
	local cfg="$1" no_plugin=0 no_augurd=0
	local reuse=0s
	[[ "$cfg" == baseline ]] && no_plugin=1 no_augurd=1
	[[ "$cfg" == augur-reuse ]] && reuse=1s
	# augurd logs at info, as in production (the test cluster's file says
	# debug, which writes a line per decision).
	if ! AUGUR_TEST_NO_PLUGIN=$no_plugin AUGUR_TEST_NO_AUGURD=$no_augurd AUGUR_TEST_SHIM_REUSE=$reuse AUGUR_LOG_LEVEL=info \
		"$CLUSTER/up.sh" "$DIR" >"$WORK/up-$cfg.log" 2>&1; then
		cat "$WORK/up-$cfg.log" >&2
		log "up.sh failed for $cfg"
		exit 1
	fi
	if [[ "$cfg" == augurd-down ]]; then
		"$CLUSTER/augurd.sh" "$DIR" stop >>"$WORK/up-$cfg.log" 2>&1
	fi
	# shellcheck source=/dev/null # written by up.sh
	source "$DIR/env"
}

# sdiag_submit: "COUNT AVE_TIME" of REQUEST_SUBMIT_BATCH_JOB in the
# by-message-type section ("0 0" when it is not listed).
sdiag_submit() {
	sdiag | awk '
		/by message type/ { on = 1; next }
		/by user/ { on = 0 }
		on && $1 == "REQUEST_SUBMIT_BATCH_JOB" {
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^count:/) { sub(/^count:/, "", $i); c = $i }
				if ($i ~ /^ave_time:/) { sub(/^ave_time:/, "", $i); a = $i }
			}
		}
		END { printf "%d %d\n", c, a }'
}

# pctl P FILE: nearest-rank P-th percentile of the sorted numbers in FILE
# (max for P=100), or null when FILE is empty.
pctl() {
	awk -v p="$1" '{ v[NR] = $1 } END {
		if (NR == 0) { print "null"; exit }
		i = int(p / 100 * NR); if (i < p / 100 * NR) i++; if (i < 1) i = 1
		print v[i] }' "$2"
}

# median of the numbers on stdin ("null" for none).
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "null"; exit }
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Results, one line per round and configuration, and the failures.
RESULTS="$WORK/results.txt" # round cfg accepted count ave_us wall_s
: >"$WORK/reuse-stats.txt"
STATS="$WORK/store-stats.txt" # round rtt_n rtt_p50 rtt_p99 rtt_max dec_p50 dec_p99 dec_max
: >"$RESULTS"
: >"$STATS"
FAILED=0
fail() {
	log "FAIL: $*"
	FAILED=1
}

# bench ROUND CONFIG: one configuration, one round.
bench() {
	local round="$1" cfg="$2" ids="$WORK/ids-$2-$1.txt" errs="$WORK/sbatch-errors-$2-$1.txt"
	local i id t0 t1 wall accepted count ave
	log "round $round/$R: $cfg: bringing up a fresh cluster"
	up "$cfg"
	: >"$ids"
	: >"$errs"
	warmup "$round" "$cfg"
	sdiag -r >/dev/null
	log "round $round/$R: $cfg: $N x sbatch -H --gres=gpu:1"
	t0=$EPOCHREALTIME
	for ((i = 0; i < N; i++)); do
		if id="$(sbatch -H --parsable --gres=gpu:1 "$SCRIPT" 2>>"$errs")"; then
			echo "$id" >>"$ids"
		fi
	done
	t1=$EPOCHREALTIME
	read -r count ave < <(sdiag_submit)
	wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
	accepted="$(grep -cE '^[0-9]+(;.*)?$' "$ids" || true)"
	((accepted == N)) || fail "$cfg: $accepted of $N submissions accepted (errors: $errs: $(sort "$errs" | uniq -c | head -3))"
	((count == N)) || log "note: $cfg: sdiag counted $count REQUEST_SUBMIT_BATCH_JOB, not $N"
	echo "$round $cfg $accepted $count $ave $wall" >>"$RESULTS"
	log "round $round/$R: $cfg: accepted $accepted/$N, sdiag count $count ave_time ${ave}us, loop ${wall}s"

	case "$cfg" in
	augur) check_augur "$round" ;;
	augur-reuse) check_reuse "$round" ;;
	augurd-down)
		local annotated
		annotated="$(squeue --json | jq --arg n "$JOB_NAME" '[.jobs[] | select(.name == $n and ((.admin_comment // "") | startswith("augur:")))] | length')"
		log "round $round/$R: $cfg: $annotated jobs annotated (expected 0: augurd is down)"
		;;
	esac

	scancel --user="$(id -un)" || fail "$cfg: scancel failed"
}

# warmup ROUND CONFIG: WARMUP submissions under another job name, then
# cancelled: a freshly started slurmctld (and augurd) serves its first few
# hundred submissions markedly slower in every configuration, the plugin-less
# one included (measured: 600-720 us against 420-490 us later), and a site
# runs both for months. WARMUP=0 measures the cold start instead.
warmup() {
	local i
	((WARMUP > 0)) || return 0
	log "round $1/$R: $2: $WARMUP warm-up submissions (not measured)"
	for ((i = 0; i < WARMUP; i++)); do
		sbatch -H --parsable --gres=gpu:1 --job-name=augur-bench-warmup "$SCRIPT" >/dev/null 2>>"$WORK/warmup-errors.txt" || true
	done
	scancel --user="$(id -un)" --name=augur-bench-warmup || true
}

# check_reuse ROUND: with shim.reuse_window 1s, every job annotated and
# recorded too (the reused ones by the plugin's reports), and how many
# submissions asked augurd.
check_reuse() {
	local db="$DIR/var/augur.db" annotated rows reused i
	annotated="$(squeue --json | jq --arg n "$JOB_NAME" '[.jobs[] | select(.name == $n and ((.admin_comment // "") | startswith("augur:")))] | length')"
	((annotated == N)) || fail "augur-reuse: $annotated of $N jobs carry an augur: annotation"
	for ((i = 0; i < 50; i++)); do
		rows="$(sqlite3 -cmd '.timeout 5000' "$db" "SELECT count(*) FROM submissions WHERE job_name = '$JOB_NAME'")"
		((rows >= N)) && break
		sleep 0.2
	done
	((rows == N)) || fail "augur-reuse: augurd's store has $rows submission rows for $JOB_NAME, not $N"
	reused="$(sqlite3 -cmd '.timeout 5000' "$db" "SELECT count(*) FROM submissions WHERE job_name = '$JOB_NAME' AND decision_json LIKE '%reused_of%'")"
	echo "$1 $reused" >>"$WORK/reuse-stats.txt"
	log "round $1/$R: augur-reuse: $annotated/$N annotated, $rows store rows, $reused answered from an earlier decision, $((N - reused)) asked augurd"
}

# check_augur ROUND: every job annotated, N rows in augurd's store; the
# shim's round trips and augurd's decision times from the store.
check_augur() {
	local round="$1" db="$DIR/var/augur.db" annotated rows i rtt="$WORK/rtt-$1.txt" dec="$WORK/decision-$1.txt"
	annotated="$(squeue --json | jq --arg n "$JOB_NAME" '[.jobs[] | select(.name == $n and ((.admin_comment // "") | startswith("augur:")))] | length')"
	((annotated == N)) || fail "augur: $annotated of $N jobs carry an augur: annotation"
	# augurd commits in batches (store.commit_wait): give the last ones a moment.
	for ((i = 0; i < 50; i++)); do
		rows="$(sqlite3 -cmd '.timeout 5000' "$db" "SELECT count(*) FROM submissions WHERE job_name = '$JOB_NAME'")"
		((rows >= N)) && break
		sleep 0.2
	done
	((rows == N)) || fail "augur: augurd's store has $rows submission rows for $JOB_NAME, not $N"
	sqlite3 -cmd '.timeout 5000' "$db" "
		SELECT v FROM (SELECT json_extract(request_json, '\$.shim.last_round_trip_us') AS v
		               FROM submissions WHERE job_name = '$JOB_NAME')
		WHERE v IS NOT NULL ORDER BY v" >"$rtt"
	sqlite3 -cmd '.timeout 5000' "$db" "
		SELECT decision_us FROM submissions WHERE job_name = '$JOB_NAME' ORDER BY decision_us" >"$dec"
	echo "$round $(wc -l <"$rtt") $(pctl 50 "$rtt") $(pctl 99 "$rtt") $(pctl 100 "$rtt")" \
		"$(pctl 50 "$dec") $(pctl 99 "$dec") $(pctl 100 "$dec")" >>"$STATS"
	log "round $round/$R: augur: $annotated/$N annotated, $rows store rows"
}

# ---------------------------------------------------------------- run
log "N=$N submissions per configuration, R=$R round(s), cluster in $DIR"
log "shim cool-down for augurd-down: ${AUGUR_TEST_SHIM_COOLDOWN:-30s}"
for ((r = 1; r <= R; r++)); do
	for cfg in baseline augur augur-reuse augurd-down; do
		bench "$r" "$cfg"
	done
done

# ---------------------------------------------------------------- report
# col CONFIG FIELD: the FIELD (4 = ave_us, 5 = wall_s) of CONFIG, one per round.
col() { awk -v c="$1" -v f="$2" '$2 == c { print $f }' "$RESULTS"; }
scol() { awk -v f="$1" '{ print $f }' "$STATS"; }

base="$(col baseline 5 | median)"
aug="$(col augur 5 | median)"
reuse="$(col augur-reuse 5 | median)"
down="$(col augurd-down 5 | median)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "null" }'; }
ratio_aug="$(ratio "$aug" "$base")"
ratio_reuse="$(ratio "$reuse" "$base")"
ratio_down="$(ratio "$down" "$base")"
added_down="$(awk -v d="$down" -v b="$base" -v n="$N" 'BEGIN { printf "%.3f", (d - b) * n / 1e6 }')"
verdict() { awk -v r="$1" -v t="$TARGET" 'BEGIN { print (r != "null" && r <= t) ? "met" : "missed" }'; }

echo
echo "slurmctld REQUEST_SUBMIT_BATCH_JOB cost (sdiag), N=$N per configuration"
printf '%-6s %-12s %9s %8s %12s %10s %10s\n' round config accepted count ave_us wall_s per_job_ms
while read -r round cfg accepted count ave wall; do
	printf '%-6s %-12s %9s %8s %12s %10s %10s\n' "$round" "$cfg" "$accepted" "$count" "$ave" "$wall" \
		"$(awk -v w="$wall" -v n="$N" 'BEGIN { printf "%.2f", w * 1000 / n }')"
done <"$RESULTS"
echo
if ((R > 1)); then echo "medians of $R rounds:"; fi
printf '  %-26s %8s us\n' "baseline (no plugin)" "$base"
printf '  %-26s %8s us   ratio %sx   target <= %sx: %s\n' "plugin + augurd, no reuse" "$aug" "$ratio_aug" "$TARGET" "$(verdict "$ratio_aug")"
printf '  %-26s %8s us   ratio %sx   target <= %sx: %s   (%s of %d answered in slurmctld, median)\n' "plugin + augurd, reuse 1s" "$reuse" "$ratio_reuse" "$TARGET" "$(verdict "$ratio_reuse")" "$(awk '{ print $2 }' "$WORK/reuse-stats.txt" | median)" "$N"
printf '  %-26s %8s us   ratio %sx   target <= %sx: %s\n' "plugin, augurd stopped" "$down" "$ratio_down" "$TARGET" "$(verdict "$ratio_down")"
printf '  %-26s %8s s over %d submissions\n' "added with augurd stopped" "$added_down" "$N"
echo
echo "augurd's store, plugin + augurd (us; shim round trip = the plugin's own measurement):"
printf '%-6s %8s %10s %10s %10s %13s %13s %13s\n' round rtt_n rtt_p50 rtt_p99 rtt_max decision_p50 decision_p99 decision_max
while read -r round n a b c d e f; do
	printf '%-6s %8s %10s %10s %10s %13s %13s %13s\n' "$round" "$n" "$a" "$b" "$c" "$d" "$e" "$f"
done <"$STATS"

num() { if [[ -z "$1" || "$1" == null ]]; then echo null; else echo "$1"; fi; }
rounds_json="$(awk '{ printf "{\"round\":%d,\"config\":\"%s\",\"accepted\":%d,\"sdiag_count\":%d,\"ave_us\":%d,\"wall_s\":%s}\n", $1, $2, $3, $4, $5, $6 }' "$RESULTS" | jq -s .)"
mkdir -p "$(dirname "$OUT")"
jq -n \
	--argjson n "$N" --argjson rounds "$R" --argjson warmup "$WARMUP" \
	--argjson base "$(num "$base")" --argjson aug "$(num "$aug")" --argjson down "$(num "$down")" \
	--argjson ra "$(num "$ratio_aug")" --argjson rd "$(num "$ratio_down")" --argjson added "$(num "$added_down")" \
	--argjson reuse "$(num "$reuse")" --argjson rr "$(num "$ratio_reuse")" \
	--argjson rtt50 "$(num "$(scol 3 | median)")" --argjson rtt99 "$(num "$(scol 4 | median)")" \
	--argjson rttmax "$(num "$(scol 5 | median)")" \
	--argjson dec50 "$(num "$(scol 6 | median)")" --argjson dec99 "$(num "$(scol 7 | median)")" \
	--argjson decmax "$(num "$(scol 8 | median)")" \
	--argjson wb "$(num "$(col baseline 6 | median)")" --argjson wa "$(num "$(col augur 6 | median)")" \
	--argjson wd "$(num "$(col augurd-down 6 | median)")" \
	--argjson target "$TARGET" --argjson per_round "$rounds_json" --argjson ok "$((FAILED == 0))" \
	'{n: $n, rounds: $rounds, warmup: $warmup,
	  baseline_avg_us: $base, augur_avg_us: $aug, augurd_down_avg_us: $down,
	  ratio_augur: $ra, ratio_down: $rd, target_ratio: $target,
	  augur_reuse_avg_us: $reuse, ratio_augur_reuse: $rr,
	  added_total_seconds_down: $added,
	  shim_rtt_p50_us: $rtt50, shim_rtt_p99_us: $rtt99, shim_rtt_max_us: $rttmax,
	  decision_p50_us: $dec50, decision_p99_us: $dec99, decision_max_us: $decmax,
	  wall_seconds: {baseline: $wb, augur: $wa, augurd_down: $wd},
	  all_accepted_and_checked: ($ok == 1),
	  per_round: $per_round}' >"$OUT"
echo
echo "JSON summary: $OUT"

if ((FAILED)); then
	log "some submissions failed or a check failed (see above)"
	exit 1
fi
