// Package daemon is augurd: it wires the config, the store, the metrics, the
// shim socket and the pure decision core together, and holds the one piece
// of glue between them, Service.Handle.
//
//	socket ─> server ─> Service.Handle ─┬─> store.History (same user + signature)
//	                                    ├─> core.Decide (pure)
//	                                    ├─> store.Record (group commit, bounded wait)
//	                                    └─> metrics
//
// Run starts everything from a *config.Config and stops it cleanly when its
// context ends; Reload swaps the policy on SIGHUP without dropping a request.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os/user"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/sidecar/config"
	"github.com/augur-hpc/augur/sidecar/core"
	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/sidecar/server"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// Store is what the service needs of augurd's database.
type Store interface {
	Record(ctx context.Context, sub store.Submission) error
	Queue(sub store.Submission) error
	History(ctx context.Context, userID uint32, signature string, limit int) ([]store.Outcome, error)
	// Submission reads a recorded submission back (ErrNotFound if none).
	Submission(ctx context.Context, token string) (store.Submission, error)
}

// historyLimit is how many earlier runs a decision looks at.
const historyLimit = 20

// historyBudget bounds the history query; past it the job is decided without history.
const historyBudget = 10 * time.Millisecond

// settings is everything a SIGHUP may change, swapped as one.
type settings struct {
	policy     core.Policy
	predictor  predictor.Predictor
	commitWait time.Duration
	live       config.Live
	jobFiles   config.JobFiles
}

// Service decides submissions.
type Service struct {
	store   Store
	metrics *metrics.Metrics
	log     *slog.Logger
	now     func() time.Time
	cur     atomic.Pointer[settings]
	names   userNames
	hist    *historyCache
	// scripts caches script readings by the script's hash: a script
	// submitted again is not parsed again.
	scripts *predictor.ScriptCache
	// recent are the latest recorded submissions, for the shim's reused
	// decisions (Request.Reused) to copy.
	recent recentSubs
	// layout is the cluster's nodes (RunLayout); nil until first read.
	layout      atomic.Pointer[core.Layout]
	layoutPoke  chan struct{}
	layoutReads atomic.Int64
	// fileSlots are the job file reads in flight (jobFileSlots);
	// readFile reads one (readJobFile; a test's stand-in for a hung disk).
	fileSlots chan struct{}
	readFile  func(path string, uid uint32, maxBytes int64) (string, metrics.JobFileResult)

	mu    sync.Mutex // guards cfg and model, the inputs of cur
	cfg   *config.Config
	model *predictor.Model
}

// scriptCacheSize is how many script readings augurd keeps: a few MB,
// and room for a busy day's distinct scripts.
const scriptCacheSize = 4096

// historyTTL is how long a (user, signature)'s history is reused.
const historyTTL = 2 * time.Second

var _ server.Handler = (*Service)(nil)

// NewService returns a Service deciding by cfg.
func NewService(cfg *config.Config, st Store, m *metrics.Metrics, log *slog.Logger, now func() time.Time) *Service {
	s := &Service{store: st, metrics: m, log: log, now: now, hist: newHistoryCache(historyTTL, now),
		scripts: predictor.NewScriptCache(scriptCacheSize), layoutPoke: make(chan struct{}, 1),
		fileSlots: make(chan struct{}, jobFileSlots), readFile: readJobFile}
	m.WatchScriptCache(s.scripts.Stats)
	s.Reload(cfg)
	return s
}

// Predictor returns the predictor the next decision uses.
func (s *Service) Predictor() predictor.Predictor { return s.cur.Load().predictor }

// PolicyFrom maps the configuration onto the decision core's policy.
func PolicyFrom(cfg *config.Config) core.Policy {
	p := core.Policy{
		RewriteTypeless:  cfg.Policy.RewriteTypelessGPUs,
		RewriteTyped:     cfg.Policy.RewriteTypedGPUs,
		RewriteFromPrior: cfg.Policy.RewriteFromPrior,
		RejectCertainOOM: cfg.Policy.RejectCertainOOM,
		MinRunsToReject:  cfg.Policy.HistoryMinRuns,
		SiteFactorMax:    cfg.Policy.SiteFactorMax,
		ShardSmallJobs:   cfg.Policy.ShardSmallJobs,
		TimeMin:          cfg.Live.TimeMin.Enabled && !cfg.Live.DryRun,
		TimeMinDryRun:    cfg.Live.TimeMin.Enabled && cfg.Live.DryRun,
	}
	for _, t := range cfg.Cluster.GPUTypes {
		p.GPUTypes = append(p.GPUTypes, core.GPUType{Name: t.Name, MemMiB: t.Memory.MiB(), Shards: t.Shards, Aliases: t.Aliases})
	}
	return p
}

