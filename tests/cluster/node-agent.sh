#!/usr/bin/env bash
# Control the test cluster's augur-node agent alone (fault tests: a killed
# agent, jobs whose Epilog never came, reports waiting in the outbox).
#   node-agent.sh [DIR] start|stop|kill
#   start   start it as up.sh does (no-op when running)
#   stop    SIGTERM, SIGKILL after 5 s
#   kill    SIGKILL (crash)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 [DIR] start|stop|kill" >&2
	exit 2
}

case $# in
1) dir="" action="$1" ;;
2) dir="$1" action="$2" ;;
*) usage ;;
esac
case "$action" in
start | stop | kill) ;;
*) usage ;;
esac

cluster_init "$dir"
case "$action" in
start) node_agent_start ;;
stop) node_agent_stop ;;
kill)
	node_agent_signal KILL
	for ((i = 0; i < 50; i++)); do
		pid_alive "$CLUSTER_DIR/run/augur-node.pid" augur-node || break
		sleep 0.1
	done
	;;
esac
