package report

import (
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
)

// TestStoryMultiNode: a job that ran on two nodes shows every node's GPUs,
// each named by its node.
func TestStoryMultiNode(t *testing.T) {
	d := store.JobDetail{
		JobRow: store.JobRow{JobID: 9, HasOutcome: true, GPUs: 2, PeakGPUMemMiB: 30000},
		Report: []byte(`{"node":"gpu01","gpus":[{"index":0,"name":"NVIDIA A100","mem_total_mib":40960,"peak_mib":1000}]}`),
		NodeReports: []store.NodeReport{
			{Node: "gpu01", Report: []byte(`{"node":"gpu01","gpus":[{"index":0,"name":"NVIDIA A100","mem_total_mib":40960,"peak_mib":1000}]}`)},
			{Node: "gpu02", Report: []byte(`{"node":"gpu02","gpus":[{"index":1,"name":"NVIDIA A100","mem_total_mib":40960,"peak_mib":30000}]}`)},
		},
	}
	s := NewStory(d, StoryOptions{})
	if len(s.GPUs) != 2 || strings.Join(s.GPUNodes, ",") != "gpu01,gpu02" {
		t.Fatalf("GPUs %+v on %v", s.GPUs, s.GPUNodes)
	}
	var b strings.Builder
	if err := WriteStory(&b, s, time.UTC); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gpu01/0", "gpu02/1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("story lacks %q:\n%s", want, b.String())
		}
	}
}

// TestSummaryOOMRecovery: jobs requeued after a GPU OOM are counted, and
// the ones that then completed give their GPU-hours.
func TestSummaryOOMRecovery(t *testing.T) {
	from := time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC)
	b := NewBuilder(Options{From: from, To: from.Add(24 * time.Hour), Buckets: 4})
	for _, a := range []store.Action{
		{At: from.Add(time.Hour), JobID: 1, Kind: store.ActionOOMRequeue, Reason: "onto a100"},
		{At: from.Add(time.Hour), JobID: 2, Kind: store.ActionOOMRequeue, Reason: "onto a100"},
		{At: from.Add(time.Hour), JobID: 3, Kind: store.ActionOOMRequeue, Reason: "onto a100", DryRun: true},
	} {
		b.AddAction(a)
	}
	end := from.Add(3 * time.Hour)
	b.Add(&store.JobRow{JobID: 1, HasOutcome: true, State: "COMPLETED", GPUs: 2, RuntimeSec: 3600, Start: end.Add(-time.Hour), End: end})
	b.Add(&store.JobRow{JobID: 2, HasOutcome: true, State: "FAILED", GPUs: 1, RuntimeSec: 60, Start: end.Add(-time.Minute), End: end})
	s := b.Summary()
	if o := s.OOMRecovery; o == nil || o.Requeued != 2 || o.DryRun != 1 || o.Completed != 1 || o.CompletedGPUHours != 2 {
		t.Errorf("OOM recovery %+v; want 2 requeued, 1 dry run, 1 completed, 2 GPU-hours", s.OOMRecovery)
	}
	var w strings.Builder
	if err := WriteText(&w, s, time.UTC); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.String(), "2 jobs requeued onto a larger GPU type, 1 of them completed there (2.0 GPU-hours") {
		t.Errorf("augur report lacks the OOM recovery line:\n%s", w.String())
	}
}

// TestSummaryIdleGPU: live.idle_gpu's flags, warnings and cancels are
// counted, with the GPU-hours the cancels freed (and a dry run's would
// have); the text and HTML reports say so, and augur job names each step.
func TestSummaryIdleGPU(t *testing.T) {
	from := time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC)
	b := NewBuilder(Options{From: from, To: from.Add(24 * time.Hour), Buckets: 4})
	acts := []store.Action{
		{At: from.Add(time.Hour), JobID: 1, Kind: store.ActionIdleFlag, Value: 2, Reason: "GPUs idle"},
		{At: from.Add(time.Hour), JobID: 2, Kind: store.ActionIdleWarn, Value: 4, Reason: "GPUs idle; will be cancelled"},
		{At: from.Add(2 * time.Hour), JobID: 2, Kind: store.ActionIdleCancel, Value: 4 * 5400, Reason: "GPUs idle; cancelled"},
		{At: from.Add(2 * time.Hour), JobID: 3, Kind: store.ActionIdleCancel, Value: 3600, Reason: "x", DryRun: true},
		{At: from.Add(2 * time.Hour), JobID: 4, Kind: store.ActionIdleWarn, Value: 1, Reason: "x", Error: "slurmctld down"},
	}
	for _, a := range acts {
		b.AddAction(a)
	}
	s := b.Summary()
	want := IdleGPU{Flagged: 1, Warned: 1, Cancelled: 1, DryRun: 1, Failed: 1, FreedGPUHours: 6, DryRunGPUHours: 1}
	if g := s.IdleGPU; g == nil || *g != want {
		t.Fatalf("idle GPU %+v; want %+v", s.IdleGPU, want)
	}
	var w strings.Builder
	if err := WriteText(&w, s, time.UTC); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.String(), "2 running jobs flagged, 1 warned of a cancel, 1 cancelled (6.0 GPU-hours") {
		t.Errorf("augur report lacks the idle GPU line:\n%s", w.String())
	}
	var h strings.Builder
	if err := WriteHTML(&h, s, time.UTC); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), "Idle GPUs (live.idle_gpu): 2 running jobs flagged") {
		t.Errorf("HTML report lacks the idle GPU paragraph")
	}
	if got := actionText(acts[2]); got != "cancelled (live.idle_gpu): GPUs idle; cancelled" {
		t.Errorf("augur job says %q", got)
	}
}
