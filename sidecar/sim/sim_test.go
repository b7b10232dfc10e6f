package sim

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/augur-hpc/augur/internal/shareddata"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/sidecar/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// jobs builds simulated jobs from (submit, work, gpus) triples.
func jobs(spec ...[3]float64) []Job {
	var out []Job
	for i, s := range spec {
		out = append(out, Job{ID: int64(i + 1), Submit: s[0], Work: s[1], GPUs: int(s[2])})
	}
	return out
}

func TestRunKnownAnswers(t *testing.T) {
	one, _ := NewCluster(1, 1, nil, nil)
	two, _ := NewCluster(1, 2, nil, nil)
	cases := map[string]struct {
		policy      string
		cluster     Cluster
		restart     float64
		jobs        []Job
		wantJCTs    []float64
		wantPreempt int
	}{
		"fifo runs in order": {
			policy: policy.FIFOName, cluster: one,
			jobs:     jobs([3]float64{0, 100, 1}, [3]float64{1, 10, 1}),
			wantJCTs: []float64{100, 109},
		},
		"srtf preempts the long job, no restart cost": {
			policy: policy.SRTFOracleName, cluster: one,
			jobs:     jobs([3]float64{0, 100, 1}, [3]float64{1, 10, 1}),
			wantJCTs: []float64{10, 110}, wantPreempt: 1,
		},
		"srtf with a restart cost": {
			policy: policy.SRTFOracleName, cluster: one, restart: 60,
			jobs:     jobs([3]float64{0, 100, 1}, [3]float64{1, 10, 1}),
			wantJCTs: []float64{10, 170}, wantPreempt: 1,
		},
		"sjf never preempts, then takes the shortest": {
			policy: policy.SJFOracleName, cluster: one,
			jobs:     jobs([3]float64{0, 100, 1}, [3]float64{1, 50, 1}, [3]float64{2, 10, 1}),
			wantJCTs: []float64{100, 108, 159},
		},
		"two GPUs in parallel": {
			policy: policy.FIFOName, cluster: two,
			jobs:     jobs([3]float64{0, 100, 1}, [3]float64{0, 100, 1}, [3]float64{0, 50, 2}),
			wantJCTs: []float64{100, 100, 150},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p, _ := policy.ByName(c.policy, policy.Params{RestartCost: c.restart})
			res, err := Run(Config{Cluster: c.cluster, RestartCost: c.restart}, p, c.jobs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.wantJCTs, res.JCTs); diff != "" {
				t.Errorf("JCTs (-want +got):\n%s", diff)
			}
			if res.Preemptions != c.wantPreempt {
				t.Errorf("preemptions = %d, want %d", res.Preemptions, c.wantPreempt)
			}
		})
	}
}

