package outcome

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// KindLive marks a Live payload. A Report has no kind, so augurd tells the
// two apart on the same listener and an older augurd refuses a Live as a
// malformed report, which the node shrugs off (live figures are not kept
// for a resend).
const KindLive = "live"

// LiveGPU is one GPU's use by one running job over a live period.
type LiveGPU struct {
	Index int `json:"index"`
	// SMUtil is the job's mean SM utilisation over the period, percent.
	SMUtil float64 `json:"sm_util"`
	// MemMiB is the most memory the job held in the period.
	MemMiB float64 `json:"mem_mib"`
	// Shared says other jobs' processes used the GPU too (gres/shard):
	// SMUtil is then the job's own processes' where NVML gives per-process
	// figures.
	Shared bool `json:"shared,omitempty"`
}

// LiveJob is one running job on a node.
type LiveJob struct {
	JobID uint64 `json:"job_id"`
	// Start is when the node's Prolog recorded the job.
	Start time.Time `json:"start"`
	GPUs  []LiveGPU `json:"gpus"`
}

// Live is what a node's running jobs did over its last period: the node
// agent sends one every node.live_every while jobs run, and augurd's
// idle-GPU watcher (live.idle_gpu) judges running jobs from them.
type Live struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	Node string `json:"node"`
	// At is the end of the period; PeriodS its length in seconds.
	At      time.Time `json:"at"`
	PeriodS float64   `json:"period_s"`
	Jobs    []LiveJob `json:"jobs"`
}

// maxLiveJobs bounds the jobs of one Live: a node runs at most a few
// hundred jobs, even with shards.
const maxLiveJobs = 4096

// Validate checks what augurd relies on.
func (l *Live) Validate() error {
	bad := func(f string, a ...any) error {
		return fmt.Errorf("%w: live: "+f, append([]any{ErrMalformed}, a...)...)
	}
	switch {
	case l.V != Version || l.Kind != KindLive:
		return bad("version %d kind %q, want %d %q", l.V, l.Kind, Version, KindLive)
	case !cleanName(l.Node, 256):
		return bad("node name %q", l.Node)
	case l.At.IsZero():
		return bad("no time")
	case math.IsNaN(l.PeriodS) || l.PeriodS <= 0 || l.PeriodS > 86400:
		return bad("period %v s", l.PeriodS)
	case len(l.Jobs) > maxLiveJobs:
		return bad("%d jobs", len(l.Jobs))
	}
	for _, j := range l.Jobs {
		switch {
		case j.JobID == 0 || j.JobID > math.MaxInt64:
			return bad("job id %d", j.JobID)
		case j.Start.IsZero() || j.Start.After(l.At.Add(time.Hour)):
			return bad("job %d: start %s", j.JobID, j.Start)
		case len(j.GPUs) > 1024:
			return bad("job %d: %d GPUs", j.JobID, len(j.GPUs))
		}
		for _, g := range j.GPUs {
			if g.Index < 0 || g.Index > 1<<16 {
				return bad("job %d: gpu index %d", j.JobID, g.Index)
			}
			if math.IsNaN(g.SMUtil) || g.SMUtil < 0 || g.SMUtil > 100 {
				return bad("job %d gpu %d: utilisation %v", j.JobID, g.Index, g.SMUtil)
			}
			if math.IsNaN(g.MemMiB) || math.IsInf(g.MemMiB, 0) || g.MemMiB < 0 || g.MemMiB > 1e12 {
				return bad("job %d gpu %d: memory %v", j.JobID, g.Index, g.MemMiB)
			}
		}
	}
	return nil
}

// EncodeLive returns the live figures' JSON.
func EncodeLive(l *Live) ([]byte, error) {
	l.V, l.Kind = Version, KindLive
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(l)
}

// DecodeLive parses and validates live figures.
func DecodeLive(b []byte) (*Live, error) {
	var l Live
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("%w: live: %v", ErrMalformed, err)
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return &l, nil
}

// IsLive says whether a payload is a Live rather than a Report. A payload
// that is not JSON is neither; Decode says so.
func IsLive(b []byte) bool {
	var k struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(b, &k) == nil && k.Kind == KindLive
}
