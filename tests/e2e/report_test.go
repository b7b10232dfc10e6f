//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/augur-hpc/augur/tests/clustertest"
)

// augurCLI is the augur command under test (make e2e builds it first).
func (c *cluster) augurCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(c.Bin, "augur")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v: run make build (or set AUGUR_BIN)", err)
	}
	return bin
}

// parsable2 reads sacct -P output (with its header) into rows keyed by
// JobID, each a map of field to value.
func parsable2(t *testing.T, out string) map[string]map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 {
		t.Fatalf("no header in %q", out)
	}
	head := strings.Split(lines[0], "|")
	rows := map[string]map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Split(l, "|")
		if len(f) != len(head) {
			t.Fatalf("line %q has %d fields, header %d", l, len(f), len(head))
		}
		row := map[string]string{}
		for i, h := range head {
			row[h] = f[i]
		}
		rows[row["JobID"]] = row
	}
	return rows
}

// TestSacctJoinsWithSlurm: augur sacct -P beside Slurm's own sacct for the
// same jobs. The test cluster has no slurmdbd; its accounting is
// jobcomp/filetxt, which sacct reads with -c (--completion). Joined by
// JobID, the two agree on the job's name, state, elapsed time, start and
// end; Augur adds what it predicted and measured.
func TestSacctJoinsWithSlurm(t *testing.T) {
	augur := c.augurCLI(t)
	script := func(body string) string {
		return c.BatchScript(t, "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH --time=10\n"+body)
	}
	ok := c.Sbatch(t, "-J", "report-ok", "--export=ALL,AUGUR_FAKE_GPU_MEM_MIB=8000", script("python train.py --model resnet18\nsleep 3\n"))
	failed := c.Sbatch(t, "-J", "report-fail", "--export=ALL,AUGUR_FAKE_GPU_MEM_MIB=2000", script("python eval.py\nsleep 2\nexit 3\n"))
	held := c.Sbatch(t, "-J", "report-held", "-H", script("sleep 1\n"))
	if _, stderr, err := c.Run(t, "scancel", strconv.FormatUint(held, 10)); err != nil {
		t.Fatalf("scancel: %v %s", err, stderr)
	}
	ids := fmt.Sprintf("%d,%d,%d", ok, failed, held)
	c.outcomeOf(t, 0, "", ok, 90*time.Second)
	c.outcomeOf(t, 0, "", failed, 90*time.Second)
	// The linker corrects the node's exit state from Slurm's final one.
	clustertest.WaitFor(t, 30*time.Second, "FAILED in augurd's store", func() bool {
		r, err := store.OpenReadOnly(context.Background(), c.storePath())
		if err != nil {
			return false
		}
		defer r.Close()
		d, err := r.Job(context.Background(), failed)
		return err == nil && d.State == "FAILED"
	})
	var slurm map[string]map[string]string
	clustertest.WaitFor(t, 30*time.Second, "the three jobs in jobcomp", func() bool {
		out, _, err := c.Run(t, "sacct", "-c", "-P", "-j", ids, "-o", "JobID,JobName,State,Elapsed,Start,End")
		if err != nil {
			return false
		}
		slurm = parsable2(t, out)
		return len(slurm) == 3
	})
	// augurd's linker corrects each finished job's stored start and end
	// from slurmctld's (a node's Prolog can start a second after the start
	// Slurm records); it sees the two jobs finish on its own polls, so the
	// two reports are compared until they agree or 30 s have passed.
	fields := []string{"JobName", "State", "Start", "End", "Elapsed"}
	var mine map[string]map[string]string
	var out string
	var differ []string
	agree := func() bool {
		o, stderr, err := c.Run(t, augur, "sacct", "-P", "-j", ids, "-o", "JobID,JobName,State,Elapsed,Start,End,PredGPUMem,PeakGPUMem,GPUUtil,OOMRisk")
		if err != nil {
			t.Fatalf("augur sacct: %v\n%s", err, stderr)
		}
		out, mine, differ = o, parsable2(t, o), nil
		for _, id := range []uint64{ok, failed} {
			key := strconv.FormatUint(id, 10)
			s, a := slurm[key], mine[key]
			if a == nil {
				differ = append(differ, fmt.Sprintf("job %s: not in augur sacct", key))
				continue
			}
			for _, f := range fields {
				if s[f] != a[f] {
					differ = append(differ, fmt.Sprintf("job %s %s: sacct %q, augur sacct %q", key, f, s[f], a[f]))
				}
			}
		}
		return len(differ) == 0
	}
	deadline, reads := time.Now().Add(30*time.Second), 1
	for !agree() && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		reads++
	}
	t.Logf("sacct -c:\n%v\naugur sacct (read %d times):\n%s", slurm, reads, out)
	for _, d := range differ {
		t.Error(d)
	}
	if got := mine[strconv.FormatUint(ok, 10)]["PeakGPUMem"]; got != "7.81G" {
		t.Errorf("PeakGPUMem of the 8000 MiB job: %q", got)
	}
	// Cancelled before it ran: no Epilog, no outcome; Augur says so.
	if got := mine[strconv.FormatUint(held, 10)]["State"]; got != "UNKNOWN" || slurm[strconv.FormatUint(held, 10)]["State"] != "CANCELLED" {
		t.Errorf("held and cancelled job: augur %q, sacct %q", got, slurm[strconv.FormatUint(held, 10)]["State"])
	}

	html := filepath.Join(t.TempDir(), "report.html")
	out, stderr, err := c.Run(t, augur, "report", "-S", "now-1hour", "--html", html)
	if err != nil || !strings.Contains(out, "Prediction accuracy") {
		t.Fatalf("augur report: %v\n%s\n%s", err, out, stderr)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("report.html: %v", err)
	}
	out, stderr, err = c.Run(t, augur, "job", strconv.FormatUint(ok, 10))
	if err != nil || !strings.Contains(out, "peak 7.81G per GPU") || !strings.Contains(out, "Advice") {
		t.Errorf("augur job: %v\n%s\n%s", err, out, stderr)
	}
}

// TestDoctorOnTheTestCluster: every check that can pass here passes.
func TestDoctorOnTheTestCluster(t *testing.T) {
	augur := c.augurCLI(t)
	out, _, _ := c.Run(t, augur, "doctor", "--plugin", filepath.Join(c.Bin, "test", "job_submit_augur.so"))
	t.Logf("augur doctor:\n%s", out)
	for _, want := range []string{"ok   socket", "ok   store", "ok   JobSubmitPlugins", "ok   plugin version", "ok   munge",
		"ok   outcomes", "ok   metrics", "ok   Prolog", "ok   Epilog",
		// cluster.gpu_types (t4, a100) against the node's Gres, and a100's
		// alias bigmem against the partition of that name.
		"ok   gpu types        t4 on 1 node, a100 on 1 node", "ok   gpu aliases      bigmem: partition"} {
		if !strings.Contains(out, want) {
			t.Errorf("augur doctor lacks %q", want)
		}
	}
}
