#!/usr/bin/env bash
# fresh.sh: a newcomer's first command (`make demo`, or `make test`) on a
# fresh Debian 12 (bookworm) made with debootstrap --variant=minbase, with
# only what a newcomer has before typing it: the checkout, git, make and
# Go. Everything else (Slurm, munge, headers, compilers, jq, sqlite3,
# Chromium, the release roots, ...) must come from the command itself.
# Run as root. The demo's cluster uses the ports in AUGUR_TEST_* (defaults
# below differ from the test clusters' so that it can run beside them);
# `make test` runs its own clusters on their usual ports, so nothing else
# may run a test cluster meanwhile. Slow (a minute or two of debootstrap, a
# cold build; `make test` the better part of an hour): not part of make test.
#
#   usage: tests/fresh.sh [demo|test] [ROOT]   (default demo; ROOT
#          /var/cache/augur/fresh/bookworm, made when missing)
#
# A ROOT is kept between runs and keeps what a run installed in it: for a
# machine as fresh as a newcomer's, give a ROOT no run has used.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
# shellcheck source-path=SCRIPTDIR source=cluster/enter.sh
source "$HERE/cluster/enter.sh"
TARGET="${1:-demo}"
ROOT="${2:-/var/cache/augur/fresh/bookworm}"
MIRROR="${AUGUR_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
case "$TARGET" in
demo)
	export AUGUR_TEST_CTLD_PORT="${AUGUR_TEST_CTLD_PORT:-8917}" AUGUR_TEST_SLURMD_PORT="${AUGUR_TEST_SLURMD_PORT:-8918}"
	export AUGUR_TEST_METRICS_PORT="${AUGUR_TEST_METRICS_PORT:-29667}" AUGUR_TEST_OUTCOMES_PORT="${AUGUR_TEST_OUTCOMES_PORT:-27031}"
	;;
test) ;;
*) echo "fresh.sh: the target is demo or test, not '$TARGET'" >&2; exit 2 ;;
esac

[[ "$(id -u)" == 0 ]] || { echo "fresh.sh: run as root" >&2; exit 2; }
if [[ ! -x "$ROOT/usr/bin/apt-get" ]]; then
	rm -rf "$ROOT"
	mkdir -p "$(dirname "$ROOT")"
	debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR"
fi
if [[ ! -x "$ROOT/usr/bin/make" ]]; then
	printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
	chmod 0755 "$ROOT/usr/sbin/policy-rc.d"
	cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
	# What a newcomer has before the first command: make and git.
	chroot "$ROOT" /bin/sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends make git ca-certificates'
fi
cp /etc/hosts "$ROOT/etc/hosts"
goroot="$(go env GOROOT)" modcache="$(go env GOMODCACHE)"
# A copy of the checkout, so that the build starts from nothing.
work="$ROOT/work/augur"
rm -rf "$work"
mkdir -p "$work"
git -C "$REPO" archive HEAD | tar -x -C "$work"
git -C "$work" init -q && git -C "$work" add -A && git -C "$work" -c user.name=n -c user.email=n@n commit -qm fresh
mkdir -p "$ROOT$goroot" "$ROOT$modcache"
enter "$ROOT" "$goroot" "$modcache" -- /usr/bin/env PATH="/usr/sbin:/usr/bin:/sbin:/bin:$goroot/bin" HOME=/root \
	GOMODCACHE="$modcache" /bin/bash -c "cd /work/augur && time make $TARGET; rc=\$?; tests/cluster/down.sh tests/.cluster; exit \$rc"
