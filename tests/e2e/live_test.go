//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/sidecar/live"
	"github.com/augur-hpc/augur/sidecar/policy"
	"github.com/augur-hpc/augur/sidecar/slurm"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/augur-hpc/augur/tests/clustertest"
)

// The live scheduler's scenarios restart augurd with live scheduling on
// (through the AUGUR_* environment, which overrides augur.yaml) and with
// SiteFactor at submission off, so that only the live loop sets it; the
// other tests run with it off, and get it back at the end:
//
//	AUGUR_LIVE_ENABLED=true AUGUR_LIVE_INTERVAL=1s AUGUR_LIVE_GRACE=4s
//	AUGUR_LIVE_MIN_RUN_TIME=0s AUGUR_LIVE_ADMIN_SOCKET=$DIR/run/admin.sock
//	AUGUR_POLICY_SITE_FACTOR_MAX=0
func needLive(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(c.Dir, "run", "admin.sock")
	c.restartAugurdWith(t, "AUGUR_LIVE_ENABLED=true", "AUGUR_LIVE_INTERVAL=1s", "AUGUR_LIVE_GRACE=4s",
		"AUGUR_LIVE_MIN_RUN_TIME=0s", "AUGUR_LIVE_ADMIN_SOCKET="+sock, "AUGUR_POLICY_SITE_FACTOR_MAX=0")
	t.Cleanup(func() {
		c.clearQueue(t)
		c.restartAugurdWith(t)
	})
	c.clearQueue(t)
	return sock
}

// restartAugurdWith restarts augurd with env added to the cluster's.
func (c *cluster) restartAugurdWith(t *testing.T, env ...string) {
	t.Helper()
	for _, verb := range []string{"stop", "start"} {
		cmd := exec.Command(filepath.Join(c.Repo, "tests", "cluster", "augurd.sh"), c.Dir, verb)
		cmd.Env = append(append([]string{}, c.Env...), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("augurd.sh %s: %v\n%s", verb, err, out)
		}
	}
	c.annotatedAgain(t)
}

func (c *cluster) clearQueue(t *testing.T) {
	t.Helper()
	c.Run(t, "scancel", "-u", "root")
	c.Run(t, "scontrol", "update", "nodename="+c.node(t), "state=resume")
	clustertest.WaitFor(t, 30*time.Second, "an empty queue", func() bool {
		out, _, _ := c.Run(t, "squeue", "-h", "-t", "PD,R,CG")
		return strings.TrimSpace(out) == ""
	})
}

func (c *cluster) node(t *testing.T) string {
	out, _, err := c.Run(t, "sinfo", "-h", "-o", "%N")
	if err != nil {
		t.Fatal(err)
	}
	// One line per partition (gpu, bigmem), each naming the node.
	name, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return name
}

func admin(t *testing.T, sock, cmd string) live.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := live.AdminCall(ctx, sock, cmd)
	if err != nil {
		t.Fatalf("augur %s: %v", cmd, err)
	}
	return resp.Status
}

// script is a batch script whose signature is its own (cmd differs).
func scriptFor(cmd string) string {
	return "#!/bin/bash\n#SBATCH --cpus-per-task=1\nsource /etc/profile\n" + cmd + "\n"
}

// predicted records two finished runs of body so that augurd predicts its
// runtime (and memory) at submission.
func (c *cluster) predicted(t *testing.T, body string, sec, memMiB float64) string {
	t.Helper()
	sig := predictor.ParseScript(body).Signature
	base := uint64(time.Now().UnixNano() % 1e9)
	c.addHistory(t, 0, sig,
		store.Outcome{JobID: 800000000 + base, PeakGPUMemMiB: memMiB, RuntimeSec: sec, ExitState: "COMPLETED"},
		store.Outcome{JobID: 800000001 + base, PeakGPUMemMiB: memMiB, RuntimeSec: sec, ExitState: "COMPLETED"},
	)
	return c.BatchScript(t, body)
}

