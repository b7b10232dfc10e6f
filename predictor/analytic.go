package predictor

import (
	"math"
	"strconv"
	"strings"
)

// knownParams are parameter counts of transformer models people train by
// name, for names that do not carry their size ("gpt2", "bert-base").
var knownParams = map[string]float64{
	"gpt2": 124e6, "gpt2-medium": 355e6, "gpt2-large": 774e6, "gpt2-xl": 1.558e9, "distilgpt2": 82e6,
	"bert-base-uncased": 110e6, "bert-base-cased": 109e6, "bert-large-uncased": 336e6, "bert-large-cased": 335e6,
	"roberta-base": 125e6, "roberta-large": 355e6, "distilbert-base-uncased": 66e6,
	"t5-small": 60e6, "t5-base": 223e6, "t5-large": 738e6, "t5-3b": 2.85e9, "t5-11b": 11.3e9,
	"bart-base": 140e6, "bart-large": 406e6, "deberta-v3-base": 184e6, "deberta-v3-large": 435e6,
	"vit_base_patch16_224": 86.6e6, "vit_large_patch16_224": 304e6, "vit_huge_patch14_224": 632e6,
	"vit_small_patch16_224": 22.1e6, "vit_tiny_patch16_224": 5.7e6,
	// Text encoders and their variants as people name them, from the
	// models' cards: the shapes of the BERT and RoBERTa runs the device
	// check measured (tests/device/README.md).
	"gpt2-small": 124e6, "bert-base": 110e6, "bert-large": 336e6, "bert-base-chinese": 102e6,
	"bert-base-multilingual-cased": 179e6, "bert-base-multilingual-uncased": 168e6,
	"xlm-roberta-base": 278e6, "xlm-roberta-large": 560e6,
	"electra-small-discriminator": 14e6, "electra-base-discriminator": 110e6, "electra-large-discriminator": 335e6,
	"deberta-base": 139e6, "deberta-large": 405e6, "deberta-v3-xsmall": 70.7e6, "deberta-v3-small": 141e6,
}

// ModelParams returns the parameter count a model name says (the "7b" of
// "meta-llama/Llama-2-7b-hf", the "350m" of "facebook/opt-350m") or that
// knownParams holds; 0 when unknown.
func ModelParams(model string) float64 {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:] // FacebookAI/roberta-base is roberta-base
	}
	// roberta_base as a flag's value or a path writes roberta-base.
	if p, ok := knownParams[m]; ok {
		return p
	} else if p, ok := knownParams[strings.ReplaceAll(m, "_", "-")]; ok {
		return p
	}
	best := 0.0
	for _, tok := range strings.FieldsFunc(m, func(r rune) bool { return r == '-' || r == '_' }) {
		if len(tok) < 2 {
			continue
		}
		unit := tok[len(tok)-1]
		mult := 0.0
		switch unit {
		case 'b':
			mult = 1e9
		case 'm':
			mult = 1e6
		case 't':
			mult = 1e12
		}
		if mult == 0 {
			continue
		}
		num := tok[:len(tok)-1]
		// "8x7b" (mixture of experts): all experts' weights are resident.
		factor := 1.0
		if a, b, ok := strings.Cut(num, "x"); ok {
			n, err := strconv.Atoi(a)
			if err != nil || n <= 0 || n > 1024 {
				continue
			}
			factor, num = float64(n), b
		}
		if len(num) > 1 && num[0] == '0' && !strings.Contains(num, ".") {
			num = "0." + num[1:] // qwen3_06b, qwen2_05b: the point left out, 0.6B and 0.5B
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) {
			continue
		}
		if p := v * mult * factor; p >= 1e6 && p <= 1e13 {
			best = max(best, p)
		}
	}
	return best
}

// Bytes per parameter of mixed-precision (or fp32) training with Adam:
// weights and gradients in 16 bits (2 + 2) and fp32 master weights with two
// Adam moments (4 + 4 + 4), as in the ZeRO paper (Rajbhandari et al. 2020).
const (
	weightBytes = 2.0
	gradBytes   = 2.0
	optimBytes  = 12.0
	// contextMiB is what the CUDA context and framework take before any tensor.
	contextMiB = 500.0
)

// AnalyticFloorMiB is the least GPU memory per GPU that training a model of
// params parameters can take: weights, gradients and optimizer state,
// divided across gpus data-parallel ranks as ZeRO's stage shards them (1:
// optimizer state, 2: and gradients, 3: and weights), plus the CUDA context.
// Activations come on top, so it is a floor, not an estimate.
func AnalyticFloorMiB(params float64, zeroStage, gpus int) float64 {
	if params <= 0 {
		return 0
	}
	n := float64(max(gpus, 1))
	w, g, o := weightBytes, gradBytes, optimBytes
	if zeroStage >= 1 {
		o /= n
	}
	if zeroStage >= 2 {
		g /= n
	}
	if zeroStage >= 3 {
		w /= n
	}
	return params*(w+g+o)/(1<<20) + contextMiB
}
