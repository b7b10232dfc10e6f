package predictor

import (
	"cmp"
	"fmt"
	"math"
	"strings"
)

// A transformer's training memory is largely a formula of its shape and
// of how it is trained, which is what this file computes, term by term,
// per GPU:
//
//   - the model's state: weights (16-bit, fp32 masters under AMP, or 4-bit
//     frozen weights under QLoRA, whose embeddings stay 16-bit), the
//     gradients and the optimizer's moments of what is trained (every
//     weight, or only the LoRA adapters), sharded across data-parallel
//     ranks by ZeRO's stage (3 is FSDP's full sharding) and across tensor
//     and pipeline parallel ranks;
//   - activations kept for the backward pass: per layer and token, the
//     inputs of the norms, projections and MLP (6h + 2·kv + 4·ffn values
//     for a gated MLP, as Llama has; 6h + 2·ffn for GELU's), and the
//     attention scores where no fused kernel avoids them (BERT's eager
//     attention); with activation checkpointing, one value of h a layer
//     and token plus one layer recomputed;
//   - the logits and their fp32 copies in the loss (chunked losses keep
//     one chunk);
//   - under mixed precision with fp32 weights (autocast), the 16-bit copy
//     of each weight autocast makes and keeps for the backward pass, and
//     the norms' inputs in fp32 (autocast runs the norms in fp32, and the
//     residual stream that feeds them stays fp32).
//
// TestTransformerPublished checks it against measurements that projects
// published (predictor/testdata/transformer-memory-published.csv, each
// row citing its source).

// TransformerShape is a transformer's architecture.
type TransformerShape struct {
	Params float64 // parameters in all
	Layers float64
	Hidden float64 // the model's width, h
	FFN    float64 // the MLP's inner width
	Vocab  float64
	KVDim  float64 // width of the keys and values (h, or less under grouped-query attention)
	Heads  float64 // attention heads (for attention without a fused kernel)
	// GatedMLP is true for SwiGLU-style MLPs (gate, up, down), false for
	// GELU's (fc1, fc2).
	GatedMLP bool
	// EagerAttention is true when the attention scores are materialised
	// (no flash or memory-efficient kernel).
	EagerAttention bool
	// TanhGELU is true when the MLP's activation is GELU's tanh
	// approximation written out as elementwise operations, as Hugging
	// Face's gelu_new (GPT-2, Phi) is: autograd keeps three more
	// ffn-wide tensors a token (the tanh, 0.5·x and 1 + tanh) than a
	// fused GELU keeps.
	TanhGELU bool
}

// TrainSetup is how a transformer is trained, as far as memory goes.
type TrainSetup struct {
	Shape TransformerShape
	// Method is "full", "lora" or "qlora".
	Method string
	// Targets are the matrices LoRA adapts: "qv", "attn" (q, k, v, o),
	// "mlp" or "all".
	Targets string
	Rank    float64
	// Precision is "bf16" (weights and optimizer state in 16 bits: pure
	// bf16), "amp" (fp32 weights, 16-bit compute) or "fp32".
	Precision string
	// Optimizer is "adamw" (moments in the weights' dtype), "adamw32"
	// (fp32 moments whatever the weights), "adamw8bit", "adafactor",
	// "sgd", or "paged" (bitsandbytes' paged AdamW, whose state goes to
	// the host when the GPU is full: none of it is counted).
	Optimizer string
	// OptimizerInBackward steps each weight as its gradient is ready, so
	// that the gradients are never all held.
	OptimizerInBackward bool
	ZeRO                int // 0-3; FSDP's full sharding is 3
	GPUs                int // data-parallel ranks the state shards over
	TP, PP              int // tensor and pipeline parallel degrees
	MicroBatch, SeqLen  float64
	Checkpointing       bool
	// ChunkedLoss computes the loss over chunks of the logits.
	ChunkedLoss bool
}

// MemTerm is one term of the formula, MiB per GPU.
type MemTerm struct {
	Name string
	MiB  float64
}

// Bytes per 4-bit weight under QLoRA: NF4 halves a byte, plus its
// quantisation constants (an fp32 absmax a block of 64, itself quantised
// to 8 bits under double quantisation: about 0.127 bits a weight).
const nf4Bytes = 0.5 + 0.127/8

