package nodeagent

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/augur-hpc/augur/sidecar/munge"
	"github.com/augur-hpc/augur/sidecar/outcome"
)

// requireMunged skips unless munged answers; `make test-unit` as root starts
// it and sets AUGUR_REQUIRE_MUNGE, so CI runs these for real.
func requireMunged(t *testing.T) munge.Client {
	t.Helper()
	c := munge.Client{}
	if _, err := c.Encode([]byte("ping")); err != nil {
		if os.Getenv("AUGUR_REQUIRE_MUNGE") != "" {
			t.Fatalf("munged required but unavailable: %v", err)
		}
		t.Skipf("munged not running (%v): run tests/cluster/munge-up.sh", err)
	}
	return c
}

// fakeAugurd is augurd's outcome listener as the node expects it: read one
// frame, verify its MUNGE credential for real, decode the report, store it
// once per job id, answer one frame with a JSON Ack. mode changes what it
// does, to play a broken augurd.
type fakeAugurd struct {
	t      *testing.T
	munge  munge.Client
	l      net.Listener
	mu     sync.Mutex
	mode   string // "ok", "refuse", "garbage", "failed", "drop-ack"
	stored map[uint64]int
	seen   []string // what each connection got: stored, duplicate, replayed, ...
}

func startAugurd(t *testing.T, addr string, m munge.Client) *fakeAugurd {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeAugurd{t: t, munge: m, l: l, mode: "ok", stored: map[uint64]int{}}
	go f.serve()
	t.Cleanup(func() { l.Close() })
	return f
}

func (f *fakeAugurd) setMode(m string) { f.mu.Lock(); f.mode = m; f.mu.Unlock() }

func (f *fakeAugurd) serve() {
	for {
		c, err := f.l.Accept()
		if err != nil {
			return
		}
		f.handle(c)
	}
}

func (f *fakeAugurd) handle(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	body, err := outcome.ReadFrame(c)
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	answer := func(a outcome.Ack) {
		b, _ := json.Marshal(a)
		outcome.WriteFrame(c, b)
	}
	switch f.mode {
	case "garbage":
		c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
		f.seen = append(f.seen, "garbage")
		return
	case "refuse":
		answer(outcome.Ack{Status: outcome.Refused, Error: "signer uid 1234 is neither root nor slurm_user"})
		f.seen = append(f.seen, "refused")
		return
	case "failed":
		answer(outcome.Ack{Status: outcome.Failed, Error: "database is locked"})
		f.seen = append(f.seen, "failed")
		return
	}
	payload, id, err := f.munge.Decode(string(body))
	switch {
	case errors.Is(err, munge.ErrReplayed):
		answer(outcome.Ack{Status: outcome.Refused, Error: "replayed credential"})
		f.seen = append(f.seen, "replayed")
		return
	case err != nil:
		answer(outcome.Ack{Status: outcome.Refused, Error: err.Error()})
		f.seen = append(f.seen, "invalid")
		return
	case id.UID != 0 && id.UID != uint32(os.Getuid()):
		answer(outcome.Ack{Status: outcome.Refused, Error: "signer"})
		return
	}
	r, err := outcome.Decode(payload)
	if err != nil {
		answer(outcome.Ack{Status: outcome.Refused, Error: err.Error()})
		f.seen = append(f.seen, "malformed")
		return
	}
	st := outcome.Stored
	if f.stored[r.JobID] > 0 {
		st = outcome.Duplicate
	} else {
		f.stored[r.JobID] = 1
	}
	f.seen = append(f.seen, string(st))
	if f.mode == "drop-ack" { // stored, but the answer is lost
		return
	}
	answer(outcome.Ack{JobID: r.JobID, Status: st})
}

func (f *fakeAugurd) log() ([]string, map[uint64]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := map[uint64]int{}
	for k, v := range f.stored {
		st[k] = v
	}
	return append([]string(nil), f.seen...), st
}

