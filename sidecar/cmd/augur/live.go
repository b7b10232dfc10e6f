package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/augur-hpc/augur/sidecar/live"
)

// augur pause, augur resume and augur status talk to augurd's admin socket
// (live.admin_socket); augurd lets only root and slurm_user in.

func init() {
	register(command{"pause", "pause [--config FILE] [--socket PATH]: stop all of augurd's live actions (SiteFactor writes, preemptions) until resume", adminCmd("pause")})
	register(command{"resume", "resume [--config FILE] [--socket PATH]: let augurd's live scheduler act again", adminCmd("resume")})
	register(command{"status", "status [--config FILE] [--socket PATH] [--json]: the live scheduler's state: paused, last pass, jobs, preemptions in progress", adminCmd("status")})
}

func adminCmd(name string) func([]string) error {
	return func(args []string) error {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		sock := fs.String("socket", "", "augurd's admin socket (default live.admin_socket)")
		asJSON := fs.Bool("json", false, "print JSON")
		cfg, err := loadConfig(fs, args)
		if err != nil {
			return err
		}
		path := cfg.Live.AdminSocket
		if *sock != "" {
			path = *sock
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		resp, err := live.AdminCall(ctx, path, name)
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(resp.Status)
		}
		printStatus(resp.Status)
		return nil
	}
}

func printStatus(s live.Status) {
	state := "active"
	switch {
	case s.Paused:
		state = "PAUSED (augur resume to act again)"
	case s.DryRun:
		state = "dry run (actions recorded, not applied)"
	}
	fmt.Printf("live scheduling: %s\npolicy:          %s\n", state, s.Policy)
	if s.LastPass.IsZero() {
		fmt.Println("last pass:       none yet")
		return
	}
	fmt.Printf("last pass:       %s (%s, %.1f ms), %d passes\n", s.LastPass.Format(time.RFC3339), s.LastResult, s.LastPassMillis, s.Passes)
	fmt.Printf("jobs:            %d pending, %d running, %d held\n", s.Pending, s.Running, s.Held)
	fmt.Printf("site factors:    %d written in the last pass\n", s.SiteFactors)
	if len(s.Signalled) > 0 {
		fmt.Printf("preempting:      %v (signalled, requeue after the grace period)\n", s.Signalled)
	}
	if s.LastError != "" {
		fmt.Printf("last error:      %s\n", s.LastError)
	}
}
