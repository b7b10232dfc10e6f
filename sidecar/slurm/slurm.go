// Package slurm is augurd's way to read and change Slurm from outside
// slurmctld. It is the only package of augurd that talks to Slurm.
//
//	live loop ─> Lib.Jobs, Lib.Nodes ───────────> slurm_load_jobs / slurm_load_node ─> []Job, []Node
//	actuator  ─> Lib.SetSiteFactors (N at once) ─> slurm_update_job (site_factor = NICE_OFFSET + v)
//	          ─> Lib.Signal, Lib.Requeue ───────> slurm_kill_job (KILL_FULL_JOB), slurm_requeue
//	CLI.Jobs ─> squeue --json --states=all (tools and tests)
//
// Lib is libslurm through cgo (-lslurm; slurm_init(NULL) reads SLURM_CONF):
// forking scontrol once per job costs milliseconds each, too slow for a pass
// over 10,000 jobs. CLI runs Slurm's own commands with exec.CommandContext
// and fixed argument lists, never through a shell, so no user-controlled
// string is ever interpreted.
package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Job is what augurd reads of a Slurm job.
type Job struct {
	ID           uint64
	State        string // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ...
	Reason       string
	UserID       uint32
	UserName     string
	Name         string
	Partition    string
	Account      string
	QOS          string
	AdminComment string
	Priority     uint64
	Submit       time.Time
	Start        time.Time
	End          time.Time
	TimeLimit    time.Duration // 0: none
	Nodes        string
	NodeCount    int
	Requeue      bool
	Restarts     int
	ExitCode     int
	TRESPerNode  string
	TRESPerJob   string
	TRESPerTask  string
	TRESPerSock  string
	// Tasks is the number of tasks asked for (Lib only; 0: unknown).
	Tasks int
	// SiteFactor is the job's SiteFactor when SiteFactorKnown (Lib only).
	SiteFactor      int64
	SiteFactorKnown bool
	// GresDetail is, per allocated node, the GRES given to the job, e.g.
	// "gpu:a100:2(IDX:0-1)" (Lib only).
	GresDetail []string
}

// Node is what augurd reads of a Slurm node.
type Node struct {
	Name  string
	State string // IDLE, MIXED, ALLOCATED, DOWN, ... with +DRAIN, +NOT_RESPONDING, +FAIL
	// Gres is the node's configured GRES ("gpu:a100:4,gpu:t4:4"), GresUsed
	// those in use ("gpu:a100:2(IDX:0-1),gpu:t4:0(IDX:N/A)").
	Gres, GresUsed string
	// Partitions are the partitions the node is in.
	Partitions []string
}

// SiteFactor is one SiteFactor to write.
type SiteFactor struct {
	JobID uint64
	Value int64
}

// ErrGone means the job no longer exists or has finished.
var ErrGone = errors.New("job gone")

func isUnavailable(err error) bool { return errors.Is(err, ErrUnavailable) }

// Token returns the submission token in the job's "augur:tok=" annotation.
func (j Job) Token() string {
	for _, f := range strings.Fields(j.AdminComment) {
		if tok, ok := strings.CutPrefix(f, "augur:tok="); ok {
			return tok
		}
	}
	return ""
}

// CLI runs Slurm's commands.
type CLI struct {
	// Squeue and Scontrol are the commands' paths ("squeue", "scontrol" on PATH by default).
	Squeue, Scontrol string
	// Env is added to the commands' environment (e.g. SLURM_CONF=...).
	Env []string
}

// ErrUnavailable means slurmctld did not answer (down, restarting).
var ErrUnavailable = errors.New("slurm: controller unavailable")

// maxOutput bounds what a command may print (squeue --json of 100,000 jobs
// is a few hundred MB; that is past what augurd handles in one pass).
const maxOutput = 512 << 20

