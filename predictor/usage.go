package predictor

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A script's comments often show how it is submitted: "# Usage: sbatch
// scripts/train.sbatch configs/llama3_fone.yaml", "#   MODEL=qwen2.5-7b
// TASK=gsm8k sbatch slurm/train.sh", "#   sbatch --export=ALL,CFG=... x.sh".
// Where the script is read without its submission's arguments and
// environment (a file on its own, as augur eval and augur predict read
// one), the model its first such example gives it is the one a person
// reads, where the script alone names none. A job's own submission, which
// augurd reads, always says more than the example.

// usage is a comment's example of the script's submission: sbatch's
// options, the script's arguments and the variables set for it.
type usage struct {
	line      uint
	text      string // the command, as the comment writes it
	opts      []Option
	args, env []string
}

// maxUsages bounds the examples a script is read with.
const maxUsages = 3

// usageExamples returns the sbatch commands a script's comments show, at
// most maxUsages of them, each with the line it is on.
func usageExamples(text string) []usage {
	var out []usage
	n := uint(0)
	for line := range scriptLines(text) {
		n++
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "#") || strings.HasPrefix(t, "#SBATCH") || strings.HasPrefix(t, "#!") ||
			!strings.Contains(t, "sbatch") {
			continue
		}
		cmd := usageCommand(strings.TrimLeft(t, "# \t"))
		if cmd == "" {
			continue
		}
		if u, ok := readUsage(cmd); ok {
			u.line, u.text = n, cmd
			if out = append(out, u); len(out) == maxUsages {
				break
			}
		}
	}
	return out
}

// usageCommand returns the sbatch command a comment's prose holds, from
// the variables set before it ("Usage: MODEL=x sbatch train.sh 8" is
// "MODEL=x sbatch train.sh 8"), or "" when none is.
func usageCommand(prose string) string {
	start := -1 // where the command starts: its first assignment, or sbatch
	for i := 0; i < len(prose); {
		for i < len(prose) && asciiSpace(prose[i]) {
			i++
		}
		j := i
		for j < len(prose) && !asciiSpace(prose[j]) {
			j++
		}
		if i == j {
			break
		}
		w := prose[i:j]
		switch {
		case path.Base(w) == "sbatch":
			if start < 0 {
				start = i
			}
			return prose[start:]
		case strings.Contains(w, "=") && isIdent(w[:strings.IndexByte(w, '=')]):
			if start < 0 {
				start = i
			}
		default:
			start = -1
		}
		i = j
	}
	return ""
}

// readUsage reads an sbatch command: its options, the script's arguments,
// and the variables the command line sets (MODEL=x sbatch ..., sbatch
// --export=ALL,MODEL=x ...). It reports false for a line that is not one
// shell command submitting a script by its name.
func readUsage(cmd string) (u usage, ok bool) {
	p := parsers.Get().(*syntax.Parser)
	defer func() {
		if recover() != nil {
			u, ok = usage{}, false
			return
		}
		parsers.Put(p)
	}()
	f, err := p.Parse(strings.NewReader(cmd), "")
	if err != nil || f == nil || len(f.Stmts) == 0 {
		return usage{}, false
	}
	call, isCall := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !isCall {
		return usage{}, false
	}
	r := newShellReader(func(command) {})
	r.noLines = true
	for _, a := range call.Assigns {
		if a.Name == nil || a.Array != nil || a.Index != nil {
			continue
		}
		v := ""
		if a.Value != nil {
			v = r.word(a.Value)
		}
		u.env = append(u.env, a.Name.Value+"="+v)
	}
	opts, script, wrap, args, isSub := sbatchSubmission(r.fields(call.Args))
	args = withoutOptional(args)
	if !isSub || script == "" || wrap != "" || unexpanded(script) || templateWord(script) ||
		slices.ContainsFunc(args, templateWord) {
		return usage{}, false
	}
	u.opts, u.args = opts, args
	for _, o := range opts {
		if o.Key != "--export" {
			continue
		}
		for _, e := range strings.Split(o.Value, ",") {
			if k, _, kv := strings.Cut(e, "="); kv && isIdent(k) {
				u.env = append(u.env, e)
			}
		}
	}
	return u, true
}

// withUsage is s read, where its model is not named, with the first
// example of its submission its comments show that names one (see
// usageExamples); ModelFrom is then "comment". Only the model is taken:
// the example's GPUs and options are one submission's, not the script's.
func withUsage(s Script, text string, over []Option, files map[string]string, ast *shellAST) Script {
	for _, u := range usageExamples(text) {
		f := parseScript(text, u.args, u.env, append(slices.Clip(over), u.opts...), files, false, ast).Features
		if f.Model == "" || f.ModelFrom == "path" {
			continue
		}
		s.Features.Model, s.Features.ModelFrom = f.Model, "comment"
		s.Features.note("model", "line "+strconv.FormatUint(uint64(u.line), 10)+": "+u.text+" ("+f.From["model"]+")")
		resolveUnknown(&s.Features)
		break
	}
	return s
}

// withoutOptional drops the arguments a usage line writes as optional, in
// brackets: "configs/x.yaml [--smoke]" is "configs/x.yaml".
func withoutOptional(args []string) []string {
	out := make([]string, 0, len(args)) // none optional or not: known none
	depth := 0
	for _, a := range args {
		open := depth > 0 || strings.HasPrefix(a, "[")
		depth += strings.Count(a, "[") - strings.Count(a, "]")
		if !open {
			out = append(out, a)
		}
		depth = max(depth, 0)
	}
	return out
}

// templateWord reports whether a word of a usage line is a hole for the
// reader to fill rather than an example's value: [options], <model>,
// {config}, MODEL, ... .
func templateWord(w string) bool {
	if strings.ContainsAny(w, "[]<>{}") || strings.Contains(w, "...") || strings.Contains(w, "…") {
		return true
	}
	letters := false
	for _, c := range w {
		switch {
		case c >= 'a' && c <= 'z':
			return false
		case c >= 'A' && c <= 'Z':
			letters = true
		case c != '_' && c != '-':
			return false // N=4, H100, 8: values
		}
	}
	return letters // MODEL, DATA_DIR
}
