package predictor

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// launch is what the words before a command's program say: the outermost
// training launcher, the processes it starts, and where the program is.
type launch struct {
	launcher     string
	procs, nodes int
	zero         int
	precision    string
	// prog is the index of the program word (len(words) when none);
	// module is the module of python -m (the word at prog is "-m" or "-mfoo"
	// when given joined).
	prog   int
	module string
	// tune is a torchtune recipe ("tune run lora_finetune ...").
	tune bool
	// perNode says the process count is per node (torchrun's
	// --nproc_per_node, deepspeed's --num_gpus) and no node count was
	// given; underSrun that srun or mpirun starts the launcher on every
	// node of the allocation.
	perNode, underSrun bool
	// total says the process count is that of all nodes together
	// (accelerate's --num_processes, mpirun's -np), which a node count
	// beside it does not multiply.
	total bool
	// gpusUnknown says a process count is an expansion the script does
	// not show (--nproc_per_node $NGPUS).
	gpusUnknown bool
	env         map[string]string
	// The launcher options the counts, ZeRO stage and precision came
	// from ("torchrun --nproc_per_node"), for Features.From.
	procsFrom, nodesFrom, zeroFrom, precisionFrom string
}

// programIndex returns the index of the program a command runs behind its
// wrappers and launchers.
func programIndex(words []string) int { return peel(words).prog }

