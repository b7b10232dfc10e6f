package nodestore

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func open(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "node.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sampleAt builds a sample of job 1 on GPU 0.
func sampleAt(sec float64, dur, mem, sm, power float64) Sample {
	return Sample{JobID: 1, GPU: 0, TS: t0.Add(time.Duration(sec * float64(time.Second))), DurS: dur,
		MemMiB: mem, SMUtil: sm, MemUtil: sm / 2, PowerW: power}
}

func startJob(t testing.TB, s *Store, id uint64, gpus ...int) {
	t.Helper()
	if err := s.StartJob(context.Background(), Job{JobID: id, UserID: 1000, GPUs: gpus, Started: t0}); err != nil {
		t.Fatal(err)
	}
}

var approx = cmpopts.EquateApprox(0, 1e-9)

func TestDownsampleKeepsPeakAndTimeWeightedMeans(t *testing.T) {
	type want struct {
		rowsFolded int64
		rowsLeft   int
		summary    GPUSummary
	}
	cases := map[string]struct {
		samples []Sample
		before  time.Duration // after t0
		want    want
	}{
		"one minute of 1 s samples folds into one row": {
			samples: func() []Sample {
				var out []Sample
				for i := 0; i < 60; i++ {
					mem := 1000.0
					if i == 37 {
						mem = 9000 // a one-second spike
					}
					out = append(out, sampleAt(float64(i), 1, mem, float64(i), 100))
				}
				return out
			}(),
			before: 2 * time.Minute,
			want: want{rowsFolded: 60, rowsLeft: 1, summary: GPUSummary{PeakMiB: 9000, MeanSMUtil: 29.5,
				MeanMemUtil: 14.75, EnergyJ: 6000, Samples: 1, EndMiB: 9000,
				// The p95 of a folded minute is its mean: percentiles coarsen
				// to minute means past raw_retention (peak and means do not).
				P95SMUtil: 29.5}},
		},
		"unequal durations weight the means": {
			samples: []Sample{sampleAt(0, 10, 100, 90, 300), sampleAt(10, 30, 200, 10, 100)},
			before:  time.Minute,
			want: want{rowsFolded: 2, rowsLeft: 1, summary: GPUSummary{PeakMiB: 200, MeanSMUtil: 30, MeanMemUtil: 15,
				EnergyJ: 6000, P95SMUtil: 30, Samples: 1, EndMiB: 200}},
		},
		"recent minutes stay raw": {
			samples: []Sample{sampleAt(0, 1, 100, 50, 100), sampleAt(61, 1, 300, 100, 200), sampleAt(62, 1, 200, 0, 200)},
			before:  time.Minute + 30*time.Second, // only whole minutes fold: minute 0
			want: want{rowsFolded: 1, rowsLeft: 3, summary: GPUSummary{PeakMiB: 300, MeanSMUtil: 50, MeanMemUtil: 25,
				EnergyJ: 500, P95SMUtil: 100, Samples: 3, EndMiB: 300}},
		},
		"nothing old enough": {
			samples: []Sample{sampleAt(0, 1, 100, 50, 100)},
			before:  30 * time.Second,
			want: want{rowsFolded: 0, rowsLeft: 1, summary: GPUSummary{PeakMiB: 100, MeanSMUtil: 50, MeanMemUtil: 25,
				EnergyJ: 100, P95SMUtil: 50, Samples: 1, EndMiB: 100}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			startJob(t, s, 1, 0)
			info := []GPUInfo{{JobID: 1, GPU: 0, UUID: "GPU-0", Name: "A100", MemTotalMiB: 40960, Attribution: "process"}}
			if err := s.AddSamples(ctx, info, tc.samples); err != nil {
				t.Fatal(err)
			}
			before, err := s.Summary(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			n, err := s.Downsample(ctx, t0.Add(tc.before))
			if err != nil {
				t.Fatal(err)
			}
			sums, err := s.Summary(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			var left int
			s.db.QueryRow(`SELECT count(*) FROM samples`).Scan(&left)
			tc.want.summary.GPUInfo = info[0]
			got := want{rowsFolded: n, rowsLeft: left, summary: sums[0]}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), approx); d != "" {
				t.Errorf("after Downsample (-want +got):\n%s", d)
			}
			// Peak, means and energy do not change by downsampling (the p95 may).
			b, a := before[0], sums[0]
			for _, p := range [][2]float64{{b.PeakMiB, a.PeakMiB}, {b.MeanSMUtil, a.MeanSMUtil}, {b.MeanMemUtil, a.MeanMemUtil}, {b.EnergyJ, a.EnergyJ}} {
				if math.Abs(p[0]-p[1]) > 1e-9 {
					t.Errorf("summary changed by downsampling: before %+v after %+v", b, a)
					break
				}
			}
		})
	}
}

func TestDownsampleMergesLateRowsIntoAFoldedMinute(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	startJob(t, s, 1, 0)
	if err := s.AddSamples(ctx, nil, []Sample{sampleAt(0, 1, 100, 100, 100), sampleAt(1, 1, 100, 100, 100)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Downsample(ctx, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// A late row of the same minute, folded into the existing minute row.
	if err := s.AddSamples(ctx, nil, []Sample{sampleAt(2, 2, 500, 40, 100)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Downsample(ctx, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	sums, err := s.Summary(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := GPUSummary{GPUInfo: GPUInfo{JobID: 1, Attribution: "device"}, PeakMiB: 500, MeanSMUtil: 70, MeanMemUtil: 35,
		EnergyJ: 400, P95SMUtil: 70, Samples: 1, EndMiB: 500}
	if d := cmp.Diff(want, sums[0], approx); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestPruneNeverDeletesUndelivered(t *testing.T) {
	ctx := context.Background()
	type job struct {
		id        uint64
		ended     bool
		endedAt   time.Duration
		enqueued  bool
		delivered bool
	}
	cases := map[string]struct {
		jobs []job
		want []uint64 // jobs left
	}{
		"delivered and old goes": {jobs: []job{{id: 1, ended: true, endedAt: -48 * time.Hour, enqueued: true, delivered: true}}},
		"undelivered and old stays": {
			jobs: []job{{id: 1, ended: true, endedAt: -48 * time.Hour, enqueued: true}},
			want: []uint64{1},
		},
		"delivered but recent stays": {
			jobs: []job{{id: 1, ended: true, endedAt: -time.Hour, enqueued: true, delivered: true}},
			want: []uint64{1},
		},
		"running stays": {jobs: []job{{id: 1}}, want: []uint64{1}},
		"mixed": {
			jobs: []job{
				{id: 1, ended: true, endedAt: -48 * time.Hour, enqueued: true, delivered: true},
				{id: 2, ended: true, endedAt: -48 * time.Hour, enqueued: true},
				{id: 3},
				{id: 4, ended: true, endedAt: -48 * time.Hour, enqueued: true, delivered: true},
			},
			want: []uint64{2, 3},
		},
	}
	now := t0.Add(72 * time.Hour)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			for _, j := range tc.jobs {
				startJob(t, s, j.id, 0)
				if err := s.AddSamples(ctx, nil, []Sample{{JobID: j.id, TS: t0, DurS: 1, MemMiB: 1}}); err != nil {
					t.Fatal(err)
				}
				if j.ended {
					if _, err := s.EndJob(ctx, j.id, now.Add(j.endedAt), "COMPLETED", 0, "epilog"); err != nil {
						t.Fatal(err)
					}
				}
				if j.enqueued {
					if err := s.Enqueue(ctx, j.id, []byte("{}"), now.Add(j.endedAt)); err != nil {
						t.Fatal(err)
					}
				}
				if j.delivered {
					if err := s.Delivered(ctx, j.id, now.Add(j.endedAt)); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, err := s.Prune(ctx, now.Add(-24*time.Hour)); err != nil {
				t.Fatal(err)
			}
			var got []uint64
			rows, _ := s.db.Query(`SELECT job_id FROM jobs ORDER BY job_id`)
			for rows.Next() {
				var id uint64
				rows.Scan(&id)
				got = append(got, id)
			}
			rows.Close()
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("jobs left (-want +got):\n%s", d)
			}
			var orphans int
			s.db.QueryRow(`SELECT count(*) FROM samples WHERE job_id NOT IN (SELECT job_id FROM jobs)`).Scan(&orphans)
			if orphans != 0 {
				t.Errorf("%d samples of pruned jobs left", orphans)
			}
			n, err := s.Undelivered(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wantUndelivered := 0
			for _, j := range tc.jobs {
				if j.enqueued && !j.delivered {
					wantUndelivered++
				}
			}
			if n != wantUndelivered {
				t.Errorf("Undelivered = %d, want %d", n, wantUndelivered)
			}
		})
	}
}

func TestOutboxOrderRetryAndDelivery(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	for i, id := range []uint64{30, 10, 20} {
		if err := s.Enqueue(ctx, id, []byte{byte(id)}, t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	// A second report for a job is ignored: the first one stays.
	if err := s.Enqueue(ctx, 10, []byte("second"), t0); err != nil {
		t.Fatal(err)
	}
	ids := func(at time.Duration, n int) []uint64 {
		t.Helper()
		due, err := s.Due(ctx, t0.Add(at), n)
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, p := range due {
			out = append(out, p.JobID)
		}
		return out
	}
	steps := []struct {
		name string
		do   func() error
		at   time.Duration
		n    int
		want []uint64
	}{
		{"oldest first", nil, 10 * time.Second, 10, []uint64{30, 10, 20}},
		{"limit", nil, 10 * time.Second, 2, []uint64{30, 10}},
		{"not due yet", nil, -time.Second, 10, nil},
		{"retry moves back", func() error { return s.Retry(ctx, 30, t0.Add(time.Minute), errors.New("down")) }, 10 * time.Second, 10, []uint64{10, 20}},
		{"due again after its backoff", nil, time.Minute, 10, []uint64{10, 20, 30}},
		{"delivered leaves", func() error { return s.Delivered(ctx, 10, t0) }, time.Minute, 10, []uint64{20, 30}},
	}
	for _, st := range steps {
		if st.do != nil {
			if err := st.do(); err != nil {
				t.Fatal(err)
			}
		}
		if d := cmp.Diff(st.want, ids(st.at, st.n)); d != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, d)
		}
	}
	due, _ := s.Due(ctx, t0.Add(time.Hour), 10)
	got := map[uint64]Pending{}
	for _, p := range due {
		got[p.JobID] = p
	}
	if got[30].Attempts != 1 || got[20].Attempts != 0 || string(got[20].Report) != "\x14" {
		t.Errorf("pending = %+v", got)
	}
	if n, _ := s.Undelivered(ctx); n != 2 {
		t.Errorf("Undelivered = %d, want 2", n)
	}
}

func TestJobLifecycle(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	startJob(t, s, 7, 4, 5)
	startJob(t, s, 7, 0) // a second Prolog changes nothing
	if ok, err := s.EndJob(ctx, 7, t0.Add(time.Hour), "FAILED", 3, "epilog"); err != nil || !ok {
		t.Fatalf("EndJob = %v, %v", ok, err)
	}
	if ok, err := s.EndJob(ctx, 7, t0.Add(2*time.Hour), "UNKNOWN", 0, "recovered"); err != nil || ok {
		t.Fatalf("second EndJob = %v, %v; want false", ok, err)
	}
	if ok, _ := s.EndJob(ctx, 8, t0, "FAILED", 0, "epilog"); ok {
		t.Error("EndJob of an unknown job reported true")
	}
	got, err := s.Job(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := Job{JobID: 7, UserID: 1000, GPUs: []int{4, 5}, Started: t0, Ended: t0.Add(time.Hour),
		ExitState: "FAILED", ExitCode: 3, Finalized: "epilog"}
	if d := cmp.Diff(want, got, cmpopts.EquateApproxTime(0)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if _, err := s.Job(ctx, 8); !errors.Is(err, ErrNotFound) {
		t.Errorf("Job(8) error = %v, want ErrNotFound", err)
	}
	un, err := s.Unreported(ctx)
	if err != nil || len(un) != 1 || un[0].JobID != 7 {
		t.Errorf("Unreported = %+v, %v", un, err)
	}
	s.Enqueue(ctx, 7, []byte("{}"), t0)
	if un, _ := s.Unreported(ctx); len(un) != 0 {
		t.Errorf("Unreported after Enqueue = %+v", un)
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "node.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	startJob(t, s, 1, 0)
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r, _ := s.Running(ctx); len(r) != 1 {
		t.Errorf("running after reopen = %+v", r)
	}
}

func TestParseGPUs(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    []int
		wantErr bool
	}{
		"one":          {in: "0", want: []int{0}},
		"list":         {in: "4,5", want: []int{4, 5}},
		"range":        {in: "0-2,7", want: []int{0, 1, 2, 7}},
		"spaces":       {in: " 1 , 3 ", want: []int{1, 3}},
		"empty":        {in: ""},
		"uuid refused": {in: "GPU-8d3a", wantErr: true},
		"negative":     {in: "-1", wantErr: true},
		"bad range":    {in: "3-1", wantErr: true},
		"huge":         {in: "0-100000", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseGPUs(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// FuzzParseGPUs: SLURM_JOB_GPUS and CUDA_VISIBLE_DEVICES come from outside.
func FuzzParseGPUs(f *testing.F) {
	for _, s := range []string{"0", "4,5", "0-3,7", "", "GPU-1", "1-", "-", "0-4096", ",,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gpus, err := ParseGPUs(s)
		if err != nil {
			return
		}
		if len(gpus) > 4096 {
			t.Fatalf("%d GPUs", len(gpus))
		}
		for _, g := range gpus {
			if g < 0 || g > 1<<16 {
				t.Fatalf("index %d", g)
			}
		}
		back, err := ParseGPUs(FormatGPUs(gpus))
		if err != nil || !cmp.Equal(back, gpus, cmpopts.EquateEmpty()) {
			t.Fatalf("round trip of %v: %v, %v", gpus, back, err)
		}
	})
}

// TestRequeuedJobRunsAgain: a Prolog for a job this node saw end is its
// later run (Slurm requeued it): the job runs again from the new start,
// the earlier run's samples go, and so does its delivered report, so the
// later run's report is queued and sent in its turn.
func TestRequeuedJobRunsAgain(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	startJob(t, s, 1, 0)
	if err := s.AddSamples(ctx, nil, []Sample{sampleAt(5, 1, 40000, 90, 200)}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.EndJob(ctx, 1, t0.Add(8*time.Second), "FAILED", 1, "epilog"); err != nil || !ok {
		t.Fatalf("EndJob = %v, %v", ok, err)
	}
	if err := s.Enqueue(ctx, 1, []byte(`{"run":1}`), t0.Add(9*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delivered(ctx, 1, t0.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(130 * time.Second)
	if err := s.StartJob(ctx, Job{JobID: 1, UserID: 1000, GPUs: []int{1}, Started: later}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Job(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := Job{JobID: 1, UserID: 1000, GPUs: []int{1}, Started: later, Running: true}
	if d := cmp.Diff(want, got, cmpopts.EquateApproxTime(0)); d != "" {
		t.Errorf("the later run (-want +got):\n%s", d)
	}
	if sums, err := s.Summary(ctx, 1); err != nil || len(sums) != 0 {
		t.Errorf("the earlier run's samples are still there: %+v, %v", sums, err)
	}
	if err := s.Enqueue(ctx, 1, []byte(`{"run":2}`), later.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	due, err := s.Due(ctx, later.Add(time.Hour), 10)
	if err != nil || len(due) != 1 || string(due[0].Report) != `{"run":2}` {
		t.Errorf("due after the later run = %+v, %v; want the later run's report", due, err)
	}
	// The same run announced again changes nothing.
	if err := s.StartJob(ctx, Job{JobID: 1, UserID: 1000, GPUs: []int{1}, Started: later.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Job(ctx, 1); !got.Started.Equal(later) {
		t.Errorf("a second Prolog of the same run moved its start to %s", got.Started)
	}
}
