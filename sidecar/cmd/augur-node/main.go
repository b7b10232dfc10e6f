// Command augur-node is Augur's compute-node program: slurmd's Prolog and
// Epilog, and the node agent that samples the GPUs and delivers job reports
// to augurd (see package nodeagent for the design).
//
//	augur-node prolog [--config FILE]   record the job, poke the agent (fast; always exits 0)
//	augur-node epilog [--config FILE]   ask the agent for a last round (at most 2 s), end the job, enqueue its report, poke the agent (always exits 0)
//	augur-node agent  [--config FILE]   the agent (systemd: contrib/systemd/augur-node.service)
//
// slurm.conf's Prolog= and Epilog= take a path without arguments: run with
// none, augur-node picks prolog or epilog from SLURM_SCRIPT_CONTEXT
// (prolog_slurmd, epilog_slurmd), and the config from $AUGUR_CONFIG or
// /etc/augur/augur.yaml (contrib/slurm/augur-node-hook passes --config for
// other paths). The hooks exit 0 whatever happens, because a failing Prolog
// or Epilog drains the node; they say on stderr, which slurmd logs, why they
// could not work.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/augur-hpc/augur/sidecar/config"
	"github.com/augur-hpc/augur/sidecar/logging"
	"github.com/augur-hpc/augur/sidecar/munge"
	"github.com/augur-hpc/augur/sidecar/nodeagent"
	"github.com/augur-hpc/augur/sidecar/nodestore"
	"github.com/augur-hpc/augur/sidecar/telemetry"
)

// hookBudget bounds a hook's whole run; SQLite's busy timeout (5 s) is the
// only thing that can make it long.
const hookBudget = 8 * time.Second

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is augur-node's entry point; it returns the exit status. --help
// prints the usage on stdout and exits 0, in every mode; the hooks exit 0
// whatever else happens; the agent and a missing mode exit 2 on a usage
// mistake, with the usage on stderr.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	mode := ""
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		mode, args = args[0], args[1:]
	}
	if mode == "" {
		switch getenv("SLURM_SCRIPT_CONTEXT") {
		case "prolog_slurmd":
			mode = "prolog"
		case "epilog_slurmd":
			mode = "epilog"
		}
	}
	fs := flag.NewFlagSet("augur-node", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // usage below prints, where it belongs
	cfgPath := fs.String("config", "", "configuration file (default $AUGUR_CONFIG or "+config.DefaultPath+")")
	level := fs.String("log-level", "", "override log.level: debug, info, warn or error")
	usage := func(w io.Writer) {
		fmt.Fprintln(w, "usage: augur-node prolog|epilog|agent [--config FILE] [--log-level LEVEL]\n"+
			"  With no mode, SLURM_SCRIPT_CONTEXT (prolog_slurmd, epilog_slurmd) chooses.")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	perr := fs.Parse(args)
	if errors.Is(perr, flag.ErrHelp) {
		usage(stdout)
		return 0
	}
	switch mode {
	case "prolog", "epilog":
		// A hook never fails: even a bad command line exits 0.
		if perr != nil {
			fmt.Fprintf(stderr, "augur-node %s: %v; nothing recorded\n", mode, perr)
			return 0
		}
		hook(mode, *cfgPath, *level, getenv, stderr)
		return 0
	case "agent":
		if perr != nil {
			fmt.Fprintf(stderr, "augur-node agent: %v\n", perr)
			usage(stderr)
			return 2
		}
		return agent(*cfgPath, *level, stderr)
	default:
		switch {
		case perr != nil:
			fmt.Fprintf(stderr, "augur-node: %v\n", perr)
		case mode != "":
			fmt.Fprintf(stderr, "augur-node: unknown mode %q\n", mode)
		}
		usage(stderr)
		return 2
	}
}

func load(path, level string) (*config.Config, error) {
	overrides := map[string]any{}
	if level != "" {
		overrides["log.level"] = level
	}
	return config.Load(config.Path(path), overrides)
}

// hook runs the Prolog or Epilog. It never panics out and never fails.
func hook(mode, cfgPath, level string, getenv func(string) string, stderr io.Writer) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "augur-node %s: job %s: internal error (please report): %v\n%s", mode, getenv("SLURM_JOB_ID"), r, debug.Stack())
		}
	}()
	env, err := nodeagent.ParseHookEnv(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "augur-node %s: %v; nothing recorded\n", mode, err)
		return
	}
	cfg, err := load(cfgPath, level)
	if err != nil {
		fmt.Fprintf(stderr, "augur-node %s: job %d: %v; nothing recorded\n", mode, env.JobID, err)
		return
	}
	log, _ := logging.New(stderr, cfg.Log)
	log = log.With("hook", mode) // Hooks add job_id
	ctx, cancel := context.WithTimeout(context.Background(), hookBudget)
	defer cancel()
	st, err := nodestore.Open(ctx, cfg.Node.Store)
	if err != nil {
		log.Error("node store unavailable; job not recorded", "job_id", env.JobID, "err", err)
		return
	}
	defer st.Close()
	h := &nodeagent.Hooks{
		Store: st, Node: nodeagent.NodeName(), DCGMDir: cfg.Node.DCGMJobMapDir, Now: time.Now, Log: log,
		Poke: func(ctx context.Context, p nodeagent.Poke) error {
			return nodeagent.SendPoke(ctx, cfg.Node.Socket, p, 200*time.Millisecond)
		},
		Round: func(ctx context.Context, jobID uint64) error {
			return nodeagent.AskRound(ctx, cfg.Node.Socket, jobID, nodeagent.RoundWait)
		},
	}
	if mode == "prolog" {
		err = h.Prolog(ctx, env)
	} else {
		err = h.Epilog(ctx, env)
	}
	if err != nil {
		log.Error(mode+" could not record the job", "job_id", env.JobID, "err", err)
		return
	}
	log.Debug(mode+" done", "job_id", env.JobID, "wall_seconds", time.Since(start).Seconds())
}

