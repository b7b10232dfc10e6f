package predictor

import (
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds on the work done reading one script as shell, beside MaxScriptLines.
const (
	// MaxShellNodes bounds the statements and word parts visited, function
	// calls and re-parsed strings (bash -c, heredocs, eval) included.
	MaxShellNodes = 200000
	// MaxShellDepth bounds nested function calls and re-parsed strings.
	MaxShellDepth = 8
	// maxWordLen bounds one expanded word; longer ones are cut.
	maxWordLen = 1 << 14
	// maxFields bounds the words of one expanded command.
	maxFields = 4096
	// maxVars bounds the variables remembered.
	maxVars = 1024
)

// shVar is a shell variable as far as the script shows it: its words (one
// for a string, any number for an array), or unknown (assigned from
// something Augur cannot see: a command's output, a sourced file, read).
type shVar struct {
	vals    []string
	array   bool
	unknown bool
	// alts are the values branches that disagree gave an unknown
	// variable, when each is known: header="srun torchrun ..." in one,
	// header="torchrun ..." in the other. A command that is the variable
	// is read once with each.
	alts []string
}

// maxAlts bounds the values kept of a variable branches disagree on.
const maxAlts = 4

// unknownWord stands for an expansion whose value the script does not show;
// every reader of words treats a word containing '$' as unknown.
func unknownWord(name string) string { return "${" + name + "}" }

// wholeUnknown reports whether a value is nothing but something the script
// does not show ("${1}"); a value with hidden parts ("-B /scratch/${USER}:/data",
// "${DIR}/axo.yml") keeps what it shows, its hidden parts marked.
func wholeUnknown(v string) bool {
	v = strings.TrimSpace(v)
	return strings.HasPrefix(v, "${") && strings.IndexByte(v, '}') == len(v)-1 || v == "$"
}

// unexpanded reports whether a word holds something the script does not show.
func unexpanded(w string) bool { return strings.Contains(w, "$") }

// command is one simple command as it would run: its words expanded, the
// directory it runs in, and the variables exported to it.
type command struct {
	words   []string
	workdir string
	env     map[string]string
	// files are those the script wrote with a heredoc, by name.
	files map[string]string
	// dir is the directory the command runs in as a path jobPath can
	// read (see cd); dirOK is false once a cd went somewhere not known.
	dir   string
	dirOK bool
	// line is the script line the command is read from (for code run by
	// bash -c, eval or a function, the line that runs it); 0 when the
	// script was read in pieces.
	line uint
	// background is true for a command the script does not wait for
	// (cmd &, or in a list so run): a server beside the job's work.
	background bool
}

// shellReader walks a parsed script as bash would run it, without running
// anything: it follows assignments, functions and their calls, control
// flow bodies, lists and pipelines, and hands each simple command to emit.
type shellReader struct {
	vars     map[string]shVar
	exported map[string]bool
	funcs    map[string]*syntax.Stmt
	// args are the positional parameters inside a function call; nil at
	// top level, where $1 is unknown.
	args    []string
	sourced bool // a file Augur cannot see was sourced: unset variables are unknown
	// hiddenRun is the last file Augur cannot see that the script sources
	// without arguments, as a command run with every variable set before
	// it: the job's work where no command of its own is a launch
	// (MODEL_NAME=... then source jobs/run_eval.sh).
	hiddenRun *command
	// activated is the environment the script activates last (conda
	// activate evf_sam), named for the work more often than not.
	activated string
	workdir   string
	// dir and dirOK are the directory as command.dir has it.
	dir   string
	dirOK bool
	// log records writes to variables inside subshells and branches
	// (marks deep), to undo them afterwards.
	log   []undo
	marks int
	// frames hold, per function call, the variables its local
	// declarations hide, to restore when it returns.
	frames [][]undo
	// files are those the script wrote with a heredoc.
	files map[string]string
	// given are the job's own files read from its submitter's disk, by
	// jobPath: a file it sources is read from them where it is there, and
	// added to wanted where it is not.
	given     map[string]string
	wanted    *[]string
	fileBytes int
	nodes     int
	depth     int
	// prefix is put before every command read from a string run by a
	// launcher ("srun bash -c '...'"), so the launcher stays outermost.
	prefix []string
	// line is the script line of the outermost command being read; nested
	// counts the strings of code (bash -c, eval, heredocs) it runs, whose
	// own positions are not the script's; noLines says positions are not
	// the script's at all (it is being read in pieces).
	line    uint
	nested  int
	noLines bool
	emit    func(command)
	// last is the command emitted last, which a line of nothing but
	// options continues (a launch whose line lost its backslash).
	last []string
	// background is true while the statement read runs in the background.
	background bool
	continued  int
	// submitted is the first job the script submits on sbatch's standard
	// input (sbatch <<EOF ... EOF); nil when it submits none so.
	submitted *submission
	// loops counts the argument loops being run (argLoop), where break
	// is followed; broke says one was taken.
	loops int
	broke bool
}

// submission is a job script a script hands sbatch on its standard input,
// expanded as the shell would, with the options sbatch is given before it.
type submission struct {
	text string
	opts []Option
	line uint // the line of the sbatch command (0: not known)
	// bodyLine is the line the heredoc's body starts on (0: a here-string,
	// or a file).
	bodyLine uint
	// file is the job script the script wrote and named to sbatch, with
	// the arguments it gave it ("": a job on sbatch's standard input).
	file string
	args []string
	// wrap says the job is the command sbatch --wrap was given; unseen
	// that the job script named is not one the script wrote, so only
	// sbatch's options are known of it.
	wrap, unseen bool
}

func newShellReader(emit func(command)) *shellReader {
	return &shellReader{vars: map[string]shVar{}, exported: map[string]bool{}, funcs: map[string]*syntax.Stmt{}, emit: emit, dirOK: true}
}

// spend counts n units of work and reports whether the budget allows more.
func (r *shellReader) spend(n int) bool {
	r.nodes += n
	return r.nodes <= MaxShellNodes
}

// parsers reuse parsers, whose buffers are most of a small script's cost.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// shellAST is a script's parse (the first MaxScriptLines lines of text),
// kept for the readings of one job's files: the walks read it, never
// change it, and the parser keeps nothing of it once reset.
type shellAST struct {
	text  string
	stmts []*syntax.Stmt
	ok    bool
	docs  configDocs // the config files the readings parsed
}

// parseShellAST parses a script's text as scriptFeatures reads it, for
// the readings of one job's files.
func parseShellAST(text string) *shellAST {
	ast := newShellAST(firstLines(text, MaxScriptLines))
	ast.docs = configDocs{}
	return ast
}

// newShellAST parses text, already cut to MaxScriptLines.
func newShellAST(text string) *shellAST {
	stmts, ok := parseShell(text)
	return &shellAST{text: text, stmts: stmts, ok: ok}
}

// parseShell parses text as bash; on a syntax error it reports false.
func parseShell(text string) (stmts []*syntax.Stmt, ok bool) {
	p := parsers.Get().(*syntax.Parser)
	defer func() {
		// ParseScript never panics: a parser that did is dropped, and the
		// script read line by line.
		if recover() != nil {
			stmts, ok = nil, false
			return
		}
		parsers.Put(p)
	}()
	f, err := p.Parse(withoutLeadingComments(text), "")
	if err != nil || f == nil {
		return nil, false
	}
	return f.Stmts, true
}

// withoutLeadingComments reads a script with the comment lines it starts
// with (its #! line, #SBATCH header and opening prose) emptied, their
// newlines kept so that positions stay the script's: nothing can be open
// before the first command, and the parser keeps no comments, so it reads
// the same script without lexing them a character at a time.
func withoutLeadingComments(text string) io.Reader {
	end, lines := 0, 0 // the end of the leading comment and blank lines, and their count
	for end < len(text) {
		nl := strings.IndexByte(text[end:], '\n')
		line := text[end:]
		if nl >= 0 {
			line = text[end : end+nl]
		}
		if t := strings.TrimLeft(line, " \t"); t != "" && t[0] != '#' || nl < 0 {
			break
		}
		end, lines = end+nl+1, lines+1
	}
	if lines == 0 || lines > len(newlines) {
		return strings.NewReader(text)
	}
	return io.MultiReader(strings.NewReader(newlines[:lines]), strings.NewReader(text[end:]))
}

// newlines are the empty lines withoutLeadingComments puts in a header's place.
var newlines = strings.Repeat("\n", 4096)

// readText parses and walks a string of shell code (bash -c, a heredoc fed
// to bash, eval), one level deeper.
func (r *shellReader) readText(text string, prefix []string) {
	if r.depth >= MaxShellDepth || !r.spend(len(text)/64+1) {
		return
	}
	stmts, ok := parseShell(withoutHoles(text))
	if !ok {
		return
	}
	r.depth++
	r.nested++
	saved := r.prefix
	r.prefix = prefix
	r.stmts(stmts)
	r.prefix = saved
	r.nested--
	r.depth--
}

func (r *shellReader) stmts(ss []*syntax.Stmt) {
	for _, s := range ss {
		if !r.spend(1) || r.broke {
			return
		}
		r.stmt(s)
	}
}

func (r *shellReader) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	if s.Background && !r.background {
		r.background = true
		defer func() { r.background = false }()
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		r.call(c, s.Redirs)
	case *syntax.BinaryCmd:
		r.stmt(c.X)
		r.stmt(c.Y)
	case *syntax.Block:
		r.stmts(c.Stmts)
	case *syntax.Subshell:
		r.subshell(func() { r.stmts(c.Stmts) })
	case *syntax.IfClause:
		if r.decided(c) {
			return // if [ "$NGPU" -gt 1 ] with NGPU known: the branch bash takes
		}
		r.stmts(c.Cond)
		var branches []func()
		for e := c; e != nil; e = e.Else {
			then := e.Then
			if e != c {
				r.stmts(e.Cond)
			}
			branches = append(branches, func() { r.stmts(then) })
			if e.Else == nil && len(e.Cond) > 0 {
				branches = append(branches, func() {}) // no branch taken
			}
		}
		r.branches(branches)
	case *syntax.WhileClause:
		if kind := argLoop(c); kind != notArgLoop {
			r.argLoop(c, kind)
			return
		}
		r.stmts(c.Cond)
		r.stmts(c.Do)
	case *syntax.ForClause:
		if wi, ok := c.Loop.(*syntax.WordIter); ok && wi.Name != nil {
			if overArgs(wi) && r.parsesOnly(c.Do) {
				r.forArgs(wi.Name.Value, c.Do) // for arg in "$@"; do case $arg in --bs=*) ...
				return
			}
			items := r.fields(wi.Items)
			v := shVar{unknown: true}
			if len(items) > 0 && !unexpanded(items[0]) && len(wi.Items) > 0 && allSame(items) {
				// Every iteration runs with the one value; a loop over
				// several (models, batch sizes) leaves it unknown, as
				// branches that disagree do.
				v = shVar{vals: items[:1]}
			}
			r.setVar(wi.Name.Value, v)
		}
		r.stmts(c.Do)
	case *syntax.CaseClause:
		word := r.word(c.Word)
		var branches []func()
		for _, it := range c.Items {
			stmts := it.Stmts
			if !unexpanded(word) {
				for _, p := range it.Patterns {
					if pat := r.word(p); pat == word || globMatch(pat, word) {
						r.stmts(stmts)
						return
					}
				}
				continue
			}
			branches = append(branches, func() { r.stmts(stmts) })
		}
		r.branches(branches)
	case *syntax.FuncDecl:
		if c.Name != nil && len(r.funcs) < maxVars {
			r.funcs[c.Name.Value] = c.Body
		}
	case *syntax.DeclClause:
		export := c.Variant != nil && c.Variant.Value == "export" || c.Variant != nil && c.Variant.Value == "declare" && declExports(c.Args)
		local := len(r.frames) > 0 && c.Variant != nil && c.Variant.Value != "export" && c.Variant.Value != "readonly"
		for _, a := range c.Args {
			if a.Name == nil {
				continue
			}
			if local {
				// local (and declare in a function): restored when it returns.
				old, had := r.vars[a.Name.Value]
				top := &r.frames[len(r.frames)-1]
				*top = append(*top, undo{name: a.Name.Value, old: old, had: had})
				if a.Naked && a.Value == nil && a.Array == nil {
					r.unset(a.Name.Value)
				}
			}
			if !a.Naked || a.Value != nil || a.Array != nil {
				r.assign(a)
			}
			if export {
				r.exported[a.Name.Value] = true
			}
		}
	case *syntax.TimeClause:
		r.stmt(c.Stmt)
	case *syntax.CoprocClause:
		r.stmt(c.Stmt)
	}
}

