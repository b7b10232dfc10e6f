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

// maxExcerpt bounds a program's option declarations read; maxCall one
// add_argument call.
const (
	maxExcerpt = 64 << 10
	maxCall    = 4 << 10
)

var (
	// pyAddArgument is one add_argument(...) call at the start of the
	// text: its arguments, with strings and one level of parentheses.
	pyAddArgument = regexp.MustCompile(`^\.add_argument\(((?:[^()"']|"[^"\n]*"|'[^'\n]*'|\([^()]*\))*)\)`)
	// pyOption is an option string of a call.
	pyOption = regexp.MustCompile(`^\s*["'](--?[A-Za-z][\w.-]*)["']\s*(?:,|$)`)
	// pyDefault is a call's literal default.
	pyDefault = regexp.MustCompile(`\bdefault\s*=\s*(?:"([^"\n]*)"|'([^'\n]*)'|(-?[0-9][0-9.eE+-]*)\b|(True)\b)`)
	// pyStoreFlag marks an option that takes no value.
	pyStoreFlag = regexp.MustCompile(`\baction\s*=\s*["']store_(?:true|false|const)["']`)
	// pyField is a dataclass field with a literal default, at the start of
	// a line (its default may be on the next): model_name_or_path: str =
	// field(default="gpt2", ...), or per_device_train_batch_size: int = 8.
	pyField = regexp.MustCompile(`^[ \t]+([A-Za-z_]\w{0,60})[ \t]*:[ \t]*[\w\[\], .]{1,60}=[ \t]*(?:field\(\s{0,40}default[ \t]*=[ \t]*)?(?:"([^"\n]{0,200})"|'([^'\n]{0,200})'|(-?[0-9][0-9.eE+-]{0,20})\b|(True)\b)`)
)

// declarations calls call with each add_argument call of a program, and
// field with each dataclass field (the line or two lines it is on, and
// pyField's submatches), in the order they come; either returning false
// stops it. Each regular expression runs on a bounded window where a
// plain search found its start, so the cost stays linear in the program.
func declarations(text string, call func(text string, args string) bool, field func(lines string, m []string) bool) {
	var spans [][2]int // the calls, whose lines hold no fields
	for pos := 0; ; {
		i := strings.Index(text[pos:], ".add_argument(")
		if i < 0 {
			break
		}
		start := pos + i
		m := pyAddArgument.FindStringSubmatchIndex(text[start:min(len(text), start+maxCall)])
		if m == nil {
			pos = start + 1
			continue
		}
		if !call(text[start:start+m[1]], text[start+m[2]:start+m[3]]) {
			return
		}
		spans = append(spans, [2]int{start, start + m[1]})
		pos = start + m[1]
	}
	inCall := func(lo, hi int) bool {
		for _, s := range spans {
			if lo < s[1] && s[0] < hi {
				return true
			}
		}
		return false
	}
	for pos := 0; pos < len(text); {
		end := strings.IndexByte(text[pos:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += pos
		}
		line := text[pos:end]
		next := end
		if line != "" && (line[0] == ' ' || line[0] == '\t') && strings.IndexByte(line, ':') > 0 && !inCall(pos, end) {
			window := line // with the next line, for field(\n default=...)
			if end < len(text) {
				nl := strings.IndexByte(text[end+1:], '\n')
				if nl < 0 {
					nl = len(text) - end - 1
				}
				window = text[pos : end+1+nl]
			}
			if m := pyField.FindStringSubmatchIndex(window); m != nil {
				lines := line
				if pos+m[1] > end {
					lines, next = window, pos+len(window)
				}
				sub := make([]string, len(m)/2)
				for k := range sub {
					if m[2*k] >= 0 {
						sub[k] = window[m[2*k]:m[2*k+1]]
					}
				}
				if !inCall(pos, pos+len(lines)) && !field(strings.TrimRight(lines, " \t\r"), sub) {
					return
				}
			}
		}
		pos = next + 1
	}
}

// ProgramExcerpt is what Augur reads of a Python program: its option
// declarations (each add_argument call on a line of its own, each
// dataclass field with a literal default) and its @hydra.main decorator,
// at most maxExcerpt bytes. Reading the excerpt is reading the program;
// augurd keeps it, not the program.
func ProgramExcerpt(text string) string {
	var calls, fields strings.Builder
	if m := hydraDecorator(text); m != "" {
		calls.WriteString(strings.Join(strings.Fields(m), " "))
		calls.WriteByte('\n')
	}
	fits := func(s string) bool { return calls.Len()+fields.Len()+len(s)+1 <= maxExcerpt }
	declarations(text, func(c, _ string) bool {
		c = strings.Join(strings.Fields(c), " ")
		if !fits(c) {
			return false
		}
		calls.WriteString(c)
		calls.WriteByte('\n')
		return true
	}, func(lines string, _ []string) bool {
		if !fits(lines) {
			return false
		}
		fields.WriteString(lines)
		fields.WriteByte('\n')
		return true
	})
	return calls.String() + fields.String()
}

// programArgs turns a program's option declarations into the flags its
// defaults amount to, leaving out the options the command sets (passed).
func programArgs(excerpt string, passed func(option string) bool) []string {
	var args []string
	declarations(excerpt, func(_, call string) bool {
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
			return true
		}
		d := pyDefault.FindStringSubmatch(call)
		if d == nil || slices.ContainsFunc(opts, passed) {
			return true
		}
		opt := opts[0]
		for _, o := range opts {
			if len(o) > len(opt) {
				opt = o // --batch-size over -b
			}
		}
		args = append(args, opt, firstNonEmpty(d[1:]))
		return true
	}, func(_ string, m []string) bool {
		if opt := "--" + m[1]; !passed(opt) {
			args = append(args, opt, firstNonEmpty(m[2:]))
		}
		return true
	})
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
