package report

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
)

// Options shape a Summary.
type Options struct {
	// From and To are the window: jobs that ended in [From, To). Both are
	// needed for the utilisation-over-time chart.
	From, To time.Time
	// Buckets is how many steps the utilisation chart has (default 48).
	Buckets int
	// Points is the most jobs drawn in each scatter chart (default 1500).
	Points int
	// IdleUtil is the mean SM utilisation (percent) under which a job's
	// whole allocation counts as idle (default 5).
	IdleUtil float64
	// GPUMemMiB is each GPU type's memory, for OOM risk.
	GPUMemMiB map[string]float64
}

func (o Options) withDefaults() Options {
	if o.Buckets <= 0 {
		o.Buckets = 48
	}
	if o.Points <= 0 {
		o.Points = 1500
	}
	if o.IdleUtil <= 0 {
		o.IdleUtil = 5
	}
	return o
}

// Summary is the cluster over a window: what augur report prints.
type Summary struct {
	From, To time.Time

	Jobs        int              // outcomes that ended in the window
	States      []Count          // by final state, most first
	Submissions map[string]int64 // submissions received in the window, by action

	Memory  Accuracy // predicted (median) vs measured peak GPU memory per GPU
	Runtime Accuracy // predicted (median) vs measured runtime, completed jobs only
	Sources []SourceAccuracy

	OOM   OOMStats
	Waste Waste
	// Partitions: queue wait (submit to start) and JCT (submit to end).
	Partitions []PartitionStats
	// Preemptions is nil when the store has no actions table.
	Preemptions *Preemptions
	// TimeHints counts the submissions told at submission that their
	// --time is far above their predicted runtime (and what to ask for).
	TimeHints int64 `json:",omitempty"`
	// OOMRecovery is nil when live.oom_recovery requeued nothing.
	OOMRecovery *OOMRecovery `json:",omitempty"`
	// IdleGPU is nil when live.idle_gpu flagged nothing.
	IdleGPU *IdleGPU `json:",omitempty"`

	// Chart data.
	MemPoints     []Point // x predicted, y measured, MiB
	RuntimePoints []Point // x predicted, y measured, seconds
	JCTCDF        []Point // x seconds, y fraction of jobs done
	Utilisation   []UtilBucket
}

// Count is a label and how many.
type Count struct {
	Name string
	N    int
}

// Accuracy compares predictions with what jobs did.
type Accuracy struct {
	Jobs int // jobs with both a prediction and a measurement
	// MedianErrPct and P90ErrPct are of |predicted - actual| / actual.
	MedianErrPct, P90ErrPct float64
	// UnderPct: actual above the median prediction. UnderHiPct: above the
	// upper bound, the miss that hurts (a job placed on a GPU too small,
	// or ordered as short when it was not).
	UnderPct, UnderHiPct float64
}

// SourceAccuracy is the memory accuracy of one prediction source.
type SourceAccuracy struct {
	Source string
	Accuracy
}

// OOMStats are GPU out-of-memory failures seen and avoided.
type OOMStats struct {
	Seen         int     // jobs that look like they died of GPU OOM
	GPUHoursLost float64 // their GPU-hours
	Flagged      int     // of Seen, how many were predicted at 95% or more of their GPU's memory
	Avoided      int     // submissions refused as certain OOM
	Rejections   []store.Rejection
}

// Waste is GPU time allocated and not used.
type Waste struct {
	AllocGPUHours float64
	UsedGPUHours  float64 // allocation weighted by mean SM utilisation
	// Idle: jobs under Options.IdleUtil, their whole allocation.
	IdleJobs     int
	IdleGPUHours float64
	// Oversized: multi-GPU jobs whose utilisation would have fitted on
	// fewer GPUs; the GPU-hours of the GPUs they did not need.
	OversizedJobs     int
	OversizedGPUHours float64
	TopUsers          []UserWaste // most wasted first, at most 10
}

// UserWaste is one user's idle and oversized GPU-hours.
type UserWaste struct {
	User          string
	Jobs          int
	WastedGPUHour float64
	AllocGPUHours float64
}