// logAccounting says once what became of NVML accounting on the node's
// GPUs: on (turned on now or before), or off and why. Off, the agent
// samples as it always did, and a job's peak between two samples (the
// allocation a job dies of) is missed.
func logAccounting(log *slog.Logger, states []telemetry.AccountingState, asked bool) {
	var on, turnedOn []int
	var failed []int
	var firstErr error
	for _, a := range states {
		switch {
		case a.On:
			on = append(on, a.Index)
			if a.Enabled {
				turnedOn = append(turnedOn, a.Index)
			}
		case a.Err != nil:
			failed = append(failed, a.Index)
			if firstErr == nil {
				firstErr = a.Err
			}
		}
	}
	if len(on) > 0 {
		log.Info("NVML accounting on: per-process memory peaks between samples are read", "gpus", on, "turned_on_now", turnedOn)
	}
	switch {
	case len(failed) > 0:
		log.Warn("NVML accounting unavailable: memory peaks between two samples are missed on these GPUs",
			"gpus", failed, "err", firstErr, "hint", "run the agent as root, or run nvidia-smi -am 1 once per boot")
	case !asked && len(on) < len(states):
		log.Info("NVML accounting off (node.nvml_accounting: false): memory peaks between two samples are missed",
			"gpus", len(states)-len(on))
	}
}

// agent runs the node agent until SIGTERM or SIGINT.
func agent(cfgPath, level string, stderr io.Writer) int {
	cfg, err := load(cfgPath, level)
	if err != nil {
		fmt.Fprintf(stderr, "augur-node agent: %v\n", err)
		return 2
	}
	log, lvl := logging.New(stderr, cfg.Log)
	lib, err := openNVML(cfg.Node.NVML)
	if err != nil {
		log.Error("node.nvml", "err", err)
		return 2
	}
	log.Info("augur-node agent starting", "config", cfg.Path, "store", cfg.Node.Store, "socket", cfg.Node.Socket,
		"augurd", cfg.Node.Augurd, "nvml", cfg.Node.NVML, "interval_seconds", cfg.Node.Interval.Seconds(),
		"raw_retention_seconds", cfg.Node.RawRetention.Seconds(), "retention_seconds", cfg.Node.Retention.Seconds(),
		"dcgm_job_map_dir", cfg.Node.DCGMJobMapDir, "munge_socket", cfg.Node.MungeSocket, "nvml_accounting", cfg.Node.NVMLAccounting)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			next, err := load(cfgPath, level)
			if err != nil {
				log.Error("SIGHUP: configuration not reloaded", "err", err)
				continue
			}
			lvl.Set(logging.Level(next.Log.Level))
			log.Info("SIGHUP: log level reloaded; other node settings take effect at restart", "level", next.Log.Level)
		}
	}()

	st, err := nodestore.Open(ctx, cfg.Node.Store)
	if err != nil {
		log.Error("node store", "err", err)
		return 1
	}
	defer st.Close()
	var gpus nodeagent.GPUs
	sampler, err := telemetry.Open(lib, telemetry.WithAccounting(cfg.Node.NVMLAccounting))
	if err != nil {
		// Jobs are still recorded, finalised and reported, without GPU figures.
		log.Error("NVML unavailable: no GPU samples on this node", "err", err)
	} else {
		defer sampler.Close()
		gpus = sampler
		log.Info("NVML open", "gpus", sampler.GPUs())
		logAccounting(log, sampler.Accounting(), cfg.Node.NVMLAccounting)
	}
	l, err := nodeagent.ListenPokes(cfg.Node.Socket)
	if err != nil {
		log.Error("agent socket", "path", cfg.Node.Socket, "err", err)
		return 1
	}
	defer os.Remove(cfg.Node.Socket)
	send := &nodeagent.Sender{Addr: cfg.Node.Augurd, Signer: munge.Client{Socket: cfg.Node.MungeSocket}, Timeout: 10 * time.Second}
	a := nodeagent.New(nodeagent.Config{
		Interval: cfg.Node.Interval, LiveEvery: cfg.Node.LiveEvery, RawRetention: cfg.Node.RawRetention, Retention: cfg.Node.Retention,
		DCGMDir: cfg.Node.DCGMJobMapDir,
	}, st, gpus, nodeagent.ProcFS{}, send, time.Now, log)
	err = a.Run(ctx, l)
	log.Info("augur-node agent stopped", "rounds", a.Stats.Rounds.Load(), "samples", a.Stats.Samples.Load(),
		"delivered", a.Stats.Delivered.Load(), "refused", a.Stats.Refused.Load(), "recovered", a.Stats.Recovered.Load())
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("agent failed", "err", err)
		return 1
	}
	return 0
}
