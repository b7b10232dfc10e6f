package balance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/augur-hpc/augur/sidecar/munge"
	"github.com/augur-hpc/augur/sidecar/store"
)

// Verifier checks a MUNGE credential and returns its payload and signer.
type Verifier interface {
	Decode(cred string) ([]byte, munge.Identity, error)
}

// ErrNoJob: Slurm does not know the job (or it is not visible yet).
var ErrNoJob = errors.New("no such job")

// Owners tells whose a job is.
type Owners interface {
	Owner(ctx context.Context, jobID uint64) (uint32, error)
}

// Store is what the endpoint keeps in augurd's database.
type Store interface {
	AddSkew(ctx context.Context, r store.SkewRecord) error
}

// Endpoint and Result are the typed label values of Counters.Request.
type (
	Endpoint string
	Result   string
)

// Endpoints.
const (
	EndpointSteps Endpoint = "steps"
	EndpointPlan  Endpoint = "plan"
)

// Results of a request.
const (
	ResultOK              Result = "ok"
	ResultUnauthenticated Result = "unauthenticated" // no, bad or mismatched credential
	ResultReplayed        Result = "replayed"
	ResultForbidden       Result = "forbidden" // signer is not the job's owner
	ResultMalformed       Result = "malformed"
	ResultNotFound        Result = "not_found"
	ResultUnavailable     Result = "unavailable" // munged or Slurm unreachable
	ResultFailed          Result = "failed"      // augurd's fault (a panic)
)

// Counters is how the endpoint reports to /metrics: aggregates only, never
// a job id. NopCounters does nothing.
type Counters interface {
	Request(Endpoint, Result)
	// Assessed is called for each report that judged every rank, with the
	// job's largest slowdown.
	Assessed(maxSlowdown float64)
	// PlanChanged is called when a job's plan changes, with its predicted gain.
	PlanChanged(gain float64)
	// Jobs is the number of jobs followed and of those with a slow rank.
	Jobs(followed, skewed int)
}

// NopCounters discards counts.
type NopCounters struct{}

func (NopCounters) Request(Endpoint, Result) {}
func (NopCounters) Assessed(float64)         {}
func (NopCounters) PlanChanged(float64)      {}
func (NopCounters) Jobs(int, int)            {}

var _ Counters = NopCounters{}

// Server serves the endpoint. Fields are set before Handler is called.
type Server struct {
	Verifier Verifier
	Owners   Owners
	Store    Store
	Counters Counters
	// Allowed are root and slurm_user: they may read and report for any job.
	Allowed map[uint32]bool
	Options Options
	Log     *slog.Logger
	Now     func() time.Time

	mu   sync.Mutex
	jobs map[uint64]*job
}

// storeBudget bounds a request's wait for the store.
const storeBudget = 2 * time.Second

// Handler routes the two endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/jobs/{id}/steps", s.guard(EndpointSteps, s.steps))
	mux.HandleFunc("GET /v1/jobs/{id}/plan", s.guard(EndpointPlan, s.plan))
	return mux
}

// refusal is an answer other than 200.
type refusal struct {
	code   int
	result Result
	msg    string
	err    error
}

func (r *refusal) Error() string { return r.msg }

func refuse(code int, res Result, msg string, err error) *refusal {
	return &refusal{code: code, result: res, msg: msg, err: err}
}

type handler func(ctx context.Context, log *slog.Logger, id uint64, uid uint32, body []byte) (Answer, *refusal)

// guard does what both endpoints share: the job id, the body, the
// credential and the owner check; a panic is recovered, logged with its
// stack, counted and answered 500.
func (s *Server) guard(ep Endpoint, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		log := s.Log.With("endpoint", string(ep), "from", r.RemoteAddr)
		defer func() {
			if p := recover(); p != nil {
				log.Error("balance request panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				s.Counters.Request(ep, ResultFailed)
				writeJSON(w, http.StatusInternalServerError, ErrorAnswer{Error: "augurd failed on this request"})
			}
		}()
		ans, ref := s.serve(r, log, h)
		if ref != nil {
			s.Counters.Request(ep, ref.result)
			lvl := slog.LevelWarn
			if ref.result == ResultNotFound || ref.result == ResultMalformed {
				lvl = slog.LevelInfo
			}
			log.Log(r.Context(), lvl, "balance request refused", "reason", string(ref.result), "err", ref.err)
			writeJSON(w, ref.code, ErrorAnswer{Error: ref.msg})
			return
		}
		s.Counters.Request(ep, ResultOK)
		writeJSON(w, http.StatusOK, ans)
	}
}