func allSame(ws []string) bool {
	for _, w := range ws[1:] {
		if w != ws[0] {
			return false
		}
	}
	return true
}

// globMatch matches a case pattern (a100*, *v100*, [0-3]); a pattern it
// cannot read matches nothing.
func globMatch(pat, word string) bool {
	if unexpanded(pat) {
		return false
	}
	ok, err := path.Match(pat, word)
	return err == nil && ok
}

func declExports(args []*syntax.Assign) bool {
	for _, a := range args {
		if a.Naked && a.Name == nil && a.Value != nil {
			if lit := a.Value.Lit(); strings.HasPrefix(lit, "-") && strings.Contains(lit, "x") {
				return true
			}
		}
	}
	return false
}

// subshell runs fn with the variables and directory restored afterwards.
func (r *shellReader) subshell(fn func()) {
	wd, dir, dirOK := r.workdir, r.dir, r.dirOK
	mark := r.begin()
	fn()
	r.rollback(mark)
	r.workdir, r.dir, r.dirOK = wd, dir, dirOK
}

// undo is how to restore one variable written inside a subshell or branch.
type undo struct {
	name string
	old  shVar
	had  bool
}

// begin starts recording writes to variables and returns the mark to roll
// back to; nothing is recorded outside subshells and branches.
func (r *shellReader) begin() int {
	r.marks++
	return len(r.log)
}

// rollback restores the variables written since mark.
func (r *shellReader) rollback(mark int) {
	for i := len(r.log) - 1; i >= mark; i-- {
		u := r.log[i]
		if u.had {
			r.vars[u.name] = u.old
		} else {
			delete(r.vars, u.name)
		}
	}
	r.log = r.log[:mark]
	r.marks--
}

// branches walks each alternative of an if or case whose choice the script
// does not show, then keeps a variable only where the branches agree on it
// (a branch that leaves an unset variable unset does not disagree).
func (r *shellReader) branches(bs []func()) {
	if len(bs) == 0 {
		return
	}
	type result map[string]*shVar // nil: unset
	var results []result
	// A break or shift in one branch is not the others': each starts from
	// the same arguments; afterwards the loop stops where every branch
	// broke, and moves on as far as the branch that shifted most.
	args, rest := r.args, r.args
	broke := true
	for _, b := range bs {
		mark := r.begin()
		r.args, r.broke = args, false
		b()
		broke = broke && r.broke
		if len(r.args) < len(rest) {
			rest = r.args
		}
		res := result{}
		for _, u := range r.log[mark:] {
			if v, ok := r.vars[u.name]; ok {
				res[u.name] = &v
			} else {
				res[u.name] = nil
			}
		}
		r.rollback(mark)
		results = append(results, res)
	}
	r.args, r.broke = rest, broke && r.loops > 0
	done := map[string]bool{}
	for _, res := range results {
		for k := range res {
			if done[k] {
				continue
			}
			done[k] = true
			before, had := r.vars[k]
			var got *shVar
			unknown := false
			var alts []string // each branch's value, while all are known strings
			altsOK := true
			for _, other := range results {
				v, wrote := other[k]
				if !wrote {
					if had {
						v = &before
					} else {
						v = nil
					}
				}
				if v == nil || v.unknown || v.array || len(v.vals) != 1 {
					altsOK = false
				} else if !slices.Contains(alts, v.vals[0]) {
					alts = append(alts, v.vals[0])
				}
				switch {
				case v == nil && had:
					unknown = true // unset in one branch only
				case v == nil:
				case got == nil:
					got = v
				case !sameVar(*got, *v):
					if p, ok := commonPrefix(*got, *v); ok {
						got = &p // args+=(--resume x) in one branch: the rest is sure
					} else {
						unknown = true
					}
				}
			}
			switch {
			case unknown && altsOK && len(alts) > 1 && len(alts) <= maxAlts:
				r.setVar(k, shVar{unknown: true, alts: alts})
			case unknown:
				r.setVar(k, shVar{unknown: true})
			case got != nil:
				r.setVar(k, *got)
			}
		}
	}
}

