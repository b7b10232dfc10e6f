package predictor

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// published is one measurement of predictor/testdata/transformer-memory-published.csv.
type published struct {
	model, kind, source string
	setup               TrainSetup
	peakMiB             float64
	extra               string
}

func readPublished(t *testing.T) []published {
	t.Helper()
	return readMeasurements(t, "testdata/transformer-memory-published.csv")
}

// readMeasurements reads a file of transformer-memory-published.csv's
// columns.
func readMeasurements(t *testing.T, path string) []published {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.Comment = '#'
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var out []published
	for _, rec := range recs[1:] {
		s := func(k string) string { return rec[col[k]] }
		n := func(k string) float64 {
			v, err := strconv.ParseFloat(s(k), 64)
			if s(k) != "" && err != nil {
				t.Fatalf("%s: %q: %v", k, s(k), err)
			}
			return v
		}
		extra := s("extra")
		setup := TrainSetup{
			Shape: TransformerShape{Params: n("params_b") * 1e9, Layers: n("layers"), Hidden: n("hidden"), FFN: n("ffn"),
				Vocab: n("vocab"), KVDim: n("kv_dim"), Heads: n("heads"), GatedMLP: s("gated") == "1", EagerAttention: s("eager_attn") == "1",
				TanhGELU: strings.Contains(extra, "tanh_gelu")},
			Method: s("method"), Targets: s("targets"), Rank: n("lora_rank"), Precision: s("precision"), Optimizer: s("optimizer"),
			OptimizerInBackward: strings.Contains(extra, "opt_in_bwd"), ZeRO: int(n("zero")), GPUs: int(n("gpus")),
			MicroBatch: n("micro_batch"), SeqLen: n("seq_len"), Checkpointing: s("grad_ckpt") == "1",
			ChunkedLoss: strings.Contains(extra, "chunked_ce"),
		}
		if s("method") == "qlora" && n("base_bits") != 4 {
			t.Fatalf("qlora with %s-bit base", s("base_bits"))
		}
		out = append(out, published{model: s("model"), kind: s("peak_kind"), source: s("source"), setup: setup,
			peakMiB: n("peak_gib") * 1024, extra: extra})
	}
	return out
}

