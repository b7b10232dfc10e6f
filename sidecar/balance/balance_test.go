package balance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/munge"
	"github.com/augur-hpc/augur/sidecar/skew"
	"github.com/augur-hpc/augur/sidecar/slurm"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeMunge is a MUNGE whose credentials are "uid:nonce:payload"; it
// refuses replays, and the credential "down" is munged unreachable.
type fakeMunge struct {
	mu   sync.Mutex
	seen map[string]bool
}

var nonce atomic.Int64

func sign(uid uint32, payload string) string {
	return fmt.Sprintf("%d:%d:%s", uid, nonce.Add(1), payload)
}

func (f *fakeMunge) Decode(cred string) ([]byte, munge.Identity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cred == "down" {
		return nil, munge.Identity{}, munge.ErrUnavailable
	}
	if f.seen[cred] {
		return nil, munge.Identity{}, munge.ErrReplayed
	}
	uidS, rest, ok := strings.Cut(cred, ":")
	_, payload, ok2 := strings.Cut(rest, ":")
	ok = ok && ok2
	var uid uint32
	if _, err := fmt.Sscan(uidS, &uid); !ok || err != nil {
		return nil, munge.Identity{}, munge.ErrInvalid
	}
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	f.seen[cred] = true
	return []byte(payload), munge.Identity{UID: uid, GID: uid}, nil
}

type fakeOwners map[uint64]uint32

func (f fakeOwners) Owner(_ context.Context, id uint64) (uint32, error) {
	if uid, ok := f[id]; ok {
		return uid, nil
	}
	return 0, ErrNoJob
}

type countLog struct {
	mu       sync.Mutex
	requests map[string]int
	changes  int
	followed int
	skewed   int
}

func (c *countLog) Request(e Endpoint, r Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.requests == nil {
		c.requests = map[string]int{}
	}
	c.requests[string(e)+"/"+string(r)]++
}
func (c *countLog) Assessed(float64)    {}
func (c *countLog) PlanChanged(float64) { c.changes++ }
func (c *countLog) Jobs(f, s int)       { c.followed, c.skewed = f, s }

type fixture struct {
	srv   *Server
	st    *store.Store
	count *countLog
	now   time.Time
}

func newFixture(t *testing.T, maxJobs int) *fixture {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "augur.db"), store.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{st: st, count: &countLog{}, now: t0}
	f.srv = &Server{
		Verifier: &fakeMunge{}, Owners: fakeOwners{7: 1000, 8: 1001, 9: 1000, 10: 1000}, Store: st, Counters: f.count,
		Allowed: map[uint32]bool{0: true, 64030: true}, Log: slog.New(slog.DiscardHandler),
		Now:     func() time.Time { return f.now },
		Options: Options{Skew: skew.Config{Window: 5, Enter: 1.2, Exit: 1.05, Persist: 2, MinSteps: 2}, MinGain: 0.03, MaxJobs: maxJobs, JobIdle: time.Hour},
	}
	return f
}

// do sends one request signed by uid (cred "" signs it properly).
func (f *fixture) do(method, path string, uid uint32, body []byte, cred string) *httptest.ResponseRecorder {
	if cred == "" {
		cred = sign(uid, Payload(method, path, body))
	}
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	if cred != "-" {
		r.Header.Set("Authorization", "MUNGE "+cred)
	}
	w := httptest.NewRecorder()
	f.srv.Handler().ServeHTTP(w, r)
	return w
}

func report(world int, secs ...float64) []byte {
	req := StepsRequest{WorldSize: world, GlobalBatch: 64 * world}
	for r, s := range secs {
		req.Steps = append(req.Steps, skew.Step{Rank: r, Seconds: s})
	}
	b, _ := json.Marshal(req)
	return b
}

