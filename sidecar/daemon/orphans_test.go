package daemon

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/slurm"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/google/go-cmp/cmp"
)

// finalStates reads token -> (final_state, job_id) straight from the database.
func finalStates(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT token, final_state, coalesce(job_id, 0) FROM submissions`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var tok, state string
		var job int64
		if err := rows.Scan(&tok, &state, &job); err != nil {
			t.Fatal(err)
		}
		if job != 0 {
			state += "@job"
		}
		got[tok] = state
	}
	return got
}

// TestLinkerMarksOrphans drives the linker with a fake queue and clock over
// a real SQLite store: a record becomes ORPHANED only after a pass that ran
// between OrphanAfter and JobHorizon after it found no job with its token.
func TestLinkerMarksOrphans(t *testing.T) {
	cfg := testConfig(t)
	ctx := context.Background()
	st, err := store.Open(ctx, cfg.Store.Path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	sub := func(tok string, at time.Time, action string) {
		t.Helper()
		if err := st.Record(ctx, store.Submission{Token: tok, ReceivedAt: at, UserID: 1000, Script: "#!/bin/sh\n",
			Signature: "sig", Action: action}); err != nil {
			t.Fatal(err)
		}
	}
	sub("a1", start, store.ActionAccept)                      // the shim gave up: no job ever
	sub("b2", start, store.ActionAccept)                      // a held job carries it
	sub("c3", start.Add(-2*time.Minute), store.ActionAccept)  // decided while the linker was down, within the horizon
	sub("d4", start.Add(-30*time.Minute), store.ActionAccept) // decided long before this augurd: its fate is unknown
	sub("e5", start, store.ActionReject)                      // rejected: sbatch failed, no job expected
	sub("f6", start.Add(30*time.Second), store.ActionAccept)  // no job at first, then its job turns up after all
	sub("a7", start.Add(-10*time.Second), store.ActionAccept) // no job; a failed pass must not count for it

	q := &fakeQueue{jobs: []slurm.Job{
		{ID: 201, UserID: 1000, State: "PENDING", AdminComment: "augur:tok=b2 pred_gpu_mem=16G"},
	}}
	now := start
	l := NewLinker(q, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	l.Now = func() time.Time { return now }
	marked := 0
	l.Orphaned = func(n int) { marked += n }

	pass := func(at time.Duration) {
		t.Helper()
		now = start.Add(at)
		if _, _, err := l.Pass(ctx); err != nil {
			t.Fatalf("pass at +%s: %v", at, err)
		}
	}
	pass(0) // c3 is 2 min old at the first pass: vouched for
	if diff := cmp.Diff(map[string]string{
		"a1": "", "b2": "@job", "c3": store.FinalOrphaned, "d4": "", "e5": "", "f6": "", "a7": "",
	}, finalStates(t, cfg.Store.Path)); diff != "" {
		t.Errorf("after the first pass (-want +got):\n%s", diff)
	}
	pass(30 * time.Second) // a1 is not old enough yet
	if got := finalStates(t, cfg.Store.Path)["a1"]; got != "" {
		t.Errorf("a1 marked %q 30 s after its decision", got)
	}
	// A pass whose squeue fails vouches for nothing.
	q.err = errors.New("slurmctld not responding")
	now = start.Add(65 * time.Second)
	if _, _, err := l.Pass(ctx); err == nil {
		t.Fatal("a failed squeue did not fail the pass")
	}
	q.err = nil
	if got := finalStates(t, cfg.Store.Path)["a7"]; got != "" {
		t.Errorf("a7 marked %q by a pass whose squeue failed", got)
	}
	pass(70 * time.Second)
	if diff := cmp.Diff(map[string]string{
		"a1": store.FinalOrphaned, "b2": "@job", "c3": store.FinalOrphaned, "d4": "", "e5": "",
		"f6": "", "a7": store.FinalOrphaned,
	}, finalStates(t, cfg.Store.Path)); diff != "" {
		t.Errorf("70 s after (-want +got):\n%s", diff)
	}
	pass(100 * time.Second)
	if got := finalStates(t, cfg.Store.Path)["f6"]; got != store.FinalOrphaned {
		t.Errorf("f6 = %q 70 s after its decision, want ORPHANED", got)
	}
	// f6's job turns up after all (an admin restored its AdminComment): the
	// link wins over the mark.
	q.jobs = append(q.jobs, slurm.Job{ID: 202, UserID: 1000, State: "RUNNING", AdminComment: "augur:tok=f6 pred_gpu_mem=16G"})
	pass(110 * time.Second)
	// Hours later (the passes of the horizon gone) nothing else changes, and
	// d4, never vouched for, stays unmarked.
	pass(3 * time.Hour)
	if diff := cmp.Diff(map[string]string{
		"a1": store.FinalOrphaned, "b2": "@job", "c3": store.FinalOrphaned, "d4": "", "e5": "",
		"f6": "@job", "a7": store.FinalOrphaned,
	}, finalStates(t, cfg.Store.Path)); diff != "" {
		t.Errorf("at the end (-want +got):\n%s", diff)
	}
	if marked != 4 {
		t.Errorf("Orphaned counted %d, want 4 (c3, a1, a7, f6)", marked)
	}
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}
