package predictor

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// GPURequest is the GPU part of one of a job's TRES request strings.
type GPURequest struct {
	Scope string // "node", "job", "task" or "socket": which field it came from
	Type  string // "" when the request names no type
	Count int64  // GPUs per Scope
	Shard bool   // a gres/shard request (a slice of a GPU) rather than whole GPUs
}

// ErrBadGres is wrapped by ParseGres for strings Slurm would not accept either.
var ErrBadGres = errors.New("bad gres request")

// MaxGresCount bounds a parsed count: no cluster has more GPUs than this per scope.
const MaxGresCount = 1 << 20

// GresEntry is one comma- or semicolon-separated element of a TRES string,
// such as "gres:gpu:a100:2" (Slurm 22.05), "gres/gpu:2" (23.11+) or
// "gpu:2(S:0-1)" (as users write --gres).
type GresEntry struct {
	Kind  string // "gres" prefix when present ("gres"), else ""
	Name  string // gpu, shard, mps, ...
	Type  string
	Count int64
	// Sep is the separator written after Kind (":" in 22.05, "/" from 23.11).
	Sep string
	// Suffix is anything after the count (a socket binding "(S:0-1)"), kept as is.
	Suffix string
	// Other is a TRES of the string that is no GRES, kept verbatim
	// ("cpu=1": from 23.02 on --cpus-per-task arrives in tres_per_task
	// beside the GPUs); Name and the other fields are then empty.
	Other string
	// Eq marks a GRES written as a TRES, name=count ("gres/gpu=1": 24.11
	// and 26.05 write --gpus-per-task so in tres_per_task).
	Eq bool
}

// String writes the entry back in the form it was read.
func (e GresEntry) String() string {
	if e.Other != "" {
		return e.Other
	}
	var b strings.Builder
	if e.Kind != "" {
		b.WriteString(e.Kind)
		b.WriteString(e.Sep)
	}
	b.WriteString(e.Name)
	if e.Type != "" {
		b.WriteString(":")
		b.WriteString(e.Type)
	}
	if e.Eq {
		b.WriteString("=")
	} else {
		b.WriteString(":")
	}
	b.WriteString(strconv.FormatInt(e.Count, 10))
	b.WriteString(e.Suffix)
	return b.String()
}

