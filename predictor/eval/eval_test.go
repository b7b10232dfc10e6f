package eval

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/augur-hpc/augur/internal/shareddata"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/predictor/forest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// sharedPeaks reads the real measurements of ../shared/data (skipping
// without them) and drops their out-of-memory artefacts.
func sharedPeaks(t *testing.T) (kept, dropped []Row) {
	t.Helper()
	fh, err := os.Open(shareddata.Path(t, "memory", "timm-peak-memory.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := ReadTimmMemory(fh)
	if err != nil {
		t.Fatal(err)
	}
	return DropArtefacts(rows, 40960)
}

func TestTimmPeakMemory(t *testing.T) {
	kept, dropped := sharedPeaks(t)
	// Fewer trees than augur eval's 100 keep the test fast; augur eval
	// --json prints the full figures.
	opt := Options{CardMiB: 40960, Train: predictor.TrainConfig{Forest: forest.Config{Trees: 15, Seed: 1}}}
	if os.Getenv("CATALOG") != "" {
		cf, _ := os.Open(shareddata.Path(t, "memory", "timm-train-throughput-rtx3090.csv"))
		var err error
		if opt.Catalog, err = ReadTimmCatalog(cf); err != nil {
			t.Fatal(err)
		}
		t.Logf("catalog of %d models", len(opt.Catalog))
	}
	rep, err := Run(kept, len(dropped), opt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	t.Logf("%s", b)
	// Loose floors that catch a broken predictor, not the targets (see the
	// package README for the measured figures).
	checks := []struct {
		name      string
		got, most float64
	}{
		{"warm median rel error", rep.Warm.MedianRelError, 0.03},
		{"warm under-rate", rep.Warm.UnderRate, 0.04},
		{"warm over-reservation", rep.Warm.OverReservation, 0.3},
		{"cold median rel error", rep.Cold.MedianRelError, 0.45},
		{"cold under-rate", rep.Cold.UnderRate, 0.15},
		// Day one, the shipped prior alone on the families its constants
		// were not calibrated on: the bar (median 25%, upper bound
		// exceeded by at most 10% of jobs).
		{"day one median rel error", rep.DayOne.MedianRelError, 0.25},
		{"day one under-rate", rep.DayOne.UnderRate, 0.10},
	}
	// One earlier run, day one: the prior's curve must beat taking the
	// earlier peak as it stands, in both error and misses.
	if rep.DayOneOneRun.Rows == 0 || rep.DayOneOneRun.Rows != rep.DayOneOneRunFlat.Rows ||
		rep.DayOneOneRun.MedianRelError >= rep.DayOneOneRunFlat.MedianRelError/2 ||
		rep.DayOneOneRun.UnderRate >= rep.DayOneOneRunFlat.UnderRate {
		t.Errorf("one run along the prior's curve %+v, flat %+v", rep.DayOneOneRun, rep.DayOneOneRunFlat)
	}
	if rep.DayOne.Rows < 500 {
		t.Errorf("day one predicted %d rows from the prior, want the ~1000 of the test families it knows", rep.DayOne.Rows)
	}
	for _, c := range checks {
		if c.got > c.most {
			t.Errorf("%s = %.4f, want at most %.2f", c.name, c.got, c.most)
		}
	}
	if rep.Warm.MedianRelError >= rep.Baselines.GlobalRegression.Warm.MedianRelError {
		t.Error("warm predictions no better than one global regression")
	}
}

func TestDropArtefacts(t *testing.T) {
	rows := func(model string, peaks ...float64) []Row {
		var out []Row
		for i, p := range peaks {
			out = append(out, Row{Model: model, BatchSize: float64(int(8) << i), PeakMiB: p})
		}
		return out
	}
	cases := map[string]struct {
		in       []Row
		wantKept []Row
	}{
		"clean":            {in: rows("a", 1000, 2000, 4000), wantKept: rows("a", 1000, 2000, 4000)},
		"hits the ceiling": {in: rows("a", 1000, 20000, 40355, 40107), wantKept: rows("a", 1000, 20000)},
		"drops after OOM":  {in: rows("a", 6219, 9421, 15833, 28523, 3125), wantKept: rows("a", 6219, 9421, 15833, 28523)},
		"stuck reading":    {in: rows("a", 21949, 21949, 21949), wantKept: rows("a", 21949)},
		"bogus first row":  {in: rows("a", 5361, 4719, 7475, 12877), wantKept: rows("a", 5361, 4719, 7475, 12877)[1:]},
		// A reading repeated at larger batch sizes is the failed runs', not
		// a curve: the last repeat does not start a run with the next row.
		"stale reading starts no run": {in: rows("a", 2515, 2515, 2515, 2515, 29653), wantKept: rows("a", 2515)},
		"stood still within 0.5%":     {in: rows("a", 3000, 4000, 4010, 8000, 16000), wantKept: rows("a", 3000, 4000)},
		"all at the ceiling":          {in: rows("a", 40000, 40300)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kept, dropped := DropArtefacts(tc.in, 40960)
			if diff := cmp.Diff(tc.wantKept, kept, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if len(kept)+len(dropped) != len(tc.in) {
				t.Errorf("%d kept + %d dropped of %d", len(kept), len(dropped), len(tc.in))
			}
		})
	}
}

func TestReadTimmMemory(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    []Row
		wantErr bool
	}{
		"reordered columns": {in: "peak_mib,model,batch_size\n3000,resnet50,16\n", want: []Row{{"resnet50", 16, 3000}}},
		"missing column":    {in: "model,batch_size\nresnet50,16\n", wantErr: true},
		"bad number":        {in: "model,batch_size,peak_mib\nresnet50,x,1\n", wantErr: true},
		"negative peak":     {in: "model,batch_size,peak_mib\nresnet50,8,-1\n", wantErr: true},
		"empty":             {in: "", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReadTimmMemory(strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzReadTimmMemory: any input reads or fails cleanly, and what reads
// goes through artefact detection.
func FuzzReadTimmMemory(f *testing.F) {
	f.Add("model,batch_size,peak_mib\nresnet50,8,2875\nresnet50,16,3733\n")
	f.Add("model,batch_size,peak_mib\n\"a,b\",1e308,NaN\n")
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := ReadTimmMemory(strings.NewReader(s))
		if err != nil {
			return
		}
		kept, dropped := DropArtefacts(rows, 40960)
		if len(kept)+len(dropped) != len(rows) {
			t.Fatalf("%d kept + %d dropped of %d", len(kept), len(dropped), len(rows))
		}
	})
}

// FuzzReadTimmCatalog: any input reads or fails cleanly.
func FuzzReadTimmCatalog(f *testing.F) {
	f.Add("model,param_count,train_img_size\nresnet50.a1_in1k,25.56,224\n")
	f.Fuzz(func(t *testing.T, s string) {
		ReadTimmCatalog(strings.NewReader(s)) //nolint:errcheck // only must not panic
	})
}

// TestPriorCalibration: the constants the binaries ship are what
// CalibratePrior gives on the calibration half of the real measurements,
// so that anyone can reproduce them (augur eval --calibrate-prior).
func TestPriorCalibration(t *testing.T) {
	kept, _ := sharedPeaks(t)
	got, n, err := CalibratePrior(kept, predictor.ShippedPrior())
	if err != nil {
		t.Fatal(err)
	}
	if got != predictor.ShippedPriorConstants {
		t.Errorf("calibration on %d rows gives %+v; the binaries ship %+v", n, got, predictor.ShippedPriorConstants)
	}
}
