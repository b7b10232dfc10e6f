package predictor

import (
	"slices"
	"strings"
	"unicode"
)

// A script's own prose often says what it trains where its commands do
// not ("# LoRA fine-tune Qwen3-VL-2B", "# Llama 3.1 8B, 4 GPUs"): a person
// reads that line, and the messages it logs ("echo \"Fine-tuning T5-small
// ...\""). commentModel reads them too, but only from prose, never
// from code left commented out ("# python train.py --model gpt2-xl" is a
// run the script does not make), and only a model of a known family with
// its size or version, so "# the 70B run" or "# A100 80GB" names none.
// commentWork reads the prose's own name for the work where it is no
// family's ("# DeepLabV3+ training on RUGD"), a stand-in like a job's name.

// commentModel returns the model a script's prose (proseLines) names,
// with the line it is on, or "" when it names none or two.
func commentModel(prose []proseLine) (string, uint) {
	var model string
	var at uint
	for _, p := range prose {
		n, prose := p.n, p.text
		m := familyModel(prose)
		if !namesAModel(m) || familyOf(m) == "" || !validModel(m) {
			continue
		}
		switch {
		case model == "" || SquashModel(m) == SquashModel(model) || sizes(model, m):
			if model == "" {
				model, at = m, n
			}
		case sizes(m, model):
			model, at = m, n // "# Llama 3 ... Llama-3-8B": the one with its size
		default:
			// Two models: a list of the configurations a script can run
			// ("# BERT 110M" ... "# BERT 345M"), a comparison, a base and
			// its student. The comments do not say which this job is.
			return "", 0
		}
	}
	return model, at
}

// commentProse returns a comment line's text, with the punctuation of
// prose cut from its words, when it reads as prose: not a directive
// (#SBATCH, #!), not code commented out (a command, an assignment, a flag,
// a variable, a continuation).
func commentProse(line string) (string, bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "#") || strings.HasPrefix(t, "#!") {
		return "", false
	}
	t = strings.TrimSpace(strings.TrimLeft(t, "#"))
	upper := strings.ToUpper(t)
	for _, d := range []string{"SBATCH", "PBS", "BSUB", "$", "FLUX:"} {
		if strings.HasPrefix(upper, d) {
			return "", false
		}
	}
	words := strings.Fields(t)
	for len(words) > 0 && rule(words[0]) {
		words = words[1:] // "# === Gemma 3 4B-IT fine-tuning ===": a banner's rules
	}
	for len(words) > 0 && rule(words[len(words)-1]) {
		words = words[:len(words)-1]
	}
	if len(words) > 0 && exampleWords[strings.ToLower(strings.TrimRight(words[0], ":."))] {
		words = words[1:] // "# Example: sbatch train.sh meta-llama/Llama-2-70b-hf" is code
		if len(words) > 0 && isDigits(strings.TrimRight(words[0], ":.)")) {
			words = words[1:] // "# Example 1: sbatch ..."
		}
	}
	if len(words) < 2 || strings.HasSuffix(t, "\\") || strings.ContainsAny(t, "$`|><{}") {
		return "", false
	}
	first := strings.ToLower(words[0])
	if proseCode[first] || strings.ContainsAny(first, "/=") {
		return "", false
	}
	for _, ext := range []string{".py", ".sh", ".sbatch", ".slurm", ".bash", ".job"} {
		if !strings.HasSuffix(strings.TrimSuffix(first, ":"), ext) {
			continue
		}
		// "# train.sbatch — Train EfficientNet-B4 ...": a file's title
		// before what it does; "# train.py --model x" is code.
		switch {
		case strings.HasSuffix(first, ":") && len(words) > 2:
			return commentProse("# " + strings.Join(words[1:], " "))
		case len(words) > 3 && (words[1] == "—" || words[1] == "–" || words[1] == "-"):
			return commentProse("# " + strings.Join(words[2:], " "))
		}
		return "", false
	}
	for i, w := range words {
		if f := strings.TrimLeft(w, "-"); f != w && f != "" && unicode.IsLetter(rune(f[0])) {
			return "", false // a flag: -m, --model
		}
		if k, _, ok := strings.Cut(w, "="); ok && k != "" && isIdent(strings.TrimLeft(k, "+~")) {
			return "", false // an assignment or an override: model=resnet50
		}
		words[i] = strings.TrimFunc(w, func(r rune) bool {
			return strings.ContainsRune(".,;:()[]!?\"'*", r)
		})
	}
	return strings.Join(words, " "), true
}

// echoProse returns the text a script prints to its log, read as prose
// where a comment would be ("echo \"Fine-tuning T5-small ...\""): a literal
// message, with no expansion, redirection or pipe.
func echoProse(line string) (string, bool) {
	t := strings.TrimSpace(line)
	rest, ok := strings.CutPrefix(t, "echo ")
	if !ok {
		return "", false
	}
	for _, f := range []string{"-e ", "-n ", "-en ", "-ne "} {
		rest = strings.TrimPrefix(strings.TrimSpace(rest), f)
	}
	rest = strings.TrimSpace(rest)
	if len(rest) < 2 || (rest[0] != '"' && rest[0] != '\'') || rest[len(rest)-1] != rest[0] ||
		strings.ContainsRune(rest[1:len(rest)-1], rune(rest[0])) {
		return "", false // one quoted message, nothing after it
	}
	return commentProse("# " + rest[1:len(rest)-1])
}

