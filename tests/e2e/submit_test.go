//go:build e2e

package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/augur-hpc/augur/slurm-plugin/wire"
	"github.com/augur-hpc/augur/tests/clustertest"
)

// TestGPURequestForms: every way sbatch asks for GPUs reaches augurd in the
// right field, and the annotation lands on the job.
func TestGPURequestForms(t *testing.T) {
	cases := map[string]struct {
		args  []string
		field func(job) string
		want  string
	}{
		"--gres=gpu:a100:1":      {[]string{"--gres=gpu:a100:1"}, func(j job) string { return j.TRESPerNode }, "gres:gpu:a100:1"},
		"--gres=gpu:1":           {[]string{"--gres=gpu:1"}, func(j job) string { return j.TRESPerNode }, "gres:gpu:1"},
		"--gpus=2":               {[]string{"--gpus=2"}, func(j job) string { return j.TRESPerJob }, "gres:gpu:2"},
		"--gpus-per-node=t4:1":   {[]string{"--gpus-per-node=t4:1"}, func(j job) string { return j.TRESPerNode }, "gres:gpu:t4:1"},
		"--gpus-per-task=1 -n 2": {[]string{"--gpus-per-task=1", "-n", "2"}, func(j job) string { return j.TRESPerTask }, "gres:gpu:1"},
		"no GPUs":                {nil, func(j job) string { return j.TRESPerNode + j.TRESPerJob + j.TRESPerTask }, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			id := c.Sbatch(t, append([]string{"-H", "-J", "forms", "--wrap", "sleep 1"}, tc.args...)...)
			j := c.job(t, id)
			want := c.TRES(t, tc.want)
			if strings.HasPrefix(name, "--gpus-per-task") {
				want = c.TRESPerTask(t, tc.want)
			}
			if got := clustertest.GresPart(tc.field(j)); got != want {
				t.Errorf("TRES field = %q, want %q", got, want)
			}
			tok := token(j)
			if !strings.HasPrefix(j.AdminComment, "augur:tok=") || tok == "" {
				t.Fatalf("AdminComment %q has no augur annotation", j.AdminComment)
			}
			for _, f := range []string{"pred_gpu_mem=", "pred_time=", "src="} {
				if !strings.Contains(j.AdminComment, f) {
					t.Errorf("annotation %q lacks %s", j.AdminComment, f)
				}
			}
			sub := c.stored(t, tok)
			if sub.Name != "forms" || sub.Action != "accept" {
				t.Errorf("stored %+v", sub)
			}
			if want != "" && !strings.Contains(string(sub.Request), want) {
				t.Errorf("stored request %s lacks %q", sub.Request, want)
			}
		})
	}
}

const trainScript = `#!/bin/bash
#SBATCH --job-name=vit-train
#SBATCH --time=02:00:00
#SBATCH --cpus-per-task=1
source /etc/profile
torchrun --nproc_per_node 1 train.py --model vit_base_patch16_224 --batch-size %d --data /datasets/imagenet
`

// TestHistoryRewritesTypelessRequest: a typeless request for a job whose
// earlier runs peaked at 30 GB is placed on a100 (a t4 has 16 GB), gets an
// initial SiteFactor that shows in its priority, and says so in AdminComment.
func TestHistoryRewritesTypelessRequest(t *testing.T) {
	body := strings.Replace(trainScript, "%d", "64", 1)
	sig := predictor.ParseScript(body).Signature
	c.addHistory(t, 0, sig,
		store.Outcome{JobID: 900001, PeakGPUMemMiB: 30000, RuntimeSec: 1500, ExitState: "COMPLETED"},
		store.Outcome{JobID: 900002, PeakGPUMemMiB: 31000, RuntimeSec: 1700, ExitState: "COMPLETED"},
	)
	id := c.Sbatch(t, "--gres=gpu:1", "-H", c.BatchScript(t, body))
	j := c.job(t, id)
	if clustertest.GresPart(j.TRESPerNode) != c.TRES(t, "gres:gpu:a100:1") {
		t.Errorf("TresPerNode = %q, want gres:gpu:a100:1", j.TRESPerNode)
	}
	for _, f := range []string{"src=history/history", "runs=2", "gpu_type=a100", "pred_gpu_mem=29.8G(p95:31.8G)"} {
		if !strings.Contains(j.AdminComment, f) {
			t.Errorf("annotation %q lacks %s", j.AdminComment, f)
		}
	}
	// A small job of the same user goes to the smaller type.
	small := strings.Replace(body, "vit_base_patch16_224", "resnet18", 1)
	c.addHistory(t, 0, predictor.ParseScript(small).Signature,
		store.Outcome{JobID: 900003, PeakGPUMemMiB: 5000, RuntimeSec: 300, ExitState: "COMPLETED"})
	id = c.Sbatch(t, "--gpus=2", c.BatchScript(t, small))
	j = c.job(t, id)
	if clustertest.GresPart(j.TRESPerJob) != c.TRES(t, "gres:gpu:t4:2") {
		t.Errorf("TresPerJob = %q, want gres:gpu:t4:2", j.TRESPerJob)
	}
	// Not held, so priority/multifactor has computed it: with every
	// PriorityWeight at 0 it is 1 + SiteFactor.
	sub := c.stored(t, token(j))
	if !strings.Contains(string(sub.Decision), `"site_factor"`) || j.Priority <= 1 {
		t.Errorf("priority %d and decision %s: no initial SiteFactor applied", j.Priority, sub.Decision)
	}
}

