# shellcheck shell=bash
# Shared helpers for the Augur test-cluster scripts. Sourced, never run.
#
# After `cluster_init "$1"` these are set:
#   REPO         repository root
#   CLUSTER_DIR  absolute cluster directory (default $REPO/tests/.cluster)
#   NODE         this host's short name (the only node)
#   SLURM_CONF, AUGUR_CONFIG, AUGUR_TEST_CLUSTER_DIR  (exported)

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
NODE="$(hostname -s)"

log() { echo "[cluster] $*" >&2; }

# die MESSAGE: print the message and exit 1 (the EXIT trap set by
# cluster_init then prints the tails of the logs).
die() {
	log "ERROR: $*"
	exit 1
}

_on_exit() {
	local rc=$?
	if ((rc != 0)) && [[ "${DUMP_ON_ERROR:-1}" == 1 ]]; then dump_logs; fi
}

dump_logs() {
	local f
	[[ -n "${CLUSTER_DIR:-}" ]] || return 0
	for f in slurmctld.log slurmd.log augurd.log augur-node.log slurmctld.stderr slurmd.stderr; do
		if [[ -s "$CLUSTER_DIR/log/$f" ]]; then
			echo "----- tail of $CLUSTER_DIR/log/$f -----" >&2
			# Leave out the harmless PMIx noise of every start.
			grep -v -e pmix -e 'Cannot create context for mpi' "$CLUSTER_DIR/log/$f" |
				tail -n 25 >&2 || true
		fi
	done
}

# cluster_init DIR [create]: resolve DIR (default tests/.cluster); creates
# it when the second argument is "create", otherwise it must exist.
cluster_init() {
	local dir="${1:-$REPO/tests/.cluster}"
	if [[ "${2:-}" == create ]]; then
		mkdir -p "$dir"
	elif [[ ! -d "$dir" ]]; then
		log "no cluster directory $dir"
		return 1
	fi
	CLUSTER_DIR="$(cd "$dir" && pwd)"
	export AUGUR_TEST_CLUSTER_DIR="$CLUSTER_DIR"
	export SLURM_CONF="$CLUSTER_DIR/etc/slurm.conf"
	export AUGUR_CONFIG="$CLUSTER_DIR/etc/augur.yaml"
	trap _on_exit EXIT
}

# proc_alive PID [NAME]: true when PID is a live (not zombie) process whose
# command name is NAME (guards against recycled pids). Zombies matter here:
# in a container whose pid 1 does not reap, stopped daemons stay as zombies.
proc_alive() {
	local stat
	if [[ -n "${2:-}" ]]; then
		# Debian's Slurm from 24.11 installs its daemons as NAME-wlm
		# (slurmctld-wlm), with NAME a link to it.
		local comm
		comm="$(cat "/proc/$1/comm" 2>/dev/null)"
		[[ "$comm" == "$2" || "$comm" == "$2-wlm" ]] || return 1
	fi
	stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
	stat="${stat##*) }" # field 3 on: "S ppid ..."
	[[ "${stat:0:1}" != Z && "${stat:0:1}" != X ]]
}

# read_pid PIDFILE: print the pid in PIDFILE (nothing when absent).
read_pid() { tr -dc '0-9' 2>/dev/null <"$1" || true; }

# pid_alive PIDFILE NAME: true when PIDFILE names a live process NAME.
pid_alive() {
	local pid
	pid="$(read_pid "$1")"
	[[ -n "$pid" ]] && proc_alive "$pid" "$2"
}

