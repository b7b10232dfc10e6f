package predictor

import (
	"crypto/sha256"
	"encoding/hex"
	"iter"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Script is what Augur reads from a batch script without running it.
type Script struct {
	// Sbatch holds the #SBATCH options in order, as "--name=value" or "-x value"
	// split into key and value ("--gres", "gpu:2").
	Sbatch []Option
	// Signature identifies "the same job again": the script with comments,
	// numbers, digits, paths and the values of what changes from run to run
	// (seeds, learning rates, output and log directories, run names, ports)
	// abstracted, and what names the model (model, parameter count, program,
	// GPU type) kept, hashed. Two runs that differ only in a batch size, a
	// seed, a date or the job name's counter share it; a model of another
	// size does not (see abstractWord).
	Signature string
	// Features are what the launch commands say about the work: model,
	// batch size, precision, GPUs (see Features).
	Features Features
	// Files are the config files (YAML, JSON) the launch commands name
	// and the Python programs they run (train.py; pkg/mod.py for python
	// -m pkg.mod) that the script neither wrote nor was given
	// (ParseScriptFiles), as paths the submitter's shell would open:
	// absolute, under the home directory ("~/runs/a.yaml") or relative to
	// the submission directory ("configs/llama2-7b.yaml"). At most
	// MaxJobFiles, in the order named.
	Files []string `json:",omitempty"`
}

// SignatureVersion names how Signature is computed. Change it with any
// change that gives a script another signature: augurd then re-keys the
// history it stored under the old ones (store.Resign) when it starts, so
// that earlier runs still match new submissions. Version 2 is the one
// issue 14 brought (abstracted run-varying values, the model's identity);
// 3 follows the model readings added since (held-out sets D and E, then
// detection configs read as architecture, backbone and neck), each of
// which changed the model, and so the signature, of some scripts; 4 the
// readings from held-out sets F to J (hub caches, weights files, sourced
// scripts given arguments, if/else launchers, program directories, ...);
// 5 the workload names that stand in for a model (a job's, a program's
// or a directory's name with the words any job uses cut away); 6 the
// readings from held-out sets P to S (comments' prose, configs' and
// experiments' names, camel case, models/ directories, ...) and a
// script's arguments, read where the submission carries them; 7 the
// readings added next (a submitter read for the job it hands sbatch on
// standard input, placeholders that name nothing, sizes run into a name
// with a decimal point, a job name the launch's values agree with, a
// module's own name, config files listed in one word, ViT-style sizes,
// depths, Hygon DCUs and GPU shards, tools run on hub models); 8 a
// script's own option loops (while/case/shift, getopts, for over "$@")
// run with the submission's arguments, and without them the defaults
// standing, ${v#*=}-style trims, an if over known words decided, DeepSeek's
// release names, a teacher's or reward model's hub id never taken for the
// model trained, and a job name's model family word as its workload; 9
// model flags read by how their names are built (--pretrained_model_name,
// --architecture), not only from a list, a shell script named for a
// family's variant (train_t5_large.sh) read as the launch, #SBATCH long
// options read as sbatch reads them (--constrain is --constraint), a
// config directory's .py after a shell script read as its config, and a
// partition, account or QOS name the constraint rules out not read as a
// GPU type; 10 a checkpoint file's name read for its model before the
// training state it records (name-epoch=20-val_loss=1.25.ckpt), and
// weights/ and pretrained_models/ read as local directories, not hub
// organisations, a GPU count taken at run time ($(nvidia-smi -L | wc -l))
// read as the node's, and a batch the launch is given over all GPUs read
// from the per-GPU variable it is computed from, and a wrapper no list
// knows read through to the python or launcher it is handed (xvfb-run -a
// python train.py), families written as two words (efficient_net_b4), the
// weights file a checkpoint directory holds (pytorch_model.bin) read as
// no model, a local model name's method words cut (llama2_70b_lora), and
// a script that stages data (srun copy-data.sh) not read as the launch,
// and a partition's type written with a plural, a node number or a count
// after it (gpu-h100s, h100n3, mi2104x), and in a workload's name a
// version kept (dreamer_v3) and a first word run into the rest kept
// (FastSpeech2); 11 architectures whose name alone names the model
// (schnet, painn, esmfold, afno, fastspeech2, ddpm) read where a family's
// bare name is not, a Hydra group's option read for the model its config
// is named for (solver=compression/encodec_base_24khz), a weights file
// named for its size alone read for its directory's model, and TinyLlama
// written as two words; 12 a model looked up in the hub cache by a command
// substitution ($(find .../models--Qwen--Qwen3-4B/snapshots ...)), and a
// config file named for its model under any flag (--train-toml qwen3_06b.toml);
// 13 a run's date (jun6) no name, a Hydra config directory's family with
// its config's variant (--config-name base), a hub id kept over a run's own
// name for the model, mT5/umT5/byT5 as families and a name joined with +
// (joint+morph) no model; 14 Hydra's models=... group read as the model,
// Megatron's --load read for the sized model its directory names, a
// family word inside a project directory's name (UCF-VIT/configs/...) no
// model, a job's name cut short of the program's (speechtoken for
// train_speechtokenizer.py) giving way to it, and a partition or
// constraint named pascal read as P100; 15 a program inside a project
// named for a versioned model (dinov2/run/eval/linear.py) standing in with
// that name; 16 a family's directory holding one of its sized models'
// (recipes/qwen/Qwen2.5-3B-Instruct/...) read as that model, a bare family
// word followed by another family's sized model in one name
// (..._hubert_..._vicuna_7b.sh) read as the sized one, a directory
// named for whose scripts it holds (organized_scripts) no project, and
// LeRobot's policy (--policy.type=act, --policy.path=..., policy=act) the
// model, and a GPU type followed by two letters or by its memory unit
// first (v100gl, v100g32) that type; 17 a file's sized word that is no
// family's (fin-8b of config_eng_fin_8b.yaml) giving way to the family of
// its directories (recipes/llama-3/), an RL algorithm under -a the agent,
// a call in inline Python (a = torch.ones(...)) no value, a comment
// naming a model read over Megatron's pretrain_gpt.py standing in, and a
// GPU type named in an #SBATCH line's comment or the job's name read; 18
// a run's weights or progress named (tiktok_ft_model, model_step_3000,
// output/dnerf/bouncingballs) no model, a weights file of the run's no
// longer over a flag's model, a bare heredoc's \$ the job's own variable,
// "training" a word that says what is trained (TrainingDinov2, the
// console anemoi-training), and the submission's environment read; 19
// the readings from held-out sets ACE to ACM (conda's activate script
// given an environment, podman-hpc, perun and nsys as wrappers, families'
// releases and well-known architectures, retrieval models by their role,
// RL algorithms, lighteval's and lm_eval's models, the output file's and a
// run's names read as the job's, a model the script downloads, a hidden
// file sourced last as the work, run directories and weights files no
// model's, and GPU types in the comment of a hardware line); 20 the
// readings from held-out sets ACS to ACZ (architectures such as fno, pinn,
// convlstm and nnunet, a family in as many dimensions, detectors' short
// names, open_clip's pretrained tag, a banner's logged model, a local
// model's mode word, a job's family word over a module's package, and one
// program run on several models naming none); 21 the readings from
// held-out sets ADA to ADI (ollama's and llama.cpp's models, a program or
// argument named for a kind of network, families' numbered generations
// and letter sizes only where they have them, a job's verb and the data
// after "on" cut from names, HRNet's width); 22 the readings from
// held-out sets ADJ to ADT (a dotted Python path's class, activation
// functions and transports no model, a container's --env and ollama's
// tags wherever named, more weights files' extensions, setup, data and
// date words in job and program names, architectures' names written out
// in full).
const SignatureVersion = "22"

// Option is one #SBATCH option.
type Option struct {
	Key   string
	Value string
}

// MaxScriptLines bounds the work done on one script; Slurm accepts scripts of
// several MB and the signature of the first lines is signature enough.
const MaxScriptLines = 20000

// MaxScriptArgs bounds the arguments a script is read with; a job given
// more is read as if its arguments were not known.
const MaxScriptArgs = 256

// ParseScript reads the #SBATCH header, computes the signature and reads the
// Features of the commands the script runs. It never fails and never
// panics: junk in, a signature of the junk out; its work is bounded by
// MaxScriptLines, MaxShellNodes and MaxShellDepth. The script's arguments
// are not known: $1 and "$@" are unknown, and so is what they set.
func ParseScript(text string) Script {
	return ParseScriptArgs(text, nil)
}

// ParseScriptArgs is ParseScript for a script run with the arguments given
// (sbatch train.sh llama-7b 32: ["llama-7b", "32"]), which $1, "$@" and $#
// read. A nil args means they are not known; an empty one, that there are
// none, so ${1:-default} is its default.
//
// A script with no #SBATCH header of its own that hands sbatch a job on
// its standard input (sbatch <<EOF ... EOF, a submitter run with bash), or
// a job script it wrote itself (cat > job.sbatch <<EOF ... EOF; sbatch
// job.sbatch), is read for the job it submits: the features are those of that job, with
// the options sbatch is given over its header; the signature stays the
// script's own, so that a submitter's runs never mix with its job's.
func ParseScriptArgs(text string, args []string) Script {
	return parseScript(text, args, nil, nil, nil, true, nil)
}

// ParseScriptEnv is ParseScriptArgs for a script submitted with the
// environment given: the "NAME=value" entries of the variables sbatch
// exports to the job (job_desc's environment, as the job_submit shim
// forwards it), which the script and the programs it runs then read, as
// in MODEL=llama-2-7b sbatch train.sh. An entry "NAME" alone is a
// variable set to a value not sent (a secret's), read as unknown; Slurm's
// own (SLURM_*) are Slurm's to set at launch and are passed over. Only the
// first MaxScriptEnv entries are read. A nil env is none known: the
// variables the script does not set are unset, as ParseScriptArgs reads
// them.
func ParseScriptEnv(text string, args, env []string) Script {
	return parseScript(text, args, env, nil, nil, true, nil)
}

// ParseScriptFiles is ParseScriptEnv with the text of some of the files a
// first reading listed in Script.Files, by those paths: a config file is
// read as one the script had written itself (its settings as the
// program's own flags), a program for its options' defaults where the
// command line does not set them (ProgramExcerpt); what the command line
// says wins over the config files, and they over the program. Only
// Features change: the signature stays the script's, so that a run whose
// files could not be read is still the same job again, and Files lists
// what was named and not given.
func ParseScriptFiles(text string, args, env []string, files map[string]string) Script {
	return withFiles(ParseScriptEnv(text, args, env), text, args, env, files, nil)
}

// withFiles is ParseScriptFiles given the script's reading without files
// (and its shell's parse, where ast is not nil).
func withFiles(s Script, text string, args, env []string, files map[string]string, ast *shellAST) Script {
	if len(files) == 0 || len(s.Files) == 0 {
		return s
	}
	w := parseScript(text, args, env, nil, files, true, ast)
	s.Features, s.Files = w.Features, w.Files
	return s
}

// MaxScriptEnv bounds the environment entries a script is read with.
const MaxScriptEnv = 256

// parseScript is ParseScriptFiles without the script's own signature kept,
// with options given over the header (from sbatch's command line),
// whether a submitted job may be followed, and the shell's parse where
// one was made already (ast, or nil).
func parseScript(text string, args, env []string, over []Option, files map[string]string, follow bool, ast *shellAST) Script {
	var s Script
	orig := text
	h := sha256.New()
	var buf []byte
	inHeader := true
	for line := range scriptLines(text) {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "#") {
			if inHeader && strings.HasPrefix(t, "#SBATCH") {
				s.Sbatch = append(s.Sbatch, parseSbatch(t[len("#SBATCH"):])...)
				buf = append(appendAbstract(buf[:0], t), '\n')
				h.Write(buf)
			}
			continue
		}
		// sbatch stops reading #SBATCH lines at the first command.
		inHeader = false
		buf = append(appendAbstract(buf[:0], t), '\n')
		h.Write(buf)
	}
	if len(args) > MaxScriptArgs {
		args = nil
	}
	own := len(s.Sbatch) > 0
	s.Sbatch = append(s.Sbatch, over...)
	var sub *submission
	wanted := []string{}
	s.Features, sub = scriptFeatures(orig, s.Sbatch, args, env, files, &wanted, ast)
	if len(wanted) > 0 {
		s.Files = wanted
	}
	if follow && !own && sub != nil && !(sub.unseen && s.Features.Program != "") {
		// The job a submitter hands sbatch runs with the environment the
		// submitter was given. (A job that runs its own training, then
		// submits a script it did not write, its next stage, is read as
		// itself.)
		args := []string{}
		if sub.args != nil {
			args = sub.args
		}
		job := parseScript(sub.text, args, env, sub.opts, files, false, nil)
		s.Sbatch, s.Features, s.Files = job.Sbatch, job.Features, job.Files
		s.Features.shiftLines(sub.bodyLine)
		src := "the job sbatch is given on its standard input"
		switch {
		case sub.unseen:
			src = "the options sbatch is given with the job script " + sub.file
		case sub.file != "":
			src = "the job script " + sub.file + " it writes and hands sbatch"
		case sub.wrap:
			src = "the command sbatch --wrap runs"
		}
		if sub.line > 0 {
			src = "line " + strconv.FormatUint(uint64(sub.line), 10) + ": " + src
		}
		s.Features.note("script", src)
	} else if follow && args == nil && env == nil && (s.Features.Model == "" || s.Features.ModelFrom == "path") {
		// A file read on its own: its comments' example of its submission
		// may give it the model.
		s = withUsage(s, orig, over, files, ast)
	}
	f := &s.Features
	buf = append(buf[:0], "\x00model="...)
	if !f.JobNameOnly() {
		// A word of the job's name is in the header's abstract already,
		// its counters as counters (myexp12 is myexp#).
		buf = append(buf, f.Model...)
	}
	buf = append(buf, " program="...)
	buf = append(append(buf, f.Program...), " gpu_type="...)
	buf = append(append(buf, f.GPUType...), " params="...)
	buf = strconv.AppendFloat(buf, f.Params, 'g', 4, 64)
	h.Write(buf)
	s.Signature = hex.EncodeToString(h.Sum(nil)[:12])
	return s
}

