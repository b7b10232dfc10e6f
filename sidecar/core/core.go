package core

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// GPUType is one GPU type of the cluster, in the policy's preference order.
type GPUType struct {
	Name   string
	MemMiB float64
	// Shards is how many gres/shard each GPU of the type carries (0: none).
	Shards int
	// Aliases are the site's other names for the type: node features,
	// partitions, account suffixes, QOS and reservation names (see
	// gputype.go).
	Aliases []string
}

// Policy is the site's choices for submissions.
type Policy struct {
	// GPUTypes in preference order: a typeless request goes to the first that fits.
	GPUTypes []GPUType
	// RewriteTypeless names a type for requests that name none.
	RewriteTypeless bool
	// RewriteTyped moves a request that names a type too small for the
	// predicted peak to the first type that holds it.
	RewriteTyped bool
	// RewriteFromPrior lets the two rewrites rest on the shipped prior's
	// and the transformer formula's calibrated upper bounds, not only on
	// earlier runs and the trained model.
	RewriteFromPrior bool
	// RejectCertainOOM rejects jobs whose named type is smaller than every recorded run.
	RejectCertainOOM bool
	// MinRunsToReject is how many runs must agree before RejectCertainOOM acts.
	MinRunsToReject int
	// SiteFactorMax is the largest initial SiteFactor; 0 sets none.
	SiteFactorMax int64
	// ShardSmallJobs gives small one-GPU jobs gres/shard instead (see shard.go).
	ShardSmallJobs bool
	// TimeMin sets a predictable job's Slurm TimeMin to its upper predicted
	// runtime (live.time_min, predictor.TimeMin); TimeMinDryRun only
	// annotates it.
	TimeMin, TimeMinDryRun bool
}

// GPUMemMiB returns each type's memory, keyed by name.
func (p Policy) GPUMemMiB() map[string]float64 {
	m := make(map[string]float64, len(p.GPUTypes))
	for _, t := range p.GPUTypes {
		m[t.Name] = t.MemMiB
	}
	return m
}

// Input is everything one decision looks at.
type Input struct {
	Request *wire.Request
	// Job is the predictor's view of Request, from JobFromRequest; GresErr is
	// the error JobFromRequest returned, if any.
	Job     predictor.Job
	GresErr error
	// History holds the earlier outcomes of the same user and script
	// signature, newest first.
	History   []predictor.Outcome
	Policy    Policy
	Predictor predictor.Predictor
	// Layout is the cluster's nodes; a rewritten request must fit them
	// (nil: not known yet, so nothing is rewritten).
	Layout *Layout
}

// Decision is the outcome for one submission.
type Decision struct {
	Action     wire.Action
	Message    string
	Annotation string
	TRES       *wire.TRES
	SiteFactor *int64
	// TimeMin is the job's Slurm TimeMin (0: none).
	TimeMin    time.Duration
	Prediction predictor.Prediction
	Signature  string
	// Notes record why, for the store and the logs (not shown to the user).
	Notes []string
}

// Response turns the decision into what goes back to the shim.
func (d Decision) Response(token string) wire.Response {
	return wire.Response{
		V:          wire.Version,
		Token:      token,
		Action:     d.Action,
		Annotation: d.Annotation,
		TRES:       d.TRES,
		SiteFactor: d.SiteFactor,
		TimeMinMin: uint32(d.TimeMin / time.Minute),
		Message:    d.Message,
	}
}

// JobFromRequest extracts the predictor's view of a submission, its script
// read through scripts (nil: read afresh). A GPU request that does not parse
// is reported, and the job is treated as asking for none.
func JobFromRequest(r *wire.Request, scripts *predictor.ScriptCache) (predictor.Job, error) {
	return JobFromScript(r, scripts.ParseFiles(r.Script, r.ScriptArgs(), r.Env, r.Files))
}