// peel looks through environment and container wrappers (env, time,
// singularity exec, docker run, conda run, uv run, ...) and training
// launchers (srun, torchrun, deepspeed, accelerate launch, python -m ...)
// to the program they run. Wrappers never become the Launcher.
func peel(words []string) launch {
	l := launch{env: map[string]string{}}
	i := 0
outer:
	for i < len(words) {
		w := words[i]
		if k, v, ok := strings.Cut(w, "="); ok && isIdent(k) {
			l.env[k] = v
			i++
			continue
		}
		if _, named := launchers[path.Base(w)]; unexpanded(w) && !strings.HasPrefix(w, "-") && launchAhead(words[i+1:]) &&
			(!named || unexpanded(path.Base(w))) {
			// "$PREFIX torchrun ..." ($PREFIX a wrapper the script sets in
			// a way not followed, numactl or nsys): look past it. A
			// launcher in a directory not shown ($ROOT/venv/bin/accelerate)
			// is that launcher.
			i++
			continue
		}
		base := path.Base(w)
		next := ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		if isShellName(base) && i+2 < len(words) && !strings.HasPrefix(next, "-") &&
			(isShellName(path.Base(words[i+2])) || launchAhead(words[i+2:i+3])) {
			// bash run-singularity.bash /bin/bash -c '...': a wrapper
			// script that runs the command it is given.
			i += 2
			continue
		}
		if ext := path.Ext(base); (ext == ".sif" || ext == ".simg") && i+1 < len(words) {
			// ./pytorch.sif python train.py: an Apptainer image is
			// executable, its runscript running the command after it.
			i++
			continue
		}
		if j, ok := containerProgram(words, i); ok {
			if lo, hi := min(i+2, len(words)), min(j, len(words)); lo < hi {
				// (j is past the end where the runtime's options end the words.)
				containerEnv(words[lo:hi], containerRuntimes[path.Base(w)] != apptainerFamily, l.env)
			}
			i = j
			continue
		}
		switch base {
		case "time", "nohup", "exec", "command", "builtin", "unbuffer", "catchsegv", "sudo":
			i = skipOpts(words, i+1, nil, nil, false)
			continue
		case "nice":
			i = skipOpts(words, i+1, nil, set("n", "adjustment"), false)
			continue
		case "env":
			i = skipOpts(words, i+1, nil, set("u", "unset", "C", "chdir", "S", "split_string"), false)
			continue
		case "numactl":
			i = skipOpts(words, i+1, set("l", "localalloc", "H", "hardware", "s", "show", "a", "all"), nil, true)
			continue
		case "stdbuf", "ionice":
			i = skipOpts(words, i+1, nil, set("i", "o", "e", "input", "output", "error", "c", "class", "n", "classdata", "p", "pid"), false)
			continue
		case "taskset", "chrt", "timeout":
			i = skipOpts(words, i+1, set("a", "all_tasks", "p", "pid", "foreground", "preserve_status", "v", "verbose", "f", "r", "b", "o", "i", "d"),
				set("c", "cpu_list", "s", "signal", "k", "kill_after"), false)
			if i < len(words) && (base != "taskset" || !strings.Contains(words[i-1], "c")) {
				i++ // the mask, priority or duration
			}
			continue
		case "singularity_wrapper":
			// CSC's wrapper: singularity exec with the image the loaded
			// module names, so no image word.
			if next != "exec" && next != "run" {
				break
			}
			i = skipOpts(words, i+2, containerSwitches, nil, true)
			continue
		case "shifter":
			i = skipOpts(words, i+1, set("E", "clearenv", "entrypoint", "help", "v", "verbose"), nil, true)
			continue
		case "ch-run":
			i = skipOpts(words, i+1, set("w", "write", "no_home", "no_passwd", "t", "private_tmp", "v", "verbose", "q", "quiet", "unsafe"), nil, true)
			i++ // the image
			if i < len(words) && words[i] == "--" {
				i++
			}
			continue
		case "ray", "dotenvx":
			// ray job submit --address ... -- python -m verl.trainer.main_ppo ...,
			// dotenvx run -f .env.production -- apptainer run ...: the
			// command after the "--" (dotenvx's run with an env file's variables).
			from := i + 2 // after dotenvx run
			if base == "ray" {
				from++ // after ray job submit
			}
			if base == "ray" && (next != "job" || i+2 >= len(words) || words[i+2] != "submit") || base == "dotenvx" && next != "run" {
				break
			}
			j := slices.Index(words[min(from, len(words)):], "--")
			if j < 0 {
				break
			}
			i = from + j + 1
			continue
		case "conda", "mamba", "micromamba":
			if next != "run" {
				break
			}
			i = skipOpts(words, i+2, set("no_capture_output", "live_stream", "v", "verbose", "debug", "a", "attach"), nil, true)
			continue
		case "nsys":
			// Nsight Systems profiles the program it is given: nsys profile
			// -t cuda,nvtx -s none -x true bert.sh (its options all take values).
			if next != "profile" && next != "launch" {
				break
			}
			i = skipOpts(words, i+2, nil, nil, true)
			continue
		case "perun":
			// Helmholtz's energy monitor: perun monitor train.py -c cfg.yaml
			// runs the program (a Python file, or -b/--binary any program).
			if next != "monitor" {
				break
			}
			i = skipOpts(words, i+2, set("b", "binary"), nil, true)
			if i < len(words) && strings.HasSuffix(words[i], ".py") && l.launcher == "" {
				l.launcher = "python"
			}
			continue
		case "uv", "pixi", "poetry", "pipenv", "hatch", "rye", "pdm":
			if next != "run" {
				break
			}
			if j, mod := runModule(words, i+2); mod != "" {
				// uv run --isolated -m src.train: python -m src.train in
				// the project's environment.
				if l.launcher == "" {
					l.setLauncher("python")
				}
				l.prog, l.module = j, mod
				return l
			}
			i = skipOpts(words, i+2, runSwitches, nil, true)
			if i < len(words) && strings.HasSuffix(words[i], ".py") && l.launcher == "" {
				l.launcher = "python" // uv run train.py
			}
			continue
		case "tune":
			if next != "run" {
				break
			}
			j := i + 2
			for j < len(words) && strings.HasPrefix(words[j], "-") {
				k, v, hasV := strings.Cut(words[j], "=")
				if !hasV && j+1 < len(words) {
					v = words[j+1]
					j++
				}
				if n, err := strconv.Atoi(v); err == nil && n > 0 {
					switch normFlag(k) {
					case "nproc_per_node":
						l.procs, l.procsFrom = n, "tune run "+k
					case "nnodes":
						l.nodes, l.nodesFrom = n, "tune run "+k
					}
				}
				j++
			}
			l.setLauncher("python")
			if l.procs > 0 {
				l.setLauncher("torchrun")
			}
			l.prog, l.tune = j, true
			return l
		case "lightning":
			if next == "run" && i+2 < len(words) && words[i+2] == "model" {
				i += 2
			}
		case "fabric":
			if next == "run" {
				i++ // fabric run [options] train.py
			}
		case "torchpack":
			if next != "dist-run" {
				break
			}
			i++ // torchpack dist-run -np 4 python train.py: MIT HAN Lab's mpirun front end
		case "accelerate":
			if next == "launch" {
				i++
			}
		}
		ln, isLauncher := launchers[base]
		if !isLauncher && (strings.HasPrefix(base, "python") && !strings.ContainsAny(base[6:], "-_") || pythonVar(words, i)) {
			ln, isLauncher = "python", true
		}
		if !isLauncher {
			if j := unknownWrapper(words, i); j > i {
				i = j
				continue
			}
			break
		}
		if base == "lightning" || base == "fabric" {
			ln = "lightning" // its options take values, unlike python's
		}
		l.setLauncher(ln)
		if ln == "srun" || ln == "mpirun" {
			l.underSrun = true
		}
		i++
		tasks, perTask := 0, 0 // srun -n 32 --gpus-per-task=1
		// Options of the launcher, up to the program.
		for i < len(words) {
			o := words[i]
			if ln == "python" && (o == "-m" || strings.HasPrefix(o, "-m") && len(o) > 2 && !strings.HasPrefix(o, "--")) {
				mod, step := strings.TrimPrefix(o, "-m"), 1
				if mod == "" && i+1 < len(words) {
					mod, step = words[i+1], 2
				}
				if debugModules[mod] {
					// python -m pdb train.py, -m cProfile -o prof.out train.py:
					// a debugger or profiler runs the program it is given.
					i = skipOpts(words, i+step, nil, set("o", "s", "outfile", "sort", "c", "command", "listen", "connect"), false)
					continue
				}
				if runnerModules[mod] && i+step < len(words) && words[i+step] == "run" {
					// python -m pipenv run ./main.py: an environment's
					// runner, a wrapper as pipenv run is.
					i = skipOpts(words, i+step+1, runSwitches, nil, true)
					continue outer
				}
				if ml, ok := moduleLaunchers[mod]; ok {
					l.setLauncher(ml)
					ln = ml
					i += step
					continue
				}
				if mod == "" {
					l.prog = len(words)
					return l
				}
				if step == 2 {
					i++
				}
				l.prog, l.module = i, mod
				return l
			}
			if ln == "python" && o == "-c" {
				l.prog = len(words)
				return l
			}
			if unexpanded(o) && !strings.HasPrefix(o, "-") && launchAhead(words[i+1:]) {
				i++ // srun $EXTRA_OPTS python ...: options the script does not show
				continue
			}
			if !strings.HasPrefix(o, "-") || o == "-" {
				break
			}
			i++
			if o == "--" {
				break
			}
			k, v, hasV := strings.Cut(o, "=")
			if ln == "srun" && !hasV && len(k) > 2 && k[1] != '-' {
				// srun's short options cluster as getopt's do: -lu is -l -u,
				// -N2 is -N 2; the first letter that takes a value takes
				// the rest of the word, or the next word.
				k, v, hasV = getoptCluster(ln, k)
			}
			nk := normFlag(k)
			if !hasV && takesValue(ln, nk) && i < len(words) {
				v, hasV = words[i], true
				i++
				if ln == "mpirun" && (nk == "mca" || nk == "gmca" || nk == "prtemca" || nk == "pmixmca") && i < len(words) {
					i++ // -mca pml ob1: a parameter and its value
				}
			}
			if !hasV {
				continue
			}
			if unexpanded(v) && (procFlags[nk] && !(ln == "srun" && nk == "n") || nk == "gpus" || nk == "gpus_per_node") {
				l.gpusUnknown = true
			}
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				switch {
				case procFlags[nk] && !(ln == "srun" && nk == "n"):
					l.procs, l.procsFrom = n, ln+" "+k
					l.perNode = perNodeFlags[nk] || ln == "deepspeed" && nk == "num_gpus"
					l.total = ln == "accelerate" && nk == "num_processes" || ln == "mpirun" && (nk == "np" || nk == "n")
				case nodeFlags[nk]:
					l.nodes, l.nodesFrom = n, ln+" "+k
				case ln == "lightning" && nk == "devices":
					l.procs, l.procsFrom = n, ln+" "+k
				}
				switch {
				case ln != "srun" || n > 1<<16:
				case nk == "n" || nk == "ntasks":
					tasks = n
				case nk == "gpus_per_task":
					perTask = n
				}
			}
			if nk == "gpus" || nk == "gpus_per_node" || nk == "gres" {
				if n := gpuCount(v); n > 0 {
					l.procs, l.procsFrom = n, ln+" "+k
					if ln == "srun" {
						// --gres=gpu:8 on each of the step's nodes; --gpus, the step's.
						l.perNode = nk != "gpus"
					}
				}
			}
			if nk == "deepspeed_config" || nk == "deepspeed" || nk == "config_file" {
				if z := zeroFromName(v); z > 0 {
					l.zero, l.zeroFrom = z, ln+" "+k+" "+v
				}
				if p := precisionFromName(v); p != "" && l.precision == "" {
					// accelerate's ddp_bf16.yaml, deepspeed's ds_fp16.json
					l.precision, l.precisionFrom = p, ln+" "+k+" "+v
				}
			}
			if ln == "accelerate" && nk == "mixed_precision" || ln == "lightning" && nk == "precision" {
				if l.precision = precisionValue(v); l.precision != "" {
					l.precisionFrom = ln + " " + k
				}
			}
		}
		if tasks > 0 && perTask > 0 {
			// Frontier's srun -N 4 -n 32 --gpus-per-task=1: the step's GPUs.
			l.procs, l.procsFrom, l.perNode = tasks*perTask, "srun -n × --gpus-per-task", false
			l.nodes, l.nodesFrom = 0, "" // the tasks are the job's, on all its nodes
		}
	}
	l.prog = i
	return l
}

