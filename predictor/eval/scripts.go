package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/augur-hpc/augur/predictor"
)

// A labelled script corpus is a directory of batch scripts and a
// labels.json beside them: for each file, what a person reads from it.
//
//	{"hf-lora.sbatch": {"pattern": "HF Trainer under accelerate",
//	   "model": "meta-llama/llama-2-7b-hf", "batch_size": 4, "gpus": 8,
//	   "gpu_type": "a100", "precision": "bf16"}}
//
// A feature is labelled exactly when a person can state it from the
// script; an absent label means the script does not say, and Augur saying
// something there is scored as spurious.

// LabelsFile is the name of a corpus's labels. Every other file of the
// directory is a script, but for .json and .md files (notes beside them).
const LabelsFile = "labels.json"

// Label is what a person reads from one script; nil means "not stated".
type Label struct {
	Pattern string  `json:"pattern,omitempty"`
	Model   *string `json:"model,omitempty"`
	// ModelSource says where in the script a person found the model:
	// "command" (commands, arguments, configs, paths), "jobname" (only the
	// job or output file name), "comment" (only a comment). Optional; the
	// report tallies the model's score by it.
	ModelSource string   `json:"model_source,omitempty"`
	BatchSize   *float64 `json:"batch_size,omitempty"`
	GPUs        *int     `json:"gpus,omitempty"`
	GPUType     *string  `json:"gpu_type,omitempty"`
	Precision   *string  `json:"precision,omitempty"`
}

// ScoredFeatures are the features a corpus is scored on, in report order.
var ScoredFeatures = []string{"model", "batch_size", "gpus", "gpu_type", "precision"}

// Outcome is how Augur did on one feature of one script.
type Outcome string

const (
	Correct  Outcome = "correct"  // stated, and Augur read the same
	Wrong    Outcome = "wrong"    // stated, and Augur read something else
	Missed   Outcome = "missed"   // stated, and Augur read nothing
	Spurious Outcome = "spurious" // not stated, and Augur read something
	Silent   Outcome = "silent"   // not stated, and Augur read nothing
)

// ScriptResult is one script's reading against its label.
type ScriptResult struct {
	File     string             `json:"file"`
	Pattern  string             `json:"pattern,omitempty"`
	Features predictor.Features `json:"features"`
	// Files are the config files the script names and does not write
	// (predictor.Script.Files): eval reads the script alone, without them.
	Files []string `json:"files,omitempty"`
	// Outcomes per scored feature, with what was stated and what was read.
	Outcomes map[string]FeatureOutcome `json:"outcomes"`
	// BadModel is set when the model Augur reported is a wrapper, a
	// launcher or an unexpanded variable: never acceptable.
	BadModel bool `json:"bad_model,omitempty"`
	// PredictErr is set when a prediction from the script failed.
	PredictErr string `json:"predict_error,omitempty"`
}

// FeatureOutcome is one feature's outcome with both readings.
type FeatureOutcome struct {
	Outcome Outcome `json:"outcome"`
	Want    string  `json:"want,omitempty"`
	Got     string  `json:"got,omitempty"`
}

// Score is one feature's tally over a corpus.
type Score struct {
	Feature  string `json:"feature"`
	Stated   int    `json:"stated"` // scripts where a person reads it
	Correct  int    `json:"correct"`
	Wrong    int    `json:"wrong"`
	Missed   int    `json:"missed"`
	Spurious int    `json:"spurious"` // read where the script does not say
}

// Accuracy is Correct over Stated (1 when nothing is stated).
func (s Score) Accuracy() float64 {
	if s.Stated == 0 {
		return 1
	}
	return float64(s.Correct) / float64(s.Stated)
}

// ScriptsReport is a corpus's evaluation.
type ScriptsReport struct {
	Scripts     int     `json:"scripts"`
	Scores      []Score `json:"scores"`
	BadModels   int     `json:"bad_models"`
	PredictErrs int     `json:"predict_errors"`
	// StandIns tallies the workload names that stood in for a model
	// (ModelFrom "path"), which the model score counts only where they are
	// the labelled model: the strict reading counts the others as wrong.
	StandIns StandIns `json:"stand_ins"`
	// ModelBySource is the model's score by where the labels say a person
	// found it (Label.ModelSource), for corpora that say.
	ModelBySource []Score        `json:"model_by_source,omitempty"`
	Results       []ScriptResult `json:"results"`
}

