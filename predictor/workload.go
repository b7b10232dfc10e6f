package predictor

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// A job's workload name stands in for its model where nothing in the
// script names one: the project word of a job name (drq_breakout_all is
// drq, train_mdlm is mdlm, MEGAN_f10_pat4 is megan) or of a program's or
// directory's name once the words any project uses are gone
// (roberta-training is roberta). It is reported with ModelFrom "path": the
// name of a workload, not a claim about a model's size.

// Place is a name of the job's own that a model standing in for one was
// read from: the program's file or module (train_gnn.py, -m
// the_well.benchmark.train), the directory the program is in
// (mingpt/main.py), or the one the command runs in (cd .../cifar10).
type Place struct {
	Kind PlaceKind
	Path string // the program, with its directory for ProgramDir; the directory for WorkDir
}

// PlaceKind says which of a job's names a Place is.
type PlaceKind uint8

// The places a stand-in is read from; the zero Place is none.
const (
	ProgramName PlaceKind = iota + 1 // the program's own name, or its module's
	ProgramDir                       // the directory the program is in
	WorkDir                          // the directory the command runs in
)

// String is the place as the model's source is written: "program
// mingpt/main.py", "cd /scratch/cifar10".
func (p Place) String() string {
	switch p.Kind {
	case ProgramName, ProgramDir:
		return "program " + p.Path
	case WorkDir:
		return "cd " + p.Path
	}
	return ""
}

// jobNameSource is where a model read from the job's name came from.
const jobNameSource = "#SBATCH --job-name"

// JobNameOnly reports whether the model is no more than a word of the
// job's name standing in for it (model_from "path", from the job name):
// the trained predictor does not take it for a model, as a job named
// report-ok is no evidence of what it trains.
func (f Features) JobNameOnly() bool {
	return f.ModelFrom == "path" && f.From["model"] == jobNameSource
}

// learnedName is the model name the trained predictor matches neighbours
// by: none for a job-name stand-in.
func learnedName(f Features) string {
	if f.JobNameOnly() {
		return ""
	}
	return f.Model
}

// workloadName returns the project word of a job's name, with the version
// or size that follows it ("dino-v3"), or "" when the name holds only
// words any job uses (a stage, a framework, a machine, a counter) and
// datasets.
func workloadName(name string) string {
	if unexpanded(name) || templateHole(name) || placeholder(name) {
		return "" // $SLURM_JOB_NAME, or a template's hole: <YOUR_JOB_NAME>, {exp}, your_job
	}
	name = spelledOut(name)
	toks := strings.FieldsFunc(name, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.'
	})
	if slices.ContainsFunc(toks, dotWords) {
		// mbart.en.gut.keywords: dots between words part them, as a
		// version's (qwen2.5, v1.5) do not.
		var split []string
		for _, t := range toks {
			if dotWords(t) {
				split = append(split, strings.FieldsFunc(t, func(r rune) bool { return r == '.' })...)
			} else {
				split = append(split, t)
			}
		}
		toks = split
	}
	for i, t := range toks {
		if t != strings.ToLower(t) && t != strings.ToUpper(t) {
			t = trimWorkWords(t) // OpenFold2Train is OpenFold2
		}
		toks[i] = strings.ToLower(strings.Trim(t, "."))
	}
	if a := rlAlgorithm(strings.Join(toks, "_")); a != "" {
		return a // PPO-Breakout: the agent's algorithm, on its environment
	}
	toks = toks[:dataCut(len(toks), func(k int) string { return toks[k] })]
	for i, t := range toks {
		if !projectWord(t) || dataWords[t] {
			continue
		}
		if f := tokAt(toks, i+1); familyWord(f) && projectWord(f) && !familyWord(t) && !archModifiers[t] && !wordFamilies[strings.TrimRight(f, "0123456789.")] {
			// ct2d_unet, basestats_efficientnet, EEL5840_YOLO: a project's,
			// a course's or a user's word before the family trained (where
			// the word is no part of an architecture's name, as efficient
			// is of EfficientViT, and the family's no English word, as
			// algal-bloom's is).
			if v := tokAt(toks, i+2); isSize(v) || versionWord(v) || patchVariant(v) {
				return f + "-" + v
			}
			return f
		}
		if i+1 < len(toks) && (isSize(toks[i+1]) || versionWord(toks[i+1]) || variantWords[toks[i+1]] && len(toks[i+1]) > 1 ||
			archWords[toks[i+1]] || patchVariant(toks[i+1]) || familyWord(toks[i+1])) {
			return t + "-" + toks[i+1] // dino-v3, kat-tiny, crystal-gnn, jit-b16, efficient-vit
		}
		if !familyWord(t) {
			// A course, a user or a site before the model family the job
			// trains: sta561-pest-yolo is yolo, masuda_llava-ft is llava.
			for j := i + 2; j < len(toks); j++ {
				if familyWord(toks[j]) && projectWord(toks[j]) {
					if j+1 < len(toks) && (isSize(toks[j+1]) || versionWord(toks[j+1]) || patchVariant(toks[j+1])) {
						return toks[j] + "-" + toks[j+1]
					}
					return toks[j]
				}
			}
		}
		return t
	}
	return ""
}

