#!/bin/bash
# The device check: augur-node (the production build, real NVML through
# go-nvml) samples a real GPU while real PyTorch training jobs run, each
# framed by augur-node's own Prolog and Epilog as slurmd would run them.
# It shows what the node reports for each job (peak, memory when it ended,
# utilisation, the OOM evidence of live.oom_recovery) beside what PyTorch
# itself saw, and Augur's prediction for the same script. The agent turns
# NVML accounting on (node.nvml_accounting; AUGUR_DEVICE_ACCOUNTING=false
# leaves it as it is), so per-process peaks between samples count; the
# GPU's accounting mode is put back as it was at the end.
#
#   make build && tests/device/run.sh [OUTDIR] [JOB...]
#
# Needs: a GPU, python3 with torch, torchvision and transformers; no Slurm
# (the hooks take the environment slurmd would give them). No network.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-${OUT:-/tmp/augur-device}}
shift || true
mkdir -p "$out"
work=$(mktemp -d)
node=${AUGUR_DEVICE_NODE_BIN:-$repo/bin/augur-node} # the production build; AUGUR_DEVICE_NODE_BIN=bin/test/augur-node with AUGUR_DEVICE_NVML=mock-dgxa100 to try this here
acct_before=$(nvidia-smi -i 0 --query-gpu=accounting.mode --format=csv,noheader 2>/dev/null)
restore_acct() {
	if [ "$acct_before" = Disabled ]; then nvidia-smi -i 0 -am 0 >/dev/null 2>&1; fi
}
trap 'kill $agent 2>/dev/null; wait 2>/dev/null; restore_acct; rm -rf "$work"' EXIT
cat >"$work/augur.yaml" <<YAML
version: 1
log: {level: info}
node:
  augurd: 127.0.0.1:9   # nothing listens: reports stay in the outbox, read below
  store: $work/node.db
  socket: $work/node.sock
  interval: 1s
  nvml: ${AUGUR_DEVICE_NVML:-real}
  nvml_accounting: ${AUGUR_DEVICE_ACCOUNTING:-true}
YAML
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1
"$node" agent --config "$work/augur.yaml" >"$out/agent.log" 2>&1 &
agent=$!
sleep 2
# Whether the agent reads per-process peaks (NVML accounting), as it says.
acct_now=$(nvidia-smi -i 0 --query-gpu=accounting.mode --format=csv,noheader 2>/dev/null)
echo "accounting mode before: ${acct_before:-unknown}, with the agent: ${acct_now:-unknown}" | tee -a "$out/gpu.txt"
grep -m2 'NVML accounting' "$out/agent.log" || echo "the agent said nothing of NVML accounting (see $out/agent.log)"
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=("$repo"/tests/device/jobs/*.sbatch)
log="$out/jobs.log"
: >"$log"
id=1000
for script in "${jobs[@]}"; do
	id=$((id + 1))
	hookenv=(SLURM_JOB_ID=$id SLURM_JOB_UID=$(id -u) SLURM_JOB_GPUS=0 SLURMD_NODENAME=$(hostname))
	env "${hookenv[@]}" SLURM_SCRIPT_CONTEXT=prolog_slurmd "$node" --config "$work/augur.yaml" 2>>"$log"
	echo "== job $id: $(basename "$script")" >>"$log"
	start=$(date +%s%N)
	script=$(realpath "$script")
	(cd "$repo/tests/device" && env "${hookenv[@]}" CUDA_VISIBLE_DEVICES=0 AUGUR_DEVICE_STATS="$work/stats-$id.json" \
		timeout 120 bash "$script") >>"$log" 2>&1
	rc=$?
	echo "== job $id: exit $rc after $((($(date +%s%N) - start) / 1000000)) ms" >>"$log"
	env "${hookenv[@]}" SLURM_SCRIPT_CONTEXT=epilog_slurmd SLURM_JOB_EXIT_CODE2="$rc:0" \
		"$node" --config "$work/augur.yaml" 2>>"$log"
	echo "$id $script" >>"$work/index"
	sleep 2 # the GPU is free before the next job's Prolog
done
kill $agent
wait $agent 2>/dev/null
# The driver's own per-process figures (pid, most memory, time in ms), to
# set beside the node's report; they go when accounting is turned off.
nvidia-smi -i 0 --query-accounted-apps=pid,max_memory_usage,time --format=csv >"$out/accounted.csv" 2>&1
cp "$work/node.db" "$out/node.db"
# One JSON object per job: the script, what PyTorch saw, the node's report.
python3 - "$work" "$out/results.json" <<'PY'
import json, os, sqlite3, sys
work, dest = sys.argv[1], sys.argv[2]
db = sqlite3.connect(os.path.join(work, "node.db"))
reports = {r[0]: json.loads(r[1]) for r in db.execute("SELECT job_id, report FROM outbox")}
out = []
for line in open(os.path.join(work, "index")):
    jid, script = line.split(maxsplit=1)
    jid, script = int(jid), script.strip()
    stats = {}
    p = os.path.join(work, f"stats-{jid}.json")
    if os.path.exists(p):
        stats = json.load(open(p))
    samples = db.execute("SELECT ts_ns, mem_mib, sm_util, peak_mib FROM samples WHERE job_id = ? ORDER BY ts_ns", (jid,)).fetchall()
    out.append({"job_id": jid, "script": os.path.basename(script), "torch": stats,
                "report": reports.get(jid), "samples": samples})
json.dump(out, open(dest, "w"), indent=1)
for o in out:
    r = o["report"] or {}
    g = (r.get("gpus") or [{}])[0]
    t = o["torch"]
    # the most memory a 1 s sample read, beside the peak with accounting's maxima
    sampled = max((s[1] for s in o["samples"]), default=0)
    print(f'{o["script"]:32} exit={r.get("exit_state")} peak={g.get("peak_mib", 0):.0f} sampled={sampled:.0f} end={g.get("end_mib", 0):.0f} '
          f'of {g.get("mem_total_mib", 0):.0f} MiB, sm={g.get("mean_sm_util", 0):.0f}% samples={r.get("samples")} '
          f'oom_suspect={r.get("oom_suspect")} attribution={g.get("attribution")} | torch reserved={t.get("max_reserved_mib", 0):.0f} '
          f'oom={t.get("oom")} steps={t.get("steps")} batch={t.get("batch_size")}')
PY
