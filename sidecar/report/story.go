package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/augur-hpc/augur/sidecar/outcome"
	"github.com/augur-hpc/augur/sidecar/store"
	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// GPUType is a GPU type of the cluster and its memory.
type GPUType struct {
	Name   string
	MemMiB float64
}

// StoryOptions are what WriteStory needs besides the job.
type StoryOptions struct {
	Loc *time.Location
	// GPUTypes are the cluster's GPU types (cluster.gpu_types), for advice
	// on a type that fits better.
	GPUTypes []GPUType
	// IdleUtil is the SM utilisation (percent) under which a GPU counts as
	// unused (default 5).
	IdleUtil float64
}

// decisionJSON is the part of a stored decision a story reads.
type decisionJSON struct {
	Action     string   `json:"action"`
	Message    string   `json:"message"`
	Annotation string   `json:"annotation"`
	Notes      []string `json:"notes"`
	Prediction struct {
		GPUMemMiB     struct{ P50, Hi float64 }
		RuntimeSec    struct{ P50, Hi float64 }
		MemSource     string
		RuntimeSource string
		Runs          int
		Why           string
	} `json:"prediction"`
}

// requestJSON is the part of a stored request a story reads.
type requestJSON struct {
	TRES struct {
		PerNode string `json:"per_node"`
		PerJob  string `json:"per_job"`
		PerTask string `json:"per_task"`
	} `json:"tres"`
	TimeLimitMin uint32 `json:"time_limit_min"`
}

// Story is one job's account: the facts and the advice, as WriteStory
// prints them.
type Story struct {
	Job     store.JobRow
	Why     string   // why augurd predicted what it did
	Notes   []string // what augurd did to the job
	Request string   // the GPU request as given (e.g. gres/gpu:a100:4)
	Limit   time.Duration
	GPUs    []outcome.GPU
	// TimeHint is the --time Augur suggested at submission (the
	// annotation's time_hint), "" when none.
	TimeHint string `json:",omitempty"`
	// Live lists what augurd did to the job while it was queued or after
	// it ran (the actions table: signals, preemptions, OOM requeues; not
	// SiteFactor writes), oldest first.
	Live []string `json:",omitempty"`
	// GPUNodes names the node of each of GPUs when the job ran on several
	// (each node reported its own); nil on one node.
	GPUNodes []string `json:",omitempty"`
	Advice   []string
	Decision string // accept or reject
	Message  string // for a refused job, what its user was told
}

// NewStory reads a stored job into a Story and works out the advice.
func NewStory(d store.JobDetail, o StoryOptions) Story {
	if o.IdleUtil <= 0 {
		o.IdleUtil = 5
	}
	s := Story{Job: d.JobRow}
	var dec decisionJSON
	if len(d.Decision) > 0 && json.Unmarshal(d.Decision, &dec) == nil {
		s.Why, s.Notes, s.Decision, s.Message = dec.Prediction.Why, dec.Notes, dec.Action, dec.Message
		for _, f := range strings.Fields(dec.Annotation) {
			if v, ok := strings.CutPrefix(f, "time_hint="); ok {
				s.TimeHint = v
			}
		}
	}
	var req requestJSON
	if len(d.Request) > 0 && json.Unmarshal(d.Request, &req) == nil {
		var parts []string
		for _, t := range []string{req.TRES.PerJob, req.TRES.PerNode, req.TRES.PerTask} {
			if t != "" {
				parts = append(parts, t)
			}
		}
		s.Request = strings.Join(parts, ",")
		s.Limit = wire.LimitDuration(req.TimeLimitMin)
	}
	var rep outcome.Report
	if len(d.NodeReports) > 1 {
		// A multi-node job: every node's GPUs, by node then index.
		for _, nr := range d.NodeReports {
			var r outcome.Report
			if json.Unmarshal(nr.Report, &r) != nil {
				continue
			}
			sort.Slice(r.GPUs, func(i, j int) bool { return r.GPUs[i].Index < r.GPUs[j].Index })
			for _, g := range r.GPUs {
				s.GPUs = append(s.GPUs, g)
				s.GPUNodes = append(s.GPUNodes, nr.Node)
			}
		}
	} else if len(d.Report) > 0 && json.Unmarshal(d.Report, &rep) == nil {
		s.GPUs = rep.GPUs
		sort.Slice(s.GPUs, func(i, j int) bool { return s.GPUs[i].Index < s.GPUs[j].Index })
	}
	for i := len(d.Actions) - 1; i >= 0; i-- { // stored newest first
		a := d.Actions[i]
		if a.Kind == store.ActionSiteFactor {
			continue // priorities move often; the queue wait says what they did
		}
		line := a.At.In(o.location()).Format("2006-01-02T15:04:05") + " " + actionText(a)
		if a.DryRun {
			line += " (dry run: not done)"
		}
		if a.Error != "" {
			line += " (failed: " + a.Error + ")"
		}
		s.Live = append(s.Live, line)
	}
	s.Advice = advise(&s, o)
	return s
}