// commonPrefix returns the elements two known arrays start with (all of
// the shorter one's, when one extends the other); for two strings, the shorter when the longer only
// adds whole words around it (CMD="$CMD --wandb-project p",
// PREFIX="NCCL_DEBUG=INFO $PREFIX" or CMD="nsys profile $CMD --profile" in
// one branch).
func commonPrefix(a, b shVar) (shVar, bool) {
	if a.unknown || b.unknown {
		return shVar{}, false
	}
	if !a.array && !b.array && len(a.vals) == 1 && len(b.vals) == 1 {
		short, long := a.vals[0], b.vals[0]
		if len(short) > len(long) {
			short, long = long, short
		}
		if short == "" {
			return shVar{}, false
		}
		for from := 0; ; {
			i := strings.Index(long[from:], short)
			if i < 0 {
				return shVar{}, false
			}
			i += from
			end := i + len(short)
			if (i == 0 || asciiSpace(long[i-1])) && (end == len(long) || asciiSpace(long[end])) {
				return shVar{vals: []string{short}}, true
			}
			from = i + 1
		}
	}
	if !a.array || !b.array {
		return shVar{}, false
	}
	// The elements both start with: what branches that each extend an
	// array their own way (args+=(--scenes a) in one, args+=(--scenes-file
	// b) in the other) agree on.
	n := 0
	for n < len(a.vals) && n < len(b.vals) && a.vals[n] == b.vals[n] {
		n++
	}
	if n < len(a.vals) && n < len(b.vals) && n > 0 && strings.HasPrefix(a.vals[n-1], "-") {
		n-- // a flag whose value the branches disagree on: --model x, --model y
	}
	if n == 0 {
		return shVar{}, false
	}
	return shVar{array: true, vals: slices.Clone(a.vals[:n])}, true
}

func sameVar(a, b shVar) bool {
	if a.unknown || b.unknown || a.array != b.array || len(a.vals) != len(b.vals) {
		return false
	}
	for i := range a.vals {
		if a.vals[i] != b.vals[i] {
			return false
		}
	}
	return true
}

func (r *shellReader) setVar(name string, v shVar) {
	old, ok := r.vars[name]
	if !ok && len(r.vars) >= maxVars {
		return
	}
	if r.marks > 0 {
		r.log = append(r.log, undo{name: name, old: old, had: ok})
	}
	r.vars[name] = v
}

func (r *shellReader) unset(name string) {
	old, ok := r.vars[name]
	if !ok {
		return
	}
	if r.marks > 0 {
		r.log = append(r.log, undo{name: name, old: old, had: true})
	}
	delete(r.vars, name)
}

// assign records NAME=value, NAME+=value, NAME=(a b) and NAME[i]=value.
func (r *shellReader) assign(a *syntax.Assign) {
	name := a.Name.Value
	old, had := r.vars[name]
	switch {
	case a.Array != nil:
		var vals []string
		for _, e := range a.Array.Elems {
			if e.Value != nil {
				vals = append(vals, r.fields([]*syntax.Word{e.Value})...)
			}
		}
		if a.Append && had {
			vals = append(append([]string(nil), old.vals...), vals...)
		}
		if len(vals) > maxFields {
			vals = vals[:maxFields]
		}
		r.setVar(name, shVar{vals: vals, array: true, unknown: a.Append && had && old.unknown})
	case a.Index != nil:
		r.setVar(name, shVar{unknown: true, array: true})
	default:
		v := ""
		if a.Value != nil {
			v = r.word(a.Value)
		}
		if a.Append && had {
			if old.unknown {
				v = unknownWord(name)
			} else {
				v = capWord(strings.Join(old.vals, " ") + v)
			}
		}
		if angleHole(v) {
			// ACCELERATE_DIR="<your_accelerate_dir>": a template's hole for
			// the user to fill, a value the script does not show.
			v = unknownWord(name)
		}
		r.setVar(name, shVar{vals: []string{v}, unknown: wholeUnknown(v)})
	}
}

// call reads one simple command: assignments, builtins that change what
// later commands see (cd, source, shift, read, unset, set), calls of the
// script's own functions, code run through bash -c and heredocs, and
// everything else handed to emit.
func (r *shellReader) call(c *syntax.CallExpr, redirs []*syntax.Redirect) {
	if r.nested == 0 && !r.noLines {
		r.line = c.Pos().Line()
	}
	if len(c.Args) == 0 {
		for _, a := range c.Assigns {
			if a.Name != nil {
				r.assign(a)
			}
		}
		return
	}
	var words []string
	for _, a := range c.Assigns {
		if a.Name != nil && a.Value != nil {
			words = append(words, a.Name.Value+"="+r.word(a.Value))
		}
	}
	if first := c.Args[0].Lit(); first == "cat" || first == "tee" {
		r.writeFile(c, redirs)
	}
	if first := c.Args[0].Lit(); (first == "conda" || first == "mamba" || first == "micromamba") && len(c.Args) > 2 &&
		c.Args[1].Lit() == "activate" {
		if name := activatedEnv(r.fields(c.Args)); name != "" {
			r.activated = name
		}
		return
	}
	if first := c.Args[0].Lit(); ignored[first] && !(len(c.Args) > 1 && c.Args[1].Lit() == "run") {
		return // echo, test, mkdir...: nothing to read, nothing to expand
	}
	if v, ok := r.vars[paramName(c.Args[0])]; ok && len(v.alts) > 0 {
		// ${header} "${args[@]}" after if/else set header two ways: each
		// way is a command the job may run.
		rest := r.fields(c.Args[1:])
		for _, alt := range v.alts {
			words := append(append(append([]string(nil), r.prefix...), strings.Fields(alt)...), rest...)
			r.emitWords(words, r.env(words))
		}
		return
	}
	args, sure := r.callArgs(c.Args)
	if len(args) == 0 {
		return
	}
	if strings.HasPrefix(args[0], "--") && len(args[0]) > 2 && r.last != nil && len(c.Assigns) == 0 &&
		len(r.last)+len(args) <= maxContinuedWords && r.continued < maxContinued {
		r.continued++
		// A line of options after a launch whose line lost its backslash
		// (or has a blank after it): no program is named --fp16, so bash
		// would fail where the writer meant the launch's arguments.
		words := append(slices.Clip(r.last), args...)
		r.emitWords(words, r.env(words))
		return
	}
	r.last = nil
	if ignored[args[0]] && !(len(args) > 1 && args[1] == "run") {
		return
	}
	switch args[0] {
	case ":":
		return // expanded for its ${VAR:=default}
	case "cd", "pushd":
		if len(args) > 1 {
			r.workdir = args[len(args)-1]
		}
		r.cd(args[1:])
		return
	case "popd":
		r.dirOK = false
		return
	case "source", ".":
		if name := activatedEnv(args); name != "" {
			r.activated = name
		}
		if len(args) > 1 {
			body, ok := r.files[args[1]]
			if !ok && !harmlessSource(args[1]) {
				// source scripts/env.sh: a file of the job's own, read
				// from its submitter's disk where it was.
				if body, ok = r.sourcedFile(args[1]); !ok {
					r.sourced = true
					words := append(append([]string(nil), r.prefix...), args[1:]...)
					if len(args) > 2 {
						// source finetune.sh "$MODEL_DIR" out/: a script given
						// arguments is run, as bash would run it, and it sees
						// every variable, exported or not.
						r.emitWords(words, r.allVars())
					} else {
						r.hiddenRun = &command{words: words, workdir: r.workdir, dir: r.dir, dirOK: r.dirOK, env: r.allVars(),
							line: r.line, files: r.files}
					}
				}
			}
			if ok {
				r.runFile(body, r.prefix, args[2:], false)
			}
		}
		return
	case "break":
		r.broke = r.loops > 0
		return
	case "shift":
		n := 1
		if len(args) > 1 {
			n, _ = strconv.Atoi(args[1])
		}
		if r.args != nil && n > 0 {
			r.args = r.args[min(n, len(r.args)):]
		}
		return
	case "read", "mapfile", "readarray":
		if name, text, ok := r.readHeredoc(args, redirs); ok {
			// read -r -d '' cmd <<EOF ... EOF: a command written out in full.
			r.setVar(name, shVar{vals: []string{text}})
			return
		}
		for _, a := range args[1:] {
			if isIdent(a) {
				r.setVar(a, shVar{unknown: true})
			}
		}
		return
	case "unset":
		for _, a := range args[1:] {
			r.unset(a)
		}
		return
	case "eval":
		r.readText(strings.Join(args[1:], " "), r.prefix)
		return
	}
	if body, ok := r.funcs[args[0]]; ok {
		r.callFunc(body, args[1:])
		return
	}
	words = append(append(append([]string(nil), r.prefix...), words...), args...)
	if prog := programIndex(words); prog < len(words) && isShellName(words[prog]) {
		if i := shellScript(words, prog); i < len(words) {
			if body, ok := r.files[words[i]]; ok {
				r.runFile(body, words[:prog], words[i+1:], true)
				return
			}
		}
	} else if prog < len(words) {
		if body, ok := r.files[words[prog]]; ok {
			// cat > inner.sh <<EOF ... EOF; chmod +x inner.sh; srun
			// apptainer exec img.sif ./inner.sh: the file the script wrote,
			// run as its own program.
			r.runFile(body, words[:prog], words[prog+1:], true)
			return
		}
	}
	if prog, code, ok := shellCode(words); ok {
		r.readText(code, words[:prog])
		return
	}
	if prog, code, ok := scriptCommand(words); ok {
		r.readText(code, words[:prog])
		return
	}
	if opts, script, wrap, args, ok := sbatchSubmission(words); ok {
		if wrap != "" && r.submitted == nil && !unexpanded(wrap) {
			// sbatch --gpus-per-node=h100:4 --wrap="bash -lc '...'": sbatch
			// writes the job's script, the command under sh.
			r.submitted = &submission{text: "#!/bin/sh\n" + wrap + "\n", opts: opts, wrap: true}
			if r.nested == 0 && !r.noLines {
				r.submitted.line = r.line
			}
		} else if script != "" {
			// A job script the script wrote itself (cat > job.sbatch
			// <<EOF ... EOF; sbatch job.sbatch); one it did not write is
			// not shown.
			if r.submitted == nil {
				// One it did not write is not shown: its header is what
				// sbatch is given (sbatch --gres=gpu:4 scripts/train.slurm).
				text, written := r.files[script]
				r.submitted = &submission{text: text, opts: opts, args: slices.Clip(args), file: script, unseen: !written}
				if r.nested == 0 && !r.noLines {
					r.submitted.line = r.line
				}
			}
		} else if text, bodyLine, ok := r.stdin(redirs); ok && r.submitted == nil {
			sub := &submission{text: text, opts: opts}
			switch {
			case bodyLine == 0: // a here-string
				sub.line = r.line
			case r.nested == 0 && !r.noLines: // a heredoc whose lines are the script's
				sub.line, sub.bodyLine = r.line, bodyLine
			}
			r.submitted = sub
		}
		return // a submission runs nothing here
	}
	for _, rd := range redirs {
		if (rd.Op == syntax.Hdoc || rd.Op == syntax.DashHdoc) && rd.Hdoc != nil {
			if prog, ok := shellProgram(words); ok {
				r.readText(r.hdoc(rd), words[:prog])
				return
			}
		}
	}
	if sure != nil {
		// MODEL_ARGS set two ways by if/else ("...,tensor_parallel_size=8"
		// in one, "...,data_parallel_size=8" in the other): what the ways
		// share is sure, the rest unknown.
		words = slices.Concat(words[:len(words)-len(args)], sure)
	}
	if py, ok := inlinePython(words, func() (string, bool) {
		for _, rd := range redirs {
			if (rd.Op == syntax.Hdoc || rd.Op == syntax.DashHdoc) && rd.Hdoc != nil {
				return r.hdoc(rd), true
			}
		}
		return "", false
	}); ok {
		words = py
	}
	r.emitWords(words, r.env(words))
}

