package skew

import (
	"errors"
	"os"
	"testing"
)

func loadGavel(t testing.TB) Throughputs {
	t.Helper()
	path := GavelPath("../..")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("Gavel throughputs not found at %s (the shared data folder beside the checkout); skipping the evaluation", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	th, err := ParseGavel(b)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// TestEvaluate runs the standard scenarios on Gavel's measured throughputs
// and logs the gains (go test -run Evaluate -v). Mixed GPUs must gain;
// the homogeneous data-parallel control must not lose more than noise.
func TestEvaluate(t *testing.T) {
	ev, err := Evaluate(loadGavel(t), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ev.DataParallel {
		t.Logf("DP %-40s epoch equal %8.0fs plan %8.0fs ideal %8.0fs gain %+6.1f%% (steady %+6.1f%%) shares %v slow %v changes %d",
			r.Name, r.EqualEpochSeconds, r.PlanEpochSeconds, r.IdealEpochSeconds, 100*r.Gain, 100*r.SteadyGain, r.FinalShares, r.SlowRanks, r.PlanChanges)
		if r.Gain < -0.01 {
			t.Errorf("%s: the plan lost %.1f%%", r.Name, -100*r.Gain)
		}
		if len(r.SlowRanks) == 0 && r.SteadyGain > 0.2 && r.Steps >= 200 {
			t.Errorf("%s: gained %.0f%% but named no slow rank", r.Name, 100*r.Gain)
		}
	}
	for _, r := range ev.Pipeline {
		t.Logf("PP %-48s max stage equal %.4f plan %.4f gain %+6.1f%% bounds %v -> %v",
			r.Name, r.EqualMaxSeconds, r.PlanMaxSeconds, 100*r.Gain, r.EqualBounds, r.PlanBounds)
		if r.Gain < 0 {
			t.Errorf("%s: the split lost %.1f%%", r.Name, -100*r.Gain)
		}
	}
}

func BenchmarkEvaluate(b *testing.B) {
	th := loadGavel(b)
	for b.Loop() {
		if _, err := Evaluate(th, DefaultConfig()); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzParseGavel(f *testing.F) {
	f.Add([]byte(`{"v100": {"('ResNet-50 (batch size 32)', 1)": {"null": 7.7, "x": [1, 2]}, "('A3C', 1)": {"null": 1}}}`))
	f.Add([]byte(`{"k80": {"('LM (batch size 5)', 2)": {"null": 1}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		th, err := ParseGavel(b)
		if err != nil {
			return
		}
		for g, ms := range th {
			for m, ps := range ms {
				for _, p := range ps {
					if !(p.StepsPerSec > 0) || p.Batch < 0 {
						t.Fatalf("%s/%s: bad point %+v", g, m, p)
					}
				}
				if sm, err := th.Model(g, m); err == nil && (sm.PerSample < 0 || sm.Fixed < 0) {
					t.Fatalf("%s/%s: negative model %+v", g, m, sm)
				}
			}
		}
	})
}