// unknownWrapper reads a program no list knows that is handed the
// training command to run (xvfb-run -a python train.py, a site's
// ./training.run -m SRC:DST python3 train_net.py): where a python
// interpreter or a training launcher, with a program after it, comes
// within the next few words, it returns its index; else i. A script
// (.sh, .py), a shell or a known console script is not such a wrapper:
// those are read as the program they are.
func unknownWrapper(words []string, i int) int {
	base := path.Base(words[i])
	switch path.Ext(base) {
	case ".sh", ".bash", ".py":
		return i
	}
	if isShellName(base) || strings.HasPrefix(base, "-") || unexpanded(words[i]) || consoleScripts[base] != 0 {
		return i // a console script's subcommand is its own: lighteval accelerate MODEL_ARGS TASKS
	}
	for j := i + 1; j < len(words)-1 && j <= i+8; j++ {
		if wrappedLaunchers[path.Base(words[j])] || isPythonName(words[j]) {
			return j
		}
	}
	return i
}

// wrappedLaunchers are the launchers unknownWrapper looks for.
var wrappedLaunchers = set("torchrun", "deepspeed", "accelerate", "mpirun", "mpiexec", "horovodrun")

// launchAhead reports whether a known launcher, wrapper or python program
// comes within the next few words: a hidden word before it is an option
// rather than the program.
func launchAhead(words []string) bool {
	for i, w := range words {
		if i >= 8 {
			break
		}
		base := path.Base(w)
		if _, ok := launchers[base]; ok || strings.HasSuffix(w, ".py") && !configPy(w) || containerRuntimes[base] == apptainerFamily {
			return true
		}
	}
	return false
}

