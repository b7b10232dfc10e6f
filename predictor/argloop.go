package predictor

import (
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// An argument loop is how scripts read their own options: defaults first,
// then a loop over the positional parameters that overrides them,
//
//	BATCH_SIZE=4
//	while [[ $# -gt 0 ]]; do
//	  case $1 in
//	    --batch-size) BATCH_SIZE="$2"; shift 2 ;;
//	    *) break ;;
//	  esac
//	done
//
// or `while getopts "m:b:" opt; do case $opt in b) BATCH_SIZE=$OPTARG ;; ...`.
// Given the arguments (augurd has the job's), the loop is run as bash runs
// it: its condition tested each time round, shift and getopts moving
// through the arguments, break leaving. Without them the script is read as
// submitted with none, as ${1:-default} is: the loop never runs, and the
// defaults stand.

// argLoopKind is how a while or until loop walks the positional parameters.
type argLoopKind int

const (
	notArgLoop  argLoopKind = iota
	shiftLoop               // a test of $# or $1 (or while true), the body shifting
	getoptsLoop             // while getopts OPTSTRING NAME
)

// maxArgLoopRounds caps the rounds of one argument loop, and the options
// getopts lists, whatever the arguments.
const maxArgLoopRounds = 256

// argLoop classifies a while or until loop.
func argLoop(c *syntax.WhileClause) argLoopKind {
	if len(c.Cond) == 1 && !c.Until {
		if call, ok := c.Cond[0].Cmd.(*syntax.CallExpr); ok && len(call.Args) >= 3 && len(call.Assigns) == 0 &&
			call.Args[0].Lit() == "getopts" {
			return getoptsLoop
		}
	}
	shifts, casesOnFirst := false, false
	for _, s := range c.Do {
		syntax.Walk(s, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.CallExpr:
				if len(n.Args) > 0 && n.Args[0].Lit() == "shift" {
					shifts = true
				}
			case *syntax.CaseClause:
				if readsPositional(n.Word, "1") {
					casesOnFirst = true
				}
			}
			return !shifts
		})
	}
	if !shifts {
		return notArgLoop
	}
	tests := false
	for _, s := range c.Cond {
		if readsPositional(s, "#", "1") {
			tests = true
		}
	}
	if tests || casesOnFirst && alwaysTrue(c.Cond) && !c.Until {
		return shiftLoop
	}
	return notArgLoop
}