// scriptLines yields a script's lines, at most MaxScriptLines of them.
func scriptLines(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for n := 0; len(text) > 0 && n < MaxScriptLines; n++ {
			line, rest, _ := strings.Cut(text, "\n")
			text = rest
			if !yield(line) {
				return
			}
		}
	}
}

// hetjobKey is the Option that separates the components of a
// heterogeneous job's header (#SBATCH hetjob; packjob before Slurm 20.02).
const hetjobKey = "hetjob"

// sbatchShortArgs are sbatch's short options that take a value.
const sbatchShortArgs = "AaBbCcDdeGiJLMmNnopqStwx"

// parseSbatch reads the options of one #SBATCH line as sbatch does:
// arguments split at blanks, single or double quotes group one (the quotes
// dropped: --gpus-per-node="a40:8" is a40:8), a backslash takes the next
// character as it is, and an unquoted # ends the line.
func parseSbatch(rest string) []Option {
	return canonicalKeys(parseSbatchArgs(rest))
}

// canonicalKeys names each option's key as sbatch reads it
// (canonicalSbatchKey), in place.
func canonicalKeys(opts []Option) []Option {
	for i := range opts {
		opts[i].Key = canonicalSbatchKey(opts[i].Key)
	}
	return opts
}

// sbatchLongOptions are the long options of sbatch 22.05 (its --help),
// with the hidden ones real scripts use and those later releases add;
// sbatchAliases are other names sbatch takes for some of them.
var (
	sbatchLongOptions = strings.Fields(`account acctg-freq array batch bb bbf begin chdir cluster-constraint
		clusters comment constraint container contiguous core-spec cores-per-socket cpu-freq cpus-per-gpu
		cpus-per-task deadline delay-boot dependency distribution error exclude exclusive export export-file
		extra-node-info get-user-env gid gpu-bind gpu-freq gpus gpus-per-node gpus-per-socket gpus-per-task gres
		gres-flags help hint hold ignore-pbs input job-name kill-on-invalid-dep licenses mail-type mail-user
		mcs-label mem mem-bind mem-per-cpu mem-per-gpu mincpus network nice no-kill no-requeue nodefile nodelist
		nodes ntasks ntasks-per-core ntasks-per-gpu ntasks-per-node ntasks-per-socket ntasks-per-tres open-mode
		output overcommit oversubscribe parsable partition power prefer priority profile propagate qos quiet
		reboot requeue reservation segment signal sockets-per-node spread-job switches test-only thread-spec
		threads-per-core time time-min tmp tres-per-task uid umask usage use-min-nodes verbose version wait
		wait-all-nodes wckey wrap x11`)
	sbatchAliases = map[string]string{"tasks-per-node": "ntasks-per-node"}
)

