package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/slurm-plugin/wire"
	"github.com/google/go-cmp/cmp"
)

// req is a small builder for requests.
type req struct{ r wire.Request }

func newReq(token string) *req {
	return &req{wire.Request{V: wire.Version, Token: token, UserID: 1000, Name: "train",
		Script: "#!/bin/bash\npython train.py --model resnet50 --batch-size 64\n"}}
}
func (b *req) gres(node string) *req { b.r.TRES.PerNode = node; return b }
func (b *req) gpus(job string) *req  { b.r.TRES.PerJob = job; return b }
func (b *req) minutes(m uint32) *req { b.r.TimeLimitMin = m; return b }
func (b *req) obj() *wire.Request    { r := b.r; return &r }

var sitePolicy = Policy{
	GPUTypes:         []GPUType{{"t4", 16384, 0, nil}, {"a100", 81920, 0, nil}},
	RewriteTypeless:  true,
	RejectCertainOOM: true,
	MinRunsToReject:  1,
	SiteFactorMax:    10000,
}

func runs(memMiB, sec float64, n int) []predictor.Outcome {
	out := make([]predictor.Outcome, n)
	for i := range out {
		out[i] = predictor.Outcome{JobID: uint64(100 + i), PeakGPUMemMiB: memMiB, RuntimeSec: sec, ExitState: "COMPLETED"}
	}
	return out
}

func decide(r *wire.Request, hist []predictor.Outcome, pol Policy) Decision {
	return decideOn(r, hist, pol, roomy(pol))
}

func decideOn(r *wire.Request, hist []predictor.Outcome, pol Policy, l *Layout) Decision {
	job, err := JobFromRequest(r, nil)
	return Decide(Input{Request: r, Job: job, GresErr: err, History: hist, Policy: pol,
		Predictor: predictor.NewHistory(1, pol.GPUMemMiB()), Layout: l})
}

// roomy is a cluster where every request of the tests fits: four nodes,
// each with 8 GPUs of every type of pol (and its shards).
func roomy(pol Policy) *Layout {
	l := &Layout{}
	for i := range 4 {
		n := NodeLayout{Name: fmt.Sprintf("n%d", i), GPUs: map[string]int64{}, Shards: map[string]int64{}}
		for _, t := range pol.GPUTypes {
			n.GPUs[t.Name] = 8
			n.Shards[t.Name] = 8 * int64(t.Shards)
		}
		l.Nodes = append(l.Nodes, n)
	}
	return l
}