// StandIns counts the stand-in names (a program's, directory's or job's
// name for a model) by how they compare with the label.
type StandIns struct {
	Labelled  int `json:"labelled"`  // the labelled model: scored correct
	Other     int `json:"other"`     // a model is labelled, another name: scored missed
	Unlabeled int `json:"unlabeled"` // no model labelled: scored silent
}

// Predict is the prediction step run on every script, to show that none
// fails; it returns an error for a failed prediction (a panic is one).
type Predict func(predictor.Script) error

// PredictCold predicts from a script as `augur predict` does without a
// trained model or history: the job its #SBATCH header submits.
func PredictCold(s predictor.Script) error {
	job, _, err := predictor.ScriptJob(s, predictor.SubmitOptions{})
	if err != nil {
		return err
	}
	predictor.NewCombined(nil, predictor.NewHistory(1, nil)).Predict(job, nil)
	return nil
}

// LoadLabels reads a corpus's labels.json.
func LoadLabels(dir fs.FS) (map[string]Label, error) {
	b, err := fs.ReadFile(dir, LabelsFile)
	if err != nil {
		return nil, fmt.Errorf("a scripts corpus needs %s beside its scripts: %w", LabelsFile, err)
	}
	var labels map[string]Label
	if err := json.Unmarshal(b, &labels); err != nil {
		return nil, fmt.Errorf("%s: %w", LabelsFile, err)
	}
	return labels, nil
}

// ScriptFiles lists the scripts of a corpus directory: its regular files
// but hidden ones, labels.json and notes (.json, .md).
func ScriptFiles(dir fs.FS) ([]string, error) {
	entries, err := fs.ReadDir(dir, ".")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if ext := path.Ext(e.Name()); e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && ext != ".json" && ext != ".md" {
			files = append(files, e.Name())
		}
	}
	return files, nil
}

// EvalScripts reads every labelled script of dir, scores its features
// against its label and runs predict on it. Scripts without a label, and
// labels without a script, are errors: a corpus must say what it holds.
func EvalScripts(dir fs.FS, predict Predict) (ScriptsReport, error) {
	return EvalScriptsFiles(dir, nil, predict)
}

