package policy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/augur-hpc/augur/predictor"
	"github.com/google/go-cmp/cmp"
)

// jb builds a Job for tests: jb(1).gpus(2).at(10).pred(100, 150).Obj().
type jb struct{ j Job }

func newJob(id int64) *jb         { return &jb{Job{ID: id, GPUs: 1}} }
func (b *jb) gpus(n int) *jb      { b.j.GPUs = n; return b }
func (b *jb) at(t float64) *jb    { b.j.Submit = t; return b }
func (b *jb) truth(s float64) *jb { b.j.True = s; return b }
func (b *jb) pred(p50, hi float64) *jb {
	b.j.Runtime = predictor.Quantiles{P50: p50, Hi: hi}
	b.j.Predictable = true
	return b
}
func (b *jb) mem(mib float64) *jb            { b.j.MemMiB = predictor.Quantiles{P50: mib, Hi: mib}; return b }
func (b *jb) rate(r ...float64) *jb          { b.j.Rate = r; return b }
func (b *jb) done(d float64) *jb             { b.j.Done, b.j.Attained = d, d; return b }
func (b *jb) preempted(n int, t float64) *jb { b.j.Preemptions, b.j.Requeued = n, t; return b }

// on makes the job run since t on node n (of type typ).
func (b *jb) on(n, typ int, t float64) *jb {
	b.j.Running, b.j.Started = true, t
	b.j.Placement = Placement{Type: typ, Shares: []Share{{n, b.j.GPUs}}}
	return b
}
func (b *jb) Obj() *Job { j := b.j; return &j }

// cluster builds a snapshot of nodes (type index per node, gpus each) with
// the running jobs' GPUs taken.
func cluster(now float64, gpus int, nodeTypes []int, types []GPUType, running, pending []*Job) *Snapshot {
	if types == nil {
		types = []GPUType{{Name: "gpu"}}
	}
	s := &Snapshot{Now: now, Types: types, Running: running, Pending: pending}
	for i, t := range nodeTypes {
		s.Nodes = append(s.Nodes, Node{Name: "n" + string(rune('0'+i)), Type: t, Total: gpus, Free: gpus})
	}
	for _, j := range running {
		for _, sh := range j.Placement.Shares {
			s.Nodes[sh.Node].Free -= sh.GPUs
		}
	}
	return s
}

func ids(p Plan) (starts []int64, preempts []int64) {
	for _, s := range p.Start {
		starts = append(starts, s.ID)
	}
	for _, v := range p.Preempt {
		preempts = append(preempts, v.ID)
	}
	return
}

