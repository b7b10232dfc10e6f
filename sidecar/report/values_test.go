package report

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/google/go-cmp/cmp"
)

var now = time.Date(2025, 3, 10, 14, 30, 0, 0, time.UTC)

func TestParseTime(t *testing.T) {
	d := func(mo time.Month, day, h, m, s int) time.Time { return time.Date(2025, mo, day, h, m, s, 0, time.UTC) }
	cases := map[string]struct {
		in   string
		want time.Time
	}{
		"iso date":        {"2025-03-01", d(3, 1, 0, 0, 0)},
		"iso minutes":     {"2025-03-01T12:05", d(3, 1, 12, 5, 0)},
		"iso seconds":     {"2025-03-01T12:05:09", d(3, 1, 12, 5, 9)},
		"clock":           {"09:15", d(3, 10, 9, 15, 0)},
		"clock seconds":   {"09:15:30", d(3, 10, 9, 15, 30)},
		"clock pm":        {"3:15PM", d(3, 10, 15, 15, 0)},
		"clock 12am":      {"12:00am", d(3, 10, 0, 0, 0)},
		"MMDD":            {"0301", d(3, 1, 0, 0, 0)},
		"MMDDYY":          {"030124", time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)},
		"MMDD future":     {"1224", time.Date(2024, 12, 24, 0, 0, 0, 0, time.UTC)},
		"slash":           {"03/01", d(3, 1, 0, 0, 0)},
		"slash year time": {"03/01/25-10:00", d(3, 1, 10, 0, 0)},
		"dots":            {"03.01.2025-10:00:01", d(3, 1, 10, 0, 1)},
		"today":           {"today", d(3, 10, 0, 0, 0)},
		"midnight":        {"midnight", d(3, 10, 0, 0, 0)},
		"noon":            {"noon", d(3, 10, 12, 0, 0)},
		"fika":            {"fika", d(3, 10, 15, 0, 0)},
		"teatime":         {"teatime", d(3, 10, 16, 0, 0)},
		"now":             {"now", now},
		"now-2days":       {"now-2days", now.Add(-48 * time.Hour)},
		"now-1week":       {"now-1week", now.Add(-7 * 24 * time.Hour)},
		"now+30":          {"now+30", now.Add(30 * time.Second)},
		"now-3hours":      {"now-3h", now.Add(-3 * time.Hour)},
		"now-10minutes":   {"NOW-10minutes", now.Add(-10 * time.Minute)},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTime(c.in, now, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(c.want) {
				t.Errorf("ParseTime(%q) = %s, want %s", c.in, got, c.want)
			}
		})
	}
	for _, bad := range []string{"", "yesterday", "now-", "now-3parsecs", "13/01", "02/30", "25:00", "2025-13-01", "1:2:3:4", "0a01", "now*3"} {
		if _, err := ParseTime(bad, now, time.UTC); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseTime(%q): err %v, want ErrSyntax", bad, err)
		}
	}
}

func TestValues(t *testing.T) {
	cases := map[string]struct{ got, want string }{
		"elapsed zero":    {Elapsed(0), "00:00:00"},
		"elapsed":         {Elapsed(3725), "01:02:05"},
		"elapsed days":    {Elapsed(2*86400 + 3600), "2-01:00:00"},
		"elapsed rounds":  {Elapsed(59.6), "00:01:00"},
		"memory auto M":   {Memory(500, 0), "500M"},
		"memory auto G":   {Memory(2048, 0), "2G"},
		"memory auto .2f": {Memory(9000, 0), "8.79G"},
		"memory T":        {Memory(3<<20, 0), "3T"},
		"memory in K":     {Memory(2, 'K'), "2048K"},
		"memory in G":     {Memory(512, 'G'), "0.50G"},
		"memory zero":     {Memory(0, 'G'), "0"},
		"date":            {Date(now, time.UTC), "2025-03-10T14:30:00"},
		"date unknown":    {Date(time.Time{}, time.UTC), "Unknown"},
		"cell right":      {cell("abc", 6), "   abc"},
		"cell left":       {cell("abc", -6), "abc   "},
		"cell truncates":  {cell("abcdefgh", 5), "abcd+"},
		"energy small":    {energy(500), "500"},
		"energy K":        {energy(2048), "2K"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %q, want %q", c.got, c.want)
			}
		})
	}
}

