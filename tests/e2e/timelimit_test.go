//go:build e2e

package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/tests/clustertest"
)

// TestTimeLimitAdvice: a job whose own runs took a minute, submitted with
// a three-day limit, is told at submission (its AdminComment's time_hint)
// and by augur job what --time to ask for; one whose limit fits its runs
// gets no hint.
func TestTimeLimitAdvice(t *testing.T) {
	body := scriptFor("python train.py --model resnet50 --batch-size 32 # time-limit advice")
	path := c.predicted(t, body, 60, 4000)
	long := c.Sbatch(t, "-H", "--gres=gpu:t4:1", "--time=3-00:00:00", "-o", "/dev/null", path)
	fits := c.Sbatch(t, "-H", "--gres=gpu:t4:1", "--time=00:30:00", "-o", "/dev/null", path)
	if a := c.job(t, long).AdminComment; !strings.Contains(a, " time_hint=00:15:00") {
		t.Errorf("three-day limit for a one-minute job: AdminComment %q, want time_hint=00:15:00", a)
	}
	if a := c.job(t, fits).AdminComment; strings.Contains(a, "time_hint") {
		t.Errorf("a limit that fits: AdminComment %q has a time_hint", a)
	}
	var out string
	clustertest.WaitFor(t, 30*time.Second, "augurd's linker to tie the job to its submission", func() bool {
		o, _, err := c.Run(t, c.augurCLI(t), "job", strconv.FormatUint(long, 10))
		out = o
		return err == nil
	})
	if !strings.Contains(out, "--time=00:15:00 lets backfill start it sooner") {
		t.Errorf("augur job %d does not say what --time to ask for:\n%s", long, out)
	}
	c.clearQueue(t)
}

// TestTimeLimitTimeMin: with live.time_min on, a job whose runs took a
// minute gets Slurm's TimeMin at its upper predicted runtime (to the
// minute) below its three-day limit, which slurmctld shows; a job whose
// user gave --time-min keeps it; in dry run only the annotation says it.
func TestTimeLimitTimeMin(t *testing.T) {
	c.restartAugurdWith(t, "AUGUR_LIVE_TIME_MIN_ENABLED=true")
	t.Cleanup(func() {
		c.clearQueue(t)
		c.restartAugurdWith(t)
	})
	path := c.predicted(t, scriptFor("python train.py --model resnet50 --batch-size 32 # time_min"), 60, 4000)
	timeMin := func(id uint64) string {
		t.Helper()
		out, _, err := c.Run(t, "scontrol", "show", "job", strconv.FormatUint(id, 10))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range strings.Fields(out) {
			if v, ok := strings.CutPrefix(f, "TimeMin="); ok {
				return v
			}
		}
		return ""
	}
	set := c.Sbatch(t, "-H", "--gres=gpu:t4:1", "--time=3-00:00:00", "-o", "/dev/null", path)
	// Two one-minute runs: an upper prediction of a minute or two.
	tm, note := timeMin(set), annotationField(c.job(t, set), "time_min")
	if (tm != "00:01:00" && tm != "00:02:00") || note != tm {
		t.Errorf("job %d: TimeMin %q, annotation time_min=%q; want 00:01:00 or 00:02:00 in both", set, tm, note)
	}
	t.Logf("job %d, --time=3-00:00:00 after two one-minute runs: TimeMin %s", set, tm)
	own := c.Sbatch(t, "-H", "--gres=gpu:t4:1", "--time=3-00:00:00", "--time-min=02:00:00", "-o", "/dev/null", path)
	if tm := timeMin(own); tm != "02:00:00" {
		t.Errorf("job %d with --time-min=02:00:00: TimeMin %q", own, tm)
	}
	c.restartAugurdWith(t, "AUGUR_LIVE_TIME_MIN_ENABLED=true", "AUGUR_LIVE_DRY_RUN=true")
	dry := c.Sbatch(t, "-H", "--gres=gpu:t4:1", "--time=3-00:00:00", "-o", "/dev/null", path)
	if got, a := timeMin(dry), annotationField(c.job(t, dry), "time_min"); got != "N/A" || a != tm+"(dry_run)" {
		t.Errorf("dry run: job %d TimeMin %q, annotation time_min=%q; want N/A, annotated only", dry, got, a)
	}
}