// canonicalSbatchKey names an #SBATCH long option as sbatch reads it
// (getopt_long): an alias by the option's own name, and an abbreviation
// that only one option starts with in full (--constrain, --out,
// --gpus-per-nod); any other key, an ambiguous one (--gpu) or a plugin's
// (--container-image), as written.
func canonicalSbatchKey(k string) string {
	name, ok := strings.CutPrefix(k, "--")
	if !ok || name == "" || slices.Contains(sbatchLongOptions, name) {
		return k
	}
	if full, ok := sbatchAliases[name]; ok {
		return "--" + full
	}
	full := ""
	for _, o := range sbatchLongOptions {
		if strings.HasPrefix(o, name) {
			if full != "" {
				return k // ambiguous: sbatch refuses it
			}
			full = o
		}
	}
	for alias, o := range sbatchAliases {
		if strings.HasPrefix(alias, name) {
			if full != "" && full != o {
				return k
			}
			full = o // --tasks is --tasks-per-node's abbreviation
		}
	}
	if full == "" {
		return k
	}
	return "--" + full
}

// parseSbatchArgs splits an #SBATCH line's arguments into options, keys
// as written.
func parseSbatchArgs(rest string) []Option {
	fields := sbatchArgs(rest)
	var out []Option
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == hetjobKey || f == "packjob" {
			out = append(out, Option{Key: hetjobKey}) // the next component of a heterogeneous job
			continue
		}
		if !strings.HasPrefix(f, "-") {
			continue
		}
		if k, v, ok := strings.Cut(f, "="); ok && (strings.HasPrefix(f, "--") || len(k) == 2) {
			out = append(out, Option{Key: k, Value: v})
			continue
		}
		if len(f) > 2 && strings.IndexByte(sbatchShortArgs, f[1]) >= 0 {
			// getopt's attached value: -N4, -t24:00:00, -G2, -pgpu.
			out = append(out, Option{Key: f[:2], Value: f[2:]})
			continue
		}
		if i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "-") {
			out = append(out, Option{Key: f, Value: fields[i+1]})
			i++
			continue
		}
		out = append(out, Option{Key: f})
	}
	return out
}

