package predictor

import (
	"cmp"
	"path"
	"regexp"
	"slices"
	"strings"
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
		line := program[strings.LastIndexByte(program[:start], '\n')+1 : start]
		if strings.TrimSpace(line) != "" {
			pos = start + 1 // in a comment or a string, not a decorator
			continue
		}
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
// (train.py, or the module of python -m), or nil where none does; prog is
// the index of the program word (programIndex).
func programArgsAfter(words []string, prog int, program string) []string {
	if mod, ok := strings.CutPrefix(program, "-m "); ok {
		for i := 1; i < len(words); i++ {
			if words[i] == mod && words[i-1] == "-m" {
				return words[i+1:]
			}
		}
		return nil
	}
	for i := prog; i < len(words); i++ {
		if path.Base(words[i]) == program {
			return words[i+1:]
		}
	}
	return nil
}

// maxHydraDefaults bounds the entries read from one defaults list,
// maxHydraDepth how deep configs including configs are followed, and
// maxHydraPasses the passes over the chosen groups' files, each of which
// may choose others.
const (
	maxHydraDefaults = 64
	maxHydraDepth    = 4
	maxHydraPasses   = 4
)

// hydraEntry is one entry of a defaults list: one that chooses an option
// of a group (- model: resnet50, - override /model: unet, - /db@backup:
// pg), or one that includes another config of the including config's own
// group (- base_train), its option alone.
type hydraEntry struct {
	group, option      string
	override, absolute bool
}

// hydraConfig is one config file read: its settings, its defaults list,
// and whether its @package line ("# @package _global_") puts its
// settings at the top level.
type hydraConfig struct {
	top     map[string]any
	entries []hydraEntry
	global  bool
}

// hydraDoc reads a config file's text: ok is false where it is not a YAML
// mapping.
func hydraDoc(text string, docs configDocs) (c hydraConfig, ok bool) {
	doc, ok := docs.parse(text)
	if !ok {
		return c, false
	}
	if c.top, ok = doc.(map[string]any); !ok {
		return c, false
	}
	for line := range scriptLines(text) {
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "#") {
			break
		}
		if pkg, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(t, "#")), "@package"); ok {
			c.global = strings.TrimSpace(pkg) == "_global_"
		}
	}
	list, _ := c.top["defaults"].([]any)
	for _, e := range list[:min(len(list), maxHydraDefaults)] {
		if e, ok := hydraEntryOf(e); ok {
			c.entries = append(c.entries, e)
		}
	}
	return c, true
}

