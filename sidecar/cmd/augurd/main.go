// Command augurd is Augur's daemon beside slurmctld: it answers the
// job_submit plugin's questions over a unix socket, records every
// submission in SQLite and exports Prometheus metrics.
//
//	augurd [--config FILE] [--log-level LEVEL]
//
// SIGTERM or SIGINT stop it cleanly; SIGHUP re-reads the configuration.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/augur-hpc/augur/sidecar/config"
	"github.com/augur-hpc/augur/sidecar/daemon"
	"github.com/augur-hpc/augur/sidecar/logging"
)

func main() {
	cfgPath := flag.String("config", "", "configuration file (default $AUGUR_CONFIG or "+config.DefaultPath+")")
	level := flag.String("log-level", "", "override log.level: debug, info, warn or error")
	flag.Parse()

	overrides := map[string]any{}
	if *level != "" {
		overrides["log.level"] = *level
	}
	path := config.Path(*cfgPath)
	cfg, err := config.Load(path, overrides)
	if err != nil {
		fmt.Fprintf(os.Stderr, "augurd: %v\n", err)
		os.Exit(2)
	}
	log, lvl := logging.New(os.Stderr, cfg.Log)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	reload := make(chan *config.Config, 1)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			next, err := config.Load(path, overrides)
			if err != nil {
				log.Error("SIGHUP: configuration not reloaded; keeping the running one", "err", err)
				continue
			}
			lvl.Set(logging.Level(next.Log.Level))
			select {
			case reload <- next:
			default:
			}
		}
	}()

	if err := daemon.Run(ctx, cfg, log, reload); err != nil {
		log.Error("augurd failed", "err", err)
		os.Exit(1)
	}
}
