package predictor

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/augur-hpc/augur/predictor/forest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// run builds an earlier outcome at a batch size.
func run(batch, mib float64) Outcome {
	return Outcome{PeakGPUMemMiB: mib, RuntimeSec: 100, ExitState: "COMPLETED", Features: Features{BatchSize: batch}}
}

func TestMemFromHistory(t *testing.T) {
	line := func(b float64) float64 { return 1000 + 100*b } // a model linear in batch size
	inf := math.Inf(1)
	cases := map[string]struct {
		batch  float64
		hist   []Outcome
		shape  func(float64) float64
		want   memEstimate
		wantOK bool
	}{
		"no history":           {batch: 16},
		"OOM runs say nothing": {batch: 16, hist: []Outcome{{PeakGPUMemMiB: 40000, ExitState: "OUT_OF_MEMORY", Features: Features{BatchSize: 16}}}},
		"same batch size": {batch: 16, hist: []Outcome{run(16, 2500), run(16, 2700), run(32, 9000)}, wantOK: true,
			want: memEstimate{p50: 2600, upper: 2700, cap: inf, group: groupSame, runs: 2}},
		"interpolated: capped by the next larger batch": {batch: 24, hist: []Outcome{run(8, line(8)), run(16, line(16)), run(32, line(32)), run(64, line(64))}, wantOK: true,
			want: memEstimate{p50: line(24), upper: line(24), cap: line(32), group: groupInterp + "_4", runs: 4}},
		"extrapolated up: nothing larger, no cap": {batch: 128, hist: []Outcome{run(8, line(8)), run(16, line(16)), run(32, line(32))}, wantOK: true,
			want: memEstimate{p50: line(128), upper: line(128), cap: inf, group: groupUp + "_3", runs: 3}},
		"extrapolated down: capped by the smallest run": {batch: 4, hist: []Outcome{run(8, line(8)), run(16, line(16))}, wantOK: true,
			want: memEstimate{p50: line(4), upper: line(4), cap: line(8), group: groupDown + "_2", runs: 2}},
		"the cap is the largest run at the next larger batch": {batch: 4, hist: []Outcome{run(8, 1700), run(8, 1900), run(8, 1800), run(16, 2600)}, wantOK: true,
			want: memEstimate{p50: 1800 - 800.0/8*4, upper: 1800 - 800.0/8*4, cap: 1900, group: groupDown + "_2", runs: 4}},
		"a bend widens the upper bound": {batch: 64, hist: []Outcome{run(8, 1800), run(16, 2600), run(32, 6000)}, wantOK: true,
			want: memEstimate{p50: 6000 + 3400.0/16*32, upper: 6000 + 3400.0/16*32, cap: inf, group: groupUp + "_3" + groupBent, runs: 3}},
		"a history that falls sets no cap": {batch: 12, hist: []Outcome{run(8, 3000), run(16, 2800), run(32, 5000)}, wantOK: true,
			want: memEstimate{p50: 2900, upper: 2900, cap: inf, group: groupInterp + "_3" + groupBent, runs: 3}},
		"one other batch size, no forest": {batch: 32, hist: []Outcome{run(16, 3000)}, wantOK: true,
			want: memEstimate{p50: 3000, upper: 3000, cap: inf, group: groupOnePoint, runs: 1}},
		"one larger batch size: a bad shape cannot lift the estimate over it": {batch: 8, hist: []Outcome{run(16, 3000)},
			shape: func(b float64) float64 { return 5000 - 100*b }, wantOK: true,
			want: memEstimate{p50: 3000, upper: 3000, cap: 3000, group: groupOnePoint, runs: 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := memFromHistory(tc.batch, tc.hist, tc.shape)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(memEstimate{}), cmpopts.IgnoreFields(memEstimate{}, "points"), cmpopts.EquateApprox(1e-9, 1e-6)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCalibrate(t *testing.T) {
	trials := func(group string, needs ...float64) []calPoint {
		var out []calPoint
		for _, n := range needs {
			out = append(out, calPoint{group: group, need: n, ratio: 1 / (1 + n)})
		}
		return out
	}
	// capped trials: the bound is capped at capRatio times the actual peak.
	capped := func(group string, needs []float64, capRatio float64) []calPoint {
		out := trials(group, needs...)
		for i := range out {
			out[i].capRatio = capRatio
		}
		return out
	}
	ramp := func(step float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = step * float64(i+1)
		}
		return out
	}
	many := func(v float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	cases := map[string]struct {
		points    []calPoint
		underRate float64
		want      map[string]float64
	}{
		"too few trials keep the defaults": {points: trials("interp_4", 0.5), underRate: 0.01, want: defaultMargins},
		"covers all when the budget allows no miss": {
			points: trials("interp_4", append(many(0.01, 99), 0.2)...), underRate: 0.001,
			want: merge(defaultMargins, map[string]float64{"interp_4": 0.2}),
		},
		"spends the budget on the outlier": {
			points: trials("interp_4", append(many(0.01, 99), 0.2)...), underRate: 0.02,
			want: merge(defaultMargins, map[string]float64{"interp_4": 0.01}),
		},
		// 1 miss in 20 is the budget in the trials, but a new job would
		// be missed with probability 2/21: the correction covers all.
		"a small group pays for its uncertain quantile": {
			points: trials("interp_3", ramp(0.01, 20)...), underRate: 0.05,
			want: merge(defaultMargins, map[string]float64{"interp_3": 0.2}),
		},
		// Each group's tail can be left (about 3 misses each) but not both
		// (the budget is 4): the tail of the group whose bound is capped
		// just above its actual peaks costs little to cover, the other's
		// would double every bound.
		"covers the tail the cap makes cheap": {
			points: append(
				append(capped("extrap_down_4", many(0.01, 98), 1.02), capped("extrap_down_4", many(1, 2), 1)...),
				trials("extrap_up_4", append(many(0.01, 98), 1, 1)...)...),
			underRate: 0.02,
			want:      merge(defaultMargins, map[string]float64{"extrap_down_4": 1, "extrap_up_4": 0.01}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := calibrate(tc.points, tc.underRate)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("margins (-want +got):\n%s", diff)
			}
		})
	}
}

func merge(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// jobBuilder makes Jobs for tests.
type jobBuilder struct{ j Job }

func newJob() *jobBuilder { return &jobBuilder{j: Job{UserID: 1000}} }
func (b *jobBuilder) Model(m string, batch float64) *jobBuilder {
	b.j.Script.Features.Model, b.j.Script.Features.BatchSize = m, batch
	b.j.Script.Signature = "sig-" + m
	return b
}
func (b *jobBuilder) GPUs(typ string, n int64) *jobBuilder {
	b.j.GPUs = []GPURequest{{Scope: "node", Type: typ, Count: n}}
	return b
}
func (b *jobBuilder) Limit(d time.Duration) *jobBuilder { b.j.TimeLimit = d; return b }
func (b *jobBuilder) Obj() Job                          { return b.j }

// jobNamed is a one-GPU job whose script says nothing but its name, read
// as ParseScript reads it.
func jobNamed(name string) Job {
	j := newJob().GPUs("a100", 1).Obj()
	j.Script = ParseScript("#!/bin/bash\n#SBATCH -J " + name + "\npython train.py\n")
	return j
}

// synthetic returns n training samples of a few models whose memory is
// linear in batch size and whose runtime follows the steps.
func synthetic(n int) []Sample {
	out := make([]Sample, n)
	for i := range out {
		m := i % 7
		bs := float64(int(8) << (i % 5))
		steps := float64(1000 * (1 + i%4))
		j := newJob().Model(fmt.Sprintf("resnet%d", 18+m*8), bs).GPUs("a100", 1).Limit(4 * time.Hour).Obj()
		j.UserID = uint32(1000 + i%50)
		j.Script.Features.Steps = steps
		mem := 1500 + float64(m)*500 + bs*float64(20+m*10)
		out[i] = Sample{Job: j, Outcome: Outcome{JobID: uint64(i), PeakGPUMemMiB: mem * (1 + 0.01*float64(i%3)),
			RuntimeSec: steps * 0.5 * (1 + 0.05*float64(i%3)), ExitState: "COMPLETED", Features: j.Script.Features}}
	}
	return out
}

var testTrain = TrainConfig{Forest: forest.Config{Trees: 20, Seed: 1}}

func TestCombined(t *testing.T) {
	m, err := Train(synthetic(700), testTrain)
	if err != nil {
		t.Fatal(err)
	}
	gpuMem := map[string]float64{"a100": 40960}
	hist := []Outcome{run(16, 3000), run(32, 5000), run(64, 9000)}
	cases := map[string]struct {
		job     Job
		hist    []Outcome
		model   *Model
		wantMem Source
		wantRun Source
		// wantP50 is the memory median expected within 15%; 0 skips.
		wantP50  float64
		wantPred bool
	}{
		"history at other batch sizes": {job: newJob().Model("resnet18", 128).GPUs("a100", 1).Obj(), hist: hist, model: m,
			wantMem: SourceHistory, wantRun: SourceHistory, wantP50: 17000, wantPred: true},
		"never seen: the forest": {job: newJob().Model("resnet34", 64).GPUs("a100", 1).Limit(4 * time.Hour).Obj(), model: m,
			wantMem: SourceForest, wantRun: SourceForest, wantP50: 1500 + 2*500 + 64*40, wantPred: true},
		"recognised transformer, no batch size: the analytic floor": {job: newJob().Model("meta-llama/llama-2-7b-hf", 0).GPUs("a100", 8).Obj(),
			wantMem: SourceAnalytic, wantRun: SourceDefault, wantP50: AnalyticFloorMiB(7e9, 0, 1)},
		"recognised transformer with a batch size: the formula": {job: newJob().Model("meta-llama/llama-2-7b-hf", 4).GPUs("a100", 8).Obj(),
			wantMem: SourceFormula, wantRun: SourceDefault, wantP50: formulaP50(Features{Model: "meta-llama/llama-2-7b-hf", BatchSize: 4, GPUs: 8})},
		"nothing known: the whole GPU": {job: newJob().GPUs("a100", 1).Obj(),
			wantMem: SourceDefault, wantRun: SourceDefault, wantP50: 40960},
		"a job's name standing in for its model is no model to the memory forest": {job: jobNamed("resnet-ablation"), model: m,
			wantMem: SourceDefault, wantRun: SourceForest, wantP50: 40960, wantPred: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := NewCombined(tc.model, NewHistory(1, gpuMem)).Predict(tc.job, tc.hist)
			if diff := cmp.Diff([3]any{tc.wantMem, tc.wantRun, tc.wantPred}, [3]any{got.MemSource, got.RuntimeSource, got.Predictable}); diff != "" {
				t.Errorf("(memory source, runtime source, predictable) (-want +got):\n%s\n%+v", diff, got)
			}
			if tc.wantP50 > 0 && math.Abs(got.GPUMemMiB.P50-tc.wantP50) > 0.15*tc.wantP50 {
				t.Errorf("memory p50 %.0f, want about %.0f", got.GPUMemMiB.P50, tc.wantP50)
			}
			if got.GPUMemMiB.Hi < got.GPUMemMiB.P50 || got.GPUMemMiB.Hi > 40960 && got.GPUMemMiB.P50 <= 40960 {
				t.Errorf("memory upper %.0f for p50 %.0f", got.GPUMemMiB.Hi, got.GPUMemMiB.P50)
			}
			if tc.job.TimeLimit > 0 && got.RuntimeSec.Hi > tc.job.TimeLimit.Seconds() {
				t.Errorf("runtime upper %.0f past the limit", got.RuntimeSec.Hi)
			}
			if got.Why == "" {
				t.Error("no explanation")
			}
		})
	}
}

func TestAnalyticFloor(t *testing.T) {
	cases := map[string]struct {
		model string
		zero  int
		gpus  int
		want  float64
	}{
		"7b, no ZeRO":     {model: "meta-llama/Llama-2-7b-hf", gpus: 8, want: 7e9*16/(1<<20) + contextMiB},
		"7b, ZeRO-3 on 8": {model: "meta-llama/Llama-2-7b-hf", zero: 3, gpus: 8, want: 7e9*16/8/(1<<20) + contextMiB},
		"7b, ZeRO-1 on 4": {model: "mistral-7b", zero: 1, gpus: 4, want: 7e9*(4+3)/(1<<20) + contextMiB},
		"gpt2 by table":   {model: "gpt2", want: 124e6*16/(1<<20) + contextMiB},
		"mixtral 8x7b":    {model: "mistralai/Mixtral-8x7B-v0.1", zero: 3, gpus: 8, want: 56e9*16/8/(1<<20) + contextMiB},
		"unknown model":   {model: "resnet50"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := AnalyticFloorMiB(ModelParams(tc.model), tc.zero, tc.gpus)
			if math.Abs(got-tc.want) > 1e-6*math.Max(1, tc.want) {
				t.Errorf("floor = %.1f MiB, want %.1f", got, tc.want)
			}
		})
	}
}

func TestModelFileRoundTrip(t *testing.T) {
	m, err := Train(synthetic(300), testTrain)
	if err != nil {
		t.Fatal(err)
	}
	data, err := EncodeModel(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeModel(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, got, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(Model{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// The neighbour index is rebuilt from the file: a cold job predicts the same.
	cold := newJob().Model("resnet77", 64).GPUs("a100", 1).Obj()
	h := NewHistory(1, map[string]float64{"a100": 40960})
	if a, b := NewCombined(m, h).Predict(cold, nil), NewCombined(got, h).Predict(cold, nil); a.GPUMemMiB != b.GPUMemMiB {
		t.Errorf("cold memory %+v before the round trip, %+v after", a.GPUMemMiB, b.GPUMemMiB)
	}
	cases := map[string]struct {
		mutate func([]byte) []byte
		want   error
	}{
		"truncated":    {mutate: func(b []byte) []byte { return b[:len(b)/2] }, want: ErrModelCorrupt},
		"bit flipped":  {mutate: func(b []byte) []byte { b[len(b)/2] ^= 1; return b }, want: ErrModelCorrupt},
		"newer format": {mutate: func(b []byte) []byte { b[8] = ModelFormat + 1; return b }, want: ErrModelVersion},
		"not a model":  {mutate: func([]byte) []byte { return []byte("hello") }, want: ErrModelCorrupt},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeModel(tc.mutate(append([]byte(nil), data...))); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzDecodeModel: no input panics; what decodes predicts.
func FuzzDecodeModel(f *testing.F) {
	m, _ := Train(synthetic(60), TrainConfig{Forest: forest.Config{Trees: 2, Seed: 1}})
	data, _ := EncodeModel(m)
	f.Add(data)
	empty, _ := EncodeModel(&Model{Schema: FeatureSchema})
	f.Add(empty)
	f.Add([]byte("AUGURMDL\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeModel(b)
		if err != nil {
			return
		}
		NewCombined(m, NewHistory(1, nil)).Predict(newJob().Model("resnet50", 32).Obj(), nil)
	})
}

// BenchmarkCombinedPredict is the per-submission cost with a trained model:
// a cold job (forest memory and runtime) and a warm one (history).
func BenchmarkCombinedPredict(b *testing.B) {
	m, err := Train(synthetic(20000), TrainConfig{Forest: forest.Config{Seed: 1}})
	if err != nil {
		b.Fatal(err)
	}
	p := NewCombined(m, NewHistory(1, map[string]float64{"a100": 40960}))
	cold := newJob().Model("resnet34", 64).GPUs("a100", 1).Limit(time.Hour).Obj()
	warm := newJob().Model("resnet18", 128).GPUs("a100", 1).Obj()
	hist := []Outcome{run(16, 3000), run(32, 5000), run(64, 9000)}
	for _, c := range []struct {
		name string
		job  Job
		hist []Outcome
	}{{"cold", cold, nil}, {"warm", warm, hist}} {
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				t := time.Now()
				p.Predict(c.job, c.hist)
				lat = append(lat, time.Since(t))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// BenchmarkTrain100k trains on 100,000 synthetic outcomes.
func BenchmarkTrain100k(b *testing.B) {
	s := synthetic(100000)
	for b.Loop() {
		if _, err := Train(s, TrainConfig{Forest: forest.Config{Seed: 1}}); err != nil {
			b.Fatal(err)
		}
	}
}

func formulaP50(f Features) float64 {
	q, _, _ := FormulaPredict(f)
	return q.P50
}
