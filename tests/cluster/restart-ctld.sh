#!/usr/bin/env bash
# Restart slurmctld of the test cluster in DIR (default: tests/.cluster),
# keeping its saved state (jobs survive), e.g. to load a rebuilt plugin.
# Waits until it answers `scontrol ping` and the node is usable again.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cluster_init "${1:-}"
[[ -f "$SLURM_CONF" ]] || die "$SLURM_CONF missing: run up.sh first"

stop_daemon "$CLUSTER_DIR/run/slurmctld.pid" slurmctld
# shellcheck disable=SC2119 # no -c: keep the saved state
slurmctld_start
wait_ctld 30
wait_node 30
log "slurmctld restarted (pid $(cat "$CLUSTER_DIR/run/slurmctld.pid"))"