// Reload applies a new configuration's policy to the next decisions.
// It also drops the cached histories, so outcomes imported behind augurd's
// back count from the next submission on.
func (s *Service) Reload(cfg *config.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg = cfg
	s.publish()
	if s.hist != nil {
		s.hist.invalidate()
	}
}

// SetModel makes the next decisions use a newly trained model.
func (s *Service) SetModel(m *predictor.Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.model = m
	s.publish()
}

// publish builds the settings from the configuration and model; s.mu held.
func (s *Service) publish() {
	pol := PolicyFrom(s.cfg)
	hist := predictor.NewHistory(s.cfg.Policy.HistoryMinRuns, pol.GPUMemMiB())
	s.cur.Store(&settings{
		policy:     pol,
		predictor:  predictor.NewCombined(s.model, hist),
		commitWait: s.cfg.Store.CommitWait,
		live:       s.cfg.Live,
		jobFiles:   s.cfg.Predictor.JobFiles,
	})
}

// Policy returns the decision core's policy and the live settings as the
// configuration last loaded says.
func (s *Service) Policy() (core.Policy, config.Live) {
	set := s.cur.Load()
	return set.policy, set.live
}

// OutcomesChanged tells the service that outcomes were stored, so cached
// histories are stale.
func (s *Service) OutcomesChanged() { s.hist.invalidate() }

// Handle implements server.Handler. The decision is all that slurmctld waits
// for; recording it, counting it and logging it happen after the answer is
// written, unless store.commit_wait asks for the record first.
func (s *Service) Handle(ctx context.Context, peer server.Peer, req *wire.Request) (wire.Response, func()) {
	if req.ReportOnly {
		// Only the shim's reuse reports: nothing to decide.
		log := s.log.With("token", req.Token)
		return wire.Response{V: wire.Version, Token: req.Token, Action: wire.Accept},
			func() { s.recordReused(ctx, log, req.Reused) }
	}
	start := s.now()
	set := s.cur.Load()
	// The script is read once; with job files, again with those read, in
	// rounds as they name more, its shell parsed once (augurd reads them
	// itself, never takes them from the caller). This is the reading
	// core.JobFromRequest makes of the stored request.
	req.Files = nil
	script := s.scripts.ParseEnv(req.Script, req.ScriptArgs(), req.Env)
	if jf := set.jobFiles; jf.Enabled && len(script.Files) > 0 {
		// In rounds, as the files read name more, all within the budget.
		deadline := s.now().Add(jf.Budget)
		script, req.Files = s.scripts.ReadJobFiles(script, req.Script, req.ScriptArgs(), req.Env, func(paths []string) map[string]string {
			left := deadline.Sub(s.now())
			if left <= 0 {
				return nil
			}
			return s.readJobFiles(req, paths, left, int64(jf.MaxBytes))
		})
	}
	job, gresErr := core.JobFromScript(req, script)
	hist := s.history(ctx, req.UserID, job.Script.Signature)
	d := core.Decide(core.Input{
		Request: req, Job: job, GresErr: gresErr,
		History: hist.rows, Policy: set.policy, Predictor: set.predictor, Layout: s.layout.Load(),
	})
	resp := d.Response(req.Token)
	elapsed := s.now().Sub(start)

	finish := func() {
		log := s.log.With("token", req.Token, "user_id", req.UserID, "job_name", req.Name)
		if hist.err != nil {
			s.metrics.StoreFailed(metrics.StoreHistory)
			log.Warn("history unavailable; decided without it", "err", hist.err)
		}
		s.shimStats(req.Shim)
		if set.commitWait <= 0 {
			s.record(ctx, log, set.commitWait, req, job, d, start, elapsed)
		}
		s.recordReused(ctx, log, req.Reused)
		s.count(d)
		s.metrics.DecisionDuration.Observe(elapsed.Seconds())
		if d.Action == wire.Reject {
			log.Info("submission rejected", "reason", d.Message)
		} else {
			log.Debug("submission decided", "annotation", d.Annotation, "notes", d.Notes,
				"decision_seconds", elapsed.Seconds())
		}
	}
	if set.commitWait > 0 {
		s.record(ctx, s.log.With("token", req.Token), set.commitWait, req, job, d, start, elapsed)
	}
	return resp, finish
}

