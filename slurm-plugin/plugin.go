// Command job_submit_augur is Slurm's job_submit/augur plugin, built with
// -buildmode=c-shared into job_submit_augur.so and loaded by slurmctld for
// JobSubmitPlugins=augur. It turns each job_desc_msg_t into a wire.Request,
// asks augurd (package shim does the round trip and the circuit breaker),
// and applies the answer: an "augur:" annotation appended to AdminComment, a
// rewritten GPU request, an initial SiteFactor, or a rejection whose message
// sbatch shows the user. On any failure the job is accepted unchanged.
//
// Rules this file keeps, because it runs inside slurmctld under its locks:
// every exported function recovers panics; strings given to Slurm come from
// Slurm's allocator (augur_set_str in job_submit_augur.c); the only wait is
// the shim's deadline; the only global state is the client, which is safe for
// concurrent use and replaced whole on init and when augur.yaml changes.
package main

/*
#cgo CFLAGS: -O2 -Wall
#include <stdlib.h>
#include <string.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/augur-hpc/augur/sidecar/config"
	"github.com/augur-hpc/augur/slurm-plugin/shim"
	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// client is replaced by each init; job_submit reads it atomically.
var (
	client     atomic.Pointer[shim.Client]
	maxScript  atomic.Int64
	forwardEnv atomic.Bool
)

func logf(isErr bool, format string, args ...any) {
	msg := C.CString(fmt.Sprintf(format, args...))
	defer C.free(unsafe.Pointer(msg))
	e := C.int(0)
	if isErr {
		e = 1
	}
	C.augur_log(e, msg)
}

// reloadEvery is how often the plugin looks for a changed augur.yaml.
// slurmctld 22.05 re-initialises job_submit plugins on `scontrol reconfigure`
// only when JobSubmitPlugins itself changed, so the plugin watches its file.
const reloadEvery = 10 * time.Second

var watchOnce sync.Once

//export augurInit
func augurInit() {
	defer func() {
		if r := recover(); r != nil {
			logf(true, "panic in init (plugin stays loaded, jobs pass unchanged): %v\n%s", r, debug.Stack())
		}
	}()
	load()
	watchOnce.Do(func() {
		go watch()
		go flushReused()
	})
}

// flushReused sends the shim's waiting reuse reports to augurd (see
// shim.Client.Flush), off slurmctld's submit path.
func flushReused() {
	defer func() {
		if r := recover(); r != nil {
			logf(true, "panic sending reuse reports (no more until restart; the linker recovers the records): %v", r)
		}
	}()
	for range time.Tick(flushEvery) {
		if c := client.Load(); c != nil {
			c.Flush()
		}
	}
}

// flushEvery is how often flushReused looks for waiting reports.
const flushEvery = 100 * time.Millisecond

// watch reloads the configuration when its file changes.
func watch() {
	defer func() {
		if r := recover(); r != nil {
			logf(true, "panic watching the configuration (no more reloads until restart): %v", r)
		}
	}()
	last := stamp()
	for range time.Tick(reloadEvery) {
		if now := stamp(); now != last {
			last = now
			logf(false, "%s changed; reloading", config.Path(""))
			load()
		}
	}
}

func stamp() string {
	fi, err := os.Stat(config.Path(""))
	if err != nil {
		return "missing"
	}
	return fmt.Sprint(fi.ModTime().UnixNano(), fi.Size())
}

// load reads the configuration and replaces the client. A bad file keeps
// the previous client, or the defaults when there is none.
func load() {
	path := config.Path("")
	cfg, err := config.Load(path, nil)
	if err != nil {
		if client.Load() != nil {
			logf(true, "%v; keeping the configuration in use", err)
			return
		}
		d := config.Default()
		cfg = &d
		logf(true, "%v; using defaults (socket %s)", err, cfg.Socket.Path)
	}
	old := client.Swap(shim.New(shim.Options{
		Socket:           cfg.Socket.Path,
		Timeout:          cfg.Shim.Timeout,
		FailureThreshold: cfg.Shim.FailureThreshold,
		Cooldown:         cfg.Shim.Cooldown,
		ReuseWindow:      cfg.Shim.ReuseWindow,
		Log:              func(isErr bool, msg string) { logf(isErr, "%s", msg) },
	}))
	if old != nil {
		old.Close()
	}
	maxScript.Store(int64(cfg.Shim.MaxScriptBytes))
	forwardEnv.Store(cfg.Shim.ForwardEnv)
	if C.augur_have_slurm_alloc() == 0 {
		logf(true, "slurm_xstrdup/slurm_xfree not found in this process: jobs will pass unchanged")
	}
	env := "environment forwarded"
	if !cfg.Shim.ForwardEnv {
		env = "environment not forwarded"
	}
	logf(false, "loaded: augurd socket %s, deadline %s, reuse window %s, %s, config %s", cfg.Socket.Path, cfg.Shim.Timeout,
		cfg.Shim.ReuseWindow, env, path)
}

//export augurFini
func augurFini() {
	defer func() { _ = recover() }()
	// The Go runtime cannot be unloaded (the .so is NODELETE); keep the
	// client so a late call still behaves, and let the next init replace it.
}

//export augurJobSubmit
func augurJobSubmit(desc *C.job_desc_msg_t, submitUID C.uint32_t, errMsg **C.char) (rc C.int) {
	defer func() {
		if r := recover(); r != nil {
			logf(true, "panic handling a submission, job accepted unchanged: %v\n%s", r, debug.Stack())
			rc = C.SLURM_SUCCESS
		}
	}()
	c := client.Load()
	if c == nil || desc == nil || C.augur_have_slurm_alloc() == 0 {
		return C.SLURM_SUCCESS
	}
	if c.CoolingDown() {
		// augurd failed repeatedly: accept at once, without even copying
		// the script.
		c.CountSkip()
		return C.SLURM_SUCCESS
	}
	req := requestFrom(desc, uint32(submitUID), int(maxScript.Load()))
	testHook(req)
	resp, err := c.Decide(req)
	if err != nil {
		return C.SLURM_SUCCESS // the client has logged why
	}
	return apply(desc, resp, errMsg)
}

func goString(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

// u32 maps Slurm's unset markers (NO_VAL, INFINITE) to 0.
func u32(v C.uint32_t) uint32 {
	if v == C.NO_VAL || v == C.INFINITE {
		return 0
	}
	return uint32(v)
}

func requestFrom(d *C.job_desc_msg_t, submitUID uint32, maxScript int) *wire.Request {
	r := &wire.Request{
		Token:        shim.NewToken(),
		SubmitUID:    submitUID,
		UserID:       uint32(d.user_id),
		GroupID:      uint32(d.group_id),
		Name:         goString(d.name),
		Account:      goString(d.account),
		Partition:    goString(d.partition),
		QOS:          goString(d.qos),
		WorkDir:      goString(d.work_dir),
		Comment:      goString(d.comment),
		AdminComment: goString(d.admin_comment),
		// Where a job names its GPU type outside gres. job_desc_msg_t
		// has these fields in every release Augur builds for (22.05,
		// 24.11, 26.05; job_submit_augur.c refuses older headers).
		Constraint:      goString(d.features),
		Prefer:          goString(d.prefer),
		ClusterFeatures: goString(d.cluster_features),
		Reservation:     goString(d.reservation),
		TRES: wire.TRES{
			PerNode:   goString(d.tres_per_node),
			PerJob:    goString(d.tres_per_job),
			PerTask:   goString(d.tres_per_task),
			PerSocket: goString(d.tres_per_socket),
		},
		MinNodes:     u32(d.min_nodes),
		MaxNodes:     u32(d.max_nodes),
		NumTasks:     u32(d.num_tasks),
		MinCPUs:      u32(d.min_cpus),
		TimeLimitMin: u32(d.time_limit),
	}
	if d.cpus_per_task != C.NO_VAL16 {
		r.CPUsPerTask = uint32(d.cpus_per_task)
	}
	if mem := uint64(d.pn_min_memory); mem != C.NO_VAL64 && mem != 0 {
		if mem&C.MEM_PER_CPU != 0 {
			r.MemPerCPUMB = mem &^ C.MEM_PER_CPU
		} else {
			r.MemPerNodeMB = mem
		}
	}
	if d.script != nil {
		n := int(C.strnlen(d.script, C.size_t(maxScript+1)))
		if n > maxScript {
			n, r.ScriptTruncated = maxScript, true
		}
		r.Script = C.GoStringN(d.script, C.int(n))
	}
	r.Args, r.ArgsKnown = scriptArgs(d)
	if r.Script != "" && forwardEnv.Load() {
		r.Env = shim.ScriptEnv(r.Script, jobEnviron(d))
	}
	return r
}

// jobEnviron returns job_desc's environment, what sbatch exports to the
// job ("NAME=value"), at most maxEnviron entries, each cut past the
// longest value sent (shim.ScriptEnv then sends that one's name alone).
func jobEnviron(d *C.job_desc_msg_t) []string {
	n := min(int(d.env_size), maxEnviron)
	if n <= 0 || d.environment == nil {
		return nil
	}
	const most = wire.MaxEnvValue + 1024 // a name and a value one byte too long
	env := make([]string, 0, n)
	for _, e := range unsafe.Slice(d.environment, n) {
		if e == nil {
			break
		}
		env = append(env, C.GoStringN(e, C.int(C.strnlen(e, most))))
	}
	return env
}

// maxEnviron bounds the environment entries the plugin reads of one job.
const maxEnviron = 1 << 14

// scriptArgs returns the batch script's arguments: job_desc's argv is the
// script's name, then what followed it on the sbatch line. None are sent
// (known false) past wire.MaxArgs or wire.MaxArgBytes.
func scriptArgs(d *C.job_desc_msg_t) ([]string, bool) {
	argc := int(d.argc)
	if argc <= 1 || d.argv == nil {
		return []string{}, true
	}
	if argc-1 > wire.MaxArgs {
		return nil, false
	}
	argv := unsafe.Slice(d.argv, argc)
	args := make([]string, 0, argc-1)
	left := wire.MaxArgBytes
	for _, a := range argv[1:] {
		if a == nil {
			return nil, false
		}
		n := int(C.strnlen(a, C.size_t(left+1)))
		if n > left {
			return nil, false
		}
		left -= n
		args = append(args, C.GoStringN(a, C.int(n)))
	}
	return args, true
}

func setString(field **C.char, value string) {
	cs := C.CString(value)
	defer C.free(unsafe.Pointer(cs))
	C.augur_set_str(field, cs)
}

func apply(d *C.job_desc_msg_t, resp *wire.Response, errMsg **C.char) C.int {
	if resp.Action == wire.Reject {
		if errMsg != nil {
			setString(errMsg, resp.Message)
		}
		return C.SLURM_ERROR
	}
	if resp.Annotation != "" {
		ac := goString(d.admin_comment)
		if ac != "" {
			ac += " "
		}
		setString(&d.admin_comment, ac+resp.Annotation)
	}
	if t := resp.TRES; t != nil {
		setString(&d.tres_per_node, t.PerNode)
		setString(&d.tres_per_job, t.PerJob)
		setString(&d.tres_per_task, t.PerTask)
		setString(&d.tres_per_socket, t.PerSocket)
	}
	if sf := resp.SiteFactor; sf != nil {
		d.site_factor = C.uint32_t(int64(C.augur_nice_offset()) + *sf)
	}
	// TimeMin below the job's own limit, and never over the user's own
	// --time-min (slurmctld refuses a TimeMin above the limit).
	if tm := C.uint32_t(resp.TimeMinMin); tm > 0 && (d.time_min == C.NO_VAL || d.time_min == 0) &&
		d.time_limit != C.NO_VAL && d.time_limit != C.INFINITE && tm < d.time_limit {
		d.time_min = tm
	}
	return C.SLURM_SUCCESS
}

func main() {}
