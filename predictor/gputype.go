package predictor

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Reading a GPU type from what sites name after it.
//
// Most sites do not ask for a GPU type through gres: they ask for a node
// feature (--constraint=a100, -C "[v100|a100]", -C v100-32g, -C volta32gb),
// or name a partition (gpu_a100, kempner_h100, A40short), an account
// (proj@h100 at IDRIS) or a QOS (qos_gpu_h100-t4) after it. This file reads
// those names without any site knowledge: ReadGPUNames turns one name into
// the GPU types its words spell, canonicalised (volta32gb and v100_32gb are
// both v100 with 32 GiB); ParseConstraint reads a Slurm constraint
// expression, which Evaluate then interprets with whatever meaning the
// caller gives each feature (the GPU types it names here, a node's features
// in augurd, the site's aliases). augurd adds what only the site knows
// (sidecar/core: cluster.gpu_types[].aliases, the nodes' own features).

// GPUName is a GPU type as a name spells it: its canonical type ("a100",
// "v100", "h100", ...; "" when the name states only memory, as "gpu80"
// does) and the memory the name states, in GiB (0: not stated).
type GPUName struct {
	Type   string
	MemGiB int
}

// String writes the name canonically: "a100", "v100-32g", or "gpu-80g" for
// memory alone. ReadGPUNames reads it back unchanged.
func (g GPUName) String() string {
	switch {
	case g.MemGiB == 0:
		return g.Type
	case g.Type == "":
		return "gpu-" + strconv.Itoa(g.MemGiB) + "g"
	}
	return g.Type + "-" + strconv.Itoa(g.MemGiB) + "g"
}

// Meet is the more specific of two names that can mean the same GPU (same
// type or one without a type, same memory or one without memory): v100
// and v100-32g meet in v100-32g. ok is false when they cannot.
func (g GPUName) Meet(o GPUName) (GPUName, bool) {
	if g.Type != "" && o.Type != "" && g.Type != o.Type {
		return GPUName{}, false
	}
	if g.MemGiB != 0 && o.MemGiB != 0 && g.MemGiB != o.MemGiB {
		return GPUName{}, false
	}
	return GPUName{Type: cmp.Or(g.Type, o.Type), MemGiB: max(g.MemGiB, o.MemGiB)}, true
}

