package store_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/augur-hpc/augur/sidecar/store"
)

var ctx = context.Background()

// bigScript is a compressible script over the 4 KiB threshold.
func bigScript(n int) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n#SBATCH --gres=gpu:4\n")
	for i := 0; b.Len() < n; i++ {
		b.WriteString("srun python step.py --shard ")
		b.WriteString(token(i))
		b.WriteString("\n")
	}
	return b.String()
}

// randomScript is an incompressible script of n bytes.
func randomScript(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return string(b)
}

func TestRecordRoundTrip(t *testing.T) {
	cases := map[string]struct {
		sub             store.Submission
		wantCompression string
	}{
		"small script": {
			sub:             newSub("01").Obj(),
			wantCompression: "none",
		},
		"script over 4 KiB is gzipped": {
			sub:             newSub("02").Script(bigScript(20<<10)).Pred(1024, 2048, 60, 120).Job(77).Obj(),
			wantCompression: "gzip",
		},
		"incompressible big script is stored as is": {
			sub:             newSub("03").Script(randomScript(8 << 10)).Reject().Obj(),
			wantCompression: "none",
		},
		"empty fields, zero time, no JSON": {
			sub: store.Submission{Token: "04", Action: store.ActionReject},
			// The empty script is a script like any other.
			wantCompression: "none",
		},
	}
	path := dbPath(t)
	s := openStore(t, path, store.Options{})
	raw := rawDB(t, path)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := s.Record(ctx, tc.sub); err != nil {
				t.Fatalf("Record: %v", err)
			}
			got, err := s.Submission(ctx, tc.sub.Token)
			if err != nil {
				t.Fatalf("Submission: %v", err)
			}
			if diff := cmp.Diff(tc.sub, got); diff != "" {
				t.Errorf("Submission round trip (-want +got):\n%s", diff)
			}
			sum := sha256.Sum256([]byte(tc.sub.Script))
			var compression string
			if err := raw.QueryRow("SELECT compression FROM scripts WHERE sha256 = ?", sum[:]).Scan(&compression); err != nil {
				t.Fatal(err)
			}
			if compression != tc.wantCompression {
				t.Errorf("script compression = %q, want %q", compression, tc.wantCompression)
			}
		})
	}
}

