package training

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/slurm-plugin/wire"
	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// fakeSource holds rows in memory, like the store's TrainingRows.
type fakeSource struct {
	mu   sync.Mutex
	rows []Row
	err  error
}

func (s *fakeSource) TrainingRows(_ context.Context, since time.Time, limit int) ([]Row, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	var out []Row
	for _, r := range s.rows {
		if !r.Outcome.EndedAt.Before(since) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Outcome.EndedAt.After(out[j].Outcome.EndedAt) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *fakeSource) add(n int, from time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range n {
		bs := 8 << (i % 4)
		s.rows = append(s.rows, Row{
			Request: wire.Request{UserID: 1000, TimeLimitMin: 60, TRES: wire.TRES{PerNode: "gres/gpu:a100:1"},
				Script: fmt.Sprintf("#!/bin/bash\npython train.py --model resnet%d --batch-size %d\n", 18+i%3*16, bs)},
			Outcome: predictor.Outcome{JobID: uint64(len(s.rows) + 1), PeakGPUMemMiB: float64(1000 + 50*bs + 100*(i%3)),
				RuntimeSec: float64(600 + 10*bs), ExitState: "COMPLETED", EndedAt: t0.Add(from + time.Duration(i)*time.Second)},
		})
	}
}

// clock is an injected clock tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newLoop(t *testing.T, src Source, dir string, c *clock) *Loop {
	return New(src, Config{Dir: dir, Interval: time.Hour, MinNew: 50, Keep: 2,
		Train: predictor.TrainConfig{Forest: forestCfg}}, slog.New(slog.NewTextHandler(io.Discard, nil)), c.now)
}

var forestCfg = predictorForest()

func TestStep(t *testing.T) {
	type step struct {
		advance time.Duration
		add     int
		want    bool
		wantGen uint64
	}
	cases := map[string]struct {
		initial int
		steps   []step
	}{
		"first step trains, then waits": {initial: 60, steps: []step{
			{want: true, wantGen: 1}, {advance: time.Minute, want: false, wantGen: 1},
		}},
		"enough new outcomes train early": {initial: 60, steps: []step{
			{want: true, wantGen: 1}, {advance: time.Minute, add: 49, want: false, wantGen: 1},
			{advance: time.Minute, add: 1, want: true, wantGen: 2},
		}},
		"interval trains with few new outcomes": {initial: 60, steps: []step{
			{want: true, wantGen: 1}, {advance: time.Hour, add: 1, want: true, wantGen: 2},
			{advance: time.Hour, want: true, wantGen: 3},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src := &fakeSource{}
			src.add(tc.initial, 0)
			c := &clock{t: t0.Add(24 * time.Hour)}
			dir := t.TempDir()
			l := newLoop(t, src, dir, c)
			for i, s := range tc.steps {
				c.t = c.t.Add(s.advance)
				if s.add > 0 {
					src.add(s.add, c.t.Sub(t0))
				}
				got, err := l.Step(context.Background())
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if diff := cmp.Diff([2]any{s.want, s.wantGen}, [2]any{got, l.Generation()}); diff != "" {
					t.Errorf("step %d: (trained, generation) (-want +got):\n%s", i, diff)
				}
			}
			if l.Model() == nil {
				t.Fatal("no model served")
			}
			files, _ := filepath.Glob(filepath.Join(dir, "model-*.augur"))
			if len(files) > 2 {
				t.Errorf("%d model files kept, want at most 2: %v", len(files), files)
			}
		})
	}
}

func TestLoadAfterRestart(t *testing.T) {
	src := &fakeSource{}
	src.add(60, 0)
	c := &clock{t: t0.Add(time.Hour)}
	dir := t.TempDir()
	a := newLoop(t, src, dir, c)
	if err := a.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A newer but corrupt file is skipped; the good one is served.
	if err := os.WriteFile(filepath.Join(dir, fileName(7)), []byte("AUGURMDL garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newLoop(t, src, dir, c)
	var swapped *predictor.Model
	b.cfg.OnSwap = func(m *predictor.Model) { swapped = m }
	if err := b.Load(); err != nil {
		t.Fatal(err)
	}
	if b.Model() == nil || swapped != b.Model() || b.Generation() != 1 {
		t.Fatalf("after restart: model %v, generation %d", b.Model() != nil, b.Generation())
	}
	if diff := cmp.Diff(a.Model().Margins, b.Model().Margins); diff != "" {
		t.Errorf("loaded model differs (-trained +loaded):\n%s", diff)
	}
	if err := b.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b.Generation() != 8 {
		t.Errorf("generation after the corrupt file's = %d, want 8 (never reused)", b.Generation())
	}
}

func TestTrainErrorKeepsModel(t *testing.T) {
	src := &fakeSource{}
	src.add(60, 0)
	c := &clock{t: t0.Add(time.Hour)}
	l := newLoop(t, src, t.TempDir(), c)
	if err := l.Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := l.Model()
	src.err = fmt.Errorf("database is locked")
	if err := l.Train(context.Background()); err == nil {
		t.Fatal("no error from a failing source")
	}
	if l.Model() != before {
		t.Error("model changed after a failed training")
	}
	empty := newLoop(t, &fakeSource{}, t.TempDir(), c)
	if err := empty.Train(context.Background()); err == nil || empty.Model() != nil {
		t.Errorf("training on nothing: err %v, model %v", err, empty.Model())
	}
}

// TestServeWhileTraining: readers of Model never block or race with Train.
func TestServeWhileTraining(t *testing.T) {
	src := &fakeSource{}
	src.add(200, 0)
	c := &clock{t: t0.Add(time.Hour)}
	l := newLoop(t, src, t.TempDir(), c)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
				p := predictor.NewCombined(l.Model(), predictor.NewHistory(1, nil))
				p.Predict(predictor.Job{}, nil)
			}
		}
	})
	for range 2 {
		if err := l.Train(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
}

func TestWriteFileAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "f")
	for _, content := range []string{"one", "two"} {
		if err := WriteFileAtomic(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != content {
			t.Errorf("read %q, want %q", got, content)
		}
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
}