// sbatchArgs splits the rest of an #SBATCH line into its arguments (see
// parseSbatch). A quote left open groups the rest of the line, where
// sbatch would refuse the script: the job is read as far as it goes.
func sbatchArgs(rest string) []string {
	var args []string
	var b strings.Builder
	in, quote, escaped := false, byte(0), false
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped, in = true, true
			continue
		case quote != 0:
			if c == quote {
				quote = 0
				continue
			}
		case c == '"' || c == '\'':
			quote, in = c, true
			continue
		case c == '#':
			i = len(rest) // a comment: the line ends here
			continue
		case asciiSpace(c):
			if in {
				args = append(args, b.String())
				b.Reset()
				in = false
			}
			continue
		}
		b.WriteByte(c)
		in = true
	}
	if in {
		args = append(args, b.String())
	}
	return args
}

// abstract is a line as signatures see it (see abstractWord), words
// separated by one space; appendAbstract is its allocation-free twin.
func abstract(line string) string {
	var b strings.Builder
	varying := false
	for _, w := range strings.Fields(line) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(abstractWord(w, varying))
		varying = runVaryingFlag(w)
	}
	return b.String()
}

// appendAbstract appends abstract(line) to buf without allocating for
// ASCII lines. It reads each word once, for where it ends and for what
// appendWord asks of it, and copies a word that needs no abstraction (no
// digit, slash or key=value) as it is.
func appendAbstract(buf []byte, line string) []byte {
	start := len(buf)
	varying := false
	for i := 0; i < len(line); {
		if asciiSpace(line[i]) {
			i++
			continue
		}
		j, eq, slashes, digits := i, -1, 0, 0
	scan:
		for ; j < len(line); j++ {
			switch c := line[j]; {
			case c >= 0x80:
				// strings.Fields' blanks are Unicode's: the plain way.
				return append(buf[:start], abstract(line)...)
			case asciiSpace(c):
				break scan
			case c == '=' && eq < 0:
				eq = j - i
			case c == '/':
				slashes++
			case c >= '0' && c <= '9':
				digits++
			}
		}
		w := line[i:j]
		i = j
		if len(buf) > start {
			buf = append(buf, ' ')
		}
		if eq > 0 || digits > 0 || slashes > 0 || varying && w[0] != '-' {
			buf = appendWord(buf, w, varying)
		} else {
			buf = append(buf, w...)
		}
		varying = w[0] == '-' && eq < 0 && runVarying[normFlag(hydraKey(w))]
	}
	return buf
}

