package daemon

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/augur-hpc/augur/predictor"
	"github.com/augur-hpc/augur/sidecar/metrics"
	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// The config files a job's script names and the Python programs it runs
// (predictor.Script.Files) are on the submitter's disk. Where
// predictor.job_files allows it, augurd reads them, as the job will, before
// it decides: each in a goroutine of its own, the submission waiting at
// most the budget for all of them, so that a slow or hung file system
// costs a decision its files, never its answer.
// A file is read only where it is a regular file the job's user owns:
// augurd may run as root, and a script must not make it read what its
// user could not.

// jobFileSlots bounds the reads in flight across all submissions: a file
// system that hangs (an NFS server gone) holds at most this many
// goroutines, and the submissions after that decide without their files.
const jobFileSlots = 32

// jobFileResult is one file's read.
type jobFileResult struct {
	path, text string
	result     metrics.JobFileResult
}

// readJobFiles reads the files of paths (as the script names them) that
// can be read within budget, by those paths; nil when none could.
func (s *Service) readJobFiles(req *wire.Request, paths []string, budget time.Duration, maxBytes int64) map[string]string {
	results := make(chan jobFileResult, len(paths)) // buffered: a late read never blocks
	uid := req.UserID
	started := 0
	for _, p := range paths {
		abs, ok := jobFilePath(p, req)
		if !ok {
			s.metrics.JobFile(metrics.JobFileAbsent)
			continue
		}
		select {
		case s.fileSlots <- struct{}{}:
		default:
			s.metrics.JobFile(metrics.JobFileBusy)
			continue
		}
		started++
		go func() {
			defer func() { <-s.fileSlots }()
			defer func() {
				// A file's text never takes augurd down with it.
				if recover() != nil {
					results <- jobFileResult{path: p, result: metrics.JobFileFailed}
				}
			}()
			text, res := s.readFile(abs, uid, maxBytes)
			if res == metrics.JobFileRead {
				// Of a program, only its option declarations are read,
				// and of a sourced shell file all but its comments and
				// secrets; that is what the request keeps.
				var ok bool
				if text, ok = predictor.JobFileText(p, text); !ok {
					res = metrics.JobFileUnparsed
				}
			}
			results <- jobFileResult{path: p, text: text, result: res}
		}()
	}
	if started == 0 {
		return nil
	}
	deadline := time.NewTimer(budget)
	defer deadline.Stop()
	var files map[string]string
	for got := 0; got < started; got++ {
		select {
		case r := <-results:
			s.metrics.JobFile(r.result)
			if r.result == metrics.JobFileRead {
				if files == nil {
					files = map[string]string{}
				}
				files[r.path] = r.text
			}
		case <-deadline.C:
			for range started - got {
				s.metrics.JobFile(metrics.JobFileLate)
			}
			return files
		}
	}
	return files
}

// jobFilePath is where a path a script names is on disk for req: under
// its submission directory, or the home directory its environment gives
// (HOME, sent where the script reads it).
func jobFilePath(p string, req *wire.Request) (string, bool) {
	home := ""
	for _, e := range req.Env {
		if v, ok := strings.CutPrefix(e, "HOME="); ok {
			home = v
		}
	}
	return predictor.FilePath(p, req.WorkDir, home)
}

// readJobFile reads path where it is a regular file that uid owns, of at
// most maxBytes.
func readJobFile(path string, uid uint32, maxBytes int64) (string, metrics.JobFileResult) {
	// O_NONBLOCK: a FIFO put where the config was opens at once (and is
	// then refused as not a regular file) rather than wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return "", metrics.JobFileAbsent
	case errors.Is(err, fs.ErrPermission):
		return "", metrics.JobFileRefused
	case err != nil:
		return "", metrics.JobFileFailed
	}
	defer f.Close()
	fi, err := f.Stat() // of the file opened: a symlink's target, checked as itself
	if err != nil {
		return "", metrics.JobFileFailed
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() || st.Uid != uid || fi.Size() > maxBytes {
		return "", metrics.JobFileRefused
	}
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	switch {
	case err != nil:
		return "", metrics.JobFileFailed
	case int64(len(b)) > maxBytes:
		return "", metrics.JobFileRefused // it grew
	}
	return string(b), metrics.JobFileRead
}