// PartitionStats are one partition's queue wait and job completion time.
type PartitionStats struct {
	Partition string
	Jobs      int
	Wait, JCT Quantiles // seconds
}

// Quantiles of a distribution.
type Quantiles struct {
	Mean, P50, P95, Max float64
}

// Preemptions are the live scheduler's signals and requeues in the window.
type Preemptions struct {
	Signals, Requeues int
	Jobs              int // distinct jobs preempted
	DryRun, Failed    int
	// MostPerJob is the most times one job was preempted.
	MostPerJob int
	ByPolicy   []Count
}

// OOMRecovery is what GPU out-of-memory recovery (live.oom_recovery) did in
// the window: jobs requeued onto a larger GPU type, and of those the ones
// that then completed, with the GPU-hours of their completed runs (work a
// user would otherwise have resubmitted by hand, after finding the failure).
type OOMRecovery struct {
	Requeued, DryRun, Failed int
	Completed                int
	CompletedGPUHours        float64
}

// IdleGPU is what the idle-GPU watcher (live.idle_gpu) did in the window:
// jobs flagged without a warning, warned of a cancel, cancelled; the
// GPU-hours the cancels freed (what was left of the jobs' time limits: at
// most, a job might have ended sooner), and those a dry run's cancels
// would have freed.
type IdleGPU struct {
	Flagged, Warned, Cancelled int
	DryRun, Failed             int
	FreedGPUHours              float64
	DryRunGPUHours             float64 `json:",omitempty"`
}

// Point is one point of a chart.
type Point struct{ X, Y float64 }

// UtilBucket is the GPU time allocated and used in one step of the window.
type UtilBucket struct {
	Start               time.Time
	AllocGPUHours, Used float64
}

// Builder accumulates jobs into a Summary. Add is called once per job, in
// any order; memory is a few float32 per job (for exact quantiles) and
// bounded samples for the charts.
type Builder struct {
	o      Options
	jobs   int
	states map[string]int

	mem, run       errs
	sources        map[string]*errs
	memPts, runPts reservoir

	oom   OOMStats
	waste Waste
	users map[string]*UserWaste

	parts     map[string]*partAcc
	jct       []float32
	util      []UtilBucket
	step      time.Duration
	subs      map[string]int64
	pre       *Preemptions
	preJob    map[uint64]int
	rec       *OOMRecovery
	idle      *IdleGPU
	recJob    map[uint64]bool
	timeHints int64
}

// errs collects relative errors and misses.
type errs struct {
	rel          []float32
	under, above int
}

func (e *errs) add(pred, hi, actual float64) {
	e.rel = append(e.rel, float32(math.Abs(pred-actual)/actual))
	if actual > pred {
		e.under++
	}
	if hi > 0 && actual > hi {
		e.above++
	}
}

func (e *errs) accuracy() Accuracy {
	n := len(e.rel)
	if n == 0 {
		return Accuracy{}
	}
	sort.Slice(e.rel, func(i, j int) bool { return e.rel[i] < e.rel[j] })
	return Accuracy{
		Jobs:         n,
		MedianErrPct: 100 * float64(e.rel[quantileIndex(n, 0.5)]),
		P90ErrPct:    100 * float64(e.rel[quantileIndex(n, 0.9)]),
		UnderPct:     100 * float64(e.under) / float64(n),
		UnderHiPct:   100 * float64(e.above) / float64(n),
	}
}

func quantileIndex(n int, q float64) int {
	return min(n-1, max(0, int(math.Ceil(q*float64(n)))-1))
}

// reservoir keeps a uniform sample of points, deterministically.
type reservoir struct {
	cap  int
	seen int
	pts  []Point
	rng  *rand.Rand
}

func (r *reservoir) add(p Point) {
	r.seen++
	if len(r.pts) < r.cap {
		r.pts = append(r.pts, p)
		return
	}
	if r.rng == nil {
		r.rng = rand.New(rand.NewPCG(1, 2))
	}
	if k := r.rng.IntN(r.seen); k < r.cap {
		r.pts[k] = p
	}
}

type partAcc struct{ wait, jct []float32 }

