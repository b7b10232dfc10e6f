#!/usr/bin/env bash
# Install the Debian packages the test cluster needs, when any is missing.
# Idempotent: does nothing (and needs no network) when all are installed.
set -euo pipefail

PACKAGES=(slurmctld slurmd slurm-client munge libmunge-dev libslurm-dev sqlite3 chromium prometheus)

installed() {
	[[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

missing=()
for p in "${PACKAGES[@]}"; do
	installed "$p" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
	exit 0
fi

echo "[install-deps] missing packages: ${missing[*]}" >&2
if [[ "$(id -u)" -ne 0 ]]; then
	echo "[install-deps] ERROR: must run as root to install: ${missing[*]}" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null; then
	echo "[install-deps] ERROR: apt-get not found (Debian 12 expected); install by hand: ${missing[*]}" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-get update; then
	echo "[install-deps] ERROR: apt-get update failed" >&2
	exit 1
fi
if ! apt-get install -y "${PACKAGES[@]}"; then
	echo "[install-deps] ERROR: apt-get install -y ${PACKAGES[*]} failed" >&2
	exit 1
fi
for p in "${PACKAGES[@]}"; do
	installed "$p" || {
		echo "[install-deps] ERROR: $p still not installed after apt-get" >&2
		exit 1
	}
done
echo "[install-deps] installed: ${missing[*]}" >&2
