package live

import (
	"testing"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/sidecar/core"
	"github.com/google/go-cmp/cmp"
)

func TestParseAnnotation(t *testing.T) {
	cases := map[string]struct {
		in   string
		want Annotation
	}{
		"full": {"augur:tok=ab12 pred_gpu_mem=30G(p95:31.5G) pred_time=00:25:00(p95:1-02:00:00) src=history/history runs=2 gpu_type=a100",
			Annotation{Token: "ab12", MemMiB: predictor.Quantiles{P50: 30 << 10, Hi: 31.5 * 1024}, Runtime: predictor.Quantiles{P50: 1500, Hi: 93600}, GPUType: "a100"}},
		"single values":  {"augur:tok=x pred_gpu_mem=512M pred_time=00:00:30", Annotation{Token: "x", MemMiB: predictor.Quantiles{P50: 512, Hi: 512}, Runtime: predictor.Quantiles{P50: 30, Hi: 30}}},
		"floor only":     {"pred_gpu_mem=min:12G pred_time=unknown", Annotation{MemMiB: predictor.Quantiles{P50: 12 << 10}}},
		"garbage":        {"pred_gpu_mem=12Q pred_time=1:2 pred_gpu_mem=(p95:", Annotation{}},
		"hi below p50":   {"pred_time=01:00:00(p95:00:10:00)", Annotation{}},
		"not augur's":    {"site note: requeue me", Annotation{}},
		"zero time":      {"pred_time=00:00:00", Annotation{}},
		"negative piece": {"pred_time=00:-1:00", Annotation{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseAnnotation(tc.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestAnnotationRoundTrip: what core writes, live reads back.
func TestAnnotationRoundTrip(t *testing.T) {
	for _, mib := range []float64{100, 1024, 15565, 81920, 2 << 20} {
		got, ok := parseMiB(core.FormatMiB(mib))
		if !ok || got < mib*0.99 || got > mib*1.01 {
			t.Errorf("MiB %v -> %q -> %v", mib, core.FormatMiB(mib), got)
		}
	}
	for _, sec := range []float64{1, 59, 3600, 90061, 8 * 86400} {
		if got, ok := parseSeconds(core.FormatSeconds(sec)); !ok || got != sec {
			t.Errorf("seconds %v -> %q -> %v", sec, core.FormatSeconds(sec), got)
		}
	}
}

func FuzzParseAnnotation(f *testing.F) {
	f.Add("augur:tok=ab12 pred_gpu_mem=30G(p95:31.5G) pred_time=00:25:00(p95:1-02:00:00) gpu_type=a100")
	f.Add("pred_gpu_mem=min:12G pred_time=unknown")
	f.Fuzz(func(t *testing.T, s string) {
		a := ParseAnnotation(s)
		for _, q := range []predictor.Quantiles{a.MemMiB, a.Runtime} {
			if q.P50 < 0 || q.Hi < 0 || (q.Hi > 0 && q.Hi < q.P50) {
				t.Fatalf("bad quantiles %+v from %q", q, s)
			}
		}
	})
}
