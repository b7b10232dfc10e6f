package nodeagent

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/augur-hpc/augur/sidecar/nodestore"
	"github.com/augur-hpc/augur/sidecar/outcome"
	"github.com/augur-hpc/augur/sidecar/telemetry"
)

// GPUs reads the node's GPUs; *telemetry.Sampler is one.
type GPUs interface {
	Sample() ([]telemetry.Reading, error)
}

// Procs ties processes to jobs; ProcFS is one.
type Procs interface {
	// JobOf says which job a process belongs to.
	JobOf(pid uint32) (uint64, bool)
	// Jobs returns the jobs with at least one live process.
	Jobs() (map[uint64]bool, error)
}

// Deliverer sends a report to augurd; *Sender is one.
type Deliverer interface {
	Deliver(ctx context.Context, jobID uint64, report []byte) (outcome.Ack, error)
}

// LiveDeliverer sends a live period to augurd; *Sender is one. A Deliverer
// that is not one sends no live periods.
type LiveDeliverer interface {
	DeliverLive(ctx context.Context, live []byte) error
}

// Config is the agent's settings (from config.Node, and constants).
type Config struct {
	Node         string
	Interval     time.Duration // sampling
	RawRetention time.Duration // raw samples older than this fold into minutes
	Retention    time.Duration // delivered jobs older than this are pruned
	DCGMDir      string        // "" writes no dcgm-exporter job map
	// RecoverAfter: a running job with no process for this long, whose
	// Epilog has not come, is finalised "recovered". Long enough for
	// slurmd's Epilog to run after the job's last process ends.
	RecoverAfter time.Duration
	// Housekeeping is how often recovery, downsampling and pruning run.
	Housekeeping time.Duration
	// SendEvery is how often the outbox is checked for due reports.
	SendEvery time.Duration
	// LiveEvery is how often running jobs' GPU use over the last period
	// goes to augurd (outcome.Live).
	LiveEvery time.Duration
}

// Defaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Interval <= 0 {
		c.Interval = time.Second
	}
	if c.RawRetention <= 0 {
		c.RawRetention = time.Hour
	}
	if c.Retention <= 0 {
		c.Retention = 30 * 24 * time.Hour
	}
	if c.RecoverAfter <= 0 {
		c.RecoverAfter = 5 * time.Minute
	}
	if c.Housekeeping <= 0 {
		c.Housekeeping = 30 * time.Second
	}
	if c.SendEvery <= 0 {
		c.SendEvery = time.Second
	}
	if c.LiveEvery <= 0 {
		c.LiveEvery = time.Minute
	}
	if c.Node == "" {
		c.Node = NodeName()
	}
	return c
}

// Stats counts what the agent did since it started.
type Stats struct {
	Rounds, Samples        atomic.Int64
	Delivered, Duplicates  atomic.Int64
	Refused, SendFailures  atomic.Int64
	Recovered, Unreported  atomic.Int64
	SampleErrors, BadPokes atomic.Int64
	LiveSent, LiveFailed   atomic.Int64
}

// Agent is the node agent. Build it with New; Run runs it.
type Agent struct {
	cfg   Config
	store *nodestore.Store
	gpus  GPUs // nil: no NVML on this node; jobs are still finalised and reported
	procs Procs
	send  Deliverer
	now   func() time.Time
	log   *slog.Logger
	// Jitter shortens a retry wait by a random share (at most a fifth), so
	// that nodes retrying after an augurd outage do not come back at once.
	jitter func(time.Duration) time.Duration

	Stats Stats

	mu        sync.Mutex
	described map[[2]uint64]string // (job, gpu) -> attribution already stored
	// pidJobs remembers which job /proc said each GPU process belonged to,
	// so that the accounting peak of a process that has ended since (and
	// left /proc) still goes to its job. Entries go once not seen for
	// pidMemory sampling rounds, or with their job.
	pidJobs   map[uint32]pidJob
	sampled   int64                // rounds that read the GPUs
	goneSince map[uint64]time.Time // running jobs seen with no process, since
	lastRound time.Time
	// The live period being gathered: per job and GPU, since liveFrom.
	live     map[uint64]map[int]*liveGPU
	liveFrom time.Time
	liveBusy atomic.Bool // a live period is on its way to augurd
}

