//go:build e2e

package e2e

import (
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

// idleEnv is augurd's live.idle_gpu for these tests, in seconds where a
// site would use minutes: the test cluster's node agent sends a live
// period every 2 s (node.live_every in up.sh), and augurd judges the queue
// every linker pass (10 s).
var idleEnv = []string{"AUGUR_LIVE_IDLE_GPU_ENABLED=true", "AUGUR_LIVE_IDLE_GPU_GRACE=2s",
	"AUGUR_LIVE_IDLE_GPU_WINDOW=6s", "AUGUR_LIVE_IDLE_GPU_WARN_DELAY=5s"}

// idleAugurd restarts augurd with idleEnv and env on an empty queue, and
// back to the cluster's settings when the test ends.
func (c *cluster) idleAugurd(t *testing.T, env ...string) {
	t.Helper()
	c.restartAugurdWith(t, append(append([]string{}, idleEnv...), env...)...)
	t.Cleanup(func() {
		c.clearQueue(t)
		c.restartAugurdWith(t)
	})
	c.clearQueue(t)
}

// gpuLoop is a batch script that holds its GPU until cancelled, its fake
// GPU at the SM utilisation its environment gives (AUGUR_FAKE_GPU_SM_UTIL);
// with mark set, USR1 touches that file (the warning's signal arrived) and
// the job goes on.
func gpuLoop(t *testing.T, name, mark string) string {
	trap := ""
	if mark != "" {
		trap = fmt.Sprintf("trap 'touch %s' USR1\n", mark)
	}
	return c.BatchScript(t, fmt.Sprintf(`#!/bin/bash
#SBATCH --job-name=%s
#SBATCH --time=10
%secho gpus=$CUDA_VISIBLE_DEVICES
while true; do sleep 1 & wait $!; done
`, name, trap))
}

// fakeUse is sbatch's --export for a job whose fake GPU shows util percent.
func fakeUse(util int) string {
	return fmt.Sprintf("--export=ALL,AUGUR_FAKE_GPU_MEM_MIB=1500,AUGUR_FAKE_GPU_SM_UTIL=%d", util)
}

// adminComment reads a job's AdminComment with scontrol (finished jobs too).
func (c *cluster) adminComment(t *testing.T, id uint64) string {
	t.Helper()
	out, _, err := c.Run(t, "scontrol", "show", "job", strconv.FormatUint(id, 10))
	if err != nil {
		t.Fatalf("scontrol show job %d: %v", id, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "AdminComment="); ok {
			return v
		}
	}
	return ""
}

func kinds(as []store.Action) string {
	var ks []string
	for i := len(as) - 1; i >= 0; i-- { // oldest first
		k := as[i].Kind
		if as[i].DryRun {
			k += "(dry)"
		}
		ks = append(ks, k)
	}
	return strings.Join(ks, " ")
}

// TestIdleGPUFlagsWarnsAndCancels: with live.idle_gpu on and cancel on, a
// job whose fake GPU stays at 0% is warned (its AdminComment names the
// cancel time, its batch shell gets USR1) and cancelled warn_delay later; a
// busy job beside it is untouched. Two jobs sharing one t4 through
// gres/shard are judged on their own processes: the idle one is cancelled
// beside the busy one, which runs on. A job that opted out (--comment
// augur:no-idle-cancel) is flagged and keeps running. (The test node has
// two CPUs: two jobs at a time.)
func TestIdleGPUFlagsWarnsAndCancels(t *testing.T) {
	c.idleAugurd(t, "AUGUR_LIVE_IDLE_GPU_CANCEL=true", "AUGUR_LIVE_IDLE_GPU_SIGNAL=USR1")
	dir := t.TempDir()
	mark := filepath.Join(dir, "warned")
	out := func(name string) string { return filepath.Join(dir, name+".out") }
	cancelled := func(ids ...uint64) {
		t.Helper()
		clustertest.WaitFor(t, 120*time.Second, fmt.Sprintf("idle job(s) %v cancelled", ids), func() bool {
			for _, id := range ids {
				if st, _ := c.state(t, id); st != "CANCELLED" {
					return false
				}
			}
			return true
		})
	}
	untouched := func(what string, id uint64) {
		t.Helper()
		if st, _ := c.state(t, id); st != "RUNNING" || len(c.actions(t, store.ActionFilter{JobID: id})) != 0 {
			t.Errorf("%s job %d: %s with actions %+v; want RUNNING, untouched", what, id, st, c.actions(t, store.ActionFilter{JobID: id}))
		}
	}

	idle := c.Sbatch(t, "--gres=gpu:a100:1", fakeUse(0), "-o", out("idle"), gpuLoop(t, "idle", mark))
	busy := c.Sbatch(t, "--gres=gpu:a100:1", fakeUse(70), "-o", "/dev/null", gpuLoop(t, "busy", ""))
	cancelled(idle)
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("job %d's batch shell never got the warning's USR1: %v", idle, err)
	}
	as := c.storedActions(t, idle, "idle_warn idle_cancel")
	if kinds(as) != "idle_warn idle_cancel" || as[1].Error != "" || as[0].Error != "" {
		t.Fatalf("actions of idle job %d: %+v; want idle_warn then idle_cancel", idle, as)
	}
	warn, cancel := as[1], as[0]
	if !strings.Contains(warn.Reason, "1 GPU under 5% SM utilisation") || !strings.Contains(warn.Reason, "will be cancelled at") ||
		!strings.Contains(cancel.Reason, "cancelled") || cancel.At.Sub(warn.At) < 5*time.Second {
		t.Errorf("warning %q at %s, cancel %q at %s", warn.Reason, warn.At, cancel.Reason, cancel.At)
	}
	// 10-minute limit: the cancel freed what was left of it, one GPU's worth.
	if cancel.Value <= 0 || cancel.Value > 600 {
		t.Errorf("cancel freed %d GPU-seconds; want (0, 600]", cancel.Value)
	}
	if ac := c.adminComment(t, idle); !strings.Contains(ac, `idle_gpu="GPUs idle`) || !strings.Contains(ac, "cancelled") ||
		!strings.Contains(ac, "augur:tok=") {
		t.Errorf("idle job %d's AdminComment %q: want its token and the cancel's reason", idle, ac)
	}
	untouched("busy", busy)
	t.Logf("idle job %d: %q; cancelled %s later, %d GPU-seconds of its limit freed", idle, warn.Reason,
		cancel.At.Sub(warn.At).Round(time.Second), cancel.Value)
	c.clearQueue(t)

	// Shards: one GPU, two jobs, each judged on its own processes.
	shardIdle := c.Sbatch(t, "--gres=shard:t4:1", fakeUse(0), "-o", out("shard-idle"), gpuLoop(t, "shard-idle", mark+"-shard"))
	shardBusy := c.Sbatch(t, "--gres=shard:t4:1", fakeUse(60), "-o", out("shard-busy"), gpuLoop(t, "shard-busy", ""))
	cancelled(shardIdle)
	gpus := func(name string) string {
		b, _ := os.ReadFile(out(name))
		first, _, _ := strings.Cut(string(b), "\n") // then slurmstepd's CANCELLED line
		return strings.TrimSpace(first)
	}
	if g := gpus("shard-idle"); g == "" || g != gpus("shard-busy") {
		t.Errorf("shard jobs ran on %q and %q; want the same GPU", g, gpus("shard-busy"))
	}
	if k := kinds(c.storedActions(t, shardIdle, "idle_warn idle_cancel")); k != "idle_warn idle_cancel" {
		t.Errorf("idle shard job %d: actions %q", shardIdle, k)
	}
	untouched("busy shard", shardBusy)
	c.clearQueue(t)

	optedOut := c.Sbatch(t, "--gres=gpu:a100:1", fakeUse(0), "--comment=keep augur:no-idle-cancel", "-o", "/dev/null",
		gpuLoop(t, "opted-out", ""))
	clustertest.WaitFor(t, 60*time.Second, fmt.Sprintf("opted-out job %d flagged", optedOut), func() bool {
		return kinds(c.actions(t, store.ActionFilter{JobID: optedOut})) == "idle_flag"
	})
	time.Sleep(12 * time.Second) // past warn_delay and a linker pass: still no cancel
	if st, _ := c.state(t, optedOut); st != "RUNNING" || kinds(c.actions(t, store.ActionFilter{JobID: optedOut})) != "idle_flag" ||
		!strings.Contains(c.adminComment(t, optedOut), "opted out") {
		t.Errorf("opted-out job %d: %s, actions %q, AdminComment %q; want RUNNING, flagged once, saying so", optedOut, st,
			kinds(c.actions(t, store.ActionFilter{JobID: optedOut})), c.adminComment(t, optedOut))
	}
	if got := c.metric(t, "augur_idle_gpu_jobs"); got != "1" {
		t.Errorf("augur_idle_gpu_jobs = %q, want 1 (the opted-out job)", got)
	}
}