func TestParseStatesAndFormat(t *testing.T) {
	got, err := ParseStates("cd,F,oom,timeout, CA")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"COMPLETED", "FAILED", "OUT_OF_MEMORY", "TIMEOUT", "CANCELLED"}, got); d != "" {
		t.Error(d)
	}
	cols, err := ParseFormat("jobid,JobName%30,state%-12,PredGPUMem,peakgpu")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var widths []int
	for _, c := range cols {
		names = append(names, c.Field.Name)
		widths = append(widths, c.Width)
	}
	if d := cmp.Diff([]string{"JobID", "JobName", "State", "PredGPUMem", "PeakGPUMem"}, names); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]int{-12, 30, -12, 10, 10}, widths); d != "" {
		t.Error(d)
	}
	for _, bad := range []string{"", "Job", "JobID%0", "JobID%abc", "Nope"} {
		if _, err := ParseFormat(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseFormat(%q): %v", bad, err)
		}
	}
}

func TestOOMRisk(t *testing.T) {
	mem := map[string]float64{"t4": 15360, "a100": 40960}
	cases := map[string]struct {
		j    store.JobRow
		want string
	}{
		"died":           {store.JobRow{OOMSuspect: true, GPUType: "t4"}, "oom"},
		"high by hi":     {store.JobRow{GPUType: "t4", PredMemHiMiB: 15000}, "high"},
		"medium by peak": {store.JobRow{GPUType: "a100", PeakGPUMemMiB: 34000}, "medium"},
		"low":            {store.JobRow{GPUType: "a100", PredMemHiMiB: 1000}, "low"},
		"unknown type":   {store.JobRow{GPUType: "h100", PredMemHiMiB: 1000}, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := OOMRisk(&c.j, mem); got != c.want {
				t.Errorf("OOMRisk = %q, want %q", got, c.want)
			}
		})
	}
}

func TestBuilderWindowAndWaste(t *testing.T) {
	from := now.Add(-4 * time.Hour)
	b := NewBuilder(Options{From: from, To: now, Buckets: 4})
	b.Add(&store.JobRow{HasOutcome: true, State: "COMPLETED", GPUs: 4, MeanSMUtil: 20, RuntimeSec: 7200,
		Start: from.Add(time.Hour), End: from.Add(3 * time.Hour), Submit: from, User: "ana"})
	b.Add(&store.JobRow{HasOutcome: true, State: "FAILED", GPUs: 1, MeanSMUtil: 1, RuntimeSec: 3600,
		Start: from, End: from.Add(time.Hour), Submit: from, User: "ben"})
	b.Add(&store.JobRow{JobID: 9}) // no outcome: not counted
	s := b.Summary()
	if s.Jobs != 2 || s.Waste.IdleJobs != 1 || s.Waste.IdleGPUHours != 1 || s.Waste.OversizedJobs != 1 || s.Waste.OversizedGPUHours != 6 {
		t.Errorf("waste %+v", s.Waste)
	}
	var alloc []float64
	for _, u := range s.Utilisation {
		alloc = append(alloc, u.AllocGPUHours)
	}
	if d := cmp.Diff([]float64{1, 4, 4, 0}, alloc); d != "" {
		t.Errorf("utilisation (-want +got)\n%s", d)
	}
	if s.Preemptions != nil {
		t.Error("preemptions without an actions table")
	}
}

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2025-03-01T12:05:09", "09:15", "3:15PM", "0301", "03/01/25-10:00", "now-2days", "teatime", "12.31"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTime(s, now, time.UTC)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseTime(%q): error %v does not wrap ErrSyntax", s, err)
			}
			return
		}
		if got.IsZero() {
			t.Errorf("ParseTime(%q) = zero time without an error", s)
		}
	})
}

func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"JobID,JobName%30", "state%-12", "predgpumem,,", "%", "JobID%99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cols, err := ParseFormat(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseFormat(%q): %v", s, err)
			}
			return
		}
		tb := Table{Columns: cols, Ctx: Context{Loc: time.UTC}}
		var out strings.Builder
		if err := tb.Header(&out); err != nil {
			t.Fatal(err)
		}
		if err := tb.Row(&out, &store.JobRow{JobID: 1, Name: strings.Repeat("x", 50)}); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzParseStates(f *testing.F) {
	for _, s := range []string{"CD,F", "oom, to", "COMPLETED", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseStates(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseStates(%q): %v", s, err)
			}
			return
		}
		for _, st := range got {
			if st != strings.ToUpper(st) || st == "" {
				t.Errorf("ParseStates(%q) gave %q", s, st)
			}
		}
	})
}

func TestGPUHours(t *testing.T) {
	for h, want := range map[float64]string{0: "0.0", 0.0083: "0.0083", 0.05: "0.05", 0.1: "0.1", 2: "2.0", 12.34: "12.3"} {
		if got := GPUHours(h); got != want {
			t.Errorf("GPUHours(%v) = %q, want %q", h, got, want)
		}
	}
}