// hydraEntryOf reads one entry of a defaults list: a group's choice
// (- model: resnet50, - override /model: unet, - optional db: pg,
// - /db@backup: pg), or a config the including config's group holds
// (- base_train). Entries that choose nothing (_self_, a group set to
// null, a list of options, an expansion) and Hydra's own groups
// (hydra/launcher) are not read (ok false).
func hydraEntryOf(v any) (e hydraEntry, ok bool) {
	if inc, ok := v.(string); ok {
		inc = strings.TrimSpace(inc)
		return hydraEntry{option: inc}, inc != "" && inc != "_self_" && !unexpanded(inc)
	}
	m, isMap := v.(map[string]any)
	if !isMap || len(m) != 1 {
		return e, false
	}
	for k, v := range m {
		opt, isString := v.(string)
		if !isString || opt == "" || unexpanded(opt) {
			return e, false
		}
		k = strings.TrimSpace(k)
		if rest, ok := strings.CutPrefix(k, "override "); ok {
			k, e.override = strings.TrimSpace(rest), true
		}
		k = strings.TrimSpace(strings.TrimPrefix(k, "optional "))
		e.absolute = strings.HasPrefix(k, "/")
		e.group, _, _ = strings.Cut(strings.TrimPrefix(k, "/"), "@")
		e.option = opt
	}
	return e, e.group != "" && e.group != "hydra" && !strings.HasPrefix(e.group, "hydra/")
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

// hydraChoice is a group's option and where it was chosen.
type hydraChoice struct{ option, from string }

// hydraComposition is a Hydra application's config as the files read so
// far compose it.
type hydraComposition struct {
	dir     string // the config directory, as a jobPath
	given   map[string]string
	wanted  *[]string
	parsed  map[string]*hydraConfig // by path; nil: not a config
	choices map[string]hydraChoice
	order   []string        // the groups, in the order first chosen
	command map[string]bool // the groups the command line chose
	docs    configDocs
}

// config returns the config file at p, adding p to wanted where given
// lacks it (when ask).
func (h *hydraComposition) config(p string, ask bool) *hydraConfig {
	if c, ok := h.parsed[p]; ok {
		return c
	}
	text, ok := h.given[p]
	if !ok {
		if ask {
			want(h.wanted, p)
		}
		return nil
	}
	var c *hydraConfig
	if doc, ok := hydraDoc(text, h.docs); ok {
		c = &doc
	}
	h.parsed[p] = c
	return c
}

func (h *hydraComposition) choose(group, option, from string) {
	if _, ok := h.choices[group]; !ok {
		h.order = append(h.order, group)
	}
	h.choices[group] = hydraChoice{option, from}
}

// groupFile is the file of a group's option ("" for none: null, a list).
func (h *hydraComposition) groupFile(group string) string {
	ch := h.choices[group]
	if ch.option == "" || ch.option == "null" || strings.ContainsAny(ch.option, "[]{},") {
		return ""
	}
	return path.Join(h.dir, group, hydraYAML(ch.option))
}

func hydraYAML(n string) string {
	if ext := path.Ext(n); ext != ".yaml" && ext != ".yml" {
		n += ".yaml"
	}
	return n
}

// settle reads the config at p (of group, "" for the primary) and those
// it includes, taking the choices their defaults lists make: an override
// wins over an earlier choice, but never over the command line's; a plain
// entry chooses only a group not chosen yet. It reports whether a choice
// changed.
func (h *hydraComposition) settle(p, group string, depth int, ask bool) (changed bool) {
	c := h.config(p, ask)
	if c == nil || depth > maxHydraDepth {
		return false
	}
	for _, e := range c.entries {
		if e.group == "" {
			changed = h.settle(path.Join(path.Dir(p), hydraYAML(e.option)), group, depth+1, ask) || changed
			continue
		}
		g := e.group
		if !e.absolute && group != "" {
			g = group + "/" + g // a group's own subgroup
		}
		// The command line's choice stands; an earlier one stands unless
		// this entry overrides it with another option.
		if prev, chosen := h.choices[g]; !h.command[g] && (!chosen || e.override && prev.option != e.option) {
			h.choose(g, e.option, path.Base(p)+" defaults")
			changed = true
		}
	}
	return changed
}

// settings appends the settings of the config at p (of group) and of
// those it includes (before its own: they are below it) to the primary's
// and global configs (cfgs, as configFileFeatures would read them) or to
// the groups' settings (args, under the group's package).
func (h *hydraComposition) settings(p, group string, depth int, cfgs *[]Features, args *[]string, src map[string]string) {
	c := h.config(p, false)
	if c == nil || depth > maxHydraDepth {
		return
	}
	for _, e := range c.entries {
		if e.group == "" {
			h.settings(path.Join(path.Dir(p), hydraYAML(e.option)), group, depth+1, cfgs, args, src)
		}
	}
	if group == "" || c.global {
		if f, ok := hydraSettings(path.Base(p), c.top, ""); ok {
			*cfgs = append(*cfgs, f)
		}
		return
	}
	*args = append(*args, hydraArgsOf(path.Base(p), c.top, strings.ReplaceAll(group, "/", ".")+".", src)...)
}

// hydraFeatures composes what a Hydra application launched by c is
// configured with, from the files in given (by their jobPath), and adds
// the files it needs and given lacks to wanted. program is the program as
// commandFeatures names it, progPath its jobPath and text its source (or
// excerpt) where read. refines reports that the model is what a group
// the command line chose names in its file (model=pythia69, whose file
// names EleutherAI/pythia-6.9b), which says more than the command line's
// own word.
func hydraFeatures(c *launchPaths, program, progPath, text string, haveText bool, given map[string]string, wanted *[]string, docs configDocs) (f Features, found, refines bool) {
	call := hydraArgs(programArgsAfter(c.words, c.prog, program))
	declPath, declName, declared := "", "", false
	if haveText {
		declPath, declName, declared = hydraMain(text)
	}
	if !call.flags && !declared {
		return f, false, false
	}
	cp, name := cmp.Or(call.path, declPath), cmp.Or(call.name, declName)
	// The config directory: --config-path or the declared config_path,
	// relative to the program's file; else --config-dir, relative to
	// where the command runs.
	h := &hydraComposition{given: given, wanted: wanted, parsed: map[string]*hydraConfig{},
		choices: map[string]hydraChoice{}, command: map[string]bool{}, docs: docs}
	switch {
	case strings.Contains(cp, "://"):
		return f, false, false
	case cp != "" && (path.IsAbs(cp) || strings.HasPrefix(cp, "~") || strings.HasPrefix(cp, "$")):
		hp, ok := c.host(cp)
		d, ok2 := jobPath(c.dir, c.dirOK, hp)
		if !ok || !ok2 {
			return f, false, false
		}
		h.dir = d
	case cp != "" && progPath != "":
		h.dir = path.Join(path.Dir(progPath), cp)
	case call.dir != "":
		hp, ok := c.host(call.dir)
		d, ok2 := jobPath(c.dir, c.dirOK, hp)
		if !ok || !ok2 {
			return f, false, false
		}
		h.dir = d
	default:
		return f, false, false
	}
	primary := ""
	if name != "" && !unexpanded(name) {
		primary = path.Join(h.dir, hydraYAML(name))
		h.settle(primary, "", 0, true)
	}
	// The command line's choices: a key=value is a group's choice only
	// where a defaults list has the group, or the command adds an
	// experiment (+experiment=x).
	command := func() (changed bool) {
		for _, o := range call.overrides {
			g := o[0]
			if h.command[g] || strings.Contains(g, ".") || o[1] == "" || o[1] == "null" || unexpanded(o[1]) {
				continue
			}
			if _, known := h.choices[g]; known || strings.HasPrefix(g, "experiment") {
				h.choose(g, o[1], "command line")
				h.command[g], changed = true, true
			}
		}
		return changed
	}
	// The chosen groups' files, most telling first, the command line's
	// before the others: a file may change other groups' choices (an
	// experiment's override /model: unet), so while one of the command
	// line's is still to be read, the others wait.
	for range maxHydraPasses {
		changed := command()
		groups := slices.Clone(h.order)
		rank := func(g string) int {
			if h.command[g] {
				return hydraGroupRank(g)
			}
			return 100 + hydraGroupRank(g)
		}
		slices.SortStableFunc(groups, func(a, b string) int { return rank(a) - rank(b) })
		pending := false
		for _, g := range groups {
			if pending && !h.command[g] {
				break
			}
			p := h.groupFile(g)
			if p == "" {
				continue
			}
			if _, read := h.given[p]; !read {
				h.config(p, true)
				pending = pending || h.command[g]
				continue
			}
			changed = h.settle(p, g, 0, true) || changed
		}
		if !changed {
			break
		}
	}

	// What the composition says: the choices read as the command line's
	// group=option would be, with the chosen groups' settings (a model
	// group's file that names its checkpoint says more than the option's
	// name); the primary's settings over those, an experiment's over the
	// primary's.
	var cfgs []Features
	var choiceArgs, groupArgs []string
	src := map[string]string{}
	if primary != "" {
		h.settings(primary, "", 0, &cfgs, &groupArgs, src)
	}
	for _, g := range h.order {
		ch := h.choices[g]
		if ch.option == "null" {
			continue
		}
		flag := "--" + strings.ReplaceAll(g, "/", ".")
		opt := ch.option
		if ext := path.Ext(opt); ext == ".yaml" || ext == ".yml" {
			opt = strings.TrimSuffix(opt, ext) // override /model: autoencoder.yaml chooses autoencoder
		}
		choiceArgs = append(choiceArgs, flag, opt)
		src[flag] = ch.from
		if p := h.groupFile(g); p != "" {
			h.settings(p, g, 0, &cfgs, &groupArgs, src)
		}
	}
	f = argFeatures(Features{}, append(choiceArgs, groupArgs...), launch{})
	if f.Model != "" {
		// The command line reads its own choices; here they only let a
		// group's file say what the choice means.
		flag, _, _ := strings.Cut(f.From["model"], " ")
		switch key := strings.ReplaceAll(strings.TrimPrefix(flag, "--"), ".", "/"); {
		case src[flag] == "command line":
			f.Model, f.ModelFrom = "", ""
			delete(f.From, "model")
		default:
			for g := range h.command {
				refines = refines || strings.HasPrefix(key, g+"/")
			}
		}
	}
	hydraSources(&f, src)
	found = len(f.From) > 0
	for i := len(cfgs) - 1; i >= 0; i-- {
		if found {
			f = mergeFeatures(cfgs[i], f)
		} else {
			f, found = cfgs[i], true
		}
	}
	return f, found, refines
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
	hydraSources(&f, src)
	return f, len(f.From) > 0
}

// hydraSources names the file each feature came from, as a config
// file's features name it (train.yaml: data.batch_size); a source that
// is no one setting (a shape's parameter count) is left as it is.
func hydraSources(f *Features, src map[string]string) {
	for k, v := range f.From {
		if file, ok := src[v]; ok {
			f.From[k] = file + ": " + strings.TrimPrefix(v, "--")
		}
	}
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
