package nodeagent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"

	"github.com/augur-hpc/augur/sidecar/nodestore"
)

// WriteJobMap writes dcgm-exporter's job-mapping files
// (--hpc-job-mapping-dir) from the store's running jobs: one file per GPU
// index, named by the index, holding the ids of the jobs on that GPU, one
// per line (several under GPU sharing). A GPU that had a file and has no job
// now gets an empty file. Files are replaced atomically (temp file, rename),
// and only when their contents change. The Prolog, the Epilog and the agent
// all write the directory, so the writes are serialised with flock on a
// lock file inside it, and each writer rewrites the whole map from the
// store: the last writer is always right. The files are not fsynced: they
// are derived from the store and rewritten whenever the agent starts.
func WriteJobMap(ctx context.Context, st *nodestore.Store, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dcgm job map: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".augur.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("dcgm job map: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("dcgm job map: lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	jobs, err := st.Running(ctx)
	if err != nil {
		return err
	}
	want := JobMap(jobs)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("dcgm job map: %w", err)
	}
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n >= 0 && e.Type().IsRegular() {
			if _, ok := want[n]; !ok {
				want[n] = nil
			}
		}
	}
	for gpu, ids := range want {
		var b bytes.Buffer
		for _, id := range ids {
			fmt.Fprintf(&b, "%d\n", id)
		}
		path := filepath.Join(dir, strconv.Itoa(gpu))
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b.Bytes()) {
			continue
		}
		tmp := filepath.Join(dir, ".tmp."+strconv.Itoa(gpu))
		if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("dcgm job map: %w", err)
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("dcgm job map: %w", err)
		}
	}
	return nil
}

// JobMap is which jobs hold each GPU index, ids ascending.
func JobMap(jobs []nodestore.Job) map[int][]uint64 {
	out := map[int][]uint64{}
	for _, j := range jobs {
		for _, g := range j.GPUs {
			out[g] = append(out[g], j.JobID)
		}
	}
	for _, ids := range out {
		sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	}
	return out
}