// configPy reports whether a .py file lives in a config directory
// (configs/, local_configs/): OpenMMLab's and detectron2's configs are
// python, and a script given one (tools/dist_train.sh CONFIG GPUS) is
// not handing it a program to run.
func configPy(w string) bool {
	return strings.HasSuffix(w, ".py") && strings.Contains(strings.ToLower(path.Dir(w)), "config")
}

// shellScript returns the index of the script a shell at words[prog] runs
// (bash -o pipefail train.sh: train.sh), past the shell's options; the
// options that take a value are -o and -O.
func shellScript(words []string, prog int) int {
	return skipOpts(words, prog+1, nil, shellValueOpts, false)
}

var shellValueOpts = set("o", "O")

// setLauncher keeps the outermost training launcher: a later torchrun or
// deepspeed under srun or mpirun names the launch better, python never does.
func (l *launch) setLauncher(ln string) {
	if ln == "lightning" {
		ln = "python"
	}
	if l.launcher == "" || (l.launcher == "srun" || l.launcher == "mpirun") && ln != "python" && ln != "srun" && ln != "mpirun" ||
		l.launcher == "python" && ln != "python" && ln != "srun" && ln != "mpirun" {
		l.launcher = ln
	}
}

// perNodeFlags give a launcher's process count per node.
var perNodeFlags = set("nproc_per_node", "ntasks_per_node", "gpus_per_node")

