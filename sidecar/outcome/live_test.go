package outcome

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func sampleLive() *Live {
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	return &Live{Node: "gpu-01", At: at, PeriodS: 60, Jobs: []LiveJob{
		{JobID: 7, Start: at.Add(-time.Hour), GPUs: []LiveGPU{{Index: 0, SMUtil: 0.5, MemMiB: 1200}, {Index: 1, SMUtil: 0, MemMiB: 900}}},
		{JobID: 8, Start: at.Add(-time.Minute), GPUs: []LiveGPU{{Index: 2, SMUtil: 60, MemMiB: 3000, Shared: true}}},
	}}
}

func TestLiveRoundTrip(t *testing.T) {
	b, err := EncodeLive(sampleLive())
	if err != nil {
		t.Fatal(err)
	}
	if !IsLive(b) {
		t.Fatalf("IsLive(%s) = false", b)
	}
	l, err := DecodeLive(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Jobs) != 2 || !l.Jobs[1].GPUs[0].Shared || l.Jobs[0].GPUs[0].SMUtil != 0.5 {
		t.Fatalf("round trip lost figures: %+v", l)
	}
	// A report is not live, and Decode refuses a live payload.
	rb, _ := Encode(sample())
	if IsLive(rb) {
		t.Fatal("a report taken for live figures")
	}
	if _, err := Decode(b); err == nil {
		t.Fatal("Decode took live figures for a report")
	}
}

func TestLiveValidate(t *testing.T) {
	for name, mut := range map[string]func(*Live){
		"no node":      func(l *Live) { l.Node = "" },
		"bad node":     func(l *Live) { l.Node = "a b" },
		"no time":      func(l *Live) { l.At = time.Time{} },
		"zero period":  func(l *Live) { l.PeriodS = 0 },
		"job zero":     func(l *Live) { l.Jobs[0].JobID = 0 },
		"no start":     func(l *Live) { l.Jobs[0].Start = time.Time{} },
		"future start": func(l *Live) { l.Jobs[0].Start = l.At.Add(2 * time.Hour) },
		"util > 100":   func(l *Live) { l.Jobs[0].GPUs[0].SMUtil = 101 },
		"neg memory":   func(l *Live) { l.Jobs[0].GPUs[0].MemMiB = -1 },
		"gpu index":    func(l *Live) { l.Jobs[0].GPUs[0].Index = -1 },
	} {
		l := sampleLive()
		mut(l)
		if _, err := EncodeLive(l); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "live") {
			t.Errorf("%s: err = %v, want a malformed live error", name, err)
		}
	}
}

func FuzzDecodeLive(f *testing.F) {
	b, _ := EncodeLive(sampleLive())
	f.Add(b)
	f.Add([]byte(`{"v":1,"kind":"live","node":"n","at":"2026-01-01T00:00:00Z","period_s":1e300,"jobs":[]}`))
	f.Add([]byte(`{"kind":"live"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := DecodeLive(data)
		if err == nil {
			if err := l.Validate(); err != nil {
				t.Fatalf("DecodeLive returned invalid figures: %v", err)
			}
		}
		IsLive(data)
	})
}
