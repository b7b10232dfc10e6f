package skew

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
)

// Throughputs are measured training speeds per GPU type and model, as in
// Gavel's simulation_throughputs.json (Narayanan et al., OSDI 2020): for
// each GPU type and each (model, batch size) run alone on one GPU, the
// steps per second.
type Throughputs map[string]map[string][]Point

// Point is one measured batch size of a model on a GPU type.
type Point struct {
	Batch       int     // per-GPU batch size (0 when the model names none)
	StepsPerSec float64 // training steps per second, alone on one GPU
}

var gavelKey = regexp.MustCompile(`^\('([^']*?)(?: \(batch size (\d+)\))?', (\d+)\)$`)

// ParseGavel reads simulation_throughputs.json. Only single-GPU entries
// (scale factor 1) run alone (the "null" co-location) are kept; other keys
// are ignored.
func ParseGavel(b []byte) (Throughputs, error) {
	var raw map[string]map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("gavel throughputs: %w", err)
	}
	out := Throughputs{}
	for gpu, models := range raw {
		for key, v := range models {
			m := gavelKey.FindStringSubmatch(key)
			if m == nil || m[3] != "1" {
				continue
			}
			var sps float64
			if err := json.Unmarshal(v["null"], &sps); err != nil || !(sps > 0) || math.IsInf(sps, 0) {
				continue
			}
			batch := 0
			if m[2] != "" {
				n, err := strconv.Atoi(m[2])
				if err != nil || n <= 0 || n > MaxGlobalBatch {
					continue
				}
				batch = n
			}
			if out[gpu] == nil {
				out[gpu] = map[string][]Point{}
			}
			out[gpu][m[1]] = append(out[gpu][m[1]], Point{Batch: batch, StepsPerSec: sps})
		}
	}
	for _, models := range out {
		for name := range models {
			ps := models[name]
			sort.Slice(ps, func(i, j int) bool { return ps[i].Batch < ps[j].Batch })
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("gavel throughputs: no single-GPU entries")
	}
	return out, nil
}

// StepModel is the time of one step on one GPU as a function of its batch:
// Fixed + PerSample·batch seconds (kernel launches, optimizer step and
// other per-step work, plus the work that grows with the batch).
type StepModel struct {
	Fixed, PerSample float64
}

// Seconds is the step time for batch samples.
func (m StepModel) Seconds(batch int) float64 { return m.Fixed + m.PerSample*float64(batch) }

// Model fits a StepModel to the measured batch sizes of model on gpu by
// least squares, keeping Fixed ≥ 0.
func (t Throughputs) Model(gpu, model string) (StepModel, error) {
	ps := t[gpu][model]
	var xs, ys []float64
	for _, p := range ps {
		if p.Batch > 0 {
			xs = append(xs, float64(p.Batch))
			ys = append(ys, 1/p.StepsPerSec)
		}
	}
	switch len(xs) {
	case 0:
		return StepModel{}, fmt.Errorf("gavel throughputs: no batch sizes for %q on %q", model, gpu)
	case 1:
		return StepModel{PerSample: ys[0] / xs[0]}, nil
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	n := float64(len(xs))
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	slope := sxy / sxx
	fixed := my - slope*mx
	if fixed < 0 || slope <= 0 {
		// Through the origin instead.
		var xy, xx float64
		for i := range xs {
			xy += xs[i] * ys[i]
			xx += xs[i] * xs[i]
		}
		return StepModel{PerSample: xy / xx}, nil
	}
	return StepModel{Fixed: fixed, PerSample: slope}, nil
}