// moduleLaunchers are python -m modules that launch another program.
// debugModules run the python program after their options under a
// debugger or profiler.
var debugModules = set("pdb", "ipdb", "pudb", "cProfile", "profile", "trace", "debugpy", "pyinstrument", "scalene")

var moduleLaunchers = map[string]string{
	"torch.distributed.run": "torchrun", "torch.distributed.launch": "torchrun",
	"accelerate.commands.launch": "accelerate", "deepspeed.launcher.runner": "deepspeed",
	"deepspeed": "deepspeed", "composer.cli.launcher": "torchrun",
}

// skipOpts returns the index of the first word from i that is not an
// option. An option "--k=v" is one word; "-k v" two when k takes a value:
// named in values, or, with valueByDefault, any option not in switches.
// "--" ends the options and is skipped.
// skipHiddenOpts looks past a variable that holds options the script does
// not show, where more options follow it (apptainer exec $COMMON --env
// X=1 image.sif): the image comes after them.
func skipHiddenOpts(words []string, i int, switches map[string]bool) int {
	for i+1 < len(words) && unexpanded(words[i]) && strings.HasPrefix(words[i+1], "-") {
		i = skipOpts(words, i+1, switches, nil, true)
	}
	return i
}

func skipOpts(words []string, i int, switches, values map[string]bool, valueByDefault bool) int {
	for i < len(words) {
		o := words[i]
		if !strings.HasPrefix(o, "-") || o == "-" || isNumber(o) && !valueByDefault && values == nil {
			return i
		}
		if o == "--" {
			return i + 1
		}
		i = optionEnd(words, i, switches, values, valueByDefault)
	}
	return i
}

// optionEnd returns the index after the option at words[i] and the value
// it takes, as skipOpts reads them: "--k=v" is one word, "-k v" two when k
// takes a value.
func optionEnd(words []string, i int, switches, values map[string]bool, valueByDefault bool) int {
	o := words[i]
	i++
	if strings.Contains(o, "=") {
		return i
	}
	if nk := normFlag(o); values[nk] || valueByDefault && !switches[nk] && !combinedSwitches(o, switches) {
		i++
	}
	return i
}

// runModule finds, among a runner's options from words[i] on (uv run's),
// the module it runs as python -m does (-m src.train, --module src.train,
// --module=src.train): the index of the word the module's name is in, and
// the name, or "" when it runs none so.
func runModule(words []string, i int) (int, string) {
	for i < len(words) && strings.HasPrefix(words[i], "-") && words[i] != "--" {
		o := words[i]
		switch {
		case (o == "-m" || o == "--module") && i+1 < len(words):
			return i + 1, words[i+1]
		case strings.HasPrefix(o, "--module="):
			return i, strings.TrimPrefix(o, "--module=")
		}
		i = optionEnd(words, i, runSwitches, nil, true) // --with numpy: an option and its value
	}
	return 0, "" // the program, reached with no module before it
}

