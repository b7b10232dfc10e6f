package predictor

import (
	"iter"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/augur-hpc/augur/internal/hostlist"
	"github.com/augur-hpc/augur/predictor/progenv"
)

// Features are what a job's batch script says about the work it launches,
// read without running it. Zero values mean "not said".
type Features struct {
	// Launcher is the launcher of the training command: python, torchrun,
	// deepspeed, accelerate, srun, mpirun or horovodrun; a torchrun,
	// deepspeed or accelerate under srun or mpirun names it. Never a wrapper
	// (singularity, conda run, env, time, ...).
	Launcher string `json:"launcher,omitempty"`
	// Program is the script or module run ("train.py", "-m trainer").
	Program string `json:"program,omitempty"`
	// Model is the model name, lower-cased; ModelFrom says where it came
	// from: "flag" (--model and its variants, Hydra's model=...), "config"
	// (a config file's name: configs/llama2-7b.yaml, torchtune's
	// --config llama3/8B_lora), "env" (MODEL_NAME and the like exported to
	// the command), "job_name" (the #SBATCH job name names a model family,
	// or the output file's name, or the name the launch gives its run or
	// its logger's project: --run_name, --wandb_project),
	// "program" (the program's file name does: finetune_llama2_7b.py),
	// "comment" (a comment's prose does: # LoRA fine-tune Qwen3-VL-2B; or,
	// for a script read without its submission's arguments, the example of
	// one its comments show: # Usage: sbatch train.sh Qwen/Qwen2.5-7B),
	// "default" (the program's own default for its model option, read from
	// the program's file: ParseScriptFiles), "download" (the one model the
	// script fetches with huggingface-cli download before a launch that
	// names none),
	// or "path" (nothing names it, so the name of the workload stands for
	// it: the program's, the directory it runs in, as in "cd .../cifar10 &&
	// python main.py", or the job's, with the words any job uses cut away:
	// drq_breakout_all is drq).
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
	// GPUs is the number of GPUs the job asks for (its #SBATCH allocation,
	// else the launcher's process count); GPUType the type #SBATCH names: its
	// gres or --gpus type, else the one type its --constraint, --partition,
	// --account and --qos allow together, canonically written ("v100-32g"
	// for -C volta32gb; see ReadGPUNames).
	GPUs    int    `json:"gpus,omitempty"`
	GPUType string `json:"gpu_type,omitempty"`
	// Params is the model's parameter count when something knows it (a
	// catalogue of models; ModelParams reads it from names like "7b").
	Params float64 `json:"params,omitempty"`
	// ParamsFrom says how Params was found: "shape" (12·L·h² from the
	// layers and hidden size on the command line), "shape+vocab" (plus the
	// embedding, V·h), or "" (from the model's name).
	ParamsFrom string `json:"params_from,omitempty"`
	// Layers and Hidden are the transformer's shape when the command line
	// gives it (Megatron's --num-layers and --hidden-size).
	Layers float64 `json:"layers,omitempty"`
	Hidden float64 `json:"hidden,omitempty"`
	// Tuning is "lora" or "qlora" (LoRA on 4-bit frozen weights) when the
	// job trains adapters rather than every weight ("" for all of them);
	// LoRARank their rank when stated.
	Tuning   string  `json:"tuning,omitempty"`
	LoRARank float64 `json:"lora_rank,omitempty"`
	// Checkpointing is true when activations are recomputed in the
	// backward pass (--gradient_checkpointing, Megatron's
	// --recompute-activations).
	Checkpointing bool `json:"checkpointing,omitempty"`
	// Optimizer is "adamw", "adamw8bit", "paged" (bitsandbytes' paged
	// optimizers), "adafactor" or "sgd" when the command line names one.
	Optimizer string `json:"optimizer,omitempty"`
	// Unknown names the features the script sets from something it does
	// not show (an environment variable, $1, a command's output, a sourced
	// file): "model", "batch_size", "precision", "gpus", "program". They
	// are left unsaid rather than guessed.
	Unknown []string `json:"unknown,omitempty"`
	// JobName, Account and Partition as the #SBATCH header gives them.
	JobName   string `json:"job_name,omitempty"`
	Account   string `json:"account,omitempty"`
	Partition string `json:"partition,omitempty"`
	// From says where each feature above came from, keyed by its JSON
	// name, for people checking a prediction: "line 42: --bf16",
	// "line 40: $BATCH_SIZE", "#SBATCH --gres", "#SBATCH --job-name",
	// "line 12: torchrun --nproc_per_node × --nnodes".
	From map[string]string `json:"from,omitempty"`

	// ConfigStandIn is the workload a command's config file or Hydra
	// experiment is named for (fastspeech2.yaml, experiment=aero_2-16),
	// which stands in for the model only where no program, directory or
	// job name does: config names are as often a data set's or a
	// setting's. It is read while the script is walked and empty in what
	// ParseScript returns; ConfigStandInFrom says where it was read.
	ConfigStandIn     string `json:"-"`
	ConfigStandInFrom string `json:"-"`
	// ModelPlace is the name of the job's own a model standing in for
	// one (ModelFrom "path") was read from: the program's, its
	// directory's, the one the command runs in; for the rules that weigh
	// one stand-in against another. It is read while the script is walked
	// and zero in what ParseScript returns.
	ModelPlace Place `json:"-"`
	// BatchKey is the flag, config key or variable BatchSize was read
	// from, as normFlag gives it (per_device_train_batch_size, batch_size),
	// or empty when it was worked out otherwise. Read while the script is
	// walked and empty in what ParseScript returns.
	BatchKey string `json:"-"`
}

// note records src as where feature came from ("" records nothing).
func (f *Features) note(feature, src string) {
	if src == "" {
		return
	}
	if f.From == nil {
		f.From = make(map[string]string, 8)
	}
	f.From[feature] = src
	if feature == "model" {
		f.ModelPlace = Place{} // a new model, or one named more fully: no stand-in's place
	}
}

// noteModelPlace records that a stand-in model was read from the name of
// the place at.
func (f *Features) noteModelPlace(at Place) {
	f.note("model", at.String())
	f.ModelPlace = at
}

// copyFrom records that feature came from where b's came from.
func (f *Features) copyFrom(b Features, feature string) {
	f.note(feature, b.From[feature])
}

// atLine prefixes every source that names no place of its own with the
// script line of the command it was read from.
func (f *Features) atLine(line uint) {
	if line == 0 {
		return
	}
	prefix := "line " + strconv.FormatUint(uint64(line), 10) + ": "
	for k, v := range f.From {
		f.From[k] = prefix + v
	}
	if f.ConfigStandInFrom != "" {
		f.ConfigStandInFrom = prefix + f.ConfigStandInFrom
	}
}

// shiftLines moves the lines its sources name by the line a piece of
// text starts on (a heredoc's body starting on line 14: its line 3 is the
// script's 16); 0 leaves them.
func (f *Features) shiftLines(start uint) {
	if start == 0 {
		return
	}
	shift := func(v string) string {
		rest, ok := strings.CutPrefix(v, "line ")
		n, tail, found := strings.Cut(rest, ":")
		line, err := strconv.ParseUint(n, 10, 32)
		if !ok || !found || err != nil {
			return v
		}
		return "line " + strconv.FormatUint(line+uint64(start)-1, 10) + ":" + tail
	}
	for k, v := range f.From {
		f.From[k] = shift(v)
	}
	f.ConfigStandInFrom = shift(f.ConfigStandInFrom)
}

// Flag spellings, normalised: leading dashes dropped, '-' read as '_', lower case.
var (
	modelFlags = set("model", "arch", "a", "model_name_or_path", "model_name", "model_id",
		"pretrained_model_name_or_path", "model_type", "network", "net", "backbone", "model_path", "hf_model",
		"init_from", "restore_from_path", "weights", "factory", "base_model", "pretrained", "hf_model_name",
		"bert_model", "pretrained_model", "model_checkpoint", "base_model_name_or_path", "model_name_or_dir",
		"model_type_or_path",
		"amodel") // LAION-CLAP's audio model (--amodel PANN-14 beside its text model, --tmodel roberta)
	// perGPUBatchFlags say in their name that they count per GPU, and so
	// win over a plain --batch beside them (EDM's --batch 128 --batch-gpu
	// 16), whatever their order.
	perGPUBatchFlags = []string{"per_device_train_batch_size", "micro_batch_size", "per_gpu_train_batch_size",
		"train_micro_batch_size_per_gpu", "mbs", "micro_bs", "per_device_batch_size", "batch_size_per_gpu",
		"per_gpu_batch_size", "micro_batch_size_per_gpu", "batch_size_per_device", "micro_bsz",
		"device_train_microbatch_size", "local_micro_batch_size", "micro_train_batch_size", "batch_size_per_replica",
		"batch_gpu", "images_per_gpu", "imgs_per_gpu", "samples_per_gpu", "batch_per_gpu", "batch_size_per_rank",
		"ppo_micro_batch_size_per_gpu",                 // verl's (actor, critic)
		"device_batch_size", "device_train_batch_size"} // nanochat's --device-batch-size
	isPerGPUBatch = set(perGPUBatchFlags...)
	batchFlags    = set(append([]string{"batch_size", "b", "bs", "bsize", "train_batch_size", "batch", "batchsize",
		"train_bs", "batch_size_training", "batch_size_train", "training_batch_size", "bs_train", "bsz", "train_bsz",
		"local_batch_size", "bz",
		"max_sentences"}, // fairseq's sentences per GPU
		perGPUBatchFlags...)...)
	// evalBatchFlags give the batch of a job that only evaluates.
	evalBatchFlags = set("per_device_eval_batch_size", "eval_batch_size", "per_gpu_eval_batch_size", "infer_batch_size",
		"inference_batch_size", "test_batch_size", "predict_batch_size")
	globalBatchFlags = set("global_batch_size", "gbs", "global_bs", "total_batch_size")
	seqFlags         = set("seq_len", "seq_length", "max_seq_length", "max_seq_len", "block_size",
		"max_length", "sequence_length", "sequence_len", "context_length", "encoder_seq_length", "max_position_embeddings", "bptt", "cutoff_len")
	imageFlags = set("img_size", "image_size", "input_size", "resolution", "crop_size", "train_crop_size",
		"imgsz", "img", "size")
	accumFlags = set("gradient_accumulation_steps", "grad_accum", "accum_iter", "accumulate_grad_batches",
		"grad_accum_steps", "gradient_accumulation", "accum_steps", "update_freq", "accum_freq")
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
		"apex": "amp", "bf16_full_eval": "bf16", "tf32": "fp32", "bfloat16": "bf16", "pure_bf16": "bf16",
		"use_bfloat16": "bf16", "float16": "fp16", "memory_efficient_fp16": "fp16", "memory_efficient_bf16": "bf16",
		"enable_amp": "amp", "enable_fp16": "fp16", "enable_bf16": "bf16", "amp_enabled": "amp",
		"native_amp":    "amp",                              // timm's --native-amp
		"auto_mix_prec": "amp", "bfloat16_mix_prec": "bf16"} // SpeechBrain's (before its --precision)
	// fullPrecision are switches that train in FP32: --fp32, and mixed
	// precision turned off (--noamp, --no-amp, --disable_amp).
	fullPrecision = set("fp32", "float32", "full_precision", "noamp", "no_amp", "disable_amp", "no_mixed_precision",
		"no_fp16", "disable_fp16")
	valuePrecision = set("precision", "mixed_precision", "dtype", "torch_dtype", "amp_dtype", "policy",
		"dtype_policy", "mixed_precision_dtype", "compute_dtype", "param_dtype", "fp_precision", "train_precision", "training_precision",
		"float_precision")
	// listFlags carry several key=value settings, comma-separated.
	listFlags = set("model_args", "params_override", "cfg_options", "overrides")
)

// perGPUBatchFlag reports whether a flag (normalised) counts a batch per
// GPU: one of perGPUBatchFlags, or a name that says so in its words, a
// batch word with "per" and a device word after it or "micro" before it
// (--per-device-batch, --batch-per-device, --micro-batch); never an
// evaluation's, a rollout's or a log-prob pass's.
func perGPUBatchFlag(nk string) bool {
	if isPerGPUBatch[nk] {
		return true
	}
	words := strings.Split(nk, "_")
	batch, per, micro := false, false, false
	for i, w := range words {
		switch w {
		case "batch", "batchsize", "bs", "bsz":
			batch = true
		case "per":
			per = per || i+1 < len(words) && perUnits[words[i+1]]
		case "micro":
			micro = true
		case "infer", "prob", "forward":
			return false // a pass that does not train: NeMo-Aligner's forward_micro_batch_size
		default:
			if notTrainingSections[w] {
				return false
			}
		}
	}
	return batch && (per || micro)
}

// perUnits are what a per-GPU batch flag counts per.
var perUnits = set("device", "gpu", "rank", "replica", "proc", "process", "worker", "core", "accelerator")

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
	"python3": "python", "python2": "python", "ipython": "python", "torch.distributed.run": "torchrun", "fabric": "python",
	"torch.distributed.launch": "torchrun", "lightning": "python", "composer": "torchrun", "torchpack": "mpirun",
}

// genericPrograms say nothing about the model they train.
var genericPrograms = set("main", "train", "run", "finetune", "fine_tune", "pretrain", "launch", "trainer",
	"run_clm", "run_mlm", "run_glue", "run_translation", "run_summarization", "run_qa", "run_seq2seq",
	"train_net", "tools", "script", "job", "experiment", "entry", "app", "cli", "eval", "evaluate", "test",
	"inference", "infer", "predict", "demo", "benchmark", "bench", "sample", "generate", "sft", "dpo", "pretraining",
	// How a job trains, never what: fsdp_1T, lora-7b, ddp_350m.
	"fsdp", "ddp", "zero", "lora", "qlora", "ppo", "grpo", "rlhf", "ft", "debug", "baseline")

// MaxFeatureLine bounds the length of one logical line read for features
// when the script does not parse as a whole.
const MaxFeatureLine = 1 << 16

// scriptFeatures reads the features of a batch script: #SBATCH options
// already parsed, then every command the script runs, read as bash would
// run it (see shellReader). A script bash cannot parse is read line by line,
// so a half-broken script still yields the commands that parse. The config
// files its launch commands name and did not write are read from given (by
// their jobPath) and, where given lacks them, added to wanted.
// ast, where not nil, is text's parse, made once for the readings of one
// job's files.
func scriptFeatures(text string, sbatch []Option, args, env []string, given map[string]string, wanted *[]string, ast *shellAST) (Features, *submission) {
	var f Features
	found := false
	spread := false // the main launch runs on every node, its count per node
	var launchWords []string
	docs := configDocs{} // each config parsed once, over the rounds of a job's files where ast holds them
	if ast != nil {
		docs = ast.docs
	}
	var downloads []string // the models the job fetches from the hub
	var downloadLine uint
	flagModels := map[string][]string{} // each program's models, as the launches it waits for name them
	onCommand := func(c command) {
		if id, ok := downloadedModel(c.words); ok {
			// Fetching the model is no launch: it says which model the
			// launch uses, where the launch does not (below).
			downloads = append(downloads, id)
			downloadLine = c.line
			return
		}
		cf, l, ok := commandFeatures(c.words, c.workdir, c.env)
		if ok {
			// What the command's own flags say wins over its config files,
			// and they over the program's own defaults.
			lp := newLaunchPaths(c)
			c.files = jobFiles(lp, given, wanted)
			if len(c.files) > 0 {
				if ff, found := fileFeatures(c.words, c.files, docs); found {
					cf = mergeFeatures(cf, ff)
				}
			}
			progPath, text, found := jobProgram(lp, cf.Program, given, wanted)
			// A Hydra application's composed config is its config.
			if hf, ok, refines := hydraFeatures(lp, cf.Program, progPath, text, found, given, wanted, docs); ok {
				if refines {
					// model=pythia69, whose file names EleutherAI/pythia-6.9b.
					cf.Model, cf.ModelFrom = hf.Model, hf.ModelFrom
					cf.copyFrom(hf, "model")
				}
				cf = mergeFeatures(cf, hf)
			}
			if found {
				if pf, found := programFeatures(cf.Program, text, c.words); found {
					cf = mergeFeatures(cf, pf)
				}
			}
		}
		cf.atLine(c.line)
		if ok && cf.ModelFrom == "flag" && !c.background && !slices.Contains(flagModels[cf.Program], cf.Model) {
			flagModels[cf.Program] = append(flagModels[cf.Program], cf.Model)
		}
		switch {
		case !ok:
		case !found || launchScore(cf) > launchScore(f):
			// The command that says most about training is the launch;
			// the others fill in what it leaves unsaid.
			if found {
				cf = mergeFeatures(cf, f)
			}
			f, found = cf, true
			launchWords = c.words
			spread = l.perNode && l.underSrun && l.nodes == 0
		default:
			f = mergeFeatures(f, cf)
		}
	}
	r := newShellReader(onCommand)
	r.given, r.wanted = given, wanted
	r.args = slices.Clone(args) // the script's $1 ...; nil: not known, empty: none
	for _, e := range env[:min(len(env), MaxScriptEnv)] {
		// What the submission exports to the job: MODEL=llama-2-7b sbatch train.sh.
		name, val, ok := strings.Cut(e, "=")
		if !isIdent(name) || strings.HasPrefix(name, "SLURM_") {
			continue
		}
		v := shVar{vals: []string{val}}
		if !ok {
			v = shVar{unknown: true} // set, its value withheld
		}
		r.setVar(name, v)
		r.exported[name] = true
	}
	for k, v := range jobEnv(sbatch) {
		// What Slurm exports to the job from its header: NGPUS=$((SLURM_NNODES * 8)).
		// (Known for expansion; no command reads features from them.)
		r.setVar(k, shVar{vals: []string{v}})
	}
	text = firstLines(text, MaxScriptLines)
	if ast == nil || ast.text != text {
		ast = newShellAST(text)
	}
	if ast.ok {
		r.stmts(ast.stmts)
	} else {
		readLines(r, text)
	}
	if !found && r.hiddenRun != nil {
		// No command of the script's own is a launch: the file it sources
		// last does the work, with the variables set before it.
		onCommand(*r.hiddenRun)
	}
	if ms := flagModels[f.Program]; f.ModelFrom == "flag" && len(ms) > 1 {
		// train.py -M alexnet, then -M googlenet, then -M resnet18: the
		// job runs several models, none of them the job's.
		f.Model, f.ModelFrom = "", ""
		delete(f.From, "model")
		f.Unknown = addUnknown(f.Unknown, "model")
	}
	if spread && f.GPUs > 0 {
		if n, from := nodeCount(Script{Sbatch: sbatch}); n > 1 {
			f.GPUs *= n
			f.note("gpus", f.From["gpus"]+" × "+from)
		}
	}
	if id := oneDownload(downloads); id != "" && found && !slices.Contains(f.Unknown, "model") &&
		modelRank[f.ModelFrom] <= modelRank["job_name"] {
		// huggingface-cli download lihzha/LAP-3B, then a launch that names
		// no model (or only a stand-in, a job's name or a comment's): the
		// model fetched is the one it runs. (A job that only downloads runs
		// no model.)
		f.Model, f.ModelFrom = id, "download"
		f.note("model", "huggingface-cli download")
		f.From["model"] = "line " + strconv.FormatUint(uint64(downloadLine), 10) + ": " + f.From["model"]
	}
	if found && (f.Model == "" || f.ModelFrom == "path") && !slices.Contains(f.Unknown, "model") {
		// MODEL=$2 ... --sae-dir artifacts/saes/$MODEL: a variable the
		// script names for its model, set to a known one, though the
		// launch is not given it as an option.
		if name, m := scriptModelVar(r.vars, text); m != "" {
			f.Model, f.ModelFrom = m, "env"
			f.note("model", "$"+name+", set in the script")
		}
	}
	sbatchFeatures(&f, sbatch)
	if f.GPUType == "" && f.GPUs > 0 {
		// Nothing Slurm reads names the type; the user's own words may.
		if typ, from := namedGPUType(text, f.JobName); typ != "" {
			f.GPUType = typ
			f.note("gpu_type", from)
		}
	}
	if f.BatchSize == 0 && found {
		// MICRO_BATCH_SIZE=4 that the launch's batch is computed from
		// (--batch-size=$((MICRO_BATCH_SIZE * NUM_GPUS)), NUM_GPUS counted
		// at run time): a variable the script names for a per-GPU batch.
		if name, v := perGPUBatchVar(r.vars); name != "" {
			f.BatchSize, f.BatchKey = v, normFlag(name)
			f.note("batch_size", "$"+name)
		}
	}
	if f.BatchSize == 0 && found {
		// BATCH_SIZE=128 ... python bert-train.py $NODES $BATCH_SIZE: the
		// variable's name says what the program's positional argument is.
		if name, v := positionalBatchVar(r.vars, launchWords); name != "" {
			f.BatchSize, f.BatchKey = v, normFlag(name)
			f.note("batch_size", "$"+name+", a positional argument")
		}
	}
	if f.BatchSize > 0 && f.GPUs > 1 && found && f.BatchKey != "" && !perGPUBatchFlag(f.BatchKey) {
		// BATCH_SIZE_PER_GPU=128; --batch-size=$((BATCH_SIZE_PER_GPU *
		// NUM_GPUS)) on 4 GPUs: the launch is given the batch of all of
		// them, and the variable says each one's.
		if name, v := perGPUBatchVar(r.vars); name != "" && f.BatchSize == v*float64(f.GPUs) {
			f.BatchSize, f.BatchKey = v, normFlag(name)
			f.note("batch_size", "$"+name+" ("+f.From["batch_size"]+" is it × the GPUs)")
		}
	}
	if f.BatchSize > 0 && f.GPUs > 1 && f.BatchKey != "" && !perGPUBatchFlag(f.BatchKey) {
		// "# Batch-size will be splitted over all gpus": the script says
		// its batch flag is the whole job's (a batch divided already, as
		// Ultralytics' batch= is, has no BatchKey).
		if line := batchSplitSaid(text); line > 0 {
			if per := f.BatchSize / float64(f.GPUs); per >= 1 && per == math.Trunc(per) {
				f.BatchSize = per
				f.note("batch_size", f.From["batch_size"]+" / GPUs (line "+strconv.Itoa(line)+" says it is split over them)")
			}
		}
	}
	if f.BatchSize == 0 && f.GlobalBatchSize > 0 && f.GPUs > 0 && f.Layers == 0 && !(f.SeqLen > 0 && f.GlobalBatchSize >= f.SeqLen) {
		// DiT's --global-batch-size 256 on 4 GPUs is 64 a GPU: the global
		// batch over the data-parallel ranks and the accumulation steps.
		// Not for Megatron's shapes, whose tensor and pipeline splits are
		// not read, nor for a batch counted in tokens (OLMo-core's
		// --global_batch_size=$((SEQ_LEN * 32)): a sequence's length or
		// more).
		per := f.GlobalBatchSize / float64(f.GPUs) / max(f.GradAccum, 1)
		if per >= 1 && per == math.Trunc(per) {
			f.BatchSize = per
			f.note("batch_size", f.From["global_batch_size"]+" / GPUs")
		}
	}
	// The job name names the model when the commands do not, or name it
	// less well (a family word, a program's name, llama2 where the job says
	// Llama-2-13b); a family word alone (qwen-lora, granite_ft) names none,
	// where one with its version (train_pi0) does; a generation alone
	// (qwen1.5, llama3.1) does not.
	// The output file's name is read so too, after the job's (#SBATCH -o
	// llama2-pendulum.out beside a job named pendulum-llama), and then the
	// names the launch gives its run (runNames).
	byName := func(name, from string) {
		if m := familyModel(withoutRunCounter(name)); namesAModel(m) && f.ModelFrom != "job_name" {
			weak := f.Model == "" || f.ModelFrom == "path" || f.ModelFrom == "program" || bareFamily(f.Model)
			if weak && (f.ModelFrom != "program" || hasSize(m) && !hasSize(f.Model)) || sizes(m, f.Model) {
				f.Model, f.ModelFrom = m, "job_name"
				f.note("model", from)
			}
		}
	}
	byName(f.JobName, jobNameSource)
	byName(outputName(sbatch), "#SBATCH --output")
	if f.ModelFrom != "job_name" && (f.Model == "" || !hasSize(f.Model)) {
		for _, rn := range runNames(launchWords) {
			byName(rn[1], rn[0]) // and the run's own (--wandb_project xception_hyperband)
		}
	}
	// The script's prose, read once for the two readings below and only
	// where one of them is made.
	var prose []proseLine
	proseRead := false
	readProse := func() []proseLine {
		if !proseRead {
			prose, proseRead = proseLines(text), true
		}
		return prose
	}
	// A comment's prose names the model where nothing else does, or says
	// which one a family word is: "# LoRA fine-tune Qwen3-VL-2B".
	if weak := f.Model == "" || f.ModelFrom == "path" || bareFamily(f.Model); weak || !hasSize(f.Model) {
		// (The comments are read only where they could say more.)
		if m, line := commentModel(readProse()); m != "" && (weak && !otherFamily(f, m) || sizes(m, f.Model)) {
			f.Model, f.ModelFrom = m, "comment"
			f.note("model", "comment, line "+strconv.FormatUint(uint64(line), 10))
		}
	}
	if f.Model == "" || f.ModelFrom == "path" {
		// The prose names the work by a name no family's: "# Kronos
		// finetuning", "# fine-tune cellpose-SAM on TissueNet". It stands
		// in for the model, over a job's or a directory's name.
		if w, line := commentWork(readProse()); w != "" && w != f.Model && !slices.Contains(f.Unknown, "model") {
			f.Model, f.ModelFrom = w, "path"
			f.note("model", "comment, line "+strconv.FormatUint(uint64(line), 10))
		}
	}
	if f.Model == "" || f.ModelFrom == "path" && (stemStandIn(f) || dirStandIn(f) || packageStandIn(f) && familyWord(workloadName(f.JobName))) &&
		!strings.Contains(strings.ToLower(f.JobName), f.Model) {
		// Nothing names a model: the job's name names its workload
		// (train_mdlm, drq_breakout_all, uORF), and says more of it than
		// the program's file name (ddpm for unet.py, GWEN for
		// train_gnn.py) unless it agrees (train_controlnet.py in a job
		// named surgery_controlnet_v2).
		// A job's name cut short of the program's (speechtoken for
		// train_speechtokenizer.py) names the same work, less well.
		if w := workloadName(f.JobName); w != "" && !(f.Model != "" && len(w) >= 4 && strings.HasPrefix(f.Model, strings.ToLower(w))) {
			f.Model, f.ModelFrom = w, "path"
			f.note("model", jobNameSource)
		}
	} else if w := workloadName(f.JobName); f.ModelFrom == "path" && w != "" && len(w) > len(f.Model)+1 &&
		strings.HasSuffix(w, f.Model) && !strings.ContainsAny(w, "-_.") && f.From["model"] != jobNameSource {
		// finetune_bert/finetune.py in a job named FinetuneSwissBert: the
		// job's word is the stand-in's, named more closely.
		f.Model = w
		f.note("model", jobNameSource)
	} else if f.ModelFrom == "path" && w != "" &&
		(strings.HasSuffix(f.Model, "_"+w) || strings.HasSuffix(f.Model, "-"+w)) {
		// The job named spherenet runs in GRPN_adam_spherenet: the word the
		// two share, the name's head, is the work's name (open_whisper is
		// whisper; avp_vit stays whole).
		f.Model = w
		f.note("model", jobNameSource)
	} else if f.ModelFrom == "path" && w != "" && w != f.Model && f.From["model"] != jobNameSource &&
		!strings.Contains(f.From["model"], "--") && !strings.Contains(f.Model, w) && argsName(launchWords, w) {
		// The job's name and the launch's arguments agree on a word that
		// the directory or module standing in does not hold: a job named
		// ddppo given pointnav/ddppo_pointnav.yaml, in habitat_baselines.
		f.Model = w
		f.note("model", jobNameSource+" and the launch's arguments")
	}
	if f.ConfigStandIn != "" && (f.Model == "" || f.ModelFrom == "path" && progDirStandIn(f)) {
		// Nothing else names the work: the config's name does
		// (fastspeech2.yaml), and says more of it than the directory the
		// program is in (neuralhydrology_py/train.py configs/lstm/lstm_combined.yml).
		f.Model, f.ModelFrom = f.ConfigStandIn, "path"
		f.note("model", f.ConfigStandInFrom)
	}
	if w := workloadName(r.activated); envStandsIn(f, w, r.activated, launchWords) {
		f.Model, f.ModelFrom = w, "path"
		f.note("model", "activate "+r.activated)
	}
	f.ConfigStandIn, f.ConfigStandInFrom, f.BatchKey, f.ModelPlace = "", "", "", Place{}
	if f.Layers > 0 && f.Hidden > 0 && f.Model != "" && !hasSize(f.Model) {
		// --num-layers 24 --hidden-size 1024 of a job named gpt2: its shape
		// says which GPT-2.
		if m := shapeName(f.Model, f.Layers, f.Hidden); m != "" && m != f.Model {
			f.Model = m
			f.note("model", f.From["model"]+" and its shape")
		}
	}
	resolveUnknown(&f)
	return f, r.submitted
}