// rule reports whether a word is a banner's rule: ===, ----, ***.
func rule(w string) bool {
	return len(w) > 1 && strings.Trim(w, "=-*~#") == ""
}

// exampleWords introduce a command in a comment.
var exampleWords = set("example", "examples", "usage", "e.g", "eg", "run", "submit", "to", "or")

// proseCode are the first words of code commented out.
var proseCode = set("python", "python3", "srun", "sbatch", "salloc", "torchrun", "accelerate", "deepspeed", "mpirun",
	"mpiexec", "export", "cd", "module", "ml", "source", "conda", "mamba", "micromamba", "pip", "pip3", "bash", "sh",
	"echo", "printf", "singularity", "apptainer", "docker", "podman", "uv", "nvidia-smi", "cp", "mv", "rm", "mkdir",
	"ls", "cat", "unset", "done", "fi", "elif", "scp", "rsync", "git", "tune", "llamafactory-cli", "exec", "nohup",
	"wandb", "huggingface-cli", "ln", "tar", "wget", "curl", "squeue", "scancel", "sacct", "scontrol", "declare",
	"esac", "trap", "sleep")

// familyOf returns the known family a model name starts with, or "".
func familyOf(m string) string {
	best := ""
	for _, fam := range modelFamilies {
		if strings.HasPrefix(m, fam) && len(fam) > len(best) {
			best = fam
		}
	}
	return best
}

// commentWork returns the work a script's prose says it trains where that
// is a name of no known family ("# Kronos finetuning — 1 GPU", "# fine-tune
// cellpose-SAM on TissueNet", "# SLURM job script — DeepLabV3+ training"),
// with its line, or "" when the prose names none, or two. A name is read
// only in those frames, right after a verb of training or right before its
// noun, and only where it is written as a name is (an inner capital, a
// digit, a joining - + or _: SimMIM, Matcha-TTS, MINT+, lilyBERT), and
// followed by the end of the line or a word that goes on with it ("on
// TissueNet", "with ...", a dash), never a method,
// framework, machine, data set or a word any job uses.
func commentWork(prose []proseLine) (string, uint) {
	var work string
	var at uint
	for _, p := range prose {
		// A name at the end of a line ends its frame only where the
		// prose ends there too, not where the next comment line goes on
		// with its sentence ("... dual-discriminator\n# architecture").
		w := proseWork(strings.Fields(p.text), !p.goesOn)
		switch {
		case w == "":
		case work == "":
			work, at = w, p.n
		case w != work:
			return "", 0 // two works named: a list, a comparison
		}
	}
	return work, at
}

// proseLine is a line of a script's prose: a descriptive comment's words
// or a logged message's (commentProse, echoProse).
type proseLine struct {
	n      uint   // its line
	text   string // its prose
	goesOn bool   // the next line is a comment going on with its sentence
}

// proseLines returns the lines of text that are prose, in order; not a
// comment after one that ended in a backslash (code goes on there).
func proseLines(text string) []proseLine {
	var out []proseLine
	var prev *proseLine // the line before, where it was prose
	cont := false
	n := uint(0)
	for line := range scriptLines(text) {
		n++
		if prev != nil && prev.n == n-1 {
			prev.goesOn = proseGoesOn(line)
		}
		prose, ok := commentProse(line)
		if !ok {
			prose, ok = echoProse(line)
		}
		was := cont
		cont = strings.HasSuffix(strings.TrimSpace(line), "\\")
		if !ok || was {
			continue
		}
		out = append(out, proseLine{n: n, text: prose})
		prev = &out[len(out)-1]
	}
	return out
}

// proseGoesOn reports whether a line is a comment going on with the
// sentence of the line before it: its prose starts in lower case.
func proseGoesOn(line string) bool {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "#") || strings.HasPrefix(t, "#SBATCH") {
		return false
	}
	t = strings.TrimSpace(strings.TrimLeft(t, "#"))
	return t != "" && unicode.IsLower([]rune(t)[0])
}

// proseWork is the name one line of prose says is trained, or ""; ends
// says the prose ends with the line.
func proseWork(words []string, ends bool) string {
	for i, w := range words {
		lw := strings.ToLower(w)
		if trainVerbs[lw] && i+1 < len(words) {
			j := i + 1
			for j < len(words) && proseArticles[strings.ToLower(words[j])] {
				j++
			}
			if j < len(words) && (j+1 == len(words) && ends || j+1 < len(words) && proseAfter[strings.ToLower(words[j+1])]) {
				if name := workName(words[j]); name != "" {
					return name
				}
			}
		}
		if trainNouns[lw] && i > 0 {
			j := i - 1
			if roleWords[strings.ToLower(words[j])] && j > 0 {
				j-- // "MINT+ model training", "KGSAGE generator training"
			}
			if i+1 < len(words) && !proseAfter[strings.ToLower(words[i+1])] || i+1 == len(words) && !ends {
				continue
			}
			if name := workName(words[j]); name != "" {
				return name
			}
		}
	}
	return ""
}

