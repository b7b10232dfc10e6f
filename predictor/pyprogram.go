package predictor

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// A Python program a job runs declares its options with their defaults
// (argparse's add_argument, the dataclass fields Hugging Face's
// HfArgumentParser turns into options): python train.py with no --arch
// trains the program's default. Augur reads those declarations as a person
// looking up the options would, never the code around them: an option's
// default counts only as a literal (a string, a number, True), and only
// where the command line does not set that option itself.

// maxExcerpt bounds a program's option declarations read.
const maxExcerpt = 64 << 10

var (
	// pyAddArgument is one add_argument(...) call: its arguments, with
	// strings and one level of nested parentheses.
	pyAddArgument = regexp.MustCompile(`\.add_argument\(((?:[^()"']|"[^"\n]*"|'[^'\n]*'|\([^()]*\))*)\)`)
	// pyOption is an option string of a call.
	pyOption = regexp.MustCompile(`^\s*["'](--?[A-Za-z][\w.-]*)["']\s*(?:,|$)`)
	// pyDefault is a call's literal default.
	pyDefault = regexp.MustCompile(`\bdefault\s*=\s*(?:"([^"\n]*)"|'([^'\n]*)'|(-?[0-9][0-9.eE+-]*)\b|(True)\b)`)
	// pyStoreFlag marks an option that takes no value.
	pyStoreFlag = regexp.MustCompile(`\baction\s*=\s*["']store_(?:true|false|const)["']`)
	// pyField is a dataclass field with a literal default, on its own line:
	// model_name_or_path: str = field(default="gpt2", ...), or
	// per_device_train_batch_size: int = 8.
	pyField = regexp.MustCompile(`(?m)^[ \t]+([A-Za-z_]\w{0,60})[ \t]*:[ \t]*[\w\[\], .]{1,60}=[ \t]*(?:field\(\s{0,40}default[ \t]*=[ \t]*)?(?:"([^"\n]{0,200})"|'([^'\n]{0,200})'|(-?[0-9][0-9.eE+-]{0,20})\b|(True)\b)`)
)

// ProgramExcerpt is what Augur reads of a Python program: its option
// declarations (each add_argument call, each dataclass field with a
// literal default), one to a line, at most maxExcerpt bytes. Reading the
// excerpt is reading the program; augurd keeps it, not the program.
func ProgramExcerpt(text string) string {
	var b strings.Builder
	add := func(s string) bool {
		if b.Len()+len(s)+1 > maxExcerpt {
			return false
		}
		b.WriteString(s)
		b.WriteByte('\n')
		return true
	}
	calls := pyAddArgument.FindAllStringIndex(text, -1)
	for _, c := range calls {
		if !add(strings.Join(strings.Fields(text[c[0]:c[1]]), " ")) {
			break
		}
	}
	// Fields outside the calls, each line whole.
	rest := []byte(text)
	for _, c := range calls {
		for i := c[0]; i < c[1]; i++ {
			if rest[i] != '\n' {
				rest[i] = ' '
			}
		}
	}
	for _, m := range pyField.FindAllIndex(rest, -1) {
		start := strings.LastIndexByte(string(rest[:m[0]]), '\n') + 1
		end := m[1]
		if i := strings.IndexByte(string(rest[m[1]:]), '\n'); i >= 0 {
			end += i
		} else {
			end = len(rest)
		}
		if !add(strings.TrimRight(string(rest[start:end]), " \t\r")) {
			break
		}
	}
	return b.String()
}

// programArgs turns a program's option declarations into the flags its
// defaults amount to, leaving out the options the command sets (passed).
func programArgs(excerpt string, passed func(option string) bool) []string {
	var args []string
	for _, m := range pyAddArgument.FindAllStringSubmatch(excerpt, -1) {
		call := m[1]
		var opts []string
		for rest := call; ; {
			o := pyOption.FindStringSubmatchIndex(rest)
			if o == nil {
				break
			}
			opts = append(opts, rest[o[2]:o[3]])
			rest = rest[o[1]:]
		}
		if len(opts) == 0 || pyStoreFlag.MatchString(call) {
			continue
		}
		d := pyDefault.FindStringSubmatch(call)
		if d == nil || slices.ContainsFunc(opts, passed) {
			continue
		}
		opt := opts[0]
		for _, o := range opts {
			if len(o) > len(opt) {
				opt = o // --batch-size over -b
			}
		}
		args = append(args, opt, firstNonEmpty(d[1:]))
	}
	for _, m := range pyField.FindAllStringSubmatch(excerpt, -1) {
		if opt := "--" + m[1]; !passed(opt) {
			args = append(args, opt, firstNonEmpty(m[2:]))
		}
	}
	return args
}

// programFeatures reads what a program's defaults say of its work where
// the command (words) does not say it.
func programFeatures(name, text string, words []string) (Features, bool) {
	set := map[string]bool{}
	for _, w := range words {
		if strings.HasPrefix(w, "-") {
			k, _, _ := strings.Cut(w, "=")
			set[k] = true
		}
	}
	args := programArgs(ProgramExcerpt(text), func(o string) bool { return set[o] })
	if len(args) == 0 {
		return Features{}, false
	}
	f := argFeatures(Features{}, args, launch{})
	if f.Model != "" {
		// What the program falls back to: weaker than anything the
		// script names, stronger than a workload's name.
		f.ModelFrom = "default"
	}
	for k, v := range f.From {
		f.From[k] = path.Base(name) + ": default of " + v
	}
	return f, len(f.From) > 0
}

func firstNonEmpty(l []string) string {
	for _, s := range l {
		if s != "" {
			return s
		}
	}
	return ""
}
