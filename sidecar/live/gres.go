package live

import (
	"strconv"
	"strings"
)

// gres is one element of a node's or job's GRES string as slurmctld prints
// it: "gpu:a100:4(S:0)", "gpu:a100:2(IDX:0-1)", "gpu:t4:0(IDX:N/A)",
// "gpu:a100(CNT:2)(IDX:0-1)".
type gres struct {
	Name, Type string
	Count      int
}

// maxGresCount bounds a parsed count.
const maxGresCount = 1 << 20

// parseGresList splits s at the commas outside parentheses and reads each
// element; elements that do not parse are skipped (a GRES string from Slurm
// is informational here, never trusted to be well formed).
func parseGresList(s string) []gres {
	var out []gres
	for _, part := range splitTop(s, '(', ')') {
		if g, ok := parseGres(part); ok {
			out = append(out, g)
		}
	}
	return out
}

// splitTop splits s at the commas that are not inside open...close
// brackets: "gpu:a100:2(IDX:0-1),gpu:t4:1" or "n[1-3,5],m1".
func splitTop(s string, open, close byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case close:
			depth = max(depth-1, 0)
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func parseGres(s string) (gres, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "gres:"), "gres/")
	count := -1
	// Parenthesised suffixes: (S:..), (IDX:..), (CNT:n).
	if i := strings.IndexByte(s, '('); i >= 0 {
		for _, part := range strings.Split(s[i:], "(") {
			if c, ok := strings.CutPrefix(strings.TrimSuffix(part, ")"), "CNT:"); ok {
				if n, err := strconv.Atoi(c); err == nil && n >= 0 && n <= maxGresCount {
					count = n
				}
			}
		}
		s = s[:i]
	}
	f := strings.Split(s, ":")
	if len(f) == 0 || f[0] == "" || len(f) > 3 {
		return gres{}, false
	}
	g := gres{Name: f[0]}
	rest := f[1:]
	if len(rest) > 0 {
		if n, err := strconv.Atoi(rest[len(rest)-1]); err == nil {
			if n < 0 || n > maxGresCount {
				return gres{}, false
			}
			count = n
			rest = rest[:len(rest)-1]
		}
	}
	if len(rest) > 1 {
		return gres{}, false
	}
	if len(rest) == 1 {
		g.Type = rest[0]
	}
	if count < 0 {
		count = 1 // "gpu:a100" alone means one
	}
	g.Count = count
	return g, true
}