var (
	// archModifiers are the words architectures' names put before a
	// family's: EfficientViT, Wide-ResNet, MobileViT, DenseCLIP.
	archModifiers = set("efficient", "wide", "mobile", "dense", "deformable", "tiny", "fast", "faster", "mask", "cascade",
		"dual", "light", "squeeze", "shuffle", "conv", "point", "graph", "vision", "video", "audio", "speech", "music", "text",
		"image", "long", "big", "deep", "mega", "micro", "nano", "mini", "open", "flash", "med", "bio", "sci", "code")
	// wordFamilies are the families whose names are English words too:
	// algal-bloom and 29dof-falcon name no LLM.
	wordFamilies = set("opt", "bloom", "falcon", "phi", "yi", "flan", "ernie", "albert", "electra", "pegasus", "marian",
		"granite", "mamba", "clip", "flux", "dino")
)

// dotWords reports whether a word of a name is words joined by dots, each
// starting with a letter: en.gut, not qwen2.5 or 1.3b.
func dotWords(t string) bool {
	parts := strings.Split(strings.Trim(t, "."), ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || !unicode.IsLetter(rune(p[0])) || versionWord(strings.ToLower(p)) {
			return false
		}
	}
	return true
}

// familyWord reports whether a word is a model family's name, with at most
// its version run in: vit, yolo, llava, yolov8, qwen2.
func familyWord(t string) bool {
	for _, m := range modelFamilies {
		if rest, ok := strings.CutPrefix(t, m); ok && versionTail(rest) {
			return true
		}
	}
	return false
}

// patchVariant reports whether a word is a vision transformer's size and
// patch, as ViT, DiT and their kin name them: b16 (B/16), l14, s8, h14.
func patchVariant(t string) bool {
	return len(t) >= 2 && len(t) <= 3 && strings.IndexByte("sblhg", t[0]) >= 0 && isDigits(t[1:])
}

// projectWord reports whether a word of a name can be a project's: three
// or more characters, two of them letters, and none of the words any job
// uses.
func projectWord(t string) bool {
	if len(t) < 3 || lowerLetters(t) < 2 || counterWord(t) || isSize(t) || versionWord(t) {
		return false
	}
	if rest, ok := strings.CutPrefix(t, "my"); ok && rest != "" && !projectWord(rest) {
		return false // myrun, my_job
	}
	return !genericPrograms[t] && !stemWords[t] && !jobWords[t] && !pathWords[t] && !codeDirs[t] &&
		!variantWords[t] && validModel(t) && len(ReadGPUNames(t)) == 0
}

// lowerLetters counts the letters a to z in a name.
func lowerLetters(s string) int {
	n := 0
	for _, c := range s {
		if c >= 'a' && c <= 'z' {
			n++
		}
	}
	return n
}

// counterWord reports whether a word counts runs or settings rather than
// naming anything: one or two letters then digits (f10, bs256, e42, lr3).
func counterWord(t string) bool {
	i := 0
	for i < len(t) && t[i] >= 'a' && t[i] <= 'z' {
		i++
	}
	return i <= 2 && i < len(t) && isDigits(t[i:]) || i > 2 && i < len(t) && isDigits(t[i:]) && counterPrefixes[t[:i]]
}

// dataKinds are the jobWords that say what kind of data a job learns from.
var dataKinds = set("language", "vision", "speech", "audio", "video", "text", "image", "images")

// versionWord reports whether a word is a release's version: v3, v1.5.
func versionWord(t string) bool {
	return len(t) > 1 && t[0] == 'v' && (isDigits(t[1:]) || isVersion(t[1:]))
}