// readsPositional reports whether node expands one of the named special or
// positional parameters ($#, $1).
func readsPositional(node syntax.Node, names ...string) bool {
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil {
			for _, name := range names {
				if pe.Param.Value == name {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// alwaysTrue reports whether a loop condition is `true` or `:`.
func alwaysTrue(cond []*syntax.Stmt) bool {
	if len(cond) != 1 {
		return false
	}
	call, ok := cond[0].Cmd.(*syntax.CallExpr)
	return ok && len(call.Args) == 1 && (call.Args[0].Lit() == "true" || call.Args[0].Lit() == ":")
}

// argsUnknown reports whether the positional parameters are not known:
// not given at all, or a function called with "$@" of a script whose own
// arguments are not known.
func (r *shellReader) argsUnknown() bool {
	if r.args == nil {
		return true
	}
	for _, a := range r.args {
		if a == unknownWord("@") || a == unknownWord("*") {
			return true
		}
	}
	return false
}

// argLoop runs a loop over the positional parameters (see argLoopKind).
func (r *shellReader) argLoop(c *syntax.WhileClause, kind argLoopKind) {
	if r.argsUnknown() {
		return // read as submitted without arguments: the defaults stand
	}
	var opts []getopt
	if kind == getoptsLoop {
		call := c.Cond[0].Cmd.(*syntax.CallExpr)
		args := r.args
		if len(call.Args) > 3 {
			args = r.fields(call.Args[3:])
		}
		var used int
		opts, used = getopts(r.word(call.Args[1]), args)
		// shift $((OPTIND-1)) after the loop drops the options read.
		defer r.setVar("OPTIND", shVar{vals: []string{strconv.Itoa(used + 1)}})
	}
	r.loops++
	defer func() { r.loops--; r.broke = false }()
	rounds := min(len(r.args)+len(opts)+1, maxArgLoopRounds)
	for round := 0; round < rounds && r.spend(1); round++ {
		before := len(r.args)
		if kind == getoptsLoop {
			if round >= len(opts) {
				return
			}
			call := c.Cond[0].Cmd.(*syntax.CallExpr)
			r.setVar(r.word(call.Args[2]), shVar{vals: []string{opts[round].name}})
			r.setVar("OPTARG", shVar{vals: []string{opts[round].arg}})
		} else {
			more, known := r.test(c.Cond)
			if !known {
				r.stmts(c.Do) // a condition it cannot decide: the body read once, as any loop's
				return
			}
			if more == c.Until {
				return
			}
		}
		r.stmts(c.Do)
		if r.broke || kind == shiftLoop && len(r.args) == before {
			return // break, or no shift: bash would go round for ever
		}
	}
}

// getopt is one option getopts hands the loop: its letter ("?" for one
// the option string does not list) and its argument.
type getopt struct{ name, arg string }

// getopts lists the options bash's getopts finds in args, as OPTSTRING
// ("m:b:h": m and b take an argument) reads them: grouped letters (-hv),
// an argument attached (-b8) or next (-b 8), ending at the first word that
// is not an option, or after --; used counts the words they took.
func getopts(optstring string, args []string) (out []getopt, used int) {
	optstring = strings.TrimPrefix(optstring, ":")
	i := 0
	for ; i < len(args) && len(out) < maxArgLoopRounds; i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		for j := 1; j < len(a); j++ {
			k := strings.IndexByte(optstring, a[j])
			if a[j] == ':' || k < 0 {
				out = append(out, getopt{name: "?"})
				continue
			}
			if k+1 >= len(optstring) || optstring[k+1] != ':' {
				out = append(out, getopt{name: a[j : j+1]})
				continue
			}
			arg := a[j+1:]
			if arg == "" && i+1 < len(args) {
				i++
				arg = args[i]
			}
			out = append(out, getopt{name: a[j : j+1], arg: arg})
			break
		}
	}
	return out, i
}

// overArgs reports whether a for loop walks the positional parameters:
// `for a; do`, `for a in "$@"`, `for a in $*`.
func overArgs(wi *syntax.WordIter) bool {
	if len(wi.Items) == 0 {
		return !wi.InPos.IsValid()
	}
	if len(wi.Items) != 1 {
		return false
	}
	w := wi.Items[0]
	if len(w.Parts) == 1 {
		if dq, ok := w.Parts[0].(*syntax.DblQuoted); ok {
			w = &syntax.Word{Parts: dq.Parts} // "$@" is $@ quoted
		}
	}
	name := paramName(w)
	return name == "@" || name == "*"
}

// parsesOnly reports whether a loop body only reads options: it runs no
// command but the shell's own (assignments, case, if, shift, echo, exit,
// break, ...) and the script's functions.
func (r *shellReader) parsesOnly(body []*syntax.Stmt) bool {
	only := true
	for _, s := range body {
		syntax.Walk(s, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.CallExpr:
				if len(n.Args) > 0 {
					name := n.Args[0].Lit()
					_, isFunc := r.funcs[name]
					only = only && (optionBuiltins[name] || isFunc)
				}
			case *syntax.CmdSubst, *syntax.ProcSubst:
				only = false
			}
			return only
		})
	}
	return only
}

// optionBuiltins are the commands an option-reading loop runs besides
// assignments.
var optionBuiltins = set("shift", "echo", "printf", "break", "continue", "exit", "return", "set", ":", "true",
	"false", "[", "test", "local", "export", "declare", "readonly", "unset", "typeset")

// forArgs runs `for name in "$@"` over the known arguments, one round each,
// as bash does; without them the loop never runs (see argLoop).
func (r *shellReader) forArgs(name string, body []*syntax.Stmt) {
	if r.argsUnknown() {
		return
	}
	r.loops++
	defer func() { r.loops--; r.broke = false }()
	for i, a := range slices.Clone(r.args) {
		if i >= maxArgLoopRounds || !r.spend(1) || r.broke {
			return
		}
		r.setVar(name, shVar{vals: []string{a}, unknown: wholeUnknown(a)})
		r.stmts(body)
	}
}