// NewBuilder starts a Summary.
func NewBuilder(o Options) *Builder {
	o = o.withDefaults()
	b := &Builder{
		o: o, states: map[string]int{}, sources: map[string]*errs{}, users: map[string]*UserWaste{},
		parts: map[string]*partAcc{}, memPts: reservoir{cap: o.Points}, runPts: reservoir{cap: o.Points},
	}
	if !o.From.IsZero() && o.To.After(o.From) {
		b.step = o.To.Sub(o.From) / time.Duration(o.Buckets)
		if b.step <= 0 {
			b.step = 1
		}
		b.util = make([]UtilBucket, o.Buckets)
		for i := range b.util {
			b.util[i].Start = o.From.Add(time.Duration(i) * b.step)
		}
	}
	return b
}

// Add counts one job. Jobs without an outcome are ignored: nothing was
// measured.
func (b *Builder) Add(j *store.JobRow) {
	if !j.HasOutcome {
		return
	}
	b.jobs++
	st := j.State
	if st == "" {
		st = StateUnknown
	}
	b.states[st]++
	if b.recJob[j.JobID] && st == "COMPLETED" {
		b.rec.Completed++
		b.rec.CompletedGPUHours += j.RuntimeSec * float64(max(j.GPUs, 1)) / 3600
	}

	if j.PredMemMiB > 0 && j.PeakGPUMemMiB > 0 {
		b.mem.add(j.PredMemMiB, j.PredMemHiMiB, j.PeakGPUMemMiB)
		src := j.PredSource
		if src == "" {
			src = "none"
		}
		e := b.sources[src]
		if e == nil {
			e = &errs{}
			b.sources[src] = e
		}
		e.add(j.PredMemMiB, j.PredMemHiMiB, j.PeakGPUMemMiB)
		b.memPts.add(Point{j.PredMemMiB, j.PeakGPUMemMiB})
	}
	if j.State == "COMPLETED" && j.PredRuntimeSec > 0 && j.RuntimeSec > 0 {
		b.run.add(j.PredRuntimeSec, j.PredRuntimeHiSec, j.RuntimeSec)
		b.runPts.add(Point{j.PredRuntimeSec, j.RuntimeSec})
	}

	gpus := float64(max(j.GPUs, 0))
	hours := math.Max(j.RuntimeSec, 0) / 3600
	alloc := gpus * hours
	util := math.Min(math.Max(j.MeanSMUtil, 0), 100)
	if j.OOMSuspect {
		b.oom.Seen++
		b.oom.GPUHoursLost += alloc
		if c := b.o.GPUMemMiB[j.GPUType]; c > 0 && j.PredMemHiMiB >= 0.95*c {
			b.oom.Flagged++
		}
	}
	b.waste.AllocGPUHours += alloc
	b.waste.UsedGPUHours += alloc * util / 100
	wasted := 0.0
	if alloc > 0 {
		switch {
		case util < b.o.IdleUtil:
			b.waste.IdleJobs++
			b.waste.IdleGPUHours += alloc
			wasted = alloc
		case gpus > 1:
			need := math.Max(1, math.Ceil(gpus*util/100))
			if need < gpus {
				b.waste.OversizedJobs++
				w := (gpus - need) * hours
				b.waste.OversizedGPUHours += w
				wasted = w
			}
		}
	}
	name := j.User
	if name == "" {
		name = uidName(j.UserID)
	}
	u := b.users[name]
	if u == nil {
		u = &UserWaste{User: name}
		b.users[name] = u
	}
	u.Jobs++
	u.AllocGPUHours += alloc
	u.WastedGPUHour += wasted

	if !j.Submit.IsZero() && !j.End.IsZero() {
		p := b.parts[j.Partition]
		if p == nil {
			p = &partAcc{}
			b.parts[j.Partition] = p
		}
		jct := j.End.Sub(j.Submit).Seconds()
		p.jct = append(p.jct, float32(math.Max(jct, 0)))
		b.jct = append(b.jct, float32(math.Max(jct, 0)))
		if !j.Start.IsZero() {
			p.wait = append(p.wait, float32(math.Max(j.Start.Sub(j.Submit).Seconds(), 0)))
		}
	}

	if b.util != nil && alloc > 0 && !j.Start.IsZero() && !j.End.IsZero() {
		b.spread(j.Start, j.End, gpus, util)
	}
}

