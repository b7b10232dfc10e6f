package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/sidecar/config"
	"github.com/augur-hpc/augur/sidecar/core"
	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/augur-hpc/augur/slurm-plugin/shim"
	"github.com/augur-hpc/augur/slurm-plugin/wire"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// jobScript names its config relative to the submission directory and
// gives its batch size on the command line.
const jobScript = "#!/bin/bash\n#SBATCH --gres=gpu:1\n" +
	"torchrun train.py --config configs/run.yaml --per_device_train_batch_size 4\n"

const jobConfig = "model_name_or_path: meta-llama/Llama-2-7b-hf\nbf16: true\nper_device_train_batch_size: 16\n"

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadJobFile(t *testing.T) {
	dir := t.TempDir()
	uid := uint32(os.Getuid())
	own := filepath.Join(dir, "own.yaml")
	writeFile(t, own, jobConfig)
	big := filepath.Join(dir, "big.yaml")
	writeFile(t, big, strings.Repeat("# padding\n", 200))
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		uid        uint32
		want       metrics.JobFileResult
	}{
		{"the user's own file", own, uid, metrics.JobFileRead},
		{"a link to the user's own file", link, uid, metrics.JobFileRead},
		{"another user's file", own, uid + 1, metrics.JobFileRefused},
		{"a link to another user's file", link, uid + 1, metrics.JobFileRefused},
		{"over max bytes", big, uid, metrics.JobFileRefused},
		{"a FIFO, without waiting for a writer", fifo, uid, metrics.JobFileRefused},
		{"a directory", dir, uid, metrics.JobFileRefused},
		{"no such file", filepath.Join(dir, "none.yaml"), uid, metrics.JobFileAbsent},
		{"a file for a directory", filepath.Join(own, "x.yaml"), uid, metrics.JobFileAbsent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, got := readJobFile(tc.path, tc.uid, 1024)
			if got != tc.want || (got == metrics.JobFileRead) != (text == jobConfig) {
				t.Errorf("%s: %q, want %s", got, text, tc.want)
			}
		})
	}
}

func TestJobFilePath(t *testing.T) {
	req := &wire.Request{WorkDir: "/home/ann/sft", Env: []string{"MODEL=x", "HOME=/home/ann"}}
	for p, want := range map[string]string{
		"configs/a.yaml":   "/home/ann/sft/configs/a.yaml",
		"../b/a.yaml":      "/home/ann/b/a.yaml",
		"/scratch/a.yaml":  "/scratch/a.yaml",
		"~/runs/a.yaml":    "/home/ann/runs/a.yaml",
		"/scratch/../a.ya": "/a.ya",
	} {
		if got, ok := jobFilePath(p, req); !ok || got != want {
			t.Errorf("%s: %q %v, want %q", p, got, ok, want)
		}
	}
	for _, r := range []*wire.Request{{}, {WorkDir: "relative"}} {
		if got, ok := jobFilePath("configs/a.yaml", r); ok {
			t.Errorf("work dir %q: %q, want none", r.WorkDir, got)
		}
	}
	if got, ok := jobFilePath("~/a.yaml", &wire.Request{WorkDir: "/w"}); ok {
		t.Errorf("without HOME: %q, want none", got)
	}
}

// jobRequest is jobScript submitted from dir by the test's own user.
func jobRequest(token, dir string) *wire.Request {
	r := request(token, "gres:gpu:1")
	r.Script, r.WorkDir, r.UserID = jobScript, dir, uint32(os.Getuid())
	return r
}