// combinedSwitches reports whether "-it" is a run of single-letter switches.
func combinedSwitches(o string, switches map[string]bool) bool {
	if strings.HasPrefix(o, "--") || len(o) < 3 {
		return false
	}
	for _, c := range o[1:] {
		if !switches[string(c)] {
			return false
		}
	}
	return true
}

var (
	containerSwitches = set("nv", "nvccli", "rocm", "c", "contain", "C", "containall", "e", "cleanenv", "w", "writable",
		"writable_tmpfs", "f", "fakeroot", "no_home", "ipc", "pid", "u", "userns", "compat", "no_init", "no_privs",
		"keep_privs", "no_https", "no_eval", "disable_cache", "i", "boot", "no_umask", "uts", "no_nv", "q", "quiet",
		"s", "silent", "d", "debug", "unsquash", "no_setgroups", "cwd_only")
	dockerSwitches = set("rm", "i", "t", "d", "detach", "interactive", "tty", "privileged", "init", "read_only",
		"no_healthcheck", "P", "publish_all", "q", "quiet", "oom_kill_disable",
		// NERSC's podman-hpc: the switches that mount a site's GPU, MPI and NCCL
		"gpu", "mpi", "cuda_mpi", "openmpi_pmi2", "openmpi_pmix", "nccl", "nccl_cu12")
	enrootSwitches = set("r", "root", "w", "rw")
	runSwitches    = set("no_sync", "frozen", "locked", "active", "isolated", "no_project", "q", "quiet", "v", "verbose",
		"offline", "all_extras", "no_dev", "all_groups", "no_cache", "only_dev", "no_env_file", "exact",
		"no_capture_output", "no_build_isolation", "compile_bytecode", "managed_python", "no_managed_python", "script")
)

// getoptCluster reads a cluster of short options ("-lu", "-N2", "-lN2"):
// the option that counts (the first taking a value, else the last switch)
// and its value when the word holds it.
func getoptCluster(ln, k string) (opt, val string, hasVal bool) {
	for j := 1; j < len(k); j++ {
		letter := k[j : j+1]
		if takesValue(ln, letter) {
			if j+1 < len(k) {
				return "-" + letter, k[j+1:], true
			}
			return "-" + letter, "", false
		}
	}
	return "-" + k[len(k)-1:], "", true // all switches: nothing to take
}

// pythonVar reports whether words[i] is an interpreter the script names by
// a variable it does not show ("$PYTHON" -m pkg.train, ${PY_BIN} train.py):
// a variable alone, named for Python, before a module or a .py file.
func pythonVar(words []string, i int) bool {
	name, ok := strings.CutPrefix(words[i], "$")
	if !ok || i+1 >= len(words) {
		return false
	}
	if inner, ok := strings.CutPrefix(name, "{"); ok {
		name, ok = strings.CutSuffix(inner, "}")
		if !ok {
			return false
		}
	}
	if !isIdent(name) {
		return false
	}
	lower := strings.ToLower(name)
	named := strings.HasSuffix(lower, "python") || slices.ContainsFunc(strings.Split(lower, "_"), func(t string) bool {
		return t == "py" || t == "python" || t == "python3" || t == "pybin" || t == "pyexe"
	})
	next := words[i+1]
	return named && (next == "-m" || next == "-u" || strings.HasPrefix(next, "-m") && !strings.HasPrefix(next, "--") ||
		strings.HasSuffix(next, ".py"))
}

// runnerModules are the environment runners Python runs as modules
// (python -m pipenv run, python -m uv run): wrappers, never the program.
var runnerModules = set("pipenv", "poetry", "uv", "pdm", "hatch", "pixi", "rye")

