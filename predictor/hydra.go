package predictor

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A Hydra application (@hydra.main) composes its config from files the
// script never names: the primary config (config_name, in config_path,
// relative to the program's file), the group options its defaults list
// chooses (model: resnet50 is model/resnet50.yaml), and what the command
// line chooses over them (experiment=x, whose file may override other
// groups: override /model: unet). Under predictor.job_files each reading
// names the next files the composition needs (Script.Files), so a caller
// reads them in rounds (ReadJobFiles): the program, then its primary
// config and the groups the command line chooses, then the groups those
// choose. What the composition says is read as a config file's settings,
// below the command line's own.

var (
	// pyHydraMain is a @hydra.main(...) decorator (or @hydra_runner, as
	// NeMo spells it) with its literal arguments.
	pyHydraMain = regexp.MustCompile(`@(?:hydra\.main|hydra_runner)\(([^()]{0,400})\)`)
	// pyHydraArg is one keyword argument of it with a string literal.
	pyHydraArg = regexp.MustCompile(`\b(config_path|config_name)\s*=\s*(?:"([^"\n]*)"|'([^'\n]*)')`)
)

// hydraMain returns the config_path and config_name a program's
// @hydra.main declares (empty where it gives none or not as a literal),
// and whether it has one.
func hydraMain(program string) (dir, name string, ok bool) {
	m := pyHydraMain.FindStringSubmatch(hydraDecorator(program))
	if m == nil {
		return "", "", false
	}
	for _, a := range pyHydraArg.FindAllStringSubmatch(m[1], -1) {
		v := a[2] + a[3]
		if a[1] == "config_path" {
			dir = v
		} else {
			name = v
		}
	}
	return dir, name, true
}

// hydraDecorator returns a program's first @hydra.main(...) (or
// @hydra_runner(...)) decorator, or "": the regular expression runs only
// where a plain search finds one.
func hydraDecorator(program string) string {
	for pos := 0; ; {
		i := strings.Index(program[pos:], "@hydra")
		if i < 0 {
			return ""
		}
		start := pos + i
		if m := pyHydraMain.FindString(program[start:min(len(program), start+512)]); m != "" && strings.HasPrefix(program[start:], m) {
			return m
		}
		pos = start + 1
	}
}

// hydraCall is what a command line tells a Hydra application: its
// --config-path (-cp), --config-dir (-cd) and --config-name (-cn), and
// its overrides (key=value, +key=value), in order.
type hydraCall struct {
	path, dir, name string
	flags           bool // any of the three was given
	overrides       [][2]string
}

// hydraArgs reads the arguments after a program's word as Hydra does.
func hydraArgs(args []string) hydraCall {
	var h hydraCall
	for i := 0; i < len(args); i++ {
		a := args[i]
		k, v, eq := strings.Cut(a, "=")
		var dst *string
		switch k {
		case "--config-path", "-cp":
			dst = &h.path
		case "--config-dir", "-cd":
			dst = &h.dir
		case "--config-name", "-cn":
			dst = &h.name
		}
		switch {
		case dst != nil && eq:
			*dst, h.flags = v, true
		case dst != nil && i+1 < len(args):
			*dst, h.flags = args[i+1], true
			i++
		case eq && !strings.HasPrefix(k, "-") && !strings.HasPrefix(k, "~"):
			h.overrides = append(h.overrides, [2]string{strings.TrimLeft(k, "+"), v})
		}
	}
	return h
}

// programArgsAfter returns the words after the one naming the program
// (train.py, or the module of python -m), or nil where none does.
func programArgsAfter(words []string, program string) []string {
	if mod, ok := strings.CutPrefix(program, "-m "); ok {
		for i := 1; i < len(words); i++ {
			if words[i] == mod && words[i-1] == "-m" {
				return words[i+1:]
			}
		}
		return nil
	}
	for i, w := range words {
		if path.Base(w) == program {
			return words[i+1:]
		}
	}
	return nil
}

// maxHydraDefaults bounds the entries read from one defaults list.
const maxHydraDefaults = 64

// hydraEntry is one entry of a defaults list that chooses an option of a
// group: - model: resnet50, - override /model: unet, - /db@backup: pg.
type hydraEntry struct {
	group, option string
	override      bool
}