// pidJob is a process's job, as of the sampled round seen.
type pidJob struct {
	job  uint64
	seen int64
}

// pidMemory is how many sampling rounds a process's job is remembered
// after /proc last showed it: a process that ends is reported gone by the
// next round that reads the GPUs, so a few are plenty.
const pidMemory = 5

// liveGPU gathers one job's use of one GPU over a live period.
type liveGPU struct {
	utilS, durS float64 // utilisation x seconds, seconds
	maxMiB      float64
	shared      bool
}

// New builds an agent. gpus may be nil.
func New(cfg Config, st *nodestore.Store, gpus GPUs, procs Procs, send Deliverer, now func() time.Time, log *slog.Logger) *Agent {
	return &Agent{
		cfg: cfg.withDefaults(), store: st, gpus: gpus, procs: procs, send: send, now: now, log: log,
		jitter: func(d time.Duration) time.Duration {
			if d <= 0 {
				return d
			}
			return d - rand.N(d/5+1)
		},
		described: map[[2]uint64]string{},
		pidJobs:   map[uint32]pidJob{},
		goneSince: map[uint64]time.Time{},
		live:      map[uint64]map[int]*liveGPU{},
	}
}

// Run samples, keeps house and delivers until ctx ends. pokes, when not
// nil, is the listener of the hooks' socket; Run closes it on return.
func (a *Agent) Run(ctx context.Context, pokes net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pk := make(chan pokeReq, 16)
	if pokes != nil {
		go servePokes(ctx, pokes, pk, func(err error) {
			a.Stats.BadPokes.Add(1)
			a.log.Warn("bad poke on the agent socket", "err", err)
		})
		defer pokes.Close()
	}
	if err := a.Housekeep(ctx); err != nil {
		a.log.Error("start-up housekeeping failed", "err", err)
	}
	a.rewriteMap(ctx)

	sendNow := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the outbox: slow or absent augurd never delays sampling
		defer wg.Done()
		t := time.NewTicker(a.cfg.SendEvery)
		defer t.Stop()
		for {
			a.Flush(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-sendNow:
			}
		}
	}()
	defer wg.Wait()

	sample := time.NewTicker(a.cfg.Interval)
	defer sample.Stop()
	liveT := time.NewTicker(a.cfg.LiveEvery)
	defer liveT.Stop()
	a.mu.Lock()
	a.liveFrom = a.now()
	a.mu.Unlock()
	house := time.NewTicker(a.cfg.Housekeeping)
	defer house.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sample.C:
			a.round(ctx)
		case <-liveT.C:
			if ld, ok := a.send.(LiveDeliverer); ok && a.liveBusy.CompareAndSwap(false, true) {
				wg.Add(1)
				go func() { // never delays sampling; a period not sent is dropped
					defer wg.Done()
					defer a.liveBusy.Store(false)
					a.SendLive(ctx, ld)
				}()
			}
		case <-house.C:
			if err := a.Housekeep(ctx); err != nil {
				a.log.Error("housekeeping failed", "err", err)
			}
		case p := <-pk:
			a.log.Debug("poked", "kind", p.Kind, "job_id", p.JobID)
			switch p.Kind {
			case PokeProlog:
				a.round(ctx) // a first sample at once: short jobs get one too
			case PokeEpilog:
				a.forget(p.JobID)
				select {
				case sendNow <- struct{}{}:
				default:
				}
			case PokeRound:
				// An Epilog waits: its job's processes have just exited,
				// and this round reads their accounting peaks before the
				// Epilog sums the job up.
				err := a.Round(ctx)
				if err != nil && ctx.Err() == nil {
					a.log.Warn("sampling round for an epilog failed", "job_id", p.JobID, "err", err)
				}
				p.done <- err
			}
		}
	}
}

func (a *Agent) round(ctx context.Context) {
	if err := a.Round(ctx); err != nil && ctx.Err() == nil {
		a.log.Warn("sampling round failed", "err", err)
	}
}

