#!/usr/bin/env bash
# Break and mend the network of one node of the multinode test cluster.
#   multinode-net.sh [DIR] drop|restore|link-down|link-up NODE
#   drop       black-hole NODE's TCP to augurd's outcomes port (reports
#              vanish on the wire; Slurm's traffic on the same veth flows)
#   restore    undo drop
#   link-down  take NODE's veth down on the bridge side (everything, Slurm
#              included, is cut off)
#   link-up    undo link-down
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	echo "usage: $0 [DIR] drop|restore|link-down|link-up NODE" >&2
	exit 2
}

case $# in
2) dir="" action="$1" node="$2" ;;
3) dir="$1" action="$2" node="$3" ;;
*) usage ;;
esac
mn_settings
[[ " ${MN_NODES[*]} " == *" $node "* ]] || die "no node $node (nodes: ${MN_NODES[*]})"
cluster_init "${dir:-$REPO/tests/.cluster-multi}"
trap - EXIT
[[ -e "/run/netns/$(mn_ns "$node")" ]] || die "namespace $(mn_ns "$node") does not exist: run multinode-up.sh"

case "$action" in
drop) mn_drop "$node" ;;
restore) mn_restore "$node" ;;
link-down)
	ip link set "$(mn_veth "$node")" down || die "cannot take $(mn_veth "$node") down"
	log "$node: $(mn_veth "$node") down"
	;;
link-up)
	ip link set "$(mn_veth "$node")" up || die "cannot bring $(mn_veth "$node") up"
	log "$node: $(mn_veth "$node") up"
	;;
*) usage ;;
esac