var (
	// jobWords are what job, program and directory names say besides the
	// workload: the stage, the framework, the machine. A task or a dataset
	// (translation, cifar10) is kept: it names a workload (Gavel's are
	// named so).
	jobWords = set(
		// stages and kinds of run
		"training", "trainer", "fine", "tuning", "finetuning", "finetuned", "pretrained", "pretrain", "tune",
		"tuned", "sweep", "array", "example", "examples", "hello", "world", "tutorial", "template", "sample",
		"samples", "check", "smoke", "quick", "fast", "slow", "full", "short", "long", "best", "last", "first",
		"second", "final", "old", "real", "fixed", "save", "load", "and", "the", "for", "with", "from", "to", "only",
		"home", "exam", "homework", "project", "proj", "thesis", "workspace", "work", "code", "core", "cluster",
		"prepare", "preprocess", "process", "prep", "setup", "install", "installation", "env", "environment", "submit", "launcher", "wrapper",
		"script", "scripts", "batch", "sbatch", "srun", "slurm", "hpc", "node", "nodes", "multinode", "multigpu",
		"singlegpu", "gpu", "gpus", "cpu", "size", "sizes", "cuda", "nccl", "mpi", "ddp", "fsdp", "deepspeed", "horovod",
		"accelerate", "lightning", "pytorch", "torch", "tensorflow", "keras", "jax", "flax", "hf", "huggingface", "ray",
		"transformers", "peft", "trl", "tf", "pt", "vllm", "megatron", "nemo", "torchrun", "distributed", "parallel",
		"cleanrl", "rllib", "sb3",
		"pipeline", "inference", "validation", "val", "valid", "testing", "tests", "evaluation", "eval",
		"predict", "prediction", "score", "scoring", "benchmark", "bench", "results", "result", "output",
		"outputs", "logs", "log", "checkpoint", "ckpt", "resume", "continue", "restart", "retrain", "lora",
		"qlora", "sft", "dpo", "rlhf", "instruct", "chat", "seed", "run", "runs", "exp", "expt", "experiment",
		"experiments", "trial", "version", "default", "custom", "base", "baseline", "ablation", "probe", "name",
		"probing", "linear",
		// what kind of data, not which (dataKinds)
		"language", "vision", "speech", "audio", "video", "text", "image", "images",
		// people and places
		"user", "users", "mine", "ours", "lab", "group",
		// a clone's branch
		"master", "official", "dev",
		// how a run went
		"optimized", "optimised", "combined", "harness", "reproduce", "reproduction", "improved", "modified",
		"updated", "simple", "basic", "standard", "original", "latest", "debugging",
		// where code is tried
		"benchmarks", "playground", "sandbox", "notebooks", "scratch", "other", "tmp", "temp", "misc", "common",
		"pre", "post", "mixed", "precision",
		// how a model learns, never which
		"contrastive", "supervised", "unsupervised", "selfsupervised", "ssl", "distill", "distillation",
		// a package's parts
		"engine", "runner", "runners", "entrypoints", "pipelines", "apps", "modules")
	// dataWords are datasets. A directory named for one names a workload
	// (Gavel's cifar10); a job named for one trains some model on it
	// (horovod_tensorflow_mnist), so its project word is another.
	dataWords = set("cifar", "cifar10", "cifar100", "mnist", "fmnist", "svhn", "stl10", "tinyimagenet", "imagenet", "imagenet1k", "imagenet21k", "coco",
		"voc", "cityscapes", "ade20k", "kitti", "nuscenes", "waymo", "shakespeare", "wikitext", "openwebtext", "owt",
		"pile", "glue", "superglue", "squad", "imdb", "sst2", "mnli", "qqp", "librispeech", "commonvoice", "era5",
		"celeba", "celebahq", "ffhq", "lsun", "gsm8k", "alpaca", "dolly", "redpajama", "fineweb", "slimpajama",
		"hotpotqa", "mmlu", "humaneval", "ultrachat", "sharegpt", "laion", "datacomp", "coyo", "cc3m", "cc12m", "kinetics", "ucf101",
		"zinc", "qm9", "md17", "tox21", "pdbbind", "mvtec", "mvtecad", "mvtecloco", "modelnet", "modelnet40", "shapenet",
		"scannet", "s3dis",
		// reinforcement learning's environments and suites
		"cheetah", "halfcheetah", "walker", "hopper", "humanoid", "cartpole", "pendulum", "acrobot", "reacher",
		"swimmer", "quadruped", "breakout", "pong", "atari", "mujoco", "procgen", "minigrid", "crafter", "nethack",
		"libero", "metaworld", "robosuite", "maniskill", "calvin")
	// counterPrefixes are the longer words a counter starts with: step500,
	// epoch10, fold3, run12.
	counterPrefixes = set("step", "steps", "epoch", "epochs", "fold", "run", "iter", "seed", "part", "shard",
		"split", "trial", "exp", "job", "task", "node", "nodes", "gpu", "gpus", "bs", "lr", "train", "test", "model",
		"config", "cfg", "case", "ver", "base", "ckpt", "checkpoint",
		// a date's month and day or year: test_mar23, run_oct2024
		"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec")
)