func storedFeatures(t *testing.T, st *store.Store, token string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		sub, err := st.Submission(context.Background(), token)
		if err == nil {
			return string(sub.Features) + " " + string(sub.Request)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not recorded: %v", token, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHandleReadsJobFiles: with predictor.job_files on, the config the
// script names is read from the submission directory, what it sets is the
// job's (the command line's batch size winning over the file's), and the
// stored request keeps the file, so that training reads the job as it was
// decided. Off, nothing is read, and files a caller sends are dropped.
func TestHandleReadsJobFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "configs/run.yaml"), jobConfig)
	writeFile(t, filepath.Join(dir, "train.py"), "import torch\nimport argparse\n\np = argparse.ArgumentParser()\n"+
		"p.add_argument(\"--max_seq_length\", type=int,\n    default=4096)\nargs = p.parse_args()\nsecret = open('/etc/motd').read()\n")
	ctx := context.Background()

	cfg := testConfig(t)
	roomyJobFiles(cfg)
	svc, st, m := newService(t, cfg)
	handle(svc, ctx, jobRequest("f1", dir))
	got := storedFeatures(t, st, "f1")
	for _, want := range []string{`"model":"meta-llama/llama-2-7b-hf"`, `"precision":"bf16"`, `"batch_size":4`,
		`"seq_len":4096`, `"files":{"configs/run.yaml":"model_name_or_path`,
		`"train.py":".add_argument(\"--max_seq_length\", type=int, default=4096)\n"`} {
		if !strings.Contains(got, want) {
			t.Errorf("stored %s\nwant %s", got, want)
		}
	}
	if strings.Contains(got, "import torch") || strings.Contains(got, "motd") {
		t.Errorf("the program's code was kept, not only its options: %s", got)
	}
	if n := testutil.ToFloat64(m.JobFiles.WithLabelValues(string(metrics.JobFileRead))); n != 2 {
		t.Errorf("augur_job_files_total{result=read} = %v, want 2", n)
	}
	other := jobRequest("f2", dir)
	other.UserID++
	handle(svc, ctx, other)
	if got := storedFeatures(t, st, "f2"); strings.Contains(got, "llama") {
		t.Errorf("another user's job read the file: %s", got)
	}

	cfg = testConfig(t)
	svc, st, m = newService(t, cfg)
	sent := jobRequest("f3", dir)
	sent.Files = map[string]string{"configs/run.yaml": jobConfig}
	handle(svc, ctx, sent)
	if got := storedFeatures(t, st, "f3"); strings.Contains(got, "llama") {
		t.Errorf("job_files off, yet read: %s", got)
	}
	if n := testutil.ToFloat64(m.JobFiles.WithLabelValues(string(metrics.JobFileRead))); n != 0 {
		t.Errorf("job_files off, yet %v files read", n)
	}
}

// TestJobFilesHungDisk: a read that never returns costs the decision its
// file after the budget, never its answer; once jobFileSlots reads hang,
// later submissions do not even start one.
func TestJobFilesHungDisk(t *testing.T) {
	cfg := testConfig(t)
	cfg.Predictor.JobFiles.Enabled = true
	cfg.Predictor.JobFiles.Budget = 5 * time.Millisecond
	svc, _, m := newService(t, cfg)
	hung := make(chan struct{})
	defer close(hung)
	svc.readFile = func(string, uint32, int64) (string, metrics.JobFileResult) {
		<-hung
		return jobConfig, metrics.JobFileRead
	}
	ctx := context.Background()
	dir := t.TempDir()
	for i := range jobFileSlots + 3 {
		start := time.Now()
		resp := handle(svc, ctx, jobRequest("h"+string(rune('a'+i)), dir))
		if resp.Action != wire.Accept || time.Since(start) > 2*time.Second {
			t.Fatalf("submission %d: %+v after %v", i, resp, time.Since(start))
		}
	}
	// Each submission wants its config and its program.
	named := len(predictor.ParseScript(jobScript).Files)
	late := testutil.ToFloat64(m.JobFiles.WithLabelValues(string(metrics.JobFileLate)))
	busy := testutil.ToFloat64(m.JobFiles.WithLabelValues(string(metrics.JobFileBusy)))
	if wantBusy := named*(jobFileSlots+3) - jobFileSlots; named != 2 || late != jobFileSlots || busy != float64(wantBusy) {
		t.Errorf("%d files a submission, late %v, busy %v; want 2, %d, %d", named, late, busy, jobFileSlots, wantBusy)
	}
}

// TestJobFilesPanic: a read that panics costs the decision that file
// (counted as failed), never augurd.
func TestJobFilesPanic(t *testing.T) {
	cfg := testConfig(t)
	roomyJobFiles(cfg)
	svc, _, m := newService(t, cfg)
	svc.readFile = func(string, uint32, int64) (string, metrics.JobFileResult) { panic("a broken disk") }
	if resp := handle(svc, context.Background(), jobRequest("p1", t.TempDir())); resp.Action != wire.Accept {
		t.Fatalf("response %+v", resp)
	}
	if n := testutil.ToFloat64(m.JobFiles.WithLabelValues(string(metrics.JobFileFailed))); n != 2 {
		t.Errorf("augur_job_files_total{result=failed} = %v, want 2", n)
	}
}