// envStandsIn reports whether w, the work the environment env a job
// activates is named for (conda activate nanodet), stands in for its model
// as read so far (f): where nothing else names one, and over another
// stand-in that names no model family where w names one (dinov2 for a job
// named hcc, clip for clip_for_medical_caption) or the job's name says w
// too (pacformer, in a directory named PACLock), or the launch's arguments
// do (atlasnet, given --dir_name .../atlasnet_autoencoder_25_squares in a
// job named hex).
func envStandsIn(f Features, w, env string, launchWords []string) bool {
	switch {
	case w == "" || w == f.Model || slices.Contains(f.Unknown, "model"):
		return false
	case f.Model == "":
		return true
	case f.ModelFrom != "path" || familyWord(f.Model) || strings.HasPrefix(f.From["model"], "comment"):
		return false // a claim, or a stand-in naming a family or the prose's
	case archWords[f.Model] && strings.Contains(programStem(f.Program), f.Model):
		return false // a program named for a kind of network (main_MLP.py)
	case !strings.HasPrefix(f.Model, w) && strings.Contains(f.Model, strings.TrimRight(w, "0123456789.")):
		return false // a variant of the environment's family: meg-mamba beside mamba3
	case familyWord(w) && !llamaFactory(env):
		return true
	case argsName(launchWords, w) && !strings.Contains(strings.ToLower(f.Model), w):
		return true
	case f.Program != "" && w == strings.ToLower(trimWorkWords(programStem(f.Program))) && f.From["model"] == jobNameSource:
		return true // conda activate cnn; python train_cnn.py: the two agree over a job named ssci
	}
	// Not over a directory inside the project both name (hifi_gan, in
	// daft-exprt).
	from := f.From["model"]
	return from != jobNameSource && w == workloadName(f.JobName) && !strings.Contains(strings.ToLower(from), w)
}

// activatedEnv is the name of the environment a command activates: conda's
// (conda activate llava, source activate llava, mamba and micromamba's) or
// a virtual environment's directory (source ~/envs/llava/bin/activate);
// "" for any other command, a hidden name and a generic one (.venv, env).
func activatedEnv(words []string) string {
	if len(words) < 2 {
		return ""
	}
	name := ""
	switch words[0] {
	case "conda", "mamba", "micromamba":
		if words[1] == "activate" {
			for _, w := range words[2:] {
				if !strings.HasPrefix(w, "-") {
					name = w
					break
				}
			}
		}
	case "source", ".":
		dir, ok := strings.CutSuffix(words[1], "/bin/activate")
		switch {
		case (words[1] == "activate" || ok) && len(words) > 2 && !strings.HasPrefix(words[2], "-"):
			name = words[2] // conda's activate script, given the environment: source ~/mamba/bin/activate torch-2.10
		case ok:
			name = dir
		}
	}
	name = path.Base(strings.TrimRight(name, "/"))
	if name == "." || name == "/" || strings.HasPrefix(name, ".") || unexpanded(name) || envDirs[strings.ToLower(name)] {
		return ""
	}
	return name
}

// llamaFactory reports whether an environment is named for LLaMA-Factory
// (llama_factory, LLaMA-Factory, llamafac), a trainer of many families.
func llamaFactory(env string) bool {
	return strings.HasPrefix(squashSeps.Replace(strings.ToLower(env)), "llamafac")
}

// envDirs are where environments are kept, or their installers, not an
// environment's own name: source ~/miniconda3/bin/activate, venv/bin/activate.
var envDirs = set("venv", "env", "envs", "virtualenv", "virtualenvs", "miniconda", "miniconda3", "anaconda", "anaconda3",
	"miniforge", "miniforge3", "mambaforge", "conda", "micromamba", "python", "python3", "pyenv", "path", "base")

// argsName reports whether a value the launch is given (after its program;
// not a flag's name, nor a run's own name, seed, data set or environment),
// split at '/', '_', '-', '.' and '=', is name, case aside: ddppo in
// --config-name=pointnav/ddppo_pointnav.yaml. Only a name of five or more
// characters, four of them letters, is taken so (gen1, ocr0 and moe name a
// data set, a run or a method as often as a model).
func argsName(words []string, name string) bool {
	if len(name) < 5 || lowerLetters(name) < 4 || variantWords[name] {
		return false
	}
	prog := programIndex(words)
	if prog >= len(words) {
		return false
	}
	names := func(v string) bool {
		for _, t := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune("/_-.=", r) }) {
			if strings.EqualFold(t, name) {
				return true
			}
		}
		return false
	}
	args := words[prog+1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			k, v, eq := strings.Cut(a, "=")
			nk := normFlag(k)
			varying := runVarying[nk] || dataFlag(nk) || strings.HasPrefix(nk, "env")
			if !eq && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				v, i = args[i+1], i+1
			}
			if !varying && names(v) {
				return true
			}
			continue
		}
		if k, v, eq := strings.Cut(a, "="); !eq && names(a) || eq && !runVarying[normFlag(hydraKey(k))] && names(v) {
			return true // a positional value, or a Hydra override's
		}
	}
	return false
}

// stemStandIn reports whether the model standing in is the program's file
// name (train_gnn.py is gnn), not a package's, a directory's or a flag's.
func stemStandIn(f Features) bool {
	if (bareFamily(f.Model) || archWords[f.Model]) && programStem(f.Program) != f.Model {
		// A training program named for a family (qwen_lora_amr.py) says
		// more than a job's word; a network's own file (unet.py) less.
		return false
	}
	return !isModuleProgram(f.Program) && f.Model == strings.ToLower(trimWorkWords(rawStem(f.Program)))
}

// batchSplit is what a comment or a logged message says of a batch its
// program divides among the job's GPUs: "split over all gpus", "divided
// across GPUs", "the total over both GPUs".
var batchSplit = regexp.MustCompile(`\b((split|splitted|divided|distributed|sharded)( evenly)?|total|summed) (over|across|among|between|for|of) (all |both |the )?(\w+ )?(gpus|devices|ranks|processes|workers)\b`)

// batchSplitSaid returns the line of a script's comment or echo that says
// its batch is divided among the GPUs, or 0.
func batchSplitSaid(text string) int {
	n := 0
	for line := range scriptLines(text) {
		n++
		t := strings.TrimSpace(line)
		if !(strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "#SBATCH") && !strings.HasPrefix(t, "#!") || strings.HasPrefix(t, "echo ")) {
			continue
		}
		t = strings.ToLower(t)
		if strings.Contains(t, "batch") && batchSplit.MatchString(t) {
			return n
		}
	}
	return 0
}

// dirStandIn reports whether the model standing in is the name of the
// directory the job runs in (cd ~/workspace/cil-visionavengers-depth): a
// clone's name, which says less of the work than the job's own name
// (unet-baseline). Not a directory under models/ (src/models/CGKN/KMG),
// nor one on a path the job's name is on: the project the job names, or
// a part of it (cd daft-exprt/hifi_gan in a job named daft-exprt, cd
// avp_vit in one named avp).
func dirStandIn(f Features) bool {
	if f.ModelPlace.Kind != WorkDir || f.ModelPlace.Path == "" {
		return false
	}
	lower := strings.ToLower(f.ModelPlace.Path)
	if slices.ContainsFunc(strings.Split(lower, "/"), func(d string) bool { return modelDirs[d] }) {
		return false
	}
	if namesAModel(familyModel(f.Model)) {
		return false // cd blip2: a directory named for a versioned or sized model
	}
	w := workloadName(f.JobName)
	return w != "" && !strings.Contains(squashSeps.Replace(lower), squashSeps.Replace(w))
}

// packageStandIn reports whether the model standing in is a python
// module's package (-m the_well.benchmark.train is well): the project's
// name, which says less of the work than a job named for the family it
// trains (convnext_full_run_test).
func packageStandIn(f Features) bool {
	return f.ModelPlace.Kind == ProgramName && strings.HasPrefix(f.ModelPlace.Path, "-m ")
}

// progDirStandIn reports whether the workload standing in for the model is
// the name of the directory the program is in, not the program's own.
func progDirStandIn(f Features) bool {
	return f.ModelPlace.Kind == ProgramDir && !strings.Contains(programStem(f.Program), strings.ToLower(f.Model))
}

// squashSeps writes a name without its word separators.
var squashSeps = strings.NewReplacer("-", "", "_", "")

// isModuleProgram reports whether a program is a python module (-m
// src.train, or torchrun's poet_2.training.train) rather than a file.
func isModuleProgram(program string) bool {
	ext := path.Ext(program)
	return strings.HasPrefix(program, "-m ") || ext != "" && !strings.Contains(program, "/") &&
		!slices.Contains([]string{".py", ".sh", ".bash", ".pl", ".r", ".jl", ".lua", ".exe", ".x", ".bin"}, strings.ToLower(ext))
}

// jobEnv is the part of the environment Slurm gives a batch job that its
// #SBATCH header decides: node (nodeCount), task, CPU and GPU counts as plain numbers
// (SLURM_NNODES, SLURM_NTASKS, SLURM_NTASKS_PER_NODE, SLURM_CPUS_PER_TASK,
// SLURM_GPUS_ON_NODE, SLURM_GPUS_PER_NODE, SLURM_GPUS). What the header
// leaves to sbatch's command line stays unknown.
func jobEnv(sbatch []Option) map[string]string {
	s := Script{Sbatch: sbatch}
	env := map[string]string{}
	num := func(keys ...string) (string, bool) {
		n := headerCount(s, keys...)
		return strconv.Itoa(n), n > 0
	}
	if n, _ := nodeCount(s); n > 0 {
		// --nodes, or the hosts --nodelist names: what headerGPUs multiplies by.
		env["SLURM_NNODES"], env["SLURM_JOB_NUM_NODES"] = strconv.Itoa(n), strconv.Itoa(n)
	}
	if v, ok := num("--ntasks", "-n"); ok {
		env["SLURM_NTASKS"], env["SLURM_NPROCS"] = v, v
	}
	if v, ok := num("--ntasks-per-node"); ok {
		env["SLURM_NTASKS_PER_NODE"] = v
	}
	if v, ok := num("--cpus-per-task", "-c"); ok {
		env["SLURM_CPUS_PER_TASK"] = v
	}
	if v, ok := s.SbatchValue("--gpus-per-node"); ok {
		if _, c := splitTypedCount(v); c > 0 {
			env["SLURM_GPUS_PER_NODE"], env["SLURM_GPUS_ON_NODE"] = strconv.Itoa(c), strconv.Itoa(c)
		}
	} else if g, ok := s.gresGPU(); ok && g.Count > 0 {
		env["SLURM_GPUS_ON_NODE"] = strconv.FormatInt(g.Count, 10)
	}
	if v, ok := s.SbatchValue("--gpus", "-G"); ok {
		if _, c := splitTypedCount(v); c > 0 {
			env["SLURM_GPUS"] = strconv.Itoa(c)
		}
	}
	return env
}

// maxJoin is how many lines a construct that does not parse alone (an
// array over several lines, an if block) may take in readLines.
const maxJoin = 8

// readLines reads a script that does not parse as a whole: line by line,
// a line that does not parse alone joined with up to maxJoin-1 following
// ones ("args=(", "if ...; then"), a line that never parses skipped.
func readLines(r *shellReader, text string) {
	r.noLines = true
	var lines []string
	for line := range logicalLines(text) {
		lines = append(lines, line)
	}
	for i := 0; i < len(lines); i++ {
		chunk := lines[i]
		read := false
		for j := i; j < len(lines) && j < i+maxJoin; j++ {
			if j > i {
				chunk += "\n" + lines[j]
			}
			if !r.spend(len(chunk)/64 + 1) {
				return
			}
			if stmts, ok := parseShell(chunk); ok {
				r.stmts(stmts)
				i, read = j, true
				break
			}
		}
		if read || !r.spend(len(lines[i])/32+1) {
			continue
		}
		// A line whose quote is never closed (--impl='xllm at the end of a
		// launch): read as if it were closed at the line's end.
		for _, q := range []string{"'", `"`} {
			if stmts, ok := parseShell(lines[i] + q); ok {
				r.stmts(stmts)
				break
			}
		}
	}
}

// firstLines returns text cut after n lines.
func firstLines(text string, n int) string {
	off := 0
	for range n {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return text
		}
		off += i + 1
	}
	return text[:off]
}

// logicalLines yields lines with backslash continuations joined, each at
// most MaxFeatureLine long.
func logicalLines(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
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
			if len(t) > MaxFeatureLine {
				t = t[:MaxFeatureLine]
			}
			if t != "" && !strings.HasPrefix(t, "#") && !yield(t) {
				return
			}
		}
	}
}

// launchScore says how much a command looks like the job's training launch
// rather than a step before it (preparing data, a smoke test).
func launchScore(f Features) int {
	s := 0
	switch f.Launcher {
	case "torchrun", "deepspeed", "accelerate", "srun", "mpirun", "horovodrun":
		s += 3
	}
	if f.ModelFrom == "flag" || f.ModelFrom == "config" {
		s += 2
	}
	if f.BatchSize > 0 || f.GlobalBatchSize > 0 {
		s += 2
	}
	if f.Precision != "" || f.GPUs > 0 || f.Steps > 0 || f.Epochs > 0 {
		s++
	}
	if trainingProgram(f.Program) {
		s++ // train.py after data/prepare.py, llamafactory-cli train: the training program is the launch
	}
	stem := programStem(f.Program)
	words := strings.FieldsFunc(stem, func(r rune) bool { return r == '_' || r == '-' })
	if evalPrograms[stem] || slices.ContainsFunc(words, func(w string) bool { return evalPrograms[w] }) {
		s -= 2 // main.py then eval.py over its checkpoint: the training is the launch
	}
	if slices.ContainsFunc(words, func(w string) bool { return prepPrograms[w] }) {
		s-- // pytorch_info_cuda.py, smiles_preprocessing.py, then the model's program
	}
	return s
}

// trainingProgram reports whether a program's name says it trains:
// train.py, finetune_lora.py, llamafactory-cli train, run_sft.py.
func trainingProgram(program string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(program), func(r rune) bool { return r == ' ' || r == '.' }) {
		if strings.HasPrefix(w, "train") || strings.HasPrefix(w, "finetune") || strings.HasPrefix(w, "pretrain") || w == "sft" {
			return true
		}
	}
	return false
}

// prepPrograms name programs that check the machine or prepare the data
// before the training.
var prepPrograms = set("info", "check", "checks", "sanity", "prepare", "prep", "preprocess", "preprocessing",
	"download", "convert", "tokenize", "setup", "install")

// evalPrograms name programs that evaluate or sample from a model rather
// than train it.
var evalPrograms = set("eval", "evaluate", "evaluation", "test", "inference", "infer", "predict", "sample", "sampling",
	"generate", "score", "validate", "benchmark")

// modelRank orders where a model name came from: a flag says it best, a
// config file's or the job's name next, the program's path least.
var modelRank = map[string]int{"flag": 6, "config": 5, "env": 4, "default": 3, "job_name": 2, "program": 2, "path": 1}

// mergeFeatures fills what the first launch command left unsaid from a later one.
func mergeFeatures(a, b Features) Features {
	// A stand-in names its own command's work (preprocess_csv.py), never
	// another command's.
	if b.Model != "" && b.ModelFrom != "path" && modelRank[b.ModelFrom] > modelRank[a.ModelFrom] {
		a.Model, a.ModelFrom = b.Model, b.ModelFrom
		a.copyFrom(b, "model")
	}
	fill := func(x *float64, y float64, name string) {
		if *x == 0 && y != 0 {
			*x = y
			a.copyFrom(b, name)
		}
	}
	if a.BatchSize == 0 && b.BatchSize != 0 {
		a.BatchKey = b.BatchKey
	}
	fill(&a.BatchSize, b.BatchSize, "batch_size")
	fill(&a.GlobalBatchSize, b.GlobalBatchSize, "global_batch_size")
	fill(&a.SeqLen, b.SeqLen, "seq_len")
	fill(&a.ImageSize, b.ImageSize, "image_size")
	fill(&a.GradAccum, b.GradAccum, "grad_accum")
	if a.Params == 0 && b.Params != 0 {
		a.Params, a.ParamsFrom = b.Params, b.ParamsFrom
		a.copyFrom(b, "params")
	}
	if a.Precision == "" && b.Precision != "" {
		a.Precision = b.Precision
		a.copyFrom(b, "precision")
	}
	if a.ZeROStage == 0 && b.ZeROStage != 0 {
		a.ZeROStage = b.ZeROStage
		a.copyFrom(b, "zero_stage")
	}
	for _, u := range b.Unknown {
		a.Unknown = addUnknown(a.Unknown, u)
	}
	return a
}

func addUnknown(u []string, name string) []string {
	if slices.Contains(u, name) {
		return u
	}
	return append(u, name)
}

// perGPUBatchVar returns a variable of the script named for a per-GPU
// batch (MICRO_BATCH_SIZE, BATCH_SIZE_PER_GPU: the names perGPUBatchFlags
// give, in their order) that holds one known number, and the number.
func perGPUBatchVar(vars map[string]shVar) (string, float64) {
	byFlag := map[string]string{}
	for name, v := range vars {
		if nk := normFlag(name); perGPUBatchFlag(nk) && !v.unknown && !v.array && len(v.vals) == 1 && len(v.alts) == 0 {
			if prev, ok := byFlag[nk]; !ok || name < prev {
				byFlag[nk] = name
			}
		}
	}
	for _, nk := range perGPUBatchFlags {
		if name, ok := byFlag[nk]; ok {
			if n, err := strconv.ParseFloat(strings.TrimSpace(vars[name].vals[0]), 64); err == nil && n >= 1 && n < 1e6 && n == math.Trunc(n) {
				return name, n
			}
		}
	}
	return "", 0
}

// withoutRunCounter is a job's name without the run's counter it ends in
// after a family word alone: train_bert_1 is bert's first run, gpt_0 a
// GPT's; a version is written otherwise (llama-3, phi-1, qwen2_5).
func withoutRunCounter(name string) string {
	head, n, ok := cutLast(name, '_')
	if !ok || n != "0" && n != "1" {
		return name
	}
	if _, fam, ok := cutLast(head, '_'); ok && bareFamily(strings.ToLower(fam)) || bareFamily(strings.ToLower(head)) {
		return head
	}
	return name
}

// cutLast cuts s around the last sep.
func cutLast(s string, sep byte) (before, after string, found bool) {
	if i := strings.LastIndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// positionalBatchVar returns the batch-named variable (BATCH_SIZE, BS)
// whose number the launch is given as a positional argument, and the
// number: only where one such variable holds it, no other variable the
// script set holds the same number, and it stands once among the launch's
// positional words.
func positionalBatchVar(vars map[string]shVar, launch []string) (string, float64) {
	name, val := "", ""
	for k, v := range vars {
		if v.unknown || v.array || len(v.vals) != 1 || len(v.alts) > 0 || !isNumber(v.vals[0]) {
			continue
		}
		if nk := normFlag(k); batchFlags[nk] || perGPUBatchFlag(nk) {
			if name != "" {
				return "", 0 // two batch variables: which one is not said
			}
			name, val = k, v.vals[0]
		}
	}
	if name == "" {
		return "", 0
	}
	for k, v := range vars {
		if k != name && len(v.vals) == 1 && v.vals[0] == val {
			return "", 0 // NODES=2 BATCH_SIZE=2: the word could be either
		}
	}
	n := 0
	for i, w := range launch {
		if w == val && i > 0 && !strings.HasPrefix(launch[i-1], "-") {
			n++
		}
	}
	b, err := strconv.ParseFloat(val, 64)
	if n != 1 || err != nil || b < 1 || b >= 1e6 || b != math.Trunc(b) {
		return "", 0
	}
	return name, b
}

// resolveUnknown drops from f.Unknown what another command or the #SBATCH
// header said after all.
func resolveUnknown(f *Features) {
	f.Unknown = slices.DeleteFunc(f.Unknown, func(n string) bool {
		switch n {
		case "model":
			return f.Model != ""
		case "batch_size":
			return f.BatchSize != 0
		case "precision":
			return f.Precision != ""
		case "gpus":
			return f.GPUs != 0
		}
		return false
	})
	if len(f.Unknown) == 0 {
		f.Unknown = nil
	}
}

// ShellName reports whether s is a shell variable's name: a letter or
// underscore, then letters, digits and underscores (MODEL, hf_home2).
func ShellName(s string) bool { return isIdent(s) }

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) || i == 0 && s[i] >= '0' && s[i] <= '9' {
			return false
		}
	}
	return true
}

// normFlag turns "--per-device-train-batch-size" into "per_device_train_batch_size".
func normFlag(w string) string {
	w = strings.TrimLeft(w, "-")
	if len(w) == 1 {
		return w // -N and -n differ
	}
	return strings.ReplaceAll(strings.ToLower(w), "-", "_")
}

