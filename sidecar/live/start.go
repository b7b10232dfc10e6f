package live

import (
	"context"
	"fmt"
	"log/slog"
	"os"
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

// Start runs the live scheduler and its admin socket in the background
// until ctx ends, when cfg.Live.Enabled; it returns at once. Slurm is
// reached through libslurm (SLURM_CONF in augurd's environment names the
// cluster). The live settings change only on restart, not on SIGHUP.
func Start(ctx context.Context, cfg *config.Config, st Store, m *metrics.Metrics, log *slog.Logger) error {
	if !cfg.Live.Enabled {
		log.Info("live scheduling off (live.enabled: false)")
		return nil
	}
	uid, err := (&config.Config{SlurmUser: cfg.SlurmUser}).AllowedUIDs()
	if err != nil {
		return fmt.Errorf("slurm_user: %w", err)
	}
	loop, err := New(ctx, ConfigFrom(cfg), &slurm.Lib{}, st, m, log, time.Now)
	if err != nil {
		return err
	}
	ln, err := server.Listen(cfg.Live.AdminSocket, os.FileMode(0o660))
	if err != nil {
		return fmt.Errorf("live.admin_socket: %w", err)
	}
	go func() {
		if err := ServeAdmin(ctx, ln, loop, uid, log.With("component", "admin")); err != nil {
			log.Error("admin socket stopped", "err", err)
		}
	}()
	go loop.Run(ctx)
	return nil
}
