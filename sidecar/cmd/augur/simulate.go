package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/augur-hpc/augur/sidecar/report"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/sidecar/policy"
	"github.com/augur-hpc/augur/sidecar/sim"
	"github.com/augur-hpc/augur/sidecar/trace"
)

func init() {
	register(command{"simulate", "simulate --trace FILE --format philly|gavel|tiresias --nodes N --gpus-per-node G [--gpu-types k80,p100,v100] --policies fifo,tiresias,... [--duration-error X] [--json] [--plot FILE]: replay a trace against the scheduling policies", runSimulate})
}

// simOptions are simulate's flags.
type simOptions struct {
	trace, format, gpuTypes, policies, plot, throughputs, predict string
	nodes, gpusPerNode                                            int
	durationError, restartCost, minRun, migrateGain, userLimits   float64
	maxPreemptions                                                int
	seed                                                          uint64
	typeBlind, asJSON                                             bool
}

// simReport is simulate's JSON output.
type simReport struct {
	Trace       string   `json:"trace"`
	Format      string   `json:"format"`
	Jobs        int      `json:"jobs"`
	Dropped     int      `json:"dropped_jobs"`
	Nodes       int      `json:"nodes"`
	GPUs        int      `json:"gpus"`
	GPUTypes    []string `json:"gpu_types"`
	Placement   string   `json:"placement"`
	Predictions string   `json:"predictions"`
	RestartCost float64  `json:"restart_cost_seconds"`
	// Limits says how the user time limits were made (--user-limits).
	Limits   string                  `json:"user_limits,omitempty"`
	Policies map[string]policyReport `json:"policies"`
}

type policyReport struct {
	AvgJCT      float64 `json:"avg_jct_seconds"`
	MedianJCT   float64 `json:"median_jct_seconds"`
	P95JCT      float64 `json:"p95_jct_seconds"`
	P99JCT      float64 `json:"p99_jct_seconds"`
	AvgQueue    float64 `json:"avg_queueing_delay_seconds"`
	Makespan    float64 `json:"makespan_seconds"`
	Utilization float64 `json:"utilization"`
	Speed       float64 `json:"speed"`
	Preemptions int     `json:"preemptions"`
	Migrations  int     `json:"migrations"`
	OOMFailures int     `json:"oom_failures"`
	MaxSlowdown float64 `json:"max_slowdown"`
	// LimitMisses: jobs that ran past the limit Augur lowered theirs to.
	LimitMisses int `json:"limit_misses,omitempty"`
	// TimeMinStarts: runs backfill started on a limit cut by TimeMin.
	TimeMinStarts int `json:"time_min_starts,omitempty"`
}