// TestSubmissionEnvironment: what sbatch exports to the job reaches augurd,
// which reads the script with it. MODEL=... sbatch names the model the
// script's ${MODEL:-...} runs, and with it the history and the GPU type
// chosen; --export=NONE exports none of it; a secret's value the script
// uses never leaves slurmctld.
func TestSubmissionEnvironment(t *testing.T) {
	body := `#!/bin/bash
#SBATCH --job-name=envtrain
#SBATCH --time=02:00:00
#SBATCH --cpus-per-task=1
huggingface-cli login --token "$HF_TOKEN" || true
torchrun --nproc_per_node 1 train.py --model ${MODEL:-resnet18} --batch-size 64
`
	env := []string{"MODEL=vit_large_patch16_224"}
	c.addHistory(t, 0, predictor.ParseScriptEnv(body, []string{}, env).Signature,
		store.Outcome{JobID: 900201, PeakGPUMemMiB: 30000, RuntimeSec: 1500, ExitState: "COMPLETED"},
		store.Outcome{JobID: 900202, PeakGPUMemMiB: 31000, RuntimeSec: 1600, ExitState: "COMPLETED"})
	path := c.BatchScript(t, body)
	submit := func(vars []string, args ...string) job {
		t.Helper()
		id, stderr, err := c.TrySbatchEnv(t, vars, append(append([]string{"-H"}, args...), path)...)
		if err != nil {
			t.Fatalf("%v sbatch %v: %v\n%s", vars, args, err, stderr)
		}
		return c.job(t, id)
	}

	j := submit(append(env, "HF_TOKEN=hf_e2e_not_for_augurd"), "--gres=gpu:1")
	sub := c.stored(t, token(j))
	for _, want := range []string{`"MODEL=vit_large_patch16_224"`, `"HF_TOKEN"`} {
		if !strings.Contains(string(sub.Request), want) {
			t.Errorf("stored request %s lacks %s", sub.Request, want)
		}
	}
	if strings.Contains(string(sub.Request), "hf_e2e_not_for_augurd") {
		t.Errorf("the secret's value reached augurd: %s", sub.Request)
	}
	if clustertest.GresPart(j.TRESPerNode) != c.TRES(t, "gres:gpu:a100:1") {
		t.Errorf("MODEL from the environment: TresPerNode = %q, want the a100 its history needs", j.TRESPerNode)
	}
	for _, f := range []string{"src=history/history", "runs=2"} {
		if !strings.Contains(j.AdminComment, f) {
			t.Errorf("annotation %q lacks %s", j.AdminComment, f)
		}
	}

	// --export=NONE: the job gets none of it, and augurd reads the default.
	j = submit(env, "--export=NONE", "--gres=gpu:1")
	sub = c.stored(t, token(j))
	if strings.Contains(string(sub.Request), "MODEL=") || strings.Contains(j.AdminComment, "runs=2") {
		t.Errorf("--export=NONE: request %s, annotation %q: the submitter's MODEL still read", sub.Request, j.AdminComment)
	}

	// shim.forward_env: false sends none of it, whatever the job exports.
	c.setForwardEnv(t, false)
	t.Cleanup(func() { c.setForwardEnv(t, true) })
	j = submit(append(env, "HF_TOKEN=hf_e2e_not_for_augurd"), "--gres=gpu:1")
	sub = c.stored(t, token(j))
	if strings.Contains(string(sub.Request), `"env"`) || strings.Contains(j.AdminComment, "runs=2") {
		t.Errorf("shim.forward_env false: request %s, annotation %q: the environment still sent", sub.Request, j.AdminComment)
	}
}

