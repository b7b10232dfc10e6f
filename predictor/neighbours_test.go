package predictor

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestNearest(t *testing.T) {
	nb := newNeighbours([]NeighbourCurve{
		{Name: "resnet50", Batch: []float64{8, 16}, MiB: []float64{3000, 4000}},
		{Name: "vit_large_patch16_384", Batch: []float64{8, 16, 32}, MiB: []float64{9000, 15000, 27000}},
		{Name: "vit_base_patch16_224", Batch: []float64{8}, MiB: []float64{3600}},
		{Name: "deit_small_patch16_224", Batch: []float64{8}, MiB: []float64{2400}},
		{Name: "bad", Batch: []float64{16, 8}, MiB: []float64{1, 2}}, // not ascending: left out
	})
	cases := map[string]struct {
		model, skip string
		want        string
	}{
		"relative in another family": {model: "deit3_large_patch16_384", want: "vit_large_patch16_384"},
		"same family skipped":        {model: "vit_base_patch16_224", skip: "vit", want: "deit_small_patch16_224"},
		"close name":                 {model: "resnet50d", want: "resnet50"},
		"nothing in common":          {model: "qqqq"},
		"malformed curve never used": {model: "bad"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, sim, ok := nb.nearest(tc.model, tc.skip)
			if ok != (tc.want != "") {
				t.Fatalf("ok = %v, curve %+v", ok, c)
			}
			if ok && (c.Name != tc.want || !(sim > 0 && sim <= 1)) {
				t.Errorf("nearest = %q (sim %.2f), want %q", c.Name, sim, tc.want)
			}
		})
	}
}

func TestCurveAt(t *testing.T) {
	c := NeighbourCurve{Batch: []float64{8, 16, 32}, MiB: []float64{2000, 3000, 5000}}
	one := NeighbourCurve{Batch: []float64{16}, MiB: []float64{4000}}
	cases := map[string]struct {
		c     NeighbourCurve
		batch float64
		want  float64
	}{
		"measured":             {c: c, batch: 16, want: 3000},
		"between":              {c: c, batch: 24, want: 4000},
		"above":                {c: c, batch: 64, want: 9000},
		"below, floored":       {c: c, batch: 1, want: 1125},
		"far below: half":      {c: NeighbourCurve{Batch: []float64{8, 16}, MiB: []float64{1000, 3000}}, batch: 2, want: 500},
		"no batch: smallest":   {c: c, batch: 0, want: 2000},
		"one point: sqrt rule": {c: one, batch: 64, want: 8000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.c.at(tc.batch); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("at(%g) = %g, want %g", tc.batch, got, tc.want)
			}
		})
	}
}

func TestParseName(t *testing.T) {
	nan := math.NaN()
	cases := map[string]nameFeatures{
		"vit_base_patch16_384":               {size: 9, num1: nan, num2: nan, patch: 16, image: 384, width: nan},
		"mobilenetv2_100":                    {size: nan, num1: 2, num2: nan, patch: nan, image: nan, width: 1},
		"mobilenetv3_small_050":              {size: 7, num1: 3, num2: nan, patch: nan, image: nan, width: 0.5},
		"cait_xxs24_384":                     {size: 5, num1: 24, num2: nan, patch: nan, image: 384, width: nan},
		"efficientnet_b3":                    {size: nan, num1: 3, num2: nan, patch: nan, image: nan, width: nan},
		"swinv2_large_window12to24_192to384": {size: 10, num1: 2, num2: 24, patch: nan, image: 384, width: nan},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			got := parseName(name)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(nameFeatures{}), cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