// Round samples the GPUs once and stores each running job's share.
func (a *Agent) Round(ctx context.Context) error {
	now := a.now()
	a.mu.Lock()
	dur := a.cfg.Interval.Seconds()
	if !a.lastRound.IsZero() {
		if d := now.Sub(a.lastRound).Seconds(); d > 0 && d < dur {
			dur = d // a poke's extra round stands for less time
		}
	}
	a.lastRound = now
	a.mu.Unlock()
	if a.gpus == nil {
		return nil
	}
	jobs, err := a.store.Running(ctx)
	if err != nil || len(jobs) == 0 {
		return err
	}
	readings, err := a.gpus.Sample()
	if err != nil {
		a.Stats.SampleErrors.Add(1)
		a.log.Warn("some GPUs did not answer", "err", err)
	}
	byJob := make(map[uint64][]int, len(jobs))
	for _, j := range jobs {
		byJob[j.JobID] = j.GPUs
	}
	js := telemetry.Attribute(readings, byJob, a.jobOf(readings))
	rd := make(map[int]*telemetry.Reading, len(readings))
	for i := range readings {
		rd[readings[i].Index] = &readings[i]
	}
	samples := make([]nodestore.Sample, 0, len(js))
	var infos []nodestore.GPUInfo
	a.mu.Lock()
	for _, s := range js {
		if _, ok := byJob[s.JobID]; !ok {
			continue // a process of a job this node never recorded
		}
		sm := nodestore.Sample{JobID: s.JobID, GPU: s.GPU, TS: now, DurS: dur,
			MemMiB: s.MemMiB, SMUtil: s.SMUtil, MemUtil: s.MemUtil, PowerW: s.PowerW}
		if s.PeakMiB > s.MemMiB {
			sm.PeakMiB = s.PeakMiB
		}
		samples = append(samples, sm)
		a.gather(s, dur)
		key := [2]uint64{s.JobID, uint64(s.GPU)}
		if a.described[key] != s.Attribution {
			a.described[key] = s.Attribution
			r := rd[s.GPU]
			infos = append(infos, nodestore.GPUInfo{JobID: s.JobID, GPU: s.GPU, UUID: r.UUID, Name: r.Name,
				MemTotalMiB: r.MemTotalMiB, Attribution: s.Attribution})
		}
	}
	a.mu.Unlock()
	if err := a.store.AddSamples(ctx, infos, samples); err != nil {
		a.mu.Lock()
		for _, g := range infos {
			delete(a.described, [2]uint64{g.JobID, uint64(g.GPU)})
		}
		a.mu.Unlock()
		return err
	}
	a.Stats.Rounds.Add(1)
	a.Stats.Samples.Add(int64(len(samples)))
	return nil
}

// jobOf returns the round's pid -> job function: /proc for the processes
// running, remembered for them, and the memory of earlier rounds for those
// that have ended since (readings' EndedPIDs), which /proc no longer has.
func (a *Agent) jobOf(readings []telemetry.Reading) func(uint32) (uint64, bool) {
	a.mu.Lock()
	a.sampled++
	n := a.sampled
	for pid, pj := range a.pidJobs {
		if n-pj.seen > pidMemory {
			delete(a.pidJobs, pid)
		}
	}
	a.mu.Unlock()
	ended := map[uint32]bool{}
	for _, rd := range readings {
		for _, pid := range rd.EndedPIDs {
			ended[pid] = true
		}
	}
	return func(pid uint32) (uint64, bool) {
		if ended[pid] {
			a.mu.Lock()
			defer a.mu.Unlock()
			pj, ok := a.pidJobs[pid]
			return pj.job, ok
		}
		job, ok := a.procs.JobOf(pid)
		if ok {
			a.mu.Lock()
			a.pidJobs[pid] = pidJob{job: job, seen: n}
			a.mu.Unlock()
		}
		return job, ok
	}
}

// gather adds one sample to the live period; a.mu is held.
func (a *Agent) gather(s telemetry.JobSample, dur float64) {
	gs := a.live[s.JobID]
	if gs == nil {
		gs = map[int]*liveGPU{}
		a.live[s.JobID] = gs
	}
	g := gs[s.GPU]
	if g == nil {
		g = &liveGPU{}
		gs[s.GPU] = g
	}
	g.utilS += s.SMUtil * dur
	g.durS += dur
	g.maxMiB = max(g.maxMiB, s.PeakMiB)
	g.shared = g.shared || s.Shared
}