func TestScriptDedupe(t *testing.T) {
	big := bigScript(10 << 10)
	cases := map[string]struct {
		scripts     []string
		wantScripts int64
	}{
		"same big script twice":      {scripts: []string{big, big}, wantScripts: 1},
		"same small script 1000x":    {scripts: repeat("#!/bin/sh\nhostname\n", 1000), wantScripts: 1},
		"two scripts, interleaved":   {scripts: []string{big, "a", big, "a", big}, wantScripts: 2},
		"distinct scripts":           {scripts: []string{"a", "b", big}, wantScripts: 3},
		"one byte differs, two rows": {scripts: []string{big, big + " "}, wantScripts: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := dbPath(t)
			s := openStore(t, path, store.Options{})
			// Concurrently, so that duplicates also meet inside one batch.
			var wg sync.WaitGroup
			for i, script := range tc.scripts {
				wg.Go(func() {
					if err := s.Record(ctx, newSub(token(i)).Script(script).Obj()); err != nil {
						t.Errorf("Record: %v", err)
					}
				})
			}
			wg.Wait()
			raw := rawDB(t, path)
			if got := queryInt(t, raw, "SELECT count(*) FROM scripts"); got != tc.wantScripts {
				t.Errorf("scripts rows = %d, want %d", got, tc.wantScripts)
			}
			if got, want := queryInt(t, raw, "SELECT count(*) FROM submissions"), int64(len(tc.scripts)); got != want {
				t.Errorf("submissions rows = %d, want %d", got, want)
			}
			for i, script := range tc.scripts {
				got, err := s.Submission(ctx, token(i))
				if err != nil {
					t.Fatal(err)
				}
				if got.Script != script {
					t.Errorf("submission %d: script of %d bytes, want %d", i, len(got.Script), len(script))
				}
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestRecordExactlyOnce(t *testing.T) {
	s := openStore(t, dbPath(t), store.Options{})
	first := newSub("aa").Obj()
	retry := newSub("aa").User(2000, "bo").Obj() // a retry must not replace the first row
	for _, sub := range []store.Submission{first, retry, first} {
		if err := s.Record(ctx, sub); err != nil {
			t.Fatalf("Record: %v", err)
		}
	}
	n, err := s.CountSubmissions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("CountSubmissions = %d, want 1", n)
	}
	got, err := s.Submission(ctx, "aa")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, got); diff != "" {
		t.Errorf("stored row (-want +got):\n%s", diff)
	}
}

func TestRecordConcurrent(t *testing.T) {
	const goroutines, perGoroutine = 50, 200
	s := openStore(t, dbPath(t), store.Options{})
	scripts := []string{"#!/bin/sh\na\n", "#!/bin/sh\nb\n", bigScript(6 << 10)}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				n := g*perGoroutine + i
				if err := s.Record(ctx, newSub(token(n)).Script(scripts[n%len(scripts)]).Obj()); err != nil {
					t.Errorf("Record %d: %v", n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := s.Pending(); got != 0 {
		t.Errorf("Pending = %d, want 0", got)
	}
	n, err := s.CountSubmissions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != goroutines*perGoroutine {
		t.Errorf("CountSubmissions = %d, want %d", n, goroutines*perGoroutine)
	}
	for _, n := range []int{0, 1, 4999, goroutines*perGoroutine - 1} {
		got, err := s.Submission(ctx, token(n))
		if err != nil {
			t.Fatalf("Submission %d: %v", n, err)
		}
		if diff := cmp.Diff(newSub(token(n)).Script(scripts[n%len(scripts)]).Obj(), got); diff != "" {
			t.Errorf("submission %d (-want +got):\n%s", n, diff)
		}
	}
}

// TestRecordLockedDatabase: while another process holds the write lock,
// Record gives up at its deadline, the rows stay queued, and once the lock
// is gone they are written in order.
func TestRecordLockedDatabase(t *testing.T) {
	path := dbPath(t)
	var warns atomic.Int64
	s := openStore(t, path, store.Options{
		Logger:      slog.New(countingHandler{&warns}),
		BusyTimeout: 20 * time.Millisecond,
		RetryMin:    5 * time.Millisecond,
		RetryMax:    50 * time.Millisecond,
	})
	release := lockDB(t, path)

	rctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.Record(rctx, newSub("10").Obj())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Record on a locked database = %v, want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Record took %s to give up, want about its 100ms deadline", took)
	}
	// LinkJob queues behind the Record it refers to.
	linked := make(chan error, 1)
	go func() { linked <- s.LinkJob(ctx, "10", 4242) }()
	waitFor(t, 5*time.Second, "both writes queued", func() bool { return s.Pending() == 2 })
	waitFor(t, 5*time.Second, "a failed commit logged", func() bool { return warns.Load() > 0 })

	release()
	if err := <-linked; err != nil {
		t.Fatalf("LinkJob after the lock was released: %v", err)
	}
	waitFor(t, 5*time.Second, "Pending to drop to 0", func() bool { return s.Pending() == 0 })
	got, err := s.Submission(ctx, "10")
	if err != nil {
		t.Fatalf("Submission after the lock was released: %v", err)
	}
	if diff := cmp.Diff(newSub("10").Job(4242).Obj(), got); diff != "" {
		t.Errorf("row written after the lock (-want +got):\n%s", diff)
	}
}

func TestRecordQueueFull(t *testing.T) {
	path := dbPath(t)
	s := openStore(t, path, store.Options{MaxQueue: 2, BusyTimeout: 10 * time.Millisecond})
	release := lockDB(t, path)
	for i := range 2 {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		err := s.Record(rctx, newSub(token(i)).Obj())
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Record %d = %v, want context.DeadlineExceeded", i, err)
		}
	}
	if err := s.Record(ctx, newSub(token(2)).Obj()); !errors.Is(err, store.ErrQueueFull) {
		t.Errorf("Record past MaxQueue = %v, want ErrQueueFull", err)
	}
	release()
	waitFor(t, 5*time.Second, "queue to drain", func() bool { return s.Pending() == 0 })
	if n, _ := s.CountSubmissions(ctx); n != 2 {
		t.Errorf("CountSubmissions = %d, want 2", n)
	}
}

func TestRecordInvalid(t *testing.T) {
	s := openStore(t, dbPath(t), store.Options{})
	cases := map[string]store.Submission{
		"empty token":      newSub("").Obj(),
		"token too long":   newSub(strings.Repeat("a", store.MaxTokenLen+1)).Obj(),
		"token not hex":    newSub("abc'; DROP TABLE").Obj(),
		"unknown action":   func() store.Submission { s := newSub("01").Obj(); s.Action = "maybe"; return s }(),
		"job id too large": newSub("02").Job(1 << 63).Obj(),
	}
	for name, sub := range cases {
		t.Run(name, func(t *testing.T) {
			if err := s.Record(ctx, sub); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("Record = %v, want ErrInvalid", err)
			}
		})
	}
	if n, _ := s.CountSubmissions(ctx); n != 0 {
		t.Errorf("CountSubmissions = %d, want 0", n)
	}
}

func TestCloseFlushes(t *testing.T) {
	path := dbPath(t)
	s, err := store.Open(ctx, path, store.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// Callers that stop waiting at once leave their rows queued.
	done, cancel := context.WithCancel(ctx)
	cancel()
	for i := range 500 {
		err := s.Record(done, newSub(token(i)).Obj())
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("Record: %v", err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); !errors.Is(err, store.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if err := s.Record(ctx, newSub("ff").Obj()); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Record after Close = %v, want ErrClosed", err)
	}
	if got := queryInt(t, rawDB(t, path), "SELECT count(*) FROM submissions"); got != 500 {
		t.Errorf("rows after Close = %d, want 500", got)
	}
}

func TestCloseGivesUp(t *testing.T) {
	path := dbPath(t)
	s, err := store.Open(ctx, path, store.Options{
		Logger:       slog.New(slog.DiscardHandler),
		BusyTimeout:  10 * time.Millisecond,
		CloseTimeout: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	release := lockDB(t, path)
	defer release()
	errc := make(chan error, 1)
	go func() { errc <- s.Record(ctx, newSub("01").Obj()) }()
	waitFor(t, 5*time.Second, "the row queued", func() bool { return s.Pending() == 1 })
	start := time.Now()
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "1 queued writes not committed") {
		t.Errorf("Close with the database locked = %v, want an error counting 1 lost write", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close took %s, want about its 100ms CloseTimeout", took)
	}
	if err := <-errc; !errors.Is(err, store.ErrClosed) {
		t.Errorf("Record abandoned by Close = %v, want ErrClosed", err)
	}
}

func TestOpenCreatesWithModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "var", "lib", "augur")
	path := filepath.Join(dir, "augur.db")
	openStore(t, path, store.Options{})
	for p, max := range map[string]os.FileMode{dir: 0o750, path: 0o640} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&^max != 0 {
			t.Errorf("%s has mode %v, want no more than %v", p, perm, max)
		}
	}
}

func TestMigrations(t *testing.T) {
	cases := map[string]struct {
		userVersion int // set before reopening; 0 leaves it
		wantErr     error
		wantMsg     []string
	}{
		"reopen keeps data":    {},
		"newer schema refused": {userVersion: 99, wantErr: store.ErrSchemaTooNew, wantMsg: []string{"99", fmt.Sprint(store.SchemaVersion)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := dbPath(t)
			s, err := store.Open(ctx, path, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Record(ctx, newSub("01").Obj()); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			raw := rawDB(t, path)
			if got := queryInt(t, raw, "PRAGMA user_version"); got != int64(store.SchemaVersion) {
				t.Errorf("user_version = %d, want %d", got, store.SchemaVersion)
			}
			if tc.userVersion != 0 {
				if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", tc.userVersion)); err != nil {
					t.Fatal(err)
				}
			}

			s, err = store.Open(ctx, path, store.Options{})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("reopen = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				for _, m := range tc.wantMsg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("reopen error %q does not name %q", err, m)
					}
				}
				return
			}
			defer s.Close()
			got, err := s.Submission(ctx, "01")
			if err != nil {
				t.Fatalf("Submission after reopen: %v", err)
			}
			if diff := cmp.Diff(newSub("01").Obj(), got); diff != "" {
				t.Errorf("after reopen (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHistory(t *testing.T) {
	s := openStore(t, dbPath(t), store.Options{})
	outcomes := []store.Outcome{
		newOutcome(1).EndedAt(1 * time.Hour).Obj(),
		newOutcome(2).EndedAt(3 * time.Hour).Exit("OUT_OF_MEMORY").Obj(),
		newOutcome(3).EndedAt(2 * time.Hour).Obj(),
		newOutcome(4).EndedAt(2 * time.Hour).Obj(), // ties with 3: higher job id first
		newOutcome(5).EndedAt(9 * time.Hour).User(2000).Obj(),
		newOutcome(6).EndedAt(9 * time.Hour).Sig("sig-other").Obj(),
		newOutcome(7).Obj(), // ended at t0
	}
	for _, o := range outcomes {
		if err := s.AddOutcome(ctx, o); err != nil {
			t.Fatalf("AddOutcome %d: %v", o.JobID, err)
		}
	}
	cases := map[string]struct {
		user    uint32
		sig     string
		limit   int
		wantIDs []uint64
		wantErr error
	}{
		"newest first, ties by job id": {user: 1000, sig: "sig-train", limit: 10, wantIDs: []uint64{2, 4, 3, 1, 7}},
		"limit":                        {user: 1000, sig: "sig-train", limit: 2, wantIDs: []uint64{2, 4}},
		"other user":                   {user: 2000, sig: "sig-train", limit: 10, wantIDs: []uint64{5}},
		"other signature":              {user: 1000, sig: "sig-other", limit: 10, wantIDs: []uint64{6}},
		"user with no history":         {user: 3000, sig: "sig-train", limit: 10},
		"limit must be positive":       {user: 1000, sig: "sig-train", limit: 0, wantErr: store.ErrInvalid},
	}
	byID := map[uint64]store.Outcome{}
	for _, o := range outcomes {
		byID[o.JobID] = o
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := s.History(ctx, tc.user, tc.sig, tc.limit)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("History = %v, want %v", err, tc.wantErr)
			}
			var want []store.Outcome
			for _, id := range tc.wantIDs {
				want = append(want, byID[id])
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("History (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHistoryUsesIndex(t *testing.T) {
	path := dbPath(t)
	openStore(t, path, store.Options{})
	rows, err := rawDB(t, path).Query("EXPLAIN QUERY PLAN "+store.HistorySQL, 1000, "sig", 10)
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
	want := []string{
		"SEARCH o USING INDEX outcomes_history (user_id=? AND signature=?)",
		"SEARCH s USING INDEX submissions_job_id (job_id=?) LEFT-JOIN",
	}
	if diff := cmp.Diff(want, plan); diff != "" {
		t.Errorf("History query plan (-want +got):\n%s", diff)
	}
}

func TestAddOutcomeIdempotent(t *testing.T) {
	path := dbPath(t)
	s := openStore(t, path, store.Options{})
	first := newOutcome(9).Token("ab").Runtime(100).Obj()
	resent := newOutcome(9).Token("ab").Runtime(999).Source("import").Obj()
	for _, o := range []store.Outcome{first, first, resent} {
		if err := s.AddOutcome(ctx, o); err != nil {
			t.Fatalf("AddOutcome: %v", err)
		}
	}
	if got := queryInt(t, rawDB(t, path), "SELECT count(*) FROM outcomes"); got != 1 {
		t.Errorf("outcomes rows = %d, want 1", got)
	}
	got, err := s.History(ctx, first.UserID, first.Signature, 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Outcome{first}, got); diff != "" {
		t.Errorf("kept outcome (-want +got):\n%s", diff)
	}
	if err := s.AddOutcome(ctx, newOutcome(0).Obj()); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("AddOutcome with job id 0 = %v, want ErrInvalid", err)
	}
}

func TestLinkJob(t *testing.T) {
	s := openStore(t, dbPath(t), store.Options{})
	if err := s.Record(ctx, newSub("c0").Obj()); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		token     string
		jobID     uint64
		wantErr   error
		wantJobID uint64 // of submission c0 afterwards
	}{
		"links":          {token: "c0", jobID: 31, wantJobID: 31},
		"unknown token":  {token: "c1", jobID: 32, wantErr: store.ErrNotFound, wantJobID: 31},
		"job id zero":    {token: "c0", jobID: 0, wantErr: store.ErrInvalid, wantJobID: 31},
		"bad token":      {token: "", jobID: 33, wantErr: store.ErrInvalid, wantJobID: 31},
		"relink updates": {token: "c0", jobID: 34, wantJobID: 34},
	}
	// In order: each case sees the ones before.
	for _, name := range []string{"links", "unknown token", "job id zero", "bad token", "relink updates"} {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			if err := s.LinkJob(ctx, tc.token, tc.jobID); !errors.Is(err, tc.wantErr) {
				t.Errorf("LinkJob = %v, want %v", err, tc.wantErr)
			}
			got, err := s.Submission(ctx, "c0")
			if err != nil {
				t.Fatal(err)
			}
			if got.JobID != tc.wantJobID {
				t.Errorf("JobID = %d, want %d", got.JobID, tc.wantJobID)
			}
		})
	}
}

func TestSubmissionNotFound(t *testing.T) {
	s := openStore(t, dbPath(t), store.Options{})
	if _, err := s.Submission(ctx, "dead"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Submission of unknown token = %v, want ErrNotFound", err)
	}
}

func TestIntegrityCheck(t *testing.T) {
	cases := map[string]struct {
		damage  string // SQL run with foreign keys off before the check
		wantErr error
	}{
		"healthy": {},
		"submission without its script": {
			damage:  "DELETE FROM scripts",
			wantErr: store.ErrCorrupt,
		},
		"schema version changed": {
			damage:  "PRAGMA user_version = 0",
			wantErr: store.ErrCorrupt,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := dbPath(t)
			s := openStore(t, path, store.Options{})
			if err := s.Record(ctx, newSub("01").Script(bigScript(5<<10)).Obj()); err != nil {
				t.Fatal(err)
			}
			if err := s.AddOutcome(ctx, newOutcome(1).Obj()); err != nil {
				t.Fatal(err)
			}
			if tc.damage != "" {
				if _, err := rawDB(t, path).Exec(tc.damage); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.IntegrityCheck(ctx); !errors.Is(err, tc.wantErr) {
				t.Errorf("IntegrityCheck = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestReaderLatest(t *testing.T) {
	path := dbPath(t)
	s := openStore(t, path, store.Options{})
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		if err := s.Record(ctx, newSub(token(i)).At(time.Duration(i)*time.Second).Obj()); err != nil {
			t.Fatal(err)
		}
	}
	r, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.Latest(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	var toks []string
	for _, g := range got {
		toks = append(toks, g.Token)
	}
	if diff := cmp.Diff([]string{token(4), token(3), token(2)}, toks); diff != "" {
		t.Errorf("newest first (-want +got):\n%s", diff)
	}
	if _, err := store.OpenReadOnly(ctx, path+".missing"); err == nil {
		t.Error("opened a missing database")
	}
}

// TestOutcomeLearnsItsSignature: an outcome that arrives before its job is
// linked gets the submission's signature at LinkJob; one that arrives after
// the link gets it at once. Either way History finds it.
func TestOutcomeLearnsItsSignature(t *testing.T) {
	s := openStore(t, dbPath(t), store.Options{})
	ctx := context.Background()
	sub := newSub(token(1)).User(1000, "alice").Obj()
	sub.Signature = "sig-a"
	if err := s.Record(ctx, sub); err != nil {
		t.Fatal(err)
	}
	early := newOutcome(501).User(1000).Sig("").PeakGPUMem(9000).Obj()
	added, err := s.PutOutcome(ctx, early)
	if err != nil || !added {
		t.Fatalf("PutOutcome = %v, %v", added, err)
	}
	if err := s.LinkJob(ctx, token(1), 501); err != nil {
		t.Fatal(err)
	}
	sub2 := newSub(token(2)).User(1000, "alice").Job(502).Obj()
	sub2.Signature = "sig-a"
	if err := s.Record(ctx, sub2); err != nil {
		t.Fatal(err)
	}
	late := newOutcome(502).User(1000).Sig("").PeakGPUMem(9100).Obj()
	if _, err := s.PutOutcome(ctx, late); err != nil {
		t.Fatal(err)
	}
	hist, err := s.History(ctx, 1000, "sig-a", 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, o := range hist {
		got = append(got, o.JobID)
		if o.Token == "" {
			t.Errorf("outcome %d has no token", o.JobID)
		}
	}
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	if diff := cmp.Diff([]uint64{501, 502}, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if added, err := s.PutOutcome(ctx, late); err != nil || added {
		t.Errorf("re-sent outcome: added=%v err=%v, want a duplicate", added, err)
	}
}

// TestQueueCommitsWithoutWaiting: Queue returns before the commit, and the
// row is there moments later, exactly once even if queued twice.
func TestQueueCommitsWithoutWaiting(t *testing.T) {
	s := openStore(t, dbPath(t), store.Options{})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if err := s.Queue(newSub(token(7)).Obj()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Queue(store.Submission{Token: "not hex"}); err == nil {
		t.Error("Queue accepted an invalid row")
	}
	waitFor(t, 5*time.Second, "queued row committed", func() bool {
		n, _ := s.CountSubmissions(ctx)
		return n == 1 && s.Pending() == 0
	})
}

func TestTrainingRows(t *testing.T) {
	path := dbPath(t)
	s := openStore(t, path, store.Options{})
	ctx := context.Background()
	sub := newSub(token(1)).Script("#!/bin/sh\ntorchrun train.py --batch-size 64\n").Job(900).Obj()
	sub.Features = []byte(`{"batch_size":64}`)
	sub.Request = []byte(`{"v":1,"token":"` + token(1) + `"}`)
	if err := s.Record(ctx, sub); err != nil {
		t.Fatal(err)
	}
	s.AddOutcome(ctx, newOutcome(900).User(1000).PeakGPUMem(5000).EndedAt(time.Hour).Obj())
	s.AddOutcome(ctx, newOutcome(901).User(1000).EndedAt(2*time.Hour).Obj()) // no submission: not for training
	rows, err := s.TrainingRows(ctx, time.Time{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Outcome.JobID != 900 || rows[0].Script != sub.Script ||
		string(rows[0].Outcome.Features) != `{"batch_size":64}` || !strings.Contains(string(rows[0].Request), token(1)) {
		t.Fatalf("rows %+v", rows)
	}
	r, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if rows, err := r.TrainingRows(ctx, t0.Add(2*time.Hour), 10); err != nil || len(rows) != 0 {
		t.Errorf("since filter: %d rows, %v", len(rows), err)
	}
}

// TestFinalStateWithoutOutcome: a job cancelled while pending never has an
// outcome; its submission still learns Slurm's final state.
func TestFinalStateWithoutOutcome(t *testing.T) {
	path := dbPath(t)
	s := openStore(t, path, store.Options{})
	ctx := context.Background()
	if err := s.Record(ctx, newSub(token(3)).Job(555).Obj()); err != nil {
		t.Fatal(err)
	}
	changed, err := s.SetFinal(ctx, 555, "CANCELLED", time.Time{}, time.Time{})
	if err != nil || changed {
		t.Fatalf("SetFinal = %v, %v; want no outcome changed", changed, err)
	}
	var got string
	if err := rawDB(t, path).QueryRow(`SELECT final_state FROM submissions WHERE job_id = 555`).Scan(&got); err != nil || got != "CANCELLED" {
		t.Errorf("final_state = %q, %v", got, err)
	}
}

// TestSetFinalTakesSlurmsTimes: Slurm's final state and start and end
// times replace the node's on the outcome (reports then agree with sacct),
// its measured runtime stays, a zero time keeps the node's, and the same
// final record again changes nothing.
func TestSetFinalTakesSlurmsTimes(t *testing.T) {
	path := dbPath(t)
	s := openStore(t, path, store.Options{})
	ctx := context.Background()
	o := newOutcome(77).Runtime(42).Obj()
	o.StartedAt = t0.Add(-41 * time.Second)
	if err := s.AddOutcome(ctx, o); err != nil {
		t.Fatal(err)
	}
	read := func() (start, end int64, runtime float64, state string) {
		t.Helper()
		if err := rawDB(t, path).QueryRow(`SELECT started_at_ns, ended_at_ns, runtime_sec, exit_state FROM outcomes WHERE job_id = 77`).
			Scan(&start, &end, &runtime, &state); err != nil {
			t.Fatal(err)
		}
		return
	}
	slurmStart, slurmEnd := t0.Add(-43*time.Second).Truncate(time.Second), t0.Add(time.Second).Truncate(time.Second)
	cases := []struct {
		name       string
		state      string
		start, end time.Time
		changed    bool
		wantStart  int64
		wantEnd    int64
		wantState  string
	}{
		{"the node's times and state corrected", "FAILED", slurmStart, slurmEnd, true, slurmStart.UnixNano(), slurmEnd.UnixNano(), "FAILED"},
		{"the same again", "FAILED", slurmStart, slurmEnd, false, slurmStart.UnixNano(), slurmEnd.UnixNano(), "FAILED"},
		{"zero times keep the stored ones", "TIMEOUT", time.Time{}, time.Time{}, true, slurmStart.UnixNano(), slurmEnd.UnixNano(), "TIMEOUT"},
	}
	for _, c := range cases {
		changed, err := s.SetFinal(ctx, 77, c.state, c.start, c.end)
		if err != nil || changed != c.changed {
			t.Fatalf("%s: SetFinal = %v, %v; want %v", c.name, changed, err, c.changed)
		}
		start, end, runtime, state := read()
		if start != c.wantStart || end != c.wantEnd || state != c.wantState || runtime != 42 {
			t.Errorf("%s: start %d end %d state %s runtime %v; want %d %d %s 42", c.name, start, end, state, runtime, c.wantStart, c.wantEnd, c.wantState)
		}
	}
}

// TestMultiNodeOutcomeIsTheUnion: each node of a multi-node job reports its
// own GPUs; the job's row becomes their union (GPUs and energy add, the
// peak is the highest, utilisation weighted by GPUs, OOM evidence from any
// node), every report is kept, and a node's report sent again changes
// nothing.
func TestMultiNodeOutcomeIsTheUnion(t *testing.T) {
	path := dbPath(t)
	s := openStore(t, path, store.Options{})
	t0 := time.Unix(1_790_000_000, 0)
	node := func(name string, gpus int, peak, util, energy float64, oom bool, exit string, start, end time.Duration) store.Outcome {
		return store.Outcome{JobID: 77, UserID: 1000, GPUs: gpus, PeakGPUMemMiB: peak, MeanSMUtil: util, EnergyJ: energy,
			OOMSuspect: oom, ExitState: exit, Source: "node", Node: name, StartedAt: t0.Add(start), EndedAt: t0.Add(end),
			RuntimeSec: (end - start).Seconds(), ReceivedAt: t0.Add(end + time.Second),
			Report: []byte(fmt.Sprintf(`{"node":%q,"gpus":[]}`, name))}
	}
	a := node("gpu01", 4, 10000, 80, 4000, false, "COMPLETED", 0, 100*time.Second)
	b := node("gpu02", 4, 39900, 40, 2000, true, "FAILED", 2*time.Second, 90*time.Second)
	for i, step := range []struct {
		o         store.Outcome
		wantAdded bool
	}{{a, true}, {b, true}, {b, false}, {a, false}} {
		added, err := s.PutOutcome(ctx, step.o)
		if err != nil || added != step.wantAdded {
			t.Fatalf("report %d from %s: added %v, %v; want %v", i, step.o.Node, added, err, step.wantAdded)
		}
	}
	raw := rawDB(t, path)
	var gpus int
	var peak, util, energy, runtime float64
	var oom bool
	var exit string
	var start, end int64
	if err := raw.QueryRow(`SELECT gpus, peak_gpu_mem_mib, mean_sm_util, energy_j, oom_suspect, exit_state, started_at_ns, ended_at_ns, runtime_sec
		FROM outcomes WHERE job_id = 77`).Scan(&gpus, &peak, &util, &energy, &oom, &exit, &start, &end, &runtime); err != nil {
		t.Fatal(err)
	}
	if gpus != 8 || peak != 39900 || util != 60 || energy != 6000 || !oom || exit != "FAILED" ||
		start != t0.UnixNano() || end != t0.Add(100*time.Second).UnixNano() || runtime != 100 {
		t.Errorf("union: gpus %d peak %g util %g energy %g oom %v exit %s start %d end %d runtime %g",
			gpus, peak, util, energy, oom, exit, start, end, runtime)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reps, err := r.NodeReports(ctx, 77)
	if err != nil || len(reps) != 2 || reps[0].Node != "gpu01" || reps[1].Node != "gpu02" || !strings.Contains(string(reps[1].Report), "gpu02") {
		t.Errorf("node reports %+v, %v", reps, err)
	}
}

// TestNodeReportsBackfilled: a store from before node reports were kept
// gets its stored reports, each one node's, into node_reports on upgrade.
func TestNodeReportsBackfilled(t *testing.T) {
	path := dbPath(t)
	s := openStore(t, path, store.Options{})
	o := store.Outcome{JobID: 5, UserID: 1000, GPUs: 1, PeakGPUMemMiB: 100, ExitState: "COMPLETED", Source: "node",
		Node: "gpu01", EndedAt: time.Unix(1_790_000_000, 0), ReceivedAt: time.Unix(1_790_000_001, 0), Report: []byte(`{"node":"gpu01"}`)}
	if err := s.AddOutcome(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	if _, err := raw.Exec(fmt.Sprintf("DROP TABLE node_reports; ALTER TABLE outcomes DROP COLUMN at_ceiling; PRAGMA user_version = %d", 6)); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path, store.Options{})
	defer s.Close()
	if got := queryInt(t, rawDB(t, path), "SELECT count(*) FROM node_reports WHERE job_id = 5 AND node = 'gpu01'"); got != 1 {
		t.Errorf("backfilled node reports: %d, want 1", got)
	}
	// The same node's report again is a duplicate, as before the upgrade.
	if added, err := s.PutOutcome(ctx, o); err != nil || added {
		t.Errorf("resent after upgrade: added %v, %v", added, err)
	}
}

// TestOOMVerdictFollowsSlurm: a node that saw its GPU at the ceiling but not
// the job's failure (a multi-node job's other node) stores no suspect;
// Slurm's FAILED makes one, and Slurm's CANCELLED undoes a node's guess.
func TestOOMVerdictFollowsSlurm(t *testing.T) {
	path := dbPath(t)
	s := openStore(t, path, store.Options{})
	end := time.Unix(1_790_000_100, 0)
	for _, o := range []store.Outcome{
		{JobID: 1, UserID: 1, GPUs: 1, ExitState: "COMPLETED", Source: "node", Node: "n2", AtCeiling: true, EndedAt: end, Report: []byte(`{}`)},
		{JobID: 2, UserID: 1, GPUs: 1, ExitState: "FAILED", Source: "node", Node: "n1", AtCeiling: true, OOMSuspect: true, EndedAt: end, Report: []byte(`{}`)},
		{JobID: 3, UserID: 1, GPUs: 1, ExitState: "FAILED", Source: "node", Node: "n1", EndedAt: end, Report: []byte(`{}`)},
	} {
		if err := s.AddOutcome(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	suspect := func(job int) bool {
		return queryInt(t, rawDB(t, path), fmt.Sprintf("SELECT oom_suspect FROM outcomes WHERE job_id = %d", job)) == 1
	}
	if suspect(1) || !suspect(2) || suspect(3) {
		t.Fatalf("as the nodes said: %v %v %v", suspect(1), suspect(2), suspect(3))
	}
	for job, state := range map[uint64]string{1: "FAILED", 2: "CANCELLED", 3: "FAILED"} {
		if _, err := s.SetFinal(ctx, job, state, time.Time{}, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if !suspect(1) || suspect(2) || suspect(3) {
		t.Errorf("after Slurm's word: %v %v %v; want true (failed at the ceiling), false (cancelled), false (failed below it)",
			suspect(1), suspect(2), suspect(3))
	}
}

// TestOOMFacts: what GPU OOM recovery reads of a job: its outcome, the
// largest card any node measured (malformed reports skipped), its
// prediction's upper bound, and only the OOM requeues actually applied.
func TestOOMFacts(t *testing.T) {
	path := dbPath(t)
	s := openStore(t, path, store.Options{})
	end := time.Unix(1_790_000_100, 0)
	if _, ok, err := s.OOMFacts(ctx, 9); ok || err != nil {
		t.Fatalf("no outcome: ok %v, %v", ok, err)
	}
	if err := s.Record(ctx, store.Submission{Token: "cd", ReceivedAt: end.Add(-time.Hour), UserID: 1, Script: "#!/bin/sh\n",
		Signature: "sig", Action: store.ActionAccept, PredMemHiMiB: 30000}); err != nil {
		t.Fatal(err)
	}
	if err := s.LinkJob(ctx, "cd", 9); err != nil {
		t.Fatal(err)
	}
	for node, rep := range map[string]string{
		"n1": `{"node":"n1","gpus":[{"index":0,"mem_total_mib":40960}]}`,
		"n2": `{"node":"n2","gpus":[{"index":0,"mem_total_mib":81920},{"index":1,"mem_total_mib":16384}]}`,
		"n3": `not json`,
	} {
		if _, err := s.PutOutcome(ctx, store.Outcome{JobID: 9, UserID: 1, GPUs: 1, PeakGPUMemMiB: 39000, ExitState: "FAILED",
			OOMSuspect: true, GPUType: "a100", Source: "node", Node: node, EndedAt: end, Report: []byte(rep)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddActions(ctx, []store.Action{
		{At: end, JobID: 9, Kind: store.ActionOOMRequeue, Reason: "applied"},
		{At: end, JobID: 9, Kind: store.ActionOOMRequeue, Reason: "planned", DryRun: true},
		{At: end, JobID: 9, Kind: store.ActionOOMRequeue, Reason: "failed", Error: "slurmctld said no"},
	}); err != nil {
		t.Fatal(err)
	}
	f, ok, err := s.OOMFacts(ctx, 9)
	want := store.OOMFacts{ExitState: "FAILED", Suspect: true, PeakMiB: 39000, GPUType: "a100", CardMiB: 81920, PredHiMiB: 30000, Requeues: 1}
	if err != nil || !ok || f != want {
		t.Errorf("OOMFacts = %+v, %v, %v; want %+v", f, ok, err, want)
	}
}

// TestRequeuedJobsOutcomeIsItsLastRun: a job Slurm requeued reports again
// from its later run. That report is no duplicate of the earlier run's: the
// job's row and node reports become the later run's (its peak, runtime and
// state), a second node of the later run merges into it, and the later
// run's report sent again changes nothing.
func TestRequeuedJobsOutcomeIsItsLastRun(t *testing.T) {
	path := dbPath(t)
	s := openStore(t, path, store.Options{})
	t0 := time.Unix(1_790_000_000, 0).UTC()
	node := func(name string, peak float64, oom bool, exit string, start, end time.Duration) store.Outcome {
		return store.Outcome{JobID: 78, UserID: 1000, GPUs: 1, PeakGPUMemMiB: peak, MeanSMUtil: 90, EnergyJ: 100,
			OOMSuspect: oom, AtCeiling: oom, ExitState: exit, Source: "node", Node: name, StartedAt: t0.Add(start),
			EndedAt: t0.Add(end), RuntimeSec: (end - start).Seconds(), ReceivedAt: t0.Add(end + time.Second),
			Report: []byte(fmt.Sprintf(`{"node":%q,"start":%q,"end":%q,"gpus":[]}`, name,
				t0.Add(start).Format(time.RFC3339Nano), t0.Add(end).Format(time.RFC3339Nano)))}
	}
	first := node("gpu01", 40000, true, "FAILED", 0, 8*time.Second)
	first.Finalized = "recovered"
	again := node("gpu01", 30000, false, "COMPLETED", 130*time.Second, 160*time.Second)
	again.Finalized = "epilog"
	beside := node("gpu02", 31000, false, "COMPLETED", 131*time.Second, 159*time.Second)
	for i, step := range []struct {
		o    store.Outcome
		want store.PutResult
	}{{first, store.PutNew}, {first, store.PutDuplicate}, {again, store.PutRerun}, {again, store.PutDuplicate},
		{beside, store.PutMerged}, {first, store.PutDuplicate}} {
		put, err := s.PutNodeOutcome(ctx, step.o)
		if err != nil || put != step.want {
			t.Fatalf("report %d (%s, started %s): %v, %v; want %v", i, step.o.Node, step.o.StartedAt, put, err, step.want)
		}
	}
	raw := rawDB(t, path)
	var gpus, reports int
	var peak, runtime float64
	var oom bool
	var exit, finalized string
	if err := raw.QueryRow(`SELECT gpus, peak_gpu_mem_mib, runtime_sec, oom_suspect, exit_state, finalized,
		(SELECT count(*) FROM node_reports WHERE job_id = 78) FROM outcomes WHERE job_id = 78`).Scan(
		&gpus, &peak, &runtime, &oom, &exit, &finalized, &reports); err != nil {
		t.Fatal(err)
	}
	if gpus != 2 || peak != 31000 || runtime != 30 || oom || exit != "COMPLETED" || finalized != "epilog" || reports != 2 {
		t.Errorf("after the later run: gpus %d peak %g runtime %g oom %v exit %s finalized %s node reports %d; want 2 31000 30 false COMPLETED epilog 2",
			gpus, peak, runtime, oom, exit, finalized, reports)
	}
}
