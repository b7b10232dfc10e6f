# shellcheck shell=bash
# enter: run a command chrooted in a Debian root (slurm-root.sh, fresh.sh). Sourced, never run.

# enter DIR [BIND...] -- CMD...: CMD chrooted in DIR, in a mount namespace
# of its own (its mounts vanish with it), with /dev, /proc and /sys, and
# each BIND (a host directory) at the same path inside.
enter() {
	local dir="$1"
	shift
	unshare --mount --propagation private -- /bin/bash -c '
		set -e
		root="$1"; shift
		binds=()
		while [[ "$1" != -- ]]; do binds+=("$1"); shift; done
		shift
		# The root must be a mount point of its own: `ip -n` (the three-node
		# cluster) makes / a slave mount and fails on a plain directory.
		mount --bind "$root" "$root"
		mount --rbind /dev "$root/dev"
		mount -t proc proc "$root/proc"
		mount --rbind /sys "$root/sys"
		for d in "${binds[@]}"; do
			mkdir -p "$root$d"
			mount --rbind "$d" "$root$d"
		done
		exec chroot "$root" "$@"' - "$dir" "$@"
}
