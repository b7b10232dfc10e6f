package balance

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/augur-hpc/augur/sidecar/skew"
)

// ErrMalformed: a request or answer that does not decode or is out of range.
var ErrMalformed = errors.New("balance: malformed")

// Wire limits.
const (
	// MaxBody bounds a request body.
	MaxBody = 256 << 10
	// MaxSteps bounds the step times of one report.
	MaxSteps = 8192
	// MaxAnswer bounds an answer the CLI reads.
	MaxAnswer = 4 << 20
)

// PayloadPrefix starts every signed payload.
const PayloadPrefix = "augur-balance/1"

// Payload is what a request's MUNGE credential must carry: the method, the
// path and the hex SHA-256 of the body, separated by single spaces, e.g.
// "augur-balance/1 POST /v1/jobs/42/steps 9f86d0...". Binding the path and
// body keeps a credential seen in transit from being spent on another job
// or another report.
func Payload(method, path string, body []byte) string {
	sum := sha256.Sum256(body)
	return PayloadPrefix + " " + method + " " + path + " " + hex.EncodeToString(sum[:])
}

// StepsRequest is the body of POST /v1/jobs/{id}/steps, usually sent by
// rank 0 after gathering every rank's times.
type StepsRequest struct {
	// WorldSize is the number of data-parallel ranks.
	WorldSize int `json:"world_size"`
	// GlobalBatch is what the plan's shares must sum to: samples, or
	// micro-batches if the job splits in those.
	GlobalBatch int `json:"global_batch"`
	// Steps are the ranks' compute times since the last report.
	Steps []skew.Step `json:"steps"`
	// GPUs is each rank's GPU telemetry, if the job has it (optional).
	GPUs []skew.GPU `json:"gpus,omitempty"`
	// Pipeline, for pipeline-parallel jobs, asks for a layer split.
	Pipeline *PipelineReport `json:"pipeline,omitempty"`
}

// PipelineReport is a pipeline's layer costs and its stages' measured times.
type PipelineReport struct {
	// LayerCosts is each layer's relative cost (FLOPs, profiled ms, ...).
	LayerCosts []float64 `json:"layer_costs"`
	// Bounds is the split in use (see skew.PipelinePlan); empty: equal.
	Bounds []int `json:"bounds,omitempty"`
	// StageSeconds is each stage's compute time per micro-batch.
	StageSeconds []float64 `json:"stage_seconds"`
}

// Answer is the body of both endpoints' replies.
type Answer struct {
	JobID uint64 `json:"job_id"`
	// Reports is how many reports the job has sent since augurd began
	// following it; SkippedSteps how many step times were unusable.
	Reports      int                `json:"reports"`
	SkippedSteps int                `json:"skipped_steps,omitempty"`
	Assessment   skew.Assessment    `json:"assessment"`
	Plan         *skew.Plan         `json:"plan,omitempty"`
	Pipeline     *skew.PipelinePlan `json:"pipeline,omitempty"`
	// Note explains an absent plan ("not enough steps yet", ...).
	Note string `json:"note,omitempty"`
}

// ErrorAnswer is the body of every refusal.
type ErrorAnswer struct {
	Error string `json:"error"`
}

// DecodeSteps reads and checks a steps report. Unknown fields are errors
// that name them.
func DecodeSteps(b []byte) (StepsRequest, error) {
	var r StepsRequest
	if len(b) > MaxBody {
		return r, fmt.Errorf("%w: body of %d bytes over %d", ErrMalformed, len(b), MaxBody)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return StepsRequest{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return StepsRequest{}, fmt.Errorf("%w: trailing data after the JSON object", ErrMalformed)
	}
	if err := r.validate(); err != nil {
		return StepsRequest{}, err
	}
	return r, nil
}

func (r *StepsRequest) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	switch {
	case r.WorldSize < 1 || r.WorldSize > skew.MaxRanks:
		return bad("world_size is %d; give 1 to %d", r.WorldSize, skew.MaxRanks)
	case r.GlobalBatch < r.WorldSize || r.GlobalBatch > skew.MaxGlobalBatch:
		return bad("global_batch is %d; give world_size (%d) to %d", r.GlobalBatch, r.WorldSize, skew.MaxGlobalBatch)
	case len(r.Steps) > MaxSteps:
		return bad("%d steps in one report; send at most %d", len(r.Steps), MaxSteps)
	case len(r.GPUs) > skew.MaxRanks:
		return bad("%d gpus; at most %d", len(r.GPUs), skew.MaxRanks)
	}
	for i, s := range r.Steps {
		if s.Rank < 0 || s.Rank >= r.WorldSize {
			return bad("steps[%d].rank is %d; give 0 to world_size-1 (%d)", i, s.Rank, r.WorldSize-1)
		}
		if !(s.Seconds > 0) || s.Seconds > 1e6 {
			return bad("steps[%d].seconds is %v; give the rank's compute time in seconds, above 0", i, s.Seconds)
		}
		if s.Samples < 0 || s.Samples > r.GlobalBatch {
			return bad("steps[%d].samples is %d; give 0 (equal shares) to global_batch", i, s.Samples)
		}
	}
	for i, g := range r.GPUs {
		if g.Rank < 0 || g.Rank >= r.WorldSize {
			return bad("gpus[%d].rank is %d; give 0 to world_size-1", i, g.Rank)
		}
		for _, v := range []float64{g.SMUtil, g.MemUtil, g.PowerW, g.PowerLimitW, g.SMClockMHz, g.MaxSMClockMHz, g.MemUsedMiB, g.MemTotalMiB} {
			if v < 0 || v > 1e9 || math.IsNaN(v) {
				return bad("gpus[%d] has a value out of range (%v)", i, v)
			}
		}
	}
	if p := r.Pipeline; p != nil {
		S := len(p.StageSeconds)
		if S < 1 || S > skew.MaxStages || len(p.LayerCosts) < S || len(p.LayerCosts) > skew.MaxLayers {
			return bad("pipeline: %d stages and %d layer_costs; give 1 to %d stages and stages to %d layers", S, len(p.LayerCosts), skew.MaxStages, skew.MaxLayers)
		}
		for i, c := range p.LayerCosts {
			if !(c >= 0) || c > 1e15 {
				return bad("pipeline.layer_costs[%d] is %v; give a cost of 0 or more", i, c)
			}
		}
		for k, s := range p.StageSeconds {
			if s < 0 || s > 1e6 || math.IsNaN(s) {
				return bad("pipeline.stage_seconds[%d] is %v; give seconds, 0 when unknown", k, s)
			}
		}
		if len(p.Bounds) > 0 && !skew.ValidBounds(p.Bounds, len(p.LayerCosts), S) {
			return bad("pipeline.bounds %v do not split %d layers into %d non-empty stages", p.Bounds, len(p.LayerCosts), S)
		}
	}
	return nil
}

// DecodeAnswer reads an answer (the CLI's side).
func DecodeAnswer(b []byte) (Answer, error) {
	var a Answer
	if len(b) > MaxAnswer {
		return a, fmt.Errorf("%w: answer of %d bytes", ErrMalformed, len(b))
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return Answer{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return a, nil
}
