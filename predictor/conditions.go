package predictor

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Conditions the reader decides as bash does, where every word they test
// is known: an if's branch, an argument loop's rounds.

// decided runs the branch of an if whose conditions test known words
// ([ "$NGPU" -gt 1 ], [[ $DATASET == cifar10 ]], (( $# > 0 ))), and reports
// whether it could; a condition on anything else (a file, a command's
// status, a variable the script does not show) leaves the if to branches.
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

// test evaluates a condition whose operands are known: [[ ... ]],
// [ ... ] or test, (( ... )), true and false, and && or || of them: a
// condition of several commands (cd x; [ -f y ]) is not decided.
func (r *shellReader) test(cond []*syntax.Stmt) (result, known bool) {
	if len(cond) != 1 {
		return false, false
	}
	s := cond[0]
	var ok bool
	switch c := s.Cmd.(type) {
	case *syntax.TestClause:
		result, ok = r.testExpr(c.X)
	case *syntax.BinaryCmd:
		if c.Op != syntax.AndStmt && c.Op != syntax.OrStmt {
			return false, false
		}
		a, okA := r.test([]*syntax.Stmt{c.X})
		b, okB := r.test([]*syntax.Stmt{c.Y})
		result, ok = both(c.Op == syntax.AndStmt, a, okA, b, okB)
	case *syntax.ArithmCmd:
		var n int64
		n, ok = r.arith(c.X, 0)
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
			return both(x.Op == syntax.AndTest, a, okA, b, okB)
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

// both combines two conditions with && (and) or ||, known where either
// side alone settles it (a false side of &&, a true side of ||).
func both(and, a, okA, b, okB bool) (result, known bool) {
	if and {
		return a && b, okA && okB || okA && !a || okB && !b
	}
	return a || b, okA && okB || okA && a || okB && b
}