func TestSchedule(t *testing.T) {
	type want struct {
		Order, Start, Preempt []int64
		Wake                  float64
	}
	noGuards := Params{Seed: 1}
	cases := map[string]struct {
		policy string
		params Params
		snap   *Snapshot
		want   want
	}{
		"fifo starts in order while jobs fit": {
			policy: FIFOName, params: noGuards,
			snap: cluster(0, 4, []int{0}, nil, nil, []*Job{newJob(1).gpus(2).Obj(), newJob(2).gpus(2).at(1).Obj(), newJob(3).at(2).Obj()}),
			want: want{Order: []int64{1, 2, 3}, Start: []int64{1, 2}},
		},
		"fifo backfills a job that ends before the head's reservation, not one that would delay it": {
			policy: FIFOName, params: noGuards,
			snap: cluster(0, 4, []int{0, 0}, nil,
				[]*Job{newJob(9).gpus(4).pred(100, 100).on(0, 0, 0).Obj()},
				[]*Job{newJob(1).gpus(8).at(1).Obj(), newJob(2).gpus(2).at(2).pred(500, 500).Obj(), newJob(3).gpus(2).at(3).pred(50, 50).Obj()}),
			want: want{Order: []int64{1, 2, 3}, Start: []int64{3}},
		},
		"sjf-oracle starts the shortest first, never preempts": {
			policy: SJFOracleName, params: noGuards,
			snap: cluster(0, 1, []int{0}, nil, []*Job{newJob(9).truth(1000).on(0, 0, 0).Obj()},
				[]*Job{newJob(1).truth(50).Obj(), newJob(2).truth(5).at(1).Obj()}),
			want: want{Order: []int64{2, 1}},
		},
		"srtf-oracle preempts a longer running job": {
			policy: SRTFOracleName, params: noGuards,
			snap: cluster(10, 1, []int{0}, nil, []*Job{newJob(9).truth(1000).done(10).on(0, 0, 0).Obj()},
				[]*Job{newJob(1).truth(5).at(10).Obj()}),
			want: want{Order: []int64{1}, Start: []int64{1}, Preempt: []int64{9}},
		},
		"min-run guard holds a preemption and asks to be woken": {
			policy: SRTFOracleName, params: Params{MinRun: 100},
			snap: cluster(10, 1, []int{0}, nil, []*Job{newJob(9).truth(1000).done(10).on(0, 0, 0).Obj()},
				[]*Job{newJob(1).truth(5).at(10).Obj()}),
			want: want{Order: []int64{1}, Wake: 100},
		},
		"preemption cap protects a job": {
			policy: SRTFOracleName, params: Params{MaxPreemptions: 2},
			snap: cluster(10, 1, []int{0}, nil, []*Job{newJob(9).truth(1000).done(10).preempted(2, 5).on(0, 0, 6).Obj()},
				[]*Job{newJob(1).truth(5).at(10).Obj()}),
			want: want{Order: []int64{1}},
		},
		"tiresias: a fresh job preempts one demoted past the first threshold": {
			policy: TiresiasName, params: noGuards,
			snap: cluster(4000, 1, []int{0}, nil, []*Job{newJob(9).done(4000).on(0, 0, 0).Obj()},
				[]*Job{newJob(1).at(3999).Obj()}),
			want: want{Order: []int64{1}, Start: []int64{1}, Preempt: []int64{9}, Wake: 7200},
		},
		"tiresias: a running job in the first queue is not preempted by a later one": {
			policy: TiresiasName, params: noGuards,
			snap: cluster(100, 1, []int{0}, nil, []*Job{newJob(9).done(100).on(0, 0, 0).Obj()},
				[]*Job{newJob(1).at(50).Obj()}),
			want: want{Order: []int64{1}, Wake: 3250},
		},
		"hrrn: a long wait overtakes a running job by the hysteresis": {
			policy: HRRNName, params: noGuards,
			snap: cluster(1000, 1, []int{0}, nil, []*Job{newJob(9).pred(1000, 1000).done(900).on(0, 0, 100).Obj()},
				[]*Job{newJob(1).pred(100, 100).Obj()}),
			want: want{Order: []int64{1}, Start: []int64{1}, Preempt: []int64{9}},
		},
		"augur: a job past its prediction yields to a confident short one": {
			policy: AugurName, params: noGuards,
			snap: cluster(5000, 1, []int{0}, nil, []*Job{newJob(9).pred(600, 700).done(5000).on(0, 0, 0).Obj()},
				[]*Job{newJob(1).pred(300, 400).at(4000).Obj()}),
			want: want{Order: []int64{1}, Start: []int64{1}, Preempt: []int64{9}},
		},
		"augur: the restart cost keeps a nearly finished job running": {
			policy: AugurName, params: Params{RestartCost: 60},
			snap: cluster(100, 1, []int{0}, nil, []*Job{newJob(9).pred(130, 140).done(100).on(0, 0, 0).Obj()},
				[]*Job{newJob(1).pred(20, 22).at(99).Obj()}),
			want: want{Order: []int64{1}},
		},
		"mlfq-borda: predictable by remaining, unpredictable by attained, merged": {
			policy: MLFQBordaName, params: noGuards,
			snap: cluster(0, 1, []int{0, 0}, nil, nil,
				[]*Job{newJob(1).pred(1000, 1100).Obj(), newJob(2).pred(10, 11).at(1).Obj(), newJob(3).at(2).Obj()}),
			want: want{Order: []int64{2, 3, 1}, Start: []int64{2, 3}},
		},
		"placement: never a GPU type the predicted memory does not fit": {
			policy: AugurName, params: noGuards,
			snap: cluster(0, 4, []int{0, 1}, []GPUType{{"k80", 11441}, {"v100", 16160}},
				[]*Job{newJob(9).gpus(4).pred(1e6, 1e6).rate(0.5, 1).on(1, 1, 0).Obj()},
				[]*Job{newJob(1).mem(14000).pred(1e9, 1e9).rate(0.5, 1).Obj()}),
			want: want{Order: []int64{1}},
		},
		"placement: comparative advantage sends the job that gains least to the slow type": {
			policy: AugurName, params: noGuards,
			snap: cluster(0, 1, []int{0, 1}, []GPUType{{"k80", 11441}, {"v100", 16160}}, nil,
				[]*Job{newJob(1).pred(100, 110).rate(0.9, 1).Obj(), newJob(2).pred(200, 220).rate(0.1, 1).Obj()}),
			want: want{Order: []int64{1, 2}, Start: []int64{1, 2}},
		},
		"heterogeneous: a running job moves to the faster type that freed up": {
			policy: AugurName, params: Params{RestartCost: 60, MigrateGain: 0.1},
			snap: cluster(100, 1, []int{0, 1}, []GPUType{{"k80", 11441}, {"v100", 16160}},
				[]*Job{newJob(9).pred(1e4, 1.1e4).rate(0.2, 1).done(20).on(0, 0, 0).Obj()}, nil),
			want: want{Start: []int64{9}, Preempt: []int64{9}},
		},
		"heterogeneous: a job barely faster elsewhere stays (MigrateGain)": {
			policy: AugurName, params: Params{RestartCost: 60, MigrateGain: 0.1},
			snap: cluster(100, 1, []int{0, 1}, []GPUType{{"k80", 11441}, {"v100", 16160}},
				[]*Job{newJob(9).pred(1e4, 1.1e4).rate(0.95, 1).done(95).on(0, 0, 0).Obj()}, nil),
			want: want{},
		},
		"heterogeneous: the min-run guard holds a move and asks to be woken": {
			policy: SRTFOracleName, params: Params{MinRun: 300},
			snap: cluster(100, 1, []int{0, 1}, []GPUType{{"k80", 11441}, {"v100", 16160}},
				[]*Job{newJob(9).truth(1e4).rate(0.2, 1).done(20).on(0, 0, 0).Obj()}, nil),
			want: want{Wake: 300},
		},
		"heterogeneous: a short arrival takes the fast type, the long job moves to the slow one": {
			policy: SRTFOracleName, params: Params{RestartCost: 60},
			snap: cluster(10, 1, []int{0, 1}, []GPUType{{"k80", 11441}, {"v100", 16160}},
				[]*Job{newJob(9).truth(1e5).rate(0.6, 1).done(10).on(1, 1, 0).Obj()},
				[]*Job{newJob(1).truth(100).rate(0.1, 1).at(10).Obj()}),
			want: want{Order: []int64{1}, Start: []int64{9, 1}, Preempt: []int64{9}},
		},
		"heterogeneous: a running job never moves to a type its memory does not fit": {
			policy: AugurName, params: Params{RestartCost: 60},
			snap: cluster(100, 1, []int{0, 1}, []GPUType{{"v100", 16160}, {"a100", 40960}},
				[]*Job{newJob(9).mem(20000).pred(1e4, 1.1e4).rate(1, 0.5).on(1, 1, 0).Obj()}, nil),
			want: want{},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p, err := ByName(c.policy, c.params)
			if err != nil {
				t.Fatal(err)
			}
			plan := p.Schedule(c.snap)
			start, pre := ids(plan)
			got := want{Order: plan.Order, Start: start, Preempt: pre, Wake: plan.Wake}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			checkPlan(t, c.snap, plan)
		})
	}
}