// workName returns w, lower-cased, where it is written as a model's name
// (see commentWork).
func workName(w string) string {
	w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
	w = strings.TrimRight(w, ".,;:!?—–")
	lw := strings.ToLower(w)
	if len(lw) < 3 || lowerLetters(lw) < 2 || !validModel(lw) || notWorks[lw] || dataWords[lw] || len(ReadGPUNames(lw)) > 0 ||
		unexpanded(w) || strings.ContainsAny(w, "/.=") {
		return ""
	}
	parts := strings.FieldsFunc(lw, func(r rune) bool { return r == '-' || r == '_' })
	if len(parts) == 0 || isDigits(parts[0]) || dataWords[strings.Join(parts, "")] ||
		slices.ContainsFunc(parts, func(p string) bool { return notWorks[p] || trainVerbs[p] }) {
		return "" // multi-node, self-supervised, 1-gpu, micro_batch_size, stl-10
	}
	inner, digit := false, false
	for i, r := range w {
		switch {
		case i > 0 && unicode.IsUpper(r):
			inner = true
		case unicode.IsDigit(r):
			digit = true
		}
	}
	if !inner && !(digit && lowerLetters(lw) >= 2) && !strings.ContainsAny(w, "-+_") {
		return ""
	}
	return lw
}

var (
	// trainVerbs come before what is trained: "fine-tune cellpose-SAM".
	trainVerbs = set("train", "trains", "training", "fine-tune", "fine-tunes", "fine-tuning", "finetune", "finetunes",
		"finetuning", "pretrain", "pretrains", "pretraining", "pre-train", "pre-training", "distill", "distilling")
	// trainNouns come after it: "DeepLabV3+ training".
	trainNouns = set("training", "finetuning", "fine-tuning", "pretraining", "pre-training")
	// proseAfter may follow the name in a frame: "fine-tune X on ...",
	// "X training with ...".
	proseAfter = set("on", "with", "for", "using", "in", "from", "to", "at", "of", "via", "—", "–", "-", "(")
	// roleWords say what part a name plays: "MINT+ model training".
	roleWords = set("model", "network", "generator", "discriminator", "classifier", "encoder", "decoder", "detector",
		"policy", "agent", "backbone")
	// proseArticles may stand between a verb and its object.
	proseArticles = set("the", "a", "an", "our", "my", "of")
	// notWorks are the words prose puts where a name could be that name
	// none: methods, frameworks, machines, scales and the words any job
	// uses, and the first halves of joined adjectives (multi-node).
	notWorks = set("model", "models", "network", "networks", "script", "job", "jobs", "slurm", "sbatch", "batch", "gpu",
		"gpus", "cpu", "node", "nodes", "distributed", "parallel", "ddp", "fsdp", "deepspeed", "zero", "lora", "qlora",
		"peft", "sft", "dpo", "grpo", "ppo", "rl", "rlhf", "llm", "llms", "vlm", "vlms", "full", "stage", "phase", "data",
		"dataset", "datasets", "loop", "run", "runs", "experiment", "experiments", "baseline", "main", "final", "pipeline",
		"code", "process", "supervised", "unsupervised", "contrastive", "joint", "local", "default", "standard",
		"continued", "initial", "classifier", "encoder", "decoder", "detector", "policy", "agent", "adapter", "adapters",
		"weights", "checkpoint", "checkpoints", "pytorch", "torch", "tensorflow", "jax", "flax", "keras", "huggingface",
		"transformers", "accelerate", "torchrun", "lightning", "hydra", "nemo", "megatron", "megatron-lm", "fairseq",
		"mmdetection", "detectron2", "timm", "trl", "verl", "openrlhf", "axolotl", "llama-factory", "llamafactory",
		"unsloth", "torchtune", "composer", "ray", "horovod", "apex", "nccl", "cuda", "wandb", "mpi", "hpc", "cluster",
		"multi", "single", "mixed", "large", "small", "self", "semi", "end", "cross", "domain", "task", "few", "one",
		"two", "low", "high", "non", "post", "pre", "half", "fully", "from", "with", "for", "using", "and", "on", "in",
		"to", "this", "that", "these", "each", "all", "new", "first", "second", "next", "step", "steps", "epoch",
		"epochs", "scratch", "resumed", "debug", "test", "quick", "short", "long", "mode", "setup", "env",
		"environment", "starting", "start", "started", "done", "finished", "begin", "launch", "launching", "auto",
		"resume", "resumes", "readme", "config", "configs", "configuration", "size", "sizes", "tuning", "tuned")
)
