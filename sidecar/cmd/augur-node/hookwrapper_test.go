package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookWrapperNeverFails: contrib/slurm/augur-node-hook, slurmd's Prolog
// and Epilog, exits 0 whatever augur-node does (a failing hook drains the
// node), and passes the config file.
func TestHookWrapperNeverFails(t *testing.T) {
	wrapper, err := filepath.Abs("../../../contrib/slurm/augur-node-hook")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := filepath.Join(dir, "args")
	fake := map[string]string{
		"records its arguments": "echo \"$@\" >" + args + "\n",
		"killed":                "kill -9 $$\n",
		"fails":                 "exit 3\n",
		"missing binary":        "",
	}
	for name, body := range fake {
		t.Run(name, func(t *testing.T) {
			bin := filepath.Join(dir, "missing")
			if body != "" {
				bin = filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
				if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(wrapper)
			cmd.Env = []string{"HOOK_AUGUR_NODE=" + bin, "AUGUR_CONFIG=/etc/augur/test.yaml", "PATH=/usr/bin:/bin"}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("wrapper failed: %v\n%s", err, out)
			}
		})
	}
	b, err := os.ReadFile(args)
	if err != nil || strings.TrimSpace(string(b)) != "--config /etc/augur/test.yaml" {
		t.Errorf("augur-node got %q (%v), want --config /etc/augur/test.yaml", b, err)
	}
}