func runSimulate(args []string) error {
	var o simOptions
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.StringVar(&o.trace, "trace", "", "trace file")
	fs.StringVar(&o.format, "format", "", "trace format: "+strings.Join(trace.Formats, "|"))
	fs.IntVar(&o.nodes, "nodes", 0, "nodes (split evenly over --gpu-types unless they give counts)")
	fs.IntVar(&o.gpusPerNode, "gpus-per-node", 8, "GPUs per node")
	fs.StringVar(&o.gpuTypes, "gpu-types", "", "GPU types, e.g. k80,p100,v100 or k80:4,p100:4,v100:4 (nodes each) or v100=32768 (MiB); default one anonymous type")
	fs.StringVar(&o.policies, "policies", "fifo,tiresias,hrrn,mlfq-borda,augur,srtf-oracle", "comma-separated policies: "+strings.Join(policy.Names(), ", "))
	fs.Float64Var(&o.durationError, "duration-error", 0.5, "sigma of the lognormal multiplicative error of runtime predictions (0: exact)")
	fs.StringVar(&o.predict, "predictor", "noise", "where predictions come from: noise (true duration with --duration-error) or history (augur's History predictor, fed only jobs finished before each submission, grouped by virtual cluster and GPU count)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the prediction error and of the type-blind placer's tie-breaks")
	fs.Float64Var(&o.restartCost, "restart-cost", 60, "seconds a preempted job loses when it restarts")
	fs.Float64Var(&o.minRun, "min-run", 0, "seconds a job runs before it may be preempted")
	fs.IntVar(&o.maxPreemptions, "max-preemptions", 0, "preemptions per job at most (0: no cap)")
	fs.Float64Var(&o.migrateGain, "migrate-gain", policy.DefaultParams().MigrateGain, "how much more (fraction) a running job must be worth on another GPU type before it is moved there (type-aware placement on several types)")
	fs.BoolVar(&o.typeBlind, "type-blind", false, "place jobs ignoring GPU type, throughput and memory (the baseline: same policies, seed and predictions; no moves between types)")
	fs.StringVar(&o.throughputs, "throughputs", "", "Gavel throughputs JSON (default: simulation_throughputs.json beside a gavel trace)")
	fs.Float64Var(&o.userLimits, "user-limits", 0, "give each job a user time limit of its runtime x a factor drawn log-uniformly from [1, N], rounded up to the hour, at most 7 days, and run every policy twice: backfill reserving by the users' limits, and by those limits lowered to Augur's time_hint (0: no limits; policies reserve by the prediction)")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	fs.StringVar(&o.plot, "plot", "", "write the JCT CDF of every policy to this SVG file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	progress := io.Writer(nil)
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		progress = os.Stderr
	}
	rep, results, err := simulate(o, progress)
	if err != nil {
		return err
	}
	if o.plot != "" {
		f, err := os.Create(o.plot)
		if err != nil {
			return err
		}
		if err := sim.WriteCDF(f, results); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if o.asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return printTable(os.Stdout, rep, results)
}

// parseTypes reads --gpu-types.
func parseTypes(spec string, nodes int) ([]policy.GPUType, []int, error) {
	if spec == "" {
		return nil, nil, nil
	}
	var types []policy.GPUType
	var counts []int
	given := 0
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		name, count, hasCount := strings.Cut(f, ":")
		name, mem, hasMem := strings.Cut(name, "=")
		t := policy.GPUType{Name: strings.ToLower(name), MemMiB: sim.KnownGPUMemMiB[strings.ToLower(name)]}
		if t.Name == "" {
			return nil, nil, fmt.Errorf("--gpu-types: empty type in %q", spec)
		}
		if hasMem {
			m, err := strconv.ParseFloat(mem, 64)
			if err != nil || m <= 0 {
				return nil, nil, fmt.Errorf("--gpu-types: memory %q of %s is not MiB", mem, name)
			}
			t.MemMiB = m
		}
		c := 0
		if hasCount {
			n, err := strconv.Atoi(count)
			if err != nil || n < 0 {
				return nil, nil, fmt.Errorf("--gpu-types: node count %q of %s is not a number", count, name)
			}
			c = n
			given++
		}
		types = append(types, t)
		counts = append(counts, c)
	}
	if given == 0 {
		if nodes < len(types) {
			return nil, nil, fmt.Errorf("--nodes %d is fewer than the %d GPU types", nodes, len(types))
		}
		for i := range counts {
			counts[i] = nodes / len(types)
			if i < nodes%len(types) {
				counts[i]++
			}
		}
	} else if given != len(types) {
		return nil, nil, errors.New("--gpu-types: give a node count for every type or for none")
	}
	return types, counts, nil
}

