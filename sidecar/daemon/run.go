package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/sidecar/balance"
	"github.com/augur-hpc/augur/sidecar/config"
	"github.com/augur-hpc/augur/sidecar/live"
	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/sidecar/munge"
	"github.com/augur-hpc/augur/sidecar/server"
	"github.com/augur-hpc/augur/sidecar/slurm"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/augur-hpc/augur/sidecar/training"
)

// shutdownGrace bounds how long a stop waits for requests in flight.
const shutdownGrace = 2 * time.Second

// linkInterval is how often the linker reads the queue.
const linkInterval = 10 * time.Second

// runAsWarning says what is wrong when augurd runs as root while slurm_user
// names another user ("" when nothing is). augurd needs no privilege: as
// root it would create its socket and store owned by root, which the
// SlurmUser then cannot use after a switch to the documented User=.
func runAsWarning(euid uint32, slurmUser string) string {
	if euid != 0 {
		return ""
	}
	if u, err := user.Lookup(slurmUser); err == nil && u.Uid == "0" || slurmUser == "0" || slurmUser == "root" {
		return ""
	}
	return "augurd runs as root but slurm_user is not root: run it as the SlurmUser (systemd User=, see contrib/systemd/augurd.service); files it creates now belong to root"
}

// Run is augurd's life: open the store, serve metrics and the shim socket,
// apply configurations arriving on reload, and stop cleanly when ctx ends.
// The socket opens last, so the shim fails open (rather than waits) until
// augurd can really decide.
func Run(ctx context.Context, cfg *config.Config, log *slog.Logger, reload <-chan *config.Config) error {
	log.Info("augurd starting", "config", cfg.Path, "socket", cfg.Socket.Path, "store", cfg.Store.Path,
		"metrics", cfg.Metrics.Listen, "shim_timeout_seconds", cfg.Shim.Timeout.Seconds(),
		"gpu_types", len(cfg.Cluster.GPUTypes), "rewrite_typeless_gpus", cfg.Policy.RewriteTypelessGPUs,
		"reject_certain_oom", cfg.Policy.RejectCertainOOM, "site_factor_max", cfg.Policy.SiteFactorMax)

	allowed, err := cfg.AllowedUIDs()
	if err != nil {
		// A SlurmUser that does not resolve here would lock slurmctld out.
		return fmt.Errorf("slurm_user / socket.allowed_users: %w", err)
	}
	if msg := runAsWarning(uint32(os.Geteuid()), cfg.SlurmUser); msg != "" {
		log.Warn(msg, "euid", os.Geteuid(), "slurm_user", cfg.SlurmUser)
	}

	st, err := store.Open(ctx, cfg.Store.Path, store.Options{Logger: log.With("component", "store")})
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			log.Error("closing store", "err", err)
		}
	}()

	// History stored under an older way of signing scripts is re-keyed
	// before the first decision, so that earlier runs still match.
	t0 := time.Now()
	if n, err := st.Resign(ctx, predictor.SignatureVersion, func(script string, args, env []string) string {
		return predictor.ParseScriptEnv(script, args, env).Signature
	}); err != nil {
		log.Error("re-signing stored history failed: earlier runs under older signatures will not match new submissions", "err", err)
	} else if n > 0 {
		log.Info("re-signed stored history", "submissions", n, "signature_version", predictor.SignatureVersion, "took", time.Since(t0))
	}

	m := metrics.New(func() float64 { return float64(st.Pending()) })
	svc := NewService(cfg, st, m, log.With("component", "decide"), time.Now)

	// The model: the newest file that loads now, retrained in the background.
	loop := training.New(training.FromStore(st), training.Config{
		Dir: cfg.Predictor.ModelDir, Interval: cfg.Predictor.RetrainInterval, MinNew: cfg.Predictor.RetrainAfter,
		OnSwap: svc.SetModel,
	}, log.With("component", "training"), time.Now)
	if err := loop.Load(); err != nil {
		log.Warn("no trained model loaded; predicting from history and defaults until the first training", "err", err)
	}
	svc.SetModel(loop.Model())
	go func() {
		if err := loop.Run(ctx, time.Minute); err != nil && ctx.Err() == nil {
			log.Error("training loop stopped", "err", err)
		}
	}()

	var httpSrv *http.Server
	if cfg.Metrics.Listen != "" {
		ln, err := net.Listen("tcp", cfg.Metrics.Listen)
		if err != nil {
			return fmt.Errorf("metrics.listen %s: %w", cfg.Metrics.Listen, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", m.Handler())
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintln(w, "ok")
		})
		httpSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics endpoint stopped", "err", err)
			}
		}()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
			defer cancel()
			httpSrv.Shutdown(sctx)
		}()
	}

	// Rewritten GPU requests must fit the nodes (see core.Layout).
	go svc.RunLayout(ctx, &slurm.Lib{}, layoutEvery, layoutRetry, log.With("component", "layout"))

	// Submissions learn their job ids from the queue (see Linker).
	// libslurm rather than squeue --json: with tens of thousands of jobs in
	// slurmctld's memory, squeue's JSON took hundreds of MB of garbage and
	// seconds of CPU per pass on the controller host, and augurd stalled
	// past the shim's deadline while it collected them.
	linker := NewLinker(&slurm.Lib{NoDetail: true}, st, log.With("component", "linker"))
	linker.StateChanged = svc.OutcomesChanged
	linker.Linked = func(a store.Accuracy) { observeAccuracy(m, a) }
	linker.Orphaned = func(n int) { m.OrphanedSubmissions.Add(float64(n)) }
	oom := &OOMRecoverer{Slurm: &slurm.Lib{}, Store: st, Settings: svc.Policy, Layout: svc.Layout, Metrics: m,
		Log: log.With("component", "oom_recovery"), Now: time.Now}
	linker.Finished = oom.Consider
	idle := &IdleWatcher{Slurm: &slurm.Lib{}, Store: st, Settings: func() config.Live { _, l := svc.Policy(); return l },
		Metrics: m, Log: log.With("component", "idle_gpu"), Now: time.Now}
	linker.Listed = idle.Pass
	linker.Queue = func(byState map[string]int) {
		for state, n := range byState {
			m.QueueJobs.WithLabelValues(strings.ToLower(state)).Set(float64(n))
		}
	}
	go linker.Run(ctx, linkInterval)

	if cfg.Outcomes.Listen != "" {
		oln, err := net.Listen("tcp", cfg.Outcomes.Listen)
		if err != nil {
			return fmt.Errorf("outcomes.listen %s: %w", cfg.Outcomes.Listen, err)
		}
		types := make([]string, len(cfg.Cluster.GPUTypes))
		for i, t := range cfg.Cluster.GPUTypes {
			types[i] = t.Name
		}
		osrv := &OutcomeServer{
			Verifier: munge.Client{Socket: cfg.Outcomes.MungeSocket}, Store: st, Allowed: allowed,
			GPUTypes: types, Metrics: m, Log: log.With("component", "outcomes"), Now: time.Now,
			Stored: func() { svc.OutcomesChanged(); linker.Poke() },
			Live:   idle.Observe,
		}
		go func() {
			if err := osrv.Serve(ctx, oln); err != nil {
				log.Error("job report endpoint stopped", "err", err)
			}
		}()
		log.Info("job report endpoint ready", "listen", oln.Addr().String())
	}

	// Running jobs' step times and rebalancing plans (balance.listen; off by default).
	if err := balance.Start(ctx, cfg, st, allowed, balanceCounters{m}, log.With("component", "balance")); err != nil {
		return fmt.Errorf("balance endpoint: %w", err)
	}

	liveRunner, err := live.Start(ctx, cfg, st, m, log.With("component", "live"))
	if err != nil {
		return fmt.Errorf("live scheduling: %w", err)
	}

	ln, err := server.Listen(cfg.Socket.Path, os.FileMode(cfg.Socket.Mode))
	if err != nil {
		return err
	}
	srv := server.New(ln, svc, server.Options{
		Allowed: allowed,
		// The shim keeps its connections open between submissions.
		IdleTimeout: 5 * time.Minute,
		Logger:      log.With("component", "socket"),
		Events: server.Events{
			PeerRefused:  func(server.Peer) { m.RefusedFor(metrics.RefusePeer) },
			BadRequest:   func(error) { m.RefusedFor(metrics.RefuseDecode) },
			HandlerPanic: func(any) { m.RefusedFor(metrics.RefusePanic) },
		},
	})

	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case next := <-reload:
				if next.Socket.Path != cfg.Socket.Path || next.Store.Path != cfg.Store.Path || next.Metrics.Listen != cfg.Metrics.Listen {
					log.Warn("socket.path, store.path and metrics.listen change only on restart; other settings applied")
				}
				svc.Reload(next)
				svc.RefreshLayout()
				if err := liveRunner.Reload(next); err != nil {
					log.Error("live scheduling settings not applied; keeping the previous ones", "err", err)
				}
				log.Info("configuration reloaded", "config", next.Path)
			}
		}
	}()

	log.Info("augurd ready", "socket", cfg.Socket.Path, "allowed_uids", len(allowed))
	err = srv.Serve(ctx, shutdownGrace)
	log.Info("augurd stopping", "pending_records", st.Pending())
	return err
}