// env returns the variables a command runs with: those exported, and
// those set on its own command line.
func (r *shellReader) env(words []string) map[string]string {
	env := make(map[string]string, len(r.exported))
	for k := range r.exported {
		if v, ok := r.vars[k]; ok && !v.unknown && len(v.vals) > 0 {
			env[k] = v.vals[0]
		}
	}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || !isIdent(k) {
			break
		}
		env[k] = v
	}
	return env
}

// emitWords hands a simple command, expanded, to emit, with where and how
// it runs.
func (r *shellReader) emitWords(words []string, env map[string]string) {
	r.last = words
	r.emit(command{words: words, workdir: r.workdir, dir: r.dir, dirOK: r.dirOK, env: env, line: r.line, files: r.files,
		background: r.background})
}

// Bounds on the lines of options read as continuing a launch: the words
// of one launch so continued, and the lines of a script read so, which
// keep a script of nothing but such lines cheap.
const (
	maxContinuedWords = 1024
	maxContinued      = 64
)

// paramName is the variable a word is nothing but an unquoted expansion
// of ($cmd, ${cmd}), or "".
func paramName(w *syntax.Word) string {
	if w == nil || len(w.Parts) != 1 {
		return ""
	}
	pe, ok := w.Parts[0].(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Exp != nil || pe.Repl != nil || pe.Index != nil || pe.Slice != nil || pe.Length || pe.Excl {
		return ""
	}
	return pe.Param.Value
}

// callArgs expands a command's arguments, each word once. Where one of
// them is a variable that if/else branches set apart (shVar.alts), sure
// is the arguments with what every branch's value holds in its place
// (sureWords); it is nil where none is such a variable.
func (r *shellReader) callArgs(ws []*syntax.Word) (args, sure []string) {
	for i := 1; i < len(ws); i++ {
		name, quoted := altsParam(ws[i])
		if v, set := r.vars[name]; name != "" && set && len(v.alts) > 0 {
			head, tail := r.fields(ws[:i]), r.fields(ws[i+1:])
			args = slices.Concat(head, r.fields(ws[i:i+1]), tail)
			return args[:min(len(args), maxFields)], slices.Concat(head, sureWords(v.alts, quoted, name), tail)
		}
	}
	return r.fields(ws), nil
}

// sureWords is what every one of a variable's values holds: of a quoted
// list of settings ("model_name=x,dtype=bfloat16,tp=8"), the settings all
// hold, as one word; of words, the options (with their values) all hold.
// What no value shares is the variable unknown.
func sureWords(alts []string, quoted bool, name string) []string {
	in := func(item string, items [][]string) bool {
		for _, it := range items {
			if !slices.Contains(it, item) {
				return false
			}
		}
		return true
	}
	var sure []string
	if quoted {
		items := make([][]string, len(alts))
		for i, a := range alts {
			items[i] = strings.Split(a, ",")
		}
		for _, it := range items[0] {
			if strings.Contains(it, "=") && in(it, items[1:]) {
				sure = append(sure, it)
			}
		}
		if len(sure) == 0 {
			return []string{unknownWord(name)}
		}
		return []string{strings.Join(sure, ",")}
	}
	// Options with their values: "--bf16", "--batch_size 4".
	groups := make([][]string, len(alts))
	for i, a := range alts {
		for _, w := range strings.Fields(a) {
			if n := len(groups[i]); n > 0 && !strings.HasPrefix(w, "-") {
				groups[i][n-1] += " " + w
			} else {
				groups[i] = append(groups[i], w)
			}
		}
	}
	for _, g := range groups[0] {
		if strings.HasPrefix(g, "-") && in(g, groups[1:]) {
			sure = append(sure, strings.Fields(g)...)
		}
	}
	return append(sure, unknownWord(name))
}

// altsParam is the variable a word is alone ($ARGS, or "$ARGS" quoted,
// kept one word).
func altsParam(w *syntax.Word) (name string, quoted bool) {
	if w != nil && len(w.Parts) == 1 {
		if dq, ok := w.Parts[0].(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
			return paramName(&syntax.Word{Parts: dq.Parts}), true
		}
	}
	return paramName(w), false
}

// allVars returns every variable the script set that Augur knows: what a
// sourced script sees. The copy is spent from the reading's work bound (a
// script of a thousand variables that sources a thousand files it does
// not show copies a million).
func (r *shellReader) allVars() map[string]string {
	if !r.spend(len(r.vars) / 16) {
		return nil
	}
	env := make(map[string]string, len(r.vars))
	for k, v := range r.vars {
		if !v.unknown && !v.array && len(v.vals) > 0 {
			env[k] = v.vals[0]
		}
	}
	return env
}

// ignored are commands that say nothing about the training they surround
// (conda and mamba do when they run something: conda run).
var ignored = set("echo", "printf", "mkdir", "export", "module", "ml", "set", "exit", "return", "rm", "cp", "mv", "ln",
	"cat", "sleep", "nvidia-smi", "hostname", "date", "conda", "mamba", "ulimit", "trap", "wait", "true",
	"[", "[[", "test", "tee", "head", "tail", "wc", "grep", "awk", "sed", "cut", "tr", "scontrol", "squeue",
	"sacct", "touch", "ls", "pwd", "basename", "dirname", "seq", "sort", "uniq", "xargs", "chmod", "find",
	"tar", "rsync", "wget", "curl", "git", "pip", "nproc", "false", "let", "declare", "local", "readonly", "continue",
	"shopt", "umask", "alias", "hash", "type", "getopts", "mktemp", "realpath", "readlink", "which", "whoami", "id",
	"uname", "stat", "du", "df", "free", "jq", "yq", "sha256sum", "md5sum", "gzip", "gunzip", "unzip", "zip")

// Bounds on the files a script writes with a heredoc and runs later.
const (
	maxFiles     = 64
	maxFileBytes = 1 << 20
)

// writeFile records "cat > run.sh <<EOF ... EOF" (or tee run.sh), so that a
// later "bash run.sh" or "source run.sh" reads what the script wrote.
func (r *shellReader) writeFile(c *syntax.CallExpr, redirs []*syntax.Redirect) {
	var body *syntax.Redirect
	name := ""
	for _, rd := range redirs {
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if rd.Hdoc != nil {
				body = rd
			}
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob:
			name = r.word(rd.Word)
		}
	}
	if c.Args[0].Lit() == "tee" && len(c.Args) > 1 {
		name = r.word(c.Args[len(c.Args)-1])
	}
	if body == nil || name == "" || len(r.files) >= maxFiles {
		return
	}
	text := r.hdoc(body)
	if r.fileBytes+len(text) > maxFileBytes {
		return
	}
	if r.files == nil {
		r.files = map[string]string{}
	}
	r.fileBytes += len(text)
	r.files[name] = text
}

