//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestPluginFromAnotherRelease: Slurm was upgraded under Augur, and the
// plugin in PluginDir is still the build for the old release
// (AUGUR_TEST_FOREIGN_PLUGIN: make e2e SLURM=R sets it to this machine's
// own build). Slurm's loader refuses it before any of its code runs, with a
// log line naming the plugin's release; slurmctld then stops (job_submit
// plugins are not optional to Slurm), so no job is ever handled by code
// built for other structures. augur doctor names the mismatch and the
// fix beforehand, and the cluster comes back with the right build.
func TestPluginFromAnotherRelease(t *testing.T) {
	foreign := os.Getenv("AUGUR_TEST_FOREIGN_PLUGIN")
	if foreign == "" {
		t.Skip("AUGUR_TEST_FOREIGN_PLUGIN is unset: make e2e SLURM=R points it at this machine's own build of the plugin")
	}
	dir := filepath.Join(c.Dir, "foreign")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(foreign)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "job_submit_augur.so"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	augur := c.augurCLI(t)
	doctor, _, _ := c.Run(t, augur, "doctor", "--plugin", filepath.Join(dir, "job_submit_augur.so"))
	var line string
	for _, l := range strings.Split(doctor, "\n") {
		if strings.Contains(l, "plugin version") {
			line = l
		}
	}
	major, minor := c.SlurmRelease(t)
	here := fmt.Sprintf("%d.%02d", major, minor)
	if strings.HasPrefix(strings.TrimSpace(line), "ok") {
		t.Skipf("the plugin at %s is built for this release (%d.%02d): nothing foreign to test (%s)", foreign, major, minor, line)
	}
	if !strings.Contains(line, "refuses to load it") {
		t.Errorf("augur doctor does not name the mismatch:\n%s", doctor)
	}

	// slurmctld, started on a copy of slurm.conf whose PluginDir holds the
	// foreign build, refuses it and exits.
	conf, err := os.ReadFile(filepath.Join(c.Dir, "etc", "slurm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	pluginDir := regexp.MustCompile(`(?m)^PluginDir=([^:\n]*):.*$`)
	if !pluginDir.Match(conf) {
		t.Fatalf("no PluginDir=stock:ours line in slurm.conf")
	}
	foreignConf := filepath.Join(c.Dir, "etc", "slurm-foreign.conf")
	if err := os.WriteFile(foreignConf, pluginDir.ReplaceAll(conf, []byte("PluginDir=$1:"+dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(foreignConf)
	c.stopCtld(t)
	defer func() {
		if out, err := c.Script("restart-ctld.sh"); err != nil {
			t.Fatalf("restart-ctld.sh: %v\n%s", err, out)
		}
		c.annotatedAgain(t)
	}()
	mark := c.mark(t, "slurmctld.log")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "slurmctld", "-D", "-f", foreignConf)
	cmd.Env = c.Env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("slurmctld kept running with a plugin built for another release:\n%s", out)
	}
	if err == nil {
		t.Errorf("slurmctld exited 0 with a plugin built for another release")
	}
	log := mark.since(t) + string(out)
	for _, want := range []string{"Incompatible Slurm plugin", "job_submit_augur.so", "fatal: failed to initialize job_submit plugin"} {
		if !strings.Contains(log, want) {
			t.Errorf("slurmctld's log lacks %q:\n%s", want, log)
		}
	}
	if v := regexp.MustCompile(`job_submit_augur\.so version \(([0-9.]+)\)`).FindStringSubmatch(log); v == nil || strings.HasPrefix(v[1], here+".") || !strings.Contains(line, v[1]) {
		t.Errorf("the refusal names the plugin's release %v, here is %s, augur doctor said %q", v, here, line)
	} else {
		t.Logf("Slurm %d.%02d refused the plugin built for %s: %q; augur doctor: %s", major, minor, v[1],
			regexp.MustCompile(`.*Incompatible Slurm plugin.*`).FindString(log), strings.TrimSpace(line))
	}
}

// stopCtld stops the cluster's slurmctld (its saved state stays) through
// stop-ctld.sh, which finds it by its environment as well as its pid file:
// an earlier `scontrol reconfigure` can leave the file naming the process
// that handed over to a successor.
func (c *cluster) stopCtld(t testing.TB) {
	t.Helper()
	if out, err := c.Script("stop-ctld.sh"); err != nil {
		t.Fatalf("stop-ctld.sh: %v\n%s", err, out)
	}
}