// simulate runs every policy on the trace, concurrently (at most GOMAXPROCS
// at once), each on its own copy of the jobs.
func simulate(o simOptions, progress io.Writer) (simReport, []sim.Result, error) {
	if o.trace == "" || o.format == "" {
		return simReport{}, nil, errors.New("--trace and --format are required")
	}
	types, counts, err := parseTypes(o.gpuTypes, o.nodes)
	if err != nil {
		return simReport{}, nil, err
	}
	cluster, err := sim.NewCluster(o.nodes, o.gpusPerNode, types, counts)
	if err != nil {
		return simReport{}, nil, err
	}
	f, err := os.Open(o.trace)
	if err != nil {
		return simReport{}, nil, err
	}
	tjobs, err := trace.Parse(o.format, f)
	f.Close()
	if err != nil {
		return simReport{}, nil, fmt.Errorf("%s: %w", o.trace, err)
	}
	var thr trace.Throughputs
	if o.format == "gavel" {
		path := o.throughputs
		if path == "" {
			path = filepath.Join(filepath.Dir(o.trace), "simulation_throughputs.json")
		}
		tf, err := os.Open(path)
		if err != nil {
			return simReport{}, nil, fmt.Errorf("gavel traces need throughputs (--throughputs): %w", err)
		}
		thr, err = trace.ParseThroughputs(tf)
		tf.Close()
		if err != nil {
			return simReport{}, nil, err
		}
		if len(types) == 0 {
			return simReport{}, nil, errors.New("gavel traces need --gpu-types (e.g. k80,p100,v100)")
		}
	}
	jobs, dropped, err := sim.FromTrace(tjobs, cluster, thr)
	if err != nil {
		return simReport{}, nil, err
	}
	if o.durationError < 0 {
		return simReport{}, nil, errors.New("--duration-error must be at least 0")
	}
	sim.Noise(jobs, o.durationError, o.seed)
	cfg := sim.Config{Cluster: cluster, RestartCost: o.restartCost}
	predictions := fmt.Sprintf("true runtime x exp(sigma Z), Z standard normal per job, sigma %g, seed %d; upper quantile x exp(1.645 sigma)", o.durationError, o.seed)
	switch o.predict {
	case "noise":
	case "history":
		cfg.Predictor = predictor.NewHistory(1, nil)
		predictions = "History predictor on jobs finished before each submission (same group and GPU count)"
	default:
		return simReport{}, nil, fmt.Errorf("--predictor %q: want noise or history", o.predict)
	}
	params := policy.DefaultParams()
	params.RestartCost, params.MinRun, params.MaxPreemptions = o.restartCost, o.minRun, o.maxPreemptions
	params.TypeBlind, params.Seed, params.MigrateGain = o.typeBlind, o.seed, o.migrateGain
	var pols []policy.Policy
	for _, name := range strings.Split(o.policies, ",") {
		p, err := policy.ByName(strings.TrimSpace(name), params)
		if err != nil {
			return simReport{}, nil, err
		}
		pols = append(pols, p)
	}
	limits := []string{sim.LimitsNone}
	if o.userLimits > 0 {
		sim.UserLimits(jobs, o.userLimits, 7*86400, o.seed)
		limits = []string{sim.LimitsUser, sim.LimitsAugur, sim.LimitsTimeMin}
	}
	type run struct {
		p      policy.Policy
		limits string
	}
	var runs []run
	for _, p := range pols {
		for k, l := range limits {
			if k > 0 {
				// A policy keeps state between calls: each run its own.
				var err error
				if p, err = policy.ByName(p.Name(), params); err != nil {
					return simReport{}, nil, err
				}
			}
			runs = append(runs, run{p, l})
		}
	}
	results := make([]sim.Result, len(runs))
	errs := make([]error, len(runs))
	bar := newBar(progress, len(jobs)*len(runs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c := cfg
			c.Limits = r.limits
			last := 0
			c.Progress = func(done, _ int) { bar.add(done - last); last = done }
			results[i], errs[i] = sim.Run(c, r.p, append([]sim.Job(nil), jobs...))
			bar.add(len(jobs) - last)
		}()
	}
	wg.Wait()
	bar.done()
	if err := errors.Join(errs...); err != nil {
		return simReport{}, nil, err
	}
	rep := simReport{Trace: o.trace, Format: o.format, Jobs: len(jobs), Dropped: dropped, Nodes: len(cluster.Nodes),
		Limits:    userLimitsText(o),
		Placement: fmt.Sprintf("type-aware (moves between types, migrate gain %g)", o.migrateGain), Predictions: predictions, RestartCost: o.restartCost, Policies: map[string]policyReport{}}
	switch {
	case len(cluster.Types) < 2:
		rep.Placement = "single-type"
	case o.typeBlind:
		rep.Placement = "type-blind"
	}
	for _, n := range cluster.Nodes {
		rep.GPUs += n.Total
	}
	for _, t := range cluster.Types {
		rep.GPUTypes = append(rep.GPUTypes, t.Name)
	}
	for _, r := range results {
		rep.Policies[r.Policy] = policyReport{AvgJCT: r.AvgJCT, MedianJCT: r.MedianJCT, P95JCT: r.P95JCT, P99JCT: r.P99JCT,
			AvgQueue: r.AvgQueue, Makespan: r.Makespan, Utilization: r.Utilization, Speed: r.Speed, Preemptions: r.Preemptions, Migrations: r.Migrations,
			OOMFailures: r.OOMFailures, MaxSlowdown: r.MaxSlowdown, LimitMisses: r.LimitMisses,
			TimeMinStarts: r.TimeMinStarts}
	}
	return rep, results, nil
}

