package predictor

import (
	"crypto/sha256"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// A job's own files: the config files a launch command names that the
// script did not write (python train.py --config configs/llama2-7b.yaml)
// and the Python program it runs are on the submitter's disk, not in the
// script. The reader stays pure: it lists them (Script.Files), and whoever
// can read them (augurd, where predictor.job_files allows it, or augur
// predict) hands their text back to ParseScriptFiles, which reads a config
// file as it reads those a script writes with a heredoc, and a program's
// option declarations (pyprogram.go).

// MaxJobFiles bounds the files a script is read with, and those it lists.
const MaxJobFiles = 8

// MaxJobFileRounds bounds the rounds of reads a job's files take: a file
// read can name more (a Hydra application's program names its primary
// config, which names its groups' files, one of which may choose
// another's). MaxJobFilesRead bounds the files read over all rounds.
const (
	MaxJobFileRounds = 6
	MaxJobFilesRead  = 16
)

// ReadJobFiles reads a script (text, with its arguments and environment)
// with the files it names, in rounds, from first, its reading without
// files: read is handed the paths the latest reading names that no round
// asked for before, and returns the texts of those it could read (by
// those paths); each round reads the script again with all the files read
// so far, its shell parsed once for all of them. It stops where a round
// reads nothing new, and returns the last reading with the files read
// (nil where none were).
func ReadJobFiles(first Script, text string, args, env []string, read func(paths []string) map[string]string) (Script, map[string]string) {
	return readJobFiles(first, text, args, env, read, nil)
}

// readJobFiles is ReadJobFiles, each round's reading looked up in c first
// and kept there after (where c is not nil).
func readJobFiles(first Script, text string, args, env []string, read func(paths []string) map[string]string, c *ScriptCache) (Script, map[string]string) {
	s := first
	var files map[string]string
	var ast *shellAST
	asked := map[string]bool{}
	for range MaxJobFileRounds {
		var paths []string
		for _, p := range s.Files {
			if !asked[p] && len(asked) < MaxJobFilesRead {
				asked[p] = true
				paths = append(paths, p)
			}
		}
		if len(paths) == 0 {
			break
		}
		n := 0
		for p, body := range read(paths) {
			if _, dup := files[p]; asked[p] && !dup {
				if files == nil {
					files = map[string]string{}
				}
				files[p] = body
				n++
			}
		}
		if n == 0 {
			break
		}
		var key [sha256.Size]byte
		if c != nil {
			key = scriptKey(text, args, env, files)
			if cached, ok := c.lru.Get(key); ok {
				c.hits.Add(1)
				s = cached.clone()
				continue
			}
			c.misses.Add(1)
		}
		if ast == nil {
			ast = parseShellAST(text)
		}
		s = withFiles(first, text, args, env, files, ast)
		if c != nil {
			c.lru.Add(key, s.clone())
		}
	}
	return s, files
}

// jobFileExts are the config files read: YAML and JSON, the formats
// configFileFeatures reads.
var jobFileExts = set(".yaml", ".yml", ".json")

// cd follows the shell's directory as command.dir keeps it: "" is the
// submission directory (where sbatch ran, $SLURM_SUBMIT_DIR), "~" the
// user's home, and a directory the reader cannot name ($(dirname $0),
// cd -, an unknown variable) makes every relative path after it unknown.
func (r *shellReader) cd(args []string) {
	if len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		args = args[1:] // cd -P dir
	}
	switch {
	case len(args) == 0:
		r.dir, r.dirOK = "~", true
	case len(args) > 1 || args[0] == "-":
		r.dirOK = false
	default:
		r.dir, r.dirOK = jobPath(r.dir, r.dirOK, args[0])
	}
}

