package live

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/augur-hpc/augur/sidecar/config"
	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/sidecar/policy"
	"github.com/augur-hpc/augur/sidecar/server"
	"github.com/augur-hpc/augur/sidecar/slurm"
)

// ConfigFrom maps augurd's configuration onto the loop's.
func ConfigFrom(cfg *config.Config) Config {
	c := Config{
		Interval: cfg.Live.Interval,
		Policy:   cfg.Live.Policy,
		DryRun:   cfg.Live.DryRun,
		Rules: Rules{
			SiteFactorMax:  cfg.Live.SiteFactorMax,
			Grace:          cfg.Live.Grace,
			Signal:         config.PreemptSignals[cfg.Live.PreemptSignal],
			MinRun:         cfg.Live.MinRunTime,
			MaxPreemptions: cfg.Live.MaxPreemptions,
		},
	}
	for _, t := range cfg.Cluster.GPUTypes {
		c.Types = append(c.Types, policy.GPUType{Name: t.Name, MemMiB: t.Memory.MiB()})
	}
	return c
}

// Runner is live scheduling inside augurd: the loop and its admin socket
// while live.enabled, and the configuration reloads (SIGHUP) that change
// them. Its methods are safe for concurrent use.
type Runner struct {
	ctx context.Context
	st  Store
	m   *metrics.Metrics
	log *slog.Logger
	// cluster returns the loop's view of Slurm (libslurm in augurd).
	cluster func() Cluster

	mu    sync.Mutex
	loop  *Loop
	stop  context.CancelFunc
	done  sync.WaitGroup
	admin string // the admin socket in use
}

// stopWait bounds how long disabling the loop waits for its pass to end.
const stopWait = 30 * time.Second

// Start runs the live scheduler and its admin socket in the background
// until ctx ends, when cfg.Live.Enabled; it returns at once. Slurm is
// reached through libslurm (SLURM_CONF in augurd's environment names the
// cluster). Reload applies later configurations.
func Start(ctx context.Context, cfg *config.Config, st Store, m *metrics.Metrics, log *slog.Logger) (*Runner, error) {
	return start(ctx, cfg, func() Cluster { return &slurm.Lib{} }, st, m, log)
}

func start(ctx context.Context, cfg *config.Config, cluster func() Cluster, st Store, m *metrics.Metrics, log *slog.Logger) (*Runner, error) {
	r := &Runner{ctx: ctx, st: st, m: m, log: log, cluster: cluster}
	if !cfg.Live.Enabled {
		log.Info("live scheduling off (live.enabled: false)")
		return r, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.startLocked(cfg); err != nil {
		return nil, err
	}
	return r, nil
}

// startLocked starts the loop and the admin socket; r.mu held.
func (r *Runner) startLocked(cfg *config.Config) error {
	uid, err := (&config.Config{SlurmUser: cfg.SlurmUser}).AllowedUIDs()
	if err != nil {
		return fmt.Errorf("slurm_user: %w", err)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	loop, err := New(ctx, ConfigFrom(cfg), r.cluster(), r.st, r.m, r.log, time.Now)
	if err != nil {
		cancel()
		return err
	}
	ln, err := server.Listen(cfg.Live.AdminSocket, os.FileMode(0o660))
	if err != nil {
		cancel()
		return fmt.Errorf("live.admin_socket: %w", err)
	}
	r.done.Add(2)
	go func() {
		defer r.done.Done()
		if err := ServeAdmin(ctx, ln, loop, uid, r.log.With("component", "admin")); err != nil {
			r.log.Error("admin socket stopped", "err", err)
		}
	}()
	go func() {
		defer r.done.Done()
		loop.Run(ctx)
	}()
	r.loop, r.stop, r.admin = loop, cancel, cfg.Live.AdminSocket
	return nil
}

// Loop returns the running loop (nil while live scheduling is off).
func (r *Runner) Loop() *Loop {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loop
}

// Reload applies a new configuration: live.enabled turned on starts the
// loop and its admin socket, turned off stops them (after the pass in
// progress); otherwise the loop takes the new settings from its next pass.
// live.admin_socket changes only on restart. On an error the loop keeps
// what it had.
func (r *Runner) Reload(cfg *config.Config) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !cfg.Live.Enabled && r.loop == nil:
		return nil
	case !cfg.Live.Enabled:
		r.stop()
		stopped := make(chan struct{})
		go func() { r.done.Wait(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(stopWait):
			r.log.Warn("live scheduling: the last pass is still running; it will be the last")
		}
		r.loop = nil
		r.log.Info("live scheduling stopped (live.enabled: false)")
		return nil
	case r.loop == nil:
		return r.startLocked(cfg)
	}
	if cfg.Live.AdminSocket != r.admin {
		r.log.Warn("live.admin_socket changes only on restart; still serving the old one", "admin_socket", r.admin)
	}
	return r.loop.Reload(ConfigFrom(cfg))
}