// timeHintAdvice is the advice of the submit-time time_hint.
func (s *Story) timeHintAdvice() string {
	return fmt.Sprintf("its %s limit is far above the runtime Augur predicted (up to %s): --time=%s lets backfill start it sooner",
		Elapsed(s.Limit.Seconds()), Elapsed(s.Job.PredRuntimeHiSec), s.TimeHint)
}

// location is the zone times are shown in (UTC when none is given).
func (o StoryOptions) location() *time.Location {
	if o.Loc == nil {
		return time.UTC
	}
	return o.Loc
}

// actionText says what a live action did.
func actionText(a store.Action) string {
	switch a.Kind {
	case store.ActionSignal:
		return fmt.Sprintf("sent signal %d: %s", a.Value, a.Reason)
	case store.ActionRequeue:
		return "requeued (preempted): " + a.Reason
	case store.ActionOOMRequeue:
		return a.Reason
	case store.ActionIdleFlag:
		return "flagged (live.idle_gpu): " + a.Reason
	case store.ActionIdleWarn:
		return "warned (live.idle_gpu): " + a.Reason
	case store.ActionIdleCancel:
		return "cancelled (live.idle_gpu): " + a.Reason
	}
	return a.Kind + ": " + a.Reason
}

func capacity(s *Story, o StoryOptions) float64 {
	for _, g := range s.GPUs {
		if g.MemTotalMiB > 0 {
			return g.MemTotalMiB
		}
	}
	for _, t := range o.GPUTypes {
		if t.Name == s.Job.GPUType {
			return t.MemMiB
		}
	}
	return 0
}

