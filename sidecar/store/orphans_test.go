package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/google/go-cmp/cmp"
)

// TestUnlinkedAndMarkOrphaned: Unlinked lists only accepted, unlinked,
// unmarked rows in the window, through the partial index; MarkOrphaned marks
// only such rows, and a later link clears the mark.
func TestUnlinkedAndMarkOrphaned(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "augur.db")
	s := openStore(t, path, store.Options{})
	for _, sub := range []store.Submission{
		newSub("a1").At(0).Obj(),
		newSub("b2").At(time.Second).Job(42).Obj(),
		newSub("c3").At(2 * time.Second).Reject().Obj(),
		newSub("d4").At(3 * time.Second).Obj(),
		newSub("e5").At(time.Hour).Obj(),
	} {
		if err := s.Record(ctx, sub); err != nil {
			t.Fatal(err)
		}
	}
	tokens := func(us []store.Unlinked) []string {
		var out []string
		for _, u := range us {
			out = append(out, u.Token)
		}
		return out
	}
	got, err := s.Unlinked(ctx, t0, t0.Add(time.Minute), 100)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a1", "d4"}, tokens(got)); diff != "" {
		t.Errorf("Unlinked (-want +got):\n%s", diff)
	}
	if !got[1].ReceivedAt.Equal(t0.Add(3 * time.Second)) {
		t.Errorf("d4 received at %v", got[1].ReceivedAt)
	}
	for tok, want := range map[string]bool{"a1": true, "b2": false, "c3": false, "d4": true} {
		marked, err := s.MarkOrphaned(ctx, tok)
		if err != nil || marked != want {
			t.Errorf("MarkOrphaned(%s) = %v, %v; want %v", tok, marked, err, want)
		}
	}
	if again, err := s.MarkOrphaned(ctx, "a1"); err != nil || again {
		t.Errorf("second MarkOrphaned(a1) = %v, %v; want false", again, err)
	}
	if got, _ := s.Unlinked(ctx, t0, t0.Add(2*time.Hour), 100); !cmp.Equal([]string{"e5"}, tokens(got)) {
		t.Errorf("after marking: %v, want [e5]", tokens(got))
	}
	if err := s.LinkJob(ctx, "d4", 77); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	var state string
	if err := db.QueryRow(`SELECT final_state FROM submissions WHERE token = 'd4'`).Scan(&state); err != nil || state != "" {
		t.Errorf("d4 linked after being marked: final_state %q, %v; want ''", state, err)
	}
	if err := db.QueryRow(`SELECT final_state FROM submissions WHERE token = 'a1'`).Scan(&state); err != nil || state != store.FinalOrphaned {
		t.Errorf("a1: final_state %q, %v", state, err)
	}
	// The sweep's query reads the partial index, not the table.
	rows, err := db.Query(`EXPLAIN QUERY PLAN SELECT token, received_at_ns FROM submissions
WHERE job_id IS NULL AND final_state = '' AND action = 'accept'
  AND received_at_ns >= ? AND received_at_ns < ?
ORDER BY received_at_ns
LIMIT ?`, 0, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if p := strings.Join(plan, "; "); !strings.Contains(p, "submissions_unlinked") {
		t.Errorf("query plan %q does not use submissions_unlinked", p)
	}
	if _, err := s.MarkOrphaned(ctx, "not-hex"); err == nil {
		t.Error("MarkOrphaned accepted a bad token")
	}
}