// commandFeatures reads one simple command: wrappers and launchers with
// their options (see peel), then the program and its arguments. It reports
// false for commands that launch nothing recognisable (module load, mkdir,
// nvidia-smi, a container running a shell script). l is the launch peeled
// from its words: the wrappers and launchers before the program.
func commandFeatures(words []string, workdir string, env map[string]string) (Features, launch, bool) {
	words = moduleConsoles(words)
	l := peel(words)
	if ep := imageEntrypoint(words, l.prog); ep != nil {
		// apptainer run docker://vllm/vllm-openai --model X: the image's
		// own program is given the options.
		words = slices.Concat(words[:l.prog], ep, words[l.prog:])
		l = peel(words)
	}
	f := Features{Launcher: l.launcher, ZeROStage: l.zero, Precision: l.precision}
	f.note("zero_stage", l.zeroFrom)
	f.note("precision", l.precisionFrom)
	prog := l.prog
	if prog < len(words) && l.module == "" && isShellName(words[prog]) {
		// bash train.sh: the script stands for the program.
		prog = shellScript(words, prog)
	}
	bareScript := false
	args := words[min(prog+1, len(words)):]
	subs, known := 0, false // a console script's subcommands; whether consoleScripts names it
	if prog < len(words) {
		subs = consoleScripts[path.Base(words[prog])]
		if known = subs != 0; !known && l.launcher == "" {
			subs = trainingConsole(words[prog], args)
		}
	}
	if subs != 0 {
		// axolotl train cfg.yml, litgpt finetune_lora MODEL, vllm serve MODEL,
		// nequip-train config.yaml, uv run hatelens train cfg.yaml.
		name := path.Base(words[prog])
		for subs > 0 && len(args) > 0 && isSubcommand(args[0]) {
			name += " " + args[0]
			args, subs = args[1:], subs-1
		}
		if positionalModel[path.Base(words[prog])] && len(args) > 0 && !strings.HasPrefix(args[0], "-") &&
			!strings.Contains(args[0], "=") && !isConfigFile(args[0]) {
			m := args[0]
			if path.Base(words[prog]) == "ollama" {
				m = ollamaName(m, true)
			}
			args = append([]string{"--model", m}, args[1:]...) // the model, named first
		}
		if f.Launcher == "" {
			f.Launcher = "python"
		}
		f.Program = name
		f = finishCommand(argFeatures(f, args, l), l, "", workdir, env)
		if n := ultralyticsDevices(name, args); n > 1 && f.BatchSize >= float64(n) && math.Mod(f.BatchSize, float64(n)) == 0 {
			// yolo detect train batch=16 device=0,1,2,3: Ultralytics splits
			// the batch over the devices it lists.
			// The batch is no longer the flag's: BatchKey is cleared.
			f.BatchSize, f.BatchKey = f.BatchSize/float64(n), ""
			f.note("batch_size", f.From["batch_size"]+" / device="+strconv.Itoa(n)+" GPUs")
		}
		if f.ModelFrom == "path" || f.ModelFrom == "program" {
			// The console script's own name says nothing of the model.
			f.Model, f.ModelFrom = "", ""
			delete(f.From, "model")
		}
		if w := trimWorkWords(strings.ToLower(path.Base(words[prog]))); f.Model == "" && !known && w != "" {
			// mace_run_train: a package's own training command names its
			// work (instanovo diffusion train: the command, not what its
			// subcommands do).
			f.Model, f.ModelFrom = w, "path"
			f.noteModelPlace(Place{ProgramName, name})
		}
		if m := consoleModel[strings.ToLower(path.Base(words[prog]))]; m != "" && f.Model == "" {
			// nnUNetv2_train DATASET 3d_fullres FOLD: the program trains one model.
			f.Model, f.ModelFrom = m, "program"
			f.note("model", "program "+path.Base(words[prog]))
		}
		return f, l, true
	}
	if f.Launcher == "" {
		// A bare program: ./train.py, or a console script named by a wrapper.
		switch {
		case prog < len(words) && strings.HasSuffix(words[prog], ".py"):
			f.Launcher = "python"
		case prog < len(words) && strings.HasSuffix(words[prog], ".sh"):
			bareScript = true // ./distributed_train.sh 4 --model resnet50: read if it names the work
		default:
			return f, l, false
		}
	}
	// python reading its code inline (python - <<EOF, python -c) has had
	// the code turned into flags (pythonArgs): read them if they say anything.
	inline := prog < len(words) && words[prog] == "-" && len(args) > 0
	if prog >= len(words) || words[prog] == "-" && !inline || l.module == "" && tools[path.Base(words[prog])] ||
		setupModules[l.module] || l.module == "" && setupPrograms[path.Base(words[prog])] || stagingScript(words[prog]) {
		// No program (python -c), python reading stdin, srun nvidia-smi,
		// python -m pip install, python setup.py: nothing trains here.
		return f, l, false
	}
	f.Program = path.Base(words[prog])
	if unexpanded(words[prog]) && unexpanded(f.Program) {
		// $DIR/pretrain_gpt.py still names its program; $PROG does not.
		f.Program = words[prog]
		f.Unknown = addUnknown(f.Unknown, "program")
	}
	if l.gpusUnknown {
		f.Unknown = addUnknown(f.Unknown, "gpus")
	}
	if l.module != "" {
		f.Program = "-m " + l.module
	}
	progDir := ""
	if strings.Contains(words[prog], "/") {
		// $HOME/re-dreamerv3/dreamerv3/main.py: the directories after what
		// is not known are still the program's.
		progDir = knownTail(path.Dir(words[prog]))
	}
	f = finishCommand(argFeatures(f, args, l), l, progDir, workdir, env)
	if m := subcommandModel(args); m != "" && (f.Model == "" || f.ModelFrom == "path") {
		// python src/main.py train_mamba --lr 1e-3: the program's
		// subcommand trains a family's model.
		f.Model, f.ModelFrom = m, "path"
		f.note("model", "argument "+args[0])
	}
	namedPath := f.ModelFrom == "path" && familyOf(f.Model) != "" && namesAModel(f.Model) && (hasSize(f.Model) || hasVariant(f.Model)) ||
		bareScript && f.ModelFrom == "path" && bareFamily(f.Model) && f.ModelPlace == Place{ProgramName, f.Program} // bash bert.sh: the family its name trains
	if (bareScript || inline) && (f.Model == "" || f.ModelFrom == "path" && !namedPath || f.ModelFrom == "program" && !hasSize(f.Model) && !hasVariant(f.Model)) &&
		f.BatchSize == 0 && f.Precision == "" {
		// A shell script or inline code that names no model, batch or
		// precision, in its arguments, the variables it gets, its own
		// name (ds_pretrain_gpt_1.3B.sh) or its directory's
		// (scripts/roberta-large/finetune.sh), is not read as the launch.
		return Features{}, l, false
	}
	return f, l, true
}

// knownTail is a path from the first directory after its last unknown one
// ($HOME/proj/src: proj/src), the path itself when all of it is known, and
// "" when its last directory is not.
func knownTail(dir string) string {
	parts := strings.Split(dir, "/")
	for i := len(parts) - 1; i >= 0; i-- {
		if unexpanded(parts[i]) {
			return strings.Join(parts[i+1:], "/")
		}
	}
	return dir
}

// finishCommand fills what a command's arguments left unsaid from its
// environment and the program's path.
func finishCommand(f Features, l launch, progDir, workdir string, env map[string]string) Features {
	for k, v := range l.env {
		env[k] = v
	}
	envFeatures(&f, env)
	if f.Model == "" {
		if m, kind, at := programModel(f.Program, progDir, workdir); m != "" {
			f.Model, f.ModelFrom = m, kind
			f.noteModelPlace(at)
		}
	}
	if !validModel(f.Model) {
		f.Model, f.ModelFrom = "", ""
		delete(f.From, "model")
	}
	return f
}

// consoleScripts are the training, tuning and serving programs installed
// as commands, which run python as a launcher would, with how many
// subcommands may follow them ("nemo llm pretrain", "yolo detect train").
var consoleScripts = map[string]int{"axolotl": 1, "llamafactory-cli": 1, "litgpt": 1, "vllm": 1, "trl": 1,
	"fairseq-train": -1, "fairseq-hydra-train": -1, "yolo": 2, "lm_eval": -1, "lm-eval": -1, "nemo": 2,
	"text-generation-launcher": -1, "sglang": 1, "levanter": 1, "open_clip_train": -1, "mmdet": 1,
	"huggingface-trainer": -1, "swift": 1, "xtuner": 1, "unsloth": 1,
	"transformers-cli": 1, "transformers": 1, "nnUNet_train": -1, "nnUNetv2_train": -1, "ns-train": -1, "lighteval": 1,
	"ollama": 1, "llama-server": -1, "llama-cli": -1, "colabfold_batch": -1}

// consoleModules are console scripts run as python modules, by module:
// python -m torchtune._cli.tune run ... is tune run ....
var consoleModules = map[string]string{"torchtune._cli.tune": "tune", "llamafactory.cli": "llamafactory-cli",
	"axolotl.cli.train": "axolotl", "litgpt": "litgpt", "lm_eval": "lm_eval", "lighteval": "lighteval"}

// moduleConsoles rewrites python -m MODULE into the console script the
// module is.
func moduleConsoles(words []string) []string {
	for i := 1; i+1 < len(words); i++ {
		if c, ok := consoleModules[words[i+1]]; ok && words[i] == "-m" && strings.HasPrefix(path.Base(words[i-1]), "python") {
			return slices.Concat(words[:i-1], []string{c}, words[i+2:])
		}
	}
	return words
}

// trainingConsole reports whether a bare command is a package's training
// entry point, in consoleScripts' terms: -1 for one named for training
// (nequip-train, mace_run_train, or a project's train given flags: uv run
// train --model vicreg), 1 for one given a training subcommand (hatelens
// train cfg.yaml), 2 for one given a kind and then one (instanovo
// diffusion train), 0 for none. Build tools (make train) and the system's
// commands are none.
func trainingConsole(w string, args []string) int {
	base := strings.ToLower(path.Base(w))
	if unexpanded(w) || path.Ext(base) != "" || isShellName(w) || tools[base] || buildTools[base] || launchers[base] != "" {
		return 0
	}
	words := strings.FieldsFunc(base, func(r rune) bool { return r == '-' || r == '_' })
	switch {
	case slices.ContainsFunc(words, trainWord) && (len(words) > 1 || len(args) > 0 && strings.HasPrefix(args[0], "-")):
		return -1
	case len(args) > 0 && trainWord(args[0]):
		return 1
	case len(args) > 1 && isSubcommand(args[0]) && !trainWord(args[0]) && trainWord(args[1]) && !slices.Contains(args[:2], "-"):
		return 2 // instanovo diffusion train: a model's kind, then the subcommand
	case len(args) > 1 && !strings.HasPrefix(args[0], "-") && isSubcommand(args[0]) && positionalHFModel(args[1]) != "":
		return 1 // elk elicit huggyllama/llama-13b DATA: a tool's subcommand run on a hub model
	case len(args) > 1 && strings.HasPrefix(args[0], "-") && modelFlag(normFlag(args[0])) && positionalHFModel(args[1]) != "":
		return -1 // vf-vllm --model Qwen/Qwen2.5-7B-Instruct: a tool run on a hub model
	case slices.ContainsFunc(args[:max(len(args)-1, 0)], func(a string) bool { return a == "-m" || a == "--model" }) &&
		slices.ContainsFunc(args, func(a string) bool { return ggufName(path.Base(a)) != "" }):
		return -1 // llama.cpp's ./server -m llama-2-7b-chat.Q4_K_M.gguf: a program run on a GGUF model
	}
	return 0
}

// trainWord is a word that means training.
func trainWord(w string) bool { return trainWords[w] }

var trainWords = set("train", "finetune", "pretrain", "fit", "training", "finetuning", "pretraining")

// subcommandModel returns the model family a program's first argument,
// a subcommand, says it trains (train_mamba, finetune-siglip), or "".
func subcommandModel(args []string) string {
	if len(args) == 0 {
		return ""
	}
	head, rest, ok := strings.Cut(strings.ToLower(args[0]), "_")
	if !ok {
		head, rest, ok = strings.Cut(strings.ToLower(args[0]), "-")
	}
	if !ok || !trainWord(head) || !familyWord(rest) || unexpanded(rest) {
		return ""
	}
	return rest
}

// ultralyticsDevices returns how many GPUs the yolo console script's
// device=0,1,2,3 lists, or 0 for another program or no list.
func ultralyticsDevices(program string, args []string) int {
	if program != "yolo" && !strings.HasPrefix(program, "yolo ") {
		return 0
	}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "device="); ok && !unexpanded(v) {
			n := 0
			for _, d := range strings.Split(strings.Trim(v, "[]'\""), ",") {
				if !isDigits(strings.TrimSpace(d)) {
					return 0
				}
				n++
			}
			return n
		}
	}
	return 0
}

// buildTools run a project's tasks by name (make train): what they run is
// not in the script.
var buildTools = set("make", "gmake", "just", "invoke", "inv", "task", "ninja", "cmake", "snakemake", "nextflow", "tox", "nox")

// consoleModel are the console scripts that train one model, by their
// lower-case names.
var consoleModel = map[string]string{"nnunet_train": "nnunet", "nnunetv2_train": "nnunet"}

// positionalModel are the console scripts whose first argument after the
// subcommand is the model (vllm serve MODEL, litgpt finetune_lora MODEL,
// nerfstudio's ns-train nerfacto).
var positionalModel = set("vllm", "litgpt", "sglang", "ns-train", "ollama")

