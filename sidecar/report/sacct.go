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

	"github.com/augur-hpc/augur/sidecar/store"
)

// StateUnknown is the State of a job Augur saw submitted but has no outcome
// for: pending, running, cancelled before it started, or ended on a node
// without augur-node. sacct knows which; the store does not.
const StateUnknown = "UNKNOWN"

// Context is what a value needs besides the job.
type Context struct {
	Loc  *time.Location // times are shown in it (sacct: local time)
	Unit byte           // --units: 'K'...'P', 0 for automatic
	// GPUMemMiB is each GPU type's memory (cluster.gpu_types), for OOMRisk.
	GPUMemMiB map[string]float64
}

// Field is one sacct column.
type Field struct {
	Name string
	// Width is sacct's default: positive right-justifies, negative
	// left-justifies (as sacct's print_fields).
	Width int
	Augur bool // Augur's own, not sacct's
	Help  string
	value func(j *store.JobRow, c *Context) string
}

// Fields are the columns augur sacct knows: sacct's own (same names, widths
// and value styles) and Augur's.
var Fields = []*Field{
	{Name: "Account", Width: 10, value: func(j *store.JobRow, _ *Context) string { return j.Account }},
	{Name: "AllocTRES", Width: 10, Help: "GPUs only (gres/gpu)", value: allocTRES},
	{Name: "Elapsed", Width: 10, value: func(j *store.JobRow, _ *Context) string { return Elapsed(elapsed(j)) }},
	{Name: "ElapsedRaw", Width: 10, value: func(j *store.JobRow, _ *Context) string {
		return strconv.FormatInt(int64(elapsed(j)), 10)
	}},
	{Name: "End", Width: 19, value: func(j *store.JobRow, c *Context) string { return Date(j.End, c.Loc) }},
	{Name: "JobID", Width: -12, value: jobID},
	{Name: "JobIDRaw", Width: -12, value: jobID},
	{Name: "JobName", Width: 10, value: func(j *store.JobRow, _ *Context) string { return j.Name }},
	{Name: "NNodes", Width: 8, value: func(j *store.JobRow, _ *Context) string {
		if j.Node == "" {
			return "0"
		}
		return "1"
	}},
	{Name: "NodeList", Width: 15, value: func(j *store.JobRow, _ *Context) string {
		if j.Node == "" {
			return "None assigned"
		}
		return j.Node
	}},
	{Name: "Partition", Width: 10, value: func(j *store.JobRow, _ *Context) string { return j.Partition }},
	{Name: "QOS", Width: 10, value: func(j *store.JobRow, _ *Context) string { return j.QOS }},
	{Name: "Reserved", Width: 10, Help: "queue wait: submit to start", value: func(j *store.JobRow, _ *Context) string {
		if j.Start.IsZero() || j.Submit.IsZero() {
			return Elapsed(0)
		}
		return Elapsed(j.Start.Sub(j.Submit).Seconds())
	}},
	{Name: "Start", Width: 19, value: func(j *store.JobRow, c *Context) string { return Date(j.Start, c.Loc) }},
	{Name: "State", Width: 10, value: state},
	{Name: "Submit", Width: 19, value: func(j *store.JobRow, c *Context) string { return Date(j.Submit, c.Loc) }},
	{Name: "UID", Width: 6, value: func(j *store.JobRow, _ *Context) string { return strconv.FormatUint(uint64(j.UserID), 10) }},
	{Name: "User", Width: 9, value: user},

	{Name: "GPUType", Width: 8, Augur: true, Help: "GPU type the job ran on", value: func(j *store.JobRow, _ *Context) string { return j.GPUType }},
	{Name: "NGPUs", Width: 6, Augur: true, Help: "GPUs the job had", value: func(j *store.JobRow, _ *Context) string { return strconv.Itoa(j.GPUs) }},
	{Name: "PredGPUMem", Width: 10, Augur: true, Help: "predicted peak GPU memory per GPU (median)", value: func(j *store.JobRow, c *Context) string {
		return Memory(j.PredMemMiB, c.Unit)
	}},
	{Name: "PredGPUMemHi", Width: 12, Augur: true, Help: "predicted peak GPU memory per GPU (upper bound)", value: func(j *store.JobRow, c *Context) string {
		return Memory(j.PredMemHiMiB, c.Unit)
	}},
	{Name: "PeakGPUMem", Width: 10, Augur: true, Help: "peak GPU memory per GPU, measured", value: func(j *store.JobRow, c *Context) string {
		return Memory(j.PeakGPUMemMiB, c.Unit)
	}},
	{Name: "PredElapsed", Width: 11, Augur: true, Help: "predicted runtime (median)", value: func(j *store.JobRow, _ *Context) string { return Elapsed(j.PredRuntimeSec) }},
	{Name: "PredElapsedHi", Width: 13, Augur: true, Help: "predicted runtime (upper bound)", value: func(j *store.JobRow, _ *Context) string { return Elapsed(j.PredRuntimeHiSec) }},
	{Name: "GPUUtil", Width: 7, Augur: true, Help: "mean SM utilisation over the job's GPUs", value: func(j *store.JobRow, _ *Context) string {
		if !j.HasOutcome {
			return ""
		}
		return fmt.Sprintf("%.0f%%", j.MeanSMUtil)
	}},
	{Name: "GPUEnergy", Width: 10, Augur: true, Help: "energy of the job's GPUs, joules", value: func(j *store.JobRow, _ *Context) string { return energy(j.EnergyJ) }},
	{Name: "PredSource", Width: 10, Augur: true, Help: "what the memory prediction came from", value: func(j *store.JobRow, _ *Context) string { return j.PredSource }},
	{Name: "OOMRisk", Width: 7, Augur: true, Help: "oom: looks like it died of GPU out-of-memory; high/medium/low: predicted upper bound or peak against the GPU's memory", value: oomRisk},
}

