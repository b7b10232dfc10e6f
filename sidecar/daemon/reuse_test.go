package daemon

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/augur-hpc/augur/slurm-plugin/wire"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// waitStored polls the store for a committed submission.
func waitStored(t *testing.T, st *store.Store, tok string) store.Submission {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		sub, err := st.Submission(context.Background(), tok)
		if err == nil {
			return sub
		}
		if !errors.Is(err, store.ErrNotFound) || time.Now().After(deadline) {
			t.Fatalf("submission %s: %v", tok, err)
		}
	}
}

// TestReusedDecisionsRecorded: submissions the shim answered from an
// earlier decision are recorded as copies of it under their own tokens and
// times, marked reused_of; one whose original augurd never saw is counted
// and left to the linker.
func TestReusedDecisionsRecorded(t *testing.T) {
	svc, st, m := newService(t, testConfig(t))
	ctx := context.Background()
	first := request("0001", "gres:gpu:1")
	handle(svc, ctx, first)
	at := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	next := request("0002", "gres:gpu:2")
	next.Reused = []wire.Reuse{
		{Token: "00a1", Of: "0001", AtUnixNano: at.UnixNano()},
		{Token: "00a2", Of: "0001", AtUnixNano: at.Add(time.Millisecond).UnixNano()},
		{Token: "00a3", Of: "ffff", AtUnixNano: at.UnixNano()},
	}
	handle(svc, ctx, next)

	orig := waitStored(t, st, "0001")
	for i, tok := range []string{"00a1", "00a2"} {
		got := waitStored(t, st, tok)
		if got.Script != orig.Script || got.Name != orig.Name || got.PredSource != orig.PredSource ||
			got.Signature != orig.Signature || got.Action != orig.Action {
			t.Errorf("%s: %+v is not a copy of %+v", tok, got, orig)
		}
		if want := at.Add(time.Duration(i) * time.Millisecond); !got.ReceivedAt.Equal(want) {
			t.Errorf("%s received %s, want %s", tok, got.ReceivedAt, want)
		}
		if !strings.Contains(string(got.Decision), `"reused_of":"0001"`) {
			t.Errorf("%s decision %s not marked reused_of 0001", tok, got.Decision)
		}
	}
	if _, err := st.Submission(ctx, "00a3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a reuse of an unknown decision was recorded: %v", err)
	}
	if got := testutil.ToFloat64(m.ReusedDecisions.WithLabelValues("recorded")); got != 2 {
		t.Errorf("recorded %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.ReusedDecisions.WithLabelValues("unknown")); got != 1 {
		t.Errorf("unknown %v, want 1", got)
	}
}

// TestReportOnlyRequest: a report-only request records its reports and
// nothing of its own.
func TestReportOnlyRequest(t *testing.T) {
	svc, st, _ := newService(t, testConfig(t))
	ctx := context.Background()
	handle(svc, ctx, request("0001", "gres:gpu:1"))
	resp := handle(svc, ctx, &wire.Request{V: wire.Version, Token: "0f0f", ReportOnly: true,
		Reused: []wire.Reuse{{Token: "00b1", Of: "0001", AtUnixNano: time.Now().UnixNano()}}})
	if resp.Action != wire.Accept || resp.Token != "0f0f" {
		t.Errorf("answer %+v", resp)
	}
	waitStored(t, st, "00b1")
	if _, err := st.Submission(ctx, "0f0f"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the report-only request itself was recorded: %v", err)
	}
}
