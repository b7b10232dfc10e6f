package shim

import (
	"strings"

	"github.com/augur-hpc/augur/predictor/progenv"
	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// ScriptEnv picks from a job's environment (job_desc's, as sbatch built it
// under --export: "NAME=value" entries) what augurd reads the script with
// (wire.Request.Env): the variables the script refers to ($NAME, ${NAME},
// ${NAME:-...}) and those programs read their settings from (progenv), in
// the environment's order, each name once. Slurm's own (SLURM_*, SBATCH_*)
// are left out: Slurm sets the job's at launch. A variable whose name says
// it holds a secret (secretName), or whose value is longer than
// wire.MaxEnvValue or would pass wire.MaxEnvBytes, goes as its name alone:
// set, its value withheld. At most wire.MaxEnv entries; nil when none.
func ScriptEnv(script string, environ []string) []string {
	if len(environ) == 0 {
		return nil
	}
	refs := referenced(script)
	var seen names
	var out []string
	left := wire.MaxEnvBytes
	for _, e := range environ {
		if len(out) == wire.MaxEnv {
			break
		}
		name, val, ok := strings.Cut(e, "=")
		if !ok || seen.has(name) || !refs.has(name) && !progenv.Setting(name) ||
			strings.HasPrefix(name, "SLURM_") || strings.HasPrefix(name, "SBATCH_") {
			continue
		}
		seen.add(name)
		entry := e
		if secretName(name) || len(val) > wire.MaxEnvValue || len(e) > left {
			entry = name
		}
		if len(entry) > left {
			break
		}
		left -= len(entry)
		out = append(out, entry)
	}
	return out
}

// referenced returns the names a script's text expands: $NAME and ${NAME
// (${NAME:-x}, ${#NAME}, ${!NAME}), wherever they stand (quoted, in a
// heredoc, in a string bash -c runs). It reads the text, not the shell:
// it may name more than run, never fewer. A "~" reads HOME, as the
// shell's tilde expansion does (cd ~/sft: augurd finds the job's files
// there, predictor.job_files).
func referenced(script string) names {
	var refs names
	expansions(script, refs.add)
	if strings.Contains(script, "~") {
		refs.add("HOME")
	}
	return refs
}

// names is a set of names kept as a list while it is short: a script
// expands a few names many times, and comparing a few short strings costs
// less than hashing each expansion.
type names struct {
	list []string
	set  map[string]bool // past namesListed
}

const namesListed = 32

func (n *names) add(name string) {
	if n.has(name) {
		return
	}
	if n.set != nil {
		n.set[name] = true
		return
	}
	n.list = append(n.list, name)
	if len(n.list) > namesListed {
		n.set = make(map[string]bool, 2*namesListed)
		for _, l := range n.list {
			n.set[l] = true
		}
		n.list = nil
	}
}

func (n *names) has(name string) bool {
	if n.set != nil {
		return n.set[name]
	}
	for _, l := range n.list {
		if l == name {
			return true
		}
	}
	return false
}

// expansions calls f with the name of each $NAME and ${NAME of a script's
// text, in order.
func expansions(script string, f func(name string)) {
	for i := 0; i < len(script); {
		d := strings.IndexByte(script[i:], '$')
		if d < 0 {
			return
		}
		j := i + d + 1
		if j < len(script) && script[j] == '{' {
			j++
			if j < len(script) && (script[j] == '!' || script[j] == '#') {
				j++
			}
		}
		k := j
		for k < len(script) && (script[k] == '_' || script[k] >= 'A' && script[k] <= 'Z' ||
			script[k] >= 'a' && script[k] <= 'z' || k > j && script[k] >= '0' && script[k] <= '9') {
			k++
		}
		if k > j {
			f(script[j:k])
		}
		i = max(k, i+d+1)
	}
}

// secretName reports whether a variable's name says it holds a secret
// (HF_TOKEN, WANDB_API_KEY, AWS_SECRET_ACCESS_KEY, DB_PASSWORD), whose value
// augurd never needs and never gets.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "KEY", "SECRET", "PASS", "CREDENTIAL", "AUTH", "COOKIE", "PRIVATE", "SESSION"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
