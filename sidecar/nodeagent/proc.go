package nodeagent

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// ProcFS finds which Slurm job a process belongs to by reading /proc: the
// job_<id> component of /proc/<pid>/cgroup (proctrack/cgroup, cgroup v1 and
// v2), else SLURM_JOB_ID in /proc/<pid>/environ (proctrack/linuxproc or
// pgid, where jobs have no cgroup of their own). Reading another user's
// environ needs root, which the agent is.
type ProcFS struct {
	// Root is the proc mount, "/proc" when empty.
	Root string
}

func (p ProcFS) root() string {
	if p.Root == "" {
		return "/proc"
	}
	return p.Root
}

// maxProcFile bounds what is read of a cgroup or environ file.
const maxProcFile = 256 << 10

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxProcFile))
}

// JobOf says which job process pid belongs to.
func (p ProcFS) JobOf(pid uint32) (uint64, bool) {
	dir := filepath.Join(p.root(), strconv.FormatUint(uint64(pid), 10))
	if b, err := readBounded(filepath.Join(dir, "cgroup")); err == nil {
		if id, ok := CgroupJob(b); ok {
			return id, true
		}
	}
	if b, err := readBounded(filepath.Join(dir, "environ")); err == nil {
		if id, ok := EnvironJob(b); ok {
			return id, true
		}
	}
	return 0, false
}

// Process is a live process seen by Scan.
type Process struct {
	PID uint32
	Job uint64 // 0: not in a job
	// Env holds the environ entries Scan was asked for.
	Env map[string]string
}

// Scan lists the processes that belong to a job, with the environ entries
// named in keys.
func (p ProcFS) Scan(keys ...string) ([]Process, error) {
	ents, err := os.ReadDir(p.root())
	if err != nil {
		return nil, err
	}
	var out []Process
	for _, e := range ents {
		pid, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil {
			continue
		}
		job, ok := p.JobOf(uint32(pid))
		if !ok {
			continue
		}
		pr := Process{PID: uint32(pid), Job: job}
		if len(keys) > 0 {
			b, _ := readBounded(filepath.Join(p.root(), e.Name(), "environ"))
			pr.Env = EnvironValues(b, keys...)
		}
		out = append(out, pr)
	}
	return out, nil
}

// Jobs returns the jobs that have at least one live process.
func (p ProcFS) Jobs() (map[uint64]bool, error) {
	ps, err := p.Scan()
	if err != nil {
		return nil, err
	}
	out := map[uint64]bool{}
	for _, pr := range ps {
		out[pr.Job] = true
	}
	return out, nil
}

// CgroupJob finds job_<id> in the contents of a /proc/<pid>/cgroup file
// ("0::/system.slice/slurmstepd.scope/job_42/step_0",
// "4:memory:/slurm/uid_1000/job_42/step_batch").
func CgroupJob(b []byte) (uint64, bool) {
	for len(b) > 0 {
		i := bytes.Index(b, []byte("job_"))
		if i < 0 {
			return 0, false
		}
		rest := b[i+4:]
		if i == 0 || b[i-1] == '/' {
			j := 0
			for j < len(rest) && j < 20 && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			if j > 0 && (j == len(rest) || rest[j] == '/' || rest[j] == '\n') {
				if id, err := strconv.ParseUint(string(rest[:j]), 10, 63); err == nil && id > 0 {
					return id, true
				}
			}
		}
		b = rest
	}
	return 0, false
}

// EnvironJob reads SLURM_JOB_ID from the contents of a /proc/<pid>/environ
// file (NUL-separated NAME=value entries).
func EnvironJob(b []byte) (uint64, bool) {
	v, ok := EnvironValues(b, "SLURM_JOB_ID")["SLURM_JOB_ID"]
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseUint(v, 10, 63)
	return id, err == nil && id > 0
}

// EnvironValues returns the entries named in keys from environ contents; the
// first of a repeated name wins, as getenv(3) does.
func EnvironValues(b []byte, keys ...string) map[string]string {
	out := make(map[string]string, len(keys))
	for len(b) > 0 {
		var ent []byte
		if i := bytes.IndexByte(b, 0); i >= 0 {
			ent, b = b[:i], b[i+1:]
		} else {
			ent, b = b, nil
		}
		name, val, ok := bytes.Cut(ent, []byte("="))
		if !ok {
			continue
		}
		for _, k := range keys {
			if string(name) == k {
				if _, seen := out[k]; !seen {
					out[k] = string(val)
				}
			}
		}
	}
	return out
}