func (c *cluster) state(t *testing.T, id uint64) (string, int) {
	t.Helper()
	out, _, err := c.Run(t, "scontrol", "show", "job", strconv.FormatUint(id, 10))
	if err != nil {
		return "", 0
	}
	st, restarts := "", 0
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, "JobState="); ok {
			st = v
		}
		if v, ok := strings.CutPrefix(f, "Restarts="); ok {
			restarts, _ = strconv.Atoi(v)
		}
	}
	return st, restarts
}

func (c *cluster) startTime(t *testing.T, id uint64) time.Time {
	t.Helper()
	out, _, _ := c.Run(t, "squeue", "-h", "-j", strconv.FormatUint(id, 10), "-o", "%S")
	ts, err := time.ParseInLocation("2006-01-02T15:04:05", strings.TrimSpace(out), time.Local)
	if err != nil {
		return time.Time{}
	}
	return ts
}

func (c *cluster) actions(t *testing.T, f store.ActionFilter) []store.Action {
	t.Helper()
	r, err := store.OpenReadOnly(context.Background(), c.storePath())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	as, err := r.Actions(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// storedActions waits up to ten seconds for the job's actions to read as
// want (kinds, oldest first) and returns them: augurd stores each action
// once Slurm has answered it, so a row lands a moment after squeue shows
// its effect.
func (c *cluster) storedActions(t *testing.T, job uint64, want string) []store.Action {
	t.Helper()
	var as []store.Action
	deadline := time.Now().Add(10 * time.Second)
	for {
		as = c.actions(t, store.ActionFilter{JobID: job})
		if kinds(as) == want || time.Now().After(deadline) {
			return as
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// siteFactor reads sprio's SITE column for a pending job (-1: not listed).
func (c *cluster) siteFactor(t *testing.T, id uint64) int64 {
	out, _, _ := c.Run(t, "sprio", "-h", "-j", strconv.FormatUint(id, 10), "-o", "%S")
	v, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// TestLiveHeadOfLine: a large short job waits behind long small ones; the
// policy ranks it first, its SiteFactor shows in sprio, the action is in
// augurd's store, and it starts first when the GPUs free up.
func TestLiveHeadOfLine(t *testing.T) {
	needLive(t)
	small1 := c.predicted(t, scriptFor("python small_long.py --epochs 90; sleep 120"), 36000, 8000)
	large1 := c.predicted(t, scriptFor("python large_short.py --eval-only; sleep 2"), 60, 30000)
	// The blocker holds the GPUs until the SiteFactor shows (or the wait
	// gives up), so a slow first live pass cannot let the small jobs start
	// first; then it is cancelled and the GPUs free up at once.
	blocker := c.Sbatch(t, "--no-requeue", "--gres=gpu:a100:4", "--wrap", "sleep 60")
	// Running before the others come: a live pass that ranked the large
	// job above a still-pending blocker let Slurm start it first (26.05).
	clustertest.WaitFor(t, 30*time.Second, fmt.Sprintf("blocker %d running", blocker), func() bool {
		st, _ := c.state(t, blocker)
		return st == "RUNNING"
	})
	var small []uint64
	for range 3 {
		small = append(small, c.Sbatch(t, "--gres=gpu:a100:1", small1))
	}
	large := c.Sbatch(t, "--gres=gpu:a100:4", large1)
	for deadline := time.Now().Add(45 * time.Second); c.siteFactor(t, large) <= c.siteFactor(t, small[0]) || c.siteFactor(t, small[0]) < 0; {
		if time.Now().After(deadline) {
			sprio, _, _ := c.Run(t, "sprio", "-l")
			queue, _, _ := c.Run(t, "squeue", "-o", "%i %T %r %Q %b")
			t.Fatalf("after 45s the large job %d has no SiteFactor above small job %d's in sprio:\n%s\n%s\nactions: %+v",
				large, small[0], sprio, queue, c.actions(t, store.ActionFilter{Kind: store.ActionSiteFactor}))
		}
		time.Sleep(100 * time.Millisecond)
	}
	sprio, _, _ := c.Run(t, "sprio", "-l")
	t.Logf("sprio -l while the blocker %d runs:\n%s", blocker, sprio)
	c.Run(t, "scancel", strconv.FormatUint(blocker, 10))
	as := c.actions(t, store.ActionFilter{JobID: large, Kind: store.ActionSiteFactor})
	if len(as) == 0 || !strings.Contains(as[0].Reason, "ranks it 1 of") || as[0].DryRun || as[0].Error != "" {
		t.Fatalf("store has no applied rank-1 SiteFactor for job %d: %+v", large, as)
	}
	t.Logf("stored: job %d site_factor=%d reason=%q", large, as[0].Value, as[0].Reason)
	clustertest.WaitFor(t, 60*time.Second, "the large job to start", func() bool {
		st, _ := c.state(t, large)
		return st == "RUNNING" || st == "COMPLETED"
	})
	for _, id := range small {
		if st, _ := c.state(t, id); st != "PENDING" {
			if !c.startTime(t, id).After(c.startTime(t, large)) {
				t.Errorf("small job %d (%s) started before the large job %d", id, st, large)
			}
		}
	}
	c.clearQueue(t)
}

// TestLivePreemptionSignalsThenRequeues: a long requeueable job holding the
// GPUs a short one needs gets the signal, its trap runs, and only after the
// grace period is it requeued; the store has both steps with their reason.
func TestLivePreemptionSignalsThenRequeues(t *testing.T) {
	needLive(t)
	mark := filepath.Join(c.Dir, fmt.Sprintf("signalled-%d", time.Now().UnixNano()))
	t.Cleanup(func() { os.Remove(mark) })
	victimBody := scriptFor(fmt.Sprintf("trap 'date +%%s.%%N >> %s' USR1\npython victim_long.py --resume\nfor i in $(seq 600); do sleep 1; done", mark))
	victimScript := c.predicted(t, victimBody, 36000, 8000)
	shortScript := c.predicted(t, scriptFor("python urgent_short.py; sleep 3"), 60, 30000)
	// The t4s are busy too, with a job that ranks above the victim and may
	// not be preempted: the policy counts a job's claim on the cluster's
	// GPUs of all types, so with the t4s free it would see room for both.
	t4Script := c.predicted(t, scriptFor("python t4_eval.py; sleep 120"), 120, 4000)
	c.Sbatch(t, "--no-requeue", "--gres=gpu:t4:4", t4Script)
	victim := c.Sbatch(t, "--requeue", "--gres=gpu:a100:4", victimScript)
	clustertest.WaitFor(t, 20*time.Second, "the victim to run", func() bool { st, _ := c.state(t, victim); return st == "RUNNING" })
	time.Sleep(2 * time.Second) // the batch shell sets its trap
	urgent := c.Sbatch(t, "--gres=gpu:a100:4", shortScript)

	clustertest.WaitFor(t, 30*time.Second, "the victim's trap", func() bool { _, err := os.Stat(mark); return err == nil })
	signalled := time.Now()
	if st, restarts := c.state(t, victim); st != "RUNNING" || restarts != 0 {
		t.Errorf("at the signal the victim is %s (restarts %d), want RUNNING 0: the grace period", st, restarts)
	}
	clustertest.WaitFor(t, 30*time.Second, "the victim's requeue", func() bool { _, r := c.state(t, victim); return r == 1 })
	requeued := time.Now()
	if requeued.Sub(signalled) < 3*time.Second {
		t.Errorf("requeued %s after the signal; the grace is 4s", requeued.Sub(signalled))
	}
	as := c.storedActions(t, uint64(victim), "signal requeue")
	var sig, req *store.Action
	for i := range as {
		switch as[i].Kind {
		case store.ActionSignal:
			sig = &as[i]
		case store.ActionRequeue:
			req = &as[i]
		}
	}
	if sig == nil || req == nil || !req.At.After(sig.At) || sig.Value != 10 || !strings.Contains(sig.Reason, "preempted by augur") {
		t.Fatalf("stored actions for job %d: %+v", victim, as)
	}
	t.Logf("stored: signal %d at %s (%q), requeue at %s (+%s)", sig.Value, sig.At.Format(time.TimeOnly), sig.Reason,
		req.At.Format(time.TimeOnly), req.At.Sub(sig.At).Round(time.Millisecond))
	clustertest.WaitFor(t, 30*time.Second, "the urgent job to start", func() bool {
		st, _ := c.state(t, urgent)
		return st == "RUNNING" || st == "COMPLETED"
	})
	c.clearQueue(t)
}

// TestLivePauseResume: augur pause stops the SiteFactor writes; resume
// brings them back.
func TestLivePauseResume(t *testing.T) {
	sock := needLive(t)
	if st := admin(t, sock, "pause"); !st.Paused {
		t.Fatalf("status after pause: %+v", st)
	}
	t.Cleanup(func() { admin(t, sock, "resume") })
	c.Sbatch(t, "--gres=gpu:a100:4", "--no-requeue", "--wrap", "sleep 30")
	a := c.Sbatch(t, "--gres=gpu:a100:4", "--wrap", "true")
	b := c.Sbatch(t, "--gres=gpu:a100:4", c.predicted(t, scriptFor("python paused_short.py"), 30, 1000))
	time.Sleep(3 * time.Second)
	if sa, sb := c.siteFactor(t, a), c.siteFactor(t, b); sa != 0 || sb != 0 {
		t.Errorf("while paused: SiteFactors %d, %d; want 0, 0", sa, sb)
	}
	if st := admin(t, sock, "resume"); st.Paused {
		t.Fatalf("status after resume: %+v", st)
	}
	clustertest.WaitFor(t, 10*time.Second, "a SiteFactor after resume", func() bool { return c.siteFactor(t, b) > c.siteFactor(t, a) })
	if st := admin(t, sock, "status"); st.LastResult != "ok" || st.Pending < 2 {
		t.Errorf("status: %+v", st)
	}
	c.clearQueue(t)
}

// TestLiveAugurdStopped: with augurd stopped, the same head-of-line queue
// runs as Slurm alone runs it: oldest first.
func TestLiveAugurdStopped(t *testing.T) {
	needLive(t)
	if out, err := c.Script("augurd.sh", "stop"); err != nil {
		t.Fatalf("augurd.sh stop: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := c.Script("augurd.sh", "start"); err != nil {
			t.Errorf("augurd.sh start: %v\n%s", err, out)
		}
	})
	small1 := c.predicted(t, scriptFor("python small_long.py --epochs 90; sleep 120"), 36000, 8000)
	large1 := c.predicted(t, scriptFor("python large_short.py --eval-only; sleep 2"), 60, 30000)
	c.Sbatch(t, "--no-requeue", "--gres=gpu:a100:4", "--wrap", "sleep 8")
	var small []uint64
	for range 3 {
		small = append(small, c.Sbatch(t, "--gres=gpu:a100:1", small1))
	}
	large := c.Sbatch(t, "--gres=gpu:a100:4", large1)
	// The three small jobs fit together and start in one scheduling cycle,
	// so which one a poll sees running first says nothing: wait for the
	// oldest to start, then check that nothing started before it.
	clustertest.WaitFor(t, 60*time.Second, "the oldest small job to start", func() bool {
		if st, _ := c.state(t, large); st == "RUNNING" || st == "COMPLETED" {
			return true
		}
		st, _ := c.state(t, small[0])
		return st == "RUNNING"
	})
	if st, _ := c.state(t, large); st == "RUNNING" || st == "COMPLETED" {
		t.Errorf("with augurd stopped the large job %d started (%s); Slurm alone starts the oldest, %d", large, st, small[0])
	}
	oldest := c.startTime(t, small[0])
	for _, id := range small[1:] {
		if st, _ := c.state(t, id); st == "RUNNING" && c.startTime(t, id).Before(oldest) {
			t.Errorf("with augurd stopped job %d started at %s, before the oldest, %d, at %s", id, c.startTime(t, id), small[0], oldest)
		}
	}
	c.clearQueue(t)
}

// TestLivePassTenThousand measures one pass of the live loop (libslurm read,
// policy, SiteFactor writes, store) over AUGUR_E2E_LIVE_BENCH pending jobs
// (10000 for the figure) on the real slurmctld. augurd is paused
// meanwhile. Jobs are submitted with the node drained, so they all wait.
func TestLivePassTenThousand(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("AUGUR_E2E_LIVE_BENCH"))
	if n <= 0 {
		t.Skip("set AUGUR_E2E_LIVE_BENCH=10000 to run the benchmark")
	}
	sock := needLive(t)
	admin(t, sock, "pause")
	t.Cleanup(func() { admin(t, sock, "resume") })
	c.Run(t, "scontrol", "update", "nodename="+c.node(t), "state=drain", "reason=bench")
	// Submitting is the slow part: sbatch in 4 parallel streams.
	sub := exec.Command("sh", "-c", fmt.Sprintf("seq %d | xargs -P 4 -I{} sbatch -o /dev/null --wrap true >/dev/null", n))
	sub.Env = c.Env
	if out, err := sub.CombinedOutput(); err != nil {
		t.Fatalf("submitting: %v\n%s", err, out)
	}
	// libslurm in this process reads SLURM_CONF (slurm_init(NULL)).
	t.Setenv("SLURM_CONF", filepath.Join(c.Dir, "etc", "slurm.conf"))
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "bench.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lib := &slurm.Lib{}
	if w, _ := strconv.Atoi(os.Getenv("AUGUR_E2E_LIVE_WORKERS")); w > 0 {
		lib.Workers = w
	}
	t0 := time.Now()
	jobs, err := lib.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("slurm_load_jobs: %d jobs in %s", len(jobs), time.Since(t0))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	types := []policy.GPUType{{Name: "t4", MemMiB: 16384}, {Name: "a100", MemMiB: 81920}}
	// Each job is given a prediction of its own (as if each had a history),
	// so the policy's order is not the order of job ids and every job needs
	// a value of its own: the most writes a pass can need.
	cl := predictedLib{lib}
	pass := func(name string, max int64) live.Status {
		l, err := live.New(ctx, live.Config{Interval: 2 * time.Second, Policy: "augur", Types: types,
			Rules: live.Rules{SiteFactorMax: max, MaxPreemptions: 0}}, cl, st, nil, quiet, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		r := l.Pass(ctx)
		s := l.Status()
		t.Logf("%-34s %5d pending, %5d SiteFactors written, %5d deferred to the next pass, %d failed: %s",
			name, s.Pending, s.SiteFactors, s.Deferred, r.Failed, r.Took.Round(time.Millisecond))
		if s.Pending < n {
			t.Errorf("pass saw %d pending jobs, want at least %d", s.Pending, n)
		}
		if r.Took > 2*time.Second {
			t.Errorf("%s took %s, over the 2 s budget", name, r.Took)
		}
		return s
	}
	for i := 1; i <= 10; i++ {
		if s := pass(fmt.Sprintf("cold start, pass %d:", i), 50000); s.Deferred == 0 {
			break
		}
	}
	if s := pass("steady (nothing changed):", 50000); s.SiteFactors != 0 || s.Deferred != 0 {
		t.Errorf("steady pass wrote %d, deferred %d", s.SiteFactors, s.Deferred)
	}
	c.clearQueue(t)
}

// predictedLib is the real libslurm client whose jobs carry a made-up
// runtime prediction each, a pseudo-random function of the job id.
type predictedLib struct{ *slurm.Lib }

func (p predictedLib) Jobs(ctx context.Context) ([]slurm.Job, error) {
	jobs, err := p.Lib.Jobs(ctx)
	for i := range jobs {
		sec := 60 + (jobs[i].ID*2654435761)%86000
		jobs[i].AdminComment = fmt.Sprintf("pred_time=%02d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	}
	return jobs, err
}
