package forest

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// data builds n rows of p uniform features in [0, 10) and targets from fn
// plus Gaussian noise of the given scale.
func data(n, p int, noise float64, seed uint64, fn func(x []float64) float64) ([][]float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	rows := make([][]float64, n)
	y := make([]float64, n)
	for i := range rows {
		rows[i] = make([]float64, p)
		for j := range rows[i] {
			rows[i][j] = rng.Float64() * 10
		}
		y[i] = fn(rows[i]) + noise*rng.NormFloat64()
	}
	return rows, y
}

func step(x []float64) float64 {
	if x[0] > 5 {
		return 100
	}
	return 10
}

func TestQuantiles(t *testing.T) {
	cases := map[string]struct {
		fn     func([]float64) float64
		noise  float64
		x      []float64
		qs     []float64
		want   []float64
		margin float64
	}{
		"step, low side":  {fn: step, x: []float64{2, 5, 5}, qs: []float64{0.5}, want: []float64{10}, margin: 0.5},
		"step, high side": {fn: step, x: []float64{8, 5, 5}, qs: []float64{0.5}, want: []float64{100}, margin: 0.5},
		"linear in x1 with noise: median and p95": {
			fn: func(x []float64) float64 { return 3 * x[1] }, noise: 1, x: []float64{5, 5, 5},
			qs: []float64{0.5, 0.95}, want: []float64{15, 15 + 1.645}, margin: 3,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rows, y := data(1500, 3, tc.noise, 1, tc.fn)
			f, err := Fit(rows, y, Config{Trees: 30, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			got := f.Quantiles(tc.x, tc.qs...)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, tc.margin)); diff != "" {
				t.Errorf("quantiles (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCoverage: on fresh rows from the same distribution, the p95 covers
// about 95% of targets.
func TestCoverage(t *testing.T) {
	fn := func(x []float64) float64 { return 2*x[0] + x[2] }
	rows, y := data(2000, 4, 3, 2, fn)
	f, err := Fit(rows, y, Config{Trees: 30, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	test, ty := data(500, 4, 3, 3, fn)
	under50, under95 := 0, 0
	for i, x := range test {
		q := f.Quantiles(x, 0.5, 0.95)
		if ty[i] > q[0] {
			under50++
		}
		if ty[i] > q[1] {
			under95++
		}
	}
	if rate := float64(under50) / 500; rate < 0.4 || rate > 0.6 {
		t.Errorf("p50 under %.1f%% of fresh rows, want about 50%%", 100*rate)
	}
	if rate := float64(under95) / 500; rate < 0.01 || rate > 0.12 {
		t.Errorf("p95 under %.1f%% of fresh rows, want about 5%%", 100*rate)
	}
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	rows, y := data(500, 3, 1, 4, step)
	a, _ := Fit(rows, y, Config{Trees: 8, Seed: 9, Workers: 1})
	b, _ := Fit(rows, y, Config{Trees: 8, Seed: 9, Workers: 4})
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("forest depends on worker count:\n%s", diff)
	}
}

func TestFitErrors(t *testing.T) {
	cases := map[string]struct {
		rows [][]float64
		y    []float64
		want error
	}{
		"no rows":         {want: ErrNoData},
		"length mismatch": {rows: [][]float64{{1}}, y: []float64{1, 2}, want: ErrNoData},
		"no features":     {rows: [][]float64{{}}, y: []float64{1}, want: ErrNoData},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Fit(tc.rows, tc.y, Config{}); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := Fit([][]float64{{1}}, []float64{math.NaN()}, Config{}); err == nil {
		t.Error("NaN target accepted")
	}
}

func TestNaNFeature(t *testing.T) {
	rows, y := data(300, 2, 0, 5, step)
	rows[0][0] = math.NaN()
	f, err := Fit(rows, y, Config{Trees: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if q := f.Quantiles([]float64{math.NaN(), 1}, 0.5)[0]; math.IsNaN(q) {
		t.Error("NaN feature gave no prediction")
	}
	if q := f.Quantiles([]float64{1}, 0.5)[0]; !math.IsNaN(q) {
		t.Errorf("wrong-length row predicted %v", q)
	}
}

func TestRoundTrip(t *testing.T) {
	rows, y := data(400, 3, 1, 6, step)
	f, _ := Fit(rows, y, Config{Trees: 6, Seed: 1})
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g Forest
	if err := g.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, &g, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for cut := 0; cut < len(b); cut += 1 + len(b)/500 {
		if err := new(Forest).UnmarshalBinary(b[:cut]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated at %d: err = %v", cut, err)
		}
	}
}

// FuzzUnmarshal: no input panics or loops; what decodes predicts.
func FuzzUnmarshal(f *testing.F) {
	rows, y := data(60, 2, 1, 7, step)
	fo, _ := Fit(rows, y, Config{Trees: 2, Seed: 1, MinLeaf: 10})
	b, _ := fo.MarshalBinary()
	f.Add(b)
	f.Add([]byte{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var g Forest
		if err := g.UnmarshalBinary(data); err != nil {
			return
		}
		g.Quantiles(make([]float64, g.NFeatures), 0.5, 0.95)
		g.Mean(make([]float64, g.NFeatures))
	})
}

func BenchmarkFit100k(b *testing.B) {
	rows, y := data(100000, 12, 1, 8, func(x []float64) float64 { return x[0]*x[1] + x[2] })
	for b.Loop() {
		if _, err := Fit(rows, y, Config{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQuantiles(b *testing.B) {
	rows, y := data(20000, 12, 1, 8, func(x []float64) float64 { return x[0]*x[1] + x[2] })
	f, _ := Fit(rows, y, Config{Seed: 1})
	x := rows[0]
	for b.Loop() {
		f.Quantiles(x, 0.5, 0.95)
	}
}