// BenchmarkHandleJobFiles is BenchmarkHandle's decision path for a script
// that names a config and a program, with predictor.job_files off (the
// default) and on (both read from a local disk per submission).
func BenchmarkHandleJobFiles(b *testing.B) {
	dir := b.TempDir()
	writeFile(b, filepath.Join(dir, "configs/run.yaml"), jobConfig)
	writeFile(b, filepath.Join(dir, "train.py"),
		"import argparse\np = argparse.ArgumentParser()\np.add_argument('--max_seq_length', type=int, default=4096)\n")
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			cfg := testConfig(b)
			cfg.Predictor.JobFiles.Enabled = on
			svc, _, m := newService(b, cfg)
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					handle(svc, context.Background(), jobRequest(shim.NewToken(), dir))
				}
			})
			if read := testutil.ToFloat64(m.JobFiles.WithLabelValues(string(metrics.JobFileRead))); on && read == 0 {
				b.Fatal("no file read")
			}
		})
	}
}

// TestJobFilesReadOnce: with job_files on, a submission is still one
// lookup of its script where it names no file or none is read, and two
// (without files, then with them) where files were read.
func TestJobFilesReadOnce(t *testing.T) {
	cfg := testConfig(t)
	roomyJobFiles(cfg)
	svc, _, _ := newService(t, cfg)
	ctx := context.Background()
	lookups := func() uint64 { h, m := svc.scripts.Stats(); return h + m }
	dir := t.TempDir()
	for _, tc := range []struct {
		r    *wire.Request
		want uint64
	}{
		{request("o1", "gres:gpu:1"), 1},
		{jobRequest("o2", dir), 1},
	} {
		before := lookups()
		handle(svc, ctx, tc.r)
		if got := lookups() - before; got != tc.want {
			t.Errorf("%s: %d lookups, want %d", tc.r.Token, got, tc.want)
		}
	}
	writeFile(t, filepath.Join(dir, "configs/run.yaml"), jobConfig)
	before := lookups()
	handle(svc, ctx, jobRequest("o3", dir))
	if got := lookups() - before; got != 2 {
		t.Errorf("with a file read: %d lookups, want 2", got)
	}
}

// TestHandleReadsHydraConfig: a Hydra application's config is read in
// rounds (its program, the primary config the program declares, the
// experiment the command line chooses, the model group the experiment
// overrides), all kept with the request; the rounds stop where the
// budget does, and the decision is made with what was read by then.
func TestHandleReadsHydraConfig(t *testing.T) {
	dir := t.TempDir()
	disk := map[string]string{
		"src/train.py":                  "import hydra\n\n@hydra.main(version_base=None, config_path=\"../configs\", config_name=\"train\")\ndef main(cfg):\n    pass\n",
		"configs/train.yaml":            "defaults:\n  - model: mlp\n  - data: mnist\n  - experiment: null\n",
		"configs/experiment/vit.yaml":   "# @package _global_\ndefaults:\n  - override /model: vit_b16\ndata:\n  batch_size: 96\n",
		"configs/model/vit_b16.yaml":    "patch_size: 16\n",
		"configs/data/mnist.yaml":       "batch_size: 512\n",
		"configs/model/mlp.yaml":        "hidden: 64\n",
		"configs/trainer/default.yaml":  "precision: 16\n",
		"configs/experiment/other.yaml": "model: x\n",
	}
	for p, text := range disk {
		writeFile(t, filepath.Join(dir, p), text)
	}
	req := func(token string) *wire.Request {
		r := jobRequest(token, dir)
		r.Script = "#!/bin/bash\n#SBATCH --gres=gpu:2\nsrun python src/train.py experiment=vit\n"
		return r
	}
	cfg := testConfig(t)
	roomyJobFiles(cfg)
	svc, st, _ := newService(t, cfg)
	handle(svc, context.Background(), req("a1"))
	got := storedFeatures(t, st, "a1")
	for _, want := range []string{`"model":"vit_b16"`, `"batch_size":96`, `"configs/model/vit_b16.yaml":"patch_size: 16\n"`,
		`"src/train.py":"@hydra.main(version_base=None, config_path=\"../configs\", config_name=\"train\")\n"`} {
		if !strings.Contains(got, want) {
			t.Errorf("stored %s\nwant %s", got, want)
		}
	}
	for _, not := range []string{"configs/model/mlp.yaml", "configs/trainer/default.yaml", "configs/experiment/other.yaml"} {
		if strings.Contains(got, not) {
			t.Errorf("%s read: nothing chose it", not)
		}
	}

	// A disk slow enough that the budget ends within the second round:
	// the decision has the program and not the rest.
	cfg = testConfig(t)
	cfg.Predictor.JobFiles.Enabled = true
	cfg.Predictor.JobFiles.Budget = 40 * time.Millisecond
	svc, st, _ = newService(t, cfg)
	var reads atomic.Int32
	svc.readFile = func(path string, uid uint32, max int64) (string, metrics.JobFileResult) {
		if reads.Add(1) > 1 {
			time.Sleep(80 * time.Millisecond)
		}
		return readJobFile(path, uid, max)
	}
	start := time.Now()
	handle(svc, context.Background(), req("a2"))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("decided after %v", d)
	}
	got = storedFeatures(t, st, "a2")
	if !strings.Contains(got, `"src/train.py"`) || strings.Contains(got, "vit_b16") {
		t.Errorf("stored %s\nwant the program read, and no round after the budget", got)
	}
}