// readHeredoc reads `read [-r] [-d ""] NAME <<EOF` (or <<< "text"): the
// variable gets the heredoc's text, all of it with an empty -d and its first line
// without; ok is false for any other read (from a file, a pipe, several
// names), whose values the script does not show.
func (r *shellReader) readHeredoc(args []string, redirs []*syntax.Redirect) (name, text string, ok bool) {
	if args[0] != "read" {
		return "", "", false
	}
	whole := false
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-d" && i+1 < len(args):
			whole = args[i+1] == ""
			i++
		case a == "-r" || a == "-s" || a == "-e":
		case isIdent(a) && name == "":
			name = a
		default:
			return "", "", false
		}
	}
	if name == "" {
		return "", "", false
	}
	if text, _, ok = r.stdin(redirs); !ok {
		return "", "", false
	}
	if !whole {
		text, _, _ = strings.Cut(text, "\n")
	}
	return name, strings.TrimRight(text, "\n"), true
}

// stdin returns what a command reads on its standard input from the last
// heredoc, here-string or file the script wrote it is given, expanded,
// with the line a heredoc's body starts on (0 for a here-string or a file).
func (r *shellReader) stdin(redirs []*syntax.Redirect) (text string, bodyLine uint, ok bool) {
	for i := len(redirs) - 1; i >= 0; i-- {
		switch rd := redirs[i]; {
		case (rd.Op == syntax.Hdoc || rd.Op == syntax.DashHdoc) && rd.Hdoc != nil:
			return r.hdoc(rd), rd.Hdoc.Pos().Line(), true
		case rd.Op == syntax.WordHdoc && rd.Word != nil:
			return r.word(rd.Word), 0, true
		case rd.Op == syntax.RdrIn && rd.Word != nil:
			// sbatch < job.sh: a file the script wrote (one it did not
			// write is not shown).
			if body, ok := r.files[r.word(rd.Word)]; ok {
				return body, 0, true
			}
			return "", 0, false
		}
	}
	return "", 0, false
}

// runFile reads a file the script wrote: sourced (its variables stay) or
// run by a shell (a child: they do not), with args as $1, $2...
func (r *shellReader) runFile(body string, prefix, args []string, child bool) {
	saved := r.args
	r.args = args
	if child {
		r.subshell(func() { r.readText(body, prefix) })
	} else {
		r.readText(body, prefix)
	}
	r.args = saved
}

// hdoc expands a heredoc's body to text as bash does: after a quoted
// delimiter (<<'EOF') as it is written; after a bare one (<<EOF) with its
// expansions done and the backslashes that kept a $, ` or \ from them gone
// (sbatch <<EOF ... echo \$SLURM_JOB_ID: the job's own variable).
func (r *shellReader) hdoc(rd *syntax.Redirect) string {
	var b strings.Builder
	if quotedDelim(rd.Word) {
		for _, p := range rd.Hdoc.Parts {
			if l, ok := p.(*syntax.Lit); ok {
				b.WriteString(l.Value)
			}
		}
	} else {
		r.parts(rd.Hdoc.Parts, &b, true)
	}
	return capWord(b.String())
}

// quotedDelim reports whether a heredoc's delimiter is quoted ('EOF',
// "EOF", \EOF), which leaves its body unexpanded.
func quotedDelim(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, "\\") {
				return true
			}
		}
	}
	return false
}

// unescapeHdoc removes the backslashes an unquoted heredoc's body drops:
// those before $, ` and \ (a backslash and newline, kept, still joins the
// lines when the text is read as code).
func unescapeHdoc(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\\", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (r *shellReader) callFunc(body *syntax.Stmt, args []string) {
	if r.depth >= MaxShellDepth {
		return
	}
	r.depth++
	saved := r.args
	r.args = args
	r.frames = append(r.frames, nil)
	r.stmt(body)
	frame := r.frames[len(r.frames)-1]
	r.frames = r.frames[:len(r.frames)-1]
	for i := len(frame) - 1; i >= 0; i-- {
		if u := frame[i]; u.had {
			r.setVar(u.name, u.old)
		} else {
			r.unset(u.name)
		}
	}
	r.args = saved
	r.depth--
}

// sourcedFile looks up a file the script sources in the job's own files
// (given, by jobPath); where it is not there, its path is added to wanted.
func (r *shellReader) sourcedFile(name string) (string, bool) {
	if r.wanted == nil {
		return "", false
	}
	p, ok := jobPath(r.dir, r.dirOK, name)
	if !ok {
		return "", false
	}
	if body, ok := r.given[p]; ok {
		return body, true
	}
	want(r.wanted, p)
	return "", false
}

// harmlessSource tells files that set up an environment (conda, a venv,
// modules, the shell's rc files) from ones that may set the job's variables.
func harmlessSource(p string) bool {
	base := p[strings.LastIndexByte(p, '/')+1:]
	switch base {
	case "activate", ".bashrc", ".bash_profile", ".profile", "profile", "bashrc", "conda.sh", "mamba.sh",
		"lmod.sh", "modules.sh", "bash", "setup_env.sh", "env.sh", "enable", "setvars.sh", "spack.sh":
		return base != "env.sh" && base != "setup_env.sh"
	}
	return strings.HasPrefix(p, "/etc/") || strings.HasPrefix(p, "/dev/") // a site's set-up; /dev/null, a job's empty stdin
}

// fields expands words as bash does for a command's arguments: "${a[@]}"
// gives one word per element, unquoted expansions are split at blanks.
func (r *shellReader) fields(ws []*syntax.Word) []string {
	var out []string
	for _, w := range ws {
		if len(out) >= maxFields || !r.spend(1) {
			break
		}
		out = r.wordFields(w, out)
	}
	return out
}

// wordFields appends the fields of one word to out.
func (r *shellReader) wordFields(w *syntax.Word, out []string) []string {
	// "${arr[@]}" and $@ alone in a word expand to their elements.
	if len(w.Parts) == 1 {
		part := w.Parts[0]
		quoted := false
		if dq, ok := part.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
			part, quoted = dq.Parts[0], true
		}
		if pe, ok := part.(*syntax.ParamExp); ok {
			if vals, ok := r.list(pe); ok {
				if !r.spend(len(vals)/4 + 1) {
					return out
				}
				for _, v := range vals {
					if len(out) >= maxFields {
						break
					}
					if quoted {
						out = append(out, v)
					} else {
						out = append(out, strings.Fields(v)...)
					}
				}
				return out
			}
			if !quoted {
				// An unquoted expansion splits at blanks (an unset one vanishes).
				var b strings.Builder
				r.parts(w.Parts, &b, false)
				s := capWord(b.String())
				if !strings.ContainsAny(s, " \t\n") {
					if s == "" {
						return out
					}
					return append(out, s)
				}
				fs := strings.Fields(s)
				return append(out, fs[:min(len(fs), maxFields)]...)
			}
		}
	}
	return append(out, r.word(w))
}

