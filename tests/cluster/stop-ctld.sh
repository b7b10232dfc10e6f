#!/usr/bin/env bash
# Stop slurmctld of the test cluster in DIR (default: tests/.cluster),
# keeping its saved state; restart-ctld.sh starts it again. Stops every
# slurmctld of the cluster, not only the one its pid file names: after
# `scontrol reconfigure` (23.11 on) the file can name the process that
# handed over to a successor.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cluster_init "${1:-}"
stop_daemon "$CLUSTER_DIR/run/slurmctld.pid" slurmctld
running="$(cluster_pids "$CLUSTER_DIR/run/slurmctld.pid" slurmctld | tr '\n' ' ')"
[[ -z "$running" ]] || die "slurmctld still running (pid ${running% })"
log "slurmctld stopped"