// asciiSpace is strings.Fields' notion of a blank for ASCII bytes.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// abstractWord is one word as signatures see it: "*" for the value of a
// flag or variable that changes from run to run (after such a flag, when
// afterVarying; "--seed=3", "RUN_NAME=x" on its own), "#" for a number,
// "/" for a path, a Hugging Face "org/name" as it is, and any other word
// with its runs of digits as "#" ("exp17", "2024-05-01", "sft-v3"). What
// the digits told apart (resnet50, a llama of 13b) the signature keeps
// from the features instead.
func abstractWord(w string, afterVarying bool) string {
	return string(appendWord(nil, w, afterVarying))
}

func appendWord(buf []byte, w string, afterVarying bool) []byte {
	if afterVarying && !strings.HasPrefix(w, "-") {
		return append(buf, '*')
	}
	// One pass over the word for what the cases below ask.
	eq, slashes, digits := -1, 0, 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c == '=' && eq < 0:
			eq = i
		case c == '/':
			slashes++
		case c >= '0' && c <= '9':
			digits++
		}
	}
	if eq > 0 {
		k, v := w[:eq], w[eq+1:]
		buf = appendWord(buf, k, false)
		buf = append(buf, '=')
		if runVarying[normFlag(hydraKey(k))] {
			return append(buf, '*')
		}
		return appendWord(buf, v, false)
	}
	switch {
	case digits > 0 && isNumber(w):
		return append(buf, '#')
	case slashes > 0 && !strings.Contains(w, "://"):
		if looksLikeHFName(w) {
			return append(buf, w...)
		}
		return append(buf, '/')
	case digits == 0:
		return append(buf, w...)
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < '0' || c > '9' {
			buf = append(buf, c)
		} else if i == 0 || w[i-1] < '0' || w[i-1] > '9' {
			buf = append(buf, '#')
		}
	}
	return buf
}