// Site factors below are 10000 * (1 - ln(1+hi)/ln(1+7 days)) with hi the
// largest run plus 10%: 1800 s -> 4298, 600 s -> 5122, 60 s -> 6842.
func TestDecide(t *testing.T) {
	sf := func(v int64) *int64 { return &v }
	cases := map[string]struct {
		req        *wire.Request
		hist       []predictor.Outcome
		policy     Policy
		action     wire.Action
		tres       *wire.TRES
		siteFactor *int64
		annotation []string // substrings
		message    []string
	}{
		"unseen job: default prediction, nothing changed": {
			req: newReq("t1").gres("gres:gpu:a100:1").minutes(120).obj(), policy: sitePolicy,
			action:     wire.Accept,
			annotation: []string{"augur:tok=t1", "pred_gpu_mem=80G", "pred_time=02:00:00", "src=default/default"},
		},
		"unseen typeless job is not moved on a guess": {
			req: newReq("t2").gres("gres:gpu:2").obj(), policy: sitePolicy,
			action: wire.Accept, annotation: []string{"pred_gpu_mem=unknown", "pred_time=unknown"},
		},
		"typeless job that fits a t4 goes to t4": {
			req: newReq("t3").gres("gres:gpu:2").obj(), hist: runs(10240, 1800, 3), policy: sitePolicy,
			action: wire.Accept, tres: &wire.TRES{PerNode: "gres:gpu:t4:2"}, siteFactor: sf(4298),
			annotation: []string{"gpu_type=t4", "src=history/history", "runs=3", "pred_gpu_mem=10G(p95:10.5G)"},
		},
		"typeless job in 23.11+'s gres/ form keeps the form": {
			req: newReq("t3s").gres("gres/gpu:2").obj(), hist: runs(10240, 1800, 3), policy: sitePolicy,
			action: wire.Accept, tres: &wire.TRES{PerNode: "gres/gpu:t4:2"}, siteFactor: sf(4298),
			annotation: []string{"gpu_type=t4", "src=history/history"},
		},
		"typeless --gpus job too big for t4 goes to a100": {
			req: newReq("t4").gpus("gres:gpu:4").obj(), hist: runs(30000, 1800, 2), policy: sitePolicy,
			action: wire.Accept, tres: &wire.TRES{PerJob: "gres:gpu:a100:4"}, siteFactor: sf(4298),
			annotation: []string{"gpu_type=a100"},
		},
		"rewrite off: typeless stays typeless": {
			req: newReq("t5").gres("gres:gpu:1").obj(), hist: runs(10240, 60, 1),
			policy: Policy{GPUTypes: sitePolicy.GPUTypes},
			action: wire.Accept, annotation: []string{"src=history/history"},
		},
		"certain OOM on t4 is rejected with what to change": {
			req: newReq("t6").gres("gres:gpu:t4:1").obj(), hist: runs(39000, 600, 3), policy: sitePolicy,
			action:  wire.Reject,
			message: []string{"at least 38.1G", "3 earlier runs", "16G of a t4", "--gres=gpu:a100:N"},
		},
		"one run that fit means no certainty": {
			req:    newReq("t7").gres("gres:gpu:t4:1").obj(),
			hist:   append(runs(39000, 600, 2), predictor.Outcome{PeakGPUMemMiB: 12000, ExitState: "COMPLETED", RuntimeSec: 600}),
			policy: sitePolicy, action: wire.Accept, siteFactor: sf(5122),
		},
		"reject off: accepted": {
			req: newReq("t8").gres("gres:gpu:t4:1").obj(), hist: runs(39000, 600, 3),
			policy: Policy{GPUTypes: sitePolicy.GPUTypes}, action: wire.Accept,
		},
		"bigger than every GPU: reject says so": {
			req: newReq("t9").gres("gres:gpu:a100:1").obj(), hist: runs(90000, 600, 1), policy: sitePolicy,
			action: wire.Reject, message: []string{"No GPU type here has that much memory"},
		},
		"unparseable gres: accepted unchanged": {
			req: newReq("t10").gres("gres:gpu:a100:lots").obj(), hist: runs(1000, 60, 1), policy: sitePolicy,
			action: wire.Accept, siteFactor: sf(6842),
		},
		"shard request is the user's choice": {
			req: newReq("t11").gres("gres:shard:2").obj(), hist: runs(1000, 60, 1), policy: sitePolicy,
			action: wire.Accept, siteFactor: sf(6842),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := decide(tc.req, tc.hist, tc.policy)
			if d.Action != tc.action {
				t.Fatalf("action = %s, want %s (notes %v, message %q)", d.Action, tc.action, d.Notes, d.Message)
			}
			if diff := cmp.Diff(tc.tres, d.TRES); diff != "" {
				t.Errorf("TRES (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.siteFactor, d.SiteFactor); diff != "" {
				t.Errorf("SiteFactor (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(d.Annotation, "augur:") {
				t.Errorf("annotation %q does not start with augur:", d.Annotation)
			}
			for _, s := range tc.annotation {
				if !strings.Contains(d.Annotation, s) {
					t.Errorf("annotation %q lacks %q", d.Annotation, s)
				}
			}
			for _, s := range tc.message {
				if !strings.Contains(d.Message, s) {
					t.Errorf("message %q lacks %q", d.Message, s)
				}
			}
			resp := d.Response(tc.req.Token)
			if err := resp.Validate(tc.req.Token); err != nil {
				t.Errorf("response does not validate: %v", err)
			}
		})
	}
}

func TestSiteFactorFallsWithRuntime(t *testing.T) {
	prev := int64(sitePolicy.SiteFactorMax + 1)
	for _, sec := range []float64{1, 60, 600, 3600, 86400, 7 * 86400, 30 * 86400} {
		p := predictor.Prediction{RuntimeSec: predictor.Quantiles{P50: sec, Hi: sec}, RuntimeSource: predictor.SourceHistory}
		got, ok := siteFactor(sitePolicy, p)
		if !ok || got > prev || got < 0 {
			t.Fatalf("runtime %vs: site factor %d (ok %v) after %d", sec, got, ok, prev)
		}
		prev = got
	}
	if prev != 0 {
		t.Errorf("a month-long job gets %d, want 0", prev)
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[float64]string{512: "512M", 1024: "1G", 15565: "15.2G", 81920: "80G", 3 << 20: "3T"} {
		if got := FormatMiB(in); got != want {
			t.Errorf("FormatMiB(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{0: "00:00:00", 59.6: "00:01:00", 3600: "01:00:00", 90061: "1-01:01:01"} {
		if got := FormatSeconds(in); got != want {
			t.Errorf("FormatSeconds(%v) = %q, want %q", in, got, want)
		}
	}
}

// FuzzDecide: any request the wire decoder accepts gets a decision whose
// response validates. Never a panic.
func FuzzDecide(f *testing.F) {
	f.Add("t", "gres:gpu:2", "", "#!/bin/sh\ntrue\n", uint32(60), 10240.0, 600.0)
	f.Add("t", "gres:gpu:t4:1", "gres:gpu:4", "#SBATCH --gres=gpu:1\n", uint32(0), 1e9, -1.0)
	f.Add("t", "\xff", "gres:shard:1k", "", uint32(1<<31), 0.0, 1e300)
	f.Add("t", "gres:gpu:1,gres:nvme:1", "", "#!/bin/sh\n", uint32(10), 3000.0, 200.0)
	f.Fuzz(func(t *testing.T, token, node, job, script string, minutes uint32, mem, sec float64) {
		body := []byte(`{"v":1,"token":` + quote(token) + `}`)
		r, err := wire.DecodeRequest(body)
		if err != nil {
			return
		}
		r.TRES = wire.TRES{PerNode: node, PerJob: job}
		r.Script, r.TimeLimitMin = script, minutes
		hist := []predictor.Outcome{{PeakGPUMemMiB: mem, RuntimeSec: sec, ExitState: "COMPLETED", MeanSMUtil: sec / 10}}
		for _, pol := range []Policy{sitePolicy, shardPolicy} {
			d := decide(r, hist, pol)
			resp := d.Response(r.Token)
			if err := resp.Validate(r.Token); err != nil {
				t.Fatalf("decision does not validate: %v (%+v)", err, resp)
			}
		}
	})
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			continue
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

// BenchmarkDecide is the decision core's throughput: one realistic
// submission with three runs of history, typeless, rewritten to a type.
func BenchmarkDecide(b *testing.B) {
	r := newReq("0123456789abcdef0123456789abcdef").gres("gres:gpu:2").minutes(240).obj()
	r.Script = strings.Repeat("#SBATCH --cpus-per-task=8\n", 10) +
		"module load cuda\nsource ~/venv/bin/activate\ntorchrun --nproc_per_node 2 train.py --model vit_base_patch16_224 --batch-size 128 --epochs 90 --data /datasets/imagenet\n"
	hist := runs(10240, 1800, 3)
	pol := sitePolicy
	pred := predictor.NewHistory(1, pol.GPUMemMiB())
	layout := roomy(pol) // without a layout nothing is rewritten
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			job, err := JobFromRequest(r, nil)
			d := Decide(Input{Request: r, Job: job, GresErr: err, History: hist, Policy: pol, Predictor: pred, Layout: layout})
			if d.TRES == nil {
				b.Fatal("not rewritten")
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

func TestRewriteTyped(t *testing.T) {
	pol := sitePolicy
	pol.RewriteTyped = true
	// Seen at 30 GB: a t4 (16 GB) request moves to a100.
	d := decide(newReq("aa").gres("gres:gpu:t4:2").obj(), runs(30000, 600, 2), pol)
	if d.Action != wire.Accept || d.TRES == nil || d.TRES.PerNode != "gres:gpu:a100:2" {
		t.Fatalf("decision %+v", d)
	}
	// Without the opt-in, the reject rule applies instead.
	if d := decide(newReq("ab").gres("gres:gpu:t4:2").obj(), runs(30000, 600, 2), sitePolicy); d.Action != wire.Reject {
		t.Errorf("without rewrite_typed: %s", d.Action)
	}
	// A type that fits stays.
	if d := decide(newReq("ac").gres("gres:gpu:t4:1").obj(), runs(9000, 600, 2), pol); d.TRES != nil {
		t.Errorf("a fitting type was moved: %+v", d.TRES)
	}
}

// TestNeverTooSmall: whatever the history says, a rewritten request names a
// type at least as large as the predicted upper memory.
func TestNeverTooSmall(t *testing.T) {
	pol := sitePolicy
	pol.RewriteTyped = true
	mem := pol.GPUMemMiB()
	for _, peak := range []float64{1, 500, 15000, 15700, 16000, 16384, 20000, 78000, 81000, 200000} {
		for _, gres := range []string{"gres:gpu:1", "gres:gpu:t4:1", "gres:gpu:a100:1"} {
			d := decide(newReq("ad").gres(gres).obj(), runs(peak, 60, 3), pol)
			if d.TRES == nil {
				continue
			}
			gpus, err := predictor.GPURequests(d.TRES.PerNode, "", "", "")
			if err != nil || len(gpus) != 1 {
				t.Fatalf("%s at %v: rewritten to %q", gres, peak, d.TRES.PerNode)
			}
			if got := mem[gpus[0].Type]; got < d.Prediction.GPUMemMiB.Hi {
				t.Errorf("%s with peak %v MiB placed on %s (%v MiB) below the predicted %v",
					gres, peak, gpus[0].Type, got, d.Prediction.GPUMemMiB.Hi)
			}
		}
	}
}

// TestRewriteFromPrior: a job with no runs and no trained model behind it
// is moved on the shipped prior's upper bound only when the site says so,
// and then onto the first type that holds it.
func TestRewriteFromPrior(t *testing.T) {
	decideCombined := func(r *wire.Request, pol Policy) Decision {
		job, err := JobFromRequest(r, nil)
		return Decide(Input{Request: r, Job: job, GresErr: err, Policy: pol,
			Predictor: predictor.NewCombined(nil, predictor.NewHistory(1, pol.GPUMemMiB())), Layout: roomy(pol)})
	}
	vit := newReq("pa").gres("gres:gpu:1").obj()
	vit.Script = "#!/bin/bash\ntorchrun train.py --model vit_base_patch16_224 --batch-size 128\n"
	small := newReq("pb").gres("gres:gpu:1").obj()
	small.Script = "#!/bin/bash\npython train.py --model resnet18 --batch-size 32 --amp\n"

	d := decideCombined(vit, sitePolicy)
	if d.Prediction.MemSource != predictor.SourcePrior || d.TRES != nil {
		t.Fatalf("without rewrite_from_prior: source %s, rewritten to %+v", d.Prediction.MemSource, d.TRES)
	}
	pol := sitePolicy
	pol.RewriteFromPrior = true
	for _, c := range []struct {
		r    *wire.Request
		want string
	}{{vit, "gres:gpu:a100:1"}, {small, "gres:gpu:t4:1"}} {
		d := decideCombined(c.r, pol)
		if d.TRES == nil || d.TRES.PerNode != c.want {
			t.Errorf("%s: predicted %+v (%s), rewritten to %+v, want %s", c.r.Token, d.Prediction.GPUMemMiB, d.Prediction.MemSource, d.TRES, c.want)
		}
		if !strings.Contains(d.Annotation, "src=prior/") {
			t.Errorf("annotation %q does not name the prior", d.Annotation)
		}
	}
}

// TestTimeHint: a job whose limit is far above the runtime its own runs
// predict is told what --time to ask for, in its annotation and in the
// decision's notes; a limit close to the prediction, an unpredictable
// runtime or no limit gets no hint.
func TestTimeHint(t *testing.T) {
	hist := runs(5000, 1500, 3) // 25 minutes, three times
	for name, tc := range map[string]struct {
		minutes uint32
		hist    []predictor.Outcome
		hint    string
	}{
		"three days for 25 minutes": {minutes: 3 * 24 * 60, hist: hist, hint: " time_hint=00:30:00"},
		"an hour for 25 minutes":    {minutes: 60, hist: hist},
		"no limit":                  {minutes: 0, hist: hist},
		"no runs: not predictable":  {minutes: 3 * 24 * 60},
	} {
		t.Run(name, func(t *testing.T) {
			d := decide(newReq("ab").gres("gres:gpu:t4:1").minutes(tc.minutes).obj(), tc.hist, sitePolicy)
			got := ""
			if i := strings.Index(d.Annotation, " time_hint="); i >= 0 {
				got = d.Annotation[i:]
			}
			if got != tc.hint {
				t.Errorf("annotation %q, want hint %q", d.Annotation, tc.hint)
			}
			if tc.hint != "" && !strings.Contains(strings.Join(d.Notes, ";"), "--time=00:30:00 would let backfill start it sooner") {
				t.Errorf("notes %q", d.Notes)
			}
		})
	}
}

// TestTimeMin: with live.time_min a predictable job's TimeMin is its upper
// predicted runtime to the minute, below its limit, in the response and the
// annotation; a dry run only annotates it; without the opt-in, with no
// limit, a limit at the prediction or no prediction there is none.
func TestTimeMin(t *testing.T) {
	hist := runs(5000, 1500, 3) // 25 minutes, three times: upper 27.5 minutes
	on, dry := sitePolicy, sitePolicy
	on.TimeMin, dry.TimeMinDryRun = true, true
	for name, tc := range map[string]struct {
		minutes uint32
		hist    []predictor.Outcome
		pol     Policy
		want    time.Duration
		note    string
	}{
		"a day for 25 minutes":  {minutes: 24 * 60, hist: hist, pol: on, want: 28 * time.Minute, note: " time_min=00:28:00"},
		"dry run":               {minutes: 24 * 60, hist: hist, pol: dry, note: " time_min=00:28:00(dry_run)"},
		"off":                   {minutes: 24 * 60, hist: hist, pol: sitePolicy},
		"limit at the estimate": {minutes: 25, hist: hist, pol: on},
		"no limit":              {minutes: 0, hist: hist, pol: on},
		"not predictable":       {minutes: 24 * 60, pol: on},
	} {
		t.Run(name, func(t *testing.T) {
			d := decide(newReq("ab").gres("gres:gpu:t4:1").minutes(tc.minutes).obj(), tc.hist, tc.pol)
			got := ""
			if i := strings.Index(d.Annotation, " time_min="); i >= 0 {
				got = d.Annotation[i:]
			}
			if got != tc.note || d.TimeMin != tc.want || d.Response("ab").TimeMinMin != uint32(tc.want/time.Minute) {
				t.Errorf("annotation %q TimeMin %s (response %d min); want %q and %s", d.Annotation, d.TimeMin,
					d.Response("ab").TimeMinMin, tc.note, tc.want)
			}
		})
	}
}

// TestJobFromRequestEnv: the script is read with the arguments and the
// environment its submission carries, through the cache as without it.
func TestJobFromRequestEnv(t *testing.T) {
	r := &wire.Request{V: wire.Version, Token: "ab", ArgsKnown: true, Args: []string{"32"},
		Script: "#!/bin/bash\n#SBATCH --gres=gpu:1\npython train.py --model ${MODEL:-resnet18} --batch_size $1\n",
		Env:    []string{"MODEL=vit_base_patch16_224"}}
	for _, cache := range []*predictor.ScriptCache{nil, predictor.NewScriptCache(4)} {
		job, err := JobFromRequest(r, cache)
		if f := job.Script.Features; err != nil || f.Model != "vit_base_patch16_224" || f.BatchSize != 32 {
			t.Errorf("cache %v: model %q, batch %v, err %v", cache != nil, f.Model, f.BatchSize, err)
		}
	}
}
