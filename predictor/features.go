package predictor

import (
	"path"
	"strconv"
	"strings"
)

// Features are what a job's batch script says about the work it launches,
// read without running it. Zero values mean "not said".
type Features struct {
	// Launcher is the outermost launcher of the training command: python,
	// torchrun, deepspeed, accelerate, srun, mpirun or horovodrun.
	Launcher string `json:"launcher,omitempty"`
	// Program is the script or module run ("train.py", "-m trainer").
	Program string `json:"program,omitempty"`
	// Model is the model name, lower-cased; ModelFrom says where it came
	// from: "flag" (--model and its variants) or "path" (no flag names it,
	// so the program or the directory it runs in stands for it, as in
	// "cd .../cifar10 && python main.py").
	Model     string `json:"model,omitempty"`
	ModelFrom string `json:"model_from,omitempty"`
	// BatchSize is the per-device (micro) batch; GlobalBatchSize the global
	// one when given (--global-batch-size).
	BatchSize       float64 `json:"batch_size,omitempty"`
	GlobalBatchSize float64 `json:"global_batch_size,omitempty"`
	Precision       string  `json:"precision,omitempty"` // fp16, bf16, amp, fp32, fp8
	SeqLen          float64 `json:"seq_len,omitempty"`
	ImageSize       float64 `json:"image_size,omitempty"`
	GradAccum       float64 `json:"grad_accum,omitempty"`
	ZeROStage       int     `json:"zero_stage,omitempty"`
	Steps           float64 `json:"steps,omitempty"`
	Epochs          float64 `json:"epochs,omitempty"`
	// GPUs is the number of GPUs the job asks for (from the launcher's
	// process count, else #SBATCH); GPUType the type #SBATCH names.
	GPUs    int    `json:"gpus,omitempty"`
	GPUType string `json:"gpu_type,omitempty"`
	// Params is the model's parameter count when something knows it (a
	// catalogue of models; ModelParams reads it from names like "7b").
	Params float64 `json:"params,omitempty"`
	// JobName, Account and Partition as the #SBATCH header gives them.
	JobName   string `json:"job_name,omitempty"`
	Account   string `json:"account,omitempty"`
	Partition string `json:"partition,omitempty"`
}

// Flag spellings, normalised: leading dashes dropped, '-' read as '_', lower case.
var (
	modelFlags = set("model", "arch", "a", "model_name_or_path", "model_name", "model_id",
		"pretrained_model_name_or_path", "model_type", "network", "net", "backbone", "model_path", "hf_model")
	batchFlags = set("batch_size", "b", "bs", "per_device_train_batch_size", "micro_batch_size",
		"per_gpu_train_batch_size", "train_batch_size", "train_micro_batch_size_per_gpu", "mbs",
		"batch", "batchsize", "train_bs", "micro_bs", "per_device_batch_size")
	globalBatchFlags = set("global_batch_size", "gbs", "global_bs", "total_batch_size")
	seqFlags         = set("seq_len", "seq_length", "max_seq_length", "max_seq_len", "block_size",
		"max_length", "sequence_length", "context_length", "max_position_embeddings", "bptt", "cutoff_len")
	imageFlags = set("img_size", "image_size", "input_size", "resolution", "crop_size", "train_crop_size",
		"imgsz", "img", "size")
	accumFlags = set("gradient_accumulation_steps", "grad_accum", "accum_iter", "accumulate_grad_batches",
		"grad_accum_steps", "gradient_accumulation", "accum_steps", "update_freq")
	zeroFlags = set("zero_stage", "zero", "zero_optimization_stage")
	stepFlags = set("max_steps", "num_steps", "steps", "train_steps", "train_iters", "iterations",
		"num_iterations", "max_iters", "n_steps", "num_minibatches", "step", "total_steps", "max_iter", "iters")
	epochFlags = set("epochs", "num_train_epochs", "n_epochs", "max_epochs", "epoch", "num_epochs")
	// Launcher options whose value is the number of processes (GPUs).
	procFlags = set("nproc_per_node", "nproc", "num_gpus", "num_processes", "np", "n", "gpus",
		"gpus_per_node", "ntasks", "ntasks_per_node")
	nodeFlags = set("nnodes", "num_nodes", "n_nodes", "num_machines", "nodes", "N")
	// Boolean flags.
	boolPrecision = map[string]string{"fp16": "fp16", "bf16": "bf16", "amp": "amp", "half": "fp16",
		"use_amp": "amp", "mixed_precision": "amp", "use_fp16": "fp16", "use_bf16": "bf16", "fp8": "fp8",
		"apex": "amp", "bf16_full_eval": "bf16", "tf32": "fp32"}
	valuePrecision = set("precision", "mixed_precision", "dtype", "torch_dtype", "amp_dtype")
)