// gpuSpellings maps a spelling of a GPU (lower case, letters and digits
// only) to its canonical type and, for the spellings that imply it, its
// memory. Family names stand for the datacenter GPU of the family that
// sites name their nodes after (pascal: P100, volta: V100, ampere: A100,
// lovelace: L40S, hopper: H100, blackwell: B200).
var gpuSpellings = map[string]GPUName{
	"a100": {"a100", 0}, "ampere": {"a100", 0}, "a100l": {"a100", 80}, // Mila: the 80 GB A100s
	"a10": {"a10", 0}, "a10g": {"a10", 24}, "a16": {"a16", 0}, "a30": {"a30", 0}, "a40": {"a40", 0},
	"a800":  {"a800", 0},
	"a4000": {"a4000", 0}, "a4500": {"a4500", 0}, "a5000": {"a5000", 0}, "a5500": {"a5500", 0},
	"a6000": {"a6000", 0}, "rtxa6000": {"a6000", 0}, "rtxa5000": {"a5000", 0}, "rtxa4000": {"a4000", 0},
	"h100": {"h100", 0}, "hopper": {"h100", 0}, "h200": {"h200", 0}, "h800": {"h800", 0}, "gh200": {"gh200", 0},
	"gracehopper": {"gh200", 0}, // "Grace-Hopper", "Grace Hopper": NVIDIA's GH200 superchip
	"b100":        {"b100", 0}, "b200": {"b200", 0}, "gb200": {"gb200", 0},
	"l4": {"l4", 0}, "l40": {"l40", 0}, "l40s": {"l40s", 0}, "lovelace": {"l40s", 0},
	"blackwell": {"b200", 0},
	"t4":        {"t4", 0},
	"v100":      {"v100", 0}, "volta": {"v100", 0}, "v100s": {"v100", 32}, "v100l": {"v100", 32},
	"p100": {"p100", 0}, "pascal": {"p100", 0}, "p40": {"p40", 0},
	"k40": {"k40", 0}, "k80": {"k80", 0}, "m40": {"m40", 0}, "m60": {"m60", 0},
	"rtx6000": {"rtx6000", 0}, "rtx8000": {"rtx8000", 0}, "rtx6k": {"rtx6000", 0}, "rtx8k": {"rtx8000", 0},
	"rtx4000": {"rtx4000", 0}, "rtx5000": {"rtx5000", 0}, // the Quadro RTX 4000 and 5000 (Turing)
	// The RTX 6000 Ada: partitions and gres types say 6000ada.
	"rtx6000ada": {"rtx6000ada", 0}, "6000ada": {"rtx6000ada", 0}, "5000ada": {"rtx5000ada", 0}, "4000ada": {"rtx4000ada", 0},
	"rtx5880": {"rtx5880", 0}, "rtx5000ada": {"rtx5000ada", 0}, "rtx4000ada": {"rtx4000ada", 0},
	"rtxpro6000": {"rtxpro6000", 0}, "l20": {"l20", 0}, "h20": {"h20", 0},
	// The RTX PRO 6000 Blackwell, as gres types and partitions shorten it
	// (gpu:pro6000:1) and spell it out (rtx-pro-6000-blackwell).
	"pro6000": {"rtxpro6000", 0}, "rtxpro6000blackwell": {"rtxpro6000", 0}, "pro6000blackwell": {"rtxpro6000", 0},
	"titanrtx": {"titanrtx", 0}, "titanv": {"titanv", 0}, "titanx": {"titanx", 0}, "titanxp": {"titanxp", 0},
	"gtx1080": {"gtx1080", 0}, "gtx1080ti": {"gtx1080ti", 0},
	"rtx2080": {"rtx2080", 0}, "rtx2080ti": {"rtx2080ti", 0},
	"rtx3080": {"rtx3080", 0}, "rtx3090": {"rtx3090", 0}, "rtx4080": {"rtx4080", 0}, "rtx4090": {"rtx4090", 0},
	// The GeForce model numbers alone, as partitions and features name them
	// (-p 3090, -C 2080ti); 6000 and 8000 stay unread (Quadro or RTX A).
	"1080": {"gtx1080", 0}, "1080ti": {"gtx1080ti", 0}, "2080": {"rtx2080", 0}, "2080ti": {"rtx2080ti", 0},
	"3080": {"rtx3080", 0}, "3090": {"rtx3090", 0}, "4080": {"rtx4080", 0}, "4090": {"rtx4090", 0},
	"3060": {"rtx3060", 0}, "3070": {"rtx3070", 0}, "3080ti": {"rtx3080ti", 0}, "3090ti": {"rtx3090ti", 0},
	"4060": {"rtx4060", 0}, "4060ti": {"rtx4060ti", 0}, "4070": {"rtx4070", 0}, "4070ti": {"rtx4070ti", 0},
	"5060": {"rtx5060", 0}, "5060ti": {"rtx5060ti", 0}, "5070": {"rtx5070", 0}, "5070ti": {"rtx5070ti", 0},
	"5080": {"rtx5080", 0}, "5090": {"rtx5090", 0},
	"rtx3060": {"rtx3060", 0}, "rtx3070": {"rtx3070", 0}, "rtx3080ti": {"rtx3080ti", 0}, "rtx3090ti": {"rtx3090ti", 0},
	"rtx4060": {"rtx4060", 0}, "rtx4060ti": {"rtx4060ti", 0}, "rtx4070": {"rtx4070", 0}, "rtx4070ti": {"rtx4070ti", 0},
	"rtx5060": {"rtx5060", 0}, "rtx5060ti": {"rtx5060ti", 0}, "rtx5070": {"rtx5070", 0}, "rtx5070ti": {"rtx5070ti", 0},
	"rtx5080": {"rtx5080", 0}, "rtx5090": {"rtx5090", 0},
	"mi100": {"mi100", 0}, "mi210": {"mi210", 0}, "mi250": {"mi250", 0}, "mi250x": {"mi250x", 0},
	"mi300a": {"mi300a", 0}, "mi300x": {"mi300x", 0}, "mi325x": {"mi325x", 0}, "mi355x": {"mi355x", 0},
}

