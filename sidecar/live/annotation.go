package live

import (
	"strconv"
	"strings"

	"github.com/augur-hpc/augur/predictor"
)

// Annotation is what augurd's submission decision wrote into a job's
// AdminComment ("augur:tok=... pred_gpu_mem=30G(p95:31G) pred_time=00:25:00 ...").
type Annotation struct {
	Token   string
	MemMiB  predictor.Quantiles // peak GPU memory per GPU
	Runtime predictor.Quantiles // seconds
	GPUType string              // the type chosen at submission, if any
}

// ParseAnnotation reads the augur fields of an AdminComment; fields that are
// absent or do not parse stay zero (unknown). AdminComment can be set by
// admins, so anything may be there.
func ParseAnnotation(s string) Annotation {
	var a Annotation
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "augur:tok":
			a.Token = v
		case "pred_gpu_mem":
			a.MemMiB = parseQuant(v, parseMiB)
		case "pred_time":
			a.Runtime = parseQuant(v, parseSeconds)
		case "gpu_type":
			a.GPUType = v
		}
	}
	return a
}

// parseQuant reads "X", "X(p95:Y)", "min:X" (a floor: P50 only) or "unknown".
func parseQuant(v string, f func(string) (float64, bool)) predictor.Quantiles {
	if floor, ok := strings.CutPrefix(v, "min:"); ok {
		if x, ok := f(floor); ok {
			return predictor.Quantiles{P50: x}
		}
		return predictor.Quantiles{}
	}
	med, rest, hasHi := strings.Cut(v, "(p95:")
	p50, ok := f(med)
	if !ok {
		return predictor.Quantiles{}
	}
	if !hasHi {
		return predictor.Quantiles{P50: p50, Hi: p50}
	}
	hi, ok := f(strings.TrimSuffix(rest, ")"))
	if !ok || !strings.HasSuffix(rest, ")") || hi < p50 {
		return predictor.Quantiles{}
	}
	return predictor.Quantiles{P50: p50, Hi: hi}
}

// parseMiB reads core.FormatMiB's output: 512M, 15.2G, 1.5T.
func parseMiB(s string) (float64, bool) {
	if len(s) < 2 {
		return 0, false
	}
	mult := 0.0
	switch s[len(s)-1] {
	case 'M':
		mult = 1
	case 'G':
		mult = 1 << 10
	case 'T':
		mult = 1 << 20
	default:
		return 0, false
	}
	x, err := strconv.ParseFloat(s[:len(s)-1], 64)
	if err != nil || !(x > 0) || x > 1<<30 {
		return 0, false
	}
	return x * mult, true
}

// parseSeconds reads core.FormatSeconds's output: [D-]HH:MM:SS.
func parseSeconds(s string) (float64, bool) {
	days := 0
	if d, rest, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 100000 {
			return 0, false
		}
		days, s = n, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return 0, false
	}
	var hms [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 1000000 {
			return 0, false
		}
		hms[i] = n
	}
	sec := float64(days*86400 + hms[0]*3600 + hms[1]*60 + hms[2])
	if sec <= 0 {
		return 0, false
	}
	return sec, true
}