// advise is jobstats' habit: say what to change, with the flag to change.
func advise(s *Story, o StoryOptions) []string {
	j := &s.Job
	var out []string
	if !j.HasOutcome {
		if s.Decision == "reject" {
			return []string{"the job was refused at submission: " + s.Message}
		}
		out := []string{"no measurements yet: the job has not ended, or its node does not run augur-node"}
		if s.TimeHint != "" {
			out = append(out, s.timeHintAdvice())
		}
		return out
	}
	n := j.GPUs
	if n == 0 {
		n = len(s.GPUs)
	}
	// GPUs: how many were used, at what utilisation.
	active, activeUtil := 0, 0.0
	if len(s.GPUs) > 0 {
		for _, g := range s.GPUs {
			if g.MeanSMUtil >= o.IdleUtil {
				active++
				activeUtil += g.MeanSMUtil
			}
		}
		if active > 0 {
			activeUtil /= float64(active)
		}
	} else if j.MeanSMUtil >= o.IdleUtil {
		active = max(1, int(math.Ceil(float64(n)*j.MeanSMUtil/100)))
		activeUtil = j.MeanSMUtil * float64(n) / float64(active)
	}
	gres := func(k int) string {
		if j.GPUType != "" {
			return fmt.Sprintf("--gres=gpu:%s:%d", j.GPUType, k)
		}
		return fmt.Sprintf("--gres=gpu:%d", k)
	}
	switch {
	case n > 0 && active == 0:
		out = append(out, fmt.Sprintf("asked for %d GPU%s and used none (mean utilisation %.0f%%): check that the job runs on the GPU (CUDA_VISIBLE_DEVICES, the framework's device), or run it without --gres", n, plural(n), j.MeanSMUtil))
	case n > 1 && active < n:
		out = append(out, fmt.Sprintf("asked for %d GPUs, used %d at %.0f%%: ask for %s, or make the code use all of them (torchrun --nproc_per_node=%d)", n, active, activeUtil, gres(active), n))
	case activeUtil > 0 && activeUtil < 30:
		out = append(out, fmt.Sprintf("GPU utilisation is low (%.0f%%): the GPUs mostly wait; feed them faster (more --cpus-per-task and data-loader workers, a larger batch) or use fewer", activeUtil))
	}
	// Memory.
	capMiB := capacity(s, o)
	if j.OOMSuspect {
		msg := fmt.Sprintf("it looks like it died of GPU out-of-memory (peak %s", Memory(j.PeakGPUMemMiB, 0))
		if capMiB > 0 {
			msg += fmt.Sprintf(" of %s", Memory(capMiB, 0))
		}
		msg += "): ask for a GPU type with more memory"
		if t, ok := fits(o.GPUTypes, capMiB*1.05, true); ok {
			msg += fmt.Sprintf(" (%s)", gresType(t, n))
		}
		out = append(out, msg+", or lower the batch size")
	} else if capMiB > 0 && active > 0 && j.PeakGPUMemMiB > 0 && j.PeakGPUMemMiB < 0.5*capMiB {
		need := n
		if active < n {
			need = active
		}
		if t, ok := fits(o.GPUTypes, j.PeakGPUMemMiB*1.2, false); ok && t.MemMiB < capMiB && t.Name != j.GPUType {
			out = append(out, fmt.Sprintf("peak GPU memory was %s of %s: a %s (%s) would do, and is usually easier to get: %s",
				Memory(j.PeakGPUMemMiB, 0), Memory(capMiB, 0), t.Name, Memory(t.MemMiB, 0), gresType(t, need)))
		}
	}
	if j.PredMemHiMiB > 0 && j.PeakGPUMemMiB > j.PredMemHiMiB {
		out = append(out, fmt.Sprintf("it used more GPU memory than predicted (%s, upper bound %s); augurd learns from this run", Memory(j.PeakGPUMemMiB, 0), Memory(j.PredMemHiMiB, 0)))
	}
	// Time.
	switch {
	case j.State == "TIMEOUT":
		out = append(out, fmt.Sprintf("it ran out of time after %s: ask for more --time, or checkpoint and resubmit", Elapsed(j.RuntimeSec)))
	case s.Limit > 0 && j.State == "COMPLETED" && j.RuntimeSec > 0 && j.RuntimeSec < 0.25*s.Limit.Seconds():
		want := time.Duration(math.Ceil(j.RuntimeSec*1.5/900)) * 15 * time.Minute
		out = append(out, fmt.Sprintf("it ran %s of its %s limit: --time=%s lets the scheduler start it sooner (backfill)",
			Elapsed(j.RuntimeSec), Elapsed(s.Limit.Seconds()), Elapsed(want.Seconds())))
	case s.TimeHint != "" && j.State != "TIMEOUT" && !(j.RuntimeSec > 0 && j.RuntimeSec >= 0.25*s.Limit.Seconds()):
		out = append(out, s.timeHintAdvice())
	}
	if len(out) == 0 {
		out = append(out, "nothing to change: the job used what it asked for")
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func gresType(t GPUType, n int) string { return fmt.Sprintf("--gres=gpu:%s:%d", t.Name, max(n, 1)) }

// fits is the smallest GPU type with at least need MiB (strictly more
// with larger).
func fits(types []GPUType, need float64, larger bool) (GPUType, bool) {
	var best GPUType
	ok := false
	for _, t := range types {
		if t.MemMiB < need || (larger && t.MemMiB <= need/1.05) {
			continue
		}
		if !ok || t.MemMiB < best.MemMiB {
			best, ok = t, true
		}
	}
	return best, ok
}

// WriteStory writes one job's story for its user.
func WriteStory(w io.Writer, s Story, loc *time.Location) error {
	ew := &errWriter{w: w}
	p := ew.printf
	j := &s.Job
	who := j.User
	if who == "" {
		who = uidName(j.UserID)
	}
	p("Job %d", j.JobID)
	if j.Name != "" {
		p(" %q", j.Name)
	}
	p(" of %s", who)
	if j.Account != "" {
		p(", account %s", j.Account)
	}
	if j.Partition != "" {
		p(", partition %s", j.Partition)
	}
	p("\n\n")
	row := func(k, v string) { p("  %-14s %s\n", k, v) }
	st := j.State
	if !j.HasOutcome {
		st = StateUnknown
	}
	if j.HasOutcome && j.Node != "" {
		st += " on " + j.Node
	}
	row("State", st)
	if !j.Submit.IsZero() {
		v := Date(j.Submit, loc)
		if !j.Start.IsZero() {
			v += fmt.Sprintf(", started %s (waited %s)", Date(j.Start, loc), Elapsed(j.Start.Sub(j.Submit).Seconds()))
		}
		row("Submitted", v)
	}
	if j.HasOutcome {
		v := Elapsed(j.RuntimeSec)
		if j.PredRuntimeSec > 0 {
			v += fmt.Sprintf(" (predicted %s, at most %s)", Elapsed(j.PredRuntimeSec), Elapsed(j.PredRuntimeHiSec))
		}
		if s.Limit > 0 {
			v += fmt.Sprintf("; limit %s", Elapsed(s.Limit.Seconds()))
		}
		row("Ran", v)
		g := fmt.Sprintf("%d", j.GPUs)
		if j.GPUType != "" {
			g += " x " + j.GPUType
		}
		if s.Request != "" {
			g += " (asked: " + s.Request + ")"
		}
		row("GPUs", g)
		mem := "peak " + Memory(j.PeakGPUMemMiB, 0) + " per GPU"
		if j.PredMemMiB > 0 {
			mem += fmt.Sprintf(" (predicted %s, at most %s, from %s)", Memory(j.PredMemMiB, 0), Memory(j.PredMemHiMiB, 0), j.PredSource)
		}
		row("GPU memory", mem)
		row("GPU use", fmt.Sprintf("%.0f%% mean SM utilisation, %s", j.MeanSMUtil, energyText(j.EnergyJ)))
	} else if j.PredMemMiB > 0 {
		row("Predicted", fmt.Sprintf("%s GPU memory (at most %s, from %s), runtime %s", Memory(j.PredMemMiB, 0),
			Memory(j.PredMemHiMiB, 0), j.PredSource, Elapsed(j.PredRuntimeSec)))
	}
	if s.Why != "" {
		row("Why", s.Why)
	}
	for _, n := range s.Notes {
		row("Augur did", n)
	}
	for _, n := range s.Live {
		row("Augur did", n)
	}
	if len(s.GPUs) > 0 {
		width := 5
		for _, n := range s.GPUNodes {
			width = max(width, len(n)+4)
		}
		p("\n  %-*s %-10s %10s %10s %8s %8s\n", width, "GPU", "model", "peak", "of", "mean SM", "p95 SM")
		for i, g := range s.GPUs {
			name := g.Name
			if name == "" {
				name = "-"
			}
			gpu := strconv.Itoa(g.Index)
			if i < len(s.GPUNodes) {
				gpu = s.GPUNodes[i] + "/" + gpu
			}
			p("  %-*s %-10s %10s %10s %7.0f%% %7.0f%%\n", width, gpu, name, Memory(g.PeakMiB, 0), Memory(g.MemTotalMiB, 0), g.MeanSMUtil, g.P95SMUtil)
		}
	}
	p("\nAdvice\n")
	for _, a := range s.Advice {
		p("  - %s\n", a)
	}
	return ew.err
}

func energyText(j float64) string {
	if j <= 0 {
		return "energy unknown"
	}
	return fmt.Sprintf("%.2f kWh of GPU energy", j/3.6e6)
}
