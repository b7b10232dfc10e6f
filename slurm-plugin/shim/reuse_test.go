package shim

import (
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// annotate answers like augurd: an annotation that starts with the token.
func annotate(c net.Conn, req *wire.Request) {
	wire.Write(c, wire.Response{V: wire.Version, Token: req.Token, Action: wire.Accept,
		Annotation: "augur:tok=" + req.Token + " pred_gpu_mem=3G src=history/history"})
}

func submission(script string) *wire.Request {
	return &wire.Request{Token: NewToken(), UserID: 1000, Name: "train", Partition: "gpu",
		TRES: wire.TRES{PerNode: "gres:gpu:1"}, Script: script}
}

func reusingClient(path string, clock *fakeClock) *Client {
	return New(Options{Socket: path, Timeout: time.Second, FailureThreshold: 3, Cooldown: 30 * time.Second,
		Now: clock.Now, ReuseWindow: time.Second})
}

// TestReuseWithinWindow: an identical request within the window is answered
// without augurd, with its own token; augurd hears of it with the next
// request; past the window, or with any field changed, augurd is asked.
func TestReuseWithinWindow(t *testing.T) {
	f := startFake(t, annotate)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	c := reusingClient(f.path, clock)

	first := submission("#!/bin/sh\npython train.py\n")
	r1, err := c.Decide(first)
	if err != nil {
		t.Fatal(err)
	}
	<-f.seen
	clock.Advance(300 * time.Millisecond)
	second := submission(first.Script)
	r2, err := c.Decide(second)
	if err != nil {
		t.Fatal(err)
	}
	if f.served.Load() != 1 {
		t.Fatalf("augurd asked %d times, want once", f.served.Load())
	}
	if r2.Token != second.Token || !strings.HasPrefix(r2.Annotation, "augur:tok="+second.Token+" pred_gpu_mem=3G") {
		t.Errorf("reused answer %+v, want token %s in it", r2, second.Token)
	}
	if r1.Token == r2.Token {
		t.Error("reused answer kept the first token")
	}

	// Changed field: asked; the report of the reused one rides along.
	other := submission(first.Script)
	other.TimeLimitMin = 60
	if _, err := c.Decide(other); err != nil {
		t.Fatal(err)
	}
	got := <-f.seen
	if len(got.Reused) != 1 || got.Reused[0].Token != second.Token || got.Reused[0].Of != first.Token ||
		got.Reused[0].AtUnixNano != clock.Now().UnixNano() {
		t.Errorf("reported %+v, want %s reused of %s at %d", got.Reused, second.Token, first.Token, clock.Now().UnixNano())
	}

	// Past the window: asked again, and no report is sent twice.
	clock.Advance(1100 * time.Millisecond)
	if _, err := c.Decide(submission(first.Script)); err != nil {
		t.Fatal(err)
	}
	if got := <-f.seen; len(got.Reused) != 0 || f.served.Load() != 3 {
		t.Errorf("past the window: served %d, reports %+v", f.served.Load(), got.Reused)
	}
}

// TestReuseReportsSurviveAFailure: reports on a request that failed go
// with the next one.
func TestReuseReportsSurviveAFailure(t *testing.T) {
	var mu sync.Mutex
	fail := false
	f := startFake(t, func(c net.Conn, req *wire.Request) {
		mu.Lock()
		defer mu.Unlock()
		if !fail {
			annotate(c, req)
		}
	})
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	c := New(Options{Socket: f.path, Timeout: 50 * time.Millisecond, FailureThreshold: 3, Cooldown: time.Minute,
		Now: clock.Now, ReuseWindow: time.Second})
	first := submission("#!/bin/sh\ntrue\n")
	c.Decide(first)
	<-f.seen
	reused := submission(first.Script)
	if _, err := c.Decide(reused); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	fail = true
	mu.Unlock()
	if _, err := c.Decide(submission("#!/bin/sh\nother\n")); err == nil {
		t.Fatal("augurd said nothing and the shim did not fail open")
	}
	if got := <-f.seen; len(got.Reused) != 1 {
		t.Fatalf("failed request carried %+v", got.Reused)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if _, err := c.Decide(submission("#!/bin/sh\nthird\n")); err != nil {
		t.Fatal(err)
	}
	if got := <-f.seen; len(got.Reused) != 1 || got.Reused[0].Token != reused.Token {
		t.Errorf("after the failure: %+v, want the report of %s again", got.Reused, reused.Token)
	}
}

// TestReuseOnlyWhatIsSafe: off by default; never a truncated or large
// script; never an annotation the shim cannot re-token.
func TestReuseOnlyWhatIsSafe(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	cases := map[string]struct {
		window time.Duration
		req    func() *wire.Request
		behave func(net.Conn, *wire.Request)
	}{
		"off":                {0, func() *wire.Request { return submission("x") }, annotate},
		"truncated script":   {time.Second, func() *wire.Request { r := submission("x"); r.ScriptTruncated = true; return r }, annotate},
		"large script":       {time.Second, func() *wire.Request { return submission(strings.Repeat("#", reuseMaxScript+1)) }, annotate},
		"foreign annotation": {time.Second, func() *wire.Request { return submission("x") }, answer},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := startFake(t, tc.behave)
			c := New(Options{Socket: f.path, Timeout: time.Second, FailureThreshold: 3, Cooldown: time.Minute,
				Now: clock.Now, ReuseWindow: tc.window})
			a, b := tc.req(), tc.req()
			if _, err := c.Decide(a); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Decide(b); err != nil {
				t.Fatal(err)
			}
			if n := f.served.Load(); n != 2 {
				t.Errorf("augurd asked %d times, want 2 (no reuse)", n)
			}
		})
	}
}