// isSubcommand reports whether a word is a subcommand (train, serve,
// finetune_lora) rather than an argument.
func isSubcommand(w string) bool {
	if w == "" || len(w) > 32 {
		return false
	}
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// configUnder reports whether a flag not named for a config (nk, as
// normFlag gives it) is given one: a YAML, JSON or TOML file in a
// directory of configs (--fname configs/train/vitl16/k400.yaml, -f
// conf/exp.yaml), where the flag says nothing of data, an evaluation or
// another model.
func configUnder(nk, v string) bool {
	switch path.Ext(v) {
	case ".yaml", ".yml", ".json", ".toml":
	default:
		return false
	}
	for _, w := range []string{"config", "cfg", "deepspeed", "ds", "data", "eval", "test", "task", "env", "out", "save", "log"} {
		if strings.Contains(nk, w) {
			return false
		}
	}
	if besideModel(nk) || unexpanded(v) {
		return false
	}
	for _, d := range strings.Split(strings.ToLower(path.Dir(v)), "/") {
		switch d {
		case "configs", "config", "conf", "cfg", "cfgs", "yamls", "recipes":
			return true
		}
	}
	return false
}

// isConfigFile reports whether a word names a config file.
func isConfigFile(w string) bool {
	switch path.Ext(w) {
	case ".yaml", ".yml", ".json", ".toml", ".gin", ".cfg", ".py":
		return true
	}
	return false
}

// takesValue reports whether a launcher option is followed by a value:
// python's own options take none (but -c, -W, -X), other launchers' do unless
// they are known switches.
func takesValue(launcher, opt string) bool {
	if launcher == "python" {
		return opt == "W" || opt == "X" || opt == "c"
	}
	if opt == "mpi" && (launcher == "srun" || launcher == "mpirun") {
		return true
	}
	return !launcherSwitches[opt]
}

var launcherSwitches = set("standalone", "no_python", "use_env", "multi_gpu", "fp16", "bf16", "overlap",
	"verbose", "v", "no_local_rank", "oversubscribe", "allow_run_as_root", "tag_output", "cpu",
	"use_deepspeed", "use_fsdp", "module", "m", "pty", "unbuffered", "u", "exclusive", "quiet", "Q", "l",
	"label", "autotuning", "force_multi", "bind_to_core", "report_bindings", "display_map", "gloo", "mpi",
	"elastic_training", "no_ssh_check", "enable_each_rank_log", "monitor", "dynamo_use_dynamic",
	"same_network", "debug", "container_remap_root", "no_container_remap_root", "container_mount_home",
	"no_container_mount_home", "container_writable", "container_readonly", "no_container_entrypoint",
	"container_entrypoint", "exact", "whole", "no_kill", "kill_on_bad_exit", "K", "overcommit", "O", "spread_job",
	"multi_prog", "no_python_path", "no_local_rank_env", "rdzv_standalone", "run_path", "max_restarts_default")

// argFeatures reads the program's own arguments: --flag value, --flag=value,
// Lightning's --section.key value and Hydra's key=value overrides (with
// their +, ++ and ~ prefixes), config files named as arguments, and a
// Megatron-style model shape.
func argFeatures(f Features, args []string, l launch) Features {
	procs, nodes := l.procs, l.nodes
	procsFrom, nodesFrom := l.procsFrom, l.nodesFrom
	var layers, hidden, vocab float64
	var layersFrom, hiddenFrom, vocabFrom string
	fp8, fp8From := false, "" // FP8 with --bf16 beside it trains in FP8
	evalBatch, evalBatchFrom := 0.0, ""
	perGPUBatch := false // the batch was read from a flag that counts per GPU
	configModel, configFrom := "", ""
	flavor, flavorFrom := "", ""        // torchtitan's --model.flavor 8B sizes --model.name llama3
	hfModel, hfFrom := "", ""           // an HF model id under another flag (--base, --tokenizer)
	posModel := ""                      // a positional argument that is a model's name and nothing else
	otherModel, otherFrom := "", ""     // a model's name alone under a flag no reader knows (--resnet_type resnet18)
	outModel, outFrom := "", ""         // a sized model named by the output directory (--output ckpt/lora-qwen3vl-2b)
	roleModel, roleFrom := "", ""       // the model a retrieval job's part is (--encoder facebook/contriever-msmarco)
	sizeWord, sizeFrom := "", ""        // --preset base, --model_size large: the size of a family the program names
	depth, depthFrom := "", ""          // --model-variant 50, --depth 110: the depth of a ResNet the flags name
	algoModel, algoFrom := "", ""       // an RL algorithm (--algo ppo), standing in where nothing names a model
	standIn, standInFrom := "", ""      // a config's or Hydra experiment's name (fastspeech2.yaml), standing in likewise
	imsPerBatch := 0.0                  // detectron2's SOLVER.IMS_PER_BATCH: the images of all GPUs together
	nameBatch, nameBatchFrom := 0.0, "" // the per-GPU batch an OpenMMLab config's name gives (8xb320)
	cfgTotal, cfgTotalFrom := 0.0, ""   // the batch of all GPUs a detectron2 config's name gives (maskformer2_R50_bs16_50ep)
	var verl verlBatch                  // verl's ppo_micro_batch_size, of all GPUs together
	// PySlowFast's TRAIN.BATCH_SIZE counts all GPUs' clips, NUM_GPUS per
	// machine times NUM_SHARDS machines.
	yacsTotal, yacsGPUs, yacsShards := 0.0, 0, 0
	args = splitConfigLists(args)
	// lm_eval's --model hf --model_args pretrained=org/name (and the
	// harnesses built on it): --model names the backend, the settings list
	// the model.
	backend := slices.ContainsFunc(args, func(a string) bool {
		k, _, _ := strings.Cut(a, "=")
		return strings.HasPrefix(k, "-") && normFlag(k) == "model_args"
	})
	for i := 0; i < len(args); i++ {
		a := args[i]
		var k, v string
		var hasV bool
		next := false // the value is the next word, which may be a positional argument instead
		switch {
		case a == "--opts" && i+1 < len(args) && yacsKey(args[i+1]):
			continue // --opts TRAIN.BATCH_SIZE 2 TEST.BATCH_SIZE 2: yacs' KEY VALUE overrides follow
		case strings.HasPrefix(a, "-") && len(a) >= 2 && !isNumber(a):
			k, v, hasV = strings.Cut(a, "=")
			if !hasV && i+1 < len(args) && (!strings.HasPrefix(args[i+1], "-") || isNumber(args[i+1])) && !isHydra(args[i+1]) {
				v, hasV, next = args[i+1], true, true
				i++
			}
		case isHydra(a):
			if kvs := keyValueList(a); kvs != nil {
				// lighteval's "model_name=org/name,dtype=bfloat16,...": a
				// positional list of settings, read as lm_eval's --model_args.
				f = argFeatures(f, kvs, launch{})
				continue
			}
			k, v, hasV = strings.Cut(strings.TrimLeft(a, "+~"), "=")
		case (a == "NUM_GPUS" || a == "NUM_SHARDS") && i+1 < len(args):
			if n, err := strconv.Atoi(args[i+1]); err == nil && n > 0 && n <= 1<<16 {
				if a == "NUM_GPUS" {
					yacsGPUs = n
				} else {
					yacsShards = n
				}
			}
			i++
			continue
		case yacsKey(a) && i+1 < len(args):
			// detectron2's and yacs' KEY VALUE overrides: SOLVER.IMS_PER_BATCH 32 OUTPUT_DIR out/
			n, err := strconv.ParseFloat(args[i+1], 64)
			count := err == nil && n > 0 && n < 1e9
			switch {
			case a == "TRAIN.BATCH_SIZE" && count:
				yacsTotal = n
			case strings.HasSuffix(a, ".IMS_PER_BATCH") && count:
				imsPerBatch = n
			case strings.HasSuffix(a, ".AMP.ENABLED") && truthy(args[i+1]) && f.Precision == "":
				f.Precision = "amp" // detectron2's SOLVER.AMP.ENABLED True
				f.note("precision", a)
			}
			i++
			continue
		default:
			if b := mmBatch(a); b > 0 && nameBatch == 0 {
				nameBatch, nameBatchFrom = b, a
			}
			if isConfigFile(a) {
				f.configPrecision(a, a) // run.sh configs/accelerate/zero2-bf16.yaml: a config given alone
			}
			if m := configFileModel(a); m != "" && configModel == "" {
				configModel, configFrom = m, a
			} else if w := configStandIn(a, true); w != "" && standIn == "" {
				standIn, standInFrom = w, a
			} else if m := positionalHFModel(a); posModel == "" && m != "" {
				// train.py meta-llama/Llama-3.2-1B-Instruct: a hub id alone.
				posModel = m
			} else if m := familyModel(a); posModel == "" && m != "" && !bareFamily(m) && !strings.Contains(a, "/") &&
				(m == strings.ReplaceAll(strings.ToLower(a), "_", "-") || hasSize(m) && strings.HasPrefix(strings.ToLower(a), m)) {
				// python bench.py train resnet56v1, run.sh qwen3-1.7b-sft_v2: a
				// model named alone, or first in a run's name with its size.
				posModel = m
			} else if lower := strings.ToLower(a); posModel == "" && archWords[lower] && !genericArchWords[lower] {
				// train_test.py cnn --GPU: a kind of network named alone, the
				// program's choice of the models it holds.
				posModel = lower
			} else if m := pathPositionalModel(a); posModel == "" && m != "" {
				// train_eagle3.sh /home/me/models/Llama-3.1-8B-Instruct /data:
				// a directory named for a model and its size.
				posModel = m
			}
			continue
		}
		nk := normFlag(k)
		if !hasV && listFlags[nk] && i+1 < len(args) && strings.Contains(args[i+1], "=") {
			v, hasV = args[i+1], true
			i++
		}
		if listFlags[nk] && hasV && strings.Contains(v, "=") {
			// lm_eval's --model_args pretrained=org/name,dtype=bfloat16,
			// TF Model Garden's --params_override runtime.mixed_precision_dtype=float16,...
			var sub []string
			for _, kv := range strings.Split(v, ",") {
				if a, b, ok := strings.Cut(kv, "="); ok {
					sub = append(sub, "--"+a, b)
				}
			}
			f = argFeatures(f, sub, launch{})
			continue
		}
		if i := strings.Index(nk, "__"); i > 0 && i < len(nk)-2 {
			// --data__batch_size 128: a section's key, as --data.batch_size
			// (simple-parsing's and pydantic-settings' nesting).
			nk = strings.ReplaceAll(nk, "__", ".")
		}
		if strings.Contains(nk, ".") {
			parts := strings.Split(nk, ".")
			last := parts[len(parts)-1]
			// --model.init_args.name_or_path is the model's own; a key of
			// a part of it (--model.encoders.camera.backbone.init_cfg.checkpoint)
			// is not.
			ownKey := !slices.ContainsFunc(parts[1:len(parts)-1], func(p string) bool { return p != "init_args" && p != "dict_kwargs" })
			switch {
			case parts[0] == "actor_rollout_ref" || parts[0] == "critic" || parts[0] == "trainer" && verlTrainerKeys[last]:
				// verl: its policy's settings, its critic's, its GPUs.
				if verl.read(parts, last, v, hasV) {
					continue
				}
				nk = last
				switch {
				case parts[0] == "critic" && (batchFlags[last] || perGPUBatchFlag(last)):
					nk = "" // the critic's batch, beside the policy's
				case len(parts) == 3 && parts[1] == "model" && (last == "path" || modelNameKeys[last]):
					// actor_rollout_ref.model.path=/models/Qwen2.5-7B-Instruct
					// is the policy trained; critic.model.path is beside it.
					nk = "model"
					if parts[0] == "critic" {
						nk = ""
					}
				}
			case parts[0] == "model" && modelNameKeys[last] && ownKey:
				nk = "model"
			case parts[0] == "policy" && len(parts) == 2 && (last == "type" || last == "path"):
				nk = "model" // LeRobot's --policy.type=act, --policy.path=lerobot/smolvla_base: the policy trained
			case trainedSections[parts[0]] && modelNameKeys[last] && len(parts) == 2:
				nk = "model" // OpenRLHF's --actor.model_name_or_path: the policy trained
			case frozenSections[parts[0]] && (modelNameKeys[last] || modelFlags[last]):
				nk = "" // --reward.model_name_or_path, --ref.pretrain: a model beside the one trained
			case parts[0] == "model" && last == "flavor":
				nk = "model_flavor"
			case parts[0] == "trainer" && last == "devices":
				nk = "devices"
			case parts[0] == "trainer" && last == "num_nodes":
				nk = "num_nodes"
			case parts[0] == "model" && modelFlags[last]:
				nk = "" // model.model_type and the like say less than a name
			case parts[0] != "model" && modelFlags[parts[0]] && len(parts) == 2 && (last == "name" || last == "arch"):
				nk = parts[0] // solo-learn's backbone.name=resnet50 is --backbone resnet50
			case (batchFlags[last] || perGPUBatchFlag(last)) && slices.ContainsFunc(parts[:len(parts)-1], notTrainingSection):
				nk = "" // OpenRLHF's --rollout.micro_batch_size, --eval.batch_size: not the training batch
			default:
				nk = last
			}
		}
		if configFlags[nk] && hasV && cfgTotal == 0 {
			if b := bsInName(v); b > 0 {
				cfgTotal, cfgTotalFrom = b, k+" "+path.Base(v)
			}
		}
		if what, ok := methodSwitches[nk]; ok && (!hasV || truthy(v) || isBoolWord(v)) {
			on := !hasV || truthy(v)
			if hasV && !isBoolWord(v) {
				if next {
					i-- // the next word was a positional argument, not our value
				}
				on = true
			}
			if on {
				f.setMethod(what, k)
			}
			continue
		}
		if (nk == "amp_opt_level" || nk == "opt_level") && len(v) == 2 && (v[0] == 'O' || v[0] == 'o') && f.Precision == "" {
			// NVIDIA apex's --opt-level O1 (MLPerf's --amp_opt_level): O1 to
			// O3 train in mixed precision, O0 in fp32. (HF's
			// --fp16_opt_level means nothing without --fp16.)
			switch v[1] {
			case '0':
				f.Precision = "fp32"
			case '1', '2', '3':
				f.Precision = "amp"
			}
			if f.Precision != "" {
				f.note("precision", k)
			}
			continue
		}
		if fullPrecision[nk] && (!hasV || !isBoolWord(v) || truthy(v)) {
			if f.Precision == "" {
				f.Precision = "fp32"
				f.note("precision", k)
			}
			if hasV && !isBoolWord(v) && next {
				i-- // the next word was a positional argument, not our value
			}
			continue
		}
		if p, ok := boolPrecision[nk]; ok && hasV && !valuePrecision[nk] && precisionValue(v) != "" && !isBoolWord(v) {
			// --amp bf16: the switch names its dtype.
			f.Precision = precisionValue(v)
			f.note("precision", k)
			continue
		} else if ok && hasV && isBoolWord(v) && !truthy(v) && (p == "fp16" || p == "bf16" || p == "amp") {
			if f.Precision == "" {
				// --fp16 false: the script turns mixed precision off.
				f.Precision = "fp32"
				f.note("precision", k+" "+v)
			}
			continue
		} else if ok && (!hasV || truthy(v) || !isBoolWord(v) && !valuePrecision[nk]) { // --fp16 data/: a switch, then a positional argument
			if nk == "tf32" && f.Precision != "" {
				continue // TF32 matmuls beside --bf16 say nothing of the training precision
			}
			if p == "amp" && (f.Precision == "bf16" || f.Precision == "fp16") {
				continue // --bf16 --mixed-precision: the switch beside its dtype
			}
			if nk == "fp8" || strings.HasPrefix(nk, "fp8_") {
				fp8 = true
			}
			f.Precision = p
			f.note("precision", k)
			if next && !truthy(v) && !isBoolWord(v) {
				i-- // the next word was a positional argument, not our value
			}
			continue
		}
		if p := dtypeSwitch(nk); p != "" && hasV && truthy(v) && f.Precision == "" {
			// trainer.is_use_bf16=True, enable_fp16 true: a switch named for its dtype.
			f.Precision = p
			f.note("precision", k)
			continue
		}
		if !hasV {
			continue
		}
		if configUnder(nk, v) {
			nk = "config" // --fname configs/train/vitg16/droid.yaml: a config, under the program's own name for it
		}
		if nk == "m" && ggufName(path.Base(v)) != "" {
			nk = "model" // llama.cpp's -m: a GGUF file is a model's weights
		}
		var num float64
		isNum := false
		if nv := strings.TrimSuffix(v, ","); nv != "" && (nv[0] >= '0' && nv[0] <= '9' || nv[0] == '.') {
			n, err := strconv.ParseFloat(nv, 64)
			num, isNum = n, err == nil && n > 0 && n < 1e12
		}
		adapterModel := "" // the base model a LoRA adapter's path names (sizedModelInPath)
		if adapterPathFlags[nk] && hfModel == "" {
			adapterModel = sizedModelInPath(v)
		}
		if unexpanded(v) {
			if id := hubCacheID(strings.ToLower(v)); modelFlag(nk) && id != "" && !unexpanded(id) {
				// $HF_HOME/hub/models--org--name/snapshots/...: the cache is hidden, the model is not.
				f.Model, f.ModelFrom = id, "flag"
				f.note("model", k)
				continue
			}
			if base := path.Base(v); modelFlag(nk) && !unexpanded(base) && familyModel(base) != "" {
				// $MODELS/Llama-2-7b-hf: the directory is hidden, the name is not.
				f.Model, f.ModelFrom = normModel(base), "flag"
				f.note("model", k)
				continue
			}
			if adapterModel != "" {
				// --adapter-path $ROOT/checkpoints/llama3_2_3B_lora/epoch_0:
				// the root is hidden, the adapter's directory is not.
				hfModel, hfFrom = adapterModel, k
			}
			if base := path.Base(v); configModel == "" && !unexpanded(base) && (strings.Contains(nk, "config") || nk == "cfg" || nk == "c") &&
				!strings.Contains(nk, "deepspeed") && !strings.Contains(nk, "ds_") && configFileModel(base) != "" {
				// --config ${WD}/configs/qlora/llama3_1_8B_qlora.yaml: the
				// directory is hidden, the config's name is not.
				configModel, configFrom = configFileModel(base), k+" "+v
			}
			switch {
			case modelFlag(nk):
				f.Unknown = addUnknown(f.Unknown, "model")
			case batchFlags[nk]:
				f.Unknown = addUnknown(f.Unknown, "batch_size")
			case valuePrecision[nk]:
				f.Unknown = addUnknown(f.Unknown, "precision")
			}
			continue
		}
		if backend && nk == "model" {
			continue
		}
		if nk == "policy" && !strings.HasPrefix(a, "-") && hasV {
			nk = "model" // LeRobot's Hydra group before its 0.2 CLI: policy=act
		}
		if nk == "a" && rlAlgos[strings.ToLower(v)] {
			nk = "algo" // -a ppo: the agent, not an architecture
		}
		switch {
		case strings.HasSuffix(nk, "models") && next && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !strings.Contains(args[i+1], "="):
			// --models AdaptiveInputs KNNLM_v2 MEGA: several models, none the
			// job's (and none of them a positional argument).
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !strings.Contains(args[i+1], "=") {
				i++
			}
		case nk == "pretrained" && f.ModelFrom == "flag" && !strings.Contains(v, "/") && familyModel(v) == "":
			// open_clip's --model ViT-B-16 --pretrained laion2b_s34b_b88k:
			// the weights' tag for the model the flag before named.
		case modelFlag(nk) && !isNumber(v) && !(nk == "model_type" && f.Model != ""):
			if m := ggufName(path.Base(v)); m != "" && familyModel(m) != "" && validModel(m) {
				// llama.cpp's -m models/llama-2-7b-chat.Q4_K_M.gguf: the
				// model's name whole, before its quantisation.
				f.Model, f.ModelFrom = m, "flag"
				f.note("model", k)
			} else if m := familyModel(path.Base(v)); weightsExt(v) != "" && m != "" && !bareFamily(m) && validModel(m) {
				// --weights yolov7_training.pt, resnet50_imagenet.pth: a
				// weights file named for its model.
				f.Model, f.ModelFrom = m, "flag"
				f.note("model", k)
			} else if m := withoutDataPrefix(normModel(v)); validModel(m) && !(inRunDir(v) && familyModel(m) == "") &&
				!(f.ModelFrom == "flag" && (hubID(f.Model) && !hubID(m) && !hasSize(m) || weightsExt(v) != "")) {
				// (A model a flag named stays over the run's name for it:
				// --model facebook/bart-large --model_name bart_cnndm_2_half,
				// --model ViT-B-16 --pretrained .../student_warm_start.pt.)
				if fm := familyModel(m); !strings.HasPrefix(a, "-") && !strings.ContainsAny(m, "/.-") && namesAModel(fm) &&
					familyOf(fm) != "" && !strings.HasPrefix(m, familyOf(fm)) {
					// Hydra's network=speech_wav2vec2_linear: a config
					// group's name with the family inside it (a name that
					// starts with its family, timm's vit_base_patch16_224, is
					// kept whole, and so is a flag's: --model mae_vit_large_patch16).
					m = fm
				}
				f.Model, f.ModelFrom = m, "flag"
				f.note("model", k)
			} else if m := familyModel(path.Base(path.Dir(strings.TrimRight(v, "/")))); (checkpointDir(v) || runWeightsDir(v)) && m != "" &&
				!bareFamily(m) && validModel(m) {
				// .../Qwen3-8B-SFT_hotpotqa/checkpoint-368: a checkpoint of
				// the model its run directory names (runs/qwen7b/final too).
				f.Model, f.ModelFrom = m, "flag"
				f.note("model", k)
			}
		case nk == "model_id_with_origin_paths" && f.ModelFrom != "flag":
			// DiffSynth-Studio's "Qwen/Qwen-Image-Edit-2511:transformer/*.safetensors,
			// Qwen/Qwen-Image:text_encoder/...": the model trained is the
			// first, its other parts after it.
			id, _, _ := strings.Cut(strings.Split(v, ",")[0], ":")
			if m := strings.ToLower(id); hubID(m) && validModel(m) {
				f.Model, f.ModelFrom = m, "flag"
				f.note("model", k)
			}
		case nk == "model_flavor":
			flavor, flavorFrom = strings.ToLower(v), k
		case loraRankFlags[nk] && isNum:
			f.LoRARank = num
			f.note("lora_rank", k)
			if f.Tuning == "" {
				f.setMethod("lora", k)
			}
		case adapterFlags[nk] && !isNumber(v):
			if lv := strings.ToLower(v); strings.Contains(lv, "qlora") {
				f.setMethod("qlora", k)
			} else if strings.Contains(lv, "lora") {
				f.setMethod("lora", k)
			}
		case quantBitsFlags[nk] && v == "4" || nk == "quantize" && strings.Contains(strings.ToLower(v), "nf4"):
			f.setMethod("4bit", k)
		case optimFlags[nk]:
			if o := optimizerValue(v); o != "" {
				f.Optimizer = o
				f.note("optimizer", k)
			}
		case nk == "recompute_granularity" || nk == "recompute_method":
			f.setMethod("checkpointing", k)
		case configFlags[nk]:
			if base := strings.ToLower(path.Base(v)); strings.Contains(base, "qlora") {
				f.setMethod("qlora", k)
			} else if strings.Contains(base, "lora") {
				f.setMethod("lora", k)
			}
			if base := strings.TrimSuffix(strings.ToLower(path.Base(v)), path.Ext(v)); bareFamily(configModel) &&
				(variantWords[base] && len(base) > 1 || isSize(base)) {
				// fairseq's --config-dir examples/roberta/config/pretraining
				// --config-name base: the family's config directory, the
				// variant's config.
				configModel, configFrom = configModel+"-"+base, configFrom+" + "+k+" "+v
			} else if m := familyModel(v); m != "" {
				configModel, configFrom = m, k+" "+v
			} else if w := configStandIn(v, false); w != "" && standIn == "" {
				standIn, standInFrom = w, k+" "+v
			}
		case (nk == "experiment" || nk == "exp") && !strings.HasPrefix(a, "-") && standIn == "":
			// Hydra's experiment=aero_2-16_512_64: the experiment's name.
			if w := workloadName(path.Base(v)); w != "" {
				standIn, standInFrom = w, k+"="+v
			}
		case strings.Contains(nk, "config") && !strings.Contains(nk, "deepspeed") && !strings.Contains(nk, "ds_"):
			// --model_config llama3_1_405b/distill_...: a config named after its model
			if m := familyModel(v); m != "" && configModel == "" {
				configModel, configFrom = m, k+" "+v
			}
		case configModel == "" && strings.HasPrefix(a, "-") && !dataFlag(nk) && !besideModel(nk) && !tokenizerWord(nk) &&
			!tokenizerWord(strings.ToLower(path.Base(v))) && !strings.Contains(nk, "eval") && configFileModel(v) != "" &&
			!strings.HasSuffix(v, ".py"):
			// --train-toml configs/pretrain/qwen3_06b.toml: a config file, under
			// whatever flag, named for its model.
			configModel, configFrom = configFileModel(v), k+" "+v
		case configModel == "" && hydraOption(a, k, v) && validModel(familyModel(path.Base(v))):
			// Hydra's solver=compression/encodec_base_8khz: a config group's
			// option, a config named for its model (not a hub id).
			configModel, configFrom = familyModel(path.Base(v)), k+"="+v
		case adapterModel != "":
			// --adapter-path .../checkpoints/llama3_2_3B_lora/epoch_0: a LoRA
			// adapter of the base model its directory names.
			hfModel, hfFrom = adapterModel, k
		case hfModel == "" && nk == "load" && hasSize(familyModel(path.Base(strings.TrimRight(v, "/")))) && !checkpointDir(v):
			// Megatron's --load ./ckpt/llama-65b: the checkpoint it starts
			// from, named for its model and size.
			hfModel, hfFrom = familyModel(path.Base(strings.TrimRight(v, "/"))), k
		case hfModel == "" && !dataFlag(nk) && !besideModel(nk) && (looksLikeHFName(v) || modelDirFlag(nk) && strings.Contains(v, "/")) &&
			!isConfigFile(v) && weightsExt(v) == "" &&
			(!bareFamily(familyModel(path.Base(v))) || checkpointFlag(nk) && hubID(strings.ToLower(v)) && familyModel(path.Base(v)) != strings.ToLower(path.Base(v))) &&
			familyModel(path.Base(v)) != "" && validModel(normModel(v)):
			// --base Qwen/Qwen2.5-7B-Instruct: a Hugging Face id of a model
			// family, under a flag the model readers do not know (a
			// family's fine-tune under a checkpoint's flag too: --checkpoint
			// google/pegasus-cnn_dailymail);
			// --model_dir /gpfs/.../models/Llama-2-7b-hf: a local copy of one.
			hfModel, hfFrom = normModel(v), k
		case (batchFlags[nk] || perGPUBatchFlag(nk)) && isNum:
			if perGPUBatch && !perGPUBatchFlag(nk) {
				continue
			}
			perGPUBatch = perGPUBatch || perGPUBatchFlag(nk)
			f.BatchSize, f.BatchKey = num, nk
			f.note("batch_size", k)
		case evalBatchFlags[nk] && isNum && evalBatch == 0:
			evalBatch, evalBatchFrom = num, k
		case globalBatchFlags[nk] && isNum:
			f.GlobalBatchSize = num
			f.note("global_batch_size", k)
		case seqFlags[nk] && isNum:
			f.SeqLen = num
			f.note("seq_len", k)
		case imageFlags[nk] && isNum:
			f.ImageSize = num
			f.note("image_size", k)
		case imageFlags[nk] && strings.Contains(v, ","):
			if last := v[strings.LastIndexByte(v, ',')+1:]; last != "" {
				if n, err := strconv.ParseFloat(last, 64); err == nil && n > 0 && n < 1e6 {
					f.ImageSize = n
					f.note("image_size", k)
				}
			}
		case accumFlags[nk] && isNum:
			f.GradAccum = num
			f.note("grad_accum", k)
		case zeroFlags[nk] && isNum && num <= 3:
			f.ZeROStage = int(num)
			f.note("zero_stage", k)
		case nk == "deepspeed_config" || nk == "deepspeed" || nk == "ds_config":
			if z := zeroFromName(v); z > 0 {
				f.ZeROStage = z
				f.note("zero_stage", k+" "+v)
			}
			f.configPrecision(v, k+" "+v) // ds_config_fp16.json, zero2_bf16.json
		case stepFlags[nk] && isNum:
			f.Steps = num
			f.note("steps", k)
		case epochFlags[nk] && isNum:
			f.Epochs = num
			f.note("epochs", k)
		case strings.HasPrefix(nk, "fp8_") && !isBoolWord(v):
			fp8, fp8From = true, k // Megatron's --fp8-format hybrid
		case nk == "quantization" && strings.HasPrefix(strings.ToLower(v), "fp8"):
			fp8, fp8From = true, k // vLLM's and SGLang's --quantization fp8: the weights in FP8, beside any --dtype
		case valuePrecision[nk]:
			if p := precisionValue(v); p != "" {
				f.Precision = p
				f.note("precision", k)
			}
		case layerFlags[nk] && isNum:
			layers, layersFrom = num, k
		case hiddenFlags[nk] && isNum:
			hidden, hiddenFrom = num, k
		case vocabFlags[nk] && isNum:
			vocab, vocabFrom = num, k
		case (nk == "gpus" || nk == "num_gpus" || nk == "ngpus" || nk == "devices" || nk == "world_size") && isNum && procs == 0:
			procs, procsFrom = int(num), k
		case (nk == "num_nodes" || nk == "num_machines") && isNum && nodes == 0: // detectron2's --num-machines
			nodes, nodesFrom = int(num), k
		case (nk == "nodes" || nk == "nnodes") && isNum && num <= 1<<12 && nodes == 0:
			// a Lightning program's --nodes $SLURM_JOB_NUM_NODES beside its
			// --devices: its Trainer's num_nodes.
			nodes, nodesFrom = int(num), k
		case algoFlags[nk] && algoModel == "" && !isNum && !strings.Contains(v, "/"):
			// --algo sac_rad, --algorithm ppo: an RL job's agent is its workload.
			if m := strings.ToLower(v); validModel(m) && !isBoolWord(m) {
				algoModel, algoFrom = m, k
			}
		case sizeFlags[nk] && sizeWord == "" && (variantWords[strings.ToLower(v)] && len(v) > 1 || isSize(strings.ToLower(v))):
			sizeWord, sizeFrom = strings.ToLower(v), k
		case otherModel == "" && familyFlag(nk) != "" && (variantWords[strings.ToLower(v)] && len(v) > 1 || isSize(strings.ToLower(v))):
			// --bart_version=large, --bert_size base: a family the flag's
			// name gives, sized by its value.
			otherModel, otherFrom = familyFlag(nk)+"-"+strings.ToLower(v), k+"="+v
		case (sizeFlags[nk] || depthFlags[nk]) && depth == "" && isDigits(v) && len(v) <= 3:
			depth, depthFrom = v, k
		case roleModel == "" && roleFlag(nk) && (hubID(strings.ToLower(v)) || namesAModel(familyModel(v))):
			roleModel, roleFrom = normModel(v), k
		case runVarying[nk] && outModel == "":
			if m := familyModel(path.Base(v)); m != "" && hasSize(m) {
				outModel, outFrom = m, k
			}
		case otherModel == "" && !dataFlag(nk) && !isNum && !strings.Contains(v, "/") && !strings.Contains(nk, "token") &&
			!strings.Contains(nk, "bpe") && !strings.Contains(nk, "vocab") && !strings.Contains(nk, "teacher") && !templateFlag(nk):
			if m := familyModel(v); m != "" && !bareFamily(m) && m == strings.ReplaceAll(strings.ToLower(v), "_", "-") {
				otherModel, otherFrom = m, k
			}
		}
	}
	if yacsGPUs > 0 {
		if procs == 0 {
			procs, procsFrom = yacsGPUs, "NUM_GPUS"
			if yacsShards > 0 {
				nodes, nodesFrom = yacsShards, "NUM_SHARDS"
			}
		}
		if n := float64(yacsGPUs * max(yacsShards, 1)); f.BatchSize == 0 && yacsTotal > 0 && math.Mod(yacsTotal, n) == 0 {
			// tools/run_net.py ... NUM_GPUS 2 TRAIN.BATCH_SIZE 16: 8 per GPU.
			f.BatchSize = yacsTotal / n
			f.note("batch_size", "TRAIN.BATCH_SIZE / NUM_GPUS")
		}
	} else if yacsTotal > 0 && f.GlobalBatchSize == 0 {
		// TRAIN.BATCH_SIZE 2 with NUM_GPUS in the config: the batch of
		// all the GPUs the job runs on (PySlowFast's and pycls' total).
		f.GlobalBatchSize = yacsTotal
		f.note("global_batch_size", "TRAIN.BATCH_SIZE")
	}
	if verl.gpusPerNode > 0 && !verl.nodesUnknown && (procs == 0 || procs == l.procs && procsFrom == l.procsFrom) {
		// verl's trainer.n_gpus_per_node × trainer.nnodes: the GPUs its
		// Ray workers take, which a header without a GPU request leaves
		// to the script; an srun that starts it runs its driver, one task
		// (srun --ntasks=1 python3 -m verl.trainer.main_ppo).
		procs, procsFrom = int(verl.gpusPerNode), "trainer.n_gpus_per_node"
		if verl.nodes > 0 {
			nodes, nodesFrom = int(verl.nodes), "trainer.nnodes"
		}
	}
	if verl.micro > 0 && !perGPUBatch {
		// verl splits the deprecated ppo_micro_batch_size over its GPUs
		// (and sequence-parallel groups); data.train_batch_size counts
		// prompts of all GPUs, so it says nothing per GPU either.
		f.BatchSize, f.BatchKey = 0, ""
		if n, from, ok := verl.perGPU(); ok {
			f.BatchSize = n
			f.note("batch_size", from)
		} else {
			f.Unknown = addUnknown(f.Unknown, "batch_size")
		}
	}
	if f.BatchSize == 0 && nameBatch > 0 {
		// rtmw-l_8xb320-270e_coco.py: OpenMMLab's configs name their
		// batch per GPU (8 GPUs of 320).
		f.BatchSize = nameBatch
		f.note("batch_size", "config name "+nameBatchFrom)
	}
	if imsPerBatch == 0 && cfgTotal > 0 && procs > 0 {
		// detectron2's projects name a config for its batch of all GPUs
		// (maskformer2_swin_tiny_bs16_90k.yaml), which --num-gpus splits.
		imsPerBatch = cfgTotal
	}
	if f.BatchSize == 0 && imsPerBatch > 0 {
		// detectron2 splits SOLVER.IMS_PER_BATCH over all its processes
		// (--num-gpus on each of --num-machines), a config named for its
		// batch over torchrun's --nproc_per_node on each of --nnodes.
		world, worldFrom := max(procs, 1), procsFrom
		if nodes > 1 && !(l.total && procs == l.procs && procsFrom == l.procsFrom) {
			world *= nodes
			worldFrom += " × " + nodesFrom
		}
		if n := float64(world); math.Mod(imsPerBatch, n) == 0 {
			f.BatchSize = imsPerBatch / n
			from := "SOLVER.IMS_PER_BATCH"
			if cfgTotal == imsPerBatch && cfgTotalFrom != "" {
				from = cfgTotalFrom
			}
			if world > 1 {
				from += " / " + worldFrom
			}
			f.note("batch_size", from)
		}
	}
	if f.BatchSize == 0 && evalBatch > 0 && !trainingProgram(f.Program) {
		// An evaluation job's only batch (eval.py --infer_batch_size 16);
		// a training program's evaluation batch is not its own.
		f.BatchSize = evalBatch
		f.note("batch_size", evalBatchFrom)
	}
	if fp8 && f.Precision != "fp8" {
		f.Precision = "fp8"
		if fp8From != "" {
			f.note("precision", fp8From)
		}
	}
	if configModel != "" && (f.Model == "" || sizes(configModel, f.Model)) {
		// --model.name llama3 with train_configs/llama3_70b.toml: the
		// config file's name says which llama3.
		f.Model, f.ModelFrom = configModel, "config"
		f.note("model", configFrom)
	}
	if f.Model == "" && hfModel != "" {
		f.Model, f.ModelFrom = hfModel, "flag"
		f.note("model", hfFrom)
	}
	if f.Model == "" && posModel != "" {
		f.Model, f.ModelFrom = posModel, "flag"
		f.note("model", "argument "+posModel)
	}
	if f.Model == "" && sizeWord != "" && f.Program != "" {
		// train_deberta_babylm.py --preset base: the program names the
		// family, the flag its size.
		if fam := familyModel(programStem(f.Program)); bareFamily(fam) {
			f.Model, f.ModelFrom = fam+"-"+sizeWord, "program"
			f.note("model", "program "+f.Program+" and "+sizeFrom+" "+sizeWord)
		}
	}
	if f.Model == "" && otherModel != "" {
		f.Model, f.ModelFrom = otherModel, "flag"
		f.note("model", otherFrom)
	}
	if f.ModelFrom == "flag" && sizeWord != "" && familyOf(f.Model) != "" && f.Model == familyModel(f.Model) &&
		!hasSize(f.Model) && !hasVariant(f.Model) && !strings.Contains(f.Model, "/") {
		// --model_name llama3 --model_size 70b: the family the program is
		// given, and its size.
		f.Model += "-" + sizeWord
		f.note("model", f.From["model"]+" and "+sizeFrom+" "+sizeWord)
	}
	if depth != "" && depthFamilies[f.Model] {
		// --model-name resnet --model-variant 50, --arch wrn --depth 28:
		// a family of networks counted by depth, and its depth.
		f.Model += depth
		f.note("model", f.From["model"]+" and "+depthFrom+" "+depth)
	}
	if f.Model == "" && roleModel != "" {
		// pyserini's --encoder, FlagEmbedding's --embedder_name_or_path,
		// a reranker's --reranker_name_or_path: the one model the job runs.
		f.Model, f.ModelFrom = roleModel, "flag"
		f.note("model", roleFrom)
	}
	if f.Model == "" && outModel != "" {
		// Where the run is written says what it trains, but is no claim.
		f.Model, f.ModelFrom = outModel, "path"
		f.note("model", outFrom)
	}
	if f.Model == "" && algoModel != "" {
		f.Model, f.ModelFrom = algoModel, "path"
		f.note("model", algoFrom)
	}
	if standIn != "" && f.ConfigStandIn == "" {
		f.ConfigStandIn, f.ConfigStandInFrom = standIn, standInFrom
	}
	if isSize(flavor) && f.ModelFrom == "flag" && !strings.Contains(f.Model, "/") && !hasSize(f.Model) {
		f.Model += "-" + flavor
		f.note("model", f.From["model"]+" + "+flavorFrom)
	}
	if layers > 0 && hidden > 0 {
		f.Layers, f.Hidden = layers, hidden
	}
	if layers > 0 && hidden > 0 && f.Params == 0 {
		// A transformer's blocks hold about 12·L·h² weights; the embedding V·h.
		f.Params, f.ParamsFrom = 12*layers*hidden*hidden, "shape"
		from := "12 × " + layersFrom + " × " + hiddenFrom + "²"
		if vocab > 0 {
			f.Params += vocab * hidden
			f.ParamsFrom = "shape+vocab"
			from += " + " + vocabFrom + " × " + hiddenFrom
		}
		f.note("params", from)
	}
	if procs > 0 {
		f.GPUs = procs * max(nodes, 1)
		from := procsFrom
		if l.total && procs == l.procs && procsFrom == l.procsFrom {
			// accelerate --num_processes 16 --num_machines 2: 16 in all.
			f.GPUs = procs
		} else if nodes > 1 {
			// "torchrun --nproc_per_node × --nnodes", the launcher said once.
			launcher, _, _ := strings.Cut(procsFrom, " ")
			from += " × " + strings.TrimPrefix(nodesFrom, launcher+" ")
		}
		f.note("gpus", from)
	}
	return f
}

var (
	// modelNameKeys name the model inside a section (--model.name_or_path).
	modelNameKeys = set("name", "arch", "model_name", "name_or_path", "model_name_or_path",
		"pretrained_model_name_or_path", "model_id", "hf_model", "pretrained", "checkpoint", "model",
		"restore_from_path", "backbone", "model_path", "hf_model_path", "pretrained_path")
	algoFlags = set("algo", "algorithm", "algo_name", "rl_algo", "rl_algorithm")
	// rlAlgos are reinforcement learning's algorithms, which a short -a
	// names as often as an architecture.
	rlAlgos = set("ppo", "appo", "sac", "dqn", "ddqn", "a2c", "a3c", "td3", "ddpg", "trpo", "impala", "grpo", "reinforce")
	// trainedSections name the model an RL job trains; frozenSections the
	// models beside it that score or anchor it (OpenRLHF's sections).
	trainedSections = set("actor", "policy", "student")
	frozenSections  = set("reward", "rm", "reward_model", "critic", "ref", "reference", "teacher", "value", "judge")
	// notTrainingSections hold the settings of what a job does besides
	// training: its rollouts, evaluation and generation.
	notTrainingSections = set("rollout", "eval", "evaluation", "val", "valid", "validation", "test", "inference",
		"generation", "generate", "sampling", "sampler", "predict")
	configFlags = set("config", "config_file", "cfg", "c", "config_path", "config_name", "yaml", "recipe_config", "yaml_config", "cfg_file",
		"gin", "gin_file", "gin_config", "gin_configs")
	layerFlags  = set("num_layers", "n_layer", "n_layers", "num_hidden_layers", "nlayers")
	hiddenFlags = set("hidden_size", "n_embd", "d_model", "hidden_dim", "model_dim", "dim")
	vocabFlags  = set("vocab_size", "padded_vocab_size")
)

// notTrainingSection reports whether a section of a dotted key holds what
// a job does besides training: rollout, eval, eval_dataset, val_loader.
func notTrainingSection(p string) bool {
	if notTrainingSections[p] {
		return true
	}
	head, _, _ := strings.Cut(p, "_")
	return head != p && notTrainingSections[head]
}

// isHydra reports whether a word is a Hydra/OmegaConf override:
// key=value, section.key=value, +key=value, ++key=value, ~key.
func isHydra(w string) bool {
	k, _, ok := strings.Cut(strings.TrimLeft(w, "+~"), "=")
	if !ok || k == "" {
		return false
	}
	for _, part := range strings.Split(k, ".") {
		if !isIdent(strings.ReplaceAll(part, "-", "_")) {
			return false
		}
	}
	return true
}

// keyValueList reads a word that is a model's comma-separated settings,
// the model first and one more key=value at least
// ("model_name=org/x,dtype=bfloat16,tp=4", as lighteval takes them), as
// the flags --model_name org/x --dtype bfloat16 ...; nil for any other
// word: a Hydra sweep (model=a,b), a list of other settings (n_gpus=4,batch_size=256).
func keyValueList(w string) []string {
	if first, _, _ := strings.Cut(w, "="); !strings.Contains(w, ",") || !isHydra(w) || !modelFlag(normFlag(first)) {
		return nil
	}
	var flags []string
	for _, kv := range strings.Split(w, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && isIdent(k) {
			flags = append(flags, "--"+k, v)
		}
	}
	if len(flags) < 4 {
		return nil
	}
	return flags
}

// prefixedModel reads the model a program takes from a variable of its own
// (GSM8K_MODEL_PATH=Qwen/Qwen2.5-1.5B-Instruct, FINETUNE_MODEL=...): the
// one exported name ending in MODEL, MODEL_PATH, MODEL_NAME or
// MODEL_NAME_OR_PATH whose value is a hub id or a known model's name; not
// a model beside the one trained (REWARD_MODEL), one written
// (HUB_MODEL_ID, OUTPUT_MODEL_DIR) or an evaluation's. Several that
// disagree say none.
func prefixedModel(env map[string]string) (string, string) {
	return soleValue(env, func(k, v string) (string, bool) {
		if !modelVarName(k) || unexpanded(v) {
			return "", false
		}
		m := normModel(v)
		return m, validModel(m) && (hubID(m) || familyModel(m) != "" && !bareFamily(m))
	})
}

// modelVarName reports whether a variable's name is a program's own for
// its model (GSM8K_MODEL_PATH, FINETUNE_MODEL): a name ending in MODEL,
// MODEL_PATH, MODEL_NAME or MODEL_NAME_OR_PATH after a word of its own, not
// one beside the model trained, one written or an evaluation's.
func modelVarName(k string) bool {
	words := strings.Split(strings.ToLower(k), "_")
	tail := len(words) - 1
	for tail > 0 && (words[tail] == "path" || words[tail] == "name" || words[tail] == "or" || words[tail] == "id") {
		tail--
	}
	return tail >= 1 && words[tail] == "model" && !besideModel(strings.ToLower(k)) &&
		!slices.ContainsFunc(words[:tail], func(w string) bool { return notTrainingSections[w] || modelOutWords[w] })
}

// scriptModelVar reads the model from the script's own variables, exported
// or not, where the launch names none: the one variable named for a model
// (MODEL, MODEL_NAME, BASE_MODEL, ...; not one written or beside the
// trained one) that the script's text uses ($MODEL, ${MODEL}; one set and
// never used says nothing of the work) and whose value is a hub id or a
// known model with its size or version; several that disagree say none.
func scriptModelVar(vars map[string]shVar, text string) (string, string) {
	return soleValue(vars, func(k string, sv shVar) (string, bool) {
		if sv.unknown || sv.array || len(sv.vals) == 0 || !slices.Contains(progenv.Model, k) && !modelVarName(k) ||
			unexpanded(sv.vals[0]) {
			return "", false
		}
		m := normModel(sv.vals[0])
		return m, validModel(m) && (hubID(m) || namesAModel(familyModel(m))) && refersTo(text, k)
	})
}

// refersTo reports whether text expands the variable name: $name not
// followed by more of a name, or ${name followed by its end or an operator.
func refersTo(text, name string) bool {
	for _, open := range []string{"$", "${"} {
		for rest := text; ; {
			i := strings.Index(rest, open+name)
			if i < 0 {
				break
			}
			rest = rest[i+len(open)+len(name):]
			if rest == "" || open == "$" && !isIdentByte(rest[0]) || open == "${" && strings.ContainsRune("}:-=+?#%/[", rune(rest[0])) {
				return true
			}
		}
	}
	return false
}

// isIdentByte reports whether c may continue a shell variable's name.
func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// configVarModel reads the model a config the command is given through
// the environment names (CONFIG_NAME=draftp_sdxl, CONFIG=configs/llama2_7b.yaml
// exported to a launcher script the job does not show): the model of the
// variable's value, as a config flag's value is read.
func configVarModel(env map[string]string) (string, string) {
	return soleValue(env, func(k, v string) (string, bool) {
		if !configFlags[normFlag(k)] || unexpanded(v) {
			return "", false
		}
		m := familyModel(v)
		return m, m != "" && validModel(m)
	})
}

// modelOutWords mark a variable naming a model a job writes or logs
// rather than trains: HUB_MODEL_ID, SAVE_MODEL, WANDB_LOG_MODEL.
var modelOutWords = set("hub", "save", "saved", "output", "out", "log", "push", "export", "final", "merged", "ref")

// prefixedBatch reads the batch a program takes from a variable of its own
// (VJEDAI_BATCH_SIZE=1, TRAIN_MICRO_BATCH_SIZE=4): the one exported name
// ending in BATCH_SIZE, not an evaluation's or the global batch; several
// that disagree say none.
func prefixedBatch(env map[string]string) (string, float64) {
	return soleValue(env, func(k, v string) (float64, bool) {
		nk := strings.ToLower(k)
		if !strings.HasSuffix(nk, "_batch_size") || globalBatchFlags[nk] || evalBatchFlags[nk] || unexpanded(v) {
			return 0, false
		}
		if words := strings.Split(nk, "_"); slices.ContainsFunc(words, func(w string) bool {
			return notTrainingSections[w] || w == "global" || w == "total" || w == "effective"
		}) {
			return 0, false
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return n, err == nil && n >= 1 && n < 1e6 && n == math.Trunc(n)
	})
}

// soleValue reads the variables of env that read gives a value (ok) and
// returns the value they all agree on, with the first of their names in
// order; where two disagree, none.
func soleValue[V any, T comparable](env map[string]V, read func(name string, value V) (T, bool)) (string, T) {
	var name string
	var val, none T
	for k, v := range env {
		x, ok := read(k, v)
		if !ok {
			continue
		}
		if name != "" && x != val {
			return "", none
		}
		if name == "" || k < name {
			name, val = k, x
		}
	}
	return name, val
}

// envFeatures fills what the arguments left unsaid from the variables the
// command runs with (exported, or set on its command line).
func envFeatures(f *Features, env map[string]string) {
	var key string // the variable get found
	get := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := env[k]; ok && v != "" && !unexpanded(v) {
				key = "$" + k
				return v
			}
		}
		return ""
	}
	if f.Model == "" {
		if m := normModel(get(progenv.Model...)); validModel(m) && !isNumber(m) && !taskName(m) {
			f.Model, f.ModelFrom = m, "env"
			f.note("model", key)
		} else if name, m := prefixedModel(env); m != "" {
			f.Model, f.ModelFrom = m, "env"
			f.note("model", "$"+name)
		} else if name, m := configVarModel(env); m != "" {
			f.Model, f.ModelFrom = m, "config"
			f.note("model", "$"+name+" "+env[name])
		}
	}
	if f.BatchSize == 0 {
		if n, err := strconv.ParseFloat(get(progenv.Batch...), 64); err == nil && n > 0 && n < 1e9 {
			f.BatchSize, f.BatchKey = n, normFlag(strings.TrimPrefix(key, "$"))
			f.note("batch_size", key)
		} else if name, n := prefixedBatch(env); n > 0 {
			f.BatchSize, f.BatchKey = n, normFlag(name)
			f.note("batch_size", "$"+name)
		}
	}
	if f.GlobalBatchSize == 0 {
		if n, err := strconv.ParseFloat(get(progenv.GlobalBatch...), 64); err == nil && n > 0 && n < 1e12 {
			f.GlobalBatchSize = n
			f.note("global_batch_size", key)
		}
	}
	if f.Precision == "" {
		if f.Precision = precisionValue(get(progenv.Precision...)); f.Precision != "" {
			f.note("precision", key)
		} else if truthy(get(progenv.AMP...)) {
			f.Precision = "amp"
			f.note("precision", key)
		}
	}
	if f.Precision != "fp8" {
		// PREC=bfloat16 ENABLE_FP8=1: FP8 matmuls over the dtype, as
		// --fp8 beside --bf16 is read.
		if name, fp8 := soleValue(env, func(k, v string) (bool, bool) {
			return true, dtypeSwitch(normFlag(k)) == "fp8" && truthy(v)
		}); fp8 {
			f.Precision = "fp8"
			f.note("precision", "$"+name)
		}
	}
	if cvd := get("CUDA_VISIBLE_DEVICES"); f.GPUs == 0 && cvd != "" {
		n := 0
		for _, d := range strings.Split(cvd, ",") {
			if d = strings.TrimSpace(d); d != "" && d != "-1" {
				n++
			}
		}
		f.GPUs = n
		f.note("gpus", key)
	}
}

