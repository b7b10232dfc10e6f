package store_test

import (
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/google/go-cmp/cmp"
)

func TestActions(t *testing.T) {
	s := openStore(t, dbPath(t), store.Options{})
	prev := int64(10)
	in := []store.Action{
		{At: t0, JobID: 7, Kind: store.ActionSiteFactor, Value: 500, Previous: &prev, Reason: "rank 1 of 2", Policy: "augur"},
		{At: t0.Add(time.Second), JobID: 8, Kind: store.ActionSignal, Value: 10, Reason: "preempt", Policy: "augur", DryRun: true},
		{At: t0.Add(2 * time.Second), JobID: 8, Kind: store.ActionRequeue, Reason: "preempt", Policy: "augur", Error: "boom"},
		{At: t0.Add(3 * time.Second), Kind: store.ActionPause, Reason: "augur pause by uid 0"},
	}
	if err := s.AddActions(ctx, in); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		f    store.ActionFilter
		want []store.Action
	}{
		"all, newest first": {store.ActionFilter{}, []store.Action{in[3], in[2], in[1], in[0]}},
		"one job":           {store.ActionFilter{JobID: 8}, []store.Action{in[2], in[1]}},
		"one kind":          {store.ActionFilter{Kind: store.ActionSiteFactor}, []store.Action{in[0]}},
		"limit":             {store.ActionFilter{Limit: 1}, []store.Action{in[3]}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := s.Actions(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	paused, err := s.Paused(ctx)
	if err != nil || !paused {
		t.Errorf("Paused = %v, %v; want true", paused, err)
	}
	if err := s.AddActions(ctx, []store.Action{{At: t0.Add(4 * time.Second), Kind: store.ActionResume, Reason: "r"}}); err != nil {
		t.Fatal(err)
	}
	if paused, err := s.Paused(ctx); err != nil || paused {
		t.Errorf("after resume Paused = %v, %v; want false", paused, err)
	}
	if err := s.AddActions(ctx, []store.Action{{At: t0, Kind: "launch"}}); err == nil {
		t.Error("unknown kind accepted")
	}
}

// TestIdleActions: live.idle_gpu's kinds pass the table's CHECK, in a new
// store and in one upgraded from schema 7.
func TestIdleActions(t *testing.T) {
	path := dbPath(t)
	s := openStore(t, path, store.Options{})
	old := store.Action{At: t0, JobID: 3, Kind: store.ActionOOMRequeue, Value: 1, Reason: "oom"}
	if err := s.AddActions(ctx, []store.Action{old}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := rawDB(t, path).Exec("PRAGMA user_version = 7"); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path, store.Options{})
	defer s.Close()
	in := []store.Action{
		{At: t0.Add(time.Second), JobID: 9, Kind: store.ActionIdleFlag, Value: 2, Reason: "GPUs idle", Policy: "idle_gpu"},
		{At: t0.Add(2 * time.Second), JobID: 9, Kind: store.ActionIdleWarn, Value: 2, Reason: "will be cancelled", Policy: "idle_gpu"},
		{At: t0.Add(3 * time.Second), JobID: 9, Kind: store.ActionIdleCancel, Value: 7200, Reason: "cancelled", Policy: "idle_gpu", DryRun: true},
	}
	if err := s.AddActions(ctx, in); err != nil {
		t.Fatal(err)
	}
	got, err := s.Actions(ctx, store.ActionFilter{})
	if err != nil || len(got) != 4 || got[0].Kind != store.ActionIdleCancel || !got[0].DryRun || got[3].Kind != store.ActionOOMRequeue {
		t.Fatalf("actions after upgrade: %+v, %v", got, err)
	}
}