// checkPlan holds every plan to the rules a driver applies: starts fit the
// GPUs left after preemptions, on one type, the right number of GPUs.
func checkPlan(t *testing.T, s *Snapshot, p Plan) {
	t.Helper()
	free := map[int]int{}
	for n, nd := range s.Nodes {
		free[n] = nd.Free
	}
	jobs := map[int64]*Job{}
	for _, j := range append(append([]*Job(nil), s.Running...), s.Pending...) {
		jobs[j.ID] = j
	}
	for _, v := range p.Preempt {
		for _, sh := range jobs[v.ID].Placement.Shares {
			free[sh.Node] += sh.GPUs
		}
	}
	for _, st := range p.Start {
		g := 0
		for _, sh := range st.Placement.Shares {
			if s.Nodes[sh.Node].Type != st.Placement.Type {
				t.Errorf("job %d: node %d is not of type %d", st.ID, sh.Node, st.Placement.Type)
			}
			free[sh.Node] -= sh.GPUs
			if free[sh.Node] < 0 {
				t.Errorf("job %d overfills node %d", st.ID, sh.Node)
			}
			g += sh.GPUs
		}
		if g != jobs[st.ID].GPUs {
			t.Errorf("job %d got %d GPUs, asked %d", st.ID, g, jobs[st.ID].GPUs)
		}
	}
}