// tools are programs jobs run beside their training, under srun or in a
// container: they launch nothing to read.
var tools = set("all_reduce_perf", "all_gather_perf", "alltoall_perf", "broadcast_perf", "reduce_scatter_perf",
	"sendrecv_perf", "gpu_burn", "dcgmproftester", "nvidia-smi", "hostname", "echo", "sleep", "cat", "true", "nvcc", "env", "printenv", "date", "ls",
	"pwd", "module", "git", "pip", "pip3", "wandb", "tensorboard", "jupyter", "nproc", "lscpu", "free", "df", "du",
	"rsync", "cp", "mv", "tar", "mkdir", "rm", "touch", "which", "uname", "ulimit", "numastat", "dcgmi", "nvidia-debugdump",
	"ip", "ifconfig", "ping", "ss", "netstat", "ibstat", "ibv_devinfo", "ibv_devices", "lspci", "lsof", "ps", "top",
	"rocm-smi", "scontrol", "squeue", "sinfo", "sacct", "printf", "tee", "head", "tail", "grep", "awk", "sed",
	"find", "ln", "wget", "curl", "unzip", "zip", "gzip", "gunzip", "xargs", "chmod", "chown", "scp", "ssh", "stat",
	"wc", "sort", "uniq", "cut", "tr", "basename", "dirname", "realpath", "readlink", "seq", "conda", "mamba",
	"micromamba", "apptainer", "singularity", "docker", "podman", "podman-hpc", "enroot", "huggingface-cli", "hf", "aws", "gsutil")

// stagingScript reports whether a shell script's name says it stages the
// job's data or software rather than trains (srun --ntasks-per-node=1
// copy-data.sh, install_deps.sh): a staging word and no training word.
func stagingScript(w string) bool {
	base := strings.ToLower(path.Base(w))
	if ext := path.Ext(base); ext != ".sh" && ext != ".bash" {
		return false
	}
	staging := false
	for _, t := range strings.FieldsFunc(strings.TrimSuffix(base, path.Ext(base)), func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		switch t {
		case "copy", "stage", "staging", "download", "untar", "extract", "sync", "install", "setup", "cleanup", "clean":
			staging = true
		case "train", "training", "finetune", "pretrain", "run", "launch", "main":
			return false
		}
	}
	return staging
}

// setupModules and setupPrograms are what jobs run with python before
// training: installers, environment checks.
var (
	setupModules = set("pip", "venv", "ensurepip", "site", "json.tool", "http.server", "torch.utils.collect_env",
		"wandb", "huggingface_hub", "nltk.downloader", "spacy", "pytest", "unittest", "compileall", "timeit", "cProfile")
	setupPrograms = set("setup.py", "pip", "pip3", "conda", "mamba", "nvcc")
)

// notModels are words that name a tool, never a model: wrappers, launchers,
// shells and the commands jobs run beside their training.
var notModels = set("singularity", "apptainer", "docker", "podman", "podman-hpc", "enroot", "shifter", "ch-run", "bash", "sh",
	"zsh", "uv", "pixi", "poetry", "conda", "micromamba", "nvidia-smi", "python", "python3", "srun",
	"mpirun", "torchrun", "deepspeed", "accelerate", "env", "time", "nohup", "numactl", "stdbuf", "exec", "pip",
	"echo", "hostname", "sleep", "module", "tune", "lightning", "composer", "monai", "curriculum", "nsys", "ncu", "true", "none", "null",
	"pytest", "jupyter", "tensorboard", "wandb", "huggingface-cli", "hf", "git", "cat", "tee", "run", "train",
	"scratch", "resume", "random", // nanoGPT's --init_from=scratch: no model named
	"websocket", "server", "client", "remote", "api", "http", "grpc", // policy=websocket: how the model is reached, not which
	"both", "all", "default", "auto", "custom", "any", "other", "same", // model=both: a choice among the program's own
	"openai", "facebook", "google", "microsoft", "meta", "nvidia", "laion", "imagenet", // --pretrained openai: whose weights, not which model
	// -a sigmoid, --arch relu: an activation function, a layer's, no model
	"sigmoid", "relu", "leaky_relu", "leakyrelu", "prelu", "elu", "selu", "gelu", "silu", "swish", "mish", "tanh", "softplus", "softmax")

