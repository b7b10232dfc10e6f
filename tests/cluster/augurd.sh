#!/usr/bin/env bash
# Control augurd of the test cluster alone.
#   augurd.sh [DIR] start|stop|kill|stop-signal|cont
#   start        start it as up.sh does (no-op when running)
#   stop         SIGTERM, SIGKILL after 5 s
#   kill         SIGKILL (crash)
#   stop-signal  SIGSTOP (hang: the plugin's calls time out)
#   cont         SIGCONT (undo stop-signal)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 [DIR] start|stop|kill|stop-signal|cont" >&2
	exit 2
}

case $# in
1) dir="" action="$1" ;;
2) dir="$1" action="$2" ;;
*) usage ;;
esac
case "$action" in
start | stop | kill | stop-signal | cont) ;;
*) usage ;;
esac

cluster_init "$dir"
case "$action" in
start) augurd_start ;;
stop) augurd_stop ;;
kill)
	augurd_signal KILL
	for ((i = 0; i < 50; i++)); do
		pid_alive "$CLUSTER_DIR/run/augurd.pid" augurd || break
		sleep 0.1
	done
	;;
stop-signal) augurd_signal STOP ;;
cont) augurd_signal CONT ;;
esac
