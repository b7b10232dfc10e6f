package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/outcome"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", name, d)
	}
}

// rt0 is the fixture's clock: every time is rt0 plus an offset.
var rt0 = time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)

// fixJob is one job of the fixture store.
type fixJob struct {
	id        uint64
	user      string
	uid       uint32
	part      string
	name      string
	submit    time.Duration // after rt0
	wait, run time.Duration
	gpuType   string
	gpus      int
	predMem   float64 // MiB; Hi is 1.25x
	predRun   float64 // seconds; Hi is 1.5x
	source    string
	peak      float64
	util      []float64 // per GPU
	state     string
	oom       bool
	limitMin  uint32
	noOutcome bool
	noSub     bool
	reject    string // refused with this message (no job)
}

var fixture = []fixJob{
	{id: 101, user: "ana", uid: 1001, part: "gpu", name: "resnet50", submit: 0, wait: 2 * time.Minute, run: 90 * time.Minute,
		gpuType: "a100", gpus: 4, predMem: 9000, predRun: 5000, source: "history", peak: 8800, util: []float64{80, 1, 0, 2},
		state: "COMPLETED", limitMin: 24 * 60},
	{id: 102, user: "ben", uid: 1002, part: "gpu", name: "llama-ft", submit: 10 * time.Minute, wait: 5 * time.Minute, run: 20 * time.Minute,
		gpuType: "t4", gpus: 1, predMem: 12000, predRun: 3600, source: "forest", peak: 15200, util: []float64{95},
		state: "FAILED", oom: true, limitMin: 240},
	{id: 103, user: "ana", uid: 1001, part: "long", name: "sweep_0042_with_a_long_name", submit: 20 * time.Minute, wait: 30 * time.Second, run: 4 * time.Hour,
		gpuType: "a100", gpus: 1, predMem: 30000, predRun: 14000, source: "history", peak: 31000, util: []float64{65},
		state: "TIMEOUT", limitMin: 240},
	{id: 104, user: "cy", uid: 1003, part: "gpu", name: "notebook", submit: 30 * time.Minute, wait: time.Minute, run: 3 * time.Hour,
		gpuType: "a100", gpus: 2, predMem: 2000, predRun: 600, source: "default", peak: 500, util: []float64{0, 0},
		state: "CANCELLED", limitMin: 8 * 60},
	{id: 105, user: "ben", uid: 1002, part: "debug", name: "eval", submit: 40 * time.Minute, wait: 10 * time.Second, run: 4 * time.Minute,
		gpuType: "a100", gpus: 1, predMem: 3000, predRun: 300, source: "analytic", peak: 2600, util: []float64{40},
		state: "COMPLETED", limitMin: 120},
	{id: 106, user: "ana", uid: 1001, part: "gpu", name: "pending", submit: 50 * time.Minute, predMem: 5000, predRun: 900,
		source: "history", noOutcome: true, gpus: 1},
	{id: 107, uid: 1004, part: "", name: "", submit: 0, wait: 0, run: 10 * time.Minute, gpuType: "t4", gpus: 1, peak: 1200,
		util: []float64{30}, state: "COMPLETED", noSub: true},
	{user: "ben", uid: 1002, part: "gpu", name: "llama-70b", submit: 45 * time.Minute, predMem: 60000,
		reject: "augur: every earlier run of this job used at least 58.6G of GPU memory; t4 has 15G: ask for --gres=gpu:a100:1"},
}