// rlAlgorithm is the reinforcement-learning algorithm a name says it runs
// (ppo_atari, train_ppo, pong_dqn_activity, PPO-Breakout), where it names
// no model family: RL code names its agents so. "" for any other name, an
// LLM's (llama_ppo) and GRPO's among them.
func rlAlgorithm(name string) string {
	algo := ""
	for t := range strings.FieldsFuncSeq(strings.ToLower(name), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		switch {
		case rlAgents[t] && algo == "":
			algo = t
		case familyWord(t):
			return ""
		}
	}
	return algo
}

// spelledOutNames are architectures' names written out in full, as their
// classes and files are (torchvision's VisionTransformer,
// vision_transformer.py), matched case aside without separators, and the
// short names people give them.
var spelledOutNames = regexp.MustCompile(`(?i)vision[_-]?transformer|swin[_-]?transformer`)

// spelledOut writes an architecture's name written out in full
// (ddp_VisionTransformer, swin_transformer_tiny) by its short name (vit,
// swin).
func spelledOut(name string) string {
	if !strings.Contains(strings.ToLower(name), "transformer") {
		return name // the common case, without the regexp
	}
	return spelledOutNames.ReplaceAllStringFunc(name, func(m string) string {
		if strings.HasPrefix(strings.ToLower(m), "vision") {
			return "vit"
		}
		return "swin"
	})
}

// dataCut is where the words of a name (n of them, the k-th given by
// word) stop naming the work: at an "on" after the first (infer_on_trailers,
// train_on_cifar: what it runs on is the data); n where none is.
func dataCut(n int, word func(k int) string) int {
	for k := 1; k < n; k++ {
		if strings.EqualFold(word(k), "on") {
			return k
		}
	}
	return n
}

// rlAgents are the algorithms RL jobs are named for.
var rlAgents = set("ppo", "appo", "sac", "dqn", "ddqn", "a2c", "a3c", "td3", "ddpg", "trpo", "impala", "rainbow", "cql", "iql")