// imageEntrypoint is the program a container image runs when it is given
// options and no program (apptainer run docker://vllm/vllm-openai:latest
// --model Qwen/Qwen3-8B, docker run ghcr.io/huggingface/text-generation-inference
// --model-id ...): the serving images whose entrypoint is their server.
// prog is where peel found the program, just past the image; nil for any
// other command.
func imageEntrypoint(words []string, prog int) []string {
	if prog < 2 || prog > len(words) || prog < len(words) && !strings.HasPrefix(words[prog], "-") {
		return nil
	}
	if !slices.ContainsFunc(words[:prog-1], func(w string) bool {
		f := containerRuntimes[path.Base(w)]
		return f == dockerFamily || f == apptainerFamily
	}) {
		return nil // the word before the program is a container's image only under a container runtime
	}
	image := strings.ToLower(words[prog-1])
	for _, e := range imageEntrypoints {
		if strings.Contains(image, e.image) {
			return e.program
		}
	}
	return nil
}

// Container runtimes' families: docker's, whose image sees nothing of the
// host but what is mounted; apptainer's, which mounts the home and working
// directories by default; enroot's, which starts a container made before
// (pyxis's srun --container-image runs in one too).
const (
	dockerFamily    = "docker"
	apptainerFamily = "apptainer"
	enrootFamily    = "enroot"
)

// containerRuntimes are the commands that run a container, by family.
var containerRuntimes = map[string]string{
	"docker": dockerFamily, "podman": dockerFamily, "podman-hpc": dockerFamily, "nvidia-docker": dockerFamily,
	"apptainer": apptainerFamily, "singularity": apptainerFamily,
	"enroot": enrootFamily,
}

// containerProgram returns the index of the first word after a container
// runtime's image and options (apptainer exec --nv img.sif, docker run
// --rm -v a:b img, enroot start -r name --), where words[i] runs one; ok
// is false for any other command, and for a runtime's other verbs
// (apptainer build, docker pull).
func containerProgram(words []string, i int) (int, bool) {
	next := ""
	if i+1 < len(words) {
		next = words[i+1]
	}
	switch containerRuntimes[path.Base(words[i])] {
	case apptainerFamily:
		if next != "exec" && next != "run" {
			return i, false
		}
		return skipHiddenOpts(words, skipOpts(words, i+2, containerSwitches, nil, true), containerSwitches) + 1, true
	case dockerFamily:
		if next != "run" && next != "exec" {
			return i, false
		}
		return skipHiddenOpts(words, skipOpts(words, i+2, dockerSwitches, nil, true), dockerSwitches) + 1, true
	case enrootFamily:
		if next != "start" && next != "exec" {
			return i, false
		}
		j := skipOpts(words, i+2, enrootSwitches, nil, true) + 1
		if j < len(words) && words[j] == "--" {
			j++
		}
		return j, true
	}
	return i, false
}

// containerEnv adds to env the variables a container runtime's options
// set for the command it runs: --env K=V and --env=K=V (apptainer's, and
// its lists, K1=V1,K2=V2), and docker's and enroot's -e K=V (apptainer's
// -e is --cleanenv: short is false for it). A variable passed on by name
// alone (-e HF_TOKEN) is the script's own.
func containerEnv(opts []string, short bool, env map[string]string) {
	for k := 0; k < len(opts); k++ {
		o, v := opts[k], ""
		switch {
		case (o == "--env" || short && o == "-e") && k+1 < len(opts):
			k++
			v = opts[k]
		default:
			var ok bool
			if v, ok = strings.CutPrefix(o, "--env="); !ok {
				continue
			}
		}
		parts := []string{v}
		if strings.Count(v, "=") > 1 {
			parts = strings.Split(v, ",")
		}
		for _, p := range parts {
			if name, val, ok := strings.Cut(p, "="); ok && isIdent(name) {
				env[name] = val
			}
		}
	}
}

// imageEntrypoints are the serving images whose entrypoint is their server,
// by a part of the image's name (a pulled .sif keeps it: vllm-openai_latest.sif).
var imageEntrypoints = []struct {
	image   string
	program []string
}{
	{"vllm-openai", []string{"python3", "-m", "vllm.entrypoints.openai.api_server"}},
	{"vllm_openai", []string{"python3", "-m", "vllm.entrypoints.openai.api_server"}},
	{"text-generation-inference", []string{"text-generation-launcher"}},
}
