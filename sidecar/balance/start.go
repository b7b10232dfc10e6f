package balance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/augur-hpc/augur/sidecar/config"
	"github.com/augur-hpc/augur/sidecar/munge"
	"github.com/augur-hpc/augur/sidecar/skew"
	"github.com/augur-hpc/augur/sidecar/slurm"
)

// SkewConfig maps augurd's configuration onto skew's.
func SkewConfig(b config.Balance) skew.Config {
	return skew.Config{Window: b.Window, Enter: b.SlowRatio, Exit: b.ClearRatio, Persist: b.Persist, MinSteps: min(3, b.Window)}
}

// Start serves the endpoint on balance.listen in the background until ctx
// ends; with balance.listen empty it does nothing. allowed are root and
// slurm_user; c may be nil (no metrics). Job owners come from libslurm, as
// for the live loop. It returns once the port is open.
func Start(ctx context.Context, cfg *config.Config, st Store, allowed map[uint32]bool, c Counters, log *slog.Logger) error {
	b := cfg.Balance
	if b.Listen == "" {
		log.Info("balance endpoint off (balance.listen is empty)")
		return nil
	}
	sk := SkewConfig(b)
	if err := sk.Validate(); err != nil {
		return fmt.Errorf("balance: %w", err)
	}
	if c == nil {
		c = NopCounters{}
	}
	srv := &Server{
		Verifier: munge.Client{Socket: b.MungeSocket},
		Owners:   &SlurmOwners{Slurm: &slurm.Lib{}, TTL: b.OwnerCache, MinRefresh: min(b.OwnerCache, 5*time.Second), Now: time.Now},
		Store:    st, Counters: c, Allowed: allowed, Log: log, Now: time.Now,
		Options: Options{Skew: sk, MinGain: b.MinGain, MaxJobs: b.MaxJobs, JobIdle: b.JobIdle},
	}
	ln, err := net.Listen("tcp", b.Listen)
	if err != nil {
		return fmt.Errorf("balance.listen %s: %w", b.Listen, err)
	}
	hs := &http.Server{
		Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
		WriteTimeout: 15 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10,
	}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("balance endpoint stopped", "err", err)
		}
	}()
	context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx) //nolint:errcheck // stopping anyway
	})
	log.Info("balance endpoint ready", "listen", ln.Addr().String(), "max_jobs", b.MaxJobs, "window", b.Window,
		"slow_ratio", b.SlowRatio, "min_gain_ratio", b.MinGain)
	return nil
}