// hydraDoc reads a config's defaults list, and its @package line
// ("# @package _global_" puts its settings at the top level), from its
// text: nil where it is not a YAML mapping.
func hydraDoc(text string) (top map[string]any, entries []hydraEntry, global bool) {
	var doc any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, nil, false
	}
	top, _ = doc.(map[string]any)
	if top == nil {
		return nil, nil, false
	}
	for line := range scriptLines(text) {
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "#") {
			break
		}
		if pkg, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(t, "#")), "@package"); ok {
			global = strings.TrimSpace(pkg) == "_global_"
		}
	}
	list, _ := top["defaults"].([]any)
	for _, e := range list[:min(len(list), maxHydraDefaults)] {
		m, ok := e.(map[string]any)
		if !ok || len(m) != 1 {
			continue
		}
		for k, v := range m {
			opt, ok := v.(string)
			if !ok || opt == "" || unexpanded(opt) {
				continue
			}
			k = strings.TrimSpace(k)
			var e hydraEntry
			if rest, ok := strings.CutPrefix(k, "override "); ok {
				k, e.override = strings.TrimSpace(rest), true
			}
			k = strings.TrimSpace(strings.TrimPrefix(k, "optional "))
			e.group, _, _ = strings.Cut(strings.TrimPrefix(k, "/"), "@")
			if e.group == "" || e.group == "hydra" || strings.HasPrefix(e.group, "hydra/") {
				continue
			}
			e.option = opt
			entries = append(entries, e)
		}
	}
	return top, entries, global
}

// hydraGroupRank orders the groups whose files are read first where not
// all can be: those that say what is trained and how.
func hydraGroupRank(group string) int {
	g := strings.ToLower(group)
	for i, w := range []string{"experiment", "model", "net", "arch", "backbone", "data", "trainer", "train", "optim"} {
		if strings.Contains(g, w) {
			return i
		}
	}
	return 99
}