// jobPath resolves p, a path a command names, in dir: an absolute path,
// one under the home directory ("~/x"), or one relative to the submission
// directory. ok is false where the path cannot be named: an unknown
// variable or command substitution in it, or a relative path after a cd
// the reader could not follow.
func jobPath(dir string, dirOK bool, p string) (string, bool) {
	if rest, ok := cutVar(p, "SLURM_SUBMIT_DIR"); ok {
		p, dir, dirOK = "."+rest, "", true
	}
	if rest, ok := cutVar(p, "HOME"); ok {
		p = "~" + rest
	}
	switch {
	case p == "" || unexpanded(p) || strings.ContainsAny(p, "`*?[") || strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/"):
		return "", false // $(...), ~otheruser, a glob
	case path.IsAbs(p) || p == "~" || strings.HasPrefix(p, "~/"):
		return path.Clean(p), true
	case !dirOK:
		return "", false
	}
	return path.Join(dir, p), true
}

// cutVar cuts $NAME or ${NAME} from the front of a path: the rest, empty
// or from its first slash on.
func cutVar(p, name string) (string, bool) {
	for _, v := range []string{"${" + name + "}", "$" + name} {
		if rest, ok := strings.CutPrefix(p, v); ok && (rest == "" || rest[0] == '/') {
			return rest, true
		}
	}
	return "", false
}

// programFile is the Python file a launch runs, as the command names it
// (train.py, src/train.py, or pkg/mod.py for python -m pkg.mod), or "";
// prog is the index of its program word (programIndex).
func programFile(words []string, prog int, program string) string {
	if mod, ok := strings.CutPrefix(program, "-m "); ok {
		if mod == "" || strings.ContainsAny(mod, "/$") {
			return ""
		}
		return strings.ReplaceAll(mod, ".", "/") + ".py"
	}
	if !strings.HasSuffix(program, ".py") {
		return ""
	}
	// From the program on: a wrapper's options may name the same file
	// (docker run -v ~/proj/train.py:/app/train.py ... python /app/train.py).
	for _, w := range words[prog:] {
		if path.Base(w) == program {
			return w
		}
	}
	return ""
}

// jobProgram looks up the Python program a command runs in given, by its
// jobPath; where given lacks it, it is added to wanted.
// p is its jobPath ("" where it has none).
func jobProgram(c *launchPaths, program string, given map[string]string, wanted *[]string) (p, text string, found bool) {
	w, ok := c.host(programFile(c.words, c.prog, program))
	if !ok {
		return "", "", false
	}
	if p, ok = jobPath(c.dir, c.dirOK, w); !ok {
		return "", "", false
	}
	if text, ok := given[p]; ok {
		return p, text, true
	}
	want(wanted, p)
	return p, "", false
}

// want adds p to the files a reading names and was not given (wanted),
// once, and at most MaxJobFiles in all.
func want(wanted *[]string, p string) {
	if len(*wanted) < MaxJobFiles && !slices.Contains(*wanted, p) {
		*wanted = append(*wanted, p)
	}
}

// jobFiles looks up the config files a command names that the script did
// not write: those found in given join the command's files under the name
// the command gives them; the others are added to wanted (once each, at
// most MaxJobFiles in all).
func jobFiles(c *launchPaths, given map[string]string, wanted *[]string) map[string]string {
	files := c.files
	copied := false
	for _, w := range c.words[1:] {
		if _, v, ok := strings.Cut(w, "="); ok {
			w = v // --config=a.yaml, config=a.yaml
		}
		if !jobFileExts[strings.ToLower(path.Ext(w))] {
			continue
		}
		if _, ok := files[w]; ok {
			continue // the script wrote it
		}
		hw, ok := c.host(w)
		if !ok {
			continue
		}
		p, ok := jobPath(c.dir, c.dirOK, hw)
		if !ok {
			continue
		}
		if text, ok := given[p]; ok {
			if !copied {
				files, copied = maps.Clone(c.files), true
				if files == nil {
					files = map[string]string{}
				}
			}
			files[w] = text
			continue
		}
		want(wanted, p)
	}
	return files
}