// TransformerMemMiB is the formula's peak memory per GPU, MiB, with its
// terms; false when the setup lacks what it needs (a shape, a batch, a
// sequence length).
func TransformerMemMiB(s TrainSetup) (float64, []MemTerm, bool) {
	sh := s.Shape
	if sh.Params <= 0 || sh.Layers <= 0 || sh.Hidden <= 0 || s.MicroBatch <= 0 || s.SeqLen <= 0 {
		return 0, nil, false
	}
	ffn := sh.FFN
	if ffn <= 0 {
		ffn = 4 * sh.Hidden
	}
	kv := sh.KVDim
	if kv <= 0 {
		kv = sh.Hidden
	}
	h, L := sh.Hidden, sh.Layers
	tp, pp := float64(max(s.TP, 1)), float64(max(s.PP, 1))
	dp := float64(max(s.GPUs, 1))
	embed := sh.Vocab * h // the input embedding (an output head of the same size is counted in Params)

	// Bytes a weight takes, and what is trained.
	wBytes, stateBytes := 2.0, 2.0 // pure bf16: weights, grads and Adam's moments in 16 bits
	switch s.Precision {
	case "amp", "fp32":
		wBytes, stateBytes = 4, 4
	}
	var weights, trainable float64
	switch s.Method {
	case "lora", "qlora":
		base := sh.Params * 2
		if s.Method == "qlora" {
			base = (sh.Params-2*embed)*nf4Bytes + 2*embed*2
		}
		if s.Precision == "fp32" {
			base = sh.Params * 4
		}
		weights = base
		trainable = loraParams(s, h, kv, ffn)
		stateBytes = 4 // adapters train in fp32 (PEFT's default) or bf16 (a rounding error either way)
	default:
		weights = sh.Params * wBytes
		trainable = sh.Params
	}
	gradBytes := stateBytes
	if s.Method == "full" && s.Precision == "amp" && s.ZeRO >= 1 {
		// DeepSpeed's ZeRO: 16-bit weights and gradients, and the fp32
		// masters in the optimizer's (sharded) state beside its moments,
		// as the ZeRO paper counts them (2 + 2 + 12 bytes a parameter).
		weights, gradBytes = sh.Params*2, 2
	}
	grads := trainable * gradBytes
	if s.OptimizerInBackward {
		grads = trainable / L * stateBytes // one layer's at a time
	}
	var optim float64
	switch s.Optimizer {
	case "adamw32":
		optim = trainable * 8
	case "adamw8bit":
		optim = trainable * 2
	case "adafactor":
		optim = trainable / math.Sqrt(math.Max(trainable/L, 1)) * 4 // row and column factors
	case "sgd", "paged":
		optim = 0
	default:
		optim = trainable * 2 * stateBytes
	}
	if s.Method == "full" && s.Precision == "amp" && s.ZeRO >= 1 {
		optim += trainable * 4 // the fp32 masters
	}
	// Sharding: ZeRO 1 the optimizer, 2 and the gradients, 3 and the weights.
	if s.ZeRO >= 1 {
		optim /= dp
	}
	if s.ZeRO >= 2 {
		grads /= dp
	}
	gathered := 0.0
	if s.ZeRO >= 3 {
		weights /= dp
		gathered = 2 * (sh.Params / L) * 2 // a layer gathered, the next prefetched, in 16 bits
	}
	casts := 0.0
	if s.Precision == "amp" && s.Method == "full" && s.ZeRO == 0 {
		casts = sh.Params * 2 // autocast's 16-bit weight copies
	}
	mp := tp * pp
	weights, grads, optim, casts = weights/mp, grads/mp, optim/mp, casts/mp

	// Activations, 16-bit under bf16 and AMP.
	aBytes := 2.0
	if s.Precision == "fp32" {
		aBytes = 4
	}
	tokens := s.MicroBatch * s.SeqLen
	perToken := 6*h + 2*kv + 4*ffn // a gated MLP: gate, up, its activation, their product
	if !sh.GatedMLP {
		perToken = 6*h + 2*kv + 2*ffn
	}
	if sh.TanhGELU && !sh.GatedMLP {
		perToken += 3 * ffn
	}
	if sh.EagerAttention && sh.Heads > 0 {
		perToken += 2.5 * sh.Heads * s.SeqLen // scores, softmax, dropout mask
	}
	layer := tokens * perToken * aBytes / tp
	if s.Precision == "amp" {
		layer += tokens * 2 * h * 2 // two norms a layer take fp32 inputs: 2 more bytes each
	}
	acts := layer * L / pp
	if s.Checkpointing {
		acts = tokens*h*aBytes*L/pp + layer
	}
	logits := tokens * sh.Vocab * (2 + 4 + 4) / tp // 16-bit logits, their fp32 copy and its gradient
	if s.ChunkedLoss {
		logits = tokens * sh.Vocab * 2 / tp
	}

	const mib = 1 << 20
	terms := []MemTerm{
		{"weights", weights / mib}, {"gradients", grads / mib}, {"optimizer", optim / mib},
		{"gathered layers", gathered / mib}, {"16-bit weight copies", casts / mib}, {"activations", acts / mib},
		{"logits", logits / mib},
	}
	total := 0.0
	for _, t := range terms {
		total += t.MiB
	}
	if math.IsNaN(total) || math.IsInf(total, 0) {
		return 0, nil, false
	}
	return total, terms, true
}