// TestReuseKeyCoversEveryField: changing any field the decision reads
// changes the key.
func TestReuseKeyCoversEveryField(t *testing.T) {
	base := wire.Request{V: 1, SubmitUID: 1, UserID: 2, GroupID: 3, Name: "n", Account: "a", Partition: "p",
		QOS: "q", WorkDir: "/w", Comment: "c", Constraint: "a100", Prefer: "ib", ClusterFeatures: "cf", Reservation: "r", TRES: wire.TRES{PerNode: "gres:gpu:1", PerJob: "j", PerTask: "t", PerSocket: "s"},
		MinNodes: 1, MaxNodes: 2, NumTasks: 3, MinCPUs: 4, CPUsPerTask: 5, MemPerNodeMB: 6, MemPerCPUMB: 7,
		TimeLimitMin: 8, Script: "s", AdminComment: "ac"}
	k := reuseKey(&base)
	changes := []func(*wire.Request){
		func(r *wire.Request) { r.SubmitUID++ }, func(r *wire.Request) { r.UserID++ }, func(r *wire.Request) { r.GroupID++ },
		func(r *wire.Request) { r.Name += "x" }, func(r *wire.Request) { r.Account += "x" },
		func(r *wire.Request) { r.Partition += "x" }, func(r *wire.Request) { r.QOS += "x" },
		func(r *wire.Request) { r.WorkDir += "x" }, func(r *wire.Request) { r.Comment += "x" },
		func(r *wire.Request) { r.Constraint += "x" }, func(r *wire.Request) { r.Prefer += "x" },
		func(r *wire.Request) { r.ClusterFeatures += "x" }, func(r *wire.Request) { r.Reservation += "x" },
		func(r *wire.Request) { r.TRES.PerNode += "x" }, func(r *wire.Request) { r.TRES.PerJob += "x" },
		func(r *wire.Request) { r.TRES.PerTask += "x" }, func(r *wire.Request) { r.TRES.PerSocket += "x" },
		func(r *wire.Request) { r.MinNodes++ }, func(r *wire.Request) { r.MaxNodes++ }, func(r *wire.Request) { r.NumTasks++ },
		func(r *wire.Request) { r.MinCPUs++ }, func(r *wire.Request) { r.CPUsPerTask++ },
		func(r *wire.Request) { r.MemPerNodeMB++ }, func(r *wire.Request) { r.MemPerCPUMB++ },
		func(r *wire.Request) { r.TimeLimitMin++ }, func(r *wire.Request) { r.Script += "x" },
		func(r *wire.Request) { r.AdminComment += "x" },
		// Moving a byte between neighbouring fields changes the key too.
		func(r *wire.Request) { r.Name, r.Account = "na", "" },
	}
	for i, change := range changes {
		r := base
		change(&r)
		if reuseKey(&r) == k {
			t.Errorf("change %d leaves the key unchanged", i)
		}
	}
	r := base
	r.Token, r.Shim = "abc", wire.ShimStats{FailOpens: 3}
	if reuseKey(&r) != k {
		t.Error("token or shim stats change the key")
	}
}