// TestHandleReadsSourcedFile: a shell file the script sources is read as
// its configs are, and what it sets is the job's; the request keeps it
// without its comments and secrets, and a stored request read again gives
// the features decided. One that does not parse is not kept.
func TestHandleReadsSourcedFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "scripts/env.sh"), "# cluster setup\nexport HF_TOKEN=hf_SeCrEt\n"+
		"export MODEL=Qwen/Qwen2.5-7B-Instruct\nwandb login SeCrEt2\n")
	writeFile(t, filepath.Join(dir, "broken.sh"), "if then (( fi\n")
	req := func(token, script string) *wire.Request {
		r := jobRequest(token, dir)
		r.Script = "#!/bin/bash\n#SBATCH --gres=gpu:1\n" + script
		return r
	}
	cfg := testConfig(t)
	roomyJobFiles(cfg)
	svc, st, m := newService(t, cfg)
	handle(svc, context.Background(), req("e1", "source scripts/env.sh\npython train.py --model_name_or_path $MODEL --per_device_train_batch_size ${BS:-8}\n"))
	got := storedFeatures(t, st, "e1")
	for _, want := range []string{`"model":"qwen/qwen2.5-7b-instruct"`, `"batch_size":8`, `"scripts/env.sh":"export HF_TOKEN=\n`} {
		if !strings.Contains(got, want) {
			t.Errorf("stored %s\nwant %s", got, want)
		}
	}
	if strings.Contains(got, "SeCrEt") || strings.Contains(got, "cluster setup") {
		t.Errorf("a secret or comment kept: %s", got)
	}
	sub, err := st.Submission(context.Background(), "e1")
	if err != nil {
		t.Fatal(err)
	}
	var stored wire.Request
	if err := json.Unmarshal(sub.Request, &stored); err != nil {
		t.Fatal(err)
	}
	stored.Script = sub.Script // kept beside the request
	if job, _ := core.JobFromRequest(&stored, predictor.NewScriptCache(4)); job.Script.Features.Model != "qwen/qwen2.5-7b-instruct" {
		t.Errorf("the stored request reads model %q", job.Script.Features.Model)
	}

	handle(svc, context.Background(), req("e2", "source broken.sh\npython train.py --per_device_train_batch_size ${BS:-8}\n"))
	if got := storedFeatures(t, st, "e2"); strings.Contains(got, "broken.sh\":") || strings.Contains(got, `"batch_size":8`) {
		t.Errorf("an unparsed file kept or read: %s", got)
	}
	if n := testutil.ToFloat64(m.JobFiles.WithLabelValues(string(metrics.JobFileUnparsed))); n != 1 {
		t.Errorf("augur_job_files_total{result=unparsed} = %v, want 1", n)
	}
}

// roomyJobFiles turns job_files on with a budget no load on the test
// machine reaches, for the tests of what is read rather than when: the
// default 10 ms ran out on a loaded 2-core CI machine under -race before
// a Hydra job's third round.
func roomyJobFiles(cfg *config.Config) {
	cfg.Predictor.JobFiles.Enabled = true
	cfg.Shim.Timeout = 5 * time.Second
	cfg.Predictor.JobFiles.Budget = 2 * time.Second
}
