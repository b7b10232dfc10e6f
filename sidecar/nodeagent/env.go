package nodeagent

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/augur-hpc/augur/sidecar/nodestore"
)

// ErrNotAJob is wrapped by ParseHookEnv when the environment names no job.
var ErrNotAJob = errors.New("not run for a Slurm job")

// Exit is how a job's processes ended, as the Epilog learns it.
type Exit struct {
	Known  bool
	Code   int // exit status of the batch script, 0..255
	Signal int // the signal that killed it, 0 if none
}

// HookEnv is what slurmd tells a Prolog or Epilog in its environment.
type HookEnv struct {
	Context string // SLURM_SCRIPT_CONTEXT: prolog_slurmd, epilog_slurmd
	JobID   uint64
	UserID  uint32
	// GPUs are the job's global GPU indices (SLURM_JOB_GPUS, else
	// CUDA_VISIBLE_DEVICES); empty for a job without GPUs.
	GPUs []int
	Node string // SLURMD_NODENAME, "" if unset
	Exit Exit   // Epilog only
}

// ParseHookEnv reads the hook's environment through getenv. It fails only
// when no job id is there; a bad GPU list or exit code is an error too,
// because recording a job against the wrong GPUs is worse than not at all.
func ParseHookEnv(getenv func(string) string) (HookEnv, error) {
	e := HookEnv{Context: getenv("SLURM_SCRIPT_CONTEXT"), Node: strings.TrimSpace(getenv("SLURMD_NODENAME"))}
	id := strings.TrimSpace(getenv("SLURM_JOB_ID"))
	if id == "" {
		return e, fmt.Errorf("%w: SLURM_JOB_ID is not set", ErrNotAJob)
	}
	n, err := strconv.ParseUint(id, 10, 63)
	if err != nil || n == 0 {
		return e, fmt.Errorf("SLURM_JOB_ID=%q is not a job id", id)
	}
	e.JobID = n
	if uid := strings.TrimSpace(getenv("SLURM_JOB_UID")); uid != "" {
		u, err := strconv.ParseUint(uid, 10, 32)
		if err != nil {
			return e, fmt.Errorf("SLURM_JOB_UID=%q is not a uid", uid)
		}
		e.UserID = uint32(u)
	}
	list, from := getenv("SLURM_JOB_GPUS"), "SLURM_JOB_GPUS"
	if strings.TrimSpace(list) == "" {
		list, from = getenv("CUDA_VISIBLE_DEVICES"), "CUDA_VISIBLE_DEVICES"
	}
	// CUDA_VISIBLE_DEVICES=NoDevFiles is what Slurm sets for a job without GPUs.
	if t := strings.TrimSpace(list); t != "" && t != "NoDevFiles" {
		gpus, err := nodestore.ParseGPUs(list)
		if err != nil {
			return e, fmt.Errorf("%s: %w", from, err)
		}
		e.GPUs = dedupe(gpus)
	}
	if v := getenv("SLURM_JOB_EXIT_CODE2"); v != "" {
		x, err := ParseExitCode2(v)
		if err != nil {
			return e, err
		}
		e.Exit = x
	} else if v := getenv("SLURM_JOB_EXIT_CODE"); v != "" {
		x, err := ParseWaitStatus(v)
		if err != nil {
			return e, err
		}
		e.Exit = x
	}
	return e, nil
}

func dedupe(gpus []int) []int {
	seen := map[int]bool{}
	out := gpus[:0]
	for _, g := range gpus {
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

// ParseExitCode2 reads SLURM_JOB_EXIT_CODE2, "exit:signal" (e.g. "3:0",
// "0:9").
func ParseExitCode2(s string) (Exit, error) {
	c, sig, ok := strings.Cut(strings.TrimSpace(s), ":")
	code, err1 := strconv.Atoi(c)
	signal, err2 := strconv.Atoi(sig)
	if !ok || err1 != nil || err2 != nil || code < 0 || code > 255 || signal < 0 || signal > 128 {
		return Exit{}, fmt.Errorf("SLURM_JOB_EXIT_CODE2=%q is not exit:signal", s)
	}
	return Exit{Known: true, Code: code, Signal: signal}, nil
}

// ParseWaitStatus reads SLURM_JOB_EXIT_CODE, a raw wait(2) status (768 is
// exit 3; 9 is killed by SIGKILL).
func ParseWaitStatus(s string) (Exit, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
	if err != nil || n > math.MaxUint16 {
		return Exit{}, fmt.Errorf("SLURM_JOB_EXIT_CODE=%q is not a wait status", s)
	}
	if sig := int(n & 0x7f); sig != 0 {
		return Exit{Known: true, Signal: sig}, nil
	}
	return Exit{Known: true, Code: int(n>>8) & 0xff}, nil
}

// Exit states of a report.
const (
	StateCompleted = "COMPLETED"
	StateFailed    = "FAILED"
	StateCancelled = "CANCELLED"
	StateUnknown   = "UNKNOWN"
)

// ExitState classifies how a job ended: 0:0 completed; killed by SIGKILL
// or SIGTERM cancelled, unless its GPU memory peaked near capacity, which
// makes a failure (and an OOM suspect) more likely than a cancellation;
// anything else failed. Slurm 22.05 hands the Epilog of a job cancelled by
// scancel SLURM_JOB_EXIT_CODE2=0:0 (it runs before the step's status is
// known), so such a job reads COMPLETED here: augurd, which can ask
// slurmctld, has the last word on the state.
func ExitState(x Exit, nearCapacity bool) string {
	switch {
	case !x.Known:
		return StateUnknown
	case x.Code == 0 && x.Signal == 0:
		return StateCompleted
	case (x.Signal == 9 || x.Signal == 15) && !nearCapacity:
		return StateCancelled
	}
	return StateFailed
}

// ExitCode is the single number a report carries: the exit status, or
// 128+signal for a job killed by a signal, as shells write it.
func ExitCode(x Exit) int {
	if x.Signal != 0 {
		return 128 + x.Signal
	}
	return x.Code
}