// EvalScriptsFiles is EvalScripts with the config files the scripts name
// (predictor.Script.Files) in files: those of script S under S/, each by
// FileKey of the path S names it by. A nil files reads the scripts alone.
func EvalScriptsFiles(dir, jobFiles fs.FS, predict Predict) (ScriptsReport, error) {
	labels, err := LoadLabels(dir)
	if err != nil {
		return ScriptsReport{}, err
	}
	files, err := ScriptFiles(dir)
	if err != nil {
		return ScriptsReport{}, err
	}
	if len(files) == 0 {
		return ScriptsReport{}, ErrNoScripts
	}
	var problems []string
	for _, f := range files {
		if _, ok := labels[f]; !ok {
			problems = append(problems, f+" has no label")
		}
	}
	for f := range labels {
		if !slices.Contains(files, f) {
			problems = append(problems, "label "+f+" has no script")
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return ScriptsReport{}, fmt.Errorf("%s: %s", LabelsFile, strings.Join(problems, "; "))
	}
	rep := ScriptsReport{Scripts: len(files)}
	scores := map[string]*Score{}
	for _, name := range ScoredFeatures {
		scores[name] = &Score{Feature: name}
	}
	for _, f := range files {
		text, err := fs.ReadFile(dir, f)
		if err != nil {
			return ScriptsReport{}, err
		}
		s := predictor.ParseScript(string(text))
		if jobFiles != nil && len(s.Files) > 0 {
			s, _ = predictor.ReadJobFiles(s, string(text), nil, nil, func(paths []string) map[string]string {
				given := map[string]string{}
				for _, p := range paths {
					if b, err := fs.ReadFile(jobFiles, path.Join(f, FileKey(p))); err == nil {
						given[p] = string(b)
					}
				}
				return given
			})
		}
		r := ScoreReading(f, s, labels[f], predict)
		for name, o := range r.Outcomes {
			s := scores[name]
			switch o.Outcome {
			case Correct:
				s.Stated++
				s.Correct++
			case Wrong:
				s.Stated++
				s.Wrong++
			case Missed:
				s.Stated++
				s.Missed++
			case Spurious:
				s.Spurious++
			}
		}
		if l := labels[f]; l.Model != nil && l.ModelSource != "" {
			i := slices.IndexFunc(rep.ModelBySource, func(s Score) bool { return s.Feature == l.ModelSource })
			if i < 0 {
				rep.ModelBySource = append(rep.ModelBySource, Score{Feature: l.ModelSource})
				i = len(rep.ModelBySource) - 1
			}
			bs := &rep.ModelBySource[i]
			bs.Stated++
			switch r.Outcomes["model"].Outcome {
			case Correct:
				bs.Correct++
			case Wrong:
				bs.Wrong++
			case Missed:
				bs.Missed++
			}
		}
		if r.BadModel {
			rep.BadModels++
		}
		if r.Features.ModelFrom == "path" && r.Features.Model != "" {
			switch l := labels[f]; {
			case l.Model == nil:
				rep.StandIns.Unlabeled++
			case SameModel(*l.Model, r.Features.Model):
				rep.StandIns.Labelled++
			default:
				rep.StandIns.Other++
			}
		}
		if r.PredictErr != "" {
			rep.PredictErrs++
		}
		rep.Results = append(rep.Results, r)
	}
	slices.SortFunc(rep.ModelBySource, func(a, b Score) int { return strings.Compare(a.Feature, b.Feature) })
	for _, name := range ScoredFeatures {
		rep.Scores = append(rep.Scores, *scores[name])
	}
	return rep, nil
}

// ScoreScript reads one script and scores it against its label.
func ScoreScript(file, text string, l Label, predict Predict) ScriptResult {
	return ScoreReading(file, predictor.ParseScript(text), l, predict)
}

// ScoreReading scores a script's reading against its label.
func ScoreReading(file string, s predictor.Script, l Label, predict Predict) (r ScriptResult) {
	f := s.Features
	r = ScriptResult{File: file, Pattern: l.Pattern, Features: f, Files: s.Files, Outcomes: map[string]FeatureOutcome{}}
	model := f.Model
	if f.ModelFrom == "path" && (l.Model == nil || !SameModel(*l.Model, f.Model)) {
		// The program's or its directory's name stands in for a model
		// (cyclegan.py, cd .../deformable-detr): it counts where it is the
		// name a person reads, and is no claim where it is not.
		model = ""
	}
	r.Outcomes["model"] = outcome(l.Model, model, SameModel)
	r.Outcomes["batch_size"] = outcome(floatString(l.BatchSize), num(f.BatchSize), strings.EqualFold)
	r.Outcomes["gpus"] = outcome(intString(l.GPUs), num(float64(f.GPUs)), strings.EqualFold)
	r.Outcomes["gpu_type"] = outcome(l.GPUType, f.GPUType, SameGPUType)
	r.Outcomes["precision"] = outcome(l.Precision, f.Precision, strings.EqualFold)
	// A wrapper's word the person read as the model, or as a word of its
	// name, is one: Mamba, the architecture ("mamba autoencoder"), beside
	// mamba, conda's tool.
	r.BadModel = f.Model != "" && WrapperOrVariable(f.Model) && (l.Model == nil || !SameModel(*l.Model, f.Model) && !nameWord(*l.Model, f.Model))
	if predict != nil {
		func() {
			defer func() {
				if p := recover(); p != nil {
					r.PredictErr = fmt.Sprint("panic: ", p)
				}
			}()
			if err := predict(s); err != nil {
				r.PredictErr = err.Error()
			}
		}()
	}
	return r
}

func outcome(want *string, got string, same func(a, b string) bool) FeatureOutcome {
	o := FeatureOutcome{Got: got}
	switch {
	case want == nil && got == "":
		o.Outcome = Silent
	case want == nil:
		o.Outcome = Spurious
	case got == "":
		o.Outcome, o.Want = Missed, *want
	case same(*want, got):
		o.Outcome, o.Want = Correct, *want
	default:
		o.Outcome, o.Want = Wrong, *want
	}
	return o
}

func num(v float64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func floatString(v *float64) *string {
	if v == nil {
		return nil
	}
	s := strconv.FormatFloat(*v, 'g', -1, 64)
	return &s
}

func intString(v *int) *string {
	if v == nil {
		return nil
	}
	s := strconv.Itoa(*v)
	return &s
}

// SameModel compares model names as people write them: case aside, with
// or without the organisation of a Hugging Face id ("meta-llama/Llama-2-7b-hf"
// is "llama-2-7b-hf"), with or without Meta's brand and the "-hf" of its
// converted weights ("Meta-Llama-3-8B-Instruct" is "llama-3-8b-instruct",
// "llama-2-7b-chat-hf" is "llama-2-7b-chat"), and '-', '_', '.', spaces and
// the slash before a patch size left out ("llama3_1-8b" is "llama3.1-8b",
// "phi4" is "phi-4", "jit-b/16" is "jit-b16").
func SameModel(want, got string) bool {
	norm := func(s string) string {
		s = strings.ToLower(strings.TrimRight(strings.TrimSpace(s), "/"))
		if i := strings.LastIndexByte(s, '/'); i >= 0 && isDigits(s[i+1:]) {
			s = s[:i] + s[i+1:] // DiT-XL/2's patch size, not an organisation
		}
		s = s[strings.LastIndexByte(s, '/')+1:]
		s = strings.TrimSuffix(strings.TrimPrefix(s, "meta-"), "-hf")
		// llama3_1-8b is llama3.1-8b, phi4 is phi-4, "decoder-only ssm" is decoder_only_ssm
		return predictor.SquashModel(strings.Join(strings.Fields(s), ""))
	}
	return norm(want) == norm(got)
}

// SameGPUType compares a labelled GPU family ("a100") with the type Augur
// read, which is the site's own spelling when it comes from gres
// ("nvidia_a100_80gb", "quadro_rtx_8000", "RTXA6000", "v100l"): the two name
// the same family when the GPU names they spell (predictor.ReadGPUNames) do.
func SameGPUType(want, got string) bool {
	if strings.EqualFold(want, got) {
		return true
	}
	w, g := predictor.ReadGPUNames(want), predictor.ReadGPUNames(got)
	return len(w) == 1 && len(g) == 1 && w[0].Type != "" && w[0].Type == g[0].Type
}

// ErrNoScripts is returned for a corpus directory without scripts.
var ErrNoScripts = errors.New("no scripts beside " + LabelsFile)

// notModelWords are what a careless reading reports as the model: the
// wrappers, launchers and interpreters in front of the program.
var notModelWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`singularity apptainer docker podman enroot shifter ch-run charliecloud
		bash sh zsh env time nohup numactl stdbuf exec nice taskset timeout uv pixi poetry pipenv conda mamba
		micromamba nvidia-smi python python3 srun mpirun mpiexec torchrun deepspeed accelerate launch run exec
		tune lightning composer horovodrun module source`) {
		notModelWords[w] = true
	}
}

