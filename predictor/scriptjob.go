package predictor

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// SubmitOptions are what sbatch's command line gives beside the script,
// in sbatch's own spelling; each overrides the script's #SBATCH line for
// the same option, as sbatch does.
type SubmitOptions struct {
	Gres, GPUs, Time                                 string
	Constraint, Partition, Account, QOS, Reservation string
}

// ScriptJob is the job a script submits as `augur predict` sees it: its
// #SBATCH GPU request, time limit, partition and account, or those given
// on the command line instead. A request or limit given on the command
// line that does not parse is an error; one in the script's own header is
// left out, and the warnings say which, so that a script with a header
// Augur cannot read still gets a prediction. A request that names no GPU
// type gets the one type its constraint, partition, account, QOS or
// reservation names, if they name one, as its GPUTypeHint.
func ScriptJob(script Script, o SubmitOptions) (job Job, warnings []string, err error) {
	gres, gpus, limit := o.Gres, o.GPUs, o.Time
	job = Job{UserID: uint32(os.Getuid()), Script: script, Account: cmpOr(o.Account, script.Features.Account),
		Partition: cmpOr(o.Partition, script.Features.Partition), Name: script.Features.JobName}
	perNode, perJob := gres, ""
	fromScript := false
	if perNode == "" && gpus == "" {
		perNode, fromScript = script.SbatchValue("--gres")
	}
	if gpus != "" {
		perJob = "gpu:" + gpus
	} else if v, ok := script.SbatchValue("--gpus", "-G"); ok && perNode == "" {
		perJob, fromScript = "gpu:"+v, true
	}
	if job.GPUs, err = GPURequests(perNode, perJob, "", ""); err != nil {
		if !fromScript {
			return job, nil, fmt.Errorf("GPU request: %w", err)
		}
		job.GPUs = nil
		warnings = append(warnings, fmt.Sprintf("the script's GPU request is left out: %v", err))
	}
	fromScript = false
	if limit == "" {
		limit, fromScript = script.SbatchValue("--time", "-t")
	}
	if job.TimeLimit, err = SlurmTime(limit); err != nil {
		if !fromScript {
			return job, nil, err
		}
		job.TimeLimit = 0
		warnings = append(warnings, fmt.Sprintf("the script's time limit is left out: %v", err))
	}
	if job.WantsGPUs() && job.GPUType() == "" {
		job.GPUTypeHint, _ = o.GPUTypeHint(script)
	}
	return job, warnings, nil
}

// GPUTypeHint is the one GPU type the constraint, partition, account, QOS
// and reservation allow together, from the command line or else the
// script's header, and the options it came from; "" when they allow
// none, several, or any.
func (o SubmitOptions) GPUTypeHint(script Script) (typ, from string) {
	return headerGPUType(script, map[string]string{"--constraint": o.Constraint, "--partition": o.Partition,
		"--account": o.Account, "--qos": o.QOS, "--reservation": o.Reservation})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// maxLimitDays bounds a time limit read from a script: Slurm's own
// limits are minutes in 32 bits (about 8000 years); beyond a century is
// "no limit" in all but name, and keeps the arithmetic far from overflow.
const maxLimitDays = 36500

// SlurmTime reads Slurm's --time formats as Slurm's own parser
// (time_str2mins) does: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S and D- (D
// days), each part whole digits, rounded up to whole minutes, the
// resolution Slurm keeps; "", -1, UNLIMITED and infinite are no limit (0).
// TestSlurmTimeIsSlurms (sidecar/slurm) holds it to libslurm's answers.
func SlurmTime(s string) (time.Duration, error) {
	orig := s
	if s == "" || s == "-1" || strings.EqualFold(s, "UNLIMITED") || strings.EqualFold(s, "infinite") {
		return 0, nil
	}
	bad := func() (time.Duration, error) {
		return 0, fmt.Errorf("bad time limit %q: Slurm's formats are M, M:S, H:M:S, D-H, D-H:M and D-H:M:S, each part a whole number", orig)
	}
	num := func(p string) (int64, bool) {
		if p == "" || !isDigits(p) {
			return 0, false
		}
		if p = strings.TrimLeft(p, "0"); p == "" {
			return 0, true
		} else if len(p) > 12 {
			return 0, false
		}
		n, err := strconv.ParseInt(p, 10, 64)
		return n, err == nil
	}
	var days, h, m, sec int64
	d, rest, hasDays := strings.Cut(s, "-")
	if hasDays {
		n, ok := num(d)
		if !ok {
			return bad()
		}
		days, s = n, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) > 3 || hasDays && s == "" && len(parts) != 1 {
		return bad()
	}
	var nums [3]int64
	for i, p := range parts {
		if hasDays && s == "" {
			break // "2-": two days
		}
		n, ok := num(p)
		if !ok {
			return bad()
		}
		nums[i] = n
	}
	switch {
	case hasDays && len(parts) == 1:
		h = nums[0]
	case hasDays && len(parts) == 2:
		h, m = nums[0], nums[1]
	case hasDays:
		h, m, sec = nums[0], nums[1], nums[2]
	case len(parts) == 1:
		m = nums[0]
	case len(parts) == 2:
		m, sec = nums[0], nums[1]
	default:
		h, m, sec = nums[0], nums[1], nums[2]
	}
	// Each part is at most 12 digits, so the sum cannot overflow; bound it.
	total := days*86400 + h*3600 + m*60 + sec
	if total > maxLimitDays*86400 {
		return bad()
	}
	minutes := (total + 59) / 60 // Slurm rounds seconds up to the minute
	return time.Duration(minutes) * time.Minute, nil
}