func set(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// launchers maps a command word to the launcher it names.
var launchers = map[string]string{
	"torchrun": "torchrun", "deepspeed": "deepspeed", "accelerate": "accelerate", "srun": "srun",
	"mpirun": "mpirun", "mpiexec": "mpirun", "horovodrun": "horovodrun", "python": "python",
	"python3": "python", "python2": "python", "ipython": "python", "torch.distributed.run": "torchrun",
	"torch.distributed.launch": "torchrun", "lightning": "python", "composer": "torchrun",
}

// genericPrograms say nothing about the model they train.
var genericPrograms = set("main", "train", "run", "finetune", "fine_tune", "pretrain", "launch", "trainer",
	"run_clm", "run_mlm", "run_glue", "run_translation", "run_summarization", "run_qa", "run_seq2seq",
	"train_net", "tools", "script", "job", "experiment", "entry", "app", "cli")

// MaxFeatureLine bounds the length of one logical line examined for features.
const MaxFeatureLine = 1 << 16

// scriptFeatures reads the features of a batch script: #SBATCH options
// already parsed, then every command line with shell variables expanded.
func scriptFeatures(text string, sbatch []Option) Features {
	var f Features
	vars := map[string]string{}
	workdir := ""
	found := false
	var cont strings.Builder
	for line := range scriptLines(text) {
		t := strings.TrimSpace(line)
		if strings.HasSuffix(t, "\\") && cont.Len() < MaxFeatureLine {
			cont.WriteString(strings.TrimSuffix(t, "\\"))
			cont.WriteByte(' ')
			continue
		}
		if cont.Len() > 0 {
			cont.WriteString(t)
			t = cont.String()
			cont.Reset()
		}
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if len(t) > MaxFeatureLine {
			t = t[:MaxFeatureLine]
		}
		for _, cmd := range splitCommands(t) {
			words := shellWords(cmd)
			if len(words) == 0 {
				continue
			}
			for i := range words {
				words[i] = expand(words[i], vars)
			}
			if assigned := assignments(words, vars); assigned == len(words) {
				continue
			}
			if words[0] == "cd" && len(words) > 1 {
				workdir = words[1]
				continue
			}
			if cf, ok := commandFeatures(words, workdir); ok && !found {
				f, found = cf, true
			} else if ok {
				f = mergeFeatures(f, cf)
			}
		}
	}
	sbatchFeatures(&f, sbatch)
	return f
}

// mergeFeatures fills what the first launch command left unsaid from a later one.
func mergeFeatures(a, b Features) Features {
	if a.Model == "" || a.ModelFrom == "path" && b.ModelFrom == "flag" {
		a.Model, a.ModelFrom = b.Model, b.ModelFrom
	}
	if a.BatchSize == 0 {
		a.BatchSize = b.BatchSize
	}
	return a
}

// splitCommands splits a line at &&, ||, ; and | outside quotes.
func splitCommands(line string) []string {
	var out []string
	var q byte
	start := 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == ';' || c == '|' || c == '&':
			out = append(out, line[start:i])
			for i+1 < len(line) && (line[i+1] == '|' || line[i+1] == '&') {
				i++
			}
			start = i + 1
		}
	}
	return append(out, line[start:])
}