// runVaryingFlag reports whether w is a flag whose value changes from run
// to run of the same job ("--seed", "--output_dir"); "--seed=3" carries
// its value and is not.
func runVaryingFlag(w string) bool {
	return strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && runVarying[normFlag(hydraKey(w))]
}

// hydraKey is the last part of a dotted key: trainer.default_root_dir is
// default_root_dir.
func hydraKey(k string) string {
	return k[strings.LastIndexByte(k, '.')+1:]
}

// runVarying are the flags and variables (normalised as normFlag does)
// whose values change between runs of one job.
var runVarying = set("seed", "random_seed", "data_seed", "manual_seed", "lr", "learning_rate", "min_lr", "max_lr",
	"base_lr", "blr", "warmup_lr", "output_dir", "out_dir", "outdir", "output_path", "save_dir", "save_path",
	"logging_dir", "log_dir", "logdir", "log_path", "tensorboard_dir", "default_root_dir", "dir", "run_dir",
	"checkpoint_dir", "ckpt_dir", "checkpoint_path", "save_folder", "run_name", "exp_name", "experiment_name",
	"name", "wandb_name", "wandb_run_name", "wandb_id", "run_id", "run_tag", "tag", "tags", "date", "timestamp",
	"resume", "resume_from_checkpoint", "load_checkpoint", "master_port", "main_process_port", "port",
	"rdzv_endpoint", "rdzv_id", "output", "o", "error", "e", "out", "time", "t")

