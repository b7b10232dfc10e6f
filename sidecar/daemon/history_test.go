package daemon

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
)

func TestHistoryCache(t *testing.T) {
	now := time.Unix(1e9, 0)
	c := newHistoryCache(2*time.Second, func() time.Time { return now })
	loads := 0
	rows := []store.Outcome{{JobID: 1}}
	load := func(context.Context) ([]store.Outcome, error) { loads++; return rows, nil }
	ctx := context.Background()

	c.get(ctx, 1, "s", load)
	c.get(ctx, 1, "s", load)
	if loads != 1 {
		t.Fatalf("loads = %d within the TTL, want 1", loads)
	}
	c.get(ctx, 2, "s", load) // another user
	if loads != 2 {
		t.Fatalf("loads = %d, want a load per (user, signature)", loads)
	}
	now = now.Add(3 * time.Second)
	c.get(ctx, 1, "s", load)
	if loads != 3 {
		t.Fatalf("loads = %d after the TTL, want a reload", loads)
	}
	c.invalidate()
	c.get(ctx, 1, "s", load)
	if loads != 4 {
		t.Fatalf("loads = %d after invalidate, want a reload", loads)
	}
	failing := func(context.Context) ([]store.Outcome, error) { return nil, errors.New("locked") }
	if _, err := c.get(ctx, 9, "x", failing); err == nil {
		t.Fatal("error not passed on")
	}
	if _, err := c.get(ctx, 9, "x", load); err != nil || loads != 5 {
		t.Fatalf("a failed load was cached (loads %d, err %v)", loads, err)
	}
}
