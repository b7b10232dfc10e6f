#!/usr/bin/env bash
# Run every Fuzz target in the module for FUZZTIME each (default 10s).
#
# Go 1.26's fuzz coordinator can report "context deadline exceeded" at the
# -fuzztime boundary on a loaded machine without having found anything
# (golang/go#75804, fixed in Go 1.27). A real finding always writes a
# reproducer ("Failing input written to testdata/fuzz/..."), so a target
# fails here when go test fails with a reproducer, a panic or a test error,
# and a bare deadline at the boundary is reported and retried once.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-10s}"
GO="${GO:-go}"
failed=0 ran=0 flaked=0
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

run_target() { # pkg target
	"$GO" test -run '^$' -fuzz "^$2\$" -fuzztime "$FUZZTIME" "$1" >"$log" 2>&1
}

bare_deadline() {
	grep -q 'context deadline exceeded' "$log" &&
		! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$log"
}

for pkg in $("$GO" list ./...); do
	targets="$("$GO" test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true)"
	for f in $targets; do
		ran=$((ran + 1))
		echo "fuzz $pkg $f ($FUZZTIME)"
		if run_target "$pkg" "$f"; then
			continue
		fi
		if bare_deadline; then
			flaked=$((flaked + 1))
			echo "  deadline at the fuzztime boundary with no reproducer (golang/go#75804): once more"
			run_target "$pkg" "$f" && continue
			bare_deadline && { echo "  again a bare deadline: not a finding"; continue; }
		fi
		cat "$log"
		failed=$((failed + 1))
	done
done
echo "$flaked fuzztime-boundary deadlines retried"
echo "fuzz: $((ran - failed)) passed, $failed failed"
exit $((failed > 0))