// loraParams counts the adapters' parameters: rank·(in+out) per adapted
// matrix and layer.
func loraParams(s TrainSetup, h, kv, ffn float64) float64 {
	r := s.Rank
	if r <= 0 {
		r = 8
	}
	attnQV := r*(h+h) + r*(h+kv)
	attn := attnQV + r*(h+kv) + r*(h+h)
	mlp := 2*r*(h+ffn) + r*(ffn+h)
	per := attnQV
	switch s.Targets {
	case "attn":
		per = attn
	case "mlp":
		per = mlp
	case "all":
		per = attn + mlp
	}
	return per * s.Shape.Layers
}

// FormulaUpper is the formula's upper bound over its median: the 90%
// split-conformal quantile of measured/formula on the calibration half of
// the published measurements (TestFormulaUpper recomputes it and reports
// the miss rate on the other half).
const FormulaUpper = 1.93

// llmFamilies are the transformer families the formula reads a shape for
// from the parameter count alone; gatedFamilies have a SwiGLU MLP.
var (
	llmFamilies = []string{"llama", "mistral", "mixtral", "qwen", "gemma", "phi", "gpt", "opt", "bloom", "falcon",
		"deepseek", "olmo", "pythia", "mpt", "starcoder", "codellama", "vicuna", "yi", "baichuan", "internlm",
		"chatglm", "nemotron", "granite", "smollm", "tinyllama", "stablelm", "jais", "bert", "roberta", "deberta",
		"t5", "bart", "electra", "xlm", "mt5", "flan", "zephyr", "tulu", "olmoe", "dbrx", "minicpm"}
	gatedFamilies = []string{"llama", "mistral", "mixtral", "qwen", "gemma", "deepseek", "olmo", "yi", "baichuan",
		"internlm", "granite", "smollm", "tinyllama", "codellama", "vicuna", "zephyr", "tulu", "minicpm"}
)

