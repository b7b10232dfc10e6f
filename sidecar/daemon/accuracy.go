package daemon

import (
	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/sidecar/store"
)

// observeAccuracy records how a finished job's use compared with its
// prediction. Memory is compared for every job with a peak; runtime only
// for jobs that completed (a failed or timed-out run is no runtime).
func observeAccuracy(m *metrics.Metrics, a store.Accuracy) {
	src := a.PredSource
	if src == "" {
		src = "unknown"
	}
	if a.PredMemMiB > 0 && a.PeakGPUMemMiB > 0 {
		m.PredictionError.WithLabelValues("gpu_memory", src).Observe(a.PeakGPUMemMiB / a.PredMemMiB)
		if a.PredMemHiMiB > 0 && a.PeakGPUMemMiB > a.PredMemHiMiB {
			m.PredictionOver.WithLabelValues("gpu_memory", src).Inc()
		}
	}
	if a.ExitState == "COMPLETED" && a.PredRuntimeSec > 0 && a.RuntimeSec > 0 {
		m.PredictionError.WithLabelValues("runtime", src).Observe(a.RuntimeSec / a.PredRuntimeSec)
		if a.PredRuntimeHiSec > 0 && a.RuntimeSec > a.PredRuntimeHiSec {
			m.PredictionOver.WithLabelValues("runtime", src).Inc()
		}
	}
}