// makeFixture writes the fixture into a new store and returns its
// configuration file.
func makeFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "augur.db")
	ctx := context.Background()
	st, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range fixture {
		tok := fmt.Sprintf("%016x", i+1)
		submit := rt0.Add(j.submit)
		if !j.noSub {
			action := "accept"
			dec := map[string]any{"action": "accept", "annotation": "augur:tok=" + tok,
				"prediction": map[string]any{"GPUMemMiB": map[string]float64{"P50": j.predMem, "Hi": j.predMem * 1.25},
					"RuntimeSec": map[string]float64{"P50": j.predRun, "Hi": j.predRun * 1.5}, "MemSource": j.source,
					"Runs": 3, "Why": fmt.Sprintf("%s: the last 3 runs of %s peaked at %.0f MiB", j.source, j.name, j.predMem)}}
			if j.reject != "" {
				action = "reject"
				dec = map[string]any{"action": "reject", "message": j.reject}
			}
			if j.id == 101 {
				dec["notes"] = []string{"set SiteFactor 800 (short job)"}
			}
			decJSON, _ := json.Marshal(dec)
			req := fmt.Sprintf(`{"tres":{"per_node":"gres/gpu:%s:%d"},"time_limit_min":%d}`, j.gpuType, j.gpus, j.limitMin)
			err := st.Record(ctx, store.Submission{Token: tok, ReceivedAt: submit, UserID: j.uid, User: j.user,
				Account: "lab-" + j.user, Partition: j.part, QOS: "normal", Name: j.name, Script: "#!/bin/sh\ntrain\n",
				Signature: "sig-" + j.name, Request: []byte(req), Decision: decJSON, Action: action,
				PredMemMiB: j.predMem, PredMemHiMiB: j.predMem * 1.25, PredRuntimeSec: j.predRun,
				PredRuntimeHiSec: j.predRun * 1.5, PredSource: j.source, DecisionMicros: 300})
			if err != nil {
				t.Fatal(err)
			}
			if j.id != 0 {
				if err := st.LinkJob(ctx, tok, j.id); err != nil {
					t.Fatal(err)
				}
			}
		}
		if j.noOutcome || j.id == 0 {
			continue
		}
		start := submit.Add(j.wait)
		end := start.Add(j.run)
		rep := outcome.Report{V: 1, Node: "gpu01", JobID: j.id, UserID: j.uid, Start: start, End: end, ExitState: j.state,
			Samples: int(j.run.Seconds()), OOMSuspect: j.oom, Finalized: "epilog"}
		mean := 0.0
		for k, u := range j.util {
			capMiB := 40960.0
			if j.gpuType == "t4" {
				capMiB = 15360
			}
			peak := j.peak
			if k > 0 && u < 5 {
				peak = 300
			}
			rep.GPUs = append(rep.GPUs, outcome.GPU{Index: k, Name: "NVIDIA " + strings.ToUpper(j.gpuType), MemTotalMiB: capMiB,
				PeakMiB: peak, MeanSMUtil: u, P95SMUtil: min(100, u*1.2), EnergyJ: 250 * j.run.Seconds() * u / 100, Attribution: "process"})
			mean += u / float64(len(j.util))
		}
		repJSON, _ := json.Marshal(rep)
		_, err := st.PutOutcome(ctx, store.Outcome{JobID: j.id, UserID: j.uid, GPUType: j.gpuType, GPUs: j.gpus,
			PeakGPUMemMiB: j.peak, RuntimeSec: j.run.Seconds(), ExitState: j.state, EndedAt: end, Source: "node",
			Node: "gpu01", StartedAt: start, MeanSMUtil: mean, EnergyJ: 250 * j.run.Seconds() * mean / 100 * float64(j.gpus),
			OOMSuspect: j.oom, Finalized: "epilog", ReceivedAt: end.Add(time.Second), Report: repJSON})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := st.AddActions(ctx, []store.Action{
		{At: rt0.Add(70 * time.Minute), JobID: 103, Kind: store.ActionSignal, Value: 10, Reason: "a shorter job waits", Policy: "tiresias"},
		{At: rt0.Add(71 * time.Minute), JobID: 103, Kind: store.ActionRequeue, Reason: "a shorter job waits", Policy: "tiresias"},
		{At: rt0.Add(72 * time.Minute), JobID: 104, Kind: store.ActionRequeue, Reason: "idle", Policy: "augur", DryRun: true},
		{At: rt0.Add(73 * time.Minute), JobID: 101, Kind: store.ActionSiteFactor, Value: 800, Reason: "short", Policy: "augur"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "augur.yaml")
	os.WriteFile(cfg, []byte("store: {path: "+db+"}\ncluster:\n  gpu_types:\n    - {name: t4, memory: 15G}\n    - {name: a100, memory: 40G}\n"), 0o644)
	return cfg
}

// fixedClock sets the CLI's clock and zone for one test.
func fixedClock(t *testing.T, now time.Time) {
	oldClock, oldZone := clock, zone
	clock, zone = func() time.Time { return now }, time.UTC
	t.Cleanup(func() { clock, zone = oldClock, oldZone })
}

func TestSacctGolden(t *testing.T) {
	cfg := makeFixture(t)
	fixedClock(t, rt0.Add(6*time.Hour))
	cases := map[string][]string{
		"sacct_default.txt":   {},
		"sacct_parsable2.txt": {"-P", "-o", "JobID,JobName,User,Account,Partition,State,Elapsed,Start,End,Submit,NNodes,AllocTRES,PredGPUMem,PeakGPUMem,PredElapsed,GPUUtil,PredSource,OOMRisk"},
		"sacct_p_units.txt":   {"-p", "-n", "--units=M", "-o", "jobid,state,predgpumem,peakgpumem,predgpumemhi"},
		"sacct_widths.txt":    {"-o", "JobID%-8,JobName%12,JobName%-30,Elapsed,Reserved,OOMRisk", "-s", "CD,TO,F"},
		"sacct_filters.txt":   {"-nP", "-u", "ana", "-r", "gpu,long", "-o", "JobID,User,Partition,State"},
		"sacct_jobs.txt":      {"-j", "102,106.batch", "-P", "-o", "JobID,State,PredSource"},
		"sacct_window.txt":    {"-S", "2025-03-10T09:00", "-E", "2025-03-10T10:00", "-P", "-o", "JobID,Start,End"},
		"sacct.json":          {"--json", "-j", "101,106,107"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := capture(t, func() error { return runSacct(append([]string{"--config", cfg, "-S", "2025-03-10"}, args...)) })
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name, out)
		})
	}
	errCases := map[string][]string{
		"bad field": {"-o", "JobID,Nope"},
		"bad width": {"-o", "JobID%x"},
		"bad state": {"-s", "DONE"},
		"bad time":  {"-S", "yesterday-ish"},
		"bad units": {"--units", "Q"},
		"bad job":   {"-j", "abc"},
	}
	for name, args := range errCases {
		t.Run(name, func(t *testing.T) {
			if _, err := capture(t, func() error { return runSacct(append([]string{"--config", cfg}, args...)) }); err == nil {
				t.Errorf("%v: no error", args)
			}
		})
	}
}