func TestAuth(t *testing.T) {
	good := report(2, 1, 1)
	cases := map[string]struct {
		method, path string
		uid          uint32
		body         []byte
		cred         string
		wantCode     int
		wantResult   string
	}{
		"owner reports":          {"POST", "/v1/jobs/7/steps", 1000, good, "", 200, "steps/ok"},
		"root reports":           {"POST", "/v1/jobs/7/steps", 0, good, "", 200, "steps/ok"},
		"slurm_user reports":     {"POST", "/v1/jobs/8/steps", 64030, good, "", 200, "steps/ok"},
		"another user":           {"POST", "/v1/jobs/8/steps", 1000, good, "", 403, "steps/forbidden"},
		"no credential":          {"POST", "/v1/jobs/7/steps", 1000, good, "-", 401, "steps/unauthenticated"},
		"not a credential":       {"POST", "/v1/jobs/7/steps", 1000, good, "garbage", 401, "steps/unauthenticated"},
		"signed for another job": {"POST", "/v1/jobs/7/steps", 1000, good, sign(1000, Payload("POST", "/v1/jobs/9/steps", good)), 401, "steps/unauthenticated"},
		"signed another body":    {"POST", "/v1/jobs/7/steps", 1000, good, sign(1000, Payload("POST", "/v1/jobs/7/steps", report(2, 9, 9))), 401, "steps/unauthenticated"},
		"munged down":            {"POST", "/v1/jobs/7/steps", 1000, good, "down", 503, "steps/unavailable"},
		"no such job":            {"POST", "/v1/jobs/99/steps", 1000, good, "", 404, "steps/not_found"},
		"bad job id":             {"POST", "/v1/jobs/x7/steps", 1000, good, "", 400, "steps/malformed"},
		"malformed body":         {"POST", "/v1/jobs/7/steps", 1000, []byte(`{"world_size": 2, "global_batch": 1}`), "", 400, "steps/malformed"},
		"unknown field":          {"POST", "/v1/jobs/7/steps", 1000, []byte(`{"world_size": 2, "global_batch": 4, "stpes": []}`), "", 400, "steps/malformed"},
		"plan before any report": {"GET", "/v1/jobs/10/plan", 1000, nil, "", 404, "plan/not_found"},
		"plan of another's job":  {"GET", "/v1/jobs/8/plan", 1000, nil, "", 403, "plan/forbidden"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, 10)
			w := f.do(tc.method, tc.path, tc.uid, tc.body, tc.cred)
			if w.Code != tc.wantCode {
				t.Errorf("code = %d, want %d; body %s", w.Code, tc.wantCode, w.Body)
			}
			if diff := cmp.Diff(map[string]int{tc.wantResult: 1}, f.count.requests); diff != "" {
				t.Errorf("counted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplayRefused(t *testing.T) {
	f := newFixture(t, 10)
	body := report(2, 1, 1)
	cred := sign(1000, Payload("POST", "/v1/jobs/7/steps", body))
	if w := f.do("POST", "/v1/jobs/7/steps", 1000, body, cred); w.Code != 200 {
		t.Fatalf("first: %d %s", w.Code, w.Body)
	}
	if w := f.do("POST", "/v1/jobs/7/steps", 1000, body, cred); w.Code != 401 || !strings.Contains(w.Body.String(), "already used") {
		t.Errorf("replay: %d %s", w.Code, w.Body)
	}
}

// TestSlowRankPlan: rank 3 runs at half speed; after Persist reports it is
// slow, the plan gives it about half the share of the others, the GET
// answers the same, and the store holds the change.
func TestSlowRankPlan(t *testing.T) {
	f := newFixture(t, 10)
	var last Answer
	for i := 0; i < 3; i++ {
		f.now = f.now.Add(time.Minute)
		w := f.do("POST", "/v1/jobs/7/steps", 1000, report(4, 1, 1, 1, 2), "")
		if w.Code != 200 {
			t.Fatalf("report %d: %d %s", i, w.Code, w.Body)
		}
		last = Answer{}
		if err := json.Unmarshal(w.Body.Bytes(), &last); err != nil {
			t.Fatal(err)
		}
	}
	want := &skew.Plan{Version: 1, GlobalBatch: 256, Shares: []int{73, 73, 73, 37},
		LossScale:          []float64{73 * 4 / 256.0, 73 * 4 / 256.0, 73 * 4 / 256.0, 37 * 4 / 256.0},
		CurrentStepSeconds: 2, PredictedStepSeconds: 37.0 / 32, Gain: 2/(37.0/32) - 1}
	if diff := cmp.Diff(want, last.Plan, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{3}, last.Assessment.SlowRanks); diff != "" {
		t.Errorf("slow ranks (-want +got):\n%s", diff)
	}
	w := f.do("GET", "/v1/jobs/7/plan", 1000, nil, "")
	got, err := DecodeAnswer(w.Body.Bytes())
	if err != nil || w.Code != 200 {
		t.Fatalf("GET: %d %v", w.Code, err)
	}
	if diff := cmp.Diff(last, got); diff != "" {
		t.Errorf("GET differs from the last POST (-post +get):\n%s", diff)
	}
	recs, err := f.st.Skew(context.Background(), 7, 0)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, r := range recs {
		events = append(events, r.Event)
		if r.UserID != 1000 {
			t.Errorf("record user %d, want the owner 1000", r.UserID)
		}
	}
	// Newest first: the plan (report 2, ready), then slow (report 3, persisted).
	if diff := cmp.Diff([]string{store.SkewSlow, store.SkewPlan}, events); diff != "" {
		t.Errorf("stored events (-want +got):\n%s", diff)
	}
	if f.count.changes != 1 || f.count.followed != 1 || f.count.skewed != 1 {
		t.Errorf("counters: %+v", f.count)
	}
}

func TestPipelinePlan(t *testing.T) {
	f := newFixture(t, 10)
	req := StepsRequest{WorldSize: 2, GlobalBatch: 8, Steps: []skew.Step{{Rank: 0, Seconds: 1}, {Rank: 1, Seconds: 1}},
		Pipeline: &PipelineReport{LayerCosts: []float64{1, 1, 1, 1, 1, 1, 1, 1}, Bounds: []int{0, 4, 8}, StageSeconds: []float64{4, 8}}}
	body, _ := json.Marshal(req)
	w := f.do("POST", "/v1/jobs/7/steps", 1000, body, "")
	a, err := DecodeAnswer(w.Body.Bytes())
	if err != nil || a.Pipeline == nil {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if diff := cmp.Diff([]int{0, 6, 8}, a.Pipeline.Bounds); diff != "" {
		t.Errorf("bounds (-want +got):\n%s", diff)
	}
}

func TestBounds(t *testing.T) {
	f := newFixture(t, 2)
	for _, id := range []string{"7", "9", "10"} {
		f.now = f.now.Add(time.Second)
		if w := f.do("POST", "/v1/jobs/"+id+"/steps", 1000, report(2, 1, 1), ""); w.Code != 200 {
			t.Fatalf("%s: %d", id, w.Code)
		}
	}
	if w := f.do("GET", "/v1/jobs/7/plan", 1000, nil, ""); w.Code != 404 {
		t.Errorf("least recent job kept past max_jobs: %d", w.Code)
	}
	f.now = f.now.Add(2 * time.Hour)
	f.do("POST", "/v1/jobs/10/steps", 1000, report(2, 1, 1), "")
	if w := f.do("GET", "/v1/jobs/9/plan", 1000, nil, ""); w.Code != 404 {
		t.Errorf("idle job kept past job_idle: %d", w.Code)
	}
}

// TestPanicFailsCleanly: a panic below the boundary is a 500, counted.
func TestPanicFailsCleanly(t *testing.T) {
	f := newFixture(t, 10)
	f.srv.Owners = panicOwners{}
	w := f.do("POST", "/v1/jobs/7/steps", 1000, report(2, 1, 1), "")
	if w.Code != 500 || f.count.requests["steps/failed"] != 1 {
		t.Errorf("code %d, counted %v", w.Code, f.count.requests)
	}
}

type panicOwners struct{}

func (panicOwners) Owner(context.Context, uint64) (uint32, error) { panic("boom") }

type fakeSlurm struct {
	calls int
	jobs  []slurm.Job
}

func (f *fakeSlurm) Jobs(context.Context) ([]slurm.Job, error) {
	f.calls++
	return f.jobs, nil
}

func TestSlurmOwners(t *testing.T) {
	now := t0
	sl := &fakeSlurm{jobs: []slurm.Job{{ID: 7, State: "RUNNING", UserID: 1000}, {ID: 8, State: "PENDING", UserID: 1001}}}
	o := &SlurmOwners{Slurm: sl, TTL: 30 * time.Second, MinRefresh: 5 * time.Second, Now: func() time.Time { return now }}
	type step struct {
		advance   time.Duration
		id        uint64
		wantUID   uint32
		wantErr   error
		wantCalls int
	}
	for i, s := range []step{
		{0, 7, 1000, nil, 1},
		{time.Second, 7, 1000, nil, 1},        // cached
		{0, 8, 0, ErrNoJob, 1},                // pending: not running; too soon to re-read
		{0, 99, 0, ErrNoJob, 1},               // made-up id: no re-read yet
		{5 * time.Second, 99, 0, ErrNoJob, 2}, // MinRefresh passed: one re-read
		{30 * time.Second, 7, 1000, nil, 3},   // TTL passed
	} {
		now = now.Add(s.advance)
		uid, err := o.Owner(context.Background(), s.id)
		if uid != s.wantUID || !errors.Is(err, s.wantErr) || sl.calls != s.wantCalls {
			t.Errorf("step %d: Owner(%d) = %d, %v after %d reads; want %d, %v after %d", i, s.id, uid, err, sl.calls, s.wantUID, s.wantErr, s.wantCalls)
		}
	}
}

func FuzzDecodeSteps(f *testing.F) {
	f.Add(report(4, 1, 1, 1, 2))
	f.Add([]byte(`{"world_size":2,"global_batch":8,"steps":[{"rank":0,"seconds":1,"samples":4}],"gpus":[{"rank":1,"sm_util":50}],"pipeline":{"layer_costs":[1,2,3],"bounds":[0,1,3],"stage_seconds":[1,2]}}`))
	f.Add([]byte(`{"world_size":1e99}`))
	f.Add([]byte(`{} {}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := DecodeSteps(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error without ErrMalformed: %v", err)
			}
			return
		}
		// Whatever decodes must be safe to apply.
		j, err := newJob(1, 1000, &req, Options{Skew: skew.DefaultConfig(), MinGain: 0.03})
		if err != nil {
			t.Fatalf("valid request refused by the tracker: %v", err)
		}
		j.apply(&req, t0, Options{Skew: skew.DefaultConfig(), MinGain: 0.03})
	})
}

func FuzzDecodeAnswer(f *testing.F) {
	f.Add([]byte(`{"job_id":7,"reports":3,"assessment":{"ranks":[{"rank":0}],"ready":true},"plan":{"version":1,"shares":[1]}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := DecodeAnswer(b); err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error without ErrMalformed: %v", err)
		}
	})
}