// elapsed is End - Start in whole seconds, as sacct computes it, or the
// node's measured runtime when either is unknown.
func elapsed(j *store.JobRow) float64 {
	if !j.Start.IsZero() && !j.End.IsZero() {
		return float64(j.End.Unix() - j.Start.Unix())
	}
	return math.Round(j.RuntimeSec)
}

func jobID(j *store.JobRow, _ *Context) string { return strconv.FormatUint(j.JobID, 10) }

func user(j *store.JobRow, _ *Context) string {
	if j.User != "" {
		return j.User
	}
	return strconv.FormatUint(uint64(j.UserID), 10)
}

func state(j *store.JobRow, _ *Context) string {
	if !j.HasOutcome || j.State == "" {
		return StateUnknown
	}
	return j.State
}

func allocTRES(j *store.JobRow, _ *Context) string {
	if j.GPUs <= 0 {
		return ""
	}
	if j.GPUType != "" {
		return fmt.Sprintf("gres/gpu:%s=%d,gres/gpu=%d", j.GPUType, j.GPUs, j.GPUs)
	}
	return fmt.Sprintf("gres/gpu=%d", j.GPUs)
}

// energy formats joules as sacct's ConsumedEnergy: plain below 1024, then
// K, M, ... in steps of 1024.
func energy(j float64) string {
	if j <= 0 {
		return "0"
	}
	if j < 1024 {
		return strconv.FormatFloat(math.Round(j), 'f', -1, 64)
	}
	i := 0
	for j /= 1024; j >= 1024 && i < len(unitLetters)-1; i++ {
		j /= 1024
	}
	if j == math.Trunc(j) {
		return fmt.Sprintf("%.0f%c", j, unitLetters[i])
	}
	return fmt.Sprintf("%.2f%c", j, unitLetters[i])
}

// OOMRisk grades a job's GPU out-of-memory risk: "oom" when it looks like
// it died of one, else high (95% or more of the GPU's memory), medium (80%)
// or low, from the larger of its predicted upper bound and its measured
// peak; "" when the GPU's memory is unknown.
func OOMRisk(j *store.JobRow, gpuMemMiB map[string]float64) string {
	if j.OOMSuspect {
		return "oom"
	}
	capMiB := gpuMemMiB[j.GPUType]
	need := math.Max(j.PredMemHiMiB, j.PeakGPUMemMiB)
	if capMiB <= 0 || need <= 0 {
		return ""
	}
	switch r := need / capMiB; {
	case r >= 0.95:
		return "high"
	case r >= 0.8:
		return "medium"
	}
	return "low"
}

func oomRisk(j *store.JobRow, c *Context) string { return OOMRisk(j, c.GPUMemMiB) }

