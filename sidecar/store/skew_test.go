package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/google/go-cmp/cmp"
)

func TestSkewRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "augur.db")
	st := openStore(t, path, store.Options{})
	recs := []store.SkewRecord{
		{JobID: 7, At: t0, UserID: 1000, Event: store.SkewSlow, Ranks: 4, SlowRanks: []int{3}, MaxSlowdown: 1.8, Imbalance: 0.6,
			Detail: []byte(`{"ready":true}`)},
		{JobID: 7, At: t0.Add(time.Minute), UserID: 1000, Event: store.SkewPlan, Ranks: 4, SlowRanks: []int{3}, MaxSlowdown: 1.8,
			Imbalance: 0.6, PlanVersion: 1, Gain: 0.4, Plan: []byte(`{"shares":[10,10,10,2]}`)},
		{JobID: 8, At: t0, UserID: 1001, Event: store.SkewRecovered, Ranks: 2, SlowRanks: []int{}},
	}
	for _, r := range recs {
		if err := st.AddSkew(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.Skew(ctx, 7, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.SkewRecord{recs[1], recs[0]}, got); diff != "" {
		t.Errorf("Skew (-want +got):\n%s", diff)
	}
	if err := st.AddSkew(ctx, store.SkewRecord{JobID: 1, At: t0, Event: "bogus"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("bad event: err = %v", err)
	}
	st.Close()
	r, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err = r.Skew(ctx, 8, 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.SkewRecord{recs[2]}, got); diff != "" {
		t.Errorf("Reader.Skew (-want +got):\n%s", diff)
	}
}
