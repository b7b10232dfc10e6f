package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/predictor/eval"
	"github.com/augur-hpc/augur/predictor/forest"
)

func init() {
	register(command{"eval", "eval --dataset FILE --format timm-memory [--catalog FILE] [--card-mib N] [--folds N] [--calibrate-prior] [--json] | eval --scripts DIR [--verbose] [--json] [--timing]: evaluate memory prediction, warm and cold, against baselines; or how well batch scripts are read, per feature, against DIR/labels.json, and (--timing) how long each takes to read", runEval})
}

func runEval(args []string) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	dataset := fs.String("dataset", "", "CSV of measured peaks")
	format := fs.String("format", "timm-memory", "dataset format: timm-memory (model,batch_size,peak_mib)")
	catalog := fs.String("catalog", "", "timm benchmark CSV giving parameter counts and image sizes (optional)")
	card := fs.Float64("card-mib", 40960, "memory of the GPU the dataset was measured on, MiB")
	folds := fs.Int("folds", 10, "family-grouped folds")
	trees := fs.Int("trees", 50, "trees per forest")
	asJSON := fs.Bool("json", false, "print JSON")
	scripts := fs.String("scripts", "", "directory of batch scripts with a labels.json of what a person reads from each")
	verbose := fs.Bool("verbose", false, "with --scripts: list every feature read wrong, missed or read where the script says nothing")
	jobFiles := fs.String("job-files", "", "with --scripts: a directory of the config files the scripts name, script S's under S/ (absolute paths under abs/, ~/ under home/, the rest by the relative path; see eval.FileKey); without it the scripts are read alone")
	timing := fs.Bool("timing", false, "with --scripts: time reading each script (augurd's first sight of it) and print the spread")
	calibrate := fs.Bool("calibrate-prior", false, "with --dataset: fit the shipped prior's constants on the calibration half of the families, and print them")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *timing && (*scripts == "" || *asJSON) {
		return badUsage(fs, "--timing goes with --scripts DIR, and prints text: give it without --json")
	}
	if *scripts != "" {
		if err := evalScripts(*scripts, *jobFiles, *verbose, *asJSON); err != nil || !*timing {
			return err
		}
		return timeScripts(*scripts)
	}
	if *dataset == "" || *format != "timm-memory" {
		return badUsage(fs, "--dataset FILE is required, and --format is timm-memory (or give --scripts DIR)")
	}
	rows, cat, err := readTimm(*dataset, *catalog)
	if err != nil {
		return err
	}
	kept, dropped := eval.DropArtefacts(rows, *card)
	if *calibrate {
		c, n, err := eval.CalibratePrior(kept, predictor.ShippedPrior())
		if err != nil {
			return err
		}
		fmt.Printf("prior constants from %d rows of the calibration families (upper at %.0f%% coverage):\n", n, 100*eval.PriorUpperLevel)
		fmt.Printf("predictor.PriorConstants{ContextMiB: %g, ActivationScale: %g, Upper: %g}\n", c.ContextMiB, c.ActivationScale, c.Upper)
		fmt.Printf("shipped: %+v\n", predictor.ShippedPriorConstants)
		return nil
	}
	rep, err := eval.Run(kept, len(dropped), eval.Options{CardMiB: *card, Folds: *folds, Catalog: cat,
		Train: predictor.TrainConfig{Forest: forest.Config{Trees: *trees, Seed: 1}}})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Printf("%d rows of %d models (%d families); %d out-of-memory artefacts dropped\n", rep.Rows, rep.Models, rep.Families, rep.Dropped)
	fmt.Printf("%-26s %8s %8s %8s %8s %6s\n", "", "median", "p90", "under", "over", "rows")
	line := func(name string, m eval.Metrics) {
		fmt.Printf("%-26s %7.1f%% %7.1f%% %7.1f%% %7.1f%% %6d\n", name, 100*m.MedianRelError, 100*m.P90RelError, 100*m.UnderRate, 100*m.OverReservation, m.Rows)
	}
	line("warm augur", rep.Warm)
	line("warm whole GPU", rep.Baselines.WholeGPU.Warm)
	line("warm global regression", rep.Baselines.GlobalRegression.Warm)
	line("cold augur", rep.Cold)
	line("cold augur (test half)", rep.ColdPriorTest)
	line("cold whole GPU", rep.Baselines.WholeGPU.Cold)
	line("cold global regression", rep.Baselines.GlobalRegression.Cold)
	line("day one prior (test half)", rep.DayOne)
	line("day one prior (all)", rep.DayOneAll)
	line("day one, 1 run, curve", rep.DayOneOneRun)
	line("day one, 1 run, flat", rep.DayOneOneRunFlat)
	fmt.Printf("prior %s; day one: no trained model, no history; test half: the families its constants were not calibrated on;\n1 run: one earlier run at another batch size (test half), carried by the prior's curve or not\n", rep.PriorVersion)
	return nil
}

