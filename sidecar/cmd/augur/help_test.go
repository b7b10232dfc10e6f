package main

import (
	"bytes"
	"strings"
	"testing"
)

// helpCase is a command line and what augur must answer: the exit status,
// and substrings of stdout and stderr ("" means that stream stays empty).
type helpCase struct {
	args           []string
	code           int
	stdout, stderr string
}

// TestHelp: every command answers --help and -h on stdout with exit status
// 0, as GNU tools and Slurm's commands do, and still refuses a flag it does
// not know with status 2 and the reason on stderr.
func TestHelp(t *testing.T) {
	const unknownFlag = "flag provided but not defined: -no-such-flag"
	cases := map[string]helpCase{
		"augur --help":             {args: []string{"--help"}, stdout: "usage: augur COMMAND"},
		"augur -h":                 {args: []string{"-h"}, stdout: "usage: augur COMMAND"},
		"augur help":               {args: []string{"help"}, stdout: "usage: augur COMMAND"},
		"augur help doctor":        {args: []string{"help", "doctor"}, stdout: "usage: augur doctor"},
		"augur":                    {code: 2, stderr: "usage: augur COMMAND"},
		"unknown command":          {args: []string{"frobnicate"}, code: 2, stderr: `unknown command "frobnicate"`},
		"config check --help":      {args: []string{"config", "check", "--help"}, stdout: "usage: augur config check [--config FILE]"},
		"config check, bad flag":   {args: []string{"config", "check", "--no-such-flag"}, code: 2, stderr: unknownFlag},
		"config without check":     {args: []string{"config", "verify"}, code: 2, stderr: "the only subcommand is check"},
		"predict without a script": {args: []string{"predict", "--json"}, code: 2, stderr: "augur predict: give one SCRIPT (its own arguments after --)"},
	}
	for _, c := range commands() {
		cases[c.name+" --help"] = helpCase{args: []string{c.name, "--help"}, stdout: "usage: augur " + c.name}
		cases[c.name+" -h"] = helpCase{args: []string{c.name, "-h"}, stdout: "usage: augur " + c.name}
		cases[c.name+" --no-such-flag"] = helpCase{args: []string{c.name, "--no-such-flag"}, code: 2, stderr: unknownFlag}
	}
	cases["config --no-such-flag"] = helpCase{args: []string{"config", "--no-such-flag"}, code: 2, stderr: "the only subcommand is check"}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, &stdout, &stderr)
			}
			for _, s := range []struct{ stream, got, want string }{
				{"stdout", stdout.String(), tc.stdout}, {"stderr", stderr.String(), tc.stderr},
			} {
				if s.want == "" && s.got != "" || !strings.Contains(s.got, s.want) {
					t.Errorf("%s %q, want it to contain %q", s.stream, s.got, s.want)
				}
			}
		})
	}
}

// TestHelpListsFlags: a command's help names its flags, so that --help is
// enough to use it.
func TestHelpListsFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"doctor", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, &stderr)
	}
	for _, want := range []string{"-config", "-plugin", "-slurm-header", "check the install"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("augur doctor --help lacks %q:\n%s", want, &stdout)
		}
	}
}