func (c CLI) run(ctx context.Context, bin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	if len(c.Env) > 0 {
		cmd.Env = append(cmd.Environ(), c.Env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{&out, maxOutput}, &limited{&errb, 64 << 10}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if strings.Contains(msg, "Unable to contact slurm controller") || strings.Contains(msg, "Socket timed out") ||
			strings.Contains(msg, "Connection refused") {
			return nil, fmt.Errorf("%w: %s", ErrUnavailable, msg)
		}
		return nil, fmt.Errorf("slurm: %s %s: %w: %s", bin, strings.Join(args, " "), err, msg)
	}
	return out.Bytes(), nil
}

type limited struct {
	b   *bytes.Buffer
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.b.Len()+len(p) > l.max {
		return 0, fmt.Errorf("output over %d bytes", l.max)
	}
	return l.b.Write(p)
}

func (c CLI) squeue() string {
	if c.Squeue != "" {
		return c.Squeue
	}
	return "squeue"
}

// Jobs lists every job slurmctld knows, finished ones included (until
// MinJobAge).
func (c CLI) Jobs(ctx context.Context) ([]Job, error) {
	out, err := c.run(ctx, c.squeue(), "--json", "--states=all")
	if err != nil {
		return nil, err
	}
	return ParseSqueueJSON(out)
}

// squeueJob mirrors the fields of squeue --json (openapi v0.0.38) Augur reads.
type squeueJob struct {
	JobID        *uint64 `json:"job_id"`
	JobState     string  `json:"job_state"`
	StateReason  string  `json:"state_reason"`
	UserID       *uint32 `json:"user_id"`
	UserName     string  `json:"user_name"`
	Name         string  `json:"name"`
	Partition    string  `json:"partition"`
	Account      string  `json:"account"`
	QOS          string  `json:"qos"`
	AdminComment string  `json:"admin_comment"`
	Priority     *uint64 `json:"priority"`
	SubmitTime   *int64  `json:"submit_time"`
	StartTime    *int64  `json:"start_time"`
	EndTime      *int64  `json:"end_time"`
	TimeLimit    *int64  `json:"time_limit"`
	Nodes        string  `json:"nodes"`
	NodeCount    *int    `json:"node_count"`
	Requeue      bool    `json:"requeue"`
	RestartCnt   *int    `json:"restart_cnt"`
	ExitCode     *int    `json:"exit_code"`
	TRESPerNode  string  `json:"tres_per_node"`
	TRESPerJob   string  `json:"tres_per_job"`
	TRESPerTask  string  `json:"tres_per_task"`
	TRESPerSock  string  `json:"tres_per_socket"`
}

// ParseSqueueJSON reads squeue --json output. Jobs without an id are
// skipped; fields Slurm leaves null are zero.
func ParseSqueueJSON(b []byte) ([]Job, error) {
	var doc struct {
		Errors []json.RawMessage `json:"errors"`
		Jobs   []squeueJob       `json:"jobs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("slurm: squeue --json: %w", err)
	}
	if len(doc.Errors) > 0 {
		return nil, fmt.Errorf("slurm: squeue --json reported errors: %s", doc.Errors[0])
	}
	out := make([]Job, 0, len(doc.Jobs))
	for _, s := range doc.Jobs {
		if s.JobID == nil || *s.JobID == 0 {
			continue
		}
		j := Job{
			ID: *s.JobID, State: s.JobState, Reason: s.StateReason, UserName: s.UserName, Name: s.Name,
			Partition: s.Partition, Account: s.Account, QOS: s.QOS, AdminComment: s.AdminComment,
			Nodes: s.Nodes, Requeue: s.Requeue, TRESPerNode: s.TRESPerNode, TRESPerJob: s.TRESPerJob,
			TRESPerTask: s.TRESPerTask, TRESPerSock: s.TRESPerSock,
			Submit: epoch(s.SubmitTime), Start: epoch(s.StartTime), End: epoch(s.EndTime),
		}
		if s.UserID != nil {
			j.UserID = *s.UserID
		}
		if s.Priority != nil {
			j.Priority = *s.Priority
		}
		if s.TimeLimit != nil && *s.TimeLimit > 0 && *s.TimeLimit < 1<<31 {
			j.TimeLimit = time.Duration(*s.TimeLimit) * time.Minute
		}
		if s.NodeCount != nil {
			j.NodeCount = *s.NodeCount
		}
		if s.RestartCnt != nil {
			j.Restarts = *s.RestartCnt
		}
		if s.ExitCode != nil {
			j.ExitCode = *s.ExitCode
		}
		out = append(out, j)
	}
	return out, nil
}

func epoch(p *int64) time.Time {
	if p == nil || *p <= 0 || *p > 1<<40 {
		return time.Time{}
	}
	return time.Unix(*p, 0)
}