// evalScripts scores how Augur reads the labelled scripts of dir, and
// predicts from each as augur predict would, which must never fail.
func evalScripts(dir, jobFiles string, verbose, asJSON bool) error {
	var files fs.FS
	if jobFiles != "" {
		if fi, err := os.Stat(jobFiles); err != nil || !fi.IsDir() {
			return fmt.Errorf("--job-files %s: not a directory", jobFiles)
		}
		files = os.DirFS(jobFiles)
	}
	rep, err := eval.EvalScriptsFiles(os.DirFS(dir), files, eval.PredictCold)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Printf("%d scripts in %s\n", rep.Scripts, dir)
	fmt.Printf("%-11s %7s %8s %6s %7s %9s %9s\n", "feature", "stated", "correct", "wrong", "missed", "accuracy", "spurious")
	for _, s := range rep.Scores {
		fmt.Printf("%-11s %7d %8d %6d %7d %8.1f%% %9d\n", s.Feature, s.Stated, s.Correct, s.Wrong, s.Missed, 100*s.Accuracy(), s.Spurious)
	}
	fmt.Printf("models that are a wrapper or a variable: %d; failed predictions: %d\n", rep.BadModels, rep.PredictErrs)
	if si := rep.StandIns; si.Labelled+si.Other+si.Unlabeled > 0 {
		model := rep.Scores[slices.Index(eval.ScoredFeatures, "model")]
		fmt.Printf("workload names standing in for a model (model_from path): %d the labelled model, %d another name, %d where none is labelled;\n"+
			"  counted as claims, the model row would read %d wrong and %d spurious (accuracy unchanged)\n",
			si.Labelled, si.Other, si.Unlabeled, model.Wrong+si.Other, model.Spurious+si.Unlabeled)
	}
	if len(rep.ModelBySource) > 0 {
		var parts []string
		for _, s := range rep.ModelBySource {
			parts = append(parts, fmt.Sprintf("%s %.1f%% (%d/%d)", s.Feature, 100*s.Accuracy(), s.Correct, s.Stated))
		}
		fmt.Printf("model by where the labels say it is named: %s\n", strings.Join(parts, ", "))
	}
	if verbose {
		for _, r := range rep.Results {
			for _, name := range eval.ScoredFeatures {
				o := r.Outcomes[name]
				if o.Outcome != eval.Correct && o.Outcome != eval.Silent {
					fmt.Printf("%s: %s %s: want %q, got %q\n", r.File, name, o.Outcome, o.Want, o.Got)
				}
			}
			if r.BadModel {
				fmt.Printf("%s: model %q is a wrapper or a variable\n", r.File, r.Features.Model)
			}
			if r.PredictErr != "" {
				fmt.Printf("%s: predict failed: %s\n", r.File, r.PredictErr)
			}
		}
	}
	return nil
}

// timeScripts reports how long predictor.ParseScript takes on each script
// of dir, as augurd's first sight of it (no cache): each script's median
// of a few reads, and the spread of those over the scripts, by length.
// A timing on a shared machine, for the reader to weigh; no verdict.
func timeScripts(dir string) error {
	fsys := os.DirFS(dir)
	files, err := eval.ScriptFiles(fsys)
	if err != nil {
		return err
	}
	type timed struct {
		d     time.Duration
		lines int
	}
	var ts []timed
	for _, name := range files {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		text := string(b)
		predictor.ParseScript(text) // warm
		const reads = 7
		ds := make([]time.Duration, reads)
		for i := range ds {
			start := time.Now()
			predictor.ParseScript(text)
			ds[i] = time.Since(start)
		}
		slices.Sort(ds)
		ts = append(ts, timed{ds[reads/2], strings.Count(text, "\n")})
	}
	if len(ts) == 0 {
		return nil
	}
	spread := func(label string, keep func(timed) bool) {
		var ds []time.Duration
		var lines []int
		for _, t := range ts {
			if keep(t) {
				ds, lines = append(ds, t.d), append(lines, t.lines)
			}
		}
		if len(ds) == 0 {
			return
		}
		slices.Sort(ds)
		slices.Sort(lines)
		q := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
		fmt.Printf("  %-22s %4d scripts (median %3d lines): p50 %v, p90 %v, p99 %v, max %v\n", label, len(ds),
			lines[len(lines)/2], q(0.5).Round(time.Microsecond), q(0.9).Round(time.Microsecond),
			q(0.99).Round(time.Microsecond), ds[len(ds)-1].Round(time.Microsecond))
	}
	fmt.Printf("reading a script (predictor.ParseScript, no cache; each script's median of 7 reads):\n")
	spread("all", func(timed) bool { return true })
	spread("up to 50 lines", func(t timed) bool { return t.lines <= 50 })
	spread("51 to 200 lines", func(t timed) bool { return t.lines > 50 && t.lines <= 200 })
	spread("over 200 lines", func(t timed) bool { return t.lines > 200 })
	return nil
}