// shellWords splits a command into words, removing quotes (no globbing).
func shellWords(cmd string) []string {
	var out []string
	var b strings.Builder
	in, q := false, byte(0)
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else {
				b.WriteByte(c)
			}
		case c == '\'' || c == '"':
			q, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// assignments records leading NAME=value words (after export/declare/local)
// in vars and returns how many words they took.
func assignments(words []string, vars map[string]string) int {
	i := 0
	if len(words) > 0 && (words[0] == "export" || words[0] == "declare" || words[0] == "local" || words[0] == "readonly") {
		i = 1
		for i < len(words) && strings.HasPrefix(words[i], "-") {
			i++
		}
	}
	for ; i < len(words); i++ {
		k, v, ok := strings.Cut(words[i], "=")
		if !ok || !isIdent(k) {
			return i
		}
		if len(vars) < 1024 {
			vars[k] = v
		}
	}
	return i
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// expand substitutes $NAME, ${NAME} and ${NAME:-default} (and := / -) from
// vars; unknown variables stay as written.
func expand(w string, vars map[string]string) string {
	if !strings.Contains(w, "$") {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if w[i] != '$' || i+1 >= len(w) {
			b.WriteByte(w[i])
			continue
		}
		if w[i+1] == '{' {
			end := strings.IndexByte(w[i:], '}')
			if end < 0 {
				b.WriteString(w[i:])
				break
			}
			inner := w[i+2 : i+end]
			name, def, hasDef := inner, "", false
			for _, sep := range []string{":-", ":=", "-", "="} {
				if k, d, ok := strings.Cut(inner, sep); ok && isIdent(k) {
					name, def, hasDef = k, d, true
					break
				}
			}
			if v, ok := vars[name]; ok && v != "" {
				b.WriteString(v)
			} else if hasDef {
				b.WriteString(def)
			} else {
				b.WriteString(w[i : i+end+1])
			}
			i += end
			continue
		}
		j := i + 1
		for j < len(w) && (w[j] == '_' || w[j] >= 'a' && w[j] <= 'z' || w[j] >= 'A' && w[j] <= 'Z' || j > i+1 && w[j] >= '0' && w[j] <= '9') {
			j++
		}
		if v, ok := vars[w[i+1:j]]; ok && j > i+1 {
			b.WriteString(v)
		} else {
			b.WriteString(w[i:j])
		}
		i = j - 1
	}
	return b.String()
}

// normFlag turns "--per-device-train-batch-size" into "per_device_train_batch_size".
func normFlag(w string) string {
	w = strings.TrimLeft(w, "-")
	if len(w) == 1 {
		return w // -N and -n differ
	}
	return strings.ReplaceAll(strings.ToLower(w), "-", "_")
}

// commandFeatures reads one simple command: leading VAR=value words, then
// launchers (srun, mpirun, torchrun, ...) with their options, then the
// program and its arguments. It reports false for commands that launch
// nothing recognisable (module load, mkdir, echo).
func commandFeatures(words []string, workdir string) (Features, bool) {
	var f Features
	i := 0
	for i < len(words) && strings.Contains(words[i], "=") && isIdent(words[i][:strings.IndexByte(words[i], '=')]) {
		i++
	}
	procs, nodes := 0, 0
	launched := false
	for i < len(words) {
		w := words[i]
		base := path.Base(w)
		l, isLauncher := launchers[base]
		if !isLauncher && strings.HasPrefix(base, "python") {
			l, isLauncher = "python", true
		}
		if !isLauncher {
			break
		}
		if f.Launcher == "" || f.Launcher == "srun" || f.Launcher == "mpirun" {
			if f.Launcher == "" || l != "python" {
				f.Launcher = l
			}
		}
		launched = true
		i++
		if base == "accelerate" && i < len(words) && words[i] == "launch" {
			i++
		}
		// Options of the launcher, up to the program.
		for i < len(words) {
			o := words[i]
			if o == "-m" && l == "python" && i+1 < len(words) {
				mod := words[i+1]
				if ml, ok := launchers[mod]; ok && ml == "torchrun" {
					f.Launcher, l = "torchrun", "torchrun"
					i += 2
					continue
				}
				f.Program = "-m " + mod
				i += 2
				return argFeatures(f, words[i:], workdir, procs, nodes), true
			}
			if !strings.HasPrefix(o, "-") || o == "-" {
				break
			}
			k, v, hasV := strings.Cut(o, "=")
			nk := normFlag(k)
			if !hasV && takesValue(l, nk) && i+1 < len(words) {
				v, hasV = words[i+1], true
				i++
			}
			i++
			if hasV {
				if n, err := strconv.Atoi(v); err == nil && n > 0 {
					switch {
					case procFlags[nk] && !(l == "srun" && nk == "n"):
						procs = n
					case nodeFlags[nk]:
						nodes = n
					}
				}
				if nk == "gpus" || nk == "gpus_per_node" || nk == "gres" {
					if n := gpuCount(v); n > 0 {
						procs = n
					}
				}
				if nk == "deepspeed_config" || nk == "deepspeed" || nk == "config_file" {
					if z := zeroFromName(v); z > 0 {
						f.ZeROStage = z
					}
				}
				if l == "accelerate" && nk == "mixed_precision" {
					f.Precision = precisionValue(v)
				}
			}
		}
	}
	if !launched {
		// A bare program: ./train.py, train.sh or a console script.
		if i >= len(words) || !strings.HasSuffix(words[i], ".py") {
			return f, false
		}
		f.Launcher = "python"
	}
	if i >= len(words) {
		return f, launched
	}
	f.Program = path.Base(words[i])
	return argFeatures(f, words[i+1:], workdir, procs, nodes), true
}

// takesValue reports whether a launcher option is followed by a value:
// python's own options take none (but -c, -W, -X), other launchers' do unless
// they are known switches.
func takesValue(launcher, opt string) bool {
	if launcher == "python" {
		return opt == "W" || opt == "X" || opt == "c"
	}
	return !launcherSwitches[opt]
}

var launcherSwitches = set("standalone", "no_python", "use_env", "multi_gpu", "fp16", "bf16", "overlap",
	"verbose", "v", "no_local_rank", "oversubscribe", "allow_run_as_root", "tag_output", "cpu",
	"use_deepspeed", "use_fsdp", "module", "m", "pty", "unbuffered", "u", "exclusive", "quiet", "Q", "l",
	"label", "autotuning", "force_multi", "bind_to_core", "report_bindings", "display_map", "gloo", "mpi",
	"elastic_training", "no_ssh_check", "enable_each_rank_log", "monitor", "dynamo_use_dynamic",
	"same_network", "debug")

// argFeatures reads the program's own arguments.
func argFeatures(f Features, args []string, workdir string, procs, nodes int) Features {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || len(a) < 2 || isNumber(a) {
			continue
		}
		k, v, hasV := strings.Cut(a, "=")
		nk := normFlag(k)
		if !hasV && i+1 < len(args) && (!strings.HasPrefix(args[i+1], "-") || isNumber(args[i+1])) {
			v, hasV = args[i+1], true
			i++
		}
		if p, ok := boolPrecision[nk]; ok && (!hasV || truthy(v)) && !valuePrecision[nk] {
			f.Precision = p
			if hasV && !truthy(v) && !isBoolWord(v) {
				i-- // the next word was a positional argument, not our value
			}
			continue
		}
		if !hasV {
			continue
		}
		num, numErr := strconv.ParseFloat(strings.TrimSuffix(v, ","), 64)
		isNum := numErr == nil && num > 0 && num < 1e12
		switch {
		case modelFlags[nk] && !isNumber(v):
			f.Model, f.ModelFrom = normModel(v), "flag"
		case batchFlags[nk] && isNum:
			f.BatchSize = num
		case globalBatchFlags[nk] && isNum:
			f.GlobalBatchSize = num
		case seqFlags[nk] && isNum:
			f.SeqLen = num
		case imageFlags[nk] && isNum:
			f.ImageSize = num
		case imageFlags[nk] && strings.Contains(v, ","):
			if last := v[strings.LastIndexByte(v, ',')+1:]; last != "" {
				if n, err := strconv.ParseFloat(last, 64); err == nil && n > 0 && n < 1e6 {
					f.ImageSize = n
				}
			}
		case accumFlags[nk] && isNum:
			f.GradAccum = num
		case zeroFlags[nk] && isNum && num <= 3:
			f.ZeROStage = int(num)
		case nk == "deepspeed_config" || nk == "deepspeed" || nk == "ds_config":
			if z := zeroFromName(v); z > 0 {
				f.ZeROStage = z
			}
		case stepFlags[nk] && isNum:
			f.Steps = num
		case epochFlags[nk] && isNum:
			f.Epochs = num
		case valuePrecision[nk]:
			if p := precisionValue(v); p != "" {
				f.Precision = p
			}
		case (nk == "gpus" || nk == "num_gpus" || nk == "ngpus" || nk == "devices" || nk == "world_size") && isNum && procs == 0:
			procs = int(num)
		}
	}
	if f.Model == "" {
		if m := programModel(f.Program, workdir); m != "" {
			f.Model, f.ModelFrom = m, "path"
		}
	}
	if procs > 0 {
		f.GPUs = procs * max(nodes, 1)
	}
	return f
}

func truthy(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on", "o1", "o2", "o3":
		return true
	}
	return false
}