// LivePeriod takes the live period gathered since the last one: each
// running job's mean SM utilisation and most memory per GPU. It returns
// nil when no running job had a sample.
func (a *Agent) LivePeriod(ctx context.Context) (*outcome.Live, error) {
	running, err := a.store.Running(ctx)
	if err != nil {
		return nil, err
	}
	now := a.now()
	a.mu.Lock()
	gathered, from := a.live, a.liveFrom
	a.live, a.liveFrom = map[uint64]map[int]*liveGPU{}, now
	a.mu.Unlock()
	l := &outcome.Live{Node: a.cfg.Node, At: now, PeriodS: now.Sub(from).Seconds()}
	if from.IsZero() || l.PeriodS <= 0 {
		l.PeriodS = a.cfg.LiveEvery.Seconds()
	}
	for _, j := range running {
		gs := gathered[j.JobID]
		if len(gs) == 0 {
			continue
		}
		lj := outcome.LiveJob{JobID: j.JobID, Start: j.Started}
		for idx, g := range gs {
			u := 0.0
			if g.durS > 0 {
				u = min(max(g.utilS/g.durS, 0), 100)
			}
			lj.GPUs = append(lj.GPUs, outcome.LiveGPU{Index: idx, SMUtil: u, MemMiB: g.maxMiB, Shared: g.shared})
		}
		slices.SortFunc(lj.GPUs, func(x, y outcome.LiveGPU) int { return x.Index - y.Index })
		l.Jobs = append(l.Jobs, lj)
	}
	if len(l.Jobs) == 0 {
		return nil, nil
	}
	slices.SortFunc(l.Jobs, func(x, y outcome.LiveJob) int { return cmp.Compare(x.JobID, y.JobID) })
	return l, nil
}

// SendLive sends the live period gathered since the last one, once: live
// figures are not worth a resend, the next period comes soon.
func (a *Agent) SendLive(ctx context.Context, ld LiveDeliverer) {
	l, err := a.LivePeriod(ctx)
	if err != nil || l == nil {
		if err != nil {
			a.log.Warn("live period not built", "err", err)
		}
		return
	}
	b, err := outcome.EncodeLive(l)
	if err == nil {
		err = ld.DeliverLive(ctx, b)
	}
	if err != nil {
		if ctx.Err() == nil {
			a.Stats.LiveFailed.Add(1)
			a.log.Debug("live period not delivered; dropped", "jobs", len(l.Jobs), "err", err)
		}
		return
	}
	a.Stats.LiveSent.Add(1)
}

func (a *Agent) forget(jobID uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.live, jobID)
	for k := range a.described {
		if k[0] == jobID {
			delete(a.described, k)
		}
	}
	delete(a.goneSince, jobID)
	for pid, pj := range a.pidJobs {
		if pj.job == jobID {
			delete(a.pidJobs, pid)
		}
	}
}