// userLimitsText says how --user-limits made the users' limits.
func userLimitsText(o simOptions) string {
	if o.userLimits <= 0 {
		return ""
	}
	return fmt.Sprintf("runtime x U, log U uniform on [0, ln %g], rounded up to the hour, at most 7 days (seed %d); Augur's: lowered to the upper prediction rounded up to 15 min where predictable, over twice it and an hour longer; time_min: the users' limits with Slurm's TimeMin at the upper prediction where predictable", o.userLimits, o.seed)
}

func printTable(w io.Writer, rep simReport, results []sim.Result) error {
	fmt.Fprintf(w, "%s (%s): %d jobs on %d nodes, %d GPUs %v, %s placement; predictions: %s\n",
		rep.Trace, rep.Format, rep.Jobs, rep.Nodes, rep.GPUs, rep.GPUTypes, rep.Placement, rep.Predictions)
	if rep.Limits != "" {
		fmt.Fprintf(w, "user time limits: %s\n", rep.Limits)
	}
	fmt.Fprintln(w)
	defer func() {
		for _, r := range results {
			if r.TimeMinStarts > 0 {
				fmt.Fprintf(w, "%s: %d runs started by backfill on a limit cut by TimeMin, %d of them killed at it (their work lost, queued again)\n",
					r.Policy, r.TimeMinStarts, r.LimitMisses)
			} else if r.LimitMisses > 0 {
				fmt.Fprintf(w, "%s: %d jobs ran past the limit Augur lowered theirs to (in Slurm: killed for time if backfill started them on it)\n", r.Policy, r.LimitMisses)
			}
		}
	}()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "POLICY\tAVG JCT\tMEDIAN\tP95\tP99\tAVG QUEUE\tMAKESPAN\tUTIL\tSPEED\tPREEMPT\tMIGRATE\tOOM\tMAX SLOWDOWN\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\t%.2f\t%d\t%d\t%d\t%.0f\t\n", r.Policy, report.Human(r.AvgJCT), report.Human(r.MedianJCT),
			report.Human(r.P95JCT), report.Human(r.P99JCT), report.Human(r.AvgQueue), report.Human(r.Makespan), 100*r.Utilization, r.Speed, r.Preemptions, r.Migrations, r.OOMFailures, r.MaxSlowdown)
	}
	return tw.Flush()
}

// bar is a progress bar on a terminal; with no writer it does nothing.
type bar struct {
	mu         sync.Mutex
	w          io.Writer
	done_, all int
	shown      int
}

func newBar(w io.Writer, all int) *bar { return &bar{w: w, all: max(all, 1)} }

func (b *bar) add(n int) {
	if b.w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done_ += n
	pct := 100 * b.done_ / b.all
	if pct == b.shown {
		return
	}
	b.shown = pct
	fill := pct * 40 / 100
	fmt.Fprintf(b.w, "\r[%s%s] %3d%%", strings.Repeat("#", fill), strings.Repeat(".", 40-fill), pct)
}

func (b *bar) done() {
	if b.w != nil {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