// freeAddr returns a loopback address nobody listens on (for now).
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// senderWorld is one node with one finished job's report in its outbox.
func senderWorld(t *testing.T, m munge.Client, addr string) (*Agent, *clock, func() (undelivered, attempts int)) {
	st, c := openStore(t), newClock()
	h, _ := hooks(st, c)
	prolog(t, h, 5, 0)
	c.Advance(time.Minute)
	epilog(t, h, 5, "0:0")
	a := New(Config{Node: "node1"}, st, nil, &procsFake{}, &Sender{Addr: addr, Signer: m, Timeout: 2 * time.Second}, c.Now, quiet())
	a.jitter = func(d time.Duration) time.Duration { return d }
	state := func() (int, int) {
		n, _ := st.Undelivered(context.Background())
		due, _ := st.Due(context.Background(), c.Now().Add(time.Hour), 10)
		if len(due) == 0 {
			return n, -1
		}
		return n, due[0].Attempts
	}
	return a, c, state
}

func TestSenderAugurdDownThenDeliveredExactlyOnce(t *testing.T) {
	m := requireMunged(t)
	ctx := context.Background()
	addr := freeAddr(t)
	a, c, state := senderWorld(t, m, addr)

	a.Flush(ctx) // augurd down: connection refused
	if u, n := state(); u != 1 || n != 1 {
		t.Fatalf("after a refused connection: undelivered %d attempts %d, want 1 1", u, n)
	}
	aug := startAugurd(t, addr, m)
	c.Advance(time.Second)
	a.Flush(ctx) // not due yet: Backoff(1) = 2 s
	if seen, _ := aug.log(); len(seen) != 0 {
		t.Fatalf("sent before its backoff: %v", seen)
	}
	c.Advance(time.Second)
	a.Flush(ctx)
	a.Flush(ctx)
	seen, stored := aug.log()
	if d := cmp.Diff([]string{"stored"}, seen); d != "" {
		t.Errorf("augurd saw (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[uint64]int{5: 1}, stored); d != "" {
		t.Errorf("augurd stored (-want +got):\n%s", d)
	}
	if u, _ := state(); u != 0 {
		t.Errorf("undelivered %d after the ack", u)
	}
	if a.Stats.Delivered.Load() != 1 || a.Stats.SendFailures.Load() != 1 {
		t.Errorf("stats delivered %d failures %d", a.Stats.Delivered.Load(), a.Stats.SendFailures.Load())
	}
}

func TestSenderLostAckResendIsADuplicate(t *testing.T) {
	m := requireMunged(t)
	ctx := context.Background()
	addr := freeAddr(t)
	a, c, state := senderWorld(t, m, addr)
	aug := startAugurd(t, addr, m)
	aug.setMode("drop-ack")
	a.Flush(ctx)
	if u, n := state(); u != 1 || n != 1 {
		t.Fatalf("after a lost ack: undelivered %d attempts %d", u, n)
	}
	aug.setMode("ok")
	c.Advance(2 * time.Second)
	a.Flush(ctx)
	seen, stored := aug.log()
	// A fresh credential each attempt: augurd sees a duplicate, not a replay.
	if d := cmp.Diff([]string{"stored", "duplicate"}, seen); d != "" {
		t.Errorf("augurd saw (-want +got):\n%s", d)
	}
	if stored[5] != 1 {
		t.Errorf("stored %d times", stored[5])
	}
	if u, _ := state(); u != 0 || a.Stats.Duplicates.Load() != 1 {
		t.Errorf("undelivered %d duplicates %d", u, a.Stats.Duplicates.Load())
	}
}

func TestSenderAugurdAnswers(t *testing.T) {
	m := requireMunged(t)
	cases := map[string]struct {
		mode            string
		wantUndelivered int
		wantAttempts    int // of the report still in the outbox; -1 when none
		wantRefused     int64
	}{
		"refused: dropped and counted": {mode: "refuse", wantUndelivered: 0, wantAttempts: -1, wantRefused: 1},
		"garbage: retried":             {mode: "garbage", wantUndelivered: 1, wantAttempts: 1},
		"failed to store: retried":     {mode: "failed", wantUndelivered: 1, wantAttempts: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			addr := freeAddr(t)
			a, c, state := senderWorld(t, m, addr)
			aug := startAugurd(t, addr, m)
			aug.setMode(tc.mode)
			a.Flush(context.Background())
			u, n := state()
			got := []any{u, n, a.Stats.Refused.Load()}
			if d := cmp.Diff([]any{tc.wantUndelivered, tc.wantAttempts, tc.wantRefused}, got); d != "" {
				t.Errorf("undelivered, attempts, refused (-want +got):\n%s", d)
			}
			if u == 0 {
				return
			}
			aug.setMode("ok") // augurd repaired: the report goes, once
			c.Advance(Backoff(1))
			a.Flush(context.Background())
			if u, _ := state(); u != 0 {
				t.Errorf("still undelivered after augurd recovered")
			}
			if _, stored := aug.log(); stored[5] != 1 {
				t.Errorf("stored %d times", stored[5])
			}
		})
	}
}