// WrapperOrVariable reports whether a model name is a wrapper, launcher or
// interpreter word, or holds an expansion the script never resolved.
func WrapperOrVariable(m string) bool {
	m = strings.ToLower(m)
	return notModelWords[m] || notModelWords[path.Base(m)] || strings.ContainsAny(m, "$`{}@") ||
		strings.HasPrefix(m, "python")
}

// FileKey is where a config file a script names by p (predictor.Script.Files)
// is kept beside it for EvalScriptsFiles: a relative path as it is, with
// each leading "../" as "up/", an absolute one under "abs/", one in the
// home directory under "home/" (/scratch/a.yaml is abs/scratch/a.yaml,
// ~/sft/a.yaml is home/sft/a.yaml).
func FileKey(p string) string {
	switch {
	case strings.HasPrefix(p, "/"):
		return "abs" + path.Clean(p)
	case p == "~" || strings.HasPrefix(p, "~/"):
		return path.Join("home", p[1:])
	}
	p = path.Clean(p)
	up := ""
	for p == ".." || strings.HasPrefix(p, "../") {
		up, p = up+"up/", strings.TrimPrefix(strings.TrimPrefix(p, ".."), "/")
	}
	return path.Join(up, p)
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// nameWord reports whether w is one of the words of the model name m
// ("mamba" of "mamba autoencoder", "mamba-2.8b"), case aside.
func nameWord(m, w string) bool {
	return slices.ContainsFunc(strings.FieldsFunc(m, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.'
	}), func(x string) bool { return strings.EqualFold(x, w) })
}
