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
		[[ "$(cat "/proc/$1/comm" 2>/dev/null)" == "$2" ]] || return 1
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

# stop_pid PIDFILE NAME: TERM, then KILL after 5 s. Never fails.
stop_pid() {
	local pidfile="$1" name="$2" pid i
	pid="$(read_pid "$pidfile")"
	if [[ -z "$pid" ]] || ! proc_alive "$pid" "$name"; then
		rm -f "$pidfile"
		return 0
	fi
	log "stopping $name (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		proc_alive "$pid" "$name" || break
		sleep 0.1
	done
	if proc_alive "$pid" "$name"; then
		log "$name did not stop after 5 s; sending KILL"
		kill -KILL "$pid" 2>/dev/null || true
		sleep 0.2
	fi
	rm -f "$pidfile"
}

# ---------------------------------------------------------------- augurd

augurd_bin() { echo "${AUGUR_TEST_AUGURD_BIN:-$REPO/bin/augurd}"; }

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
node_bin() { echo "${AUGUR_TEST_NODE_BIN:-$REPO/bin/test/augur-node}"; }

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

# slurmctld_start [ARGS...]: start slurmctld (daemonised) with extra ARGS.
slurmctld_start() {
	local pidfile="$CLUSTER_DIR/run/slurmctld.pid"
	pid_alive "$pidfile" slurmctld && die "slurmctld already running (pid $(cat "$pidfile"))"
	rm -f "$pidfile"
	log "starting slurmctld${*:+ $*}"
	# Without -D slurmctld checks its config, forks and returns; its own
	# log goes to slurmctld.log, anything before that to slurmctld.stderr.
	setsid slurmctld "$@" >>"$CLUSTER_DIR/log/slurmctld.stderr" 2>&1 </dev/null ||
		die "slurmctld failed to start"
}

slurmd_start() {
	local pidfile="$CLUSTER_DIR/run/slurmd.pid"
	pid_alive "$pidfile" slurmd && die "slurmd already running (pid $(cat "$pidfile"))"
	rm -f "$pidfile"
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
		pid_alive "$CLUSTER_DIR/run/slurmctld.pid" slurmctld || [[ $i -lt 10 ]] ||
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