// TestReplayedFrameRefused: a captured frame sent again is refused by
// MUNGE's replay check, so nobody can inject a copy of a node's report.
func TestReplayedFrameRefused(t *testing.T) {
	m := requireMunged(t)
	addr := freeAddr(t)
	aug := startAugurd(t, addr, m)
	cred, err := m.Encode([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		outcome.WriteFrame(c, []byte(cred))
		outcome.ReadFrame(c)
		c.Close()
	}
	if seen, _ := aug.log(); !cmp.Equal(seen, []string{"malformed", "replayed"}) {
		t.Errorf("augurd saw %v, want [malformed replayed]", seen)
	}
}

func TestBackoff(t *testing.T) {
	got := []time.Duration{}
	for n := 0; n <= 12; n++ {
		got = append(got, Backoff(n))
	}
	s := time.Second
	want := []time.Duration{0, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 64 * s, 128 * s, 256 * s, 300 * s, 300 * s, 300 * s, 300 * s}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	a := New(Config{}, nil, nil, nil, nil, time.Now, quiet())
	for i := 0; i < 100; i++ {
		if j := a.jitter(300 * s); j > 300*s || j < 240*s {
			t.Fatalf("jitter gave %s", j)
		}
	}
}

func TestDecodeAck(t *testing.T) {
	cases := map[string]struct {
		body    string
		want    outcome.Ack
		wantErr bool
	}{
		"stored":                  {body: `{"job_id":5,"status":"stored"}`, want: outcome.Ack{JobID: 5, Status: outcome.Stored}},
		"duplicate":               {body: `{"job_id":5,"status":"duplicate"}`, want: outcome.Ack{JobID: 5, Status: outcome.Duplicate}},
		"refused without a job":   {body: `{"status":"refused","error":"bad credential"}`, want: outcome.Ack{Status: outcome.Refused, Error: "bad credential"}},
		"failed":                  {body: `{"job_id":5,"status":"failed"}`, want: outcome.Ack{JobID: 5, Status: outcome.Failed}},
		"another job's ack":       {body: `{"job_id":6,"status":"stored"}`, wantErr: true},
		"stored without a job id": {body: `{"status":"stored"}`, wantErr: true},
		"unknown status":          {body: `{"job_id":5,"status":"ok"}`, wantErr: true},
		"not JSON":                {body: `stored`, wantErr: true},
		"empty":                   {body: ``, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeAck([]byte(tc.body), 5)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrBadAck) {
				t.Errorf("err %v is not ErrBadAck", err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// FuzzDecodeAck: augurd's answer is outside input to the node.
func FuzzDecodeAck(f *testing.F) {
	for _, s := range []string{`{"job_id":5,"status":"stored"}`, `{"status":"refused"}`, `{"job_id":-1}`, `[]`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeAck(b, 5)
		if err != nil {
			return
		}
		if a.JobID != 5 && !(a.JobID == 0 && (a.Status == outcome.Refused || a.Status == outcome.Failed)) {
			t.Fatalf("accepted %+v", a)
		}
	})
}
