package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
)

// capture runs f with stdout redirected and returns what it printed.
func capture(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	ferr := f()
	w.Close()
	os.Stdout = old
	return <-done, ferr
}

func TestConfigCheck(t *testing.T) {
	out, err := capture(t, func() error { return runConfig([]string{"check", "--config", "../../../etc/augur.yaml"}) })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# configuration OK", "timeout: 50ms", "path: /run/augur/augurd.sock", `mode: "0660"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("shim: {timout: 5ms}\n"), 0o644)
	if _, err := capture(t, func() error { return runConfig([]string{"check", "--config", bad}) }); err == nil || !strings.Contains(err.Error(), "shim.timout") {
		t.Errorf("bad key: err = %v", err)
	}
}

func TestDecisions(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "augur.db")
	st, err := store.Open(context.Background(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// augurd records a uid's first submission without a name (it resolves
	// names off the request path), later ones with it.
	for i, d := range []struct{ tok, user, action, dec string }{
		{"aa", "", "accept", `{"annotation":"augur:tok=aa pred_gpu_mem=80G"}`},
		{"bb", "root", "reject", `{"message":"augur: this job used at least 38G"}`},
	} {
		err := st.Record(context.Background(), store.Submission{Token: d.tok, ReceivedAt: time.Unix(1.7e9+int64(i), 0),
			UserID: 0, User: d.user, Name: "job" + d.tok, Script: "#!/bin/sh\n", Action: d.action, Decision: []byte(d.dec), Request: []byte("{}")})
		if err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	cfg := filepath.Join(dir, "augur.yaml")
	os.WriteFile(cfg, []byte("store: {path: "+db+"}\n"), 0o644)
	out, err := capture(t, func() error { return runDecisions([]string{"--config", cfg, "-n", "5"}) })
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "jobbb") || !strings.Contains(lines[1], "at least 38G") ||
		!strings.Contains(lines[2], "augur:tok=aa") {
		t.Errorf("decisions output:\n%s", out)
	}
	if len(lines) == 3 && strings.Fields(lines[1])[1] != strings.Fields(lines[2])[1] {
		t.Errorf("one uid, two user names:\n%s", out)
	}
}

// TestEvalTiming: --timing adds the spread of reading times, by length,
// after the accuracy table; it prints text, so --json refuses it.
func TestEvalTiming(t *testing.T) {
	out, err := capture(t, func() error {
		return runEval([]string{"--scripts", "../../../predictor/testdata/scripts", "--timing"})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"scripts in ", "reading a script (predictor.ParseScript, no cache", "  all ", "up to 50 lines", "p99 "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := capture(t, func() error {
		return runEval([]string{"--scripts", "../../../predictor/testdata/scripts", "--timing", "--json"})
	}); err == nil || !strings.Contains(err.Error(), "without --json") {
		t.Errorf("--timing --json: err = %v", err)
	}
}