// list expands ${arr[@]}, ${arr[*]}, $@ and $* to their elements, and
// reports false for any other expansion.
func (r *shellReader) list(pe *syntax.ParamExp) ([]string, bool) {
	if pe.Param == nil || pe.Exp != nil || pe.Length || pe.Excl || pe.Repl != nil {
		return nil, false
	}
	name := pe.Param.Value
	if pe.Slice != nil {
		// "${@:2}", "${arr[@]:1:2}": the elements from an offset.
		if name != "@" && name != "*" && pe.Index == nil {
			return nil, false
		}
		all, ok := r.list(&syntax.ParamExp{Param: pe.Param, Index: pe.Index})
		if !ok {
			return nil, false
		}
		positional := name == "@" || name == "*"
		off, n, ok := sliceBounds(pe.Slice)
		if positional {
			off-- // ${@:1} starts at $1, the first element
		}
		if v, isVar := r.vars[name]; !ok || off < 0 || positional && r.args == nil || !positional && (!isVar || v.unknown) {
			return []string{unknownWord(name)}, true
		}
		all = all[min(off, len(all)):]
		if n >= 0 {
			all = all[:min(n, len(all))]
		}
		return all, true
	}
	if name == "@" || name == "*" {
		if r.args == nil {
			return []string{unknownWord(name)}, true
		}
		return r.args, true
	}
	if pe.Index == nil {
		return nil, false
	}
	idx, ok := pe.Index.(*syntax.Word)
	if !ok || (idx.Lit() != "@" && idx.Lit() != "*") {
		return nil, false
	}
	v, ok := r.vars[name]
	if !ok || v.unknown {
		return []string{unknownWord(name + "[@]")}, true
	}
	return v.vals, true
}

// sliceBounds reads the literal offset and length of ${x:off:len}; the
// length is -1 when not given.
func sliceBounds(sl *syntax.Slice) (off, n int, ok bool) {
	num := func(e syntax.ArithmExpr) (int, bool) {
		w, isWord := e.(*syntax.Word)
		if !isWord {
			return 0, false
		}
		v, err := strconv.Atoi(w.Lit())
		return v, err == nil && v >= 0 && v <= 1<<16
	}
	if off, ok = num(sl.Offset); !ok {
		return 0, 0, false
	}
	if sl.Length == nil {
		return off, -1, true
	}
	n, ok = num(sl.Length)
	return off, n, ok
}

// word expands one word to a single string.
func (r *shellReader) word(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	if len(w.Parts) == 1 {
		// The common case, a plain or quoted literal, needs no builder.
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			if !strings.Contains(p.Value, "\\") && r.spend(1) {
				return p.Value
			}
		case *syntax.SglQuoted:
			if r.spend(1) {
				return p.Value
			}
		}
	}
	var b strings.Builder
	r.parts(w.Parts, &b, false)
	return capWord(b.String())
}

// capWord cuts a word to maxWordLen bytes, so that doubling a variable
// again and again cannot grow it without bound.
func capWord(s string) string {
	if len(s) > maxWordLen {
		return s[:maxWordLen]
	}
	return s
}

func (r *shellReader) parts(ps []syntax.WordPart, b *strings.Builder, hdoc bool) {
	for _, p := range ps {
		if b.Len() >= maxWordLen || !r.spend(1) {
			return
		}
		switch p := p.(type) {
		case *syntax.Lit:
			if hdoc {
				b.WriteString(unescapeHdoc(p.Value))
			} else {
				b.WriteString(unescape(p.Value))
			}
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			r.parts(p.Parts, b, hdoc)
		case *syntax.ParamExp:
			b.WriteString(r.param(p))
		case *syntax.CmdSubst:
			if n, ok := r.gpusOnNode(p.Stmts); ok {
				b.WriteString(n) // $(nvidia-smi -L | wc -l): the GPUs Slurm gives the node
				continue
			}
			if prog, ok := r.whichProgram(p.Stmts); ok {
				b.WriteString(prog) // $(which fairseq-train): the program's own name
				continue
			}
			if file, ok := r.resolvedPath(p.Stmts); ok {
				b.WriteString(file) // $(realpath "$HOME/proj/main.py"): the same file
				continue
			}
			if dir, ok := r.hubSnapshot(p.Stmts); ok {
				b.WriteString(dir) // $(find $HF_HOME/hub/models--Qwen--Qwen3-4B/snapshots ...): a path in that model's cache
				continue
			}
			// What runs inside is read as commands; its output is unknown.
			r.subshell(func() { r.stmts(p.Stmts) })
			b.WriteString("$(...)")
		case *syntax.ArithmExp:
			if n, ok := r.arith(p.X, 0); ok {
				b.WriteString(strconv.FormatInt(n, 10))
			} else {
				// Unknown, in a spelling that parses again when the word
				// becomes code (bash -c "... $N ...").
				b.WriteString("$(...)")
			}
		default:
			b.WriteString("$(...)")
		}
	}
}

// gpusOnNode reads a command substitution that counts the GPUs the job
// sees on its node at run time ($(nvidia-smi -L | wc -l), $(nvidia-smi
// --query-gpu=name --format=csv,noheader | wc -l), $(python -c "import
// torch; print(torch.cuda.device_count())")): Slurm shows the job the
// GPUs it allocated on the node, so the count is $SLURM_GPUS_ON_NODE, when
// the header says it.
func (r *shellReader) gpusOnNode(ss []*syntax.Stmt) (string, bool) {
	n, _, known := r.lookup("SLURM_GPUS_ON_NODE", nil)
	if !known || n == "" || len(ss) != 1 || ss[0].Background || len(ss[0].Redirs) > 0 {
		return "", false
	}
	var cmds [][]string // the pipeline's commands, first to last
	var walk func(c syntax.Command) bool
	walk = func(c syntax.Command) bool {
		switch c := c.(type) {
		case *syntax.BinaryCmd:
			return c.Op == syntax.Pipe && len(c.X.Redirs) == 0 && walk(c.X.Cmd) && len(c.Y.Redirs) == 0 && walk(c.Y.Cmd)
		case *syntax.CallExpr:
			if len(c.Assigns) > 0 || len(cmds) >= 2 {
				return false
			}
			cmds = append(cmds, r.fields(c.Args))
			return true
		}
		return false
	}
	if !walk(ss[0].Cmd) {
		return "", false
	}
	switch {
	case len(cmds) == 1:
		w := cmds[0]
		if len(w) != 3 || !isPythonName(w[0]) || w[1] != "-c" {
			return "", false
		}
		code := strings.TrimSuffix(strings.Join(strings.Fields(w[2]), ""), ";")
		return n, code == "importtorch;print(torch.cuda.device_count())"
	case len(cmds) == 2 && slices.Equal(cmds[1], []string{"wc", "-l"}) && len(cmds[0]) >= 2 && cmds[0][0] == "nvidia-smi":
		opts := cmds[0][1:]
		if len(opts) == 1 && (opts[0] == "-L" || opts[0] == "--list-gpus") {
			return n, true
		}
		// --query-gpu=... --format=csv,noheader: one line a GPU.
		query, noheader := false, false
		for _, o := range opts {
			switch {
			case strings.HasPrefix(o, "--query-gpu="):
				query = true
			case strings.HasPrefix(o, "--format=") && strings.Contains(o, "noheader"):
				noheader = true
			default:
				return "", false
			}
		}
		return n, query && noheader
	}
	return "", false
}

// soleCommand returns the words of a command substitution that is one
// simple command, in the foreground, without assignments or redirections.
func (r *shellReader) soleCommand(ss []*syntax.Stmt) ([]string, bool) {
	if len(ss) != 1 || ss[0].Background || len(ss[0].Redirs) > 0 {
		return nil, false
	}
	c, ok := ss[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Assigns) > 0 {
		return nil, false
	}
	return r.fields(c.Args), true
}

// whichProgram reads $(which NAME) and $(command -v NAME), which print
// where the program NAME is: the word stands for NAME.
func (r *shellReader) whichProgram(ss []*syntax.Stmt) (string, bool) {
	words, ok := r.soleCommand(ss)
	if !ok {
		return "", false
	}
	switch {
	case len(words) == 2 && words[0] == "which",
		len(words) == 3 && words[0] == "command" && words[1] == "-v":
		prog := words[len(words)-1]
		if prog == "" || unexpanded(prog) || strings.HasPrefix(prog, "-") {
			return "", false
		}
		return prog, true
	}
	return "", false
}