// gpuFiller are words that say "GPU" without naming one.
var gpuFiller = set(append([]string{"gpu", "gpus", "nvidia", "tesla", "quadro", "geforce", "rtx", "gtx", "titan", "amd",
	"instinct", "nvlink", "hbm", "hbm2", "hbm2e", "hbm3"}, formFactors...)...)

// namesNoGPU reports whether a type a GPU request is given (--gres=gpu:T:1,
// --gpus=T:1) names no GPU family: a MIG profile alone (4g.40gb, 1g.10gb:
// a slice of whatever GPU the node has), a maker's or series' word
// (tesla), or a memory alone (40g).
func namesNoGPU(t string) bool {
	t = strings.ToLower(t)
	if t == "" || len(ReadGPUNames(t)) > 0 {
		return false
	}
	if _, mem := memWord(t, false); mem || gpuFiller[t] && t != "titan" { // a site's titan nodes are its Titans
		return true
	}
	return migProfile.MatchString(t)
}

// migProfile is a MIG instance profile's name: compute slices, then memory.
var migProfile = regexp.MustCompile(`^[1-7]g\.[0-9]+gb(\+me)?$`)

// formFactors are the words for how a GPU is built into its node, longest
// of a stem first, so that a suffix match takes the whole word.
var formFactors = []string{"pcie", "sxm5", "sxm4", "sxm3", "sxm2", "sxm", "nvl"}

// maxSpellingWords is how many neighbouring words a spelling may be split
// into ("quadro_rtx_8000", "geforce-rtx-2080-ti", "rtx-pro-6000-blackwell").
const maxSpellingWords = 4

// MaxGPUName bounds the names ReadGPUNames reads (longer ones name nothing).
const MaxGPUName = 256

// ReadGPUNames reads the GPU types a name spells, in order, without
// duplicates. Its words (the runs of letters and digits) are matched
// against known spellings, case-insensitively, up to three words joined
// ("rtx_8000", "geforce-rtx-2080-ti"); a memory stated beside a type
// belongs to it ("v100-32g", "a100_80gb", "a100-sxm4-80gb", "volta32gb",
// "ampere80"); "gpu" followed by a memory states memory alone ("gpu80",
// "gpu_32gb"); a type followed by a word of three or more letters is still
// that type ("A40short"). A bare size ("80gb") names nothing: node features
// and partitions also describe host memory.
func ReadGPUNames(name string) []GPUName {
	if len(name) > MaxGPUName {
		return nil
	}
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	var out []GPUName
	last := -1   // index in out of the type a following memory word belongs to
	gpu := false // after "gpu": a memory word states memory alone
	for i := 0; i < len(words); i++ {
		if mem, ok := memWord(words[i], last >= 0 || gpu); ok {
			switch {
			case last >= 0 && out[last].MemGiB == 0:
				out[last].MemGiB = mem
			case gpu:
				out = append(out, GPUName{MemGiB: mem})
			}
			last, gpu = -1, false
			continue
		}
		if g, n, ok := spelled(words[i:]); ok {
			out = append(out, g)
			last, gpu = len(out)-1, false
			i += n - 1
			continue
		}
		if g, ok := spelledPrefix(words[i]); ok {
			out = append(out, g)
			last, gpu = len(out)-1, false
			continue
		}
		if g, ok := afterCount(words[i]); ok {
			// 1v100, 8xa100: a node's count of the type run into it.
			out = append(out, g)
			last, gpu = len(out)-1, false
			continue
		}
		if g, ok := afterMaker(words[i]); ok {
			// teslaM40, nvidiaA100, quadroRTX8000: the maker's word run
			// into the type.
			out = append(out, g)
			last, gpu = len(out)-1, false
			continue
		}
		if gpuFiller[words[i]] {
			gpu = gpu || strings.HasPrefix(words[i], "gpu")
			continue
		}
		last, gpu = -1, false
	}
	// Once each, in order.
	uniq := out[:0]
	for _, g := range out {
		if !slices.Contains(uniq, g) {
			uniq = append(uniq, g)
		}
	}
	out = uniq
	return out
}

// spelled matches the longest run of up to maxSpellingWords words that is
// a spelling, returning the name and how many words it took.
func spelled(words []string) (GPUName, int, bool) {
	joined := ""
	best, took := GPUName{}, 0
	for n := 1; n <= min(maxSpellingWords, len(words)); n++ {
		joined += words[n-1]
		if g, ok := gpuSpellings[joined]; ok {
			best, took = g, n
		}
	}
	return best, took, took > 0
}