// TestTransformerPublished: the formula against every published
// measurement; the table is the error table. nvidia-smi's figures
// hold the CUDA context besides the tensors (taken as 1 GiB).
func TestTransformerPublished(t *testing.T) {
	rows := readPublished(t)
	if len(rows) < 50 {
		t.Fatalf("%d published measurements", len(rows))
	}
	var errs []float64
	byMethod := map[string][]float64{}
	var b strings.Builder
	fmt.Fprintf(&b, "| model | method | prec | opt | zero×gpus | b×s | ckpt | extra | measured GiB (kind) | formula GiB | error |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		got, _, ok := TransformerMemMiB(r.setup)
		if !ok {
			t.Errorf("%s: no figure", r.model)
			continue
		}
		if r.kind == "smi" {
			got += 1024
		}
		e := (got - r.peakMiB) / r.peakMiB
		errs = append(errs, math.Abs(e))
		byMethod[r.setup.Method] = append(byMethod[r.setup.Method], math.Abs(e))
		s := r.setup
		fmt.Fprintf(&b, "| %s | %s %s r%g | %s | %s | %d×%d | %g×%g | %v | %s | %.1f (%s) | %.1f | %+.0f%% |\n", r.model, s.Method, s.Targets, s.Rank,
			s.Precision, s.Optimizer, s.ZeRO, max(s.GPUs, 1), s.MicroBatch, s.SeqLen, s.Checkpointing, r.extra, r.peakMiB/1024, r.kind, got/1024, 100*e)
	}
	med := func(xs []float64) float64 {
		xs = slices.Clone(xs)
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	within := func(xs []float64, lim float64) int {
		n := 0
		for _, x := range xs {
			if x <= lim {
				n++
			}
		}
		return n
	}
	fmt.Fprintf(&b, "\nall %d: median |error| %.0f%%, within 25%%: %d, within 50%%: %d\n", len(errs), 100*med(errs), within(errs, 0.25), within(errs, 0.5))
	for _, m := range []string{"full", "lora", "qlora"} {
		fmt.Fprintf(&b, "%s %d: median |error| %.0f%%\n", m, len(byMethod[m]), 100*med(byMethod[m]))
	}
	t.Log("\n" + b.String())
	if m := med(errs); m > 0.35 {
		t.Errorf("median error %.0f%% on published measurements", 100*m)
	}
}

// TestTransformerMeasured: the formula against the team's own
// measurements on an H100 (tests/device): every completed run within the
// formula's upper bound, and the run that ran out of memory predicted
// above the card.
func TestTransformerMeasured(t *testing.T) {
	rows := readMeasurements(t, "testdata/transformer-memory-measured.csv")
	if len(rows) < 4 {
		t.Fatalf("%d measurements", len(rows))
	}
	const h100MiB = 81559
	for _, r := range rows {
		got, _, ok := TransformerMemMiB(r.setup)
		if !ok {
			t.Errorf("%s: no figure", r.model)
			continue
		}
		got += contextMiB
		t.Logf("%-12s %-4s b%g×%g: measured %6.0f MiB (%s), formula %6.0f, upper %6.0f: measured/formula %.2f",
			r.model, r.setup.Precision, r.setup.MicroBatch, r.setup.SeqLen, r.peakMiB, r.kind, got, got*FormulaUpper, r.peakMiB/got)
		switch r.kind {
		case "oom":
			if got <= h100MiB {
				t.Errorf("%s ran out of the H100's %d MiB; the formula says %.0f MiB fits", r.model, h100MiB, got)
			}
		default:
			if r.peakMiB > got*FormulaUpper {
				t.Errorf("%s: measured %.0f MiB above the upper bound %.0f", r.model, r.peakMiB, got*FormulaUpper)
			}
		}
	}
}

// formulaRatios are measured/formula on the published measurements, the
// calibration half (every other row) and the other.
func formulaRatios(t *testing.T) (cal, test []float64) {
	for i, r := range readPublished(t) {
		got, _, ok := TransformerMemMiB(r.setup)
		if !ok {
			continue
		}
		if r.kind == "smi" {
			got += 1024
		}
		if i%2 == 0 {
			cal = append(cal, r.peakMiB/got)
		} else {
			test = append(test, r.peakMiB/got)
		}
	}
	return cal, test
}

// TestFormulaUpper: FormulaUpper is the 90% split-conformal quantile of
// measured/formula on the calibration half; the other half's miss rate
// and over-reservation are reported.
func TestFormulaUpper(t *testing.T) {
	cal, test := formulaRatios(t)
	slices.Sort(cal)
	k := min(int(math.Ceil(float64(len(cal)+1)*0.9))-1, len(cal)-1)
	want := math.Round(math.Max(cal[k], 1)*100) / 100
	if FormulaUpper != want {
		t.Errorf("FormulaUpper = %g; the calibration half gives %g", FormulaUpper, want)
	}
	miss, over := 0, 0.0
	for _, r := range test {
		if r > FormulaUpper {
			miss++
		}
		over += FormulaUpper/r - 1
	}
	t.Logf("upper factor %.2f from %d rows; on the other %d: %d above it (%.0f%%), mean over-reservation %.0f%%",
		FormulaUpper, len(cal), len(test), miss, 100*float64(miss)/float64(len(test)), 100*over/float64(len(test)))
}

// TestTransformerMemTerms: the terms, worked by hand for a 1B-parameter,
// 16-layer, 2048-wide model with a gated MLP of 8192.
func TestTransformerMemTerms(t *testing.T) {
	sh := TransformerShape{Params: 1e9, Layers: 16, Hidden: 2048, FFN: 8192, Vocab: 32000, KVDim: 512, GatedMLP: true}
	const mib = 1 << 20
	tokens := 4.0 * 1024
	perToken := 6*2048.0 + 2*512 + 4*8192
	cases := map[string]struct {
		s    TrainSetup
		want map[string]float64 // MiB
	}{
		"full, pure bf16, AdamW": {TrainSetup{Shape: sh, Method: "full", Precision: "bf16", Optimizer: "adamw", MicroBatch: 4, SeqLen: 1024},
			map[string]float64{"weights": 2e9 / mib, "gradients": 2e9 / mib, "optimizer": 4e9 / mib,
				"activations": tokens * perToken * 2 * 16 / mib, "logits": tokens * 32000 * 10 / mib}},
		"full, AMP, ZeRO-3 on 4, checkpointing, chunked loss": {TrainSetup{Shape: sh, Method: "full", Precision: "amp", Optimizer: "adamw",
			ZeRO: 3, GPUs: 4, MicroBatch: 4, SeqLen: 1024, Checkpointing: true, ChunkedLoss: true},
			map[string]float64{"weights": 2e9 / 4 / mib, "gradients": 2e9 / 4 / mib, "optimizer": 12e9 / 4 / mib,
				"gathered layers":      2 * (1e9 / 16) * 2 / mib,
				"16-bit weight copies": 0, // DeepSpeed's 16-bit weights are cast already
				// the recomputed layer's two norms take fp32 inputs under AMP
				"activations": (tokens*2048*2*16 + tokens*perToken*2 + tokens*2*2048*2) / mib, "logits": tokens * 32000 * 2 / mib}},
		"full, AMP (autocast), no ZeRO": {TrainSetup{Shape: sh, Method: "full", Precision: "amp", Optimizer: "adamw", MicroBatch: 4, SeqLen: 1024},
			map[string]float64{"weights": 4e9 / mib, "gradients": 4e9 / mib, "optimizer": 8e9 / mib, "16-bit weight copies": 2e9 / mib,
				"activations": tokens * (perToken*2 + 2*2048*2) * 16 / mib}},
		"GELU's tanh approximation written out (GPT-2)": {TrainSetup{Shape: TransformerShape{Params: 355e6, Layers: 24, Hidden: 1024,
			FFN: 4096, Vocab: 50257, Heads: 16, TanhGELU: true}, Method: "full", Precision: "bf16", Optimizer: "adamw", MicroBatch: 8, SeqLen: 1024},
			map[string]float64{"activations": 8 * 1024 * (6*1024 + 2*1024 + 2*4096 + 3*4096) * 2 * 24 / mib}},
		"LoRA r16 on q and v, 8-bit AdamW": {TrainSetup{Shape: sh, Method: "lora", Targets: "qv", Rank: 16, Precision: "bf16",
			Optimizer: "adamw8bit", MicroBatch: 4, SeqLen: 1024},
			map[string]float64{"weights": 2e9 / mib, "gradients": 16.0 * (2*2048 + 2048 + 512) * 16 * 4 / mib,
				"optimizer": 16.0 * (2*2048 + 2048 + 512) * 16 * 2 / mib}},
		"QLoRA: 4-bit weights, 16-bit embeddings": {TrainSetup{Shape: sh, Method: "qlora", Targets: "qv", Rank: 16, Precision: "bf16",
			Optimizer: "paged", MicroBatch: 4, SeqLen: 1024},
			map[string]float64{"weights": ((1e9-2*32000*2048)*nf4Bytes + 2*32000*2048*2) / mib, "optimizer": 0}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, terms, ok := TransformerMemMiB(tc.s)
			if !ok {
				t.Fatal("no figure")
			}
			got := map[string]float64{}
			for _, term := range terms {
				got[term.Name] = term.MiB
			}
			for k, w := range tc.want {
				if math.Abs(got[k]-w) > 1e-6*math.Max(w, 1) {
					t.Errorf("%s = %.2f MiB, want %.2f", k, got[k], w)
				}
			}
		})
	}
	if _, _, ok := TransformerMemMiB(TrainSetup{Shape: sh, MicroBatch: 0, SeqLen: 1024}); ok {
		t.Error("a figure without a batch size")
	}
}