// DefaultFormat is augur sacct's columns without -o: sacct's default
// (JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode) minus what the
// store does not have, plus the GPU figures.
const DefaultFormat = "JobID,JobName,Partition,Account,State,Elapsed,PredGPUMem,PeakGPUMem,GPUUtil"

// Column is a field with the width it is printed at.
type Column struct {
	Field *Field
	Width int
}

// ParseFormat reads sacct's -o/--format: comma-separated field names, any
// case, each with an optional %N width (negative: left-justified). A name
// may be shortened to a prefix that names one field.
func ParseFormat(s string) ([]Column, error) {
	var out []Column
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, width, hasWidth := strings.Cut(item, "%")
		f, err := lookupField(name)
		if err != nil {
			return nil, err
		}
		c := Column{Field: f, Width: f.Width}
		if hasWidth {
			n, err := strconv.Atoi(width)
			if err != nil || n == 0 || n > 1000 || n < -1000 {
				return nil, fmt.Errorf("%w: field %q: width %q: want %%N, e.g. JobName%%30", ErrSyntax, item, width)
			}
			c.Width = n
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no fields in %q", ErrSyntax, s)
	}
	return out, nil
}

func lookupField(name string) (*Field, error) {
	var match []*Field
	for _, f := range Fields {
		if strings.EqualFold(f.Name, name) {
			return f, nil
		}
		if len(name) > 0 && len(name) <= len(f.Name) && strings.EqualFold(f.Name[:len(name)], name) {
			match = append(match, f)
		}
	}
	if len(match) == 1 {
		return match[0], nil
	}
	return nil, fmt.Errorf("%w: unknown field %q (augur sacct --helpformat lists them)", ErrSyntax, name)
}

// WriteHelpFormat lists the fields as sacct --helpformat does, Augur's
// after sacct's.
func WriteHelpFormat(w io.Writer) error {
	var std, own []string
	for _, f := range Fields {
		if f.Augur {
			own = append(own, f.Name)
		} else {
			std = append(std, f.Name)
		}
	}
	grid := func(names []string) string {
		var b strings.Builder
		for i, n := range names {
			fmt.Fprintf(&b, "%-18s", n)
			if i%4 == 3 || i == len(names)-1 {
				b.WriteString("\n")
			}
		}
		return b.String()
	}
	_, err := fmt.Fprintf(w, "%s\nAugur's own:\n%s", grid(std), grid(own))
	return err
}

// Parsable is sacct's -p (fields end in '|') and -P (fields separated by
// '|').
type Parsable int

// The output styles.
const (
	Columns   Parsable = iota // fixed width, right-justified unless negative
	Parsable1                 // -p, --parsable
	Parsable2                 // -P, --parsable2
)

// Table writes jobs as sacct does.
type Table struct {
	Columns  []Column
	Style    Parsable
	NoHeader bool
	Ctx      Context
}

// cell pads or truncates v to width as sacct's print_fields_str: a value
// too long ends in '+'.
func cell(v string, width int) string {
	w := width
	if w < 0 {
		w = -w
	}
	if len(v) > w {
		v = v[:w-1] + "+"
	}
	if width < 0 {
		return fmt.Sprintf("%-*s", w, v)
	}
	return fmt.Sprintf("%*s", w, v)
}

func (t *Table) line(w io.Writer, vals []string) error {
	var b strings.Builder
	for i, v := range vals {
		switch t.Style {
		case Parsable1:
			b.WriteString(v)
			b.WriteByte('|')
		case Parsable2:
			if i > 0 {
				b.WriteByte('|')
			}
			b.WriteString(v)
		default:
			b.WriteString(cell(v, t.Columns[i].Width))
			b.WriteByte(' ')
		}
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// Header writes the header (and, in columns, the dashed line), unless
// NoHeader.
func (t *Table) Header(w io.Writer) error {
	if t.NoHeader {
		return nil
	}
	names := make([]string, len(t.Columns))
	dashes := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Field.Name
		dashes[i] = strings.Repeat("-", max(c.Width, -c.Width))
	}
	if err := t.line(w, names); err != nil {
		return err
	}
	if t.Style == Columns {
		return t.line(w, dashes)
	}
	return nil
}

// Row writes one job.
func (t *Table) Row(w io.Writer, j *store.JobRow) error {
	vals := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		vals[i] = c.Field.value(j, &t.Ctx)
	}
	return t.line(w, vals)
}

