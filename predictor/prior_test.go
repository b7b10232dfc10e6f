package predictor

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/augur-hpc/augur/internal/shareddata"
)

// TestPriorMatchesSource: the embedded prior is what `make prior` writes
// from timm's benchmark, byte for byte.
func TestPriorMatchesSource(t *testing.T) {
	src, err := os.ReadFile(shareddata.Path(t, "memory", "timm-train-throughput-rtx3090.csv"))
	if err != nil {
		t.Fatal(err)
	}
	built, err := BuildPrior(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, priorCSV) {
		t.Errorf("predictor/prior_timm.csv is not what its source gives: run make prior")
	}
	if n := len(ShippedPrior().Entries); n < 800 {
		t.Errorf("the shipped prior knows %d models, want the benchmark's ~840", n)
	}
}

// TestPriorLookup: a model is found by the names scripts give it.
func TestPriorLookup(t *testing.T) {
	p := ShippedPrior()
	for name, want := range map[string]string{
		"resnet50": "resnet50", "ResNet50": "resnet50", "timm/vit_base_patch16_224.augreg_in21k": "vit_base_patch16_224",
		"google/vit-base-patch16-224": "vit_base_patch16_224", "vit_b_16": "vit_base_patch16_224",
		"convnext_tiny": "convnext_tiny", "meta-llama/Llama-2-7b-hf": "", "": "",
	} {
		_, got, ok := p.Lookup(name)
		if ok != (want != "") || ok && got != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

// TestPriorPredict: the median follows the formula, grows with the batch,
// halves the activations in 16-bit precision, scales them with the image
// size squared, and the upper bound is the calibrated factor above.
func TestPriorPredict(t *testing.T) {
	p := ShippedPrior()
	e, _, _ := p.Lookup("resnet50")
	c := p.Constants
	f := Features{Model: "resnet50", BatchSize: 64, GPUs: 1}
	q, why, ok := p.Predict(f)
	if !ok {
		t.Fatal("no prediction for resnet50")
	}
	perSample := (benchCardMiB - contextMiB - benchBytesPerParam*e.Params/(1<<20)) / e.BatchFit
	want := c.ContextMiB + 16*e.Params/(1<<20) + c.ActivationScale*perSample*64
	if math.Abs(q.P50-want) > 1e-6*want || math.Abs(q.Hi-want*c.Upper) > 1e-6*want {
		t.Errorf("resnet50 at 64: %+v, want p50 %.1f hi %.1f", q, want, want*c.Upper)
	}
	if !strings.Contains(why, "shipped prior") || !strings.Contains(why, p.Version) {
		t.Errorf("why %q does not name the prior and its version", why)
	}
	bigger, _, _ := p.Predict(Features{Model: "resnet50", BatchSize: 128, GPUs: 1})
	half, _, _ := p.Predict(Features{Model: "resnet50", BatchSize: 64, GPUs: 1, Precision: "bf16"})
	larger, _, _ := p.Predict(Features{Model: "resnet50", BatchSize: 64, GPUs: 1, ImageSize: 2 * e.ImageSize})
	act := c.ActivationScale * perSample * 64
	if !(bigger.P50 > q.P50) || math.Abs(q.P50-half.P50-act/2) > 1e-6*act || math.Abs(larger.P50-q.P50-3*act) > 1e-6*act {
		t.Errorf("batch 128 %.0f, bf16 %.0f, 2x image %.0f around %.0f (activations %.0f)", bigger.P50, half.P50, larger.P50, q.P50, act)
	}
	for _, f := range []Features{{Model: "resnet50"}, {Model: "no-such-model", BatchSize: 8}} {
		if _, _, ok := p.Predict(f); ok {
			t.Errorf("a prediction for %+v", f)
		}
	}
}

// TestCombinedDayOne: with no trained model and no history, a model the
// prior knows is predicted from it; the source says so.
func TestCombinedDayOne(t *testing.T) {
	c := NewCombined(nil, NewHistory(1, map[string]float64{"a100": 81920}))
	job := Job{Script: Script{Signature: "s", Features: Features{Model: "vit_base_patch16_224", BatchSize: 32, GPUs: 1}},
		GPUs: []GPURequest{{Scope: "node", Type: "a100", Count: 1}}}
	p := c.Predict(job, nil)
	if p.MemSource != SourcePrior || !p.GPUMemMiB.Known() || !strings.Contains(p.Why, "shipped prior") {
		t.Errorf("day one: %+v", p)
	}
	job.Script.Features.Model = "my_own_net"
	if p := c.Predict(job, nil); p.MemSource == SourcePrior {
		t.Errorf("a model the prior does not know: %+v", p)
	}
	c.Prior = nil
	job.Script.Features.Model = "vit_base_patch16_224"
	if p := c.Predict(job, nil); p.MemSource == SourcePrior {
		t.Errorf("no prior, still a prior prediction: %+v", p)
	}
}

// TestCombinedOneRunFollowsPriorCurve: on day one, one earlier run at
// another batch size is carried to the new one along the prior's curve of
// the model (or the formula's for a transformer), not taken as it stands.
func TestCombinedOneRunFollowsPriorCurve(t *testing.T) {
	c := NewCombined(nil, NewHistory(1, map[string]float64{"a100": 81920}))
	f := Features{Model: "resnet50", BatchSize: 256, GPUs: 1}
	job := Job{Script: Script{Signature: "s", Features: f}, GPUs: []GPURequest{{Scope: "node", Type: "a100", Count: 1}}}
	run := f
	run.BatchSize = 64
	hist := []Outcome{{PeakGPUMemMiB: 9000, ExitState: "COMPLETED", GPUType: "a100", Features: run}}
	at256, _ := c.Prior.median(f)
	at64, _ := c.Prior.median(run)
	p := c.Predict(job, hist)
	if want := 9000 * at256 / at64; p.MemSource != SourceHistory || math.Abs(p.GPUMemMiB.P50-want) > 1e-6 ||
		!strings.Contains(p.Why, "prior's curve") {
		t.Errorf("one run at 64, asked 256: %+v; want P50 %.0f along the prior's curve", p, want)
	}
	if p.GPUMemMiB.P50 <= 9000*1.5 {
		t.Errorf("a batch four times larger kept about the earlier peak: %.0f", p.GPUMemMiB.P50)
	}

	// A transformer the prior does not know: the formula's curve.
	f = Features{Model: "meta-llama/Llama-2-7b-hf", BatchSize: 8, SeqLen: 2048, Precision: "bf16", Tuning: "lora", GPUs: 1}
	if _, _, ok := FormulaPredict(f); !ok {
		t.Fatalf("formula does not cover %+v", f)
	}
	job.Script.Features = f
	run = f
	run.BatchSize = 2
	hist = []Outcome{{PeakGPUMemMiB: 20000, ExitState: "COMPLETED", GPUType: "a100", Features: run}}
	if p := c.Predict(job, hist); p.GPUMemMiB.P50 <= 20000 || !strings.Contains(p.Why, "formula's curve") {
		t.Errorf("one LoRA run at micro batch 2, asked 8: %+v", p)
	}

	// A model neither knows: the earlier peak stands, and says so.
	job.Script.Features = Features{Model: "my_own_net", BatchSize: 256, GPUs: 1}
	run = job.Script.Features
	run.BatchSize = 64
	hist = []Outcome{{PeakGPUMemMiB: 9000, ExitState: "COMPLETED", GPUType: "a100", Features: run}}
	if p := c.Predict(job, hist); p.GPUMemMiB.P50 != 9000 || !strings.Contains(p.Why, "earlier peak stands") {
		t.Errorf("unknown model: %+v", p)
	}
}

// FuzzReadPrior: any file reads or fails with ErrPriorFormat; what reads
// predicts finite values or nothing.
func FuzzReadPrior(f *testing.F) {
	f.Add(string(priorCSV[:400]))
	f.Add("model,params_m,img_size,batch_fit\nx,1,224,64\n")
	f.Add("model,params_m,img_size,batch_fit\nx,1e7,1,1\n")
	f.Add("# c\nmodel,params_m\n")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ReadPrior(strings.NewReader(s))
		if err != nil {
			if !errors.Is(err, ErrPriorFormat) {
				t.Fatalf("error %v does not wrap ErrPriorFormat", err)
			}
			return
		}
		for name := range p.Entries {
			q, _, ok := p.Predict(Features{Model: name, BatchSize: 16, GPUs: 1})
			if ok && (math.IsNaN(q.P50) || math.IsInf(q.Hi, 0) || q.P50 <= 0) {
				t.Fatalf("%s: %+v", name, q)
			}
		}
	})
}

// FuzzBuildPrior: any benchmark CSV builds a prior that reads back, or
// fails with ErrPriorFormat.
func FuzzBuildPrior(f *testing.F) {
	f.Add("model,train_samples_per_sec,train_step_time,train_batch_size,train_img_size,param_count\nresnet50,1,1,256,224,25.56\n")
	f.Add("model,param_count,train_img_size,train_batch_size\na.b,1,2,3\na,1,2,3\n")
	f.Add("model\n")
	f.Fuzz(func(t *testing.T, s string) {
		out, err := BuildPrior(strings.NewReader(s))
		if err != nil {
			if !errors.Is(err, ErrPriorFormat) {
				t.Fatalf("error %v does not wrap ErrPriorFormat", err)
			}
			return
		}
		if _, err := ReadPrior(bytes.NewReader(out)); err != nil {
			t.Fatalf("built prior does not read back: %v\n%s", err, out)
		}
	})
}
