package nodestore

import (
	"compress/gzip"
	"context"
	"encoding/csv"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/augur-hpc/augur/internal/shareddata"
)

// replayRow is one line of the Alibaba GenAI pod GPU memory trace.
type replayRow struct {
	ts  float64 // seconds
	mib float64
	pod string
}

func readReplay(t testing.TB) []replayRow {
	// The Alibaba GenAI trace is read where it lies, never copied in.
	f, err := os.Open(shareddata.Path(t, "telemetry", "alibaba-genai-pod-gpu-memory.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(gz)
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil || len(head) != 3 || head[0] != "timestamp_anon" || head[1] != "value" || head[2] != "container_ip" {
		t.Fatalf("unexpected header %q (%v)", head, err)
	}
	var rows []replayRow
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ts, err1 := strconv.ParseFloat(rec[0], 64)
		v, err2 := strconv.ParseFloat(rec[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad row %q", rec)
		}
		rows = append(rows, replayRow{ts: ts, mib: v / (1 << 20), pod: rec[2]})
	}
	return rows
}

// TestReplayAlibabaTrace replays real per-pod GPU memory samples (about
// 161,000 samples of 144 pods over 1,441 rounds, one per ~57 s) through the store path the
// agent uses: AddSamples per sampling round, Downsample of everything into
// minute rows, Summary. Each pod is a job; its memory also goes into the
// utilisation and power columns, so that the time-weighted means and the
// energy can be checked against figures computed here from the raw rows.
func TestReplayAlibabaTrace(t *testing.T) {
	rows := readReplay(t)
	ctx := context.Background()
	s := open(t)

	const capMiB = 81920
	jobOf := map[string]uint64{}
	byPod := map[uint64][]int{} // row indices, time order
	for i, r := range rows {
		id, ok := jobOf[r.pod]
		if !ok {
			id = uint64(len(jobOf) + 1)
			jobOf[r.pod] = id
		}
		byPod[id] = append(byPod[id], i)
	}
	// A row stands for the time since the pod's previous row (the first
	// row: until its next one), as the agent's rows stand for its interval.
	dur := make([]float64, len(rows))
	type want struct{ peak, mean, energy float64 }
	wants := map[uint64]want{}
	for id, idx := range byPod {
		sort.Slice(idx, func(a, b int) bool { return rows[idx[a]].ts < rows[idx[b]].ts })
		var w want
		var tot float64
		for k, i := range idx {
			d := 57.0
			if k > 0 {
				d = rows[i].ts - rows[idx[k-1]].ts
			} else if len(idx) > 1 {
				d = rows[idx[1]].ts - rows[i].ts
			}
			dur[i] = d
			w.peak = math.Max(w.peak, rows[i].mib)
			w.mean += rows[i].mib / capMiB * 100 * d
			w.energy += rows[i].mib * d
			tot += d
		}
		w.mean /= tot
		wants[id] = w
		if err := s.StartJob(ctx, Job{JobID: id, UserID: 1, GPUs: []int{0}, Started: time.Unix(int64(rows[idx[0]].ts), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	// One AddSamples per timestamp: one sampling round of the whole "node".
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rows[order[a]].ts < rows[order[b]].ts })
	start := time.Now()
	var batch []Sample
	flush := func() {
		if err := s.AddSamples(ctx, nil, batch); err != nil {
			t.Fatal(err)
		}
		batch = batch[:0]
	}
	for k, i := range order {
		if k > 0 && rows[i].ts != rows[order[k-1]].ts {
			flush()
		}
		r := rows[i]
		util := r.mib / capMiB * 100
		batch = append(batch, Sample{JobID: jobOf[r.pod], GPU: 0, TS: time.Unix(0, int64(r.ts*1e9)), DurS: dur[i],
			MemMiB: r.mib, SMUtil: util, MemUtil: util, PowerW: r.mib})
	}
	flush()
	insert := time.Since(start)

	last := rows[order[len(order)-1]].ts
	start = time.Now()
	folded, err := s.Downsample(ctx, time.Unix(int64(last)+120, 0))
	if err != nil {
		t.Fatal(err)
	}
	downsample := time.Since(start)
	var left int
	s.db.QueryRow(`SELECT count(*) FROM samples`).Scan(&left)
	if folded == 0 || left >= len(rows) {
		t.Fatalf("downsampling folded %d of %d rows into %d", folded, len(rows), left)
	}
	bad := 0
	for id, w := range wants {
		sums, err := s.Summary(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(sums) != 1 {
			t.Fatalf("job %d: %d GPU summaries", id, len(sums))
		}
		g := sums[0]
		if g.PeakMiB != w.peak || !near(g.MeanSMUtil, w.mean) || !near(g.MeanMemUtil, w.mean) || !near(g.EnergyJ, w.energy) {
			if bad++; bad <= 5 {
				t.Errorf("pod %d: peak %v mean %v energy %v; raw rows give peak %v mean %v energy %v",
					id, g.PeakMiB, g.MeanSMUtil, g.EnergyJ, w.peak, w.mean, w.energy)
			}
		}
	}
	t.Logf("replayed %d samples of %d pods: insert %.2fs (%.0f samples/s), downsample %.2fs: %d raw rows -> %d rows; per-pod peaks exact, means and energy within 1e-9",
		len(rows), len(wants), insert.Seconds(), float64(len(rows))/insert.Seconds(), downsample.Seconds(), folded, left)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