// trimWorkWords cuts the words any job uses from both ends of a program's
// or directory's name (roberta-training is roberta, gcn_train is gcn,
// trainParticleTransformer is ParticleTransformer, finetune_lora_cuda_fixed
// is nothing), keeping its middle as written.
func trimWorkWords(name string) string {
	if placeholder(name) {
		return "" // YOUR_CONFIG_HERE, your_working_directory
	}
	name = spelledOut(name)
	if a := rlAlgorithm(name); a != "" {
		return a // ppo_atari: the agent's algorithm is what is trained
	}
	type span struct{ from, to int }
	var words []span
	start := -1
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '_' && name[i] != '-' && name[i] != '.' && name[i] != ' ' {
			if start >= 0 && camelBoundary(name, i) {
				words = append(words, span{start, i}) // trainParticleTransformer
				start = i
			}
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			words = append(words, span{start, i})
			start = -1
		}
	}
	generic := func(s span) bool {
		w := name[s.from:s.to]
		if camelBoundary(name, s.from) || camelBoundary(name, s.to) {
			if strings.ToUpper(w) == w {
				return false // an acronym run into a name: LitePT
			}
		}
		w = strings.ToLower(w)
		return isDigits(w) || genericPrograms[w] || stemWords[w] || jobWords[w] || codeDirs[w] || pathWords[w]
	}
	counter := func(s span) bool {
		// a word of its own: Fold2 in OpenFold2Train is part of a name
		w := strings.ToLower(name[s.from:s.to])
		return (s.from == 0 || !camelBoundary(name, s.from)) && counterWord(w) && !isSize(w) && !familyWord(w) // t5 is T5
	}
	words = words[:dataCut(len(words), func(k int) string { return name[words[k].from:words[k].to] })]
	for k := len(words) - 2; k > 0; k-- {
		// lofar_train_tridentnet: what is trained follows the word that
		// says so; the words before it (a data set, a project) do not
		// name it.
		if trainWord(strings.ToLower(name[words[k].from:words[k].to])) {
			if slices.ContainsFunc(words[k+1:], func(s span) bool { return !generic(s) && !counter(s) }) {
				words = words[k+1:]
			} else {
				words = words[:k] // mobileViT_train_params_multi_gpu: nothing after it names the work, the words before do
			}
			break
		}
	}
	// A counter counts runs at a name's end (gcn_f10); a short one that
	// starts the name is the name (se3_diffusion, t5_train), where a
	// counter's word (step4_tensor_parallel) or one after a cut word
	// (train_h5) is not.
	named := len(words) > 0 && counter(words[0]) && !counterPrefixes[strings.TrimRightFunc(
		strings.ToLower(name[:words[0].to]), unicode.IsDigit)]
	for len(words) > 0 && (generic(words[0]) || counter(words[0]) && !named) {
		if len(words) > 1 && camelBoundary(name, words[0].to) && words[0].to == words[1].from && !generic(words[1]) &&
			words[1].to-words[1].from >= 3 &&
			!trainWord(strings.ToLower(name[words[0].from:words[0].to])) && !runVerbs[strings.ToLower(name[words[0].from:words[0].to])] {
			break // a name's own first word, run into the rest: FastSpeech2, LongFormer (RunEager's Run is the job's verb)
		}
		words, named = words[1:], false
	}
	for len(words) > 0 && (generic(words[len(words)-1]) || counter(words[len(words)-1]) && (len(words) > 1 || !named) ||
		len(words) > 1 && dataWords[strings.ToLower(name[words[len(words)-1].from:words[len(words)-1].to])]) {
		// (A data set after the name is what it learns from: vae_mnist,
		// recontrast_mvtecloco.)
		last := words[len(words)-1]
		if len(words) > 1 && (isDigits(name[last.from:last.to]) || versionWord(strings.ToLower(name[last.from:last.to]))) {
			break // a number after a name is its version: poet_2, dreamer_v3
		}
		if len(words) > 1 && (strings.EqualFold(name[last.from:last.to], "net") || strings.EqualFold(name[last.from:last.to], "network")) {
			break // a name's own suffix: ProtSCAPE-Net, interaction_network
		}
		if len(words) > 1 && words[len(words)-2].to == last.from && dataKinds[strings.ToLower(name[last.from:last.to])] {
			break // a kind of data run into a name is the name's: MambaVision, InternVideo
		}
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return ""
	}
	t := name[words[0].from:words[len(words)-1].to]
	if strings.IndexFunc(t, unicode.IsLetter) < 0 || isSize(strings.ToLower(t)) || !validModel(strings.ToLower(t)) {
		return "" // a size or a number alone, or a word that is never a model
	}
	return t
}

// genericArchWords are archWords too general to name a network alone as
// an argument (net, flow, former, diffusion, mae).
var genericArchWords = set("net", "flow", "former", "diffusion", "mae", "transducer", "nerf")

// runVerbs say what a job does with its model, first in a job's name run
// into the model's (RunEager, EvalVideoMAE, TestResNet).
var runVerbs = set("run", "eval", "test", "infer", "predict", "launch", "start", "submit")

// camelBoundary reports whether a new word starts at name[i] in camel case:
// an upper-case letter after a lower-case one or a digit (trainParticle,
// Fold2Train), not inside an acronym (SCAPE).
func camelBoundary(name string, i int) bool {
	if i == 0 || i >= len(name) || name[i] < 'A' || name[i] > 'Z' {
		return false
	}
	p := name[i-1]
	return p >= 'a' && p <= 'z' || p >= '0' && p <= '9'
}

// archWords name a kind of network; after a project word they are part of
// its name (crystal_gnn, conformer-transducer, vmap_pinn).
var archWords = set("gnn", "net", "transformer", "transducer", "former", "gan", "vae", "cnn", "rnn", "lstm", "gru",
	"unet", "diffusion", "mlp", "tdnn", "pinn", "fno", "nerf", "flow", "mae")