// isNumber reports whether w is a numeric literal as scripts write them:
// 64, 0.001, 3e-4, 1_000, -5, 2x (never an identifier such as resnet50).
func isNumber(w string) bool {
	// strings.TrimLeft(w, "+-") and TrimRight(w, "xX%"), without the
	// cutset's set built on every call (this runs for every word of a
	// script's signature).
	for w != "" && (w[0] == '+' || w[0] == '-') {
		w = w[1:]
	}
	for w != "" && (w[len(w)-1] == 'x' || w[len(w)-1] == 'X' || w[len(w)-1] == '%') {
		w = w[:len(w)-1]
	}
	if w == "" {
		return false
	}
	digits := 0
	for i, r := range w {
		switch {
		case unicode.IsDigit(r):
			digits++
		case r == '.' || r == '_':
		case (r == 'e' || r == 'E') && i > 0 && digits > 0:
		case (r == '-' || r == '+') && i > 0 && (w[i-1] == 'e' || w[i-1] == 'E'):
		default:
			return false
		}
	}
	return digits > 0
}

// looksLikeHFName tells "meta-llama/Llama-2-7b-hf" (a model name that matters)
// from "/data/run3" or "out/ckpt" (paths that do not).
func looksLikeHFName(w string) bool {
	if strings.HasPrefix(w, "/") || strings.HasPrefix(w, ".") || strings.HasPrefix(w, "$") || strings.HasPrefix(w, "~") {
		return false
	}
	return strings.Count(w, "/") == 1 && !strings.ContainsAny(w, "*$")
}

// gresGPU is the gpu the header's --gres asks for, each comma-separated
// entry read alone (one that does not parse is passed over): gpu entries
// of several types add up (gpu:a40:4,gpu:3090:1 is 5 GPUs, of no one
// type), as Slurm allocates them all.
// Where the header asks for no gpu, a Hygon DCU request (--gres=dcu:4, as
// sites with Hygon's accelerators name them) counts: its type is the one
// it names, else "dcu"; and a request for shards of a GPU alone
// (--gres=shard:22528) is one GPU, shared.
func (s Script) gresGPU() (g GresEntry, ok bool) {
	v, given := s.SbatchValue("--gres")
	if !given {
		return g, false
	}
	var dcu, shard GresEntry
	for _, e := range strings.Split(v, ",") {
		if req, err := ParseGres(e); err == nil {
			for _, r := range req {
				switch r.Name {
				case "gpu":
					if ok {
						if r.Type != g.Type {
							r.Type = ""
						}
						r.Count += g.Count
					}
					g, ok = r, true
				case "dcu":
					dcu = r
				case "shard":
					shard = r
				}
			}
		}
	}
	switch {
	case ok:
	case dcu.Name != "":
		if dcu.Type == "" {
			dcu.Type = "dcu"
		}
		return dcu, true
	case shard.Name != "" && shard.Count > 0:
		shard.Count = 1
		return shard, true
	}
	return g, ok
}

// hasSbatch reports whether the header gives any of the keys.
func (s Script) hasSbatch(keys ...string) bool {
	_, ok := s.SbatchValue(keys...)
	return ok
}

// SbatchValue returns the last value given for any of the keys.
func (s Script) SbatchValue(keys ...string) (string, bool) {
	val, found := "", false
	for _, o := range s.Sbatch {
		for _, k := range keys {
			if o.Key == k {
				val, found = o.Value, true
			}
		}
	}
	return val, found
}