// publishedShapes are the architectures of models people train by name,
// from their published configurations (config.json): layers, width, MLP
// width, vocabulary, key/value width, heads. A job naming one (or a
// fine-tune of it: "llama-2-7b-chat-hf", "qwen2.5-7b-instruct") is sized
// from its real shape rather than one guessed from its parameter count.
var publishedShapes = map[string]TransformerShape{
	"gpt2":           {Params: 124e6, Layers: 12, Hidden: 768, FFN: 3072, Vocab: 50257, Heads: 12, TanhGELU: true},
	"distilgpt2":     {Params: 82e6, Layers: 6, Hidden: 768, FFN: 3072, Vocab: 50257, Heads: 12, TanhGELU: true},
	"gpt2-medium":    {Params: 355e6, Layers: 24, Hidden: 1024, FFN: 4096, Vocab: 50257, Heads: 16, TanhGELU: true},
	"gpt2-large":     {Params: 774e6, Layers: 36, Hidden: 1280, FFN: 5120, Vocab: 50257, Heads: 20, TanhGELU: true},
	"gpt2-xl":        {Params: 1.558e9, Layers: 48, Hidden: 1600, FFN: 6400, Vocab: 50257, Heads: 25, TanhGELU: true},
	"phi-2":          {Params: 2.78e9, Layers: 32, Hidden: 2560, FFN: 10240, Vocab: 51200, Heads: 32, TanhGELU: true},
	"bert-base":      {Params: 110e6, Layers: 12, Hidden: 768, FFN: 3072, Vocab: 30522, Heads: 12},
	"bert-large":     {Params: 336e6, Layers: 24, Hidden: 1024, FFN: 4096, Vocab: 30522, Heads: 16},
	"roberta-base":   {Params: 125e6, Layers: 12, Hidden: 768, FFN: 3072, Vocab: 50265, Heads: 12},
	"roberta-large":  {Params: 355e6, Layers: 24, Hidden: 1024, FFN: 4096, Vocab: 50265, Heads: 16},
	"llama-2-7b":     {Params: 6.74e9, Layers: 32, Hidden: 4096, FFN: 11008, Vocab: 32000, KVDim: 4096, Heads: 32, GatedMLP: true},
	"llama-2-13b":    {Params: 13.0e9, Layers: 40, Hidden: 5120, FFN: 13824, Vocab: 32000, KVDim: 5120, Heads: 40, GatedMLP: true},
	"llama-2-70b":    {Params: 69.0e9, Layers: 80, Hidden: 8192, FFN: 28672, Vocab: 32000, KVDim: 1024, Heads: 64, GatedMLP: true},
	"llama-3-8b":     {Params: 8.03e9, Layers: 32, Hidden: 4096, FFN: 14336, Vocab: 128256, KVDim: 1024, Heads: 32, GatedMLP: true},
	"llama-3.1-8b":   {Params: 8.03e9, Layers: 32, Hidden: 4096, FFN: 14336, Vocab: 128256, KVDim: 1024, Heads: 32, GatedMLP: true},
	"llama-3-70b":    {Params: 70.6e9, Layers: 80, Hidden: 8192, FFN: 28672, Vocab: 128256, KVDim: 1024, Heads: 64, GatedMLP: true},
	"llama-3.1-70b":  {Params: 70.6e9, Layers: 80, Hidden: 8192, FFN: 28672, Vocab: 128256, KVDim: 1024, Heads: 64, GatedMLP: true},
	"llama-3.2-1b":   {Params: 1.24e9, Layers: 16, Hidden: 2048, FFN: 8192, Vocab: 128256, KVDim: 512, Heads: 32, GatedMLP: true},
	"llama-3.2-3b":   {Params: 3.21e9, Layers: 28, Hidden: 3072, FFN: 8192, Vocab: 128256, KVDim: 1024, Heads: 24, GatedMLP: true},
	"mistral-7b":     {Params: 7.24e9, Layers: 32, Hidden: 4096, FFN: 14336, Vocab: 32000, KVDim: 1024, Heads: 32, GatedMLP: true},
	"tinyllama-1.1b": {Params: 1.1e9, Layers: 22, Hidden: 2048, FFN: 5632, Vocab: 32000, KVDim: 256, Heads: 32, GatedMLP: true},
	"qwen2.5-0.5b":   {Params: 494e6, Layers: 24, Hidden: 896, FFN: 4864, Vocab: 151936, KVDim: 128, Heads: 14, GatedMLP: true},
	"qwen2.5-1.5b":   {Params: 1.54e9, Layers: 28, Hidden: 1536, FFN: 8960, Vocab: 151936, KVDim: 256, Heads: 12, GatedMLP: true},
	"qwen2.5-3b":     {Params: 3.09e9, Layers: 36, Hidden: 2048, FFN: 11008, Vocab: 151936, KVDim: 256, Heads: 16, GatedMLP: true},
	"qwen2.5-7b":     {Params: 7.62e9, Layers: 28, Hidden: 3584, FFN: 18944, Vocab: 152064, KVDim: 512, Heads: 28, GatedMLP: true},
	"qwen2.5-14b":    {Params: 14.8e9, Layers: 48, Hidden: 5120, FFN: 13824, Vocab: 152064, KVDim: 1024, Heads: 40, GatedMLP: true},
}

// shapeOf is the published shape of a model, or of the model a fine-tune's
// name starts with; false for a model not in publishedShapes.
func shapeOf(model string) (TransformerShape, bool) {
	m := strings.ToLower(strings.ReplaceAll(model, "_", "-"))
	m = m[strings.LastIndexByte(m, '/')+1:]
	m = strings.TrimPrefix(m, "meta-")
	best, found := "", false
	for k := range publishedShapes {
		if (m == k || strings.HasPrefix(m, k+"-")) && len(k) > len(best) {
			best, found = k, true
		}
	}
	return publishedShapes[best], found
}

// shapeName names the published model of a family with the given shape:
// gpt2 with 24 layers of width 1024 is gpt2-medium. "" when the family
// has no model of that shape here, or more than one.
func shapeName(family string, layers, hidden float64) string {
	family = strings.ToLower(family)
	name := ""
	for k, sh := range publishedShapes {
		if sh.Layers == layers && sh.Hidden == hidden && strings.HasPrefix(k, family) {
			if name != "" {
				return ""
			}
			name = k
		}
	}
	return name
}

func familyIn(model string, fams []string) bool {
	m := strings.ToLower(model)
	m = m[strings.LastIndexByte(m, '/')+1:]
	for _, f := range fams {
		if strings.HasPrefix(m, f) || strings.Contains(m, "-"+f) || strings.Contains(m, "_"+f) {
			return true
		}
	}
	return false
}