// jsonJob mirrors the part of sacct --json's job object (Slurm 22.05,
// data_parser v0.0.38) that the store can fill, plus Augur's figures.
type jsonJob struct {
	Account   string    `json:"account"`
	JobID     uint64    `json:"job_id"`
	Name      string    `json:"name"`
	Nodes     string    `json:"nodes"`
	Partition string    `json:"partition"`
	QOS       string    `json:"qos"`
	State     jsonState `json:"state"`
	Time      jsonTime  `json:"time"`
	TRES      jsonTRES  `json:"tres"`
	User      string    `json:"user"`
	Augur     jsonAugur `json:"augur"`
}

type jsonState struct {
	Current string `json:"current"`
	Reason  string `json:"reason"`
}

type jsonTime struct {
	Elapsed    int64 `json:"elapsed"`
	Start      int64 `json:"start"`
	End        int64 `json:"end"`
	Submission int64 `json:"submission"`
}

type jsonTRESItem struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Count int    `json:"count"`
}

type jsonTRES struct {
	Allocated []jsonTRESItem `json:"allocated"`
}

type jsonAugur struct {
	GPUType          string  `json:"gpu_type,omitempty"`
	GPUs             int     `json:"gpus"`
	PredGPUMemMiB    float64 `json:"pred_gpu_mem_mib"`
	PredGPUMemHiMiB  float64 `json:"pred_gpu_mem_hi_mib"`
	PeakGPUMemMiB    float64 `json:"peak_gpu_mem_mib"`
	PredElapsedSec   float64 `json:"pred_elapsed_seconds"`
	PredElapsedHiSec float64 `json:"pred_elapsed_hi_seconds"`
	GPUUtilPercent   float64 `json:"gpu_util_percent"`
	GPUEnergyJ       float64 `json:"gpu_energy_joules"`
	PredSource       string  `json:"pred_source,omitempty"`
	OOMRisk          string  `json:"oom_risk,omitempty"`
	Token            string  `json:"token,omitempty"`
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// WriteJSON writes jobs as sacct --json's {"jobs": [...]} with Augur's
// figures under "augur" in each job; jobs are sorted by job id.
func WriteJSON(w io.Writer, jobs []store.JobRow, c Context) error {
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].JobID < jobs[b].JobID })
	out := struct {
		Meta   map[string]any `json:"meta"`
		Errors []string       `json:"errors"`
		Jobs   []jsonJob      `json:"jobs"`
	}{Meta: map[string]any{"plugin": map[string]string{"type": "augur", "name": "augur sacct"}}, Errors: []string{}, Jobs: []jsonJob{}}
	for i := range jobs {
		j := &jobs[i]
		jj := jsonJob{
			Account: j.Account, JobID: j.JobID, Name: j.Name, Nodes: j.Node, Partition: j.Partition, QOS: j.QOS,
			State: jsonState{Current: state(j, &c), Reason: "None"},
			Time: jsonTime{Elapsed: int64(elapsed(j)), Start: unixOrZero(j.Start), End: unixOrZero(j.End),
				Submission: unixOrZero(j.Submit)},
			TRES: jsonTRES{Allocated: []jsonTRESItem{}},
			User: user(j, &c),
			Augur: jsonAugur{GPUType: j.GPUType, GPUs: j.GPUs, PredGPUMemMiB: j.PredMemMiB, PredGPUMemHiMiB: j.PredMemHiMiB,
				PeakGPUMemMiB: j.PeakGPUMemMiB, PredElapsedSec: j.PredRuntimeSec, PredElapsedHiSec: j.PredRuntimeHiSec,
				GPUUtilPercent: j.MeanSMUtil, GPUEnergyJ: j.EnergyJ, PredSource: j.PredSource,
				OOMRisk: OOMRisk(j, c.GPUMemMiB), Token: j.Token},
		}
		if j.GPUs > 0 {
			jj.TRES.Allocated = append(jj.TRES.Allocated, jsonTRESItem{Type: "gres", Name: "gpu", Count: j.GPUs})
			if j.GPUType != "" {
				jj.TRES.Allocated = append(jj.TRES.Allocated, jsonTRESItem{Type: "gres", Name: "gpu:" + j.GPUType, Count: j.GPUs})
			}
		}
		out.Jobs = append(out.Jobs, jj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