// JobFromScript is JobFromRequest given the reading of r's script (with
// its arguments, environment and files) that JobFromRequest would make.
func JobFromScript(r *wire.Request, script predictor.Script) (predictor.Job, error) {
	gpus, err := predictor.GPURequests(r.TRES.PerNode, r.TRES.PerJob, r.TRES.PerTask, r.TRES.PerSocket)
	job := predictor.Job{
		UserID:    r.UserID,
		Account:   r.Account,
		Partition: r.Partition,
		Name:      r.Name,
		Script:    script,
		GPUs:      gpus,
		TimeLimit: wire.LimitDuration(r.TimeLimitMin),
	}
	return job, err
}

// judged is what Decide works out once per request for its rules: the
// nodes the job may run on, and the GPU types its request allows beside its
// gres (gputype.go).
type judged struct {
	elig  *eligibility
	scope typeScope
}

// Decide is the whole submission decision. It is pure and never panics on
// any request the wire decoder accepts (a fuzz test holds it to that).
func Decide(in Input) Decision {
	d := Decision{Action: wire.Accept}
	job, gresErr := in.Job, in.GresErr
	d.Signature = job.Script.Signature
	if gresErr != nil {
		d.Notes = append(d.Notes, "gres not understood: "+gresErr.Error())
	}
	var j judged
	j.elig = in.Layout.eligible(in.Request)
	j.scope = scopeOf(in, j.elig)
	d.Notes = append(d.Notes, j.scope.notes...)
	typeless := job.WantsGPUs() && !typedGPUs(job)
	if t, ok := j.scope.only(); ok && typeless {
		// The one type the constraint (or partition, ...) leaves bounds
		// the job's memory as a named type would.
		job.GPUTypeHint = t
	}
	d.Prediction = in.Predictor.Predict(job, in.History)
	from := ""
	if typeless && j.scope.limited {
		from = j.scope.from[0]
	}

	if tres, typ, note := rewriteTooSmall(in, job, d.Prediction, j); tres != nil && tres.Validate() == nil {
		d.TRES = tres
		d.Notes = append(d.Notes, note)
		if sf, ok := siteFactor(in.Policy, d.Prediction); ok {
			d.SiteFactor = &sf
		}
		d.Annotation = annotation(in.Request.Token, d.Prediction, typ, from) + timeHintNote(&d, in.Request) + timeMinNote(&d, in.Request, in.Policy)
		return d
	}
	if msg, ok := certainOOM(in, job, j); ok {
		d.Action = wire.Reject
		d.Message = msg
		d.Annotation = annotation(in.Request.Token, d.Prediction, "", from)
		d.Notes = append(d.Notes, "rejected: certain GPU out-of-memory")
		return d
	}

	placed := ""
	if tres, where, note := shardSmall(in, job, d.Prediction, j); tres != nil {
		d.TRES, placed = tres, where
		d.Notes = append(d.Notes, note)
	} else if note != "" {
		d.Notes = append(d.Notes, note)
	}
	if gresErr == nil && d.TRES == nil {
		if tres, typ, note := rewriteTypeless(in, job, d.Prediction, j); tres != nil {
			d.TRES, placed = tres, typ
			d.Notes = append(d.Notes, note)
		} else if note != "" {
			d.Notes = append(d.Notes, note)
		}
	}
	if d.TRES != nil {
		if err := d.TRES.Validate(); err != nil {
			// A rewrite keeps the user's other strings as they came; one
			// Slurm could not parse leaves the request as it was.
			d.TRES, placed = nil, ""
			d.Notes = append(d.Notes, "GPU request left alone: "+err.Error())
		}
	}
	if sf, ok := siteFactor(in.Policy, d.Prediction); ok {
		d.SiteFactor = &sf
	}
	d.Annotation = annotation(in.Request.Token, d.Prediction, placed, from) + timeHintNote(&d, in.Request) + timeMinNote(&d, in.Request, in.Policy)
	return d
}

// typedGPUs reports whether any GPU request of the job names a type (a job
// naming two types has no single GPUType, but is typed all the same).
func typedGPUs(job predictor.Job) bool {
	for _, g := range job.GPUs {
		if g.Type != "" {
			return true
		}
	}
	return false
}