// TestFormulaSetup: what a script says becomes the setup, and what it
// leaves unsaid is assumed out loud.
func TestFormulaSetup(t *testing.T) {
	f := ParseScript(`#!/bin/bash
#SBATCH --gres=gpu:a100:2
torchrun --nproc_per_node 2 sft.py --model_name_or_path meta-llama/Meta-Llama-3-8B --use_peft --lora_r 16 \
  --load_in_4bit --gradient_checkpointing --per_device_train_batch_size 2 --max_seq_length 4096 --bf16
`).Features
	s, assumed, ok := FormulaSetup(f)
	if !ok {
		t.Fatal("no setup")
	}
	if s.Method != "qlora" || s.Rank != 16 || !s.Checkpointing || s.MicroBatch != 2 || s.SeqLen != 4096 ||
		s.Precision != "amp" || s.Shape != publishedShapes["llama-3-8b"] {
		t.Errorf("setup %+v", s)
	}
	if len(assumed) != 0 {
		t.Errorf("assumed %q; the shape is Llama 3 8B's and the script says the rest", assumed)
	}
	// A model without a published shape here: the shape is guessed from
	// the parameter count, and said so.
	f.Model = "acme/widget-lm-7b"
	if s, assumed, _ := FormulaSetup(f); s.Shape.Params != 7e9 || len(assumed) != 1 || !strings.Contains(assumed[0], "shape from") {
		t.Errorf("%+v: assumed %q, want only the shape", s.Shape, assumed)
	}
	f.Model = "meta-llama/Meta-Llama-3-8B"
	q, why, ok := FormulaPredict(f)
	if !ok || !(q.Hi > q.P50) || !strings.Contains(why, "qlora") {
		t.Errorf("%+v %q", q, why)
	}
	for _, f := range []Features{{Model: "resnet50", BatchSize: 64}, {Model: "meta-llama/Llama-2-7b-hf"}, {Model: "my-net", BatchSize: 8}} {
		if _, _, ok := FormulaSetup(f); ok {
			t.Errorf("a setup for %+v", f)
		}
	}
}

