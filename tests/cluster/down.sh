#!/usr/bin/env bash
# Stop the test cluster in DIR (default: tests/.cluster): cancel its jobs,
# stop slurmd, slurmctld and augurd. munged keeps running. Never fails.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cluster_init "${1:-}" || exit 0
D="$CLUSTER_DIR"
trap - EXIT

# Cancel running jobs first so that no job processes outlive slurmd.
if [[ -f "$SLURM_CONF" ]] && daemon_alive "$D/run/slurmctld.pid" slurmctld &&
	daemon_alive "$D/run/slurmd.pid" slurmd; then
	ids="$(timeout 5 squeue -h -t running,configuring,suspended -o %A 2>/dev/null || true)"
	if [[ -n "$ids" ]]; then
		log "cancelling running jobs: $(echo "$ids" | tr '\n' ' ')"
		# shellcheck disable=SC2086 # one word per job id
		timeout 5 scancel --quiet $ids 2>/dev/null || true
		for ((i = 0; i < 20; i++)); do
			[[ -z "$(timeout 5 squeue -h -t running,completing -o %A 2>/dev/null || true)" ]] && break
			sleep 0.5
		done
	fi
fi

stop_daemon "$D/run/slurmd.pid" slurmd
stop_daemon "$D/run/slurmctld.pid" slurmctld
stop_pid "$D/run/augurd.pid" augurd
stop_pid "$D/run/augur-node.pid" augur-node

# Steps left behind by a killed slurmd: slurmstepd inherits our SLURM_CONF.
for pid in $(conf_pids slurmstepd); do
	log "killing leftover slurmstepd (pid $pid)"
	kill -KILL "$pid" 2>/dev/null || true
done
rm -f "$D/run/augurd.sock" "$D/run/node.sock"
log "cluster in $D is down"
exit 0