// certainOOM finds jobs that name a GPU type smaller than the peak of every
// one of their recorded runs: such a job will die of GPU out-of-memory.
func certainOOM(in Input, job predictor.Job, j judged) (string, bool) {
	pol := in.Policy
	if !pol.RejectCertainOOM || job.GPUType() == "" {
		return "", false
	}
	typ := job.GPUType()
	capMiB, known := pol.GPUMemMiB()[typ]
	if !known {
		return "", false
	}
	minRuns := max(pol.MinRunsToReject, 1)
	least, runs := math.Inf(1), 0
	for _, o := range in.History {
		if o.PeakGPUMemMiB <= 0 {
			continue
		}
		runs++
		least = math.Min(least, o.PeakGPUMemMiB)
	}
	if runs < minRuns || least <= capMiB {
		return "", false
	}
	suggest := ""
	for _, t := range pol.GPUTypes {
		if t.MemMiB >= least*1.05 {
			also := ""
			if !j.scope.allows(t.Name) {
				also = fmt.Sprintf(" (and a %s that allows it)", strings.Join(j.scope.from, " and "))
			}
			suggest = fmt.Sprintf(" Ask for a larger GPU type, for example --gres=gpu:%s:N%s, or lower the batch size.", t.Name, also)
			break
		}
	}
	if suggest == "" {
		suggest = " No GPU type here has that much memory: lower the batch size, or shard the model (e.g. ZeRO or FSDP)."
	}
	return fmt.Sprintf("augur: this job used at least %s of GPU memory in each of its %d earlier runs, more than the %s of a %s GPU, so it would fail with GPU out-of-memory.%s",
		FormatMiB(least), runs, FormatMiB(capMiB), typ, suggest), true
}

// rewriteTypeless names the first configured GPU type that fits the
// predicted upper quantile, for requests that name no type. A job is moved
// only on a real prediction, never on the default.
func rewriteTypeless(in Input, job predictor.Job, p predictor.Prediction, j judged) (*wire.TRES, string, string) {
	pol := in.Policy
	if !pol.RewriteTypeless || !job.WantsGPUs() || len(pol.GPUTypes) == 0 {
		return nil, "", ""
	}
	for _, g := range job.GPUs {
		if g.Shard || g.Type != "" {
			return nil, "", "" // the user chose; leave it
		}
	}
	// Only a real estimate of the peak moves a job: earlier runs or the
	// trained forest, and the prior and the formula where the site says so.
	// The default is the request itself, and the analytic figure is a
	// floor, not an upper bound.
	if !movesJobs(p.MemSource, pol) || !p.GPUMemMiB.Known() {
		return nil, "", "typeless GPU request left alone: no upper bound on its memory yet"
	}
	candidates := j.scope.candidates(pol.GPUTypes)
	if len(candidates) == 0 {
		return nil, "", "typeless GPU request left alone: " + j.scope.why()
	}
	holds := false
	for _, t := range candidates {
		if t.MemMiB < p.GPUMemMiB.Hi {
			continue
		}
		holds = true
		out, changed, err := rewriteTRES(in.Request.TRES, func(s string) (string, bool, error) {
			return predictor.SetGPUType(s, t.Name)
		})
		if err != nil {
			return nil, "", "typeless GPU request left alone: " + err.Error()
		}
		if !changed {
			return nil, "", ""
		}
		if !j.elig.places(in.Request, out) {
			continue // not enough nodes of its partition have that many
		}
		return &out, t.Name, fmt.Sprintf("GPU type %s chosen: first type holding the predicted %s that the partition can place", t.Name, FormatMiB(p.GPUMemMiB.Hi))
	}
	if !holds {
		if j.scope.limited {
			return nil, "", fmt.Sprintf("typeless GPU request left alone: no GPU type its %s allows holds %s",
				strings.Join(j.scope.from, " and "), FormatMiB(p.GPUMemMiB.Hi))
		}
		return nil, "", fmt.Sprintf("typeless GPU request left alone: no GPU type holds %s", FormatMiB(p.GPUMemMiB.Hi))
	}
	return nil, "", fmt.Sprintf("typeless GPU request left alone: no type holding %s has enough GPUs on the partition's nodes%s",
		FormatMiB(p.GPUMemMiB.Hi), layoutNote(in.Layout))
}