// afterCount reads one word that is a count run into a type: 1v100,
// 8xa100 (never a GeForce number: 2080 is no 2 and an 080).
func afterCount(w string) (GPUName, bool) {
	n := 0
	for n < len(w) && n < 2 && w[n] >= '0' && w[n] <= '9' {
		n++
	}
	if n == 0 {
		return GPUName{}, false
	}
	rest := strings.TrimPrefix(w[n:], "x")
	if rest == "" || rest[0] >= '0' && rest[0] <= '9' {
		return GPUName{}, false
	}
	g, ok := gpuSpellings[rest]
	return g, ok
}

// afterMaker reads one word that is a maker's or line's name run into a
// type ("teslam40", "nvidiaa100", "quadrortx8000"), or a queue's word run
// into one, as partitions name their nodes ("debuga100", "shorth100").
func afterMaker(w string) (GPUName, bool) {
	for _, maker := range []string{"tesla", "nvidia", "quadro", "geforce", "dgx", "debug", "short", "long", "test", "dev"} {
		if rest, ok := strings.CutPrefix(w, maker); ok && rest != "" {
			if g, ok := gpuSpellings[rest]; ok {
				return g, true
			}
			return spelledPrefix(rest)
		}
	}
	return GPUName{}, false
}

// spelledPrefix reads one word that starts with a spelling and goes on with
// a memory ("volta32gb", "ampere80", "gpu80") or, after a spelling ending
// in a digit, with a word of letters ("a40short"), a count or a memory
// ("a100x4", "a100m40"); or "gpu" run into one ("gpua100x4").
func spelledPrefix(w string) (GPUName, bool) {
	for n := len(w) - 1; n >= 2; n-- {
		head, tail := w[:n], w[n:]
		g, known := gpuSpellings[head]
		isGPU := head == "gpu"
		if !known && !isGPU {
			continue
		}
		endsInDigit := head[len(head)-1] >= '0' && head[len(head)-1] <= '9'
		if mem, ok := memWord(tail, !endsInDigit); ok && !endsInDigit {
			if isGPU {
				return GPUName{MemGiB: mem}, true
			}
			if g.MemGiB == 0 {
				g.MemGiB = mem
			}
			return g, true
		}
		if known && (tail == "q" || versionWord(tail)) {
			return g, true // a queue's or a generation's mark: l40sq, t4v2
		}
		if known && endsInDigit {
			// NVIDIAA10080GBPCIe: the memory, with its unit, run into the
			// type, a form factor after it.
			t := tail
			for _, ff := range formFactors {
				if rest, ok := strings.CutSuffix(t, ff); ok && rest != "" {
					t = rest
					break
				}
			}
			if mem, ok := memWord(t, false); ok {
				if g.MemGiB == 0 {
					g.MemGiB = mem
				}
				return g, true
			}
		}
		if known && endsInDigit && len(tail) >= 2 && strings.Trim(tail, "abcdefghijklmnopqrstuvwxyz") == "" {
			// a40short; a100nv, KISTI's NVLink nodes; v100gl
			return g, true
		}
		if known && endsInDigit && (tail == "s" ||
			len(tail) >= 2 && tail[0] == 'n' && strings.Trim(tail[1:], "0123456789") == "" ||
			len(tail) >= 2 && len(tail) <= 3 && tail[0] != '0' && tail[len(tail)-1] == 'x' && strings.Trim(tail[:len(tail)-1], "0123456789") == "") {
			// gpu-h100s: the type's plural; h100n3: a node's number after
			// it; mi2104x: a node's count of it, before an x.
			return g, true
		}
		if known && endsInDigit && len(tail) >= 3 && tail[0] == 'x' && tail[len(tail)-1] == 'q' && isDigits(tail[1:len(tail)-1]) {
			return g, true // a100x4q: a queue of nodes of four
		}
		if known && endsInDigit && len(tail) >= 2 && (tail[0] == 'x' || tail[0] == 'm' || tail[0] == 'g') && strings.Trim(tail[1:], "0123456789") == "" {
			// A count (partition a100x4: nodes of four) or a memory
			// (gres type A100m40: the 40 GB model; partition v100g32) after
			// the type.
			if mem, ok := memWord(tail[1:], true); ok && tail[0] != 'x' && g.MemGiB == 0 {
				g.MemGiB = mem
			}
			return g, true
		}
	}
	for _, p := range []string{"gpus", "gpu"} {
		if rest, ok := strings.CutPrefix(w, p); ok && rest != "" {
			// gpuA100x4, gpuh100, gpusL40: "gpu" run into the type.
			if g, ok := gpuSpellings[rest]; ok {
				return g, true
			}
			if g, ok := spelledPrefix(rest); ok {
				return g, true
			}
		}
	}
	return GPUName{}, false
}

