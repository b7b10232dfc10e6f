package predictor

import (
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

// commentModel returns the model the script's descriptive comments name,
// with the line it is on, or "" when they name none or two.
func commentModel(text string) (string, uint) {
	var model string
	var at uint
	n := uint(0)
	cont := false // the comment before ended in a backslash: code goes on
	for line := range scriptLines(text) {
		n++
		prose, ok := commentProse(line)
		if !ok {
			prose, ok = echoProse(line)
		}
		was := cont
		cont = strings.HasSuffix(strings.TrimSpace(line), "\\")
		if !ok || was {
			continue
		}
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
	if len(words) > 0 && exampleWords[strings.ToLower(strings.TrimRight(words[0], ":."))] {
		words = words[1:] // "# Example: sbatch train.sh meta-llama/Llama-2-70b-hf" is code
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