// placeholder reports whether a name is one a shared script leaves for
// its user to fill in: your_working_directory, your-model, path_to_ckpt,
// xxx, changeme (YourTTS is a model: the word must end at "your").
func placeholder(name string) bool {
	n := strings.ToLower(name)
	for _, p := range []string{"your_", "your-", "path_to_", "path-to-", "replace_", "xxx"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	switch n {
	case "your", "changeme", "change_me", "todo", "placeholder", "fixme", "path_to", "dummy", "modelname", "model_name", "mymodel", "my_model":
		return true
	}
	return false
}

// templateHole reports whether a name holds a template's hole, left for a
// tool or a person to fill: {model}, <MODEL>, %(model)s, <YOUR_JOB_NAME>.
func templateHole(s string) bool { return strings.ContainsAny(s, "{}<>%") }

// validModel reports whether a name can be a model: not an expansion the
// script does not show, a number, a tool or a container image.
func validModel(m string) bool {
	if m == "" || unexpanded(m) || isNumber(m) || notModels[m] || strings.HasPrefix(m, "python") || isCommitHash(m) ||
		templateHole(m) || strings.Contains(strings.TrimRight(m, "+"), "+") || // joint+morph: a combination, no model's name (dimenet++ is one)
		isBoolWord(m) || variantWords[m] || isSize(m) || // pretrained=False, model=small: a switch or a size, no model
		dimensionWord(m) || // --model_type 3d: how many dimensions, no model
		scaleWord(m) || // --MODEL b6: EfficientNet's scale, no model alone
		placeholder(path.Base(m)) {
		return false
	}
	words := strings.FieldsFunc(m, func(r rune) bool { return r == '_' || r == '-' })
	switch {
	case len(words) > 1 && !slices.ContainsFunc(words, func(w string) bool { return !variantWords[w] && !modelWords[w] }):
		return false // model_small, base_model: a size of no named model
	case len(words) > 1 && variantWords[words[0]] && !slices.ContainsFunc(words[1:], func(w string) bool { return !sampleRate.MatchString(w) }):
		return false // MMAudio's --model small_16k: a size and a sample rate of the program's own model
	case len(words) > 1 && slices.Contains(words, "model") && slices.ContainsFunc(words, func(w string) bool { return runStateWords[w] }) &&
		!slices.ContainsFunc(words, familyWord):
		return false // tiktok_ft_model, original_trained_model: a run's weights, described, of no named model
	case progressAt(words):
		return false // model_step_3000, ckpt-epoch-12: a point a run reached, no model's name
	}
	// A checkpoint directory's own name says nothing: .../checkpoint-500,
	// out/final, checkpoints/best (a directory word is no hub org).
	if base := path.Base(m); !hubID(m) {
		if checkpointName(base) {
			return false
		}
		if strings.HasPrefix(base, "output") || runWeightsName(base) {
			return false
		}
		switch base {
		case "model", "models", "weights", "pretrained", "hf", "base", "init", "merged", "export", "exported":
			return false
		}
	} else {
		// repo/final_model.int8.ptz: a run's own last or best weights,
		// whatever directory holds them.
		if slices.ContainsFunc(runWeightsWords, func(p string) bool {
			rest, ok := strings.CutPrefix(base, p)
			return ok && (rest == "" || strings.ContainsRune("_-.", rune(rest[0])))
		}) {
			return false
		}
	}
	for _, ext := range []string{".sif", ".sqsh", ".simg", ".img", ".sh", ".yaml", ".yml", ".json", ".txt", ".csv", ".tsv",
		".jsonl", ".vocab", ".model", ".spm", ".bpe", ".tar", ".gz", ".zip"} {
		if strings.HasSuffix(m, ext) {
			return false
		}
	}
	return !strings.Contains(m, "://")
}

// inRunDir reports whether a path lies in a directory runs write their
// results to (output/dnerf/bouncingballs, runs/exp3): a name there is the
// run's, and names a model only where a known family is in it.
func inRunDir(v string) bool {
	dirs := strings.Split(strings.ToLower(path.Dir(strings.TrimRight(v, "/"))), "/")
	return slices.ContainsFunc(dirs, func(d string) bool { return runDirs[d] || isoDate(d) })
}

// runDirs are where runs write (Hydra's among them: hydra_jobs/singlerun,
// multirun), and a directory named for a date (outputs/2024-10-10/12-00-00)
// is a run's too.
var runDirs = set("output", "outputs", "out", "runs", "results", "result", "save", "saved", "logs", "log", "exp", "exps",
	"experiments", "multirun", "singlerun", "hydra_jobs", "hydra_outputs", "lightning_logs", "wandb")

// isoDate reports whether a name is a date written year first: 2024-10-10,
// 2024_10_10, 20241010.
func isoDate(d string) bool {
	if len(d) != 8 && len(d) != 10 || d[0] < '0' || d[0] > '9' {
		return false // the common case, a name, at no cost
	}
	if len(d) == 10 {
		if d[4] != d[7] || d[4] != '-' && d[4] != '_' {
			return false
		}
		d = d[:4] + d[5:7] + d[8:]
	}
	return isDigits(d) && (strings.HasPrefix(d, "19") || strings.HasPrefix(d, "20")) && d[4:6] >= "01" && d[4:6] <= "12" &&
		d[6:8] >= "01" && d[6:8] <= "31"
}

// taskName reports whether a name says only what a model does
// (language_model, image_classification, single_stage_detector: MLPerf's
// MODEL_NAME for its benchmarks): no claim of which model, though it may
// stand in for the workload, as a directory named translation does.
func taskName(m string) bool {
	return !slices.ContainsFunc(strings.FieldsFunc(m, func(r rune) bool { return r == '_' || r == '-' }),
		func(w string) bool { return !taskWords[w] })
}

// taskWords name what a model does, not which model it is.
var taskWords = set("language", "large", "model", "models", "image", "classification", "classifier", "object", "detection",
	"detector", "single", "stage", "speech", "recognition", "segmentation", "recommendation", "translation", "generation",
	"text", "regression")

// adapterPathFlags give a fine-tuned adapter (LoRA, PEFT) to load over a
// base model.
var adapterPathFlags = set("adapter_path", "adapter_dir", "lora_path", "lora_dir", "lora_weights", "peft_path",
	"peft_model", "adapter_name_or_path", "lora_adapter")

// sizedModelInPath is the model with its size that a directory of a path
// names, the deepest first (.../llama3_2_3B_lora/epoch_0 is llama3.2-3b);
// "" where none does.
func sizedModelInPath(v string) string {
	if unexpanded(v) && !strings.Contains(v, "/") {
		return ""
	}
	parts := strings.Split(strings.Trim(v, "/"), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		if unexpanded(parts[i]) {
			continue
		}
		if m := familyModel(parts[i]); hasSize(m) && validModel(m) {
			return m
		}
	}
	return ""
}

// runWeightsDir reports whether a path's last name is one a run gives
// its own weights (runs/qwen7b/final, out/llama-3-8b/best_model).
func runWeightsDir(v string) bool {
	return runWeightsName(strings.ToLower(path.Base(strings.TrimRight(v, "/"))))
}

// runWeightsName reports whether a lower-case name starts as a run names
// its own weights (final, best_model, last.ckpt).
func runWeightsName(base string) bool {
	return slices.ContainsFunc(runWeightsWords, func(p string) bool { return strings.HasPrefix(base, p) })
}

// runWeightsWords start the names a run gives its own weights (final,
// best_model, last.ckpt).
var runWeightsWords = []string{"final", "best", "last", "latest"}

// runStateWords say what a run did to its weights: original_trained_model,
// model_best, grpo_working_params_model.
var runStateWords = set("trained", "finetuned", "tuned", "ft", "best", "final", "last", "latest", "saved", "original",
	"working", "params", "output", "new", "old", "tmp", "temp")

// progressWords count how far a run has gone: model_step_3000.
var progressWords = set("step", "steps", "epoch", "epochs", "iter", "iters", "iteration")

// progressAt reports whether a name's words hold a progress word followed
// by its count (step 3000, not the 1000000-step a release is named for).
func progressAt(words []string) bool {
	for i := 0; i+1 < len(words); i++ {
		if progressWords[words[i]] && isDigits(words[i+1]) {
			return true
		}
	}
	return false
}

// modelWords say "a model" without naming one.
var modelWords = set("model", "models", "net", "network", "arch", "default", "pretrained", "weights", "checkpoints")

// namesAModel reports whether a model read from a job name names one: not
// empty, not a family word alone (qwen), not a generation alone (qwen1.5).
func namesAModel(m string) bool {
	familyAlone := bareFamily(m) && !strings.ContainsAny(m, "0123456789")
	generationAlone := strings.Contains(m, ".") && !strings.Contains(m, "-") && !runInSize(m)
	return m != "" && !familyAlone && !generationAlone
}

// runInSize reports whether a name ends in a size run into its word, after
// a letter: bert3.9b, opt1.3b (not qwen1.5, a generation).
func runInSize(m string) bool {
	if len(m) < 3 {
		return false
	}
	body := m[:len(m)-1]
	k := strings.LastIndexFunc(body, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	return k >= 0 && body[k] >= 'a' && body[k] <= 'z' && isSize(m[k+1:])
}

// checkpointDir reports whether a path's last name is a checkpoint's
// (checkpoint-368, global_step500, ckpt_best), which names no model.
func checkpointDir(v string) bool {
	return checkpointName(strings.ToLower(path.Base(v)))
}

// checkpointName reports whether a lower-case name is a checkpoint's.
func checkpointName(base string) bool {
	for _, p := range []string{"checkpoint", "ckpt", "global_step", "step_", "epoch_", "ema_"} { // ema_0.9999_009000.pt: guided-diffusion's averaged weights
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}

// isCommitHash reports whether a word is a git commit or content hash (a
// hub snapshot's directory), which names no model.
func isCommitHash(w string) bool {
	return len(w) >= 32 && strings.Trim(w, "0123456789abcdef") == ""
}

// splitFamilies are the families whose names are also written as two
// words: efficient_net_b4, mobile-net-v2, conv_next_tiny.
var splitFamilies = []struct{ head, tail string }{{"efficient", "net"}, {"mobile", "net"}, {"res", "net"}, {"dense", "net"},
	{"shuffle", "net"}, {"squeeze", "net"}, {"reg", "net"}, {"conv", "next"}, {"tiny", "llama"}, {"e", "branchformer"}}

// joinSplitFamilies writes the two-word spellings of splitFamilies as the
// one word modelFamilies know, where the first begins a word of s.
func joinSplitFamilies(s string) string {
	for _, f := range splitFamilies {
		for from := 0; ; {
			i := strings.Index(s[from:], f.head)
			if i < 0 {
				break
			}
			i += from
			from = i + len(f.head)
			j := i + len(f.head)
			if i > 0 && !strings.ContainsRune("/_- .", rune(s[i-1])) || j >= len(s) || (s[j] != '_' && s[j] != '-') ||
				!strings.HasPrefix(s[j+1:], f.tail) {
				continue
			}
			s = s[:j] + s[j+1:]
		}
	}
	return s
}

// modelFamilies are the names model families go by, as they appear in
// config file names and job names.
var modelFamilies = []string{"llama", "mistral", "mixtral", "qwen", "gemma", "phi", "gpt", "opt", "bloom",
	"falcon", "t5", "bert", "roberta", "deberta", "vit", "resnet", "deepseek", "olmo", "pythia", "mpt",
	"starcoder", "codellama", "vicuna", "yi", "baichuan", "internlm", "chatglm", "bart", "whisper", "clip",
	"efficientnet", "convnext", "swin", "unet", "sdxl", "nemotron", "granite", "smollm", "tinyllama", "stablelm",
	"jais", "llava", "blip", "dinov2", "dino", "wav2vec2", "hubert", "wavlm", "conformer", "detr", "segformer",
	"mask2former", "electra", "xlnet", "albert", "distilbert", "densenet", "vgg", "mobilenet", "regnet", "deit",
	"beit", "siglip", "olmoe", "dbrx", "rwkv", "mamba", "bloomz", "flan", "ernie", "minicpm", "idefics", "pixtral",
	"yolo", "sam2", "stable-diffusion", "pi0", "blenderbot", "pegasus", "mbart", "marian", "longformer", "bigbird",
	"esm2", "videomae", "swinv2", "wrn", "shufflenet", "squeezenet", "stylegan", "mt5", "umt5", "byt5", "nllb", "minilm", "mpnet",
	// Named by their depth or version more often than alone.
	"resnext", "seresnet", "res2net", "inception", "darknet", "cspdarknet", "hrnet", "ghostnet", "efficientdet",
	"glm", "internvl", "paligemma", "cogvlm", "minigpt", "codegen", "florence", "kosmos", "openflamingo", "instructblip",
	"deepspeech", "styletts", "cogvideox"}

// sampleRate is an audio model's sample rate as its name gives it: 16k, 44k, 48khz.
var sampleRate = regexp.MustCompile(`^[0-9]{1,3}(\.[0-9])?k(hz)?$`)

// latentShape is a latent's height, width and channels: 32x32x4.
var latentShape = regexp.MustCompile(`^[0-9]{1,4}x[0-9]{1,4}x[0-9]{1,4}$`)

// numberedFamilies are the families whose generations are numbers written
// apart from their name (llama-2, gpt-3, phi-3, mamba-2, blip-2): after any
// other family (unet_2, resnet_3) a number alone is a run's.
var numberedFamilies = set("llama", "gpt", "phi", "qwen", "gemma", "mamba", "falcon", "olmo", "yi", "glm", "stablelm",
	"granite", "nemotron", "florence", "kosmos", "stable-diffusion", "rwkv", "internlm", "minicpm", "codegen", "deepspeech",
	"styletts", "cogvlm", "llava", "blip", "yolo", "minigpt", "idefics", "paligemma", "internvl", "stylegan", "t5", "mistral",
	"mixtral", "chatglm", "baichuan", "starcoder", "smollm", "pythia", "ernie", "wav2vec", "sam", "dino", "deepseek",
	"alphafold", "rosettafold")

// archModels are architectures whose name alone names the model, as a
// family's does not (llama names no model, schnet does): interatomic
// potentials, protein folding, weather, operator learning, speech and
// audio, and generative models, as their papers and codebases spell them.
// familyModel reads them as families; bareFamily does not count them.
var archModels = []string{"schnet", "painn", "dimenet", "nequip", "mace", "egnn", "gemnet", "equiformer",
	"alphafold", "openfold", "esmfold", "rosettafold", "proteinmpnn", "fourcastnet", "graphcast", "sfno", "afno",
	"deeponet", "pointnet", "dgcnn", "encodec", "musicgen", "audiogen", "hifigan", "tacotron", "fastspeech",
	"wavenet", "waveglow", "ddpm", "ddim", "vqvae", "vqgan", "pix2pix", "cyclegan",
	// Vision: classification, detection, medical segmentation.
	"xception", "alexnet", "mnasnet", "pnasnet", "retinanet", "centernet", "cornernet", "fcos", "segnet",
	"swinunetr", "transunet", "unetr", "medsam",
	// Self-supervised and multimodal.
	"simclr", "byol", "swav", "simsiam", "vicreg", "ijepa", "flamingo",
	// Speech and audio.
	"ebranchformer", "branchformer", "ecapa", "rawnet", "aasist", "quartznet", "citrinet", "squeezeformer", "zipformer", "melgan",
	"speecht5", "xtts",
	// Generative, 3D and video.
	"dcgan", "biggan", "controlnet", "pixart", "animatediff", "slowfast", "timesformer",
	// Graphs, molecules, point clouds.
	"graphsage", "graphormer", "rfdiffusion", "diffdock", "equibind", "pointpillars", "votenet",
	// Time series and recommendation.
	"informer", "autoformer", "fedformer", "patchtst", "timesnet", "deepfm", "dlrm", "sasrec", "bert4rec", "lightgcn",
	"tabnet", "reformer", "santacoder",
	// Operator learning, physics-informed and spatiotemporal networks,
	// retrieval, segmentation and RL as their codebases name them.
	"fno", "pinn", "convlstm", "roformer", "colbert", "nnunet", "dqn"}

// isArch is archModels as a set.
var isArch = set(archModels...)

// The architectures are families too, where familyModel looks for one.
func init() { modelFamilies = append(modelFamilies, archModels...) }

// familyModel reads a model from a name that mentions one: a config file
// ("configs/llama2-7b.yaml", "examples/train_lora/llama3_lora_sft.yaml",
// torchtune's "llama3/8B_lora") or a job name ("ft-mistral-7b"): the family
// word and the size after it ("llama3-8b"), or "" when none is named.
func familyModel(s string) string {
	s = joinSplitFamilies(strings.ToLower(s))
	if !strings.Contains(s, "cased_l-") {
		// the common case, without the regexp
	} else if m := googleBERT.FindStringSubmatch(s); m != nil {
		// Google's BERT release directories: uncased_L-12_H-768_A-12 is BERT-Base, uncased.
		switch m[2] + "/" + m[3] {
		case "12/768":
			return "bert-base-" + m[1] + "cased"
		case "24/1024":
			return "bert-large-" + m[1] + "cased"
		}
	}
	if unexpanded(s) {
		if s = path.Base(s); unexpanded(s) {
			return "" // only a hidden directory is allowed: $CFG/llama2-7b.yaml
		}
	}
	switch ext := path.Ext(s); ext {
	case ".yaml", ".yml", ".json", ".toml", ".py", ".sh", ".cfg", ".conf", ".ini", ".gin":
		s = strings.TrimSuffix(s, ext) // not the ".3b-pretrain" of gpt3-1.3b-pretrain
	default:
		s = strings.TrimSuffix(s, weightsExt(s))
	}
	if i := strings.LastIndexByte(s, '/'); i >= 0 && i < len(s)-1 {
		// The file's own name says more than its directories:
		// t5/gin_configs/t5-base.gin is t5-base.
		// (A name no family's, fin-8b of config_eng_fin_8b.yaml, waits:
		// recipes/llama-3/ makes it llama-3-8b below.)
		if m := familyModel(s[i+1:]); m != "" && !bareFamily(m) && (strings.ContainsAny(m, "-.") || hasDigit(m)) && familyOf(m) != "" {
			return m
		}
	}
	nameSep := func(r rune) bool { return r == '/' || r == '_' || r == '-' || r == ' ' }
	toks := splitKinds(strings.FieldsFunc(s, nameSep))
	fileStart := 0 // the first of the file name's words, after its directories'
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		fileStart = len(splitKinds(strings.FieldsFunc(s[:i], nameSep)))
	}
	if m := detectorIn(toks); m != "" {
		return m
	}
	for i, t := range toks {
		if t == "ldm" && i+2 < len(toks) && (toks[i+1] == "vq" || toks[i+1] == "kl") && isDigits(strings.TrimPrefix(toks[i+2], "f")) {
			// latent-diffusion's configs (celebahq-ldm-vq-4.yaml,
			// cin-ldm-vq-f8.yaml): an LDM by its first stage's kind and factor.
			return "ldm-" + toks[i+1] + "-" + toks[i+2]
		}
		if t == "autoencoder" && i+2 < len(toks) && toks[i+1] == "kl" && latentShape.MatchString(toks[i+2]) {
			// latent-diffusion's first stages (autoencoder_kl_8x8x64.yaml):
			// a KL autoencoder by the shape of its latent.
			return "autoencoder-kl-" + toks[i+2]
		}
	}
	sized := "" // any name followed by a size, when no family is named: zephyr-7b, mymodel-350m
	for i, t := range toks {
		fam := ""
		for _, m := range modelFamilies {
			if !strings.HasPrefix(t, m) {
				continue
			}
			rest := t[len(m):]
			if isArch[m] && len(rest) > 1 && !dimensionWord(rest) {
				continue // pointnet2 and fastspeech2 are versions, pointnet12 a run's counter
			}
			if versionTail(rest) || isSize(rest) || m == "yolo" && yoloScale(rest) || dimensionWord(rest) {
				fam = t // llama3, resnet50, smollm3b, yolov8m; fno2d and unet3d, in as many dimensions
				if v, ok := runInVersions[t]; ok {
					fam = v // qwen25 is qwen2.5, llama31 llama3.1
				}
				break
			} else if variantWords[rest] && len(rest) > 1 {
				fam = m + "-" + rest // LlamaTiny, BertLarge: a variant run into its family
				break
			} else if patchedFamilies[m] && patchVariant(rest) {
				fam = m + "-" + rest // vitl16, dinov2_vitg14's vitg14: a ViT's size and patch run into its family
				break
			}
		}
		if fam == "" {
			named := hasLetter(t) && !isSize(t) && len(t) > 2 && !genericPrograms[t] && !pathWords[t] && !jobWords[t] && !dateWord(t) &&
				!stemWords[t] && !dataWords[t] && !pointVersion(t)
			switch {
			case sized != "" || !named:
			case i+1 < len(toks) && isSize(toks[i+1]):
				sized = t + "-" + toks[i+1]
				if k := tokAt(toks, i+2); afterSize(k) {
					sized += "-" + k // zephyr-7b-beta
				}
			case runInBillions(t) != "":
				sized = runInBillions(t) // lora_medgemma27b.yaml: a name and its billions run together
			case i+2 < len(toks) && (versionTail(toks[i+1]) || pointVersion(toks[i+1])) && isSize(toks[i+2]):
				sized = t + "-" + toks[i+1] + "-" + toks[i+2] // bdc-1.0-100m, apertus-1p5-8b
			}
			continue
		}
		if strings.Contains(fam, "-") {
			return fam
		}
		j := i + 1
		if strings.HasPrefix(fam, "yolo") && j < len(toks) && yoloTasks[toks[j]] {
			return fam + "-" + toks[j] // yolov8m-seg
		}
		if j < len(toks) && isDigits(toks[j]) && len(toks[j]) <= 2 &&
			(numberedFamilies[fam] || hasDigit(fam[len(fam)-1:]) || j+1 < len(toks) && isSize(toks[j+1])) {
			if last := fam[len(fam)-1]; last >= '0' && last <= '9' {
				fam += "." + toks[j] // torchtune's qwen2_5, llama3_1
			} else if j+2 < len(toks) && len(toks[j]) == 1 && len(toks[j+1]) == 1 && isDigits(toks[j+1]) && isSize(toks[j+2]) {
				fam += toks[j] + "." + toks[j+1] // qwen_2_5_7B: a version's two numbers, then the size
				j++
			} else {
				fam += "-" + toks[j] // llama-2-7b
			}
			j++
		} else if j < len(toks) && len(toks[j]) <= 4 && isVersion(toks[j]) {
			fam += "-" + toks[j] // llama-3.1-8b
			j++
		} else if j+1 < len(toks) && versionWord(toks[j]) && (isSize(toks[j+1]) || variantWords[toks[j+1]]) {
			fam += "-" + toks[j] // deepseek_v3_1b, yolo_v8_l
			j++
		} else if fam == "hrnet" && j < len(toks) && len(toks[j]) > 1 && toks[j][0] == 'w' && isDigits(toks[j][1:]) {
			fam += "-" + toks[j] // hrnet_w18: HRNet's width, its size
			j++
		} else if j < len(toks) && familyReleases[fam][toks[j]] {
			fam += "-" + toks[j] // dino_v3_test: a family's release, before a job's own words (roberta-v1 is the run's)
			j++
		} else if fam == "deepseek" && j < len(toks) && (toks[j] == "r1" || versionWord(toks[j])) {
			// DeepSeek names its releases with a word (deepseek-v3,
			// deepseek-r1), and R1's distillations run on into the student
			// trained: deepseek-r1-distill-qwen-1.5b.
			fam += "-" + toks[j]
			j++
			if j+1 < len(toks) && toks[j] == "distill" {
				if student := familyModel(strings.Join(toks[j+1:], "-")); student != "" && !bareFamily(student) {
					return fam + "-distill-" + student
				}
			}
		}
		if j+1 < len(toks) && modelKinds[toks[j]] && isSize(toks[j+1]) {
			fam += "-" + toks[j] // qwen2.5-vl-3b, qwen2.5-coder-7b
			j++
		} else if j+1 == len(toks) && modelKinds[toks[j]] {
			return fam + "-" + toks[j] // llama_vision.yaml, qwen2.5_vl: the kind ends the name
		} else if j < len(toks) && modelKinds[toks[j]] && !tunedKinds[toks[j]] && fam != strings.TrimRight(fam, "0123456789.") {
			fam += "-" + toks[j] // qwen2_5vl_full_sft.yaml: a versioned family's kind, before the config's own words
			j++
		}
		plain := fam // the family and its version, before any size or variant
		if j < len(toks) && isSize(toks[j]) {
			switch k := tokAt(toks, j+1); {
			case afterSize(k):
				fam += "-" + toks[j] + "-" + k // llama-2-13b-chat, qwen2.5-7b-instruct, zephyr-7b-beta
			case modelKinds[k]:
				fam += "-" + k + "-" + toks[j] // Qwen25-7B-VL is qwen2.5-vl-7b, as Qwen names it
			default:
				fam += "-" + toks[j]
			}
		} else if tunedKinds[tokAt(toks, j)] && isSize(tokAt(toks, j+1)) {
			fam += "-" + toks[j+1] + "-" + toks[j] // Qwen2VL_Instruct_7B is qwen2-vl-7b-instruct, as Qwen names it
		} else if j < len(toks) && patchedFamilies[fam] && len(toks[j]) > 1 && strings.Contains("tsblhg", toks[j][:1]) && isDigits(toks[j][1:]) {
			fam += "-" + toks[j] // vit_b16 is ViT-B/16
		} else if l, ok := yoloScales[tokAt(toks, j)]; ok && strings.HasPrefix(fam, "yolo") && fam != "yolo" {
			fam += l // YOLOv8-small is yolov8s, as Ultralytics names it
		} else if j < len(toks) && (variantWords[toks[j]] && (len(toks[j]) > 1 || !letterless[strings.TrimRight(fam, "0123456789.")]) || scaleWord(toks[j])) {
			// roberta-base, gpt2-medium, convnext_small, vit_b_16,
			// segformer_b4 and efficientnet_b0 (EfficientNet's scales b0-b7)
			// (a letter after a family sized otherwise is a run's: eval_unet_t)
			fam += "-" + toks[j]
			if j+1 < len(toks) && len(toks[j]) == 1 && isDigits(toks[j+1]) && len(toks[j+1]) <= 2 {
				fam += "-" + toks[j+1]
			} else if k := tokAt(toks, j+1); k == "cased" || k == "uncased" {
				fam += "-" + k // bert-base-uncased: BERT's vocabularies are two models
			}
		}
		if fam == plain && j <= fileStart && fileStart < len(toks) {
			// recipes/llama-3/sft/config_70b.yaml: the family in a
			// directory, its size in the file's name.
			var size string
			for _, t := range toks[fileStart:] {
				if isSize(t) && (size == "" || size == t) {
					size = t
				} else if isSize(t) {
					size = "?" // two sizes: neither
				}
			}
			if size != "" && size != "?" {
				fam += "-" + size
			}
		}
		if fam == plain && i < fileStart {
			// recipes/qwen/Qwen2.5-3B-Instruct/grpo/config.yaml: a family's
			// directory holding one of its models (sized, or a variant) is that model's.
			if m := familyModel(pathAfterWord(s, i, nameSep)); strings.HasPrefix(m, fam) && sizedOrVariant(m) {
				return m
			}
		}
		if fam == plain && bareFamily(fam) {
			// finetune_hubert_xtralarge_linear_vicuna_7b.sh: a family's
			// bare word, then a sized model, in one name: the sized one.
			if m := familyModel(strings.Join(toks[i+1:], "_")); hasSize(m) && familyOf(m) != "" && !strings.HasPrefix(m, fam) {
				return m
			}
		}
		if fam == plain && i < fileStart && bareFamily(fam) && !startsDirectory(s, i, nameSep) {
			// git/UCF-VIT/configs/xct/base_config.yaml: a family word inside
			// a directory's name, with no size in the file's name, is a
			// project's (examples/t5/ and recipes/llama-3/ are the family's).
			continue
		}
		return fam
	}
	return sized
}

// dateWord reports whether a word is a date a run is named for: a month,
// with its day run into it (jun6, march12).
func dateWord(t string) bool {
	head := strings.TrimRight(t, "0123456789")
	if len(head) < 3 {
		return false
	}
	for _, m := range []string{"january", "february", "march", "april", "may", "june", "july", "august", "september",
		"october", "november", "december"} {
		if head == m || len(head) <= 4 && strings.HasPrefix(m, head) {
			return true // jan, sept
		}
	}
	return false
}

// startsDirectory reports whether the i-th of a path's words (as
// familyModel splits them) is the first of a directory's name.
func startsDirectory(s string, i int, sep func(rune) bool) bool {
	n := 0
	for _, dir := range strings.Split(s, "/") {
		if n == i {
			return true
		}
		if n += len(splitKinds(strings.FieldsFunc(dir, sep))); n > i {
			return false
		}
	}
	return false
}

// pathAfterWord returns what of path s follows the directory that holds
// its i-th word (as familyModel splits them): "" when the word is in the
// file's name.
func pathAfterWord(s string, i int, sep func(rune) bool) string {
	n := 0
	for {
		dir, rest, ok := strings.Cut(s, "/")
		if !ok {
			return ""
		}
		if n += len(splitKinds(strings.FieldsFunc(dir, sep))); n > i {
			return rest
		}
		s = rest
	}
}

// runInBillions splits a name run into its size in billions (medgemma27b
// is medgemma-27b, mymodel1.5b mymodel-1.5b), or returns "": four letters
// at least before it, so that counters (exp3b, run1b) are no model.
func runInBillions(t string) string {
	i := strings.IndexFunc(t, func(r rune) bool { return r >= '0' && r <= '9' })
	if i < 4 || !strings.HasSuffix(t, "b") || !isSize(t[i:]) || lowerLetters(t[:i]) != i || dataWords[t[:i]] {
		return "" // laion2b and datacomp1b count a data set's samples
	}
	return t[:i] + "-" + t[i:]
}

// runInVersions are families' point releases written without the point,
// as paths and job names often do.
var runInVersions = map[string]string{"qwen15": "qwen1.5", "qwen25": "qwen2.5", "llama31": "llama3.1",
	"llama32": "llama3.2", "llama33": "llama3.3", "ebranchformer": "e-branchformer"}

// splitKinds splits a model's kind from a version run into it:
// qwen2vl is qwen2 vl, qwen2_5vl's 5vl is 5 vl, qwen25omni is qwen25 omni.
func splitKinds(toks []string) []string {
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if last := t[len(t)-1]; last < 'a' || last > 'z' || strings.IndexFunc(t, unicode.IsDigit) < 0 {
			continue // the common case: no kind after a digit
		}
		for _, k := range runInKinds {
			head, ok := strings.CutSuffix(t, k)
			if ok && head != "" && head[len(head)-1] >= '0' && head[len(head)-1] <= '9' {
				toks = slices.Insert(slices.Clone(toks), i+1, k)
				toks[i] = head
				i++
				break
			}
		}
	}
	return toks
}

// runInKinds are the modelKinds that run into a version (qwen2vl), longest
// first.
var runInKinds = []string{"coder", "vision", "audio", "omni", "math", "code", "neox", "chat", "moe", "neo", "vl"}

// tokAt returns toks[i], or "" past the end.
func tokAt(toks []string, i int) string {
	if i < len(toks) {
		return toks[i]
	}
	return ""
}

// yoloScales are Ultralytics' scale letters by name.
var yoloScales = map[string]string{"nano": "n", "small": "s", "medium": "m", "large": "l", "xlarge": "x"}

// patchedFamilies name their variants by scale and patch size: vit_b16,
// deit_s16, clip_l14.
var patchedFamilies = set("vit", "deit", "clip", "siglip", "beit")

// letterless are families no one sizes by a letter (ViT-S, Swin-T and
// ConvNeXt-B are; a U-Net or a ResNet is not): a letter after them is a
// run's mark.
var letterless = set("unet", "resnet", "bert", "roberta", "gpt", "llama", "t5", "bart", "whisper", "wav2vec", "densenet",
	"vgg", "lstm", "gcn", "gnn", "mlp", "cnn", "transformer", "vae", "gan", "vqvae", "diffusion")

// yoloTasks are the tasks of Ultralytics' model names: yolov8m-seg.
var yoloTasks = set("seg", "cls", "pose", "obb")

// yoloScale reports whether what follows "yolo" is a version and a scale:
// v8m, v5l6, 11n.
func yoloScale(s string) bool {
	s = strings.TrimPrefix(s, "v")
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i <= 0 || i > 2 {
		return false
	}
	scale := strings.TrimSuffix(s[i:], "6")
	return len(scale) == 1 && strings.Contains("nsmlx", scale)
}

// hasDigit reports whether s has a digit: resnet50, llama3.
func hasDigit(s string) bool {
	return strings.ContainsAny(s, "0123456789")
}

// bareFamily reports whether a name is a family word alone (gpt, resnet,
// bert), with no version, size or variant to say which model.
func bareFamily(m string) bool {
	return slices.Contains(modelFamilies, m) && !isArch[m]
}

// modelKinds name a kind of model within a family, before its size
// (qwen2.5-vl-3b).
var (
	// familyReleases are the releases families name with a v-word apart
	// from the family's (DINOv3, ConvNeXt V2): any other v-word after a
	// family is the job's own version.
	familyReleases = map[string]map[string]bool{"dino": set("v2", "v3"), "deit": set("v3"), "convnext": set("v2"),
		"efficientnet": set("v2"), "mobilenet": set("v2", "v3", "v4"), "swin": set("v2")}
	modelKinds = set("vl", "coder", "math", "code", "vision", "moe", "audio", "omni", "chat", "neo", "neox", "j", "mae")
	// tunedKinds name a family's released fine-tune, after its size: a
	// person names llama-2-13b-chat, not llama-2-13b.
	tunedKinds = set("chat", "instruct", "it")
	// pathWords are the directories of a config's path, never a model's name.
	pathWords = set("configs", "config", "conf", "cfg", "recipes", "recipe", "examples", "scripts", "yamls",
		"exp", "experiments", "model", "models", "checkpoints", "outputs", "data", "results", "runs", "logs", "weights",
		"pretrained", "pretrained_models", "pretrained_weights", "ckpt", "ckpts", "checkpoint", "saved_models")
)

// afterSize reports whether a word after a model's size is still its name:
// a released fine-tune's kind (llama-2-13b-chat) or a release
// (zephyr-7b-beta).
func afterSize(k string) bool { return tunedKinds[k] || k == "beta" || k == "alpha" }

// isVersion reports whether a word is a version: 3.1, 2.5.
func isVersion(s string) bool {
	a, b, ok := strings.Cut(s, ".")
	return ok && isDigits(a) && isDigits(b)
}

// variantWords name a model's size within its family.
var variantWords = set("tiny", "mini", "small", "base", "medium", "large", "xl", "xxl", "huge", "giant", "nano",
	"b", "l", "s", "h", "g", "t")

// versionTail reports whether what follows a family word is a version or
// size ("2", "3.1", "50", "-") rather than more of another word.
func versionTail(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'v') {
			return false
		}
	}
	return true
}

// isSize reports whether a word is a model size: 7b, 1.3b, 350m, 8x7b.
func isSize(s string) bool {
	if len(s) < 2 {
		return false
	}
	switch s[len(s)-1] {
	case 'b', 'm', 't':
	default:
		return false
	}
	num := s[:len(s)-1]
	if a, b, ok := strings.Cut(num, "x"); ok {
		return isDigits(a) && isDigits(b)
	}
	a, b, dot := strings.Cut(num, ".")
	return isDigits(a) && (!dot || isDigits(b))
}

// sizes reports whether a model name is another's, a family word with
// at most a version, with its size: llama3-70b for llama3, bert-base for bert.
func sizes(sized, bare string) bool {
	if bare == "" || sized == bare || !strings.HasPrefix(SquashModel(sized), SquashModel(bare)) ||
		SquashModel(familyModel(bare)) != SquashModel(bare) {
		return false
	}
	// A family word, or a family and its version alone (gpt2, llama2), is
	// sized by a variant too: gpt2-large; a YOLO by its scale: yolo11x.
	return hasSize(sized) && !hasSize(bare) || (bareFamily(bare) || !strings.Contains(bare, "-")) && strings.HasPrefix(sized, bare+"-") ||
		strings.HasPrefix(bare, "yolo") && yoloScale(strings.TrimPrefix(sized, "yolo")) && !yoloScale(strings.TrimPrefix(bare, "yolo"))
}

// SquashModel drops the separators that spellings of one model differ in:
// llama-2-13b and llama2_13b are both llama213b (augur eval compares
// models so too).
func SquashModel(m string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' {
			return -1
		}
		return r
	}, m)
}

