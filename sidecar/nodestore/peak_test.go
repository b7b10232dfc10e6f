package nodestore

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// peakAt is sampleAt with an accounting peak.
func peakAt(sec, mem, peak float64) Sample {
	s := sampleAt(sec, 1, mem, 50, 100)
	s.PeakMiB = peak
	return s
}

// TestSummaryPeak: a GPU's peak, and the end-of-job window that OOM
// evidence reads, take each row's memory or accounting peak, whichever is
// more; downsampling keeps both.
func TestSummaryPeak(t *testing.T) {
	type want struct{ peak, end float64 }
	cases := map[string]struct {
		samples []Sample
		want    want
	}{
		"no accounting (peak 0, as in old rows)": {
			samples: []Sample{peakAt(0, 1000, 0), peakAt(1, 3000, 0), peakAt(2, 2000, 0)},
			want:    want{peak: 3000, end: 3000},
		},
		"a spike between samples, in the last one (the allocation the job died of)": {
			samples: []Sample{peakAt(0, 20000, 20000), peakAt(1, 20000, 20000), peakAt(2, 0, 39800)},
			want:    want{peak: 39800, end: 39800},
		},
		"a spike long before the end counts for the peak, not for the end": {
			samples: []Sample{peakAt(0, 1000, 39000), peakAt(30, 1000, 1000), peakAt(60, 2000, 0)},
			want:    want{peak: 39000, end: 2000},
		},
		"a peak below the memory read is the memory's": {
			samples: []Sample{peakAt(0, 5000, 100)},
			want:    want{peak: 5000, end: 5000},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t)
			startJob(t, s, 1, 0)
			if err := s.AddSamples(ctx, nil, tc.samples); err != nil {
				t.Fatal(err)
			}
			for _, fold := range []bool{false, true} {
				if fold { // everything into minute rows: peaks are kept
					if _, err := s.Downsample(ctx, t0.Add(time.Hour)); err != nil {
						t.Fatal(err)
					}
				}
				sums, err := s.Summary(ctx, 1)
				if err != nil {
					t.Fatal(err)
				}
				got := want{peak: sums[0].PeakMiB, end: sums[0].EndMiB}
				if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); d != "" {
					t.Errorf("downsampled %v: (-want +got):\n%s", fold, d)
				}
			}
		})
	}
}

// TestMigrateFromSchemaWithoutPeak: a node store written by the augur-node
// before accounting peaks upgrades in place; its rows read as before, and
// new rows carry their peak.
func TestMigrateFromSchemaWithoutPeak(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "node.db")
	old, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		migrations[0],
		`PRAGMA user_version = 1`,
		`INSERT INTO jobs (job_id, user_id, gpus, started_ns, state) VALUES (1, 1000, '0', ` + itoa(ns(t0)) + `, 'running')`,
		`INSERT INTO samples (job_id, gpu, ts_ns, dur_s, mem_mib, sm_util, mem_util, power_w)
		 VALUES (1, 0, ` + itoa(ns(t0)) + `, 1, 12000, 80, 40, 250)`,
	} {
		if _, err := old.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != len(migrations) {
		t.Fatalf("schema version %d (%v), want %d", v, err, len(migrations))
	}
	sums, err := s.Summary(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sums[0].PeakMiB != 12000 || sums[0].EndMiB != 12000 {
		t.Errorf("old row: peak %v, end %v; want 12000", sums[0].PeakMiB, sums[0].EndMiB)
	}
	if err := s.AddSamples(ctx, nil, []Sample{peakAt(1, 0, 40000)}); err != nil {
		t.Fatal(err)
	}
	if sums, err = s.Summary(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if sums[0].PeakMiB != 40000 || sums[0].EndMiB != 40000 || sums[0].Samples != 2 {
		t.Errorf("after a new row: %+v", sums[0])
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