// resolvedPath reads $(realpath PATH) and $(readlink -f PATH), which print
// PATH resolved: the word stands for PATH, the same file.
func (r *shellReader) resolvedPath(ss []*syntax.Stmt) (string, bool) {
	words, ok := r.soleCommand(ss)
	if !ok || len(words) < 2 {
		return "", false
	}
	switch words[0] {
	case "realpath":
	case "readlink":
		if !slices.ContainsFunc(words[1:], func(w string) bool { return w == "-f" || w == "-e" || w == "-m" }) {
			return "", false // readlink alone prints the link's target
		}
	default:
		return "", false
	}
	var file string
	for _, w := range words[1:] {
		switch {
		case strings.HasPrefix(w, "-"):
		case file != "":
			return "", false // several paths, one a line
		default:
			file = w
		}
	}
	return file, file != ""
}

// hubSnapshot reads a command substitution that looks a model's files up
// in the Hugging Face hub cache ($(find "$HF_HOME/hub/models--Qwen--Qwen3-4B/snapshots"
// -maxdepth 1 -mindepth 1 | head -1), $(ls -d .../models--org--name/snapshots/*)):
// its output is a path under the directory it names, which is returned.
func (r *shellReader) hubSnapshot(ss []*syntax.Stmt) (string, bool) {
	if len(ss) != 1 {
		return "", false
	}
	cmd := ss[0].Cmd
	for {
		bin, ok := cmd.(*syntax.BinaryCmd)
		if !ok || bin.Op != syntax.Pipe {
			break
		}
		cmd = bin.X.Cmd // the first command of a pipeline lists the paths
	}
	c, ok := cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) < 2 {
		return "", false
	}
	words := r.fields(c.Args)
	switch path.Base(words[0]) {
	case "find", "ls", "readlink", "realpath", "echo":
	default:
		return "", false
	}
	for _, w := range words[1:] {
		if hubCacheID(strings.ToLower(w)) != "" {
			return w, true
		}
	}
	return "", false
}

// unescape removes the backslashes of an unquoted literal ("a\ b", "\$").
func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// param expands $NAME, ${NAME}, ${NAME:-default} and friends, ${#NAME},
// ${arr[i]} and the positional parameters; what the script does not show
// stays unknown.
func (r *shellReader) param(pe *syntax.ParamExp) string {
	if pe.Param == nil || pe.Excl || pe.Names != 0 || pe.NestedParam != nil {
		return unknownWord("?")
	}
	name := pe.Param.Value
	val, set, known := r.lookup(name, pe.Index)
	if pe.Length {
		if !known {
			return unknownWord("#" + name)
		}
		if v, ok := r.vars[name]; ok && v.array && pe.Index != nil {
			return strconv.Itoa(len(v.vals))
		}
		return strconv.Itoa(len(val))
	}
	if e := pe.Exp; e != nil {
		switch e.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
			useDefault := !set || (e.Op == syntax.DefaultUnsetOrNull || e.Op == syntax.AssignUnsetOrNull) && val == "" && known
			if known && !useDefault {
				return val
			}
			if !known && set {
				return unknownWord(name)
			}
			if !set && r.mayBeSet(name) {
				return unknownWord(name)
			}
			def := r.word(e.Word)
			if e.Op == syntax.AssignUnset || e.Op == syntax.AssignUnsetOrNull {
				r.setVar(name, shVar{vals: []string{def}, unknown: wholeUnknown(def)})
			}
			return def
		case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
			if !known && (set || r.mayBeSet(name)) {
				return unknownWord(name)
			}
			if set && (e.Op == syntax.AlternateUnset || val != "") {
				return r.word(e.Word)
			}
			return ""
		case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		default:
			if !known {
				return unknownWord(name)
			}
			return r.trim(val, e)
		}
	}
	if pe.Slice != nil || pe.Repl != nil || len(pe.Modifiers) > 0 {
		return unknownWord(name)
	}
	if !known {
		return unknownWord(name)
	}
	return val
}

// trim applies ${v%pat}, ${v#pat} and case changes for literal patterns.
func (r *shellReader) trim(val string, e *syntax.Expansion) string {
	pat := r.word(e.Word)
	if strings.ContainsAny(pat, "*?[") {
		// One * at either end of a literal: ${1#*=} (after the first =),
		// ${p##*/} (the base name), ${f%.*} (before the last dot),
		// ${v%%/*} (before the first /), ${f%*.yaml} and ${v#--*}.
		small := e.Op == syntax.RemSmallPrefix || e.Op == syntax.RemSmallSuffix
		prefix := e.Op == syntax.RemSmallPrefix || e.Op == syntax.RemLargePrefix
		suffix := e.Op == syntax.RemSmallSuffix || e.Op == syntax.RemLargeSuffix
		lead, trail := strings.HasPrefix(pat, "*"), strings.HasSuffix(pat, "*")
		sep := strings.TrimSuffix(strings.TrimPrefix(pat, "*"), "*")
		if (!prefix && !suffix) || lead == trail || sep == "" || strings.ContainsAny(sep, "*?[") {
			return unknownWord("?")
		}
		switch {
		case prefix && lead: // *sep: through the first (small) or last sep
			i := strings.Index(val, sep)
			if !small {
				i = strings.LastIndex(val, sep)
			}
			if i >= 0 {
				return val[i+len(sep):]
			}
		case suffix && trail: // sep*: from the last (small) or first sep
			i := strings.LastIndex(val, sep)
			if !small {
				i = strings.Index(val, sep)
			}
			if i >= 0 {
				return val[:i]
			}
		case prefix && strings.HasPrefix(val, sep): // sep*: the sep alone, or everything
			if small {
				return val[len(sep):]
			}
			return ""
		case suffix && strings.HasSuffix(val, sep): // *sep
			if small {
				return val[:len(val)-len(sep)]
			}
			return ""
		}
		return val
	}
	switch e.Op {
	case syntax.RemSmallSuffix, syntax.RemLargeSuffix:
		return strings.TrimSuffix(val, pat)
	case syntax.RemSmallPrefix, syntax.RemLargePrefix:
		return strings.TrimPrefix(val, pat)
	case syntax.UpperAll:
		return strings.ToUpper(val)
	case syntax.LowerAll:
		return strings.ToLower(val)
	}
	return unknownWord("?")
}

// mayBeSet reports whether an unset variable may have been set where Augur
// cannot see: by a sourced file, or in the job's environment (SLURM_*). A
// sourced file does not set the script's own arguments ($1): their
// defaults are read as they are without one.
func (r *shellReader) mayBeSet(name string) bool {
	return r.sourced && !isDigits(name) || strings.HasPrefix(name, "SLURM_")
}

// lookup returns a variable's value, whether it is set, and whether its
// value is known.
func (r *shellReader) lookup(name string, index syntax.ArithmExpr) (val string, set, known bool) {
	if n, err := strconv.Atoi(name); err == nil {
		if r.args == nil && n > 0 {
			// The script's own arguments (sbatch job.sh ARGS): like a
			// variable of the submitter's environment, only a default
			// written beside one is known.
			return "", false, false
		}
		if r.args == nil || n == 0 {
			return "", true, false
		}
		if n <= len(r.args) {
			return r.args[n-1], true, !unexpanded(r.args[n-1])
		}
		return "", false, true
	}
	switch name {
	case "#":
		if r.args == nil {
			return "", true, false
		}
		return strconv.Itoa(len(r.args)), true, true
	case "@", "*":
		if r.args == nil {
			return "", true, false
		}
		return strings.Join(r.args, " "), true, true
	case "?", "$", "!", "-", "RANDOM", "PWD", "HOME", "USER", "HOSTNAME", "SECONDS", "LINENO", "BASH_SOURCE", "PPID":
		return "", true, false
	}
	v, ok := r.vars[name]
	if !ok {
		// sbatch passes the submitter's environment: an unset variable
		// may be set there, so only a default written beside it is known.
		return "", r.mayBeSet(name), false
	}
	if v.unknown {
		return "", true, false
	}
	i := 0
	if index != nil {
		if w, ok := index.(*syntax.Word); ok && (w.Lit() == "@" || w.Lit() == "*") {
			// "${args[@]}" inside a string ("cmd ${args[@]}"): its
			// elements joined, as bash joins them there.
			// An element the script does not show keeps its own marker.
			return strings.Join(v.vals, " "), true, true
		}
		n, ok := r.arith(index, 0)
		if !ok {
			// An index not known here (${models[$SLURM_ARRAY_TASK_ID]}):
			// the value is known only when every element is the same.
			if len(v.vals) > 0 && !slices.ContainsFunc(v.vals[1:], func(x string) bool { return x != v.vals[0] }) {
				return v.vals[0], true, !unexpanded(v.vals[0])
			}
			return "", true, false
		}
		i = int(n)
	}
	if i < 0 || i >= len(v.vals) {
		return "", false, true
	}
	return v.vals[i], true, true
}