func (s *Server) serve(r *http.Request, log *slog.Logger, h handler) (Answer, *refusal) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		return Answer{}, refuse(http.StatusBadRequest, ResultMalformed, "the job id must be a positive integer", err)
	}
	log = log.With("job_id", id)
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBody))
	if err != nil {
		return Answer{}, refuse(http.StatusRequestEntityTooLarge, ResultMalformed, fmt.Sprintf("body over %d bytes", MaxBody), err)
	}
	cred, ok := strings.CutPrefix(r.Header.Get("Authorization"), "MUNGE ")
	if !ok || cred == "" {
		return Answer{}, refuse(http.StatusUnauthorized, ResultUnauthenticated,
			"send Authorization: MUNGE <credential> (munge -s '"+PayloadPrefix+" METHOD PATH SHA256(BODY)')", nil)
	}
	payload, who, err := s.Verifier.Decode(strings.TrimSpace(cred))
	switch {
	case errors.Is(err, munge.ErrReplayed):
		return Answer{}, refuse(http.StatusUnauthorized, ResultReplayed, "credential already used: make a new one for every request", err)
	case errors.Is(err, munge.ErrUnavailable):
		return Answer{}, refuse(http.StatusServiceUnavailable, ResultUnavailable, "augurd cannot reach munged; try again", err)
	case err != nil:
		return Answer{}, refuse(http.StatusUnauthorized, ResultUnauthenticated, "not a valid MUNGE credential (expired, or another realm)", err)
	}
	if want := Payload(r.Method, r.URL.Path, body); string(payload) != want {
		return Answer{}, refuse(http.StatusUnauthorized, ResultUnauthenticated,
			"the credential does not sign this request: its payload must be \""+want+"\"", fmt.Errorf("payload %.120q", payload))
	}
	log = log.With("signer_uid", who.UID)
	owner, err := s.Owners.Owner(r.Context(), id)
	if s.Allowed[who.UID] {
		// root and slurm_user act for any job; the owner, when Slurm
		// answers, is still what the store records.
		if err != nil {
			owner = who.UID
		}
	} else {
		switch {
		case errors.Is(err, ErrNoJob):
			return Answer{}, refuse(http.StatusNotFound, ResultNotFound, fmt.Sprintf("Slurm has no job %d", id), err)
		case err != nil:
			return Answer{}, refuse(http.StatusServiceUnavailable, ResultUnavailable, "augurd cannot ask Slurm whose job this is; try again", err)
		case owner != who.UID:
			return Answer{}, refuse(http.StatusForbidden, ResultForbidden, fmt.Sprintf("job %d is not yours", id),
				fmt.Errorf("owner uid %d", owner))
		}
	}
	return h(r.Context(), log, id, owner, body)
}

// steps takes a report.
func (s *Server) steps(ctx context.Context, log *slog.Logger, id uint64, owner uint32, body []byte) (Answer, *refusal) {
	req, err := DecodeSteps(body)
	if err != nil {
		return Answer{}, refuse(http.StatusBadRequest, ResultMalformed, err.Error(), err)
	}
	now := s.Now()
	s.mu.Lock()
	if s.jobs == nil {
		s.jobs = map[uint64]*job{}
	}
	s.expireLocked(now)
	j := s.jobs[id]
	if j == nil {
		if j, err = newJob(id, owner, &req, s.Options); err != nil {
			s.mu.Unlock()
			return Answer{}, refuse(http.StatusBadRequest, ResultMalformed, err.Error(), err)
		}
		s.evictLocked()
		s.jobs[id] = j
	}
	prevVersion := j.plan.Version
	ans, recs := j.apply(&req, now, s.Options)
	planGain := j.plan.Gain
	followed, skewed := s.countLocked()
	s.mu.Unlock()

	s.Counters.Jobs(followed, skewed)
	if ans.Assessment.Ready {
		s.Counters.Assessed(ans.Assessment.MaxSlowdown)
	}
	if ans.Plan != nil && ans.Plan.Version != prevVersion {
		s.Counters.PlanChanged(planGain)
		log.Info("rebalancing plan changed", "plan_version", ans.Plan.Version, "predicted_gain_ratio", planGain,
			"slow_ranks", fmt.Sprint(ans.Assessment.SlowRanks), "max_slowdown_ratio", ans.Assessment.MaxSlowdown)
	}
	// The store is an edge: a slow or failing disk delays or loses a
	// record, never the job's answer.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeBudget)
	defer cancel()
	for _, r := range recs {
		if err := s.Store.AddSkew(sctx, r); err != nil {
			log.Error("skew record not stored", "event", r.Event, "err", err)
		}
	}
	return ans, nil
}

// plan answers the job's latest state.
func (s *Server) plan(_ context.Context, _ *slog.Logger, id uint64, _ uint32, _ []byte) (Answer, *refusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil {
		return Answer{}, refuse(http.StatusNotFound, ResultNotFound,
			fmt.Sprintf("job %d has sent no step times to augurd (or not since augurd started)", id), nil)
	}
	return j.answer, nil
}

func (s *Server) expireLocked(now time.Time) {
	for id, j := range s.jobs {
		if now.Sub(j.last) > s.Options.JobIdle {
			delete(s.jobs, id)
		}
	}
}

// evictLocked makes room for one more job by dropping the least recently
// reporting ones. O(jobs), only when full.
func (s *Server) evictLocked() {
	for len(s.jobs) >= max(s.Options.MaxJobs, 1) {
		var oldest *job
		for _, j := range s.jobs {
			if oldest == nil || j.last.Before(oldest.last) || (j.last.Equal(oldest.last) && j.id < oldest.id) {
				oldest = j
			}
		}
		delete(s.jobs, oldest.id)
	}
}

func (s *Server) countLocked() (followed, skewed int) {
	for _, j := range s.jobs {
		if len(j.slow) > 0 {
			skewed++
		}
	}
	return len(s.jobs), skewed
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.Encode(v) //nolint:errcheck // the client went away
}