// The flags that say how a model is trained (TrainSetup's terms).
var (
	// methodSwitches are boolean flags: what each turns on.
	methodSwitches = map[string]string{
		"use_peft": "lora", "use_lora": "lora", "lora": "lora", "peft": "lora",
		"q_lora": "qlora", "qlora": "qlora", "use_qlora": "qlora",
		"load_in_4bit": "4bit", "use_4bit": "4bit", "4bit": "4bit", "bnb_4bit": "4bit",
		"gradient_checkpointing": "checkpointing", "activation_checkpointing": "checkpointing",
		"enable_activation_checkpointing": "checkpointing", "recompute_activations": "checkpointing",
		"checkpoint_activations": "checkpointing", "grad_ckpt": "checkpointing",
		"use_gradient_checkpointing": "checkpointing", "gradient_checkpoint": "checkpointing",
	}
	loraRankFlags  = set("lora_r", "lora_rank", "lora_dim", "lora_alpha_r")
	adapterFlags   = set("adapter", "finetuning_type", "peft_type", "peft_method", "tuning_method", "finetune_type")
	quantBitsFlags = set("bits", "quantization_bit", "load_bits", "quant_bits", "quantization_bits")
	optimFlags     = set("optim", "optimizer", "optimizer_name", "opt", "optimizer_type")
)

// setMethod records what a flag says of how the model is trained.
func (f *Features) setMethod(what, from string) {
	switch what {
	case "lora":
		if f.Tuning != "qlora" {
			f.Tuning = "lora"
			f.note("tuning", from)
		}
	case "qlora":
		f.Tuning = "qlora"
		f.note("tuning", from)
	case "4bit":
		// 4-bit weights under adapters: QLoRA (adapters are what 4-bit
		// weights can train; a flag naming LoRA may come before or after).
		f.Tuning = "qlora"
		f.note("tuning", from)
	case "checkpointing":
		f.Checkpointing = true
		f.note("checkpointing", from)
	}
}

// optimizerValue names an optimizer the way TrainSetup counts its state.
func optimizerValue(v string) string {
	v = strings.ToLower(v)
	switch {
	case strings.Contains(v, "paged"):
		return "paged"
	case strings.Contains(v, "8bit") || strings.Contains(v, "8_bit") || strings.Contains(v, "bnb"):
		return "adamw8bit"
	case strings.Contains(v, "adafactor"):
		return "adafactor"
	case strings.Contains(v, "sgd"):
		return "sgd"
	case strings.Contains(v, "adam"):
		return "adamw"
	}
	return ""
}

// hardwareOptions are the #SBATCH options that pick the hardware a job
// runs on; a comment on their line speaks of it.
var hardwareOptions = set("partition", "p", "gres", "constraint", "C", "qos", "gpus", "G", "gpus-per-node")

// runNameKeys are the options that name a run or its project for a logger
// (W&B, TensorBoard) or an experiment manager: what a job's name says.
var runNameKeys = set("run_name", "exp_name", "experiment_name", "project", "project_name", "wandb_project",
	"wandb_name", "wandb_run_name", "name", "exp")