// FilePath is where a path of Script.Files is on disk for a job submitted
// from workdir by a user whose home directory is home: an absolute path as
// it is, "~/..." under home, a relative path under workdir. ok is false
// where the directory it needs is not an absolute path.
func FilePath(p, workdir, home string) (string, bool) {
	dir := workdir
	switch {
	case filepath.IsAbs(p):
		return filepath.Clean(p), true
	case p == "~" || strings.HasPrefix(p, "~/"):
		dir, p = home, strings.TrimPrefix(p[1:], "/")
	}
	if !filepath.IsAbs(dir) {
		return "", false
	}
	return filepath.Join(dir, p), true
}

// launchPaths is a launch command with what resolving the paths it
// names takes: the index of its program word, and the container it runs
// its program in, read where a path first needs it.
type launchPaths struct {
	command
	prog      int
	container *containerPaths // nil: not read yet
	contained bool
}

func newLaunchPaths(c command) *launchPaths {
	return &launchPaths{command: c, prog: min(programIndex(c.words), len(c.words))}
}

// host is the host path of p, a path the command names ("" for none):
// through the bind mounts of the container it runs in, if any.
func (c *launchPaths) host(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	if c.container == nil {
		cp, ok := commandContainer(c.words, c.prog)
		c.container, c.contained = &cp, ok
	}
	if c.contained {
		return c.container.host(p)
	}
	return p, true
}

// containerPaths says where the files a command's program names are on
// the host when it runs in a container: through the container's bind
// mounts (docker -v SRC:DST, --mount type=bind,source=,target=;
// singularity and apptainer -B SRC[:DST]; pyxis's srun --container-mounts;
// enroot --mount). Docker and podman see nothing of the host but what is
// mounted; the others mount the home and working directories by default.
type containerPaths struct {
	binds    [][2]string // host, container
	isolated bool        // docker or podman: only the mounts are the host's
}

// commandContainer reads the container a command runs its program in
// from the words before the program (at prog); ok is false where it runs
// in none.
func commandContainer(words []string, prog int) (cp containerPaths, ok bool) {
	kind := ""
	for i := 0; i < prog; i++ {
		w := words[i]
		if f := containerRuntimes[path.Base(w)]; f != "" {
			kind, ok = f, true
			cp.isolated = cp.isolated || f == dockerFamily
			continue
		}
		key, val, eq := strings.Cut(w, "=")
		if !eq && i+1 < prog {
			val = words[i+1]
		}
		var specs []string
		switch {
		case key == "--container-image":
			ok = true
		case key == "--container-mounts" || key == "--mount" && kind == enrootFamily:
			specs = strings.Split(val, ",")
		case (key == "-v" || key == "--volume") && cp.isolated:
			specs = []string{val}
		case (key == "-B" || key == "--bind") && kind == apptainerFamily:
			specs = strings.Split(val, ",")
		case key == "--mount" && cp.isolated:
			var src, dst string
			for _, kv := range strings.Split(val, ",") {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "source", "src":
					src = v
				case "target", "destination", "dst":
					dst = v
				}
			}
			if src != "" && dst != "" {
				specs = []string{src + ":" + dst}
			}
		}
		for _, s := range specs {
			src, dst, found := strings.Cut(s, ":")
			dst, _, _ = strings.Cut(dst, ":") // :ro, :rw
			if !found || dst == "" {
				dst = src // -B /scratch: the same path inside
			}
			if path.IsAbs(dst) && src != "" && len(cp.binds) < 64 {
				cp.binds = append(cp.binds, [2]string{src, path.Clean(dst)})
			}
		}
	}
	return cp, ok
}

// host returns the host path of p, a path the program names inside the
// container: under a bind mount's target, the mount's source (the
// longest target wins); elsewhere itself, unless the container is
// isolated, where it is the image's (ok false).
func (cp containerPaths) host(p string) (string, bool) {
	best := -1
	for i, b := range cp.binds {
		if (p == b[1] || strings.HasPrefix(p, b[1]+"/") || b[1] == "/") && (best < 0 || len(b[1]) > len(cp.binds[best][1])) {
			best = i
		}
	}
	if best >= 0 && path.IsAbs(p) {
		b := cp.binds[best]
		return path.Join(b[0], strings.TrimPrefix(p, b[1])), true
	}
	return p, !cp.isolated
}