func isBoolWord(v string) bool {
	switch strings.ToLower(v) {
	case "0", "false", "no", "off", "o0":
		return true
	}
	return truthy(v)
}

func precisionValue(v string) string {
	v = strings.ToLower(v)
	switch {
	case strings.Contains(v, "bf16") || strings.Contains(v, "bfloat16"):
		return "bf16"
	case strings.Contains(v, "fp16") || strings.Contains(v, "float16") || v == "16" || v == "16_mixed" || v == "16-mixed" || v == "half":
		return "fp16"
	case strings.Contains(v, "fp8"):
		return "fp8"
	case v == "32" || strings.Contains(v, "fp32") || strings.Contains(v, "float32") || v == "no":
		return "fp32"
	case v == "amp" || v == "mixed":
		return "amp"
	}
	return ""
}

// zeroFromName reads a ZeRO stage from a DeepSpeed config file name:
// ds_zero3.json, zero_stage_2.json, zero2_offload.json.
func zeroFromName(v string) int {
	v = strings.ToLower(path.Base(v))
	i := strings.Index(v, "zero")
	if i < 0 {
		return 0
	}
	for _, c := range v[i+4:] {
		switch {
		case c >= '1' && c <= '3':
			return int(c - '0')
		case c == '_' || c == '-' || c == 's' || c == 't' || c == 'a' || c == 'g' || c == 'e':
		default:
			return 0
		}
	}
	return 0
}

