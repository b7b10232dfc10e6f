// Package progenv names the environment variables training programs read
// their settings from (MODEL_NAME, BATCH_SIZE, PRECISION, ...). Augur's
// script reader reads a job's features from them, and the job_submit shim
// forwards them from a submission's environment even where the script
// never names them (a program's os.environ["BATCH_SIZE"]). It has no
// dependencies, so that the plugin can import it without the reader.
package progenv

import "strings"

// The variables, by the feature each says, in the order the reader tries
// them.
var (
	Model       = []string{"MODEL_NAME", "MODEL", "MODEL_NAME_OR_PATH", "MODEL_PATH", "BASE_MODEL", "HF_MODEL"}
	Batch       = []string{"MICRO_BATCH_SIZE", "BATCH_SIZE", "PER_DEVICE_BATCH_SIZE", "LOCAL_BATCH_SIZE", "BATCH_SIZE_PER_GPU", "PER_GPU_BATCH_SIZE", "BSIZE_PER_GPU", "MBS", "BS"}
	GlobalBatch = []string{"GLOBAL_BATCH_SIZE", "GBS"}
	Precision   = []string{"PRECISION", "MIXED_PRECISION", "DTYPE", "PREC"}
	// AMP are TensorFlow's switches for automatic mixed precision.
	AMP = []string{"TF_ENABLE_AUTO_MIXED_PRECISION", "TF_AUTO_MIXED_PRECISION"}
)

var names = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range [][]string{Model, Batch, GlobalBatch, Precision, AMP} {
		for _, n := range l {
			m[n] = true
		}
	}
	return m
}()

// Setting reports whether a program may read a setting from the variable:
// one of the names above, or one ending in _BATCH_SIZE (a program's own:
// TRAIN_MICRO_BATCH_SIZE).
func Setting(name string) bool {
	return names[name] || strings.HasSuffix(name, "_BATCH_SIZE")
}