func TestReportGolden(t *testing.T) {
	cfg := makeFixture(t)
	fixedClock(t, rt0.Add(6*time.Hour))
	html := filepath.Join(t.TempDir(), "report.html")
	out, err := capture(t, func() error {
		return runReport([]string{"--config", cfg, "-S", "2025-03-10T08:00", "-E", "2025-03-10T14:00", "--html", html})
	})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report.txt", strings.Replace(out, html, "REPORT.html", 1))
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report.html", string(page))
	for _, bad := range []string{"<script", "http://", "https://", "src="} {
		if strings.Contains(strings.ReplaceAll(string(page), `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("the page is not self-contained: it has %q", bad)
		}
	}
	js, err := capture(t, func() error {
		return runReport([]string{"--config", cfg, "-S", "2025-03-10T08:00", "-E", "2025-03-10T14:00", "--json"})
	})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", js)
	if _, err := capture(t, func() error { return runReport([]string{"--config", cfg, "-S", "now", "-E", "now-1days"}) }); err == nil {
		t.Error("an empty window was accepted")
	}
}

func TestJobGolden(t *testing.T) {
	cfg := makeFixture(t)
	fixedClock(t, rt0.Add(6*time.Hour))
	for _, id := range []string{"101", "102", "103", "104", "105", "106", "107"} {
		t.Run(id, func(t *testing.T) {
			out, err := capture(t, func() error { return runJob([]string{id, "--config", cfg}) })
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "job_"+id+".txt", out)
		})
	}
	if _, err := capture(t, func() error { return runJob([]string{"999", "--config", cfg}) }); err == nil || !strings.Contains(err.Error(), "no record of job 999") {
		t.Errorf("unknown job: %v", err)
	}
	out, err := capture(t, func() error { return runJob([]string{"--json", "--config", cfg, "101"}) })
	if err != nil || !strings.Contains(out, `"Advice"`) {
		t.Errorf("--json (%v):\n%s", err, out)
	}
}

func TestExpandShort(t *testing.T) {
	cases := map[string]struct{ in, want []string }{
		"bundled":  {[]string{"-nP", "-o", "JobID"}, []string{"-n", "-P", "-o", "JobID"}},
		"value":    {[]string{"-ojobid"}, []string{"-ojobid"}},
		"long":     {[]string{"--noheader"}, []string{"--noheader"}},
		"after --": {[]string{"--", "-nP"}, []string{"--", "-nP"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(c.want, expandShort(c.in, "PpnaeX")); d != "" {
				t.Error(d)
			}
		})
	}
}
