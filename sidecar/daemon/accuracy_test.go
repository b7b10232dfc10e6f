package daemon

import (
	"testing"

	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestObserveAccuracy(t *testing.T) {
	m := metrics.New(func() float64 { return 0 })
	observeAccuracy(m, store.Accuracy{PredSource: "history", PredMemMiB: 10000, PredMemHiMiB: 11000,
		PeakGPUMemMiB: 12000, PredRuntimeSec: 100, PredRuntimeHiSec: 200, RuntimeSec: 150, ExitState: "COMPLETED"})
	observeAccuracy(m, store.Accuracy{PredSource: "history", PredMemMiB: 10000, PredMemHiMiB: 11000,
		PeakGPUMemMiB: 9000, PredRuntimeSec: 100, RuntimeSec: 5, ExitState: "FAILED"})
	if got := testutil.ToFloat64(m.PredictionOver.WithLabelValues("gpu_memory", "history")); got != 1 {
		t.Errorf("memory over upper: %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.PredictionOver.WithLabelValues("runtime", "history")); got != 0 {
		t.Errorf("runtime over upper: %v, want 0", got)
	}
	// Two memory observations, one runtime (the failed run's time is no runtime).
	if n := testutil.CollectAndCount(m.PredictionError); n != 2 {
		t.Errorf("%d series, want 2", n)
	}
}
