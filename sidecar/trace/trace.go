package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Job is one job of a trace.
type Job struct {
	// ID is the job's position in the file (0-based), or the trace's own id.
	ID int64
	// Submit is seconds since the trace's epoch (Philly: Unix time).
	Submit float64
	// Duration is the run time in seconds when the trace gives it (Philly,
	// Tiresias); Steps the training steps when it gives those (Gavel).
	Duration float64
	Steps    float64
	GPUs     int
	// Kind is the workload (Gavel job type, Tiresias model name).
	Kind string
	// Group is the virtual cluster (Philly).
	Group string
}

// Formats lists the formats Parse understands.
var Formats = []string{"philly", "gavel", "tiresias"}

// ErrFormat is wrapped by every error about malformed input.
var ErrFormat = errors.New("malformed trace")

// maxGPUs bounds a job's GPU count; larger values are malformed input.
const maxGPUs = 1 << 20

// Parse reads a trace in the named format.
func Parse(format string, r io.Reader) ([]Job, error) {
	switch format {
	case "philly":
		return ParsePhilly(r)
	case "gavel":
		return ParseGavel(r)
	case "tiresias":
		return ParseTiresias(r)
	}
	return nil, fmt.Errorf("unknown trace format %q (known: %s)", format, strings.Join(Formats, ", "))
}

func bad(line int, format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrFormat, line, fmt.Sprintf(format, args...))
}

func number(line int, name, s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, bad(line, "%s %q is not a non-negative number", name, s)
	}
	return v, nil
}

func gpus(line int, s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < 1 || v > maxGPUs {
		return 0, bad(line, "GPU count %q is not between 1 and %d", s, maxGPUs)
	}
	return v, nil
}

// header maps column names to positions and checks the required ones.
func header(row []string, need ...string) (map[string]int, error) {
	ix := map[string]int{}
	for i, h := range row {
		ix[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, n := range need {
		if _, ok := ix[n]; !ok {
			return nil, bad(1, "no %q column (have %v)", n, row)
		}
	}
	return ix, nil
}

// eachRow reads a CSV with a header naming at least need, and calls fn
// with each data row's line number, fields and the header's column index.
// A short row or a CSV error is a format error naming the line.
func eachRow(r io.Reader, need []string, fn func(line int, row []string, ix map[string]int) error) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	row, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%w: header: %v", ErrFormat, err)
	}
	ix, err := header(row, need...)
	if err != nil {
		return err
	}
	width := 0
	for _, i := range ix {
		width = max(width, i+1)
	}
	for line := 2; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: line %d: %v", ErrFormat, line, err)
		}
		if len(row) < width {
			return bad(line, "%d fields, want %d", len(row), width)
		}
		if err := fn(line, row, ix); err != nil {
			return err
		}
	}
}

// ParsePhilly reads the Philly trace as the Sia artifact processed it:
// timestamp (YYYY-MM-DD HH:MM:SS, UTC), duration (seconds), num_gpus,
// gpu_time, cluster. Jobs come back sorted by submission.
func ParsePhilly(r io.Reader) ([]Job, error) {
	var jobs []Job
	err := eachRow(r, []string{"timestamp", "duration", "num_gpus"}, func(line int, row []string, ix map[string]int) error {
		ts, err := time.Parse(time.DateTime, strings.TrimSpace(row[ix["timestamp"]]))
		if err != nil {
			return bad(line, "timestamp %q is not YYYY-MM-DD HH:MM:SS", row[ix["timestamp"]])
		}
		d, err := number(line, "duration", row[ix["duration"]])
		if err != nil {
			return err
		}
		g, err := gpus(line, row[ix["num_gpus"]])
		if err != nil {
			return err
		}
		j := Job{ID: int64(len(jobs)), Submit: float64(ts.Unix()), Duration: d, GPUs: g}
		if c, ok := ix["cluster"]; ok {
			j.Group = strings.Clone(row[c])
		}
		jobs = append(jobs, j)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortBySubmit(jobs)
	return jobs, nil
}

// ParseGavel reads a Gavel workload trace: tab-separated job_type, command,
// num_steps_arg, needs_data_dir, total_steps, arrival_time, scale_factor.
func ParseGavel(r io.Reader) ([]Job, error) {
	cr := csv.NewReader(r)
	cr.Comma = '\t'
	cr.LazyQuotes = true
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var jobs []Job
	for line := 1; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrFormat, line, err)
		}
		if len(row) != 7 {
			return nil, bad(line, "%d tab-separated fields, want 7", len(row))
		}
		steps, err := number(line, "total_steps", row[4])
		if err != nil {
			return nil, err
		}
		at, err := number(line, "arrival_time", row[5])
		if err != nil {
			return nil, err
		}
		g, err := gpus(line, row[6])
		if err != nil {
			return nil, err
		}
		kind := strings.TrimSpace(row[0])
		if kind == "" {
			return nil, bad(line, "empty job_type")
		}
		jobs = append(jobs, Job{ID: int64(len(jobs)), Submit: at, Steps: steps, GPUs: g, Kind: strings.Clone(kind)})
	}
	sortBySubmit(jobs)
	return jobs, nil
}

// ParseTiresias reads a Tiresias simulator job file: a CSV with at least
// job_id, num_gpu, submit_time and duration (seconds); model_name if present.
func ParseTiresias(r io.Reader) ([]Job, error) {
	var jobs []Job
	err := eachRow(r, []string{"job_id", "num_gpu", "submit_time", "duration"}, func(line int, row []string, ix map[string]int) error {
		id, err := strconv.ParseInt(strings.TrimSpace(row[ix["job_id"]]), 10, 64)
		if err != nil {
			return bad(line, "job_id %q is not an integer", row[ix["job_id"]])
		}
		g, err := gpus(line, row[ix["num_gpu"]])
		if err != nil {
			return err
		}
		sub, err := number(line, "submit_time", row[ix["submit_time"]])
		if err != nil {
			return err
		}
		d, err := number(line, "duration", row[ix["duration"]])
		if err != nil {
			return err
		}
		j := Job{ID: id, Submit: sub, Duration: d, GPUs: g}
		if m, ok := ix["model_name"]; ok {
			j.Kind = strings.Clone(row[m])
		}
		jobs = append(jobs, j)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortBySubmit(jobs)
	return jobs, nil
}

func sortBySubmit(jobs []Job) {
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].Submit < jobs[b].Submit })
}
