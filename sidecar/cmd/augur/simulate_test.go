package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/augur-hpc/augur/internal/shareddata"
)

func TestSimulate(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "philly.csv")
	os.WriteFile(tr, []byte("timestamp,duration,num_gpus,gpu_time,cluster\n"+
		"2017-10-01 00:00:00,100,1,100,a\n2017-10-01 00:00:01,10,1,10,a\n2017-10-01 00:00:02,50,2,100,b\n"), 0o644)
	plot := filepath.Join(dir, "cdf.svg")
	out, err := capture(t, func() error {
		return runSimulate([]string{"--trace", tr, "--format", "philly", "--nodes", "1", "--gpus-per-node", "2",
			"--policies", "fifo,srtf-oracle,augur", "--duration-error", "0", "--restart-cost", "0", "--json", "--plot", plot})
	})
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Jobs     int
		Policies map[string]map[string]float64
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if rep.Jobs != 3 || len(rep.Policies) != 3 {
		t.Fatalf("report: %s", out)
	}
	for _, key := range []string{"avg_jct_seconds", "p99_jct_seconds", "utilization", "preemptions", "median_jct_seconds",
		"p95_jct_seconds", "avg_queueing_delay_seconds", "makespan_seconds", "max_slowdown"} {
		if _, ok := rep.Policies["fifo"][key]; !ok {
			t.Errorf("fifo lacks %s", key)
		}
	}
	// fifo: 100 and 10 run side by side, the 2-GPU job waits for both: (100 + 10 + 148) / 3.
	if got := rep.Policies["fifo"]["avg_jct_seconds"]; got != 86 {
		t.Errorf("fifo avg JCT %v, want 86", got)
	}
	if svg, err := os.ReadFile(plot); err != nil || !strings.Contains(string(svg), "srtf-oracle") {
		t.Errorf("plot: %v", err)
	}
	table, err := capture(t, func() error {
		return runSimulate([]string{"--trace", tr, "--format", "philly", "--nodes", "1", "--gpus-per-node", "2", "--policies", "fifo"})
	})
	if err != nil || !strings.Contains(table, "AVG JCT") || !strings.Contains(table, "fifo") {
		t.Errorf("table (%v):\n%s", err, table)
	}
	limits, err := capture(t, func() error {
		return runSimulate([]string{"--trace", tr, "--format", "philly", "--nodes", "1", "--gpus-per-node", "2", "--policies", "fifo,augur",
			"--user-limits", "10", "--duration-error", "0.1"})
	})
	for _, want := range []string{"user time limits: runtime x U", "fifo (user limits)", "fifo (augur limits)", "augur (user limits)"} {
		if err != nil || !strings.Contains(limits, want) {
			t.Errorf("--user-limits (%v) lacks %q:\n%s", err, want, limits)
		}
	}
	if _, err := capture(t, func() error {
		return runSimulate([]string{"--trace", tr, "--format", "philly", "--nodes", "1", "--policies", "nope"})
	}); err == nil {
		t.Error("unknown policy accepted")
	}
}

func TestParseTypes(t *testing.T) {
	types, counts, err := parseTypes("k80,p100,v100=32768", 7)
	if err != nil || len(types) != 3 || counts[0] != 3 || counts[2] != 2 || types[2].MemMiB != 32768 || types[0].MemMiB != 11441 {
		t.Errorf("parseTypes: %v %v %v", types, counts, err)
	}
	if _, _, err := parseTypes("k80:2,v100", 4); err == nil {
		t.Error("mixed counts accepted")
	}
}

// TestSimulateGavelTypes runs a slice of a real Gavel trace on a K80/P100/
// V100 cluster with type-aware and type-blind placement (same policies, seed
// and prediction error): type-aware must be faster, and never place a job
// where it runs out of memory.
func TestSimulateGavelTypes(t *testing.T) {
	dir := shareddata.Path(t, "traces", "gavel")
	src, err := os.ReadFile(filepath.Join(dir, "6214e9.trace"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	tr := filepath.Join(t.TempDir(), "slice.trace")
	os.WriteFile(tr, []byte(strings.Join(lines[:min(300, len(lines))], "")), 0o644)
	avg := map[bool]map[string]float64{}
	for _, blind := range []bool{false, true} {
		out, err := capture(t, func() error {
			return runSimulate([]string{"--trace", tr, "--format", "gavel", "--throughputs", filepath.Join(dir, "simulation_throughputs.json"),
				"--nodes", "3", "--gpus-per-node", "4", "--gpu-types", "k80,p100,v100", "--policies", "augur,tiresias",
				"--type-blind=" + strconv.FormatBool(blind), "--json"})
		})
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Placement string
			Policies  map[string]map[string]float64
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		avg[blind] = map[string]float64{}
		for name, p := range rep.Policies {
			avg[blind][name] = p["avg_jct_seconds"]
			if !blind && (p["oom_failures"] != 0 || p["speed"] <= 0) {
				t.Errorf("%s type-aware: %v OOM failures, speed %v", name, p["oom_failures"], p["speed"])
			}
		}
	}
	for name, aware := range avg[false] {
		t.Logf("%s: type-aware %.0f s, type-blind %.0f s (%.2fx)", name, aware, avg[true][name], avg[true][name]/aware)
		if aware >= avg[true][name] {
			t.Errorf("%s: type-aware %.0f s is not below type-blind %.0f s", name, aware, avg[true][name])
		}
	}
}