// spread adds a job's allocation to the buckets its run overlaps.
func (b *Builder) spread(start, end time.Time, gpus, util float64) {
	if start.Before(b.o.From) {
		start = b.o.From
	}
	if end.After(b.o.To) {
		end = b.o.To
	}
	if !end.After(start) {
		return
	}
	i := int(start.Sub(b.o.From) / b.step)
	for ; i < len(b.util); i++ {
		bs := b.util[i].Start
		be := bs.Add(b.step)
		if !bs.Before(end) {
			break
		}
		lo, hi := start, end
		if bs.After(lo) {
			lo = bs
		}
		if be.Before(hi) {
			hi = be
		}
		if h := hi.Sub(lo).Hours(); h > 0 {
			b.util[i].AllocGPUHours += gpus * h
			b.util[i].Used += gpus * h * util / 100
		}
	}
}

func uidName(uid uint32) string {
	return "uid " + itoa(int(uid))
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

// AddRejection counts a submission refused as certain OOM; the first 20
// are listed.
func (b *Builder) AddRejection(r store.Rejection) {
	b.oom.Avoided++
	if len(b.oom.Rejections) < 20 {
		b.oom.Rejections = append(b.oom.Rejections, r)
	}
}

// addIdle counts one of live.idle_gpu's actions.
func (b *Builder) addIdle(a store.Action) {
	if b.idle == nil {
		b.idle = &IdleGPU{}
	}
	switch {
	case a.DryRun:
		b.idle.DryRun++
		if a.Kind == store.ActionIdleCancel {
			b.idle.DryRunGPUHours += float64(a.Value) / 3600
		}
	case a.Error != "":
		b.idle.Failed++
	case a.Kind == store.ActionIdleFlag:
		b.idle.Flagged++
	case a.Kind == store.ActionIdleWarn:
		b.idle.Warned++
	default:
		b.idle.Cancelled++
		b.idle.FreedGPUHours += float64(a.Value) / 3600
	}
}

// SetSubmissions records the window's submissions by action.
func (b *Builder) SetSubmissions(m map[string]int64) { b.subs = m }

// SetTimeHints records how many of the window's submissions got a time_hint.
func (b *Builder) SetTimeHints(n int64) { b.timeHints = n }

// AddAction counts one of the live scheduler's actions; signals and
// requeues are preemptions.
func (b *Builder) AddAction(a store.Action) {
	switch a.Kind {
	case store.ActionIdleFlag, store.ActionIdleWarn, store.ActionIdleCancel:
		b.addIdle(a)
		return
	}
	if a.Kind == store.ActionOOMRequeue {
		if b.rec == nil {
			b.rec, b.recJob = &OOMRecovery{}, map[uint64]bool{}
		}
		switch {
		case a.DryRun:
			b.rec.DryRun++
		case a.Error != "":
			b.rec.Failed++
		default:
			b.rec.Requeued++
			b.recJob[a.JobID] = true
		}
		return
	}
	if b.pre == nil {
		b.pre = &Preemptions{}
		b.preJob = map[uint64]int{}
	}
	switch a.Kind {
	case store.ActionSignal:
		b.pre.Signals++
	case store.ActionRequeue:
		b.pre.Requeues++
	default:
		return
	}
	switch {
	case a.DryRun:
		b.pre.DryRun++
	case a.Error != "":
		b.pre.Failed++
	}
	if a.JobID != 0 && !a.DryRun && a.Error == "" {
		b.preJob[a.JobID]++
	}
	pol := a.Policy
	if pol == "" {
		pol = "-"
	}
	for i := range b.pre.ByPolicy {
		if b.pre.ByPolicy[i].Name == pol {
			b.pre.ByPolicy[i].N++
			return
		}
	}
	b.pre.ByPolicy = append(b.pre.ByPolicy, Count{pol, 1})
}

// MarkActions says the store has an actions table: the summary then shows
// preemptions, zero if none.
func (b *Builder) MarkActions() {
	if b.pre == nil {
		b.AddAction(store.Action{})
	}
}

func quantiles(v []float32) Quantiles {
	if len(v) == 0 {
		return Quantiles{}
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	sum := 0.0
	for _, x := range v {
		sum += float64(x)
	}
	return Quantiles{Mean: sum / float64(len(v)), P50: float64(v[quantileIndex(len(v), 0.5)]),
		P95: float64(v[quantileIndex(len(v), 0.95)]), Max: float64(v[len(v)-1])}
}

// Summary finishes the summary. The Builder must not be used after.
func (b *Builder) Summary() *Summary {
	s := &Summary{From: b.o.From, To: b.o.To, Jobs: b.jobs, Submissions: b.subs,
		Memory: b.mem.accuracy(), Runtime: b.run.accuracy(), OOM: b.oom, Waste: b.waste, Utilisation: b.util}
	if s.Submissions == nil {
		s.Submissions = map[string]int64{}
	}
	for k, n := range b.states {
		s.States = append(s.States, Count{k, n})
	}
	sortCounts(s.States)
	for src, e := range b.sources {
		s.Sources = append(s.Sources, SourceAccuracy{src, e.accuracy()})
	}
	sort.Slice(s.Sources, func(i, j int) bool {
		if s.Sources[i].Jobs != s.Sources[j].Jobs {
			return s.Sources[i].Jobs > s.Sources[j].Jobs
		}
		return s.Sources[i].Source < s.Sources[j].Source
	})
	for name, p := range b.parts {
		s.Partitions = append(s.Partitions, PartitionStats{Partition: name, Jobs: len(p.jct), Wait: quantiles(p.wait), JCT: quantiles(p.jct)})
	}
	sort.Slice(s.Partitions, func(i, j int) bool { return s.Partitions[i].Partition < s.Partitions[j].Partition })
	for _, u := range b.users {
		if u.WastedGPUHour > 0 {
			s.Waste.TopUsers = append(s.Waste.TopUsers, *u)
		}
	}
	sort.Slice(s.Waste.TopUsers, func(i, j int) bool {
		a, c := s.Waste.TopUsers[i], s.Waste.TopUsers[j]
		if a.WastedGPUHour != c.WastedGPUHour {
			return a.WastedGPUHour > c.WastedGPUHour
		}
		return a.User < c.User
	})
	if len(s.Waste.TopUsers) > 10 {
		s.Waste.TopUsers = s.Waste.TopUsers[:10]
	}
	if b.pre != nil {
		p := *b.pre
		p.Jobs = len(b.preJob)
		for _, n := range b.preJob {
			p.MostPerJob = max(p.MostPerJob, n)
		}
		sortCounts(p.ByPolicy)
		s.Preemptions = &p
	}
	if b.rec != nil {
		o := *b.rec
		s.OOMRecovery = &o
	}
	if b.idle != nil {
		g := *b.idle
		s.IdleGPU = &g
	}
	s.TimeHints = b.timeHints
	s.MemPoints, s.RuntimePoints = b.memPts.pts, b.runPts.pts
	sortPoints(s.MemPoints)
	sortPoints(s.RuntimePoints)
	if n := len(b.jct); n > 0 {
		sort.Slice(b.jct, func(i, j int) bool { return b.jct[i] < b.jct[j] })
		steps := min(n, 200)
		for k := 1; k <= steps; k++ {
			i := k*n/steps - 1
			s.JCTCDF = append(s.JCTCDF, Point{float64(b.jct[i]), float64(i+1) / float64(n)})
		}
	}
	return s
}

func sortCounts(c []Count) {
	sort.Slice(c, func(i, j int) bool {
		if c[i].N != c[j].N {
			return c[i].N > c[j].N
		}
		return c[i].Name < c[j].Name
	})
}

func sortPoints(p []Point) {
	sort.Slice(p, func(i, j int) bool {
		if p[i].X != p[j].X {
			return p[i].X < p[j].X
		}
		return p[i].Y < p[j].Y
	})
}