// TestShapeOf: a fine-tune's name finds its base model's published shape,
// and a larger sibling is never taken for a smaller one.
func TestShapeOf(t *testing.T) {
	for name, want := range map[string]string{
		"meta-llama/Llama-2-7b-chat-hf":         "llama-2-7b",
		"meta-llama/Llama-2-70b-hf":             "llama-2-70b",
		"meta-llama/Meta-Llama-3.1-8B-Instruct": "llama-3.1-8b",
		"Qwen/Qwen2.5-7B-Instruct":              "qwen2.5-7b",
		"gpt2-xl":                               "gpt2-xl",
		"openai-community/gpt2":                 "gpt2",
		"bert-base-uncased":                     "bert-base",
		"mistralai/Mistral-7B-Instruct-v0.2":    "mistral-7b",
		"microsoft/phi-2":                       "phi-2",
		"TinyLlama/TinyLlama-1.1B-Chat-v1.0":    "tinyllama-1.1b",
		"gpt2-medium":                           "gpt2-medium",
		"llama-2-7":                             "",
		"my-gpt2":                               "",
		"qwen2.5-72b-instruct":                  "",
	} {
		got, ok := shapeOf(name)
		if want == "" {
			if ok {
				t.Errorf("shapeOf(%q) = %+v, want none", name, got)
			}
			continue
		}
		if !ok || got != publishedShapes[want] {
			t.Errorf("shapeOf(%q) = %+v, %v; want %s's", name, got, ok, want)
		}
	}
}
