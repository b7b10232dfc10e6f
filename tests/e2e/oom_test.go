//go:build e2e

package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/augur-hpc/augur/tests/clustertest"
)

// oomScript fills its fake GPU to firstMiB and exits firstExit on its
// first run; a requeued run (SLURM_RESTART_COUNT > 0) uses 2000 MiB and
// completes. The test build's NVML mock gives every GPU 40960 MiB, so
// 40000 MiB is at its ceiling.
func oomScript(firstMiB, firstExit int) string {
	return fmt.Sprintf(`#!/bin/bash
#SBATCH --job-name=oom-recovery
#SBATCH --requeue
if [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then
  export AUGUR_FAKE_GPU_MEM_MIB=2000; sleep 2; exit 0
fi
export AUGUR_FAKE_GPU_MEM_MIB=%d
sleep 4
exit %d
`, firstMiB, firstExit)
}

// TestOOMRecoveryRequeuesOntoALargerGPU: with live.oom_recovery on, a t4
// job that fails with its GPU at the ceiling is requeued once onto a100 and
// completes there; its AdminComment and the actions table say so. A job
// that completes at the ceiling, and one that fails far below it, are left
// alone. In dry run the failed job stays failed and the action is only
// recorded.
func TestOOMRecoveryRequeuesOntoALargerGPU(t *testing.T) {
	c.restartAugurdWith(t, "AUGUR_LIVE_OOM_RECOVERY_ENABLED=true")
	t.Cleanup(func() { c.restartAugurdWith(t) })
	submit := func(mib, exit int) uint64 {
		return c.Sbatch(t, "--gres=gpu:t4:1", "-o", "/dev/null", c.BatchScript(t, oomScript(mib, exit)))
	}
	oom := submit(40000, 1)
	completedAtCeiling := submit(40000, 0)
	failedBelow := submit(2000, 1)

	// Slurm holds a requeued batch job back for CredExpire (120 s) + 1 s
	// before it may start again.
	clustertest.WaitFor(t, 200*time.Second, fmt.Sprintf("job %d requeued onto a100 and completed", oom), func() bool {
		st, restarts := c.state(t, oom)
		return st == "COMPLETED" && restarts == 1
	})
	// scontrol, not squeue: squeue --json of 24.11 and later lists no
	// finished job.
	show, _, err := c.Run(t, "scontrol", "show", "job", "-o", strconv.FormatUint(oom, 10))
	if err != nil {
		t.Fatal(err)
	}
	tres := ""
	for _, f := range strings.Fields(show) {
		if v, ok := strings.CutPrefix(f, "TresPerNode="); ok {
			tres = v
		}
	}
	if clustertest.GresPart(tres) != c.TRES(t, "gres:gpu:a100:1") {
		t.Errorf("requeued job %d asks for %q, want gres:gpu:a100:1", oom, tres)
	}
	if !strings.Contains(show, "oom_requeue=1:t4->a100") || !strings.Contains(show, "AdminComment=augur:tok=") {
		t.Errorf("job %d's AdminComment does not say it was requeued onto a100 (or lost its token):\n%s", oom, show)
	}
	// The job's outcome is its later run's: the node's report of the run
	// on a100 (2000 MiB, completed) replaces the failed run's.
	clustertest.WaitFor(t, 60*time.Second, fmt.Sprintf("job %d's outcome from its run on a100", oom), func() bool {
		o := c.nodeOutcome(t, oom)
		return o.Rows == 1 && o.PeakMiB > 0 && o.PeakMiB <= 2100 && o.ExitState == "COMPLETED"
	})
	as := c.actions(t, store.ActionFilter{JobID: oom, Kind: store.ActionOOMRequeue})
	if len(as) != 1 || as[0].DryRun || as[0].Error != "" || !strings.Contains(as[0].Reason, "requeued onto a100") {
		t.Errorf("actions of job %d: %+v; want one oom_requeue onto a100", oom, as)
	}
	for _, id := range []uint64{completedAtCeiling, failedBelow} {
		st, restarts := c.state(t, id)
		if restarts != 0 || len(c.actions(t, store.ActionFilter{JobID: id, Kind: store.ActionOOMRequeue})) != 0 {
			t.Errorf("job %d (%s) was requeued %d times; want it left alone", id, st, restarts)
		}
	}
	t.Logf("job %d: GPU at the ceiling on t4, failed; requeued onto a100 and completed (%s); the false positives %d and %d left alone",
		oom, as[0].Reason, completedAtCeiling, failedBelow)

	// Dry run: recorded, not done.
	c.restartAugurdWith(t, "AUGUR_LIVE_OOM_RECOVERY_ENABLED=true", "AUGUR_LIVE_DRY_RUN=true")
	dry := submit(40000, 1)
	clustertest.WaitFor(t, 60*time.Second, fmt.Sprintf("job %d's dry-run action", dry), func() bool {
		return len(c.actions(t, store.ActionFilter{JobID: dry, Kind: store.ActionOOMRequeue})) == 1
	})
	// The action can be recorded while slurmd still runs the Epilog, so
	// scontrol says COMPLETING (of a FAILED job) for a moment: wait that out.
	clustertest.WaitFor(t, 30*time.Second, fmt.Sprintf("job %d past COMPLETING", dry), func() bool {
		st, _ := c.state(t, dry)
		return st != "COMPLETING"
	})
	if st, restarts := c.state(t, dry); st != "FAILED" || restarts != 0 {
		t.Errorf("dry run: job %d %s after %d restarts; want FAILED, untouched", dry, st, restarts)
	}
	if as := c.actions(t, store.ActionFilter{JobID: dry}); len(as) != 1 || !as[0].DryRun {
		t.Errorf("dry run: actions %+v", as)
	}
}
