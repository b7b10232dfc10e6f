package progenv

import "testing"

func TestSetting(t *testing.T) {
	for name, want := range map[string]bool{
		"MODEL_NAME": true, "BATCH_SIZE": true, "TRAIN_MICRO_BATCH_SIZE": true, "DTYPE": true, "GBS": true,
		"TF_ENABLE_AUTO_MIXED_PRECISION": true,
		"HOME":                           false, "CUDA_VISIBLE_DEVICES": false, "BATCH": false, "model": false, "": false,
	} {
		if got := Setting(name); got != want {
			t.Errorf("Setting(%q) = %v, want %v", name, got, want)
		}
	}
}
