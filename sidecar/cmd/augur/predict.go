package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/augur-hpc/augur/predictor"
)

func init() {
	register(command{"predict", "predict [--model FILE] [--gres G] [--gpus N] [-t TIME] [-A ACCOUNT] [-p PARTITION] [-C FEATURES] [-q QOS] [--reservation R] [--gpu-mem-mib N] [--env NAME=VALUE]... [-D DIR] [--json] SCRIPT [-- ARG...]: predict a job's peak GPU memory and runtime, and say why; the ARGs after -- are the script's, as sbatch SCRIPT ARG... gives them, each --env a variable its submission exports (NAME=VALUE sbatch SCRIPT), and the config files and program the script names are read from DIR (default: here), as sbatch -D DIR would run it", runPredict})
}

// parseInterspersed parses flags that may come before or after positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func loadModel(path string) (*predictor.Model, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := predictor.DecodeModel(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func runPredict(args []string) error {
	fs := flag.NewFlagSet("predict", flag.ContinueOnError)
	modelPath := fs.String("model", "", "trained model file (augur train --out); without one, history and defaults only")
	gres := fs.String("gres", "", "GPU request as sbatch --gres (gpu:a100:2); default: the script's #SBATCH")
	gpus := fs.String("gpus", "", "GPU request as sbatch --gpus ([type:]N)")
	limit := fs.String("t", "", "time limit as sbatch --time; default: the script's #SBATCH")
	fs.StringVar(limit, "time", "", "same as -t")
	var o predictor.SubmitOptions
	for _, f := range []struct {
		v           *string
		short, long string
		usage       string
	}{
		{&o.Account, "A", "account", "account, as sbatch -A"},
		{&o.Partition, "p", "partition", "partition, as sbatch -p"},
		{&o.Constraint, "C", "constraint", "node features, as sbatch -C (a100, [v100|a100], volta32gb)"},
		{&o.QOS, "q", "qos", "QOS, as sbatch -q"},
	} {
		fs.StringVar(f.v, f.short, "", f.usage)
		fs.StringVar(f.v, f.long, "", "same as -"+f.short)
	}
	fs.StringVar(&o.Reservation, "reservation", "", "reservation, as sbatch --reservation")
	gpuMem := fs.Float64("gpu-mem-mib", 0, "memory of one GPU of the requested type, for the whole-GPU default")
	asJSON := fs.Bool("json", false, "print JSON")
	chdir := fs.String("D", "", "the directory the job is submitted from, as sbatch -D: the config files and program the script names are read from it (default: the current directory)")
	fs.StringVar(chdir, "chdir", "", "same as -D")
	var env envFlag
	fs.Var(&env, "env", "a variable the submission exports to the job, NAME=VALUE, as MODEL=gpt2 sbatch SCRIPT gives it (repeatable)")
	// After "--", the script's own arguments (sbatch job.sh ARG...):
	// without them, $1 and "$@" are read as unknown.
	var scriptArgs []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, scriptArgs = args[:i], append([]string{}, args[i+1:]...)
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badUsage(fs, "give one SCRIPT (its own arguments after --)")
	}
	text, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	script := predictor.ParseScriptEnv(string(text), scriptArgs, env)
	var readErr error
	script, read := predictor.ReadJobFiles(script, string(text), scriptArgs, env, func(paths []string) map[string]string {
		files, err := readFiles(paths, *chdir)
		readErr = cmp.Or(readErr, err)
		return files
	})
	if readErr != nil {
		return readErr
	}
	o.Gres, o.GPUs, o.Time = *gres, *gpus, *limit
	job, warnings, err := predictor.ScriptJob(script, o)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(os.Stderr, "augur predict: %s: %s\n", pos[0], w)
	}
	model, err := loadModel(*modelPath)
	if err != nil {
		return err
	}
	mem := map[string]float64{}
	if *gpuMem > 0 {
		mem[cmp.Or(job.GPUType(), job.GPUTypeHint)] = *gpuMem
	}
	p := predictor.NewCombined(model, predictor.NewHistory(1, mem)).Predict(job, nil)
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Signature   string               `json:"signature"`
			Features    predictor.Features   `json:"features"`
			FilesRead   []string             `json:"files_read,omitempty"`
			FilesUnread []string             `json:"files_unread,omitempty"`
			GPUTypeHint string               `json:"gpu_type_hint,omitempty"`
			Prediction  predictor.Prediction `json:"prediction"`
		}{script.Signature, script.Features, slices.Sorted(maps.Keys(read)), script.Files, job.GPUTypeHint, p})
	}
	show := func(q predictor.Quantiles, unit string) string {
		if !q.Known() {
			return "unknown"
		}
		return fmt.Sprintf("p50 %.0f %s, upper %.0f %s", q.P50, unit, q.Hi, unit)
	}
	f := script.Features
	fmt.Printf("launch:       %s %s\n", orDash(f.Launcher), orDash(f.Program))
	for _, fl := range f.Fields() {
		fmt.Printf("  %-18s %-24s %s\n", fl.Name, fl.Value, fl.From)
	}
	if job.GPUTypeHint != "" && job.GPUTypeHint != f.GPUType {
		_, from := o.GPUTypeHint(script)
		fmt.Printf("  %-18s %-24s %s\n", "gpu_type (hint)", job.GPUTypeHint, from)
	}
	if len(f.Unknown) > 0 {
		fmt.Printf("  unknown:           %s (set from something the script does not show)\n", strings.Join(f.Unknown, ", "))
	}
	if len(read) > 0 {
		fmt.Printf("files read:   %s\n", strings.Join(slices.Sorted(maps.Keys(read)), ", "))
	}
	if len(script.Files) > 0 {
		fmt.Printf("not found:    %s (files the script names; give -D the directory it is submitted from)\n", strings.Join(script.Files, ", "))
	}
	fmt.Printf("peak GPU mem: %s  [%s]\n", show(p.GPUMemMiB, "MiB"), p.MemSource)
	fmt.Printf("runtime:      %s  [%s]  predictable: %v\n", show(p.RuntimeSec, "s"), p.RuntimeSource, p.Predictable)
	fmt.Printf("why:          %s\n", p.Why)
	fmt.Printf("signature:    %s\n", script.Signature)
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// maxFileBytes is the largest file augur predict reads, as augurd's
// predictor.job_files.max_bytes at most.
const maxFileBytes = 1 << 20

// readFiles reads the files a script names (predictor.Script.Files)
// as the job submitted from dir would find them, by those names: those
// that are not there, or not regular files of at most maxFileBytes, are
// left out. A dir that is not a directory is an error.
func readFiles(named []string, dir string) (map[string]string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("-D %s: not a directory: give the directory the job is submitted from", dir)
	}
	home, _ := os.UserHomeDir()
	files := map[string]string{}
	for _, p := range named {
		path, ok := predictor.FilePath(p, abs, home)
		if !ok {
			continue
		}
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxFileBytes {
			continue
		}
		if b, err := os.ReadFile(path); err == nil && len(b) <= maxFileBytes {
			files[p] = string(b)
		}
	}
	return files, nil
}

// envFlag collects --env NAME=VALUE, each a variable of the submission's
// environment.
type envFlag []string

func (e *envFlag) String() string { return strings.Join(*e, " ") }

func (e *envFlag) Set(v string) error {
	name, _, ok := strings.Cut(v, "=")
	if !ok || !predictor.ShellName(name) {
		return fmt.Errorf("%q is not NAME=VALUE: give a variable as the shell sets it, such as MODEL=gpt2", v)
	}
	*e = append(*e, v)
	return nil
}
