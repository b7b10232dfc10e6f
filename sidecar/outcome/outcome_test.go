package outcome

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func sample() *Report {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	return &Report{V: Version, Node: "gpu-node-01", JobID: 4242, UserID: 1000, Start: t0, End: t0.Add(time.Hour),
		ExitState: "COMPLETED", Samples: 3600, Finalized: "epilog",
		GPUs: []GPU{{Index: 0, UUID: "GPU-0", Name: "NVIDIA A100-SXM4-40GB", MemTotalMiB: 40960, PeakMiB: 30000,
			MeanSMUtil: 80, P95SMUtil: 99, MeanMemUtil: 40, EnergyJ: 1.2e6, Attribution: "process"}}}
}

func TestRoundTrip(t *testing.T) {
	b, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sample(), got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	WriteFrame(&buf, b)
	body, err := ReadFrame(&buf)
	if err != nil || !bytes.Equal(body, b) {
		t.Fatalf("frame round trip: %v", err)
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]func(*Report){
		"no job":         func(r *Report) { r.JobID = 0 },
		"end before":     func(r *Report) { r.End = r.Start.Add(-time.Second) },
		"node injection": func(r *Report) { r.Node = "node; rm -rf /" },
		"NaN peak":       func(r *Report) { r.GPUs[0].PeakMiB = nan() },
		"negative":       func(r *Report) { r.GPUs[0].EnergyJ = -1 },
		"attribution":    func(r *Report) { r.GPUs[0].Attribution = "guess" },
		"version":        func(r *Report) { r.V = 9 },
		"exit state":     func(r *Report) { r.ExitState = "" },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			r := sample()
			mutate(r)
			if err := r.Validate(); !errors.Is(err, ErrMalformed) {
				t.Errorf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

func nan() float64 { z := 0.0; return z / z }

func TestAggregates(t *testing.T) {
	r := sample()
	r.GPUs = append(r.GPUs, GPU{Index: 1, PeakMiB: 35000, MeanSMUtil: 40, EnergyJ: 1e6, Attribution: "device"})
	if r.PeakMiB() != 35000 || r.MeanSMUtil() != 60 || r.EnergyJ() != 2.2e6 {
		t.Errorf("peak %v mean %v energy %v", r.PeakMiB(), r.MeanSMUtil(), r.EnergyJ())
	}
}

// FuzzDecode: any payload decodes to a valid report or an error.
func FuzzDecode(f *testing.F) {
	b, _ := Encode(sample())
	f.Add(b)
	f.Add([]byte(`{"v":1,"job_id":1,"node":"n","exit_state":"X","start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:00Z","gpus":[{"attribution":"device","peak_mib":1e308}]}`))
	f.Add([]byte("AUO1\x00\x00\x00\x01{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := Decode(data); err == nil {
			if err := r.Validate(); err != nil {
				t.Fatalf("Decode returned an invalid report: %v", err)
			}
		}
		ReadFrame(bytes.NewReader(data))
	})
}