// runNames are the names the launch's words give its run, as flag and
// value (--project_name xception_hyperband, trainer.logger.name=resnet50_ft),
// in order.
func runNames(words []string) [][2]string {
	var out [][2]string
	for i, w := range words {
		if !strings.HasPrefix(w, "-") && !isHydra(w) {
			continue
		}
		k, v, hasV := strings.Cut(w, "=")
		if !strings.Contains(k, "name") && !strings.Contains(k, "project") && !strings.Contains(k, "exp") {
			continue // every key of runNameKeys holds one of these, lower-case as options are written
		}
		if !hasV && strings.HasPrefix(w, "-") && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			v, hasV = words[i+1], true
		}
		nk := normFlag(k)
		if i := strings.LastIndexByte(nk, '.'); i >= 0 {
			nk = nk[i+1:]
		}
		if hasV && runNameKeys[nk] && v != "" && !unexpanded(v) {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// dataFlag reports whether a flag names data rather than a model: a
// dataset's Hugging Face id can look like a model's.
func dataFlag(nk string) bool {
	return strings.Contains(nk, "data") || strings.Contains(nk, "task") || strings.Contains(nk, "corpus") ||
		strings.Contains(nk, "output") || strings.Contains(nk, "push_to_hub") || strings.Contains(nk, "hub_model_id") ||
		strings.Contains(nk, "run_name") || strings.Contains(nk, "project")
}

// configPrecision takes the precision a config file's name turns on
// (ds_config_fp16.json, zero2-bf16.yaml), read from src, where nothing
// has given one; fp32 in a name turns nothing on.
func (f *Features) configPrecision(name, src string) {
	if p := precisionFromName(name); p != "" && p != "fp32" && f.Precision == "" {
		f.Precision = p
		f.note("precision", src)
	}
}

// nameWords are a model name's words between '-', '_' and '/'.
func nameWords(m string) []string {
	return strings.FieldsFunc(m, func(r rune) bool { return r == '-' || r == '_' || r == '/' })
}

// hasSize reports whether a model name already states its size (llama3-8b).
func hasSize(m string) bool {
	return slices.ContainsFunc(nameWords(m), isSize)
}

// scaleWord reports whether a word is a scale of EfficientNet's kind,
// b and one digit: b0 to b7 (segformer_b4 too).
func scaleWord(w string) bool {
	return len(w) == 2 && w[0] == 'b' && isDigits(w[1:])
}

// dimensionWord reports whether a word says how many dimensions: 1d, 2d, 3d.
func dimensionWord(w string) bool {
	return len(w) == 2 && w[0] >= '1' && w[0] <= '4' && w[1] == 'd'
}

// pointVersion reports whether a word is a version written with a p for
// its point, as file and job names write it: 1p5, 2p0.
func pointVersion(w string) bool {
	a, b, ok := strings.Cut(w, "p")
	return ok && a != "" && b != "" && isDigits(a) && isDigits(b)
}

// sizedOrVariant reports whether model name m says its size or its
// variant: llama2-7b, t5-base.
func sizedOrVariant(m string) bool {
	return slices.ContainsFunc(nameWords(m), func(w string) bool { return isSize(w) || variantWords[w] })
}

// otherFamily reports whether the commands already name a model family
// (a config's or program's word standing in: bart of bart_training.yaml)
// other than m's: a comment naming another ("# For T5 instead:") is about
// an alternative, not this job. Megatron's pretrain_gpt.py standing in
// names no family: it trains any GPT-style decoder ("# MODEL Llama 3.2 1B").
func otherFamily(f Features, m string) bool {
	fam := familyOf(f.Model)
	return f.Model != "" && fam != "" && fam != familyOf(m) && f.From["model"] != jobNameSource &&
		!(f.ModelFrom == "path" && programStem(f.Program) == "pretrain_gpt")
}

// hasVariant reports whether a model's name gives its family's variant
// by a word (t5-large, vit-b), as a size would.
func hasVariant(m string) bool {
	ws := nameWords(m)
	return len(ws) > 1 && slices.ContainsFunc(ws[1:], func(w string) bool { return variantWords[w] })
}

func hasLetter(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' })
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// configFileModel reads a model from a positional argument naming a config
// file (a .yaml, .yml, .json or .toml, or a .py under a config directory).
func configFileModel(a string) string {
	ext := path.Ext(a)
	switch {
	case ext == ".yaml" || ext == ".yml" || ext == ".json" || ext == ".toml":
	case ext == ".py" && strings.Contains(a, "config"):
	default:
		return ""
	}
	if strings.Contains(strings.ToLower(path.Base(a)), "zero") || strings.Contains(path.Base(a), "ds_") {
		return "" // a DeepSpeed config
	}
	return familyModel(a)
}

// mmBatchRe matches the GPUs-by-batch word of OpenMMLab's config names:
// bsInName reads the batch a config file's name states in a bsN word
// (maskformer2_R50_bs16_50ep.yaml is 16), or 0.
func bsInName(p string) float64 {
	base := strings.ToLower(path.Base(p))
	base = strings.TrimSuffix(base, path.Ext(base))
	for _, t := range strings.FieldsFunc(base, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if n, ok := strings.CutPrefix(t, "bs"); ok && isDigits(n) && len(n) <= 4 {
			if b, _ := strconv.Atoi(n); b > 0 {
				return float64(b)
			}
		}
	}
	return 0
}

// 8xb320, 4xb2.
var mmBatchRe = regexp.MustCompile(`(?:^|[_-])\d{1,3}xb(\d{1,4})(?:[_-]|$)`)

// mmBatch returns the per-GPU batch an OpenMMLab config file's name gives
// (faster-rcnn_r50_fpn_8xb2-1x_coco.py is 2), or 0.
func mmBatch(a string) float64 {
	base := path.Base(a)
	if ext := path.Ext(base); ext != ".py" && ext != ".yaml" && ext != ".yml" || unexpanded(base) {
		return 0
	}
	m := mmBatchRe.FindStringSubmatch(strings.ToLower(base))
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n == 0 {
		return 0
	}
	return float64(n)
}

// splitConfigLists splits a positional argument that is a list of config
// files in one word (GPT-NeoX's deepy.py train.py "$CONFIG", CONFIG set to
// "configs/llama/7B.yml configs/local.yml") into its files.
func splitConfigLists(args []string) []string {
	var out []string // nil until a list is split
	for i, a := range args {
		var files []string
		if !strings.HasPrefix(a, "-") && strings.ContainsAny(a, " \t\n") {
			files = strings.Fields(a)
			if len(files) < 2 || slices.ContainsFunc(files, func(f string) bool { return !isConfigFile(f) }) {
				files = nil
			}
		}
		switch {
		case files != nil:
			if out == nil {
				out = append([]string(nil), args[:i]...)
			}
			out = append(out, files...)
		case out != nil:
			out = append(out, a)
		}
	}
	if out == nil {
		return args
	}
	return out
}

// configStandIn returns the workload a config file's name stands for
// (fastspeech2.yaml, config_al_xlsr_general.ini), or "": not for a
// DeepSpeed, accelerate or FSDP config, a data set's, or a name of
// generic words (base.yaml, default.json). A config flag's value needs no
// extension (Hydra's --config-name); a positional one does.
func configStandIn(v string, positional bool) string {
	base := path.Base(v)
	ext := path.Ext(base)
	switch ext {
	case ".yaml", ".yml", ".json", ".toml", ".ini", ".gin", ".cfg", ".conf":
	case ".py":
		if positional && !mmConfig(v) {
			return "" // a program, not its config
		}
	case ".txt":
		if positional {
			return "" // a list of files, as often as a config
		}
		// --config configs/gnt_plain.txt: configargparse's config, NeRF's
	case "":
		if positional {
			return ""
		}
	default:
		return ""
	}
	stem := strings.TrimSuffix(base, ext)
	low := strings.ToLower(stem)
	if unexpanded(stem) {
		return ""
	}
	for _, w := range []string{"zero", "ds_", "deepspeed", "accelerate", "fsdp", "hostfile", "launcher"} {
		if strings.Contains(low, w) {
			return ""
		}
	}
	return workloadName(stem)
}

// mmConfig reports whether a Python file given as an argument is an
// OpenMMLab-style config rather than a program: under configs/, in a
// directory named for the algorithm its file name starts with
// (configs/autoassign/autoassign_r50-caffe_fpn_1x_coco.py).
func mmConfig(v string) bool {
	dirs := strings.Split(path.Dir(strings.ToLower(v)), "/")
	stem := strings.ToLower(strings.TrimSuffix(path.Base(v), ".py"))
	i := slices.IndexFunc(dirs, func(d string) bool { return d == "configs" || d == "config" })
	return i >= 0 && slices.ContainsFunc(dirs[i+1:], func(d string) bool {
		return len(d) >= 3 && strings.HasPrefix(stem, d)
	})
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
	case strings.Contains(v, "fp16") || strings.Contains(v, "float16") || v == "16" || v == "16_mixed" || v == "16-mixed" ||
		v == "16-true" || v == "half":
		return "fp16"
	case strings.Contains(v, "fp8"):
		return "fp8"
	case v == "32" || v == "32-true" || strings.Contains(v, "fp32") || strings.Contains(v, "float32") || v == "no":
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
	v = strings.TrimRight(strings.ToLower(pythonClass(v)), "/")
	v = ollamaName(v, false)
	if id := hubCacheID(v); id != "" {
		return id
	}
	if dir, rest, ok := strings.Cut(v, "/snapshots/"); ok && dir != "" && isCommitHash(strings.Split(rest, "/")[0]) {
		// model/Qwen2.5-0.5B/snapshots/060db64...: a revision of the
		// directory's model, laid out as the hub's cache lays it.
		return normModel(dir)
	}
	if d, ok := strings.CutPrefix(v, "res"); ok && isDigits(d) && len(d) <= 3 {
		return "resnet" + d // res18, res50: how self-supervised code names its ResNets
	}
	if dir, file := path.Split(strings.TrimSuffix(v, weightsExt(v))); dir != "" && sizeFirst(file) && hasSize(familyModel(path.Base(dir))) {
		// .../llama-3-8b-instruct-nemo_v1.0/8b_instruct_nemo_bf16.nemo: a
		// file named for its size alone; its directory names the model.
		return familyModel(path.Base(dir))
	}
	if strings.Contains(v, "/") && !hubID(v) {
		v = path.Base(v) // a local path, models/llama-2-7b-hf among them
	}
	if m := ggufName(v); m != "" {
		v = m + ".gguf" // the quantisation is no part of the model's name
	}
	if ext := weightsExt(v); ext != "" {
		// weights_gcn.hdf5, resnet_weights.h5: the word for what the file
		// holds is not the model's.
		v = strings.TrimSuffix(v, ext)
		for _, w := range []string{"weights", "weight"} {
			if b := path.Base(v); strings.HasPrefix(b, w+"_") || strings.HasPrefix(b, w+"-") {
				v = path.Join(path.Dir(v), b[len(w)+1:])
			} else if strings.HasSuffix(b, "_"+w) || strings.HasSuffix(b, "-"+w) {
				v = path.Join(path.Dir(v), b[:len(b)-len(w)-1])
			}
		}
	}
	base := path.Base(v)
	if weightsFiles[base] {
		// .../checkpoint-6000/pytorch_model.bin: the file every such
		// directory holds; the directory is the model's.
		if dir := path.Dir(v); dir != "." && dir != "/" {
			return normModel(dir)
		}
		return ""
	}
	if head := checkpointHead(base); head != base && !(hubID(v) && (path.Ext(base) == "" || isVersionedName(base))) {
		// run1/model5_epoch71.pk1: a checkpoint file, no hub name (a hub
		// id is the name its owner gave it: kaist-ai/...-sft-epoch1).
		return head
	}
	if !strings.Contains(v, "/") {
		v = trimMethodTail(v)
	}
	return v
}

// ggufName is the model a GGUF file (llama.cpp's and ollama's weights)
// holds, by its name without the quantisation after it:
// llama-2-7b-chat.Q4_K_M.gguf is llama-2-7b-chat, Meta-Llama-3-8B-Instruct-IQ2_XS.gguf
// meta-llama-3-8b-instruct; "" for any other file.
func ggufName(base string) string {
	stem, ok := strings.CutSuffix(strings.ToLower(base), ".gguf")
	if !ok {
		return ""
	}
	return strings.TrimRight(ggufQuant.ReplaceAllString(stem, ""), ".-_")
}

// ggufQuant is the quantisation a GGUF file's name ends in: Q4_K_M, Q8_0,
// IQ3_XXS, F16, BF16.
var ggufQuant = regexp.MustCompile(`[.\-_]((i?q[1-8](_[a-z0-9]+)*)|f16|f32|bf16|fp16)$`)

// withoutDataPrefix drops the data set a model's name starts with
// (--model cifar100_resnet56, a registry's model built for it; Hydra's
// model=mnist_mlp, an MLP's config for it); a hub id and a name that is
// the data set alone are kept.
func withoutDataPrefix(m string) string {
	if i := strings.IndexAny(m, "_-"); i > 0 && !strings.Contains(m, "/") && dataWords[m[:i]] && hasLetter(m[i+1:]) {
		return m[i+1:]
	}
	return m
}

// checkpointFlag reports whether a flag names the checkpoint a job loads
// (--checkpoint, --ckpt, --init_checkpoint), not where it writes its own
// (--save_checkpoint, --ckpt_dir, --output_ckpt).
func checkpointFlag(nk string) bool {
	return (strings.Contains(nk, "checkpoint") || strings.Contains(nk, "ckpt")) &&
		!strings.Contains(nk, "save") && !strings.Contains(nk, "dir") && !strings.Contains(nk, "out")
}

// hubID reports whether a model name is a Hugging Face hub id: org/name.
func hubID(m string) bool {
	org, _, ok := strings.Cut(m, "/")
	return ok && looksLikeHFName(m) && !pathWords[org] && weightsExt(m) == "" // output/weights_gcn.hdf5 is a file
}

// tokenizerWord reports whether a flag or file name is a tokenizer's
// (--vocab-file gpt2-vocab.json, --merge-file, tokenizer_config.json).
func tokenizerWord(w string) bool {
	return strings.Contains(w, "vocab") || strings.Contains(w, "merge") || strings.Contains(w, "token")
}

// hydraOption reports whether the word a, read as key k and value v, is a
// Hydra override choosing a config group's option by its path
// (solver=musicgen/musicgen_base_32khz): no flag, no dotted key, a
// relative path of at most three names, none a file's, under a key that
// names no directory or file.
func hydraOption(a, k, v string) bool {
	if strings.HasPrefix(a, "-") || strings.Contains(k, ".") || !strings.Contains(v, "/") || strings.Count(v, "/") > 2 ||
		strings.ContainsAny(v, ".$~:") || strings.HasPrefix(v, "/") {
		return false
	}
	nk := normFlag(k)
	for _, w := range []string{"dir", "path", "file", "save", "out", "log", "ckpt", "checkpoint", "data", "root", "cache"} {
		if strings.Contains(nk, w) {
			return false
		}
	}
	return true
}

// sizeFirst reports whether a name starts with a size word: 8b_instruct.
func sizeFirst(name string) bool {
	first, _, _ := strings.Cut(strings.ReplaceAll(name, "-", "_"), "_")
	return isSize(first)
}

// weightsFiles are the names the Hugging Face libraries save a model's
// weights under in its directory, extension cut: they name no model.
var weightsFiles = set("pytorch_model", "model", "adapter_model", "diffusion_pytorch_model", "tf_model", "flax_model",
	"consolidated", "consolidated.00",
	"ggml-model") // llama.cpp's converter's

// trimMethodTail cuts from a local model name the words that end it by
// saying how a run trains it or what it does with it (llama2_70b_lora,
// rxnfp_ft, uorf_eval): the model is
// what is left, if anything is. A hub id keeps its whole name
// (allenai/llama-3.1-tulu-3-8b-sft is a model of its own).
func trimMethodTail(v string) string {
	for {
		i := strings.LastIndexAny(v, "_-")
		if i <= 0 || !methodWords[v[i+1:]] && !modeWords[v[i+1:]] {
			return v
		}
		v = v[:i]
	}
}

// modeWords say what a run does with a model, not which: uORF's
// --model uorf_eval is uorf, run to evaluate.
var modeWords = set("train", "eval", "test", "infer", "inference")

// methodWords say how a run trains a model, not which.
var methodWords = set("lora", "qlora", "sft", "dpo", "ft", "finetune", "finetuned", "finetuning", "grpo", "ppo", "rlhf")

// checkpointHead is the name a checkpoint file is saved under, before the
// training state its name goes on to record: Lightning's
// e2eparking-epoch=20-val_loss=1.25 is e2eparking, skateMAE_epoch_111_valloss_3835.5
// is skatemae, and model5_epoch71 or
// net_step_4000, whose head names no model, is "". A name with no such
// record is returned as it is.
func checkpointHead(v string) string {
	for i := 1; i < len(v); i++ {
		if v[i-1] != '-' && v[i-1] != '_' && v[i-1] != '.' {
			continue
		}
		rest := v[i:]
		for _, w := range []string{"epoch", "step", "iter"} {
			tail, ok := strings.CutPrefix(rest, w)
			if len(tail) > 1 && (tail[0] == '_' || tail[0] == '-') {
				tail = tail[1:] // skateMAE_epoch_111_valloss_...: the count after its own separator
			}
			if ok && tail != "" && (tail[0] == '=' || tail[0] >= '0' && tail[0] <= '9') {
				head := v[:i-1]
				if modelWords[strings.TrimRight(head, "0123456789_-")] {
					return ""
				}
				return head
			}
		}
	}
	return v
}

// yacsKey reports whether a word is a yacs config key given as an override
// (detectron2's SOLVER.BASE_LR, MODEL.WEIGHTS): upper-case words joined by
// dots.
func yacsKey(w string) bool {
	if !strings.Contains(w, ".") || strings.HasPrefix(w, ".") || strings.HasSuffix(w, ".") {
		return false
	}
	for _, r := range w {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// verlBatch gathers what verl's Hydra overrides say of its policy's
// micro-batch: the deprecated ppo_micro_batch_size counts the samples of
// all GPUs together, which verl divides by the world size over the
// Ulysses sequence-parallel size (ppo_micro_batch_size_per_gpu, read as
// any per-GPU flag, does not).
type verlBatch struct {
	micro           float64
	microFrom       string
	gpusPerNode, sp float64
	nodes           float64
	nodesUnknown    bool
}

var verlTrainerKeys = set("n_gpus_per_node", "nnodes")

// read takes one verl override (its key's parts, last word and value)
// and reports whether it was one of those verlBatch gathers.
func (b *verlBatch) read(parts []string, last, v string, hasV bool) bool {
	if !hasV {
		return false
	}
	n, err := strconv.ParseFloat(v, 64)
	num := err == nil && n > 0 && n < 1e9 && n == math.Trunc(n)
	switch {
	case parts[0] == "actor_rollout_ref" && slices.Contains(parts, "actor") && last == "ppo_micro_batch_size":
		if num {
			b.micro, b.microFrom = n, strings.Join(parts, ".")
		}
	case parts[0] == "critic" && last == "ppo_micro_batch_size":
		// the critic's, beside the policy's
	case parts[0] == "actor_rollout_ref" && slices.Contains(parts, "actor") && last == "ulysses_sequence_parallel_size":
		if num {
			b.sp = n
		}
	case parts[0] == "trainer" && last == "n_gpus_per_node":
		b.gpusPerNode = 0
		if num {
			b.gpusPerNode = n
		}
	case parts[0] == "trainer" && last == "nnodes":
		b.nodes, b.nodesUnknown = 0, !num
		if num {
			b.nodes = n
		}
	default:
		return false
	}
	return true
}

// perGPU gives the policy's micro-batch per GPU and where it was read,
// when the overrides give the GPUs it is split over and it splits evenly.
func (b *verlBatch) perGPU() (float64, string, bool) {
	if b.gpusPerNode == 0 || b.nodesUnknown {
		return 0, "", false
	}
	world := b.gpusPerNode * max(b.nodes, 1) / max(b.sp, 1)
	if world < 1 || world != math.Trunc(world) || math.Mod(b.micro, world) != 0 {
		return 0, "", false
	}
	groups := "trainer.n_gpus_per_node × trainer.nnodes"
	if b.sp > 1 {
		groups += " / actor.ulysses_sequence_parallel_size"
	}
	return b.micro / world, b.microFrom + " / (" + groups + ")", true
}

// sizeFlags give a model's size apart from its family.
var sizeFlags = set("size", "model_size", "preset", "variant", "model_variant", "scale", "model_scale")

// depthFlags give the depth of a network counted by it; depthFamilies are
// those networks (resnet with a depth of 50 is resnet50).
var (
	depthFlags    = set("depth", "model_depth", "net_depth", "arch_depth", "resnet_depth", "num_resnet_layers")
	depthFamilies = set("resnet", "preresnet", "resnext", "wrn", "wideresnet", "wide_resnet", "densenet", "vgg",
		"resnet_cifar", "seresnet", "pyramidnet")
)

// modelDirFlag reports whether a flag no model reader knows names where a
// model is read from (--model_dir, --base_model_path, --llm_dir, --plm_path,
// --pretrained_dir), not where
// one is written (--output_model_dir, --save_model_path).
func modelDirFlag(nk string) bool {
	if !strings.Contains(nk, "model") && !strings.Contains(nk, "llm") && !strings.Contains(nk, "plm") &&
		!strings.HasPrefix(nk, "pretrained") || runVarying[nk] {
		return false
	}
	for _, w := range []string{"out", "save", "export", "ckpt", "checkpoint", "log", "cache", "embed", "token"} {
		if strings.Contains(nk, w) {
			return false
		}
	}
	return !besideModel(nk)
}

// templateFlag reports whether a flag names the chat or prompt template a
// family's model is given its data in: LLaVA's --version llama3,
// --chat_template qwen2, --conv_mode vicuna_v1, --prompt_format mistral.
func templateFlag(nk string) bool {
	if nk == "version" || nk == "conv_mode" || nk == "conv_template" {
		return true
	}
	return strings.Contains(nk, "template") || strings.Contains(nk, "prompt") || strings.Contains(nk, "chat_format")
}

// familyFlag returns the model family a flag's name is about, when it
// sizes one: bart of --bart_version, bert of --bert_size, t5 of --t5_type.
func familyFlag(nk string) string {
	fam, rest, ok := strings.Cut(nk, "_")
	if !ok || !slices.Contains(modelFamilies, fam) {
		return ""
	}
	switch rest {
	case "version", "size", "type", "variant", "scale", "arch", "config", "model":
		return fam
	}
	return ""
}

// roleFlag reports whether a flag names a model by the part it plays in a
// retrieval job, alone or with a model flag's words: --encoder,
// --embedder_name_or_path, --reranker_model, --retriever_model_id.
func roleFlag(nk string) bool {
	role := false
	for w := range strings.SplitSeq(nk, "_") {
		switch {
		case retrievalRoles[w] && !role:
			role = true
		case !modelHeads[w] && !modelQualifiers[w]:
			return false
		}
	}
	return role
}

// retrievalRoles are the parts a model plays in retrieval and ranking jobs.
var retrievalRoles = set("encoder", "embedder", "reranker", "retriever")

// modelFlag reports whether a flag names the model trained: one of
// modelFlags, or a name built as those are, a word for a model (model,
// arch, architecture, network) with words that say which copy it is or
// how it is given (--pretrained_model_name, --init_model_path,
// --architecture), never one beside it (besideModel) nor
// one written or kept elsewhere (--output_model, --model_dir).
func modelFlag(nk string) bool {
	if modelFlags[nk] {
		return true
	}
	head := false
	for _, w := range strings.Split(nk, "_") {
		switch {
		case modelHeads[w]:
			head = true
		case !modelQualifiers[w]:
			return false
		}
	}
	return head && !besideModel(nk)
}

var (
	modelHeads      = set("model", "models", "arch", "architecture", "network", "net")
	modelQualifiers = set("pretrained", "pretrain", "base", "init", "initial", "name", "id", "or", "path", "load",
		"from", "type", "tag")
)

// besideModel reports whether a flag names another model beside the one
// trained: --teacher, --reward_model, --critic_path, --judge, --draft_model.
func besideModel(nk string) bool {
	for _, w := range []string{"teacher", "reward", "critic", "judge", "draft"} {
		if strings.Contains(nk, w) {
			return true
		}
	}
	return false
}

// dtypeSwitch reads the precision a switch's name turns on: a word of it
// is bf16, fp16 or fp8 (is_use_bf16, enable_fp16, fp16_enabled), or "".
func dtypeSwitch(nk string) string {
	if strings.Contains(nk, "level") || strings.Contains(nk, "eval") {
		return "" // --fp16_opt_level O1 is given without --fp16 too; eval is not training
	}
	for _, w := range strings.Split(nk, "_") {
		if p := dtypeWord(w); p != "" {
			return p
		}
	}
	return ""
}

// dtypeWord is the precision a word of a name spells (bf16, fp16, fp8), or "".
func dtypeWord(w string) string {
	switch w {
	case "bf16", "bfloat16":
		return "bf16"
	case "fp16", "float16":
		return "fp16"
	case "fp8":
		return "fp8"
	}
	return ""
}

// pathPositionalModel reads the model of a positional argument that is a
// path to a directory named for a model with its size, first in its name
// (/scratch/me/models/Llama-3.1-8B-Instruct, ckpt/qwen2.5-7b-sft), or "":
// a file's path (data, a config) names none, nor a family without a size.
func pathPositionalModel(a string) string {
	a = strings.TrimRight(a, "/")
	if !strings.Contains(a, "/") || unexpanded(a) || hubID(strings.ToLower(a)) || path.Ext(path.Base(a)) != "" && !isVersionedName(path.Base(a)) {
		return ""
	}
	base := strings.ToLower(path.Base(a))
	m := familyModel(base)
	if m == "" || !hasSize(m) || !strings.HasPrefix(strings.ReplaceAll(base, "_", "-"), m) {
		return ""
	}
	return m
}

// isVersionedName reports whether a name's only dots are a version's or a
// size's (qwen2.5-7b, llama-3.1-8b), not a file's extension.
func isVersionedName(name string) bool {
	ext := strings.TrimPrefix(path.Ext(name), ".")
	head, _, _ := strings.Cut(ext, "-")
	head, _, _ = strings.Cut(head, "_")
	return isDigits(head) || isSize(ext) // 1-8B-Instruct, 5-7b, 8b
}

// positionalHFModel reads a positional argument that is a Hugging Face
// model id (org/name, the name a model's: a family or a size in it, no
// file extension, the org no directory word): "facebook/esm2_t6_8m_ur50d",
// or "".
func positionalHFModel(a string) string {
	if !looksLikeHFName(a) || unexpanded(a) {
		return ""
	}
	org, name, _ := strings.Cut(strings.ToLower(a), "/")
	if pathWords[org] || org == "" || name == "" || isConfigFile(a) || weightsExt(a) != "" {
		return ""
	}
	switch path.Ext(name) {
	case ".parquet", ".py", ".cfg", ".ini", ".toml", ".arrow":
		return "" // beside what validModel refuses: data and code a program is given
	}
	if !validModel(org + "/" + name) {
		return ""
	}
	sized := false
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		sized = sized || isSize(w)
	}
	if !sized && familyModel(name) == "" {
		return ""
	}
	return org + "/" + name
}

// hubCacheID reads the model of a path into the Hugging Face hub's cache,
// whose directories are named models--ORG--NAME
// (.../hub/models--facebook--esm2_t48_15B_UR50D/snapshots/5fbca39.../):
// "facebook/esm2_t48_15b_ur50d", or "" for any other path.
func hubCacheID(v string) string {
	i := strings.Index(v, "models--")
	if i < 0 || i > 0 && v[i-1] != '/' {
		return ""
	}
	dir, _, _ := strings.Cut(v[i+len("models--"):], "/")
	org, name, ok := strings.Cut(dir, "--")
	if !ok || org == "" || name == "" || strings.Contains(name, "--") {
		return ""
	}
	return org + "/" + name
}

// precisionFromName reads a training precision from a config file's name
// (ddp_bf16.yaml, ds_config_fp16.json, fsdp_bf16_mixed.yaml), or "".
func precisionFromName(v string) string {
	base := strings.ToLower(path.Base(v))
	base = strings.TrimSuffix(base, path.Ext(base))
	for _, w := range strings.FieldsFunc(base, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if w == "half" {
			return "fp16" // ds_config_half.json
		}
		if p := dtypeWord(w); p != "" {
			return p
		}
	}
	return ""
}

// weightsExt returns the extension of a weights or model definition file
// (yolov8s.pt, llama2-7b.nemo, resnet50.pth.tar, PySlowFast's .pyth,
// tensorpack's and JAX's .npz, MXNet's .params, yolo11m.yaml), which is
// not the model's name.
func weightsExt(v string) string {
	if strings.HasSuffix(v, ".pth.tar") {
		return ".pth.tar"
	}
	switch ext := path.Ext(v); ext {
	case ".pt", ".pth", ".ckpt", ".bin", ".safetensors", ".nemo", ".h5", ".hdf5", ".keras", ".onnx", ".pkl", ".msgpack", ".gguf",
		".pyth", ".npz", ".params":
		return ext
	case ".yaml", ".yml":
		if strings.HasPrefix(v, "yolo") {
			return ext
		}
	}
	return ""
}

// programModel names the workload when no flag names the model: a model
// family in the program's file name (finetune_llama2_7b.py: "program"),
// else the program's own name when it is specific (cyclegan.py), else the
// directory the command runs in (.../image_classification/cifar10) (both
// "path": they name a workload, not a model); and says which place it
// was read from.
func programModel(program, progDir, workdir string) (model, kind string, at Place) {
	if program == "-" {
		return "", "", Place{} // inline code has no name
	}
	stem := programStem(program)
	// -m src.train, or torchrun's module named alone (poet_2.training.train).
	isModule := isModuleProgram(program)
	if isModule {
		stem = strings.ToLower(program) // its last package is no extension: -m src.hrnet_train
	}
	stem = strings.TrimPrefix(stem, "-m ")
	module := ""
	if i := strings.LastIndexByte(stem, '.'); i >= 0 && isModule {
		// -m src.model.faster_rcnn.scripts: a package path; a file's
		// dots are its own (ds_pretrain_gpt_1.3B.sh).
		module = strings.ReplaceAll(stem[:i], ".", "/")
		stem = stem[i+1:]
	}
	if m := familyModel(stem); m != "" && !unexpanded(stem) && !bareFamily(m) {
		// pretrain_gpt.py and resnet_main.py train a family, not a model.
		return m, "program", Place{ProgramName, program}
	}
	if m := familyModel(module); m != "" && !unexpanded(module) && !bareFamily(m) {
		// python -m src.model.faster_rcnn.scripts.train: the module's package names it.
		return m, "program", Place{ProgramName, program}
	}
	if isModule && module != "" && !unexpanded(module) {
		// -m poet_2.training.train, -m canvit_train.harness.run: the
		// package is the project; the deepest that names one, as
		// -m astroclip.astrodino.trainer trains astrodino.
		// The module's own name, its last (-m src.hrnet_train), only where
		// no package names the project: -m focalpose.scripts.run_pose_training
		// is focalpose.
		pkgs := strings.Split(module, "/")
		for i := len(pkgs) - 1; i >= -1; i-- {
			p := stem // the packages deepest first, then the module's name
			if i >= 0 {
				p = pkgs[i]
			}
			if !codeDirs[p] && !genericPrograms[p] {
				if t := trimWorkWords(p); t != "" {
					return t, "path", Place{ProgramName, program}
				}
			}
		}
	}
	// The directory the program is in, then the one the command runs in.
	dirs := [...]struct {
		dir  string
		from Place
	}{{progDir, Place{ProgramDir, path.Join(progDir, program)}}, {workdir, Place{WorkDir, workdir}}}
	for _, dir := range dirs {
		// src/models/CGKN/KMG: the directory under models/ is the model's.
		parts := strings.Split(strings.Trim(dir.dir, "/"), "/")
		for i := len(parts) - 2; i >= 0; i-- {
			if modelDirs[strings.ToLower(parts[i])] && !unexpanded(parts[i+1]) {
				if t := strings.ToLower(trimWorkWords(parts[i+1])); t != "" && validModel(t) {
					return t, "path", dir.from
				}
			}
		}
	}
	for _, dir := range dirs {
		// python dinov2/run/eval/linear.py, cd blip2 && python test.py: the
		// project the program is in, named for a versioned or sized
		// model, deepest first.
		if unexpanded(dir.dir) {
			continue
		}
		parts := strings.Split(strings.Trim(dir.dir, "/"), "/")
		for i := len(parts) - 1; i >= 0; i-- {
			if m := familyModel(parts[i]); namesAModel(m) && validModel(m) {
				return m, "path", dir.from
			}
		}
	}
	if m := familyModel(stem); bareFamily(m) && !unexpanded(stem) && strings.HasPrefix(strings.ToLower(trimWorkWords(stem)), m) {
		// qwen_lora_amr.py, pretrain_gpt.py: the family the program
		// trains, standing in for the model it does not size (a name the
		// family ends, avp_vit, is kept whole).
		return m, "path", Place{ProgramName, program}
	}
	if raw := rawStem(program); strings.ToLower(raw) == stem {
		stem = raw // its case splits trainParticleTransformer's words
	}
	if t := strings.ToLower(trimWorkWords(stem)); len(t) >= 3 && !unexpanded(t) {
		// gcn_train.py, train_roberta.py: the program's own word; two
		// letters (train_mp.py, run_lm.py) say a mode, not the work.
		return t, "path", Place{ProgramName, program}
	}
	// The directory the program is in (python /shared/examples/mingpt/main.py),
	// else the one the command runs in.
	d, from := "", Place{}
	for _, dir := range dirs {
		base := strings.ToLower(path.Base(strings.TrimRight(dir.dir, "/")))
		if dir.dir == "" || base == "." || base == "/" || base == ".." || strings.HasPrefix(base, "$") || isCodeDir(base) {
			continue
		}
		d, from = path.Base(strings.TrimRight(dir.dir, "/")), dir.from
		break
	}
	// A clone's name: deepmask-pytorch, pytorch-cifar, bert-master; a
	// directory named for the work (fine_tuning, workspace) names nothing.
	if d = strings.ToLower(trimWorkWords(d)); d == "" {
		return "", "", Place{}
	}
	return d, "path", from
}

// ollamaName writes an ollama model's name and tag as a person writes
// them (ollama run llava:34b is llava-34b; qwen3.5:27b-instruct-q8_0 is
// qwen3.5-27b-instruct): :latest is no tag, and the weights' quantisation
// is no part of the model's name. Where the name need not be ollama's
// (any), only a tag that starts with a size is read so; any other value is
// returned as given.
func ollamaName(v string, any bool) string {
	name, tag, ok := strings.Cut(v, ":")
	if !ok || name == "" || strings.ContainsAny(name, "/$") || strings.Contains(tag, ":") {
		return v
	}
	if tag == "latest" {
		return name
	}
	if size, _, _ := strings.Cut(tag, "-"); !any && !isSize(strings.ToLower(size)) {
		return v
	}
	return name + "-" + ggufQuant.ReplaceAllString(strings.ToLower(tag), "")
}

// pythonClass is the class a dotted Python path names (map2map's --model
// vnet.VNet, models.ResNet50): its last part, where that is a class's
// name (a capital first) after modules' (all lower case); any other value
// as given (torchvision.models.resnet50, Qwen2.5-7B, vit_base.augreg_in21k).
func pythonClass(v string) string {
	if !strings.Contains(v, ".") || weightsExt(v) != "" || isConfigFile(v) {
		return v // no dotted path, or a file (resnet50.PTH)
	}
	parts := strings.Split(v, ".")
	ident := func(p string) bool {
		if p == "" || !unicode.IsLetter(rune(p[0])) {
			return false
		}
		return !strings.ContainsFunc(p, func(r rune) bool { return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	for _, p := range parts[:len(parts)-1] {
		if !ident(p) || strings.ToLower(p) != p {
			return v
		}
	}
	if c := parts[len(parts)-1]; ident(c) && unicode.IsUpper(rune(c[0])) {
		return c
	}
	return v
}

// googleBERT matches the directories Google's BERT checkpoints come in.
var googleBERT = regexp.MustCompile(`\b(un)?cased_l-(\d+)_h-(\d+)_a-\d+`)

// programStem is a program's file name in lower case, without its
// extension: train_deberta_babylm for scripts/train_deberta_babylm.py.
func programStem(program string) string {
	return strings.ToLower(rawStem(program))
}

// rawStem is a program's file name without its extension, as written.
func rawStem(program string) string {
	return strings.TrimSuffix(path.Base(program), path.Ext(program))
}

// stemWords are the other words of generic program names.
var stemWords = set("model", "models", "video", "image", "images", "data", "network", "net", "all", "new", "final",
	"single", "multi", "gpu", "gpus", "distributed", "dist", "local", "slurm", "cluster", "job", "jobs", "exp", "my", "arch",
	"architecture", "mem", // mem: LLaVA's train_mem.py, its memory-saving attention
	"params", "param", "parameters", "hparams", "hyperparams", // mobileViT_train_params.py: the program takes its settings
	"feature", "features", // feature_eval.py, extract_features.py: what the program computes with a model, not which
	"dataset", "datasets", // inference_dataset.py: what it runs on
	"paper") // train_paper.py: the settings a paper used

// modelDirs hold a directory for each model a project has.
var modelDirs = set("models", "archs", "architectures", "networks", "nets")

// codeDirs are the directories code lives in whatever it trains.
var codeDirs = set("scripts", "src", "tools", "bin", "examples", "train", "training", "code", "lib", "source", "jobs",
	"slurm", "experiments", "exp", "utils", "main")

// isCodeDir reports whether a directory's name (lower case) says code lives
// in it: one of codeDirs, or a name ending in "scripts" or "code"
// (organized_scripts, slurm-scripts, my_code), which says whose scripts,
// not what they train.
func isCodeDir(base string) bool {
	if codeDirs[base] || base == "ml" || base == "dl" {
		return true // src/ml/train.py: a package of the machine learning code (ml-20m, a data set, is a name)
	}
	i := strings.LastIndexAny(base, "_-")
	return i > 0 && (base[i+1:] == "scripts" || base[i+1:] == "code")
}

// outputName is the name a job's #SBATCH --output file gives its run:
// the file's name without its directories, extension and Slurm's
// patterns (logs/llama2-7b-%j.out is llama2-7b); "" where there is none or
// it is the job's name (%x).
func outputName(opts []Option) string {
	v, ok := Script{Sbatch: opts}.SbatchValue("--output", "-o")
	if !ok || strings.Contains(v, "%x") {
		return ""
	}
	v = path.Base(v)
	for _, p := range []string{"%j", "%J", "%A", "%a", "%N", "%n", "%t", "%u", "%s"} {
		v = strings.ReplaceAll(v, p, "")
	}
	if i := strings.LastIndexByte(v, '.'); i >= 0 {
		v = v[:i] // llama-3.1-8b.out, qdt_vit.o%J
	}
	return strings.Trim(v, "_-.")
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
	// A heterogeneous job's components (#SBATCH hetjob) each ask for
	// their own GPUs; the job has them all.
	n, gpusFrom, typ, typFrom := 0, "", "", ""
	comps := hetComponents(opts)
	for _, c := range comps {
		cn, cFrom, cTyp, cTypFrom := headerGPUs(Script{Sbatch: c})
		n += cn
		if gpusFrom == "" {
			gpusFrom = cFrom
		}
		if typ == "" {
			typ, typFrom = cTyp, cTypFrom
		}
	}
	if n > 0 {
		// The allocation is what the job asks for; a launcher's process
		// count (per node under srun, a step's own --ntasks, a list of
		// visible devices) speaks for it only when the header is silent.
		if len(comps) > 1 {
			gpusFrom += ", over the hetjob's components"
		}
		f.GPUs = n
		f.note("gpus", gpusFrom)
	}
	if f.GPUType == "" && typ != "" {
		f.GPUType = typ
		f.note("gpu_type", typFrom)
	}
}

// namedGPUType reads the GPU type the user wrote where Slurm does not read
// it: in the comment of an #SBATCH line that speaks of GPUs ("--gres=gpu:8
// # 8 GPUs per node (B200)"), else in the job's name (pgolf-8xA100). One
// type, written as its name (a100, not a word such as pascal that a job's
// name means otherwise), no shorter than three characters and with a digit
// (not the t4 or l4 a name holds by chance), or "".
func namedGPUType(text, jobName string) (typ, from string) {
	one := func(names []GPUName, written string) string {
		t := ""
		for _, g := range names {
			if len(g.Type) < 3 || !hasDigit(g.Type) || !strings.Contains(written, g.Type) || t != "" && g.Type != t {
				return ""
			}
			t = g.Type
		}
		return t
	}
	var found []GPUName
	comments := ""
	line := 0
	for l := range scriptLines(text) {
		line++
		t := strings.TrimSpace(l)
		if t != "" && !strings.HasPrefix(t, "#") {
			break // the header ends at the first command
		}
		body, ok := strings.CutPrefix(t, "#SBATCH")
		if !ok {
			continue
		}
		opt, comment, ok := strings.Cut(body, "#")
		if !ok {
			continue
		}
		comment = strings.ToLower(comment)
		// A comment that says GPU, or one on the line that picks the
		// hardware (--partition=accel-2  # Apolo V100 partition).
		opt = strings.TrimLeft(strings.TrimSpace(opt), "-")
		if i := strings.IndexAny(opt, "= \t"); i >= 0 {
			opt = opt[:i]
		}
		if !strings.Contains(comment, "gpu") && !hardwareOptions[opt] || strings.Contains(comment, "e.g") || strings.Contains(comment, "example") {
			continue // ("# e.g. gpu, kempner_h100": a choice, not the job's)
		}
		if names := ReadGPUNames(comment); len(names) > 0 {
			found = append(found, names...)
			comments += comment + " "
			from = "#SBATCH comment, line " + strconv.Itoa(line)
		}
	}
	if t := one(found, comments); t != "" {
		return t, from
	}
	if t := one(ReadGPUNames(jobName), strings.ToLower(jobName)); t != "" {
		return t, jobNameSource
	}
	return "", ""
}

// hetComponents splits a header at its hetjob (or packjob) lines into the
// options of each component of a heterogeneous job; one, for most jobs.
func hetComponents(opts []Option) [][]Option {
	var comps [][]Option
	start := 0
	for i, o := range opts {
		if o.Key == hetjobKey {
			comps = append(comps, opts[start:i])
			start = i + 1
		}
	}
	return append(comps, opts[start:])
}

// headerGPUs reads the GPUs one job (or one component of a heterogeneous
// job) asks for, and their type, with where each was read.
func headerGPUs(s Script) (n int, gpusFrom, typ, typFrom string) {
	from := ""
	if g, ok := s.gresGPU(); ok {
		n, typ, from = int(g.Count), g.Type, "#SBATCH --gres"
		typFrom = from
	}
	perJob := false // --gpus counts the job's GPUs; the others a node's or a task's
	for _, k := range []string{"--gpus", "-G", "--gpus-per-node", "--gpus-per-task"} {
		if v, ok := s.SbatchValue(k); ok {
			t, c := splitTypedCount(v)
			if c > 0 && perJob {
				// --gpus=4 --gpus-per-node=2: the job's count stands (on two
				// nodes); the other may name the type.
				if typ == "" && t != "" {
					typ, typFrom = t, "#SBATCH "+k
				}
				continue
			}
			if c > 0 {
				if t != "" || typ == "" || c != n {
					// --gpus-per-node=1 beside --gres=gpu:v100:1 keeps the
					// gres's type: the same GPUs, the type said once.
					typ, typFrom = t, "#SBATCH "+k
				}
				n, from = c, "#SBATCH "+k
				perJob = k == "--gpus" || k == "-G"
			}
		}
	}
	gpusFrom = from
	nodes, nodesFrom := nodeCount(s)
	switch tasks, perNode := headerCount(s, "--ntasks", "-n"), headerCount(s, "--ntasks-per-node"); {
	case n == 0 || perJob:
	case from == "#SBATCH --gpus-per-task" && tasks > 0:
		n *= tasks
		gpusFrom += " × #SBATCH --ntasks"
	case from == "#SBATCH --gpus-per-task" && perNode > 0:
		n *= perNode * max(nodes, 1)
		gpusFrom += " × #SBATCH --ntasks-per-node"
		if nodes > 1 {
			gpusFrom += " × " + nodesFrom
		}
	case nodes > 1:
		n *= nodes
		gpusFrom += " × " + nodesFrom
	}
	if namesNoGPU(typ) {
		typ, typFrom = "", "" // --gres=gpu:4g.40gb:1: a MIG slice of a GPU not named
	}
	if typ == "" {
		typ, typFrom = headerGPUType(s, nil) // --constraint, --partition, ... (gputype.go)
	}
	return n, gpusFrom, typ, typFrom
}

// nodeCount is how many nodes Slurm gives the job a header describes, and
// what says so: --nodes (the least of a range), else the hosts --nodelist
// names (Slurm gives the job all of them), else --ntasks over
// --ntasks-per-node (--ntasks=24 --ntasks-per-node=1 is 24 nodes); 0 where
// the header leaves it to Slurm. headerGPUs multiplies a node's GPUs by it,
// and jobEnv exports it as SLURM_NNODES, so that a script's
// $((SLURM_NNODES * 8)) and its header agree.
func nodeCount(s Script) (int, string) {
	if s.hasSbatch("--nodes", "-N") {
		if n := headerCount(s, "--nodes", "-N"); n > 0 {
			return n, "#SBATCH --nodes"
		}
		return 0, "" // --nodes=$N: unknown, and no other line overrides it
	}
	if v, ok := s.SbatchValue("--nodelist", "-w"); ok && !strings.Contains(v, "/") {
		// A file of hosts (-w ./hosts) is not read.
		if n, err := hostlist.Count(v, 1<<16); err == nil { // no job holds more
			return n, "the hosts #SBATCH --nodelist names"
		}
	}
	tasks, perNode := headerCount(s, "--ntasks", "-n"), headerCount(s, "--ntasks-per-node")
	if tasks > 0 && perNode > 0 {
		return (tasks + perNode - 1) / perNode, "the nodes #SBATCH --ntasks over --ntasks-per-node gives"
	}
	return 0, ""
}

// headerCount reads a count the header gives under any of keys: the least
// of a range (--nodes=2-4 is 2); 0 where it is absent or not a number from
// 1 to 1<<20 (jobEnv's counts and nodeCount's alike).
func headerCount(s Script, keys ...string) int {
	v, ok := s.SbatchValue(keys...)
	if !ok {
		return 0
	}
	v, _, _ = strings.Cut(v, "-") // --nodes=2-4 starts with 2
	if c, err := strconv.Atoi(v); err == nil && c >= 1 && c <= 1<<20 {
		return c
	}
	return 0
}

// splitTypedCount reads "a100:2" or "2".
func splitTypedCount(v string) (string, int) {
	typ, cnt := "", v
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		typ, cnt = v[:i], v[i+1:]
	}
	c, err := strconv.Atoi(cnt)
	if err != nil && typ == "" && !looksNumeric(v) && validToken(v) {
		return v, 1 // --gpus=a100-80: a type alone is one GPU of it, as Slurm reads it
	}
	if err != nil || c <= 0 || c > MaxGresCount {
		return "", 0
	}
	return typ, c
}

func gpuCount(v string) int {
	_, c := splitTypedCount(strings.TrimPrefix(strings.TrimPrefix(v, "gpu:"), "gres/gpu:"))
	return c
}

// Field is one feature read from a script, as people see it: its JSON
// name, its value printed, and where it came from.
type Field struct {
	Name, Value, From string
}

// Fields lists the features f holds, in a fixed order, each with its source.
func (f Features) Fields() []Field {
	var out []Field
	add := func(name, value string) {
		if value != "" && value != "0" {
			out = append(out, Field{name, value, f.From[name]})
		}
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	model := f.Model
	if f.ModelFrom == "path" && model != "" {
		model += " (workload's name)" // no model is named: model_from path
	}
	add("model", model)
	add("params", num(f.Params))
	add("batch_size", num(f.BatchSize))
	add("global_batch_size", num(f.GlobalBatchSize))
	add("precision", f.Precision)
	add("seq_len", num(f.SeqLen))
	add("image_size", num(f.ImageSize))
	add("grad_accum", num(f.GradAccum))
	add("zero_stage", strconv.Itoa(f.ZeROStage))
	add("steps", num(f.Steps))
	add("epochs", num(f.Epochs))
	add("gpus", strconv.Itoa(f.GPUs))
	add("gpu_type", f.GPUType)
	add("tuning", f.Tuning)
	add("lora_rank", num(f.LoRARank))
	if f.Checkpointing {
		add("checkpointing", "true")
	}
	add("optimizer", f.Optimizer)
	return out
}
