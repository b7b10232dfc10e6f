package predictor

import (
	"math"
	"strconv"
	"strings"
)

// The numeric features the forests see, in order. Missing values are NaN
// (the forest sends them right at every split). Changing this list changes
// the model file's meaning: bump FeatureSchema.
const (
	fLogBatch = iota
	fLogParams
	fImageSize
	fLogSeqLen
	fPrecision
	fZeRO
	fGPUs
	fGradAccum
	fSizeWord
	fNameNum1
	fNameNum2
	fPatch
	fAttention
	fLauncher
	fLogTimeLimit
	fLogSteps
	fEpochs
	nFeatures
)

// FeatureSchema versions the feature vector layout above.
const FeatureSchema = 1

var sizeWords = map[string]float64{
	"atto": 1, "femto": 2, "pico": 3, "nano": 4, "tiny": 5, "xxs": 5, "xxsmall": 5, "xs": 6, "xsmall": 6,
	"small": 7, "s": 7, "medium": 8, "m": 8, "base": 9, "b": 9, "large": 10, "l": 10, "xlarge": 11, "xl": 11,
	"huge": 12, "h": 12, "giant": 13, "g": 13, "gigantic": 14, "enormous": 15,
}

var precisionCode = map[string]float64{"fp32": 0, "amp": 1, "fp16": 1, "bf16": 2, "fp8": 3}

var launcherCode = map[string]float64{"python": 1, "torchrun": 2, "deepspeed": 3, "accelerate": 4, "srun": 5, "mpirun": 6, "horovodrun": 7}

var attentionWords = []string{"vit", "deit", "beit", "eva", "swin", "cait", "xcit", "former", "bert", "gpt",
	"llama", "t5", "transformer", "mixer", "mlp", "coat", "levit", "pit", "tnt", "crossvit", "davit", "maxvit",
	"twins", "visformer", "sam", "siglip", "clip", "hiera", "mistral", "opt", "bloom", "falcon", "qwen"}

// vector turns a job's features into the forests' input.
func vector(f Features, timeLimitSec float64) []float64 {
	v := make([]float64, nFeatures)
	for i := range v {
		v[i] = math.NaN()
	}
	logOf := func(x float64) float64 {
		if x > 0 {
			return math.Log2(x)
		}
		return math.NaN()
	}
	v[fLogBatch] = logOf(f.BatchSize)
	params := f.Params
	if params <= 0 {
		params = ModelParams(f.Model)
	}
	v[fLogParams] = logOf(params)
	if f.ImageSize > 0 {
		v[fImageSize] = f.ImageSize
	}
	v[fLogSeqLen] = logOf(f.SeqLen)
	if c, ok := precisionCode[f.Precision]; ok {
		v[fPrecision] = c
	}
	v[fZeRO] = float64(f.ZeROStage)
	v[fGPUs] = float64(max(f.GPUs, 1))
	if f.GradAccum > 0 {
		v[fGradAccum] = f.GradAccum
	}
	name := f.Model
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	nums := 0
	for _, tok := range strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if s, ok := sizeWords[tok]; ok {
			v[fSizeWord] = s
			continue
		}
		if strings.HasPrefix(tok, "patch") {
			if n, err := strconv.Atoi(tok[5:]); err == nil {
				v[fPatch] = float64(n)
				continue
			}
		}
		if n, ok := trailingNumber(tok); ok {
			// A last token in 96..1024 is an input resolution (vit_..._384).
			if tok == strconv.Itoa(int(n)) && n >= 96 && n <= 1024 && math.IsNaN(v[fImageSize]) && nums > 0 {
				v[fImageSize] = n
				continue
			}
			switch nums {
			case 0:
				v[fNameNum1] = n
			case 1:
				v[fNameNum2] = n
			}
			nums++
		}
	}
	v[fAttention] = 0
	for _, w := range attentionWords {
		if strings.Contains(name, w) {
			v[fAttention] = 1
			break
		}
	}
	if c, ok := launcherCode[f.Launcher]; ok {
		v[fLauncher] = c
	}
	v[fLogTimeLimit] = logOf(timeLimitSec)
	v[fLogSteps] = logOf(f.Steps)
	if f.Epochs > 0 {
		v[fEpochs] = f.Epochs
	}
	return v
}

// trailingNumber reads the digits ending a token ("resnet50" -> 50, "b7" -> 7).
func trailingNumber(tok string) (float64, bool) {
	i := len(tok)
	for i > 0 && tok[i-1] >= '0' && tok[i-1] <= '9' {
		i--
	}
	if i == len(tok) || len(tok)-i > 6 {
		return 0, false
	}
	n, err := strconv.Atoi(tok[i:])
	return float64(n), err == nil
}