// TestCertainOOMIsRejected: a job whose every recorded run needed more
// memory than a t4 has is refused at sbatch with a message naming a fix.
func TestCertainOOMIsRejected(t *testing.T) {
	body := strings.Replace(trainScript, "%d", "256", 1)
	c.addHistory(t, 0, predictor.ParseScript(body).Signature,
		store.Outcome{JobID: 900101, PeakGPUMemMiB: 39000, RuntimeSec: 40, ExitState: "FAILED"},
		store.Outcome{JobID: 900102, PeakGPUMemMiB: 38500, RuntimeSec: 35, ExitState: "FAILED"},
	)
	_, stderr, err := c.TrySbatch(t, "--gres=gpu:t4:1", c.BatchScript(t, body))
	if err == nil {
		t.Fatal("sbatch accepted a job that cannot fit a t4")
	}
	for _, want := range []string{"augur:", "16G of a t4", "--gres=gpu:a100:N"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("sbatch said %q; want it to contain %q", stderr, want)
		}
	}
	// The same job on a100 goes through.
	c.Sbatch(t, "-H", "--gres=gpu:a100:1", c.BatchScript(t, body))
}

// TestAugurdDownFailsOpen: with augurd killed, submissions succeed
// unchanged and promptly; the shim logs why; when augurd returns,
// annotations resume after the cool-down.
func TestAugurdDownFailsOpen(t *testing.T) {
	if out, err := c.Script("augurd.sh", "kill"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	defer c.restartAugurd(t)
	for i := 0; i < 50; i++ {
		start := time.Now()
		id := c.Sbatch(t, "-H", "--gres=gpu:1", "--wrap", "true")
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("sbatch took %s with augurd down", took)
		}
		if j := c.job(t, id); token(j) != "" || clustertest.GresPart(j.TRESPerNode) != c.TRES(t, "gres:gpu:1") {
			t.Fatalf("job %d changed while augurd was down: %+v", id, j)
		}
	}
	log := c.ctldLog(t)
	for _, want := range []string{"job accepted unchanged", "accepting jobs without asking augurd"} {
		if !strings.Contains(log, want) {
			t.Errorf("slurmctld.log lacks %q", want)
		}
	}
	c.restartAugurd(t)
}

// restartAugurd brings augurd back after a fault test and waits until the
// shim uses it again, so the next test starts from a healthy cluster.
func (c *cluster) restartAugurd(t testing.TB) {
	t.Helper()
	c.Script("augurd.sh", "cont")
	if out, err := c.Script("augurd.sh", "start"); err != nil && !strings.Contains(out, "already") {
		t.Fatalf("augurd start: %v\n%s", err, out)
	}
	c.annotatedAgain(t)
}

// TestAugurdHungFailsOpen: a stopped (SIGSTOP) augurd accepts connections
// but never answers; the shim's deadline still lets every job in.
func TestAugurdHungFailsOpen(t *testing.T) {
	if out, err := c.Script("augurd.sh", "stop-signal"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	defer c.restartAugurd(t)
	for i := 0; i < 10; i++ {
		id := c.Sbatch(t, "-H", "--wrap", "true")
		if token(c.job(t, id)) != "" {
			t.Fatal("annotated by a stopped augurd?")
		}
	}
}

// TestAugurdGarbageFailsOpen puts impostors on augurd's socket: one that
// answers garbage, one that answers too late, one that hangs up.
func TestAugurdGarbageFailsOpen(t *testing.T) {
	if out, err := c.Script("augurd.sh", "stop"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	defer c.restartAugurd(t)
	sock := filepath.Join(c.Dir, "run", "augurd.sock")
	impostors := map[string]func(net.Conn){
		"garbage":   func(conn net.Conn) { conn.Write([]byte("AUG1\x00\x00\x00\x09not json!")) },
		"late":      func(conn net.Conn) { time.Sleep(300 * time.Millisecond); conn.Write([]byte("AUG1\x00\x00\x00\x02{}")) },
		"hangs up":  func(conn net.Conn) {},
		"bad magic": func(conn net.Conn) { conn.Write([]byte("HTTP/1.1 200 OK\r\n\r\n")) },
		"wrong token": func(conn net.Conn) {
			wire.Write(conn, wire.Response{V: 1, Token: "0000", Action: wire.Reject, Message: "impostor"})
		},
	}
	for name, answer := range impostors {
		t.Run(name, func(t *testing.T) {
			os.Remove(sock)
			ln, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					go func() {
						defer conn.Close()
						wire.ReadFrame(conn, wire.MaxFrame)
						answer(conn)
					}()
				}
			}()
			time.Sleep(2100 * time.Millisecond) // let an earlier cool-down pass
			id := c.Sbatch(t, "-H", "--gres=gpu:1", "--wrap", "true")
			if j := c.job(t, id); token(j) != "" || clustertest.GresPart(j.TRESPerNode) != c.TRES(t, "gres:gpu:1") {
				t.Errorf("job changed by an impostor: %+v", j)
			}
		})
	}
}