// arith evaluates integer arithmetic over literals and known variables,
// comparisons giving 1 or 0 as bash's do ($# > 0, count <= 3).
func (r *shellReader) arith(x syntax.ArithmExpr, depth int) (int64, bool) {
	if depth > 32 || !r.spend(1) {
		return 0, false
	}
	switch x := x.(type) {
	case *syntax.Word:
		s := r.word(x)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		if isIdent(s) {
			if val, _, known := r.lookup(s, nil); known {
				n, err := strconv.ParseInt(val, 10, 64)
				return n, err == nil
			}
		}
		return 0, false
	case *syntax.ParenArithm:
		return r.arith(x.X, depth+1)
	case *syntax.BinaryArithm:
		a, ok1 := r.arith(x.X, depth+1)
		b, ok2 := r.arith(x.Y, depth+1)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch x.Op {
		case syntax.Add:
			return a + b, true
		case syntax.Sub:
			return a - b, true
		case syntax.Mul:
			return a * b, true
		case syntax.Quo:
			if b == 0 {
				return 0, false
			}
			return a / b, true
		case syntax.Gtr:
			return boolInt(a > b), true
		case syntax.Geq:
			return boolInt(a >= b), true
		case syntax.Lss:
			return boolInt(a < b), true
		case syntax.Leq:
			return boolInt(a <= b), true
		case syntax.Eql:
			return boolInt(a == b), true
		case syntax.Neq:
			return boolInt(a != b), true
		}
	}
	return 0, false
}

// boolInt is a comparison's value in shell arithmetic: 1 for true.
func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

// shellCode finds "bash -c CODE" (sh, zsh, dash; -lc, -ec) behind any
// wrappers and launchers, and returns the index of the shell and the code.
func shellCode(words []string) (int, string, bool) {
	prog := programIndex(words)
	if prog < 0 || prog >= len(words) || !isShellName(words[prog]) {
		return 0, "", false
	}
	for i := prog + 1; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") {
			return 0, "", false
		}
		if strings.Contains(w, "c") && !strings.HasPrefix(w, "--") && i+1 < len(words) {
			return prog, words[i+1], true
		}
	}
	return 0, "", false
}

// scriptCommand reports whether a shell script is handed a whole command
// as one argument to run (timm's distributed_train.sh "python train.py
// --model ..."): a word of several words whose first is a launcher or a
// python program. It returns that command, and where the script is.
func scriptCommand(words []string) (int, string, bool) {
	prog := programIndex(words)
	if prog >= len(words) {
		return 0, "", false
	}
	script := prog
	if isShellName(words[prog]) {
		script = shellScript(words, prog)
	}
	if script >= len(words) || !strings.HasSuffix(words[script], ".sh") {
		return 0, "", false
	}
	for _, a := range words[script+1:] {
		if f := strings.Fields(a); len(f) > 1 && (launchers[path.Base(f[0])] != "" || strings.HasSuffix(f[0], ".py")) {
			return prog, a, true
		}
	}
	return 0, "", false
}

// sbatchFlags are sbatch's options that take no value.
var sbatchFlags = set("--parsable", "--wait", "-W", "--exclusive", "--requeue", "--no-requeue", "--hold", "-H",
	"--test-only", "--quiet", "-Q", "--verbose", "-v", "--overcommit", "-O", "--contiguous", "--spread-job",
	"--use-min-nodes", "--ignore-pbs", "--get-user-env", "--no-kill", "-k", "--reboot", "--oversubscribe", "-s",
	"--kill-on-invalid-dep")

// sbatchSubmission reports whether a command is sbatch given a job
// script, with the options it is given: the script named (and its
// arguments), the command --wrap gives, or neither where sbatch reads the
// script from standard input.
func sbatchSubmission(words []string) (opts []Option, script, wrap string, args []string, ok bool) {
	i := 0
	for i < len(words) && strings.Contains(words[i], "=") && isIdent(words[i][:strings.IndexByte(words[i], '=')]) {
		i++ // VAR=value sbatch ...
	}
	if i >= len(words) || path.Base(words[i]) != "sbatch" {
		return nil, "", "", nil, false
	}
	for i++; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--":
			return nil, "", "", nil, false
		case w == "-":
			return nil, "", "", nil, false
		case !strings.HasPrefix(w, "-") && wrap == "":
			return canonicalKeys(opts), w, "", words[i+1:], true // the job's script, named
		case !strings.HasPrefix(w, "-"):
			return nil, "", "", nil, false // a script and --wrap: sbatch refuses
		case w == "--wrap" && i+1 < len(words):
			wrap = words[i+1]
			i++
		case strings.HasPrefix(w, "--wrap="):
			wrap = strings.TrimPrefix(w, "--wrap=")
		case strings.HasPrefix(w, "--wrap"):
			return nil, "", "", nil, false
		case sbatchFlags[w]:
			opts = append(opts, Option{Key: w})
		case strings.Contains(w, "=") && (strings.HasPrefix(w, "--") || len(w) > 2 && w[2] == '='):
			k, v, _ := strings.Cut(w, "=")
			opts = append(opts, Option{Key: k, Value: v})
		case !strings.HasPrefix(w, "--") && len(w) > 2 && strings.IndexByte(sbatchShortArgs, w[1]) >= 0:
			opts = append(opts, Option{Key: w[:2], Value: w[2:]}) // -N4
		case i+1 < len(words):
			opts = append(opts, Option{Key: w, Value: words[i+1]})
			i++
		default:
			opts = append(opts, Option{Key: w})
		}
	}
	return canonicalKeys(opts), "", wrap, nil, true
}

// shellProgram reports whether a command is a shell reading its commands
// from stdin ("bash", "bash -s", "srun bash"), so a heredoc is shell code.
func shellProgram(words []string) (int, bool) {
	prog := programIndex(words)
	if prog < 0 || prog >= len(words) || !isShellName(words[prog]) {
		return 0, false
	}
	for _, w := range words[prog+1:] {
		if !strings.HasPrefix(w, "-") {
			return 0, false
		}
	}
	return prog, true
}

func isShellName(w string) bool {
	switch w[strings.LastIndexByte(w, '/')+1:] {
	case "bash", "sh", "zsh", "dash", "ksh":
		return true
	}
	return false
}

// angleHole reports whether a value is a template's hole alone: <account>,
// <your_accelerate_dir>.
func angleHole(v string) bool {
	return len(v) > 2 && v[0] == '<' && v[len(v)-1] == '>' && !strings.ContainsAny(v[1:len(v)-1], "<> \t\n")
}

// withoutHoles is code a string holds with a template's holes
// (<PATH TO gpt-vocab.json>, <TENSORBOARD DIRECTORY>, <your_dir>) written as
// the word PLACEHOLDER: a person reads them as values to fill in, where the
// shell would read redirections that swallow the words after them
// (--tensorboard-dir <TENSORBOARD DIRECTORY> --fp16).
func withoutHoles(code string) string {
	if !strings.Contains(code, "<") {
		return code
	}
	var b strings.Builder
	rest, changed := code, false
	for {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			break
		}
		end := strings.IndexAny(rest[i+1:], "<>\n")
		if end < 0 || rest[i+1+end] != '>' || !holeText(rest[i+1:i+1+end]) {
			b.WriteString(rest[:i+1])
			rest = rest[i+1:]
			continue
		}
		b.WriteString(rest[:i])
		b.WriteString("PLACEHOLDER")
		rest, changed = rest[i+2+end:], true
	}
	if !changed {
		return code
	}
	b.WriteString(rest)
	return b.String()
}

// holeText reports whether the text between < and > is a template's hole:
// a first word in capitals (PATH TO x, SLURM OPTIONS) or one that says
// what to put there (your_dir, path_to_data).
func holeText(t string) bool {
	first, _, _ := strings.Cut(t, " ")
	if len(first) >= 3 && strings.ToUpper(first) == first && strings.ToLower(first) != first {
		return true
	}
	return placeholder(first)
}
