package daemon

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/sidecar/munge"
	"github.com/augur-hpc/augur/sidecar/outcome"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func mungeOrSkip(t *testing.T) munge.Client {
	t.Helper()
	c := munge.Client{}
	if _, err := c.Encode([]byte("x")); err != nil {
		if os.Getenv("AUGUR_REQUIRE_MUNGE") != "" {
			t.Fatalf("munged required: %v", err)
		}
		t.Skipf("munged not running: %v", err)
	}
	return c
}

func report(job uint64) *outcome.Report {
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	return &outcome.Report{Node: "gpu01", JobID: job, UserID: 1000, Start: t0, End: t0.Add(50 * time.Minute),
		ExitState: "COMPLETED", Samples: 3000, Finalized: "epilog",
		GPUs: []outcome.GPU{{Index: 0, Name: "NVIDIA A100-SXM4-40GB", MemTotalMiB: 40960, PeakMiB: 30123,
			MeanSMUtil: 71, P95SMUtil: 98, EnergyJ: 9e5, Attribution: "process"}}}
}

// send is a node: one connection, one signed report, one ack.
func send(t *testing.T, addr, cred string) outcome.Ack {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := outcome.WriteFrame(c, []byte(cred)); err != nil {
		t.Fatal(err)
	}
	body, err := outcome.ReadFrame(c)
	if err != nil {
		t.Fatalf("no ack: %v", err)
	}
	var ack outcome.Ack
	if err := jsonUnmarshal(body, &ack); err != nil {
		t.Fatal(err)
	}
	return ack
}

func TestOutcomeServer(t *testing.T) {
	mc := mungeOrSkip(t)
	cfg := testConfig(t)
	st, err := store.Open(context.Background(), cfg.Store.Path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := metrics.New(func() float64 { return 0 })
	stored := 0
	srv := &OutcomeServer{Verifier: mc, Store: st, Allowed: map[uint32]bool{0: true}, GPUTypes: []string{"a10", "a100", "t4"},
		Metrics: m, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: time.Now, Stored: func() { stored++ }}
	var lives []*outcome.Live
	var livesMu sync.Mutex
	srv.Live = func(l *outcome.Live) { livesMu.Lock(); lives = append(lives, l); livesMu.Unlock() }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	addr := ln.Addr().String()

	sign := func(r *outcome.Report) string {
		b, err := outcome.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		cred, err := mc.Encode(b)
		if err != nil {
			t.Fatal(err)
		}
		return cred
	}
	cred := sign(report(7001))
	if ack := send(t, addr, cred); ack.Status != outcome.Stored || ack.JobID != 7001 {
		t.Fatalf("first report: %+v", ack)
	}
	if ack := send(t, addr, cred); ack.Status != outcome.Refused || !strings.Contains(ack.Error, "replayed") {
		t.Errorf("replayed credential: %+v", ack)
	}
	if ack := send(t, addr, sign(report(7001))); ack.Status != outcome.Duplicate || !ack.Done() {
		t.Errorf("same report, fresh credential: %+v, want duplicate", ack)
	}
	unsigned, _ := outcome.Encode(report(7002))
	if ack := send(t, addr, string(unsigned)); ack.Status != outcome.Refused {
		t.Errorf("unsigned report: %+v", ack)
	}
	bad, _ := mc.Encode([]byte(`{"v":1,"job_id":0}`))
	if ack := send(t, addr, bad); ack.Status != outcome.Refused || !strings.Contains(ack.Error, "malformed") {
		t.Errorf("malformed report: %+v", ack)
	}
	// A live period on the same listener goes to Live, not the store.
	lb, err := outcome.EncodeLive(&outcome.Live{Node: "gpu01", At: time.Now(), PeriodS: 60, Jobs: []outcome.LiveJob{
		{JobID: 7010, Start: time.Now().Add(-time.Hour), GPUs: []outcome.LiveGPU{{Index: 0, SMUtil: 1, MemMiB: 500}}}}})
	if err != nil {
		t.Fatal(err)
	}
	lcred, _ := mc.Encode(lb)
	if ack := send(t, addr, lcred); ack.Status != outcome.Stored {
		t.Errorf("live period: %+v", ack)
	}
	badLive, _ := mc.Encode([]byte(`{"v":1,"kind":"live","node":"gpu01","at":"2026-01-01T00:00:00Z","period_s":-1}`))
	if ack := send(t, addr, badLive); ack.Status != outcome.Refused || !strings.Contains(ack.Error, "live") {
		t.Errorf("malformed live period: %+v", ack)
	}
	livesMu.Lock()
	if len(lives) != 1 || lives[0].Jobs[0].JobID != 7010 {
		t.Errorf("live periods handed on: %+v", lives)
	}
	livesMu.Unlock()
	if got := testutil.ToFloat64(m.LivePeriods.WithLabelValues("stored")); got != 1 {
		t.Errorf("live periods stored: %v", got)
	}
	if os.Getuid() == 0 {
		// Signed, but by an ordinary user: a user could otherwise forge
		// their jobs' history.
		b, _ := outcome.Encode(report(7003))
		cmd := exec.Command("munge", "-s", string(b))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("munge as nobody: %v", err)
		}
		if ack := send(t, addr, strings.TrimSpace(string(out))); ack.Status != outcome.Refused || !strings.Contains(ack.Error, "SlurmUser") {
			t.Errorf("report signed by nobody: %+v", ack)
		}
	}

	hist, err := st.History(context.Background(), 1000, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1 || hist[0].JobID != 7001 || hist[0].GPUType != "a100" || hist[0].PeakGPUMemMiB != 30123 ||
		hist[0].RuntimeSec != 3000 || hist[0].Node != "gpu01" || hist[0].MeanSMUtil != 71 {
		t.Errorf("stored %+v", hist)
	}
	if stored != 1 {
		t.Errorf("Stored called %d times, want 1", stored)
	}
	for r, want := range map[metrics.OutcomeResult]float64{
		metrics.OutcomeStored: 1, metrics.OutcomeReplayed: 1, metrics.OutcomeDuplicate: 1,
		metrics.OutcomeUnsigned: 1, metrics.OutcomeMalformed: 1,
	} {
		if got := testutil.ToFloat64(m.Outcomes.WithLabelValues(string(r))); got != want {
			t.Errorf("%s: %v, want %v", r, got, want)
		}
	}
}

func TestGPUType(t *testing.T) {
	types := []string{"t4", "a10", "a100", "h100"}
	for name, want := range map[string]string{
		"NVIDIA A100-SXM4-40GB": "a100", "NVIDIA A10": "a10", "Tesla T4": "t4", "NVIDIA H100 80GB HBM3": "h100", "Quadro RTX": "",
	} {
		if got := gpuType(name, types); got != want {
			t.Errorf("gpuType(%q) = %q, want %q", name, got, want)
		}
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
