package shim

import (
	"encoding/binary"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// The reuse window (Options.ReuseWindow, shim.reuse_window).
//
// Submissions come in storms: a loop of sbatch over the same script, a
// pipeline resubmitting a step. Each would cost slurmctld a round trip to
// augurd while it holds the job lock, and each would get the same answer:
// augurd's decision is a pure function of the request, the job's history,
// the policy and the cluster's nodes, and none of those changes from one
// submission to the next. So for ReuseWindow after augurd decided a
// request, an identical request (every field but the token) gets that
// decision at once, with its own token, and augurd learns of it with the
// next request the shim sends (Request.Reused), which it records like any
// other. What may be stale is bounded by the window: an outcome, a reload
// or a new model that arrived meanwhile counts from the next round trip.
//
// If the list never reaches augurd (slurmctld restarts first), each job
// still carries its token in its AdminComment, from which augurd's linker
// rebuilds the record. The cache holds at most reuseEntries requests of at
// most reuseMaxScript bytes of script each, and never a truncated script.

const (
	reuseEntries   = 256
	reuseMaxScript = wire.MaxReusedScript
	// reusePending bounds the reused decisions waiting to be reported;
	// past it the oldest are dropped (their jobs are recovered by the
	// linker from their AdminComment).
	reusePending = 4 * wire.MaxReused
)

type reuseEntry struct {
	resp    wire.Response // Token is the deciding request's
	decided time.Time
}

type reuseCache struct {
	window time.Duration

	mu      sync.Mutex
	entries map[string]reuseEntry
	pending []wire.Reuse
	dropped uint64
}

func newReuseCache(window time.Duration) *reuseCache {
	return &reuseCache{window: window, entries: map[string]reuseEntry{}}
}

// reuseKey is the request without its token and the shim's own fields:
// everything augurd's decision reads. "" when the request is not cached.
func reuseKey(r *wire.Request) string {
	if r.ScriptTruncated || len(r.Script) > reuseMaxScript {
		return ""
	}
	var b strings.Builder
	b.Grow(len(r.Script) + 256)
	var num [8]byte
	u := func(v uint64) {
		binary.LittleEndian.PutUint64(num[:], v)
		b.Write(num[:])
	}
	s := func(v string) { // length-prefixed: no two field lists collide
		u(uint64(len(v)))
		b.WriteString(v)
	}
	u(uint64(r.V))
	u(uint64(r.SubmitUID))
	u(uint64(r.UserID))
	u(uint64(r.GroupID))
	for _, v := range []string{r.Name, r.Account, r.Partition, r.QOS, r.WorkDir, r.Comment,
		r.Constraint, r.Prefer, r.ClusterFeatures, r.Reservation, r.TRES.PerNode, r.TRES.PerJob, r.TRES.PerTask, r.TRES.PerSocket, r.AdminComment, r.Script} {
		s(v)
	}
	for _, v := range []uint64{uint64(r.MinNodes), uint64(r.MaxNodes), uint64(r.NumTasks), uint64(r.MinCPUs),
		uint64(r.CPUsPerTask), r.MemPerNodeMB, r.MemPerCPUMB, uint64(r.TimeLimitMin)} {
		u(v)
	}
	// The script's arguments: sbatch job.sh llama-7b and job.sh mistral-7b
	// are two jobs, and unknown arguments are not none.
	if r.ArgsKnown || len(r.Args) > 0 {
		u(uint64(len(r.Args)))
		for _, a := range r.Args {
			s(a)
		}
	} else {
		u(math.MaxUint64)
	}
	// The environment it reads: MODEL=a and MODEL=b are two jobs.
	u(uint64(len(r.Env)))
	for _, e := range r.Env {
		s(e)
	}
	return b.String()
}

// lookup returns the decision for req if an identical request was decided
// within the window, with req's token, and queues req for the report.
func (rc *reuseCache) lookup(req *wire.Request, key string, now time.Time) (*wire.Response, bool) {
	if key == "" {
		return nil, false
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	e, ok := rc.entries[key]
	if !ok {
		return nil, false
	}
	if now.Sub(e.decided) > rc.window || now.Before(e.decided) {
		delete(rc.entries, key)
		return nil, false
	}
	resp, ok := retoken(e.resp, req.Token)
	if !ok {
		return nil, false
	}
	if len(rc.pending) >= reusePending {
		rc.pending = rc.pending[1:]
		rc.dropped++
	}
	rc.pending = append(rc.pending, wire.Reuse{Token: req.Token, Of: e.resp.Token, AtUnixNano: now.UnixNano()})
	return resp, true
}

// retoken is resp given to the submission with token tok: the annotation
// starts with the deciding request's token, which becomes tok. The answer
// shares nothing with resp.
func retoken(resp wire.Response, tok string) (*wire.Response, bool) {
	resp = clone(resp)
	if resp.Annotation != "" {
		rest, ok := strings.CutPrefix(resp.Annotation, "augur:tok="+resp.Token)
		if !ok || (rest != "" && rest[0] != ' ') {
			return nil, false // not an annotation this shim knows how to re-token
		}
		resp.Annotation = "augur:tok=" + tok + rest
	}
	resp.Token = tok
	if err := resp.Validate(tok); err != nil {
		return nil, false
	}
	return &resp, true
}

// clone is r with its own copies of what r points to: answers go to
// several threads at once, and the plugin may change the one it got.
func clone(r wire.Response) wire.Response {
	if r.TRES != nil {
		t := *r.TRES
		r.TRES = &t
	}
	if r.SiteFactor != nil {
		sf := *r.SiteFactor
		r.SiteFactor = &sf
	}
	return r
}

// store remembers augurd's decision for the request with key.
func (rc *reuseCache) store(key string, resp *wire.Response, now time.Time) {
	if key == "" {
		return
	}
	if _, ok := retoken(*resp, resp.Token); !ok {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.entries) >= reuseEntries {
		for k, e := range rc.entries { // expired ones first, else any
			if now.Sub(e.decided) > rc.window {
				delete(rc.entries, k)
			}
		}
		for k := range rc.entries {
			if len(rc.entries) < reuseEntries {
				break
			}
			delete(rc.entries, k)
		}
	}
	rc.entries[key] = reuseEntry{resp: clone(*resp), decided: now}
}

// due reports whether the oldest pending report has waited longer than after.
func (rc *reuseCache) due(now time.Time, after time.Duration) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.pending) > 0 && now.Sub(time.Unix(0, rc.pending[0].AtUnixNano)) >= after
}

// take removes up to wire.MaxReused pending reports, oldest first.
func (rc *reuseCache) take() []wire.Reuse {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := min(len(rc.pending), wire.MaxReused)
	if n == 0 {
		return nil
	}
	out := append([]wire.Reuse(nil), rc.pending[:n]...)
	rc.pending = rc.pending[n:]
	return out
}

// giveBack puts reports back in front (the request carrying them failed;
// augurd records a token once, so a report it did get is harmless twice).
func (rc *reuseCache) giveBack(rs []wire.Reuse) {
	if len(rs) == 0 {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.pending = append(rs, rc.pending...)
	if over := len(rc.pending) - reusePending; over > 0 {
		rc.pending = rc.pending[over:]
		rc.dropped += uint64(over)
	}
}
