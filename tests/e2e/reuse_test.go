//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/augur-hpc/augur/tests/clustertest"
)

// editShim rewrites the shim section of the cluster's augur.yaml with edit
// and waits until the plugin inside slurmctld has reloaded it (it looks
// every 10 s): until its load line says loaded once more than before.
func (c *cluster) editShim(t *testing.T, edit func(yaml []byte) []byte, loaded string) {
	t.Helper()
	path := filepath.Join(c.Dir, "etc", "augur.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reuseLine.Match(b) {
		t.Fatalf("%s has no shim.reuse_window line", path)
	}
	before := strings.Count(c.ctldLog(t), loaded)
	if err := os.WriteFile(path, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
	clustertest.WaitFor(t, 30*time.Second, "the plugin to load: "+loaded, func() bool {
		return strings.Count(c.ctldLog(t), loaded) > before
	})
}

var (
	reuseLine      = regexp.MustCompile(`(?m)^  reuse_window: .*$`)
	forwardEnvLine = regexp.MustCompile(`(?m)^  forward_env: .*\n`)
)

// setReuseWindow sets shim.reuse_window.
func (c *cluster) setReuseWindow(t *testing.T, window string) {
	t.Helper()
	c.editShim(t, func(b []byte) []byte {
		return reuseLine.ReplaceAll(b, []byte("  reuse_window: "+window))
	}, "reuse window "+window+",")
}

// setForwardEnv sets shim.forward_env: a line after shim.reuse_window for
// off, none (the default) for on.
func (c *cluster) setForwardEnv(t *testing.T, on bool) {
	t.Helper()
	if on {
		c.editShim(t, func(b []byte) []byte { return forwardEnvLine.ReplaceAll(b, nil) }, "environment forwarded,")
		return
	}
	c.editShim(t, func(b []byte) []byte {
		return reuseLine.ReplaceAllFunc(forwardEnvLine.ReplaceAll(b, nil), func(l []byte) []byte {
			return append(append([]byte{}, l...), "\n  forward_env: false"...) // l is b's: a copy, not b's bytes after it
		})
	}, "environment not forwarded,")
}

// TestReuseWindowStorm: with shim.reuse_window 1s, a loop of 300 identical
// sbatch gets augurd's decision for the first of each second inside
// slurmctld, the others without a round trip: every job is annotated with
// its own token, and every one is recorded in augurd's store (the reused
// ones marked reused_of), the last ones by the plugin's flush after the
// loop stopped, without waiting for another submission.
func TestReuseWindowStorm(t *testing.T) {
	c.setReuseWindow(t, "1s")
	t.Cleanup(func() {
		c.setReuseWindow(t, "0s")
		c.clearQueue(t)
	})
	path := c.BatchScript(t, scriptFor("python train.py --model resnet50 --batch-size 64 # storm"))
	const n = 300
	ids := make([]uint64, 0, n)
	start := time.Now()
	for range n {
		ids = append(ids, c.Sbatch(t, "-H", "-J", "reuse-storm", "-o", "/dev/null", path))
	}
	t.Logf("%d submissions in %s", n, time.Since(start).Round(time.Millisecond))

	ours := map[uint64]bool{}
	for _, id := range ids {
		ours[id] = true
	}
	tokens := map[string]uint64{}
	for _, j := range c.squeue(t) {
		if !ours[j.ID] {
			continue // squeue --json leaves out no job (22.05 ignores -n with --json)
		}
		tok := token(j)
		if tok == "" {
			t.Errorf("job %d not annotated: %q", j.ID, j.AdminComment)
			continue
		}
		if other, dup := tokens[tok]; dup {
			t.Errorf("jobs %d and %d share token %s", other, j.ID, tok)
		}
		tokens[tok] = j.ID
	}
	if len(tokens) != n {
		t.Fatalf("%d distinct tokens for our %d jobs, want %d", len(tokens), n, n)
	}

	// Every job's own record, none rebuilt by the linker: a reused decision's
	// report reaches augurd a moment after its job is queued, and the linker
	// waits for it rather than recover a bare row first.
	var mine []store.Submission
	clustertest.WaitFor(t, 10*time.Second, "every job recorded in augurd's store", func() bool {
		subs, ok := c.submissions()
		if !ok {
			return false
		}
		mine = mine[:0]
		for _, s := range subs {
			if _, ok := tokens[s.Token]; ok {
				mine = append(mine, s)
			}
		}
		return len(mine) == n
	})
	var asks []time.Time
	reused := 0
	for _, s := range mine {
		var dec struct {
			ReusedOf  string `json:"reused_of"`
			Recovered bool   `json:"recovered"`
		}
		if err := json.Unmarshal(s.Decision, &dec); err != nil {
			t.Fatalf("%s: decision %q: %v", s.Token, s.Decision, err)
		}
		switch {
		case dec.Recovered:
			t.Errorf("%s (job %d): rebuilt from its AdminComment, not recorded from its decision", s.Token, tokens[s.Token])
		case dec.ReusedOf != "":
			reused++
		default:
			asks = append(asks, s.ReceivedAt)
		}
	}
	t.Logf("%d of %d answered inside slurmctld from an earlier decision; augurd asked %d times; augur_reused_decisions_total{record=\"recorded\"} %s",
		reused, n, len(asks), c.metric(t, `augur_reused_decisions_total{record="recorded"}`))
	if reused == 0 || len(asks) == 0 {
		t.Errorf("reused %d, asked %d: the window did nothing", reused, len(asks))
	}
	// The window's promise, read from augurd's own clock: the shim starts a
	// window when augurd's answer arrives, after augurd received the
	// request, so two asks are always more than one window apart however
	// fast or slow the machine.
	slices.SortFunc(asks, time.Time.Compare)
	for i := 1; i < len(asks); i++ {
		if gap := asks[i].Sub(asks[i-1]); gap <= time.Second {
			t.Errorf("augurd asked twice %s apart with a 1 s window (asks %d and %d of %d)", gap, i, i+1, len(asks))
		}
	}
}