// TestPanicInShim: the test build panics for --comment augur-test-panic;
// slurmctld survives and the job is accepted.
func TestPanicInShim(t *testing.T) {
	id := c.Sbatch(t, "-H", "--comment", "augur-test-panic", "--wrap", "true")
	if j := c.job(t, id); token(j) != "" {
		t.Errorf("panicking submission annotated: %+v", j)
	}
	if _, stderr, err := c.Run(t, "scontrol", "ping"); err != nil {
		t.Fatalf("slurmctld down after a panic in the plugin: %v %s", err, stderr)
	}
	if !strings.Contains(c.ctldLog(t), "panic handling a submission, job accepted unchanged") {
		t.Error("panic not logged")
	}
	// And the next submission is decided as usual.
	if j := c.job(t, c.Sbatch(t, "-H", "--wrap", "true")); token(j) == "" {
		t.Error("plugin stopped working after a panic")
	}
}

// TestReconfigureAndRestart: the plugin keeps working across `scontrol
// reconfigure` (fini + init inside the same process) and a slurmctld restart.
func TestReconfigureAndRestart(t *testing.T) {
	if _, stderr, err := c.Run(t, "scontrol", "reconfigure"); err != nil {
		t.Fatalf("reconfigure: %v %s", err, stderr)
	}
	clustertest.WaitFor(t, 20*time.Second, "slurmctld after reconfigure", func() bool {
		_, _, err := c.Run(t, "scontrol", "ping")
		return err == nil
	})
	if j := c.job(t, c.Sbatch(t, "-H", "--wrap", "true")); token(j) == "" {
		t.Error("not annotated after reconfigure")
	}
	// augur.yaml edits reach the plugin without a restart: it watches the file.
	cfg := filepath.Join(c.Dir, "etc", "augur.yaml")
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(body, []byte("# touched by e2e\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	clustertest.WaitFor(t, 25*time.Second, "the plugin to reload augur.yaml", func() bool {
		return strings.Contains(c.ctldLog(t), "augur.yaml changed; reloading")
	})
	if j := c.job(t, c.Sbatch(t, "-H", "--wrap", "true")); token(j) == "" {
		t.Error("not annotated after a config reload")
	}
	// augurd re-reads it on SIGHUP.
	pid, err := os.ReadFile(filepath.Join(c.Dir, "run", "augurd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := c.Run(t, "kill", "-HUP", strings.TrimSpace(string(pid))); err != nil {
		t.Fatalf("kill -HUP augurd: %v %s", err, stderr)
	}
	clustertest.WaitFor(t, 10*time.Second, "augurd to reload on SIGHUP", func() bool {
		b, _ := os.ReadFile(filepath.Join(c.Dir, "log", "augurd.log"))
		return strings.Contains(string(b), "configuration reloaded")
	})
	if out, err := c.Script("restart-ctld.sh"); err != nil {
		t.Fatalf("restart: %v\n%s", err, out)
	}
	if j := c.job(t, c.Sbatch(t, "-H", "--wrap", "true")); token(j) == "" {
		t.Error("not annotated after a slurmctld restart")
	}
}

// TestSocketPermissions: the socket is root's (the test cluster's SlurmUser)
// and not world-accessible.
func TestSocketPermissions(t *testing.T) {
	fi, err := os.Stat(filepath.Join(c.Dir, "run", "augurd.sock"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o007 != 0 {
		t.Errorf("socket mode %04o lets any user in", fi.Mode().Perm())
	}
}
