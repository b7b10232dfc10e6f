package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
)

// t0 is the tests' clock: every time is t0 plus an offset.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// subBuilder builds Submissions: newSub("ab01").User(1000, "ana").Obj().
type subBuilder struct{ s store.Submission }

func newSub(token string) *subBuilder {
	return &subBuilder{s: store.Submission{
		Token:      token,
		ReceivedAt: t0,
		SubmitUID:  0,
		UserID:     1000,
		User:       "ana",
		Account:    "physics",
		Partition:  "gpu",
		QOS:        "normal",
		Name:       "train",
		Script:     "#!/bin/bash\n#SBATCH --gres=gpu:1\npython train.py\n",
		Signature:  "sig-train",
		Request:    []byte(`{"gres":"gpu:1"}`),
		Decision:   []byte(`{"action":"accept"}`),
		Action:     store.ActionAccept,
		PredSource: "history",
	}}
}

func (b *subBuilder) User(uid uint32, name string) *subBuilder {
	b.s.UserID, b.s.User = uid, name
	return b
}
func (b *subBuilder) Script(script string) *subBuilder { b.s.Script = script; return b }
func (b *subBuilder) At(d time.Duration) *subBuilder   { b.s.ReceivedAt = t0.Add(d); return b }
func (b *subBuilder) Reject() *subBuilder              { b.s.Action = store.ActionReject; return b }
func (b *subBuilder) Job(id uint64) *subBuilder        { b.s.JobID = id; return b }
func (b *subBuilder) Pred(memMiB, memHiMiB, runSec, runHiSec float64) *subBuilder {
	b.s.PredMemMiB, b.s.PredMemHiMiB = memMiB, memHiMiB
	b.s.PredRuntimeSec, b.s.PredRuntimeHiSec = runSec, runHiSec
	return b
}
func (b *subBuilder) Obj() store.Submission { return b.s }

// outBuilder builds Outcomes: newOutcome(7).User(1000).Sig("s").EndedAt(time.Hour).Obj().
type outBuilder struct{ o store.Outcome }

func newOutcome(jobID uint64) *outBuilder {
	return &outBuilder{o: store.Outcome{
		JobID:         jobID,
		UserID:        1000,
		Signature:     "sig-train",
		GPUType:       "a100",
		GPUs:          1,
		PeakGPUMemMiB: 20_000,
		RuntimeSec:    3600,
		ExitState:     "COMPLETED",
		EndedAt:       t0,
		Source:        "node",
	}}
}

func (b *outBuilder) User(uid uint32) *outBuilder         { b.o.UserID = uid; return b }
func (b *outBuilder) Sig(sig string) *outBuilder          { b.o.Signature = sig; return b }
func (b *outBuilder) EndedAt(d time.Duration) *outBuilder { b.o.EndedAt = t0.Add(d); return b }
func (b *outBuilder) Runtime(sec float64) *outBuilder     { b.o.RuntimeSec = sec; return b }
func (b *outBuilder) Token(token string) *outBuilder      { b.o.Token = token; return b }
func (b *outBuilder) Exit(state string) *outBuilder       { b.o.ExitState = state; return b }
func (b *outBuilder) Obj() store.Outcome                  { return b.o }
func (b *outBuilder) Source(source string) *outBuilder    { b.o.Source = source; return b }
func (b *outBuilder) PeakGPUMem(mib float64) *outBuilder  { b.o.PeakGPUMemMiB = mib; return b }

// token makes the i'th test token, hex as the shim's are.
func token(i int) string { return fmt.Sprintf("%016x", i) }

// dbPath is a fresh database path under t.TempDir().
func dbPath(t testing.TB) string { return filepath.Join(t.TempDir(), "augur.db") }

// openStore opens a store at path and closes it when the test ends.
func openStore(t testing.TB, path string, opts store.Options) *store.Store {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := store.Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// rawDB opens the file directly, beside the store, to look at or lock it.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// queryInt runs a query returning one integer.
func queryInt(t testing.TB, db *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// lockDB holds SQLite's write lock on path from another connection, as a
// second process would, until the returned function is called.
func lockDB(t testing.TB, path string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := rawDB(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatalf("BEGIN EXCLUSIVE: %v", err)
	}
	var once atomic.Bool
	release = func() {
		if once.Swap(true) {
			return
		}
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Errorf("ROLLBACK: %v", err)
		}
		conn.Close()
	}
	t.Cleanup(release)
	return release
}

// waitFor polls cond until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// countingHandler counts log records at Warn and above.
type countingHandler struct{ warns *atomic.Int64 }

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.warns.Add(1)
	}
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }
