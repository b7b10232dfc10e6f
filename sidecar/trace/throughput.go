package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Throughputs holds Gavel's measured training throughput (steps/s) of each
// job type alone on each GPU type: Throughputs[gpuType][Key{kind, gpus}].
type Throughputs map[string]map[Key]float64

// Key is a job type at a scale.
type Key struct {
	Kind string
	GPUs int
}

// ParseThroughputs reads Gavel's simulation_throughputs.json, keeping the
// throughput of each job type running alone (the "null" entry). Keys look
// like "('ResNet-18 (batch size 16)', 1)".
func ParseThroughputs(r io.Reader) (Throughputs, error) {
	var raw map[string]map[string]map[string]json.RawMessage
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: throughputs: %v", ErrFormat, err)
	}
	out := Throughputs{}
	for gpu, jobs := range raw {
		m := map[Key]float64{}
		for k, v := range jobs {
			key, err := parseKey(k)
			if err != nil {
				return nil, err
			}
			alone, ok := v["null"]
			if !ok {
				continue
			}
			var x float64
			if err := json.Unmarshal(alone, &x); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%w: throughputs: %s %s: %q is not a number", ErrFormat, gpu, k, alone)
			}
			m[key] = max(x, 0)
		}
		out[gpu] = m
	}
	return out, nil
}

// parseKey reads "('Kind', n)".
func parseKey(s string) (Key, error) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "('") || !strings.HasSuffix(t, ")") {
		return Key{}, fmt.Errorf("%w: throughputs: key %q is not ('job type', gpus)", ErrFormat, s)
	}
	t = strings.TrimSuffix(t[2:], ")")
	i := strings.LastIndex(t, "',")
	if i < 0 {
		return Key{}, fmt.Errorf("%w: throughputs: key %q is not ('job type', gpus)", ErrFormat, s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(t[i+2:]))
	if err != nil || n < 1 || n > maxGPUs {
		return Key{}, fmt.Errorf("%w: throughputs: key %q has no GPU count", ErrFormat, s)
	}
	return Key{Kind: t[:i], GPUs: n}, nil
}

// Rate returns the throughput (steps/s) of kind on gpus GPUs of gpuType.
// Scales Gavel did not measure are extrapolated linearly from the largest
// measured scale below; 0 means the job cannot run there (Gavel records
// out-of-memory runs as 0), and so does an unknown kind or GPU type.
func (t Throughputs) Rate(gpuType, kind string, gpus int) float64 {
	m := t[gpuType]
	if m == nil {
		return 0
	}
	if v, ok := m[Key{kind, gpus}]; ok {
		return v
	}
	best := 0
	for k := range m {
		if k.Kind == kind && k.GPUs < gpus && k.GPUs > best {
			best = k.GPUs
		}
	}
	if best == 0 {
		return 0
	}
	return m[Key{kind, best}] * float64(gpus) / float64(best)
}

// GPUTypes lists the GPU types, consolidated ones only (Gavel also records
// "*_unconsolidated" placements).
func (t Throughputs) GPUTypes() []string {
	var out []string
	for g := range t {
		if !strings.HasSuffix(g, "_unconsolidated") {
			out = append(out, g)
		}
	}
	return out
}