// vocabOf is the vocabulary of a model family, for its logits.
func vocabOf(model string) float64 {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "llama-3") || strings.Contains(m, "llama3") || strings.Contains(m, "llama_3"):
		return 128256
	case strings.Contains(m, "qwen"):
		return 151936
	case strings.Contains(m, "gemma"):
		return 256000
	case strings.Contains(m, "gpt2") || strings.Contains(m, "gpt-2"):
		return 50257
	case strings.Contains(m, "bert") && !strings.Contains(m, "roberta"):
		return 30522
	case strings.Contains(m, "roberta") || strings.Contains(m, "opt") || strings.Contains(m, "bart"):
		return 50265
	}
	return 32000 // Llama 2, Mistral and their many fine-tunes
}

// FormulaSetup reads a training setup from a job's features, and says
// what it had to assume; false when the job is not a transformer the
// formula can size (no parameter count of at least 100M, no batch size,
// or neither a sequence length nor a transformer family's name).
func FormulaSetup(f Features) (TrainSetup, []string, bool) {
	p := f.Params
	if p <= 0 {
		p = ModelParams(f.Model)
	}
	if p < 1e8 || f.BatchSize <= 0 || f.SeqLen <= 0 && !familyIn(f.Model, llmFamilies) {
		return TrainSetup{}, nil, false
	}
	var assumed []string
	sh := TransformerShape{Params: p, Layers: f.Layers, Hidden: f.Hidden, Vocab: vocabOf(f.Model),
		GatedMLP: familyIn(f.Model, gatedFamilies)}
	if known, ok := shapeOf(f.Model); ok && (sh.Layers <= 0 || sh.Hidden <= 0) && (f.Params <= 0 || f.Params == known.Params) {
		sh = known
	}
	if sh.Layers <= 0 || sh.Hidden <= 0 {
		// Width about 128 per layer, and 12·L·h² weights, as in Llama's
		// and GPT's sizes.
		sh.Hidden = math.Max(128, 128*math.Round(math.Cbrt(p*128/12)/128))
		sh.Layers = math.Max(1, math.Round(p/(12*sh.Hidden*sh.Hidden)))
		assumed = append(assumed, fmt.Sprintf("shape from %.3g parameters: %g layers of width %g", p, sh.Layers, sh.Hidden))
	}
	if sh.GatedMLP && sh.FFN <= 0 {
		sh.FFN = 2.6875 * sh.Hidden
	}
	s := TrainSetup{Shape: sh, Method: cmp.Or(f.Tuning, "full"), Rank: f.LoRARank, Targets: "qv",
		Optimizer: cmp.Or(f.Optimizer, "adamw"), ZeRO: f.ZeROStage, GPUs: f.GPUs, MicroBatch: f.BatchSize,
		SeqLen: f.SeqLen, Checkpointing: f.Checkpointing}
	if s.Method != "full" && s.Rank <= 0 {
		s.Rank = 8
		assumed = append(assumed, "LoRA rank 8 on q and v")
	}
	if s.SeqLen <= 0 {
		s.SeqLen = 2048
		assumed = append(assumed, "sequence length 2048")
	}
	prog := strings.ToLower(f.Program)
	switch {
	case f.Precision == "fp32":
		s.Precision = "fp32"
	case strings.Contains(prog, "finetune_") || strings.HasPrefix(prog, "tune") || strings.HasPrefix(prog, "litgpt"):
		s.Precision = "bf16" // torchtune and litgpt train in pure bf16
	case f.Precision == "":
		s.Precision = "amp"
		assumed = append(assumed, "mixed precision with fp32 weights")
	default:
		s.Precision = "amp" // HF Trainer, DeepSpeed, Lightning: fp32 masters beside 16-bit compute
	}
	return s, assumed, true
}

// FormulaPredict is the formula's peak memory per GPU for a job, with a
// sentence saying how it was reached; false when FormulaSetup is.
func FormulaPredict(f Features) (Quantiles, string, bool) {
	s, assumed, ok := FormulaSetup(f)
	if !ok {
		return Quantiles{}, "", false
	}
	mib, terms, ok := TransformerMemMiB(s)
	if !ok {
		return Quantiles{}, "", false
	}
	mib += contextMiB
	var parts []string
	for _, t := range terms {
		if t.MiB >= 1 {
			parts = append(parts, fmt.Sprintf("%s %.0f", t.Name, t.MiB))
		}
	}
	why := fmt.Sprintf("memory by formula (%s, %s, batch %g × %g tokens): %s MiB and the CUDA context",
		s.Method, s.Precision, s.MicroBatch, s.SeqLen, strings.Join(parts, " + "))
	if len(assumed) > 0 {
		why += "; assumed: " + strings.Join(assumed, ", ")
	}
	return Quantiles{P50: mib, Hi: mib * FormulaUpper}, why, true
}