// historyResult is a history lookup, with the error the log reports later.
type historyResult struct {
	rows []predictor.Outcome
	err  error
}

func (s *Service) history(ctx context.Context, uid uint32, sig string) historyResult {
	rows, err := s.hist.get(ctx, uid, sig, func(ctx context.Context) ([]store.Outcome, error) {
		ctx, cancel := context.WithTimeout(ctx, historyBudget)
		defer cancel()
		return s.store.History(ctx, uid, sig, historyLimit)
	})
	if err != nil {
		return historyResult{err: err}
	}
	return historyResult{rows: PredictorOutcomes(rows)}
}

// PredictorOutcomes turns stored outcomes into the predictor's.
// (training.Rows does the same for training rows.)
func PredictorOutcomes(rows []store.Outcome) []predictor.Outcome {
	out := make([]predictor.Outcome, len(rows))
	for i, o := range rows {
		out[i] = predictor.Outcome{
			JobID: o.JobID, PeakGPUMemMiB: o.PeakGPUMemMiB, RuntimeSec: o.RuntimeSec,
			ExitState: o.ExitState, GPUType: o.GPUType, EndedAt: o.EndedAt, MeanSMUtil: o.MeanSMUtil,
		}
		if len(o.Features) > 0 {
			// A row that does not parse keeps zero features: history then
			// treats it as the same batch size, as before features existed.
			_ = json.Unmarshal(o.Features, &out[i].Features)
		}
	}
	return out
}

// decisionRecord is the decision as stored (JSON in the submissions table).
type decisionRecord struct {
	Action     wire.Action          `json:"action"`
	Message    string               `json:"message,omitempty"`
	Annotation string               `json:"annotation,omitempty"`
	TRES       *wire.TRES           `json:"tres,omitempty"`
	SiteFactor *int64               `json:"site_factor,omitempty"`
	Prediction predictor.Prediction `json:"prediction"`
	Notes      []string             `json:"notes,omitempty"`
}