// TestOOMAndTypes: a job that cannot run on K80 fails there when placement
// is type-blind and is requeued away from it; type-aware placement never
// tries it, and puts it on the faster type.
func TestOOMAndTypes(t *testing.T) {
	c, err := NewCluster(0, 1, []policy.GPUType{{Name: "k80", MemMiB: 11441}, {Name: "v100", MemMiB: 16160}}, []int{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	mk := func() []Job {
		return []Job{
			{ID: 1, Submit: 0, Work: 100, GPUs: 1, Rate: []float64{0, 1}, MemMiB: EstimateMemMiB("ResNet-50 (batch size 128)"), Runtime: predictor.Quantiles{P50: 100, Hi: 100}},
			{ID: 2, Submit: 1, Work: 100, GPUs: 1, Rate: []float64{0.5, 1}, Runtime: predictor.Quantiles{P50: 100, Hi: 100}},
		}
	}
	for _, blind := range []bool{true, false} {
		p, _ := policy.ByName(policy.FIFOName, policy.Params{TypeBlind: blind})
		res, err := Run(Config{Cluster: c, OOMAfter: 60}, p, mk())
		if err != nil {
			t.Fatal(err)
		}
		wantOOM := 0
		if blind {
			wantOOM = 1
		}
		if res.OOMFailures != wantOOM {
			t.Errorf("blind=%v: OOM failures %d, want %d", blind, res.OOMFailures, wantOOM)
		}
		want := []float64{100, 200} // aware: job 1 on v100 (100 s), job 2 on k80 (200 s)
		if blind {
			want = []float64{100, 201} // job 1 fails on k80, waits for job 2 to leave the v100
		}
		if diff := cmp.Diff(want, res.JCTs); diff != "" {
			t.Errorf("blind=%v: JCTs (-want +got):\n%s", blind, diff)
		}
	}
}

// TestMigration: a short job arriving takes the fast type and the long job
// moves to the slow one, then back when the fast one frees up; each move is a
// preemption with its restart cost.
func TestMigration(t *testing.T) {
	c, err := NewCluster(0, 1, []policy.GPUType{{Name: "k80", MemMiB: 11441}, {Name: "v100", MemMiB: 16160}}, []int{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	js := []Job{
		{ID: 1, Submit: 0, Work: 1000, GPUs: 1, Rate: []float64{0.5, 1}},
		{ID: 2, Submit: 1, Work: 100, GPUs: 1, Rate: []float64{0.1, 1}},
	}
	p, _ := policy.ByName(policy.SRTFOracleName, policy.Params{RestartCost: 60, MigrateGain: 0.1})
	res, err := Run(Config{Cluster: c, RestartCost: 60}, p, js)
	if err != nil {
		t.Fatal(err)
	}
	// Job 1: 1 s on the v100, 100 s on the k80 (60 lost, 40 x 0.5 done),
	// then 60 s lost and 979 s on the v100 again.
	if diff := cmp.Diff([]float64{100, 1140}, res.JCTs); diff != "" {
		t.Errorf("JCTs (-want +got):\n%s", diff)
	}
	if res.Preemptions != 2 || res.Migrations != 2 {
		t.Errorf("preemptions %d, migrations %d; want 2 and 2", res.Preemptions, res.Migrations)
	}
}

// TestMLFQStickyQueues: remembering queues cuts the preemptions that jobs
// flipping across a queue boundary cause.
func TestMLFQStickyQueues(t *testing.T) {
	c, _ := NewCluster(2, 4, nil, nil)
	var js []Job
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 400 {
		js = append(js, Job{ID: int64(i + 1), Submit: float64(i) * 40, GPUs: 1 << rng.IntN(3), Work: math.Exp(4 + 4*rng.Float64())})
	}
	Noise(js, 0.5, 1)
	preempts := map[float64]int{}
	for _, sticky := range []float64{0, 0.5} {
		p := policy.NewMLFQBorda(policy.DefaultParams())
		p.Sticky = sticky
		res, err := Run(Config{Cluster: c, RestartCost: 60}, p, append([]Job(nil), js...))
		if err != nil {
			t.Fatal(err)
		}
		preempts[sticky] = res.Preemptions
	}
	t.Logf("preemptions: %v", preempts)
	if preempts[0.5] >= preempts[0] {
		t.Errorf("sticky queues preempt %d times, non-sticky %d", preempts[0.5], preempts[0])
	}
}

func TestNoiseIsSeeded(t *testing.T) {
	a, b := jobs([3]float64{0, 100, 1}, [3]float64{0, 200, 1}), jobs([3]float64{0, 100, 1}, [3]float64{0, 200, 1})
	Noise(a, 0.5, 3)
	Noise(b, 0.5, 3)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different predictions:\n%s", diff)
	}
	Noise(b, 0, 3)
	if b[0].Runtime.P50 != 100 || b[1].Runtime.Hi != 200 {
		t.Errorf("sigma 0 must predict exactly: %+v", b)
	}
}

// TestHistoryPredictor: predictions come only from jobs that finished
// before the submission.
func TestHistoryPredictor(t *testing.T) {
	c, _ := NewCluster(1, 1, nil, nil)
	js := jobs([3]float64{0, 100, 1}, [3]float64{10, 100, 1}, [3]float64{200, 100, 1})
	var seen []predictor.Quantiles
	pr := recordingPredictor{inner: predictor.NewHistory(1, nil), seen: &seen}
	p, _ := policy.ByName(policy.AugurName, policy.DefaultParams())
	if _, err := Run(Config{Cluster: c, Predictor: pr}, p, js); err != nil {
		t.Fatal(err)
	}
	want := []predictor.Quantiles{{}, {}, {P50: 100, Hi: 110}}
	if diff := cmp.Diff(want, seen, cmpopts.EquateApprox(1e-9, 0)); diff != "" {
		t.Errorf("predictions (-want +got):\n%s", diff)
	}
}

type recordingPredictor struct {
	inner predictor.Predictor
	seen  *[]predictor.Quantiles
}

func (r recordingPredictor) Name() string { return "recording" }
func (r recordingPredictor) Predict(j predictor.Job, h []predictor.Outcome) predictor.Prediction {
	p := r.inner.Predict(j, h)
	*r.seen = append(*r.seen, p.RuntimeSec)
	return p
}

// TestMemoryEstimate reports the analytic estimate's error against measured
// peaks (evaluation only; the data stays in shared/).
func TestMemoryEstimate(t *testing.T) {
	f, err := os.Open(shareddata.Path(t, "memory", "timm-peak-memory.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sumErr, n := 0.0, 0
	for sc.Scan() {
		r := strings.Split(sc.Text(), ",")
		if len(r) != 3 || r[0] != "resnet50" {
			continue
		}
		b, _ := strconv.Atoi(r[1])
		peak, _ := strconv.ParseFloat(r[2], 64)
		est := EstimateMemMiB("ResNet-50 (batch size " + r[1] + ")")
		rel := math.Abs(est.P50-peak) / peak
		t.Logf("resnet50 batch %d: measured %.0f MiB, estimated %.0f (upper %.0f)", b, peak, est.P50, est.Hi)
		sumErr += rel
		n++
	}
	if n > 0 {
		t.Logf("mean relative error %.0f%% over %d rows", 100*sumErr/float64(n), n)
	}
}

func TestWriteCDF(t *testing.T) {
	var b strings.Builder
	if err := WriteCDF(&b, []Result{{Policy: "a<b", JCTs: []float64{1, 10, 100}}}); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.HasPrefix(s, "<svg") || !strings.Contains(s, "a&lt;b") || !strings.Contains(s, "<polyline") {
		t.Errorf("svg:\n%s", s)
	}
}

// TestUserLimits: users' limits are at least the work, whole hours, at most
// the cap unless the job ran longer, and the same for a seed.
func TestUserLimits(t *testing.T) {
	js := jobs([3]float64{0, 100, 1}, [3]float64{0, 5000, 1}, [3]float64{0, 20 * 86400, 1})
	UserLimits(js, 10, 7*86400, 3)
	again := jobs([3]float64{0, 100, 1}, [3]float64{0, 5000, 1}, [3]float64{0, 20 * 86400, 1})
	UserLimits(again, 10, 7*86400, 3)
	for i, j := range js {
		if j.Limit < j.Work || (j.Limit != j.Work && math.Mod(j.Limit, 3600) != 0) || j.Limit > math.Max(7*86400, j.Work) || j.Limit != again[i].Limit {
			t.Errorf("job %d: work %v limit %v (again %v)", j.ID, j.Work, j.Limit, again[i].Limit)
		}
	}
}

// TestAugurLimits: with LimitsAugur a predictable job's estimate is its
// limit lowered to the time hint, and a job that runs past it is counted.
func TestAugurLimits(t *testing.T) {
	c, _ := NewCluster(1, 2, nil, nil)
	js := jobs([3]float64{0, 10000, 1}, [3]float64{0, 1000, 1})
	for i := range js {
		js[i].Limit, js[i].Runtime, js[i].Predictable = 36000, predictor.Quantiles{P50: 3000, Hi: 3600}, true
	}
	p, _ := policy.ByName("fifo", policy.DefaultParams())
	r, err := Run(Config{Cluster: c, Limits: LimitsAugur}, p, js)
	if err != nil || r.LimitMisses != 1 || r.Policy != "fifo (augur limits)" {
		t.Errorf("result %+v, %v; want 1 limit miss (the 10000 s job lowered to 3600 s)", r.LimitMisses, err)
	}
	p, _ = policy.ByName("fifo", policy.DefaultParams())
	if r, _ := Run(Config{Cluster: c, Limits: LimitsUser}, p, js); r.LimitMisses != 0 || r.Policy != "fifo (user limits)" {
		t.Errorf("user limits: %+v", r)
	}
}

// TestTimeMin: with LimitsTimeMin a job whose own limit would cross the
// head's reservation starts before it on a cut limit, down to its upper
// prediction (Slurm's TimeMin), and ends early; one that runs past its cut
// limit is killed there, its work lost, and runs again on its own limit.
func TestTimeMin(t *testing.T) {
	c, _ := NewCluster(1, 2, nil, nil)
	mk := func(work3 float64) []Job {
		js := jobs([3]float64{0, 1000, 1}, [3]float64{1, 100, 2}, [3]float64{2, work3, 1})
		js[0].Limit, js[1].Limit, js[2].Limit = 1000, 100, 36000
		js[2].Runtime, js[2].Predictable = predictor.Quantiles{P50: 300, Hi: 400}, true
		return js
	}
	run := func(limits string, work3 float64) Result {
		t.Helper()
		p, _ := policy.ByName("fifo", policy.DefaultParams())
		r, err := Run(Config{Cluster: c, Limits: limits}, p, mk(work3))
		if err != nil || len(r.JCTs) != 3 {
			t.Fatalf("%s: %+v, %v", limits, r, err)
		}
		return r
	}
	// Job 3 (300 s, limit 10 h) waits behind the 2-GPU head on its own
	// limit (JCT 1398 s); TimeMin 400 s fits before the reservation at
	// 1000 s: it starts at 2 and is done at 302.
	user, tm := run(LimitsUser, 300), run(LimitsTimeMin, 300)
	if !cmp.Equal(user.JCTs, []float64{1000, 1099, 1398}) || !cmp.Equal(tm.JCTs, []float64{300, 1000, 1099}) ||
		tm.TimeMinStarts != 1 || tm.LimitMisses != 0 || tm.Policy != "fifo (user limits, augur time_min)" {
		t.Errorf("user limits %v, time_min %v (%d cut starts, %d killed)", user.JCTs, tm.JCTs, tm.TimeMinStarts, tm.LimitMisses)
	}
	// Job 3 really takes 1200 s: killed at its cut limit (1000 s), it runs
	// again after the head, as late as without TimeMin, with 998 GPU-seconds lost.
	user, tm = run(LimitsUser, 1200), run(LimitsTimeMin, 1200)
	if tm.LimitMisses != 1 || !cmp.Equal(tm.JCTs, user.JCTs) || !(tm.Utilization > user.Utilization) {
		t.Errorf("killed run: user %v util %.3f, time_min %v util %.3f, %d killed", user.JCTs, user.Utilization, tm.JCTs, tm.Utilization, tm.LimitMisses)
	}
}