// normModel lower-cases a model name and drops a local path's directories
// unless it looks like a Hugging Face "org/name".
func normModel(v string) string {
	v = strings.TrimRight(strings.ToLower(v), "/")
	if strings.Contains(v, "/") && !looksLikeHFName(v) {
		v = path.Base(v)
	}
	return v
}

// programModel names the workload when no flag names the model: the
// program's own name when it is specific (cyclegan.py), else the directory
// the command runs in (.../image_classification/cifar10).
func programModel(program, workdir string) string {
	stem := strings.ToLower(strings.TrimSuffix(path.Base(program), path.Ext(program)))
	stem = strings.TrimPrefix(stem, "-m ")
	if i := strings.LastIndexByte(stem, '.'); i >= 0 {
		stem = stem[i+1:]
	}
	if stem != "" && !genericPrograms[stem] && !strings.HasPrefix(stem, "train") && !strings.HasPrefix(stem, "main") {
		return stem
	}
	if workdir == "" {
		return ""
	}
	d := strings.ToLower(path.Base(strings.TrimRight(workdir, "/")))
	if d == "." || d == "/" || d == "scripts" || d == "src" || strings.HasPrefix(d, "$") {
		return ""
	}
	return d
}

// sbatchFeatures fills GPU count and type, job name, account and partition
// from #SBATCH options where the commands left them unsaid.
func sbatchFeatures(f *Features, opts []Option) {
	s := Script{Sbatch: opts}
	if v, ok := s.SbatchValue("--job-name", "-J"); ok {
		f.JobName = v
	}
	if v, ok := s.SbatchValue("--account", "-A"); ok {
		f.Account = v
	}
	if v, ok := s.SbatchValue("--partition", "-p"); ok {
		f.Partition = v
	}
	n, typ := 0, ""
	if v, ok := s.SbatchValue("--gres"); ok {
		for _, e := range strings.Split(v, ",") {
			if req, err := ParseGres(e); err == nil {
				for _, g := range req {
					if g.Name == "gpu" {
						n, typ = int(g.Count), g.Type
					}
				}
			}
		}
	}
	for _, k := range []string{"--gpus", "-G", "--gpus-per-node", "--gpus-per-task"} {
		if v, ok := s.SbatchValue(k); ok {
			t, c := splitTypedCount(v)
			if c > 0 {
				n, typ = c, t
			}
		}
	}
	if n > 0 {
		if v, ok := s.SbatchValue("--nodes", "-N"); ok {
			if nn, err := strconv.Atoi(strings.Split(v, "-")[0]); err == nil && nn > 1 {
				n *= nn
			}
		}
	}
	if f.GPUs == 0 {
		f.GPUs = n
	}
	if f.GPUType == "" {
		f.GPUType = typ
	}
}

// splitTypedCount reads "a100:2" or "2".
func splitTypedCount(v string) (string, int) {
	typ, cnt := "", v
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		typ, cnt = v[:i], v[i+1:]
	}
	c, err := strconv.Atoi(cnt)
	if err != nil || c <= 0 || c > MaxGresCount {
		return "", 0
	}
	return typ, c
}

func gpuCount(v string) int {
	_, c := splitTypedCount(strings.TrimPrefix(strings.TrimPrefix(v, "gpu:"), "gres/gpu:"))
	return c
}