func (s *Service) record(ctx context.Context, log *slog.Logger, wait time.Duration, req *wire.Request, job predictor.Job, d core.Decision, at time.Time, took time.Duration) {
	bare := *req
	bare.Script = ""
	reqJSON, _ := json.Marshal(&bare)
	decJSON, _ := json.Marshal(decisionRecord{
		Action: d.Action, Message: d.Message, Annotation: d.Annotation, TRES: d.TRES,
		SiteFactor: d.SiteFactor, Prediction: d.Prediction, Notes: d.Notes,
	})
	p := d.Prediction
	features, _ := json.Marshal(job.Script.Features)
	sub := store.Submission{
		Token: req.Token, ReceivedAt: at, SubmitUID: req.SubmitUID, UserID: req.UserID,
		User: s.names.lookup(req.UserID), Account: req.Account, Partition: req.Partition,
		QOS: req.QOS, Name: req.Name, Script: req.Script, Signature: d.Signature,
		Request: reqJSON, Decision: decJSON, Action: string(d.Action),
		PredMemMiB: p.GPUMemMiB.P50, PredMemHiMiB: p.GPUMemMiB.Hi,
		PredRuntimeSec: p.RuntimeSec.P50, PredRuntimeHiSec: p.RuntimeSec.Hi,
		PredSource: string(p.MemSource), DecisionMicros: took.Microseconds(), Features: features,
	}
	if len(sub.Script) <= wire.MaxReusedScript {
		s.recent.put(sub) // only what the shim may reuse: bounded memory
	}
	if wait <= 0 {
		// Answer at once; the writer commits the record within its next
		// group commit. Errors then reach the log from the writer.
		if err := s.store.Queue(sub); err != nil {
			s.metrics.StoreFailed(metrics.StoreRecord)
			log.Error("submission not recorded", "err", err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	t0 := s.now()
	err := s.store.Record(ctx, sub)
	s.metrics.StoreCommitWait.Observe(s.now().Sub(t0).Seconds())
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded):
		// Still queued: the writer commits it later. Answer now.
		log.Debug("record not yet committed; answering anyway", "commit_wait_seconds", wait.Seconds())
	default:
		s.metrics.StoreFailed(metrics.StoreRecord)
		log.Error("submission not recorded", "err", err)
	}
}

// recordReused records the submissions the shim answered with an earlier
// request's decision: each a copy of that request's record under its own
// token and time, its decision marked reused_of. One whose original is
// neither recent nor stored (augurd restarted before recording it) is left
// to the linker, which rebuilds it from the job's AdminComment.
func (s *Service) recordReused(ctx context.Context, log *slog.Logger, rs []wire.Reuse) {
	for _, r := range rs {
		orig, ok := s.recent.get(r.Of)
		if !ok {
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			sub, err := s.store.Submission(rctx, r.Of)
			cancel()
			if err != nil {
				s.metrics.ReusedDecisions.WithLabelValues("unknown").Inc()
				log.Warn("a reused decision's original is not known; the linker will recover the job's record",
					"reused_token", r.Token, "of", r.Of, "err", err)
				continue
			}
			orig = sub
		}
		sub := orig
		sub.Token, sub.ReceivedAt, sub.JobID, sub.DecisionMicros = r.Token, time.Unix(0, r.AtUnixNano), 0, 0
		sub.Decision = reusedDecision(orig.Decision, r.Of)
		if err := s.store.Queue(sub); err != nil {
			s.metrics.StoreFailed(metrics.StoreRecord)
			log.Error("reused decision not recorded", "reused_token", r.Token, "err", err)
			continue
		}
		s.metrics.ReusedDecisions.WithLabelValues("recorded").Inc()
		if sub.Action == string(wire.Reject) {
			s.metrics.Decided(metrics.ActionReject)
		} else {
			s.metrics.Decided(metrics.ActionAccept)
		}
	}
}

// reusedDecision is a decision record marked as reused from token of.
func reusedDecision(dec []byte, of string) []byte {
	var m map[string]any
	if json.Unmarshal(dec, &m) != nil || m == nil {
		m = map[string]any{}
	}
	m["reused_of"] = of
	out, _ := json.Marshal(m)
	return out
}

// recentSubs keeps the last recentMax recorded submissions by token.
type recentSubs struct {
	mu    sync.Mutex
	m     map[string]store.Submission
	order []string
}

// recentMax: a reused decision refers to one made at most
// shim.reuse_window (1 s by default, 1 min at most) earlier; older ones are
// read back from the store. Scripts kept are at most wire.MaxReusedScript,
// so this holds 64 MiB at the very worst, a few MiB for real scripts.
const recentMax = 1024

func (r *recentSubs) put(sub store.Submission) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]store.Submission, recentMax)
	}
	if _, ok := r.m[sub.Token]; !ok {
		r.order = append(r.order, sub.Token)
	}
	r.m[sub.Token] = sub
	for len(r.order) > recentMax {
		delete(r.m, r.order[0])
		r.order = r.order[1:]
	}
}

func (r *recentSubs) get(tok string) (store.Submission, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sub, ok := r.m[tok]
	return sub, ok
}

func (s *Service) count(d core.Decision) {
	if d.Action == wire.Reject {
		s.metrics.Decided(metrics.ActionReject)
	} else {
		s.metrics.Decided(metrics.ActionAccept)
	}
	s.metrics.Predictions.WithLabelValues(string(d.Prediction.MemSource)).Inc()
	if d.TRES != nil {
		s.metrics.GPURewrites.Inc()
	}
	if d.SiteFactor != nil {
		s.metrics.SiteFactors.Inc()
	}
}

func (s *Service) shimStats(st wire.ShimStats) {
	if st.FailOpens > 0 {
		s.metrics.ShimFailOpen.Add(float64(st.FailOpens))
	}
	if st.Skipped > 0 {
		s.metrics.ShimSkipped.Add(float64(st.Skipped))
	}
	if st.LastRoundTripUS > 0 {
		s.metrics.ShimRoundTrip.Observe(float64(st.LastRoundTripUS) / 1e6)
	}
}

// userNames resolves uids to names off the request path: a name not yet
// known is looked up in the background (NSS may be LDAP, and slow) and the
// record goes out with an empty name.
type userNames struct {
	m sync.Map // uint32 -> string ("" while a lookup runs)
}

func (u *userNames) lookup(uid uint32) string {
	if v, ok := u.m.Load(uid); ok {
		return v.(string)
	}
	if _, loaded := u.m.LoadOrStore(uid, ""); !loaded {
		go func() {
			name := strconv.FormatUint(uint64(uid), 10)
			if usr, err := user.LookupId(name); err == nil {
				name = usr.Username
			}
			u.m.Store(uid, name)
		}()
	}
	return ""
}