func TestExpectedRemaining(t *testing.T) {
	// At the start it is the lognormal mean; it shrinks while the job is
	// within its prediction and grows once far past it.
	if got, want := ExpectedRemaining(100, 100, 0), 100.0; math.Abs(got-want) > 0.1 {
		t.Errorf("no spread: %v, want %v", got, want)
	}
	early, mid := ExpectedRemaining(100, 300, 10), ExpectedRemaining(100, 300, 100)
	late := ExpectedRemaining(100, 300, 10000)
	if !(mid < early) || !(late > mid) {
		t.Errorf("expected remaining: after 10s %v, 100s %v, 10000s %v", early, mid, late)
	}
}

// TestMatchGap compares the sampled type matching with the exact optimum on
// small random instances and reports the gap.
func TestMatchGap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	sumGap, worst := 0.0, 0.0
	const trials = 200
	for range trials {
		nj := 3 + rng.IntN(6)
		capacity := []int{rng.IntN(5), rng.IntN(5), rng.IntN(5)}
		jobs := make([]MatchJob, nj)
		for i := range jobs {
			jobs[i] = MatchJob{GPUs: 1 + rng.IntN(3), Value: []float64{rng.Float64(), rng.Float64(), rng.Float64()}}
			if rng.IntN(4) == 0 {
				jobs[i].Value[rng.IntN(3)] = 0 // does not fit there
			}
		}
		exact := MatchValue(jobs, capacity, MatchExact(jobs, capacity))
		got := MatchValue(jobs, capacity, Match(jobs, capacity))
		if got < 0 {
			t.Fatalf("sampled assignment exceeds capacity")
		}
		if exact > 0 {
			gap := (exact - got) / exact
			sumGap += gap
			worst = max(worst, gap)
		}
	}
	t.Logf("Match vs MatchExact over %d instances: mean gap %.2f%%, worst %.2f%%", trials, 100*sumGap/trials, 100*worst)
	if sumGap/trials > 0.02 {
		t.Errorf("mean gap %.2f%% is over 2%%", 100*sumGap/trials)
	}
	// With one GPU per job the exchanges make it exact.
	for k := range trials {
		nj := 3 + rng.IntN(7)
		capacity := []int{rng.IntN(4), rng.IntN(4), rng.IntN(4)}
		jobs := make([]MatchJob, nj)
		for i := range jobs {
			jobs[i] = MatchJob{GPUs: 1, Value: []float64{rng.Float64(), rng.Float64(), rng.Float64()}}
			if rng.IntN(3) == 0 {
				jobs[i].Value[rng.IntN(3)] = 0
			}
		}
		exact := MatchValue(jobs, capacity, MatchExact(jobs, capacity))
		if got := MatchValue(jobs, capacity, Match(jobs, capacity)); got < exact-1e-9 {
			t.Fatalf("instance %d (unit jobs): value %v, exact %v", k, got, exact)
		}
	}
}