// rewriteTRES applies f to each of the four request strings, stopping at
// the first error, and reports whether any changed.
func rewriteTRES(t wire.TRES, f func(string) (string, bool, error)) (wire.TRES, bool, error) {
	changed := false
	for _, p := range []*string{&t.PerNode, &t.PerJob, &t.PerTask, &t.PerSocket} {
		s, ok, err := f(*p)
		if err != nil {
			return t, false, err
		}
		*p, changed = s, changed || ok
	}
	return t, changed, nil
}

// layoutNote explains a rewrite refused for want of a layout.
func layoutNote(l *Layout) string {
	if l == nil {
		return " (augurd has not read the nodes yet)"
	}
	return ""
}

// movesJobs reports whether a memory prediction's source may move a job:
// earlier runs and the trained forest always, the shipped prior and the
// formula (calibrated upper bounds, but no run of this site behind them)
// when the policy allows.
func movesJobs(s predictor.Source, pol Policy) bool {
	switch s {
	case predictor.SourceHistory, predictor.SourceForest:
		return true
	case predictor.SourcePrior, predictor.SourceFormula:
		return pol.RewriteFromPrior
	}
	return false
}

// rewriteTooSmall moves a job that names a GPU type too small for its
// predicted peak (from its own runs or the forest) to the first configured
// type that holds it, when the admin opted in.
func rewriteTooSmall(in Input, job predictor.Job, p predictor.Prediction, j judged) (*wire.TRES, string, string) {
	pol := in.Policy
	from := job.GPUType()
	if !pol.RewriteTyped || from == "" || in.GresErr != nil || !p.GPUMemMiB.Known() ||
		!movesJobs(p.MemSource, pol) {
		return nil, "", ""
	}
	mem := pol.GPUMemMiB()
	capMiB, known := mem[from]
	if !known || p.GPUMemMiB.Hi <= capMiB {
		return nil, "", ""
	}
	for _, t := range j.scope.candidates(pol.GPUTypes) {
		if t.MemMiB < p.GPUMemMiB.Hi {
			continue
		}
		out, changed, err := rewriteTRES(in.Request.TRES, func(s string) (string, bool, error) {
			return predictor.ReplaceGPUType(s, from, t.Name)
		})
		if err != nil || !changed {
			return nil, "", ""
		}
		if !j.elig.places(in.Request, out) {
			continue
		}
		return &out, t.Name, fmt.Sprintf("GPU type %s replaced by %s: the predicted %s does not fit %s", from, t.Name,
			FormatMiB(p.GPUMemMiB.Hi), FormatMiB(capMiB))
	}
	return nil, "", ""
}

// siteFactorHorizon is the runtime at which the initial SiteFactor reaches 0.
const siteFactorHorizon = 7 * 24 * time.Hour

// siteFactor gives jobs with a history-based runtime an initial SiteFactor
// that falls with the logarithm of their predicted upper runtime: a 10-minute
// job gets most of SiteFactorMax, a week-long job none. Jobs without such a
// prediction keep Slurm's own (0).
func siteFactor(pol Policy, p predictor.Prediction) (int64, bool) {
	if pol.SiteFactorMax <= 0 || p.RuntimeSource != predictor.SourceHistory || !p.RuntimeSec.Known() {
		return 0, false
	}
	frac := 1 - math.Log1p(p.RuntimeSec.Hi)/math.Log1p(siteFactorHorizon.Seconds())
	frac = math.Max(0, math.Min(1, frac))
	return int64(math.Round(frac * float64(pol.SiteFactorMax))), true
}