// TestIdleGPUDryRunAndPause: in dry run an idle job's warning and cancel
// are recorded and nothing reaches Slurm; augur pause holds the flag back
// until resume.
func TestIdleGPUDryRunAndPause(t *testing.T) {
	c.idleAugurd(t, "AUGUR_LIVE_IDLE_GPU_CANCEL=true", "AUGUR_LIVE_DRY_RUN=true")
	dry := c.Sbatch(t, "--gres=gpu:a100:1", fakeUse(0), "-o", "/dev/null", gpuLoop(t, "idle-dry", ""))
	clustertest.WaitFor(t, 120*time.Second, fmt.Sprintf("job %d's dry-run cancel", dry), func() bool {
		return kinds(c.actions(t, store.ActionFilter{JobID: dry})) == "idle_warn(dry) idle_cancel(dry)"
	})
	if st, _ := c.state(t, dry); st != "RUNNING" || strings.Contains(c.adminComment(t, dry), "idle_gpu") {
		t.Errorf("dry run: job %d %s, AdminComment %q; want RUNNING and untouched", dry, st, c.adminComment(t, dry))
	}
	c.clearQueue(t)

	sock := filepath.Join(c.Dir, "run", "admin.sock")
	c.restartAugurdWith(t, append(idleEnv, "AUGUR_LIVE_ENABLED=true", "AUGUR_LIVE_ADMIN_SOCKET="+sock,
		"AUGUR_POLICY_SITE_FACTOR_MAX=0")...)
	admin(t, sock, "pause")
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			admin(t, sock, "resume")
		}
	})
	held := c.Sbatch(t, "--gres=gpu:a100:1", fakeUse(0), "-o", "/dev/null", gpuLoop(t, "idle-paused", ""))
	clustertest.WaitFor(t, 60*time.Second, fmt.Sprintf("job %d running", held), func() bool {
		st, _ := c.state(t, held)
		return st == "RUNNING"
	})
	time.Sleep(30 * time.Second) // grace + window + two linker passes
	if as := c.actions(t, store.ActionFilter{JobID: held}); len(as) != 0 || strings.Contains(c.adminComment(t, held), "idle_gpu") {
		t.Fatalf("paused: job %d has actions %+v, AdminComment %q", held, as, c.adminComment(t, held))
	}
	admin(t, sock, "resume")
	resumed = true
	clustertest.WaitFor(t, 30*time.Second, fmt.Sprintf("job %d flagged after resume", held), func() bool {
		return kinds(c.actions(t, store.ActionFilter{JobID: held})) == "idle_flag"
	})
	if ac := c.adminComment(t, held); !strings.Contains(ac, `idle_gpu="GPUs idle: 1 GPU under 5% SM utilisation`) {
		t.Errorf("flagged job %d's AdminComment %q", held, ac)
	}
}