// Housekeep finalises jobs whose Epilog never came, reports ended jobs left
// without a report, folds old samples into minutes and prunes delivered
// jobs past retention.
func (a *Agent) Housekeep(ctx context.Context) error {
	now := a.now()
	var errs []error
	if err := a.recover(ctx, now); err != nil {
		errs = append(errs, err)
	}
	unrep, err := a.store.Unreported(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	for _, j := range unrep {
		if err := Report(ctx, a.store, a.cfg.Node, j.JobID, now); err != nil {
			errs = append(errs, err)
			continue
		}
		a.Stats.Unreported.Add(1)
		a.log.Info("reported an ended job whose report was missing", "job_id", j.JobID, "exit_state", j.ExitState)
	}
	if n, err := a.store.Downsample(ctx, now.Add(-a.cfg.RawRetention)); err != nil {
		errs = append(errs, err)
	} else if n > 0 {
		a.log.Debug("downsampled", "raw_rows", n)
	}
	if n, err := a.store.Prune(ctx, now.Add(-a.cfg.Retention)); err != nil {
		errs = append(errs, err)
	} else if n > 0 {
		a.log.Info("pruned delivered jobs past retention", "jobs", n, "retention_seconds", a.cfg.Retention.Seconds())
	}
	return errors.Join(errs...)
}

// recover ends running jobs that have had no process for RecoverAfter.
func (a *Agent) recover(ctx context.Context, now time.Time) error {
	running, err := a.store.Running(ctx)
	if err != nil || len(running) == 0 {
		return err
	}
	alive, err := a.procs.Jobs()
	if err != nil {
		return err
	}
	var due []nodestore.Job
	var since []time.Time
	a.mu.Lock()
	seen := map[uint64]bool{}
	for _, j := range running {
		seen[j.JobID] = true
		if alive[j.JobID] {
			delete(a.goneSince, j.JobID)
			continue
		}
		t, ok := a.goneSince[j.JobID]
		if !ok {
			a.goneSince[j.JobID] = now
			continue
		}
		if now.Sub(t) >= a.cfg.RecoverAfter {
			due = append(due, j)
			since = append(since, t)
		}
	}
	for id := range a.goneSince {
		if !seen[id] {
			delete(a.goneSince, id)
		}
	}
	a.mu.Unlock()
	changed := false
	for i, j := range due {
		ended, err := a.store.EndJob(ctx, j.JobID, since[i], StateUnknown, 0, FinalizedRecovered)
		if err != nil {
			return err
		}
		a.forget(j.JobID)
		if !ended {
			continue // its Epilog came meanwhile
		}
		changed = true
		a.Stats.Recovered.Add(1)
		a.log.Warn("job ended without an epilog; finalised as recovered", "job_id", j.JobID,
			"no_process_seconds", now.Sub(since[i]).Seconds())
		if err := Report(ctx, a.store, a.cfg.Node, j.JobID, now); err != nil {
			return err // Unreported picks it up
		}
	}
	if changed {
		a.rewriteMap(ctx)
	}
	return nil
}

func (a *Agent) rewriteMap(ctx context.Context) {
	if a.cfg.DCGMDir == "" {
		return
	}
	if err := WriteJobMap(ctx, a.store, a.cfg.DCGMDir); err != nil {
		a.log.Warn("dcgm-exporter job map not written", "dir", a.cfg.DCGMDir, "err", err)
	}
}

// Flush sends the reports that are due, oldest first. A failed attempt
// reschedules its report with Backoff and ends the round: augurd is down or
// broken for all reports alike, so at most one attempt fails per call.
func (a *Agent) Flush(ctx context.Context) {
	due, err := a.store.Due(ctx, a.now(), 32)
	if err != nil {
		a.log.Error("reading the outbox failed", "err", err)
		return
	}
	for _, p := range due {
		if ctx.Err() != nil {
			return
		}
		log := a.log.With("job_id", p.JobID, "attempt", p.Attempts+1)
		ack, err := a.send.Deliver(ctx, p.JobID, p.Report)
		if err == nil && ack.Status == outcome.Failed {
			err = errors.New("augurd could not store it now: " + ack.Error)
		}
		if err != nil {
			if ctx.Err() != nil {
				return // shutting down: not the report's fault
			}
			a.Stats.SendFailures.Add(1)
			wait := a.jitter(Backoff(p.Attempts + 1))
			if rerr := a.store.Retry(ctx, p.JobID, a.now().Add(wait), err); rerr != nil {
				a.log.Error("recording a failed delivery failed", "err", rerr)
			}
			log.Warn("report not delivered; will retry", "err", err, "retry_in_seconds", wait.Seconds())
			return
		}
		if err := a.store.Delivered(ctx, p.JobID, a.now()); err != nil {
			a.log.Error("marking a report delivered failed", "job_id", p.JobID, "err", err)
			return
		}
		switch ack.Status {
		case outcome.Stored:
			a.Stats.Delivered.Add(1)
			log.Info("report delivered", "age_seconds", a.now().Sub(p.Created).Seconds())
		case outcome.Duplicate:
			a.Stats.Duplicates.Add(1)
			log.Info("report was already stored by augurd")
		case outcome.Refused:
			a.Stats.Refused.Add(1)
			log.Error("augurd refused the report for good; dropped", "reason", ack.Error,
				"refused_total", a.Stats.Refused.Load())
		}
	}
}