// annotation is the text appended to AdminComment. It starts with "augur:",
// carries the submission token (how augurd finds the job again), and the
// predictions in sacct's styles; gpu_type names the type Augur placed the
// job on, gpu_type_from where the GPU types a typeless request allows came
// from (constraint, partition, account, qos, reservation).
func annotation(token string, p predictor.Prediction, placed, from string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "augur:tok=%s", token)
	fmt.Fprintf(&b, " pred_gpu_mem=%s", quant(p.GPUMemMiB, FormatMiB))
	fmt.Fprintf(&b, " pred_time=%s", quant(p.RuntimeSec, FormatSeconds))
	fmt.Fprintf(&b, " src=%s/%s", p.MemSource, p.RuntimeSource)
	if p.Runs > 0 {
		fmt.Fprintf(&b, " runs=%d", p.Runs)
	}
	if shard, ok := strings.CutPrefix(placed, "shard:"); ok {
		fmt.Fprintf(&b, " shard=%s", shard)
	} else if placed != "" {
		fmt.Fprintf(&b, " gpu_type=%s", placed)
	}
	if from != "" {
		fmt.Fprintf(&b, " gpu_type_from=%s", from)
	}
	return b.String()
}

// timeHintNote is the annotation's time_hint (with a note for the store)
// when the job's limit is far above its predicted runtime.
func timeHintNote(d *Decision, r *wire.Request) string {
	limit := wire.LimitDuration(r.TimeLimitMin)
	hint, ok := predictor.TimeHint(d.Prediction, limit)
	if !ok {
		return ""
	}
	d.Notes = append(d.Notes, fmt.Sprintf("time limit %s is %.0fx the predicted upper runtime %s: --time=%s would let backfill start it sooner",
		FormatSeconds(limit.Seconds()), limit.Seconds()/d.Prediction.RuntimeSec.Hi, FormatSeconds(d.Prediction.RuntimeSec.Hi), FormatSeconds(hint.Seconds())))
	return " time_hint=" + FormatSeconds(hint.Seconds())
}

// timeMinNote sets the job's TimeMin (live.time_min) and is the
// annotation's time_min; a dry run annotates it without setting it.
func timeMinNote(d *Decision, r *wire.Request, p Policy) string {
	if !p.TimeMin && !p.TimeMinDryRun {
		return ""
	}
	tm, ok := predictor.TimeMin(d.Prediction, wire.LimitDuration(r.TimeLimitMin))
	if !ok {
		return ""
	}
	if !p.TimeMin {
		return " time_min=" + FormatSeconds(tm.Seconds()) + "(dry_run)"
	}
	d.TimeMin = tm
	d.Notes = append(d.Notes, fmt.Sprintf("TimeMin %s (the upper predicted runtime): backfill may start it on a limit cut down to that",
		FormatSeconds(tm.Seconds())))
	return " time_min=" + FormatSeconds(tm.Seconds())
}

func quant(q predictor.Quantiles, f func(float64) string) string {
	if !q.Known() {
		if q.P50 > 0 {
			return "min:" + f(q.P50) // a floor, no upper bound
		}
		return "unknown"
	}
	if q.P50 == q.Hi {
		return f(q.Hi)
	}
	return f(q.P50) + "(p95:" + f(q.Hi) + ")"
}

// FormatMiB writes a size the way sacct does: 512M, 15.2G, 1.5T.
func FormatMiB(mib float64) string {
	switch {
	case mib >= 1<<20:
		return trim(mib/(1<<20)) + "T"
	case mib >= 1<<10:
		return trim(mib/(1<<10)) + "G"
	default:
		return trim(mib) + "M"
	}
}

func trim(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	return strings.TrimSuffix(s, ".0")
}

// FormatSeconds writes a duration as Slurm does: [D-]HH:MM:SS.
func FormatSeconds(sec float64) string {
	s := int64(math.Round(sec))
	d, s := s/86400, s%86400
	h, s := s/3600, s%3600
	m, s := s/60, s%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}
