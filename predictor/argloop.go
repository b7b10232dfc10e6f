package predictor

import (
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

// maxArgLoopRounds bounds the rounds of one argument loop beyond the
// arguments it is given.
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
		opts = getopts(r.word(call.Args[1]), args)
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
// is not an option, or after --.
func getopts(optstring string, args []string) []getopt {
	optstring = strings.TrimPrefix(optstring, ":")
	var out []getopt
	for i := 0; i < len(args) && len(out) < maxArgLoopRounds; i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
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
	return out
}

// test evaluates a loop condition whose operands are known: [[ ... ]],
// [ ... ] or test, (( ... )), true and false. Its last command decides.
func (r *shellReader) test(cond []*syntax.Stmt) (result, known bool) {
	if len(cond) == 0 {
		return false, false
	}
	s := cond[len(cond)-1]
	var ok bool
	switch c := s.Cmd.(type) {
	case *syntax.TestClause:
		result, ok = r.testExpr(c.X)
	case *syntax.ArithmCmd:
		var n int
		n, ok = r.arithm(c.X)
		result = n != 0
	case *syntax.CallExpr:
		if len(c.Assigns) > 0 || len(c.Args) == 0 {
			return false, false
		}
		args := r.fields(c.Args)
		switch {
		case len(args) == 1 && (args[0] == "true" || args[0] == ":"):
			result, ok = true, true
		case len(args) == 1 && args[0] == "false":
			result, ok = false, true
		case args[0] == "[" && args[len(args)-1] == "]":
			result, ok = bracketTest(args[1 : len(args)-1])
		case args[0] == "test":
			result, ok = bracketTest(args[1:])
		}
	}
	if !ok {
		return false, false
	}
	return result != s.Negated, true
}

// bracketTest evaluates the words of [ ... ]: one word (true when not
// empty), -n or -z and a word, or two words and an operator between.
func bracketTest(w []string) (result, known bool) {
	for _, x := range w {
		if unexpanded(x) {
			return false, false
		}
	}
	switch {
	case len(w) == 1:
		return w[0] != "", true
	case len(w) == 2 && w[0] == "-n":
		return w[1] != "", true
	case len(w) == 2 && w[0] == "-z":
		return w[1] == "", true
	case len(w) == 3:
		return compare(w[1], w[0], w[2])
	}
	return false, false
}

// compare applies a test operator (-gt, =, !=, ...) to two known words.
func compare(op, x, y string) (result, known bool) {
	switch op {
	case "=", "==":
		return x == y, true
	case "!=":
		return x != y, true
	case "<":
		return x < y, true
	case ">":
		return x > y, true
	}
	a, errA := strconv.Atoi(strings.TrimSpace(x))
	b, errB := strconv.Atoi(strings.TrimSpace(y))
	if errA != nil || errB != nil {
		return false, false
	}
	switch op {
	case "-eq":
		return a == b, true
	case "-ne":
		return a != b, true
	case "-gt":
		return a > b, true
	case "-ge":
		return a >= b, true
	case "-lt":
		return a < b, true
	case "-le":
		return a <= b, true
	}
	return false, false
}

// testExpr evaluates the expression of [[ ... ]]; a pattern on the right
// of == or != is compared as a plain word.
func (r *shellReader) testExpr(x syntax.TestExpr) (result, known bool) {
	switch x := x.(type) {
	case *syntax.Word:
		w := r.word(x)
		return w != "", !unexpanded(w)
	case *syntax.ParenTest:
		return r.testExpr(x.X)
	case *syntax.UnaryTest:
		switch x.Op {
		case syntax.TsNot:
			v, ok := r.testExpr(x.X)
			return !v, ok
		case syntax.TsNempStr, syntax.TsEmpStr:
			w, ok := x.X.(*syntax.Word)
			if !ok {
				return false, false
			}
			v := r.word(w)
			return (v != "") == (x.Op == syntax.TsNempStr), !unexpanded(v)
		}
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.AndTest, syntax.OrTest:
			a, okA := r.testExpr(x.X)
			b, okB := r.testExpr(x.Y)
			if x.Op == syntax.AndTest {
				return a && b, okA && okB || okA && !a || okB && !b
			}
			return a || b, okA && okB || okA && a || okB && b
		}
		wx, okX := x.X.(*syntax.Word)
		wy, okY := x.Y.(*syntax.Word)
		if !okX || !okY {
			return false, false
		}
		a, b := r.word(wx), r.word(wy)
		if unexpanded(a) || unexpanded(b) {
			return false, false
		}
		return compare(x.Op.String(), a, b)
	}
	return false, false
}

// arithm evaluates an arithmetic expression of integers, variables and
// comparisons ($# > 0, count < 3, 1).
func (r *shellReader) arithm(x syntax.ArithmExpr) (int, bool) {
	switch x := x.(type) {
	case *syntax.Word:
		w := r.word(x)
		if isIdent(w) {
			v, ok := r.vars[w]
			if !ok || v.unknown || len(v.vals) != 1 {
				return 0, false
			}
			w = v.vals[0]
		}
		n, err := strconv.Atoi(strings.TrimSpace(w))
		return n, err == nil
	case *syntax.ParenArithm:
		return r.arithm(x.X)
	case *syntax.BinaryArithm:
		a, okA := r.arithm(x.X)
		b, okB := r.arithm(x.Y)
		if !okA || !okB {
			return 0, false
		}
		var v bool
		switch x.Op {
		case syntax.Gtr:
			v = a > b
		case syntax.Geq:
			v = a >= b
		case syntax.Lss:
			v = a < b
		case syntax.Leq:
			v = a <= b
		case syntax.Eql:
			v = a == b
		case syntax.Neq:
			v = a != b
		default:
			return 0, false
		}
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// decided runs the branch of an if whose conditions test known words, and
// reports whether it could.
func (r *shellReader) decided(c *syntax.IfClause) bool {
	for e := c; e != nil; e = e.Else {
		if len(e.Cond) == 0 { // else
			r.stmts(e.Then)
			return true
		}
		v, known := r.test(e.Cond)
		if !known {
			return false // a condition it cannot decide: the if is read as any other
		}
		if v {
			r.stmts(e.Then)
			return true
		}
	}
	return true // no branch taken
}