// TestReuseKeyCoversNewFields: every string and number field of the
// request, TRES included, is in the key, except the shim's own, so that a
// field added to wire.Request later cannot be left out of it unnoticed
// (two jobs differing only in their constraint once could have shared a
// decision that named a type one of them forbids).
func TestReuseKeyCoversNewFields(t *testing.T) {
	// Files are augurd's own reading of the disk, never in what the shim sends.
	notDecided := map[string]bool{"V": true, "Token": true, "Shim": true, "Reused": true, "ReportOnly": true, "ScriptTruncated": true,
		"Files": true}
	var base wire.Request
	k := reuseKey(&base)
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			name, f := prefix+v.Type().Field(i).Name, v.Field(i)
			if notDecided[name] {
				continue
			}
			switch f.Kind() {
			case reflect.Struct:
				walk(name+".", f)
				continue
			case reflect.String:
				f.SetString("x")
			case reflect.Uint32, reflect.Uint64:
				f.SetUint(1)
			case reflect.Bool:
				f.SetBool(true)
			case reflect.Slice:
				if f.Type().Elem().Kind() != reflect.String {
					t.Errorf("field %s (%s): teach this test and reuseKey about it", name, f.Type())
					continue
				}
				f.Set(reflect.ValueOf([]string{"x"}))
			default:
				t.Errorf("field %s (%s): teach this test and reuseKey about it", name, f.Kind())
				continue
			}
			if reuseKey(&base) == k {
				t.Errorf("field %s is not in the reuse key", name)
			}
			f.SetZero()
		}
	}
	walk("", reflect.ValueOf(&base).Elem())

	// No arguments is not unknown arguments, and one empty argument is
	// neither.
	none := wire.Request{ArgsKnown: true, Args: []string{}}
	empty := wire.Request{ArgsKnown: true, Args: []string{""}}
	if k0, k1, k2 := reuseKey(&base), reuseKey(&none), reuseKey(&empty); k0 == k1 || k1 == k2 || k0 == k2 {
		t.Errorf("unknown, no and one empty argument share a reuse key")
	}
}

// TestReuseConcurrent: slurmctld 23.02+ calls job_submit from several
// threads; under -race, concurrent identical submissions are each answered
// with their own token and every reuse is reported once.
func TestReuseConcurrent(t *testing.T) {
	f := startFake(t, annotate)
	var seen, carried atomic.Int64
	go func() {
		for r := range f.seen {
			carried.Add(int64(len(r.Reused)))
			seen.Add(1)
		}
	}()
	c := New(Options{Socket: f.path, Timeout: time.Second, FailureThreshold: 3, Cooldown: time.Minute,
		ReuseWindow: time.Minute})
	var wg sync.WaitGroup
	var mu sync.Mutex
	tokens := map[string]bool{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				r := submission("#!/bin/sh\nsame\n")
				resp, err := c.Decide(r)
				if err != nil {
					t.Error(err)
					return
				}
				if resp.Token != r.Token || !strings.HasPrefix(resp.Annotation, "augur:tok="+r.Token) {
					t.Errorf("answer %+v for %s", resp, r.Token)
				}
				mu.Lock()
				tokens[r.Token] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for deadline := time.Now().Add(5 * time.Second); seen.Load() < f.served.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("requests not drained")
		}
	}
	asked, sent, pending := int(f.served.Load()), int(carried.Load()), len(c.reuse.take())
	if len(tokens) != 400 || asked+sent+pending != 400 {
		t.Errorf("%d tokens; %d asked + %d reuses reported + %d pending, want 400", len(tokens), asked, sent, pending)
	}
}

// TestFlushSendsWaitingReports: reports left when submissions stop go on a
// report-only request once they have waited flushAfter, not before.
func TestFlushSendsWaitingReports(t *testing.T) {
	f := startFake(t, annotate)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	c := reusingClient(f.path, clock)
	first := submission("#!/bin/sh\nloop\n")
	c.Decide(first)
	<-f.seen
	reused := submission(first.Script)
	c.Decide(reused)
	if err := c.Flush(); err != nil || f.served.Load() != 1 {
		t.Fatalf("flushed early: %v, served %d", err, f.served.Load())
	}
	clock.Advance(flushAfter)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	got := <-f.seen
	if !got.ReportOnly || len(got.Reused) != 1 || got.Reused[0].Token != reused.Token {
		t.Errorf("flush sent %+v", got)
	}
	if err := c.Flush(); err != nil || f.served.Load() != 2 {
		t.Errorf("second flush: %v, served %d (nothing was left)", err, f.served.Load())
	}
}