// hydraFeatures composes what a Hydra application launched by c is
// configured with, from the files in given (by their jobPath), and adds
// the files it needs and given lacks to wanted. program is the program as
// commandFeatures names it, text its source (or excerpt) where read.
func hydraFeatures(c command, program, progPath, text string, haveText bool, given map[string]string, wanted *[]string) (Features, bool) {
	args := programArgsAfter(c.words, program)
	call := hydraArgs(args)
	declPath, declName, declared := "", "", false
	if haveText {
		declPath, declName, declared = hydraMain(text)
	}
	if !call.flags && !declared {
		return Features{}, false
	}
	cp, name := call.path, call.name
	if cp == "" {
		cp = declPath
	}
	if name == "" {
		name = declName
	}
	// The config directory: --config-path or the declared config_path,
	// relative to the program's file; else --config-dir, relative to
	// where the command runs.
	var dir string
	switch {
	case cp != "" && !strings.Contains(cp, "://") && (path.IsAbs(cp) || strings.HasPrefix(cp, "~") || strings.HasPrefix(cp, "$")):
		d, ok := jobPath(c.dir, c.dirOK, cp)
		if !ok {
			return Features{}, false
		}
		dir = d
	case cp != "" && !strings.Contains(cp, "://") && progPath != "":
		dir = path.Join(path.Dir(progPath), cp)
	case call.dir != "":
		d, ok := jobPath(c.dir, c.dirOK, call.dir)
		if !ok {
			return Features{}, false
		}
		dir = d
	default:
		return Features{}, false
	}
	need := func(p string) (string, bool) {
		if t, ok := given[p]; ok {
			return t, true
		}
		if len(*wanted) < MaxJobFiles && !slices.Contains(*wanted, p) {
			*wanted = append(*wanted, p)
		}
		return "", false
	}
	yamlName := func(n string) string {
		if ext := path.Ext(n); ext != ".yaml" && ext != ".yml" {
			n += ".yaml"
		}
		return n
	}

	// The choices, with where each was made: the primary's defaults, the
	// chosen groups' overrides, the command line's over both.
	type choice struct{ option, from string }
	choices := map[string]choice{}
	var order []string
	choose := func(group, option, from string) {
		if _, ok := choices[group]; !ok {
			order = append(order, group)
		}
		choices[group] = choice{option, from}
	}
	var cfgs []Features // lowest precedence first
	if name != "" && !unexpanded(name) {
		p := path.Join(dir, yamlName(name))
		if t, ok := need(p); ok {
			top, entries, _ := hydraDoc(t)
			for _, e := range entries {
				choose(e.group, e.option, path.Base(p)+" defaults")
			}
			if f, ok := hydraSettings(path.Base(p), top, ""); ok {
				cfgs = append(cfgs, f)
			}
		}
	}
	command := map[string]bool{}
	known := func(g string) bool { _, ok := choices[g]; return ok }
	for _, o := range call.overrides {
		g := o[0]
		if strings.Contains(g, ".") || o[1] == "" || o[1] == "null" || unexpanded(o[1]) {
			continue
		}
		// A key=value is a group's choice only where a defaults list
		// has the group, or the command adds it (+experiment=x).
		if known(g) || strings.HasPrefix(strings.TrimSpace(g), "experiment") {
			choose(g, o[1], "command line")
			command[g] = true
		}
	}
	// The chosen groups' files, most telling first; a file read may
	// override other groups' choices (an experiment's override
	// /model: unet), below the command line's.
	// The groups' settings are read with the choices, as one command
	// line: a model group's file that names its checkpoint says more than
	// the option's name.
	var groupArgs []string
	src := map[string]string{}
	read := map[string]bool{}
	for round := 0; round < 3; round++ {
		groups := slices.Clone(order)
		rank := func(g string) int {
			if command[g] {
				return hydraGroupRank(g)
			}
			return 100 + hydraGroupRank(g)
		}
		slices.SortStableFunc(groups, func(a, b string) int { return rank(a) - rank(b) })
		changed, pending := false, false
		for _, g := range groups {
			if pending && !command[g] {
				// A file the command line chooses is still to be read,
				// and may choose other groups' options: those wait.
				break
			}
			ch := choices[g]
			if ch.option == "null" || strings.ContainsAny(ch.option, "[]{},") {
				continue
			}
			p := path.Join(dir, g, yamlName(ch.option))
			if read[p] {
				continue
			}
			t, ok := need(p)
			if !ok {
				pending = pending || command[g]
				continue
			}
			read[p] = true
			top, entries, global := hydraDoc(t)
			for _, e := range entries {
				if e.override && !command[e.group] {
					if prev, ok := choices[e.group]; !ok || prev.option != e.option {
						choose(e.group, e.option, path.Base(p)+" defaults")
						changed = true
					}
				}
			}
			prefix := strings.ReplaceAll(g, "/", ".") + "."
			if global {
				prefix = ""
			}
			if global {
				if f, ok := hydraSettings(path.Base(p), top, prefix); ok {
					cfgs = append(cfgs, f) // an experiment's settings, over the primary's
				}
			} else {
				groupArgs = append(groupArgs, hydraArgsOf(path.Base(p), top, prefix, src)...)
			}
		}
		if !changed {
			break
		}
	}
	// The choices read as the command line's group=option would be.
	var choiceArgs []string
	for _, g := range order {
		if ch := choices[g]; !command[g] && ch.option != "null" {
			flag := "--" + strings.ReplaceAll(g, "/", ".")
			choiceArgs = append(choiceArgs, flag, ch.option)
			src[flag] = ch.from
		}
	}
	f := argFeatures(Features{}, append(choiceArgs, groupArgs...), launch{})
	for k, v := range f.From {
		f.From[k] = src[v] + ": " + strings.TrimPrefix(v, "--")
	}
	found := len(f.From) > 0
	// An experiment's settings win over the primary's, and both over the
	// groups'.
	for i := len(cfgs) - 1; i >= 0; i-- {
		if found {
			f = mergeFeatures(cfgs[i], f)
		} else {
			f, found = cfgs[i], true
		}
	}
	return f, found
}

// hydraSettings reads a Hydra config's settings (not its defaults list)
// as a config file's, under prefix (a group's package).
func hydraSettings(name string, top map[string]any, prefix string) (Features, bool) {
	src := map[string]string{}
	args := hydraArgsOf(name, top, prefix, src)
	if len(args) == 0 {
		return Features{}, false
	}
	f := argFeatures(Features{}, args, launch{})
	for k, v := range f.From {
		f.From[k] = src[v] + ": " + strings.TrimPrefix(v, "--")
	}
	return f, len(f.From) > 0
}

// hydraArgsOf flattens a Hydra config's settings (not its defaults list)
// under prefix as --key value pairs, noting in src that each key is
// name's.
func hydraArgsOf(name string, top map[string]any, prefix string, src map[string]string) []string {
	if top == nil {
		return nil
	}
	m := make(map[string]any, len(top))
	for k, v := range top {
		if k != "defaults" {
			m[k] = v
		}
	}
	var args []string
	flatten(m, prefix, false, &args)
	for _, a := range args {
		if strings.HasPrefix(a, "--") {
			src[a] = name
		}
	}
	return args
}