// TestTypeBlindSpreads: the type-blind placer's ties do not favour the GPU
// type that happens to be listed first.
func TestTypeBlindSpreads(t *testing.T) {
	types := []GPUType{{"k80", 11441}, {"p100", 16280}, {"v100", 16160}}
	count := make([]int, 3)
	for id := range int64(300) {
		s := cluster(0, 4, []int{0, 1, 2, 0, 1, 2}, types, nil, []*Job{newJob(id).rate(0.2, 0.8, 1).Obj()})
		p, _ := ByName(FIFOName, Params{TypeBlind: true, Seed: 1})
		plan := p.Schedule(s)
		if len(plan.Start) != 1 {
			t.Fatalf("job %d not started", id)
		}
		count[plan.Start[0].Placement.Type]++
	}
	for ty, n := range count {
		if n < 70 {
			t.Errorf("type %d got %d of 300 jobs: %v", ty, n, count)
		}
	}
}

// TestTiresiasEntryOrder: in the first-come variant a queue is ordered by
// when jobs entered it, which a later preemption does not change.
func TestTiresiasEntryOrder(t *testing.T) {
	p := NewTiresias(Params{})
	p.PreemptedFirst = false
	// t=4000: job 9 crossed 3,250 GPU-seconds at t=3250 while running; a
	// fresh job preempts it.
	plan := p.Schedule(cluster(4000, 1, []int{0}, nil, []*Job{newJob(9).done(4000).on(0, 0, 0).Obj()},
		[]*Job{newJob(1).at(3999).Obj()}))
	if _, pre := ids(plan); !cmp.Equal(pre, []int64{9}) {
		t.Fatalf("preempted %v, want [9]", pre)
	}
	// t=6000: job 3 was preempted at 3600 in the second queue, which it
	// entered in a run this policy did not see (so it counts from 3600);
	// job 9 entered at 3250, so it goes first although it was requeued
	// later.
	plan = p.Schedule(cluster(6000, 1, []int{0}, nil, nil, []*Job{
		newJob(3).done(3400).preempted(1, 3600).Obj(),
		newJob(9).done(4000).preempted(1, 4000).Obj(),
	}))
	if got := plan.Order; !cmp.Equal(got, []int64{9, 3}) {
		t.Errorf("order %v, want [9 3]", got)
	}
}

// BenchmarkSchedule1000x100 is one placement decision for 1,000 waiting jobs
// on 100 nodes of 8 GPUs, three GPU types, mostly busy.
func BenchmarkSchedule1000x100(b *testing.B) {
	for _, name := range []string{AugurName, FIFOName, TiresiasName} {
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			types := []GPUType{{"k80", 11441}, {"p100", 16280}, {"v100", 16160}}
			nodeTypes := make([]int, 100)
			for i := range nodeTypes {
				nodeTypes[i] = i % 3
			}
			var running, pending []*Job
			id := int64(0)
			for n := range 100 {
				for g := 0; g < 7; g++ {
					id++
					running = append(running, newJob(id).pred(1000*rng.Float64()+10, 2000).done(5).rate(0.3, 0.7, 1).on(n, n%3, 0).Obj())
				}
			}
			for range 1000 {
				id++
				pending = append(pending, newJob(id).gpus(1<<rng.IntN(4)).at(rng.Float64()*100).pred(1000*rng.Float64()+10, 3000).rate(rng.Float64(), 0.7, 1).Obj())
			}
			s := cluster(100, 8, nodeTypes, types, running, pending)
			p, _ := ByName(name, DefaultParams())
			b.ResetTimer()
			for b.Loop() {
				p.Schedule(s)
			}
		})
	}
}