// ParseGres splits a TRES request string into its entries. An empty string
// has none. Counts may carry Slurm's k/m/g multipliers.
func ParseGres(s string) ([]GresEntry, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if len(s) > 4096 {
		return nil, fmt.Errorf("%w: %d bytes", ErrBadGres, len(s))
	}
	var out []GresEntry
	for _, raw := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
		e, err := parseEntry(strings.TrimSpace(raw))
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func parseEntry(s string) (GresEntry, error) {
	var e GresEntry
	if name, count, ok := strings.Cut(s, "="); ok {
		// name=count is how TRES strings write a resource: a GRES as
		// gres/gpu=1 or gres/gpu:a100=1, anything else (cpu=1, mem=4G,
		// license/x=2) kept as written.
		if rest, isGres := strings.CutPrefix(name, "gres/"); isGres {
			if _, ok := parseCount(count); !ok {
				return e, fmt.Errorf("%w: count %q in %q is not a number", ErrBadGres, count, s)
			}
			g, err := parseEntry("gres/" + rest + ":" + count)
			g.Eq = true
			return g, err
		}
		if !validTRESName(name) || count == "" || strings.ContainsAny(count, "=:") {
			return e, fmt.Errorf("%w: %q", ErrBadGres, s)
		}
		e.Other = s
		return e, nil
	}
	if i := strings.IndexByte(s, '('); i >= 0 {
		e.Suffix, s = s[i:], s[:i]
	}
	switch {
	case strings.HasPrefix(s, "gres:"):
		e.Kind, e.Sep, s = "gres", ":", s[len("gres:"):]
	case strings.HasPrefix(s, "gres/"):
		e.Kind, e.Sep, s = "gres", "/", s[len("gres/"):]
	}
	parts := strings.Split(s, ":")
	if len(parts) == 0 || parts[0] == "" || len(parts) > 3 {
		return e, fmt.Errorf("%w: %q", ErrBadGres, s)
	}
	e.Name = parts[0]
	e.Count = 1
	rest := parts[1:]
	if len(rest) > 0 {
		last := rest[len(rest)-1]
		if n, ok := parseCount(last); ok {
			e.Count = n
			rest = rest[:len(rest)-1]
		} else if len(rest) == 2 || looksNumeric(last) {
			return e, fmt.Errorf("%w: count %q in %q is not a number", ErrBadGres, last, s)
		}
	}
	if len(rest) == 1 {
		e.Type = rest[0]
	}
	if !validToken(e.Name) || e.Name == "gres" || (e.Type != "" && !validToken(e.Type)) {
		return e, fmt.Errorf("%w: %q", ErrBadGres, s)
	}
	return e, nil
}

func parseCount(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'k', 'K':
		mult, s = 1024, s[:len(s)-1]
	case 'm', 'M':
		mult, s = 1024*1024, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > MaxGresCount/mult {
		return 0, false
	}
	return n * mult, true
}

// looksNumeric reports whether s was meant as a count (digits, maybe a
// multiplier) even if it does not fit one.
func looksNumeric(s string) bool {
	s = strings.TrimRight(s, "kKmM")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func validToken(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// validTRESName accepts a TRES name such as cpu, mem or license/x.
func validTRESName(s string) bool {
	kind, name, typed := strings.Cut(s, "/")
	return validToken(kind) && (!typed || validToken(name))
}

// GPURequests extracts the gpu and shard entries of the four TRES strings.
// Strings that do not parse are reported in the error; the others still count.
func GPURequests(perNode, perJob, perTask, perSocket string) ([]GPURequest, error) {
	var out []GPURequest
	var errs []error
	for _, f := range []struct{ scope, s string }{
		{"node", perNode}, {"job", perJob}, {"task", perTask}, {"socket", perSocket},
	} {
		entries, err := ParseGres(f.s)
		if err != nil {
			errs = append(errs, fmt.Errorf("tres_per_%s: %w", f.scope, err))
			continue
		}
		for _, e := range entries {
			switch e.Name {
			case "gpu":
				out = append(out, GPURequest{Scope: f.scope, Type: e.Type, Count: e.Count})
			case "shard":
				out = append(out, GPURequest{Scope: f.scope, Type: e.Type, Count: e.Count, Shard: true})
			}
		}
	}
	return out, errors.Join(errs...)
}

// ReplaceGPUType rewrites the gpu entries of type from to type to, keeping
// every other entry and the string's own spelling.
func ReplaceGPUType(s, from, to string) (string, bool, error) {
	return rewriteGPUs(s, func(e *GresEntry) bool {
		if e.Name == "gpu" && e.Type == from {
			e.Type = to
			return true
		}
		return false
	})
}

// SetGPUType rewrites the typeless gpu entries of a TRES string to name typ,
// keeping every other entry and the string's own spelling. It reports whether
// anything changed.
func SetGPUType(s, typ string) (string, bool, error) {
	return rewriteGPUs(s, func(e *GresEntry) bool {
		if e.Name == "gpu" && e.Type == "" {
			e.Type = typ
			return true
		}
		return false
	})
}

// rewriteGPUs applies f to each entry of s and writes s back if any changed.
func rewriteGPUs(s string, f func(*GresEntry) bool) (string, bool, error) {
	entries, err := ParseGres(s)
	if err != nil {
		return s, false, err
	}
	changed := false
	parts := make([]string, len(entries))
	for i, e := range entries {
		if f(&e) {
			changed = true
		}
		parts[i] = e.String()
	}
	if !changed {
		return s, false, nil
	}
	sep := ","
	if strings.Contains(s, ";") {
		sep = ";"
	}
	return strings.Join(parts, sep), true, nil
}