# stop_pids NAME PID...: TERM the NAME processes, then KILL those still
# alive after 5 s. Never fails.
stop_pids() {
	local name="$1" pid i alive
	shift
	(($# > 0)) || return 0
	log "stopping $name (pid $*)"
	kill -TERM "$@" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		alive=()
		for pid in "$@"; do
			proc_alive "$pid" "$name" && alive+=("$pid")
		done
		((${#alive[@]} == 0)) && return 0
		sleep 0.1
	done
	log "$name did not stop after 5 s; sending KILL to ${alive[*]}"
	kill -KILL "${alive[@]}" 2>/dev/null || true
	sleep 0.2
}

# stop_pid PIDFILE NAME: stop the NAME process PIDFILE names (stop_pids).
# Never fails.
stop_pid() {
	local pid
	pid="$(read_pid "$1")"
	if [[ -n "$pid" ]] && proc_alive "$pid" "$2"; then
		stop_pids "$2" "$pid"
	fi
	rm -f "$1"
}

# conf_pids NAME: the live NAME processes whose environment holds this
# cluster's SLURM_CONF (the daemons the scripts start, and what they start).
conf_pids() {
	local env pid
	for env in /proc/[0-9]*/environ; do
		pid="${env#/proc/}"
		pid="${pid%/environ}"
		proc_alive "$pid" "$1" || continue
		if tr '\0' '\n' 2>/dev/null <"$env" | grep -qxF "SLURM_CONF=$SLURM_CONF"; then
			echo "$pid"
		fi
	done
	return 0
}

# cluster_pids PIDFILE NAME: the live NAME processes of this cluster: the
# one PIDFILE names and every other conf_pids finds. A pid file alone can
# be stale: from 23.11 on, `scontrol reconfigure` makes slurmctld start its
# successor and exit, and the successor's pid reaches the file only once
# it has started.
cluster_pids() {
	local named
	named="$(read_pid "$1")"
	[[ -n "$named" ]] && proc_alive "$named" "$2" && echo "$named"
	conf_pids "$2" | grep -vxF "${named:-none}" || true
}

# daemon_alive PIDFILE NAME: whether this cluster has a live NAME process
# (cluster_pids, which says why a pid file alone will not do).
daemon_alive() {
	[[ -n "$(cluster_pids "$1" "$2")" ]]
}

# stop_daemon PIDFILE NAME: stop every NAME process of this cluster
# (cluster_pids, stop_pids). Never fails.
stop_daemon() {
	local pids
	mapfile -t pids < <(cluster_pids "$1" "$2")
	stop_pids "$2" "${pids[@]}"
	rm -f "$1"
}

# ---------------------------------------------------------------- augurd

augurd_bin() { echo "${AUGUR_TEST_AUGURD_BIN:-${AUGUR_BIN:-$REPO/bin}/augurd}"; }

augurd_start() {
	local bin sock pidfile pid i
	bin="$(augurd_bin)"
	sock="$CLUSTER_DIR/run/augurd.sock"
	pidfile="$CLUSTER_DIR/run/augurd.pid"
	if pid_alive "$pidfile" augurd; then
		log "augurd already running (pid $(cat "$pidfile"))"
		return 0
	fi
	[[ -x "$bin" ]] || die "augurd binary not found at $bin (build it first, or set AUGUR_TEST_NO_AUGURD=1)"
	[[ -f "$AUGUR_CONFIG" ]] || die "$AUGUR_CONFIG missing: run up.sh first"
	mkdir -p "$CLUSTER_DIR/run" "$CLUSTER_DIR/log" "$CLUSTER_DIR/var"
	rm -f "$sock"
	setsid nohup "$bin" --config "$AUGUR_CONFIG" >>"$CLUSTER_DIR/log/augurd.log" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$pidfile"
	for ((i = 0; i < 100; i++)); do
		[[ -S "$sock" ]] && break
		# No name check yet: until exec the child is called setsid/nohup.
		proc_alive "$pid" || die "augurd exited during start-up"
		sleep 0.1
	done
	[[ -S "$sock" ]] || die "augurd socket $sock did not appear within 10 s"
	log "augurd running (pid $(cat "$pidfile")), socket $sock"
}

augurd_stop() { stop_pid "$CLUSTER_DIR/run/augurd.pid" augurd; }

# augurd_signal SIG: send SIG to the running augurd.
augurd_signal() {
	local pidfile="$CLUSTER_DIR/run/augurd.pid"
	pid_alive "$pidfile" augurd || die "augurd is not running"
	kill "-$1" "$(cat "$pidfile")"
	log "sent SIG$1 to augurd (pid $(cat "$pidfile"))"
}

# ---------------------------------------------------------------- augur-node

# The test build: it accepts node.nvml: mock-dgxa100.
node_bin() { echo "${AUGUR_TEST_NODE_BIN:-${AUGUR_BIN:-$REPO/bin}/test/augur-node}"; }

# node_agent_start: start the node agent (root, as on a real node).
node_agent_start() {
	local bin sock pidfile pid i
	bin="$(node_bin)"
	sock="$CLUSTER_DIR/run/node.sock"
	pidfile="$CLUSTER_DIR/run/augur-node.pid"
	if pid_alive "$pidfile" augur-node; then
		log "augur-node agent already running (pid $(cat "$pidfile"))"
		return 0
	fi
	[[ -x "$bin" ]] || die "augur-node not found at $bin (make build-test-plugin, or set AUGUR_TEST_NO_NODE=1)"
	[[ -f "$AUGUR_CONFIG" ]] || die "$AUGUR_CONFIG missing: run up.sh first"
	mkdir -p "$CLUSTER_DIR/run" "$CLUSTER_DIR/log" "$CLUSTER_DIR/var"
	setsid nohup "$bin" agent --config "$AUGUR_CONFIG" >>"$CLUSTER_DIR/log/augur-node.log" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$pidfile"
	for ((i = 0; i < 100; i++)); do
		[[ -S "$sock" ]] && break
		proc_alive "$pid" || die "augur-node agent exited during start-up (see $CLUSTER_DIR/log/augur-node.log)"
		sleep 0.1
	done
	[[ -S "$sock" ]] || die "augur-node socket $sock did not appear within 10 s"
	log "augur-node agent running (pid $(cat "$pidfile")), socket $sock"
}

node_agent_stop() { stop_pid "$CLUSTER_DIR/run/augur-node.pid" augur-node; }

# node_agent_signal SIG: send SIG to the running agent.
node_agent_signal() {
	local pidfile="$CLUSTER_DIR/run/augur-node.pid"
	pid_alive "$pidfile" augur-node || die "augur-node agent is not running"
	kill "-$1" "$(cat "$pidfile")"
	log "sent SIG$1 to the augur-node agent (pid $(cat "$pidfile"))"
}

# ---------------------------------------------------------------- slurm

# refuse_running PIDFILE NAME: die when this cluster already has a NAME
# daemon (cluster_pids), whatever PIDFILE says; else remove PIDFILE.
refuse_running() {
	local running
	running="$(cluster_pids "$1" "$2" | tr '\n' ' ')"
	[[ -z "$running" ]] || die "$2 already running (pid ${running% })"
	rm -f "$1"
}

# slurmctld_start [ARGS...]: start slurmctld (daemonised) with extra ARGS.
slurmctld_start() {
	refuse_running "$CLUSTER_DIR/run/slurmctld.pid" slurmctld
	log "starting slurmctld${*:+ $*}"
	# Without -D slurmctld checks its config, forks and returns; its own
	# log goes to slurmctld.log, anything before that to slurmctld.stderr.
	setsid slurmctld "$@" >>"$CLUSTER_DIR/log/slurmctld.stderr" 2>&1 </dev/null ||
		die "slurmctld failed to start"
}

slurmd_start() {
	refuse_running "$CLUSTER_DIR/run/slurmd.pid" slurmd
	log "starting slurmd${*:+ $*}"
	setsid slurmd "$@" >>"$CLUSTER_DIR/log/slurmd.stderr" 2>&1 </dev/null ||
		die "slurmd failed to start"
}

# wait_ctld SECONDS: wait until slurmctld answers `scontrol ping`.
wait_ctld() {
	local i
	for ((i = 0; i < $1 * 2; i++)); do
		if scontrol ping 2>/dev/null | grep -q 'is UP'; then
			return 0
		fi
		daemon_alive "$CLUSTER_DIR/run/slurmctld.pid" slurmctld || [[ $i -lt 10 ]] ||
			die "slurmctld is not running"
		sleep 0.5
	done
	die "slurmctld did not answer 'scontrol ping' within $1 s"
}

# wait_node SECONDS: wait until the node is usable (idle, or running jobs);
# resume it when it shows down/drain/inval.
wait_node() {
	local i state=""
	for ((i = 0; i < $1 * 2; i++)); do
		state="$(sinfo -h -n "$NODE" -o %T 2>/dev/null | head -n 1 || true)"
		case "$state" in
		idle | mixed | allocated | completing) return 0 ;;
		*down* | *drain* | *inval* | *fail*)
			# Only once slurmd has registered (no '*' = responding).
			if [[ "$state" != *'*' ]] && ((i % 4 == 0)); then
				log "node $NODE is '$state': resuming it"
				scontrol update nodename="$NODE" state=resume 2>/dev/null || true
			fi
			;;
		esac
		sleep 0.5
	done
	scontrol show node "$NODE" >&2 2>/dev/null || true
	die "node $NODE not idle after $1 s (state '${state}')"
}

# stock_plugin_dir: print Slurm's own plugin directory (arch-dependent: ask
# dpkg where select_cons_tres.so is); die when it cannot be found.
stock_plugin_dir() {
	local dir
	dir="$(dirname "$(dpkg -L slurm-wlm-basic-plugins slurmctld 2>/dev/null |
		grep -m 1 '/select_cons_tres\.so$' || echo /usr/lib/slurm-wlm/x)")"
	[[ -f "$dir/select_cons_tres.so" ]] ||
		die "cannot find Slurm's plugin directory (looked for select_cons_tres.so)"
	echo "$dir"
}

# slurm_conf_common DIR: the slurm.conf settings the single-node and the
# multinode test clusters share (auth, plugins, accounting to a file,
# scheduling, priority); each script adds its hosts, ports, paths, gres and
# nodes.
slurm_conf_common() {
	cat <<EOF
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
MailProg=/bin/true
KillWait=5

AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$1/log/jobcomp.txt
# No AccountingStorageTRES=gres/gpu: without slurmdbd slurmctld refuses it
# ("fatal: slurmdbd is required to run with TRES gres/gpu"), so a job's TRES=
# shows no GPUs; read TresPerNode/TresPerJob or GRES (scontrol -d) instead.

SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
JobRequeue=1
MinJobAge=300

# No PriorityWeightSite exists: SiteFactor is added to the priority as is.
# Without slurmdbd, slurmctld ignores PriorityWeightAge ("can only be used
# with SlurmDBD"): all weights 0, so priority = 1 + SiteFactor (+ nice).
PriorityType=priority/multifactor
PriorityCalcPeriod=1
PriorityWeightAge=0
PriorityWeightFairshare=0
PriorityWeightJobSize=0
PriorityWeightPartition=0
PriorityWeightQOS=0
EOF
}

# wait_log FILE TEXT SECONDS: true once FILE contains TEXT, false after SECONDS.
wait_log() {
	local i
	for ((i = 0; i < $3 * 4; i++)); do
		grep -qF "$2" "$1" 2>/dev/null && return 0
		sleep 0.25
	done
	return 1
}

# munge_up starts munged (creating its key if there is none) unless a
# credential already round-trips.
munge_up() {
	local i
	if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
		log "munge not working: starting munged"
		if [[ ! -s /etc/munge/munge.key ]]; then
			log "creating /etc/munge/munge.key"
			mkdir -p /etc/munge
			mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null ||
				dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
		fi
		chown munge:munge /etc/munge/munge.key
		chmod 0400 /etc/munge/munge.key
		mkdir -p /run/munge
		chown munge:munge /run/munge
		munged --force || die "munged failed to start"
		for ((i = 0; i < 20; i++)); do
			munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
			sleep 0.25
		done
		munge -n | unmunge >/dev/null || die "munge still not working after starting munged"
	fi
}

# ---------------------------------------------------------------- multinode
# Helpers of multinode-up.sh, multinode-down.sh and multinode-net.sh: three
# slurmd "hosts", each in a network namespace with a veth into a bridge in
# the root namespace, where slurmctld, augurd and munged run.
#
#   root ns: bridge $MN_BRIDGE $MN_NET.1/24 (slurmctld, augurd's outcomes)
#     ├─ veth ${MN_VETH_PREFIX}1 ─── eth0 $MN_NET.11 in ${MN_NS_PREFIX}1: slurmd -N node1, agent
#     ├─ veth ${MN_VETH_PREFIX}2 ─── eth0 $MN_NET.12 in ${MN_NS_PREFIX}2: slurmd -N node2, agent
#     └─ veth ${MN_VETH_PREFIX}3 ─── eth0 $MN_NET.13 in ${MN_NS_PREFIX}3: slurmd -N node3, agent

# mn_settings: the multinode cluster's names, addresses and ports, from the
# AUGUR_TEST_MN_* variables or their defaults (chosen not to collide with
# the single-node cluster's ports or another engineer's 88xx ones).
# shellcheck disable=SC2034 # used by the scripts that source this file
mn_settings() {
	MN_BRIDGE="${AUGUR_TEST_MN_BRIDGE:-augurbr0}"
	MN_NET="${AUGUR_TEST_MN_NET:-10.231.0}" # a /24: .1 the bridge, .11-.13 the nodes
	MN_NS_PREFIX="${AUGUR_TEST_MN_NS_PREFIX:-augur-n}"
	MN_VETH_PREFIX="${AUGUR_TEST_MN_VETH_PREFIX:-augv-n}"
	MN_CTLD_PORT="${AUGUR_TEST_MN_CTLD_PORT:-7817}"
	MN_SLURMD_PORT="${AUGUR_TEST_MN_SLURMD_PORT:-7818}"
	MN_METRICS_PORT="${AUGUR_TEST_MN_METRICS_PORT:-29467}"
	MN_OUTCOMES_PORT="${AUGUR_TEST_MN_OUTCOMES_PORT:-26831}"
	MN_BRIDGE_IP="$MN_NET.1"
	# Next hop that no one answers: multinode-net.sh drop routes the
	# node's reports to augurd through it (a silent black hole).
	MN_DEAD_HOP="$MN_NET.254"
	MN_DEAD_MAC="02:00:5e:00:02:54"
	MN_DROP_TABLE=231
	MN_NODES=(node1 node2 node3)
	((${#MN_BRIDGE} <= 15)) || die "AUGUR_TEST_MN_BRIDGE '$MN_BRIDGE' is longer than 15 characters"
	((${#MN_VETH_PREFIX} <= 14)) || die "AUGUR_TEST_MN_VETH_PREFIX '$MN_VETH_PREFIX' is longer than 14 characters"
	[[ "$MN_NET" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "AUGUR_TEST_MN_NET '$MN_NET' is not three octets (e.g. 10.231.0)"
}

# mn_index NODE: 1 for node1, ...
mn_index() { echo "${1#node}"; }
mn_ns() { echo "$MN_NS_PREFIX$(mn_index "$1")"; }
mn_veth() { echo "$MN_VETH_PREFIX$(mn_index "$1")"; }
mn_ip() { echo "$MN_NET.$((10 + $(mn_index "$1")))"; }

# mn_gpu NODE: the stand-in GPU type of NODE (two of it per node).
mn_gpu() {
	case "$1" in
	node1) echo a100 ;;
	node2) echo v100 ;;
	node3) echo t4 ;;
	*) die "no GPU type for node $1" ;;
	esac
}

# mn_net_up: the bridge and, per node, a namespace whose eth0 is a veth into
# the bridge. The namespace gets a /24 on eth0 and no default route: its
# only way out is the veth.
mn_net_up() {
	local n ns veth
	# A fixed MAC (a bridge otherwise takes its ports' lowest, which changes
	# as veths join) and no forwarding delay.
	ip link add "$MN_BRIDGE" address 02:00:5e:00:02:01 type bridge forward_delay 0 ||
		die "cannot create bridge $MN_BRIDGE"
	ip addr add "$MN_BRIDGE_IP/24" dev "$MN_BRIDGE" || die "cannot address $MN_BRIDGE"
	ip link set "$MN_BRIDGE" up || die "cannot bring $MN_BRIDGE up"
	for n in "${MN_NODES[@]}"; do
		ns="$(mn_ns "$n")" veth="$(mn_veth "$n")"
		ip netns add "$ns" || die "cannot create network namespace $ns"
		ip link add "$veth" type veth peer name eth0 netns "$ns" || die "cannot create veth $veth"
		ip link set "$veth" master "$MN_BRIDGE" || die "cannot attach $veth to $MN_BRIDGE"
		ip link set "$veth" up || die "cannot bring $veth up"
		ip -n "$ns" link set lo up || die "cannot bring lo up in $ns"
		ip -n "$ns" addr add "$(mn_ip "$n")/24" dev eth0 || die "cannot address eth0 in $ns"
		ip -n "$ns" link set eth0 up || die "cannot bring eth0 up in $ns"
	done
	for n in "${MN_NODES[@]}"; do
		mn_wait_reach "$n" 10 || die "$(mn_ns "$n") cannot reach $MN_BRIDGE_IP"
	done
	log "network up: $MN_BRIDGE $MN_BRIDGE_IP/24; $(for n in "${MN_NODES[@]}"; do printf '%s=%s ' "$(mn_ns "$n")" "$(mn_ip "$n")"; done)"
}

# mn_wait_reach NODE SECONDS: wait until NODE's namespace reaches the
# bridge address (a TCP connect to slurmctld's port would need slurmctld,
# so this uses bash's /dev/tcp against a closed port: "connection refused"
# means the packet went there and back).
mn_wait_reach() {
	local i out
	for ((i = 0; i < $2 * 10; i++)); do
		out="$(mn_in "$1" timeout 1 bash -c "exec 3<>/dev/tcp/$MN_BRIDGE_IP/9" 2>&1 || true)"
		[[ "$out" == *refused* ]] && return 0
		sleep 0.1
	done
	return 1
}

# mn_net_down: remove the namespaces (after killing what still runs in
# them), the veths and the bridge. Never fails; safe to run twice.
mn_net_down() {
	local n ns veth pid
	for n in "${MN_NODES[@]}"; do
		ns="$(mn_ns "$n")" veth="$(mn_veth "$n")"
		# The veth first (its peer, eth0, goes with it): a namespace's
		# devices are destroyed asynchronously after `ip netns del`.
		if ip link show "$veth" >/dev/null 2>&1; then
			ip link del "$veth" 2>/dev/null || log "cannot delete $veth"
		fi
		if [[ -e "/run/netns/$ns" ]]; then
			for pid in $(ip netns pids "$ns" 2>/dev/null); do
				log "killing pid $pid ($(cat "/proc/$pid/comm" 2>/dev/null)) left in $ns"
				kill -KILL "$pid" 2>/dev/null || true
			done
			ip netns del "$ns" 2>/dev/null || log "cannot delete network namespace $ns"
		fi
	done
	if ip link show "$MN_BRIDGE" >/dev/null 2>&1; then
		ip link del "$MN_BRIDGE" 2>/dev/null || log "cannot delete bridge $MN_BRIDGE"
	fi
	return 0
}

# mn_drop NODE: black-hole NODE's reports to augurd. A policy rule in the
# node's namespace sends TCP to augurd's outcomes port through a next hop
# whose MAC no one owns, so the SYNs leave through the veth and vanish (as
# on a broken link); Slurm's own traffic on the same veth is untouched.
mn_drop() {
	local ns
	ns="$(mn_ns "$1")"
	if ! { ip -n "$ns" neigh replace "$MN_DEAD_HOP" lladdr "$MN_DEAD_MAC" dev eth0 nud permanent &&
		ip -n "$ns" route replace "$MN_BRIDGE_IP/32" via "$MN_DEAD_HOP" dev eth0 table "$MN_DROP_TABLE" &&
		ip -n "$ns" rule add to "$MN_BRIDGE_IP/32" ipproto tcp dport "$MN_OUTCOMES_PORT" table "$MN_DROP_TABLE" priority 100; }; then
		die "cannot drop $1's traffic to augurd"
	fi
	log "$1 ($ns): TCP to $MN_BRIDGE_IP:$MN_OUTCOMES_PORT now black-holed via $MN_DEAD_HOP"
}

# mn_restore NODE: undo mn_drop (no-op when nothing is dropped).
mn_restore() {
	local ns
	ns="$(mn_ns "$1")"
	while ip -n "$ns" rule del priority 100 2>/dev/null; do :; done
	ip -n "$ns" route flush table "$MN_DROP_TABLE" 2>/dev/null || true
	ip -n "$ns" neigh del "$MN_DEAD_HOP" dev eth0 2>/dev/null || true
	log "$1 ($ns): route to augurd restored"
}

# mn_in NODE CMD...: run CMD in NODE's network namespace. Not `ip netns
# exec`: that also remounts /sys in a mount namespace of its own, which
# leaves /sys/fs/cgroup empty, and slurmd 22.05 then refuses to start
# ("Unable to initialize cgroup plugin") even with proctrack/linuxproc.
# nsenter --net joins the network namespace only.
mn_in() {
	local ns
	ns="$(mn_ns "$1")"
	shift
	nsenter --net="/run/netns/$ns" "$@"
}

# mn_slurmd_start NODE: slurmd -N NODE inside NODE's namespace (it forks;
# pid file, spool and log are per node through %n in slurm.conf).
mn_slurmd_start() {
	local pidfile="$CLUSTER_DIR/run/slurmd-$1.pid"
	pid_alive "$pidfile" slurmd && die "slurmd of $1 already running (pid $(cat "$pidfile"))"
	rm -f "$pidfile"
	log "starting slurmd -N $1 in $(mn_ns "$1")"
	setsid nsenter --net="/run/netns/$(mn_ns "$1")" slurmd -N "$1" -c >>"$CLUSTER_DIR/log/slurmd-$1.stderr" 2>&1 </dev/null ||
		die "slurmd of $1 failed to start"
}

# mn_node_config NODE: the augur-node config of NODE.
mn_node_config() { echo "$CLUSTER_DIR/etc/node-$1.yaml"; }

# mn_agent_start NODE: NODE's augur-node agent inside NODE's namespace.
# AUGUR_FAKE_GPU_NODE makes the test build's fake GPUs count only the job
# processes of NODE (all namespaces share one pid namespace).
mn_agent_start() {
	local bin sock pidfile pid i cfg
	bin="$(node_bin)" cfg="$(mn_node_config "$1")"
	sock="$CLUSTER_DIR/run/node-$1.sock"
	pidfile="$CLUSTER_DIR/run/augur-node-$1.pid"
	if pid_alive "$pidfile" augur-node; then
		log "augur-node agent of $1 already running (pid $(cat "$pidfile"))"
		return 0
	fi
	[[ -x "$bin" ]] || die "augur-node not found at $bin (make build-test-plugin)"
	[[ -f "$cfg" ]] || die "$cfg missing: run multinode-up.sh first"
	# setsid, nohup and nsenter each exec the next: $! is the agent's pid.
	AUGUR_FAKE_GPU_NODE="$1" setsid nohup nsenter --net="/run/netns/$(mn_ns "$1")" "$bin" agent --config "$cfg" \
		>>"$CLUSTER_DIR/log/augur-node-$1.log" 2>&1 </dev/null &
	pid=$!
	echo "$pid" >"$pidfile"
	for ((i = 0; i < 100; i++)); do
		[[ -S "$sock" ]] && break
		proc_alive "$pid" || die "augur-node agent of $1 exited during start-up (see $CLUSTER_DIR/log/augur-node-$1.log)"
		sleep 0.1
	done
	[[ -S "$sock" ]] || die "augur-node socket $sock did not appear within 10 s"
	log "augur-node agent of $1 running in $(mn_ns "$1") (pid $(cat "$pidfile")), socket $sock"
}

mn_agent_stop() { stop_pid "$CLUSTER_DIR/run/augur-node-$1.pid" augur-node; }

# mn_dump_logs: the tails of the multinode cluster's logs.
mn_dump_logs() {
	local f
	[[ -n "${CLUSTER_DIR:-}" && -d "$CLUSTER_DIR/log" ]] || return 0
	for f in "$CLUSTER_DIR"/log/*.log "$CLUSTER_DIR"/log/*.stderr; do
		[[ -s "$f" ]] || continue
		echo "----- tail of $f -----" >&2
		grep -v -e pmix -e 'Cannot create context for mpi' "$f" | tail -n 15 >&2 || true
	done
}

_mn_on_exit() {
	local rc=$?
	if ((rc != 0)) && [[ "${DUMP_ON_ERROR:-1}" == 1 ]]; then mn_dump_logs; fi
}
