// Command augur is Augur's command line for admins and users.
//
//	augur config check [--config FILE]   validate the configuration, print the effective one
//	augur decisions [-n N] [--json]      the latest submissions and what augurd decided
//	augur ping [--socket PATH]           ask augurd for a decision on a dummy job
//	augur pause / resume / status        stop and restart augurd's live actions; its state
//	augur sacct / report / job JOBID     accounting in sacct's style; the cluster view; one job's story
//	augur doctor                         check an install, with a fix for each problem
//	augur predict / train / eval         the predictor by hand
//	augur simulate                       replay a trace through the scheduling policies
//	augur version
//
// `augur help` lists every command with its flags.
package main

import (
	"fmt"
	"os"
	"sort"
)

type command struct {
	name, usage string
	run         func(args []string) error
}

// registry holds the subcommands; each file registers its own in init, so
// that adding a command touches no shared list.
var registry = map[string]command{}

func register(c command) { registry[c.name] = c }

func commands() []command {
	out := make([]command, 0, len(registry))
	for _, c := range registry {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func init() {
	register(command{"config", "config check [--config FILE]: validate the configuration and print the effective one", runConfig})
	register(command{"decisions", "decisions [--config FILE] [-n N] [--json]: the latest submissions and what augurd decided", runDecisions})
	register(command{"ping", "ping [--config FILE] [--socket PATH] [-n N]: ask augurd to decide a dummy job and time the round trip", runPing})
	register(command{"version", "version: print Augur's version", runVersion})
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: augur COMMAND [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(os.Stderr, "  %s\n", c.usage)
	}
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	if c, ok := registry[os.Args[1]]; ok {
		if err := c.run(os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "augur %s: %v\n", c.name, err)
			os.Exit(1)
		}
		return
	}
	fmt.Fprintf(os.Stderr, "augur: unknown command %q\n", os.Args[1])
	usage()
	os.Exit(2)
}
