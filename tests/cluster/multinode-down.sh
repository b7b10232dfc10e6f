#!/usr/bin/env bash
# Stop the multinode test cluster in DIR (default: tests/.cluster-multi):
# cancel its jobs, stop the slurmds, the agents, slurmctld and augurd, kill
# whatever still runs in its namespaces, and remove the namespaces, veths
# and bridge. munged keeps running. Never fails; safe to run twice, and
# cleans the network up even when DIR is gone.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# die must not end a teardown half way: log and go on.
die() { log "WARNING: $*"; }
mn_settings

if cluster_init "${1:-$REPO/tests/.cluster-multi}" 2>/dev/null; then
	trap - EXIT
	D="$CLUSTER_DIR"
	# Cancel running jobs first so that no job processes outlive slurmd.
	if [[ -f "$SLURM_CONF" ]] && daemon_alive "$D/run/slurmctld.pid" slurmctld; then
		ids="$(timeout 5 squeue -h -t running,configuring,suspended,completing -o %A 2>/dev/null || true)"
		if [[ -n "$ids" ]]; then
			log "cancelling jobs: $(echo "$ids" | tr '\n' ' ')"
			# shellcheck disable=SC2086 # one word per job id
			timeout 5 scancel --quiet $ids 2>/dev/null || true
			for ((i = 0; i < 20; i++)); do
				[[ -z "$(timeout 5 squeue -h -t running,completing -o %A 2>/dev/null || true)" ]] && break
				sleep 0.5
			done
		fi
	fi
	for n in "${MN_NODES[@]}"; do
		stop_pid "$D/run/slurmd-$n.pid" slurmd
	done
	stop_daemon "$D/run/slurmctld.pid" slurmctld
	stop_pid "$D/run/augurd.pid" augurd
	for n in "${MN_NODES[@]}"; do
		mn_agent_stop "$n"
	done
	# Steps left behind by a killed slurmd: slurmstepd inherits SLURM_CONF.
	for pid in $(conf_pids slurmstepd); do
		log "killing leftover slurmstepd (pid $pid)"
		kill -KILL "$pid" 2>/dev/null || true
	done
	rm -f "$D/run/augurd.sock" "$D"/run/node-*.sock
fi

# Anything still in the namespaces (job processes, a daemon whose pid file
# is gone) is killed with them.
mn_net_down
log "multinode cluster${CLUSTER_DIR:+ in $CLUSTER_DIR} is down"
exit 0