// memWord reads a GPU memory size in GiB: "32g", "80gb", "48gib", and,
// when bare is set (right after a family name or "gpu"), digits alone of
// at least 12 ("ampere80", "gpu32"; "gpu1" and "gpu8" are more often a
// node's number or its GPU count).
func memWord(w string, bare bool) (int, bool) {
	digits := strings.TrimRight(w, "gbi")
	unit := w[len(digits):]
	if unit != "g" && unit != "gb" && unit != "gib" && (unit != "" || !bare) {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || digits == "" || digits[0] == '0' || n < 1 || n > 1024 || (unit == "" && n < 12) {
		return 0, false
	}
	return n, true
}

// Constraint is a parsed Slurm constraint expression (sbatch --constraint,
// --prefer; job_desc_msg_t features): node features joined by & (and; a
// comma reads as and too), | (or), grouped in [] (matching or) and (), with
// counts (*N) and, from newer releases, ! (not). The zero value is the empty
// constraint, which every node satisfies.
type Constraint struct {
	root *cgroup
	// mixed: some group mixes & and | without brackets, which releases
	// have read differently (Evaluate takes both readings).
	mixed bool
}

type cgroup struct {
	terms []cterm
	ops   []byte // '&' or '|' between terms[i] and terms[i+1]
}

type cterm struct {
	feature string  // a node feature, or "" for a group
	group   *cgroup // a bracketed expression
	not     bool
}

// ErrBadConstraint is wrapped by ParseConstraint's errors.
var ErrBadConstraint = errors.New("bad constraint")

// Bounds on what ParseConstraint reads: Slurm's own limits are larger, but
// no real constraint comes near these.
const (
	MaxConstraint      = 4096
	MaxConstraintDepth = 16
)

// ParseConstraint reads a constraint expression. An empty one (or only
// blanks) is the zero Constraint. Surrounding quotes, as an #SBATCH line
// keeps them, are dropped.
func ParseConstraint(s string) (Constraint, error) {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	if s == "" {
		return Constraint{}, nil
	}
	if len(s) > MaxConstraint {
		return Constraint{}, fmt.Errorf("%w: %d bytes, at most %d", ErrBadConstraint, len(s), MaxConstraint)
	}
	p := &cparser{s: s}
	g, err := p.group(0)
	if err == nil && p.i < len(p.s) {
		err = p.errorf("unexpected %q", p.s[p.i])
	}
	if err != nil {
		return Constraint{}, err
	}
	return Constraint{root: g, mixed: p.mixed}, nil
}

// IsEmpty reports whether the constraint asks for nothing.
func (c Constraint) IsEmpty() bool { return c.root == nil }

// Features lists the features the constraint names, once each, in order.
func (c Constraint) Features() []string {
	var out []string
	var walk func(*cgroup)
	walk = func(g *cgroup) {
		for _, t := range g.terms {
			switch {
			case t.group != nil:
				walk(t.group)
			case !slices.Contains(out, t.feature):
				out = append(out, t.feature)
			}
		}
	}
	if c.root != nil {
		walk(c.root)
	}
	return out
}

type cparser struct {
	s     string
	i     int
	mixed bool
}

func (p *cparser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d of %q", ErrBadConstraint, fmt.Sprintf(format, args...), p.i, p.s)
}

func (p *cparser) skipSpace() {
	for p.i < len(p.s) && asciiSpace(p.s[p.i]) {
		p.i++
	}
}

// group reads terms joined by operators, up to the end or a closing bracket.
func (p *cparser) group(depth int) (*cgroup, error) {
	if depth > MaxConstraintDepth {
		return nil, p.errorf("brackets nested deeper than %d", MaxConstraintDepth)
	}
	g := &cgroup{}
	for {
		t, err := p.term(depth)
		if err != nil {
			return nil, err
		}
		g.terms = append(g.terms, t)
		p.skipSpace()
		if p.i == len(p.s) || p.s[p.i] == ']' || p.s[p.i] == ')' {
			return g, nil
		}
		switch op := p.s[p.i]; op {
		case '&', ',', '|':
			if op == ',' {
				op = '&'
			}
			if len(g.ops) > 0 && g.ops[0] != op {
				p.mixed = true
			}
			g.ops = append(g.ops, op)
			p.i++
		default:
			return nil, p.errorf("want &, | or a closing bracket, not %q", op)
		}
	}
}

// term reads one feature or bracketed group, with its ! and *N.
func (p *cparser) term(depth int) (cterm, error) {
	var t cterm
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '!' {
		t.not = true
		p.i++
		p.skipSpace()
	}
	if p.i == len(p.s) {
		return t, p.errorf("a feature is missing at the end")
	}
	switch c := p.s[p.i]; c {
	case '[', '(':
		closing := byte(']')
		if c == '(' {
			closing = ')'
		}
		p.i++
		g, err := p.group(depth + 1)
		if err != nil {
			return t, err
		}
		if p.i == len(p.s) || p.s[p.i] != closing {
			return t, p.errorf("%q is not closed", c)
		}
		p.i++
		t.group = g
	default:
		start := p.i
		for p.i < len(p.s) && !strings.ContainsRune("&|,[]()*! \t\r\n", rune(p.s[p.i])) {
			p.i++
		}
		if p.i == start {
			return t, p.errorf("a feature is missing before %q", c)
		}
		t.feature = p.s[start:p.i]
	}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '*' {
		p.i++
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if p.i == start {
			return t, p.errorf("a count after * is missing")
		}
	}
	return t, nil
}

// Evaluate interprets the constraint: leaf gives each feature's value
// (negated says it stands under a !), and and or combine them. Counts are
// ignored: "a100*2" is read as a100. Where a group mixes & and | without
// brackets, Slurm's releases have differed in which binds first, so both
// readings are taken and joined with and; a caller whose and narrows (a
// set intersection, a boolean and) thus never gets more than either
// reading allows. The empty constraint is leaf("", false).
func Evaluate[T any](c Constraint, leaf func(feature string, negated bool) T, and, or func(a, b T) T) T {
	if c.root == nil {
		return leaf("", false)
	}
	v := evalGroup(c.root, leaf, and, or, true, false)
	if c.mixed {
		v = and(v, evalGroup(c.root, leaf, and, or, false, false))
	}
	return v
}

// evalGroup evaluates g with & binding before | (andFirst) or strictly
// left to right; neg evaluates !(g) instead, by De Morgan (every leaf
// negated, and and or swapped, the grouping kept), since the values the
// callers use have no complement.
func evalGroup[T any](g *cgroup, leaf func(string, bool) T, and, or func(a, b T) T, andFirst, neg bool) T {
	conj, disj := and, or
	if neg {
		conj, disj = or, and
	}
	val := func(t cterm) T {
		if t.group == nil {
			return leaf(t.feature, t.not != neg)
		}
		return evalGroup(t.group, leaf, and, or, andFirst, t.not != neg)
	}
	acc := val(g.terms[0])
	if !andFirst {
		for i, op := range g.ops {
			if next := val(g.terms[i+1]); op == '&' {
				acc = conj(acc, next)
			} else {
				acc = disj(acc, next)
			}
		}
		return acc
	}
	// The runs joined by & first, then the runs joined by |.
	var sum T
	have := false
	for i, op := range g.ops {
		next := val(g.terms[i+1])
		if op == '&' {
			acc = conj(acc, next)
			continue
		}
		if have {
			sum = disj(sum, acc)
		} else {
			sum, have = acc, true
		}
		acc = next
	}
	if have {
		acc = disj(sum, acc)
	}
	return acc
}

// GPUNameSet is the GPU types an expression leaves a job: any (no limit)
// or those of Names.
type GPUNameSet struct {
	Any   bool
	Names []GPUName
}

// AnyGPU is the set that does not limit the type.
var AnyGPU = GPUNameSet{Any: true}

// And is the names both sets allow: pairs that meet (v100 and v100-32g
// give v100-32g).
func (s GPUNameSet) And(o GPUNameSet) GPUNameSet {
	switch {
	case s.Any:
		return o
	case o.Any:
		return s
	}
	var out GPUNameSet
	for _, a := range s.Names {
		for _, b := range o.Names {
			if m, ok := a.Meet(b); ok && !slices.Contains(out.Names, m) {
				out.Names = append(out.Names, m)
			}
		}
	}
	return out
}

// Or is the names either set allows.
func (s GPUNameSet) Or(o GPUNameSet) GPUNameSet {
	if s.Any || o.Any {
		return AnyGPU
	}
	out := GPUNameSet{Names: slices.Clone(s.Names)}
	for _, b := range o.Names {
		if !slices.Contains(out.Names, b) {
			out.Names = append(out.Names, b)
		}
	}
	return out
}

// ConstraintGPUs reads the GPU types a constraint allows from the names of
// its features alone: a feature that spells GPU types allows those, any
// other feature (ib, nvme) allows any; a type is allowed when some branch
// of an | names it and no & beside it names another. A negated GPU feature
// allows none (what it leaves is not known without the site's types).
func ConstraintGPUs(c Constraint) GPUNameSet {
	return Evaluate(c, func(feature string, negated bool) GPUNameSet {
		names := ReadGPUNames(feature)
		switch {
		case len(names) == 0:
			return AnyGPU
		case negated:
			return GPUNameSet{}
		}
		return GPUNameSet{Names: names}
	}, GPUNameSet.And, GPUNameSet.Or)
}

// NameGPUs reads the GPU types a partition, account or QOS name allows: the
// types its words spell, any when they spell none. A comma-separated list of
// partitions (the job may run in any) allows what any of them allows.
func NameGPUs(names string) GPUNameSet {
	var out GPUNameSet
	for _, n := range strings.Split(names, ",") {
		g := ReadGPUNames(n)
		if len(g) == 0 {
			return AnyGPU
		}
		out = out.Or(GPUNameSet{Names: g})
	}
	return out
}

// headerGPUType reads the GPU type a batch script's #SBATCH header implies
// when its GPU request names none: what its constraint, partition, account,
// QOS and reservation allow together, when that is one type. given holds
// the values sbatch's command line gives (by long option), which override
// the header's. It returns the type canonically written (GPUName.String)
// and the options it came from.
func headerGPUType(s Script, given map[string]string) (string, string) {
	allowed, from := AnyGPU, []string(nil)
	limit := func(opt string, set GPUNameSet) {
		if !set.Any {
			allowed = allowed.And(set)
			from = append(from, opt)
		}
	}
	value := func(opt, short string) (string, string, bool) {
		if v := given[opt]; v != "" {
			return v, "command line " + opt, true
		}
		v, ok := s.SbatchValue(opt, short)
		return v, "#SBATCH " + opt, ok
	}
	constraint := AnyGPU
	if v, src, ok := value("--constraint", "-C"); ok {
		c, err := ParseConstraint(v)
		if err != nil {
			return "", ""
		}
		constraint = ConstraintGPUs(c)
		limit(src, constraint)
	}
	for _, o := range []struct{ opt, short string }{{"--partition", "-p"}, {"--account", "-A"}, {"--qos", "-q"}, {"--reservation", "--reservation"}} {
		if v, src, ok := value(o.opt, o.short); ok {
			set := NameGPUs(strings.Trim(v, `"'`))
			if both := constraint.And(set); !set.Any && !constraint.Any && len(both.Names) == 0 {
				// A name read as a GPU that the constraint, which Slurm
				// enforces, rules out means something else: Jean Zay's
				// qos_gpu-t4 is a time limit beside -C v100-32g. (Two
				// names that disagree still leave the type unknown.)
				continue
			}
			limit(src, set)
		}
	}
	if allowed.Any || len(allowed.Names) == 0 || allowed.Names[0].Type == "" {
		return "", "" // none, or a memory alone (-C gpu80): no type
	}
	one := allowed.Names[0]
	for _, g := range allowed.Names[1:] {
		if g.Type != one.Type {
			return "", "" // several types
		}
		if g.MemGiB != one.MemGiB {
			one.MemGiB = 0 // one type in several memories: "(a100)&(gpu40g|gpu80g)"
		}
	}
	return one.String(), strings.Join(from, " + ")
}
