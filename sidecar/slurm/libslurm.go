//go:build cgo

package slurm

/*
#cgo LDFLAGS: -lslurm
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <signal.h>
#include <pthread.h>
#include <time.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

// libslurm's API as it changed between the releases Augur builds for
// (22.05, 24.11, 26.05), decided here from the headers and nowhere else:
// - slurm_get_errno() is gone by 24.11; libslurm has set plain errno all
//   along, so errno serves every release.
// - 26.05 names a job by a slurm_step_id_t: job_desc_msg_t lost job_id for
//   step_id, and slurm_kill_job and slurm_requeue take one instead of the
//   uint32_t id.
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
static slurm_step_id_t augur_step(uint32_t id) {
	slurm_step_id_t s = SLURM_STEP_ID_INITIALIZER;
	s.job_id = id;
	return s;
}
#define AUGUR_DESC_SET_JOB(d, id) ((d)->step_id = augur_step(id))
#define AUGUR_JOB_REF(id) augur_step(id)
#else
#define AUGUR_DESC_SET_JOB(d, id) ((d)->job_id = (id))
#define AUGUR_JOB_REF(id) (id)
#endif

static int augur_errno(int rc) { return rc == SLURM_SUCCESS ? 0 : errno; }

// augur_fix_sigpipe puts SA_ONSTACK back on a SIGPIPE handler that
// libslurm saved and restored without it (Go requires the flag).
static void augur_fix_sigpipe(void) {
	struct sigaction sa;
	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL &&
	    !(sa.sa_flags & SA_ONSTACK)) {
		sa.sa_flags |= SA_ONSTACK;
		sigaction(SIGPIPE, &sa, NULL);
	}
}

// libslurm writes to sockets slurmctld may have closed. The SIGPIPE that
// follows must never reach Go's handler on a stack it does not expect (the
// runtime aborts: "signal 13 received but handler not on signal stack"),
// so every call runs with SIGPIPE blocked on its thread, and a pending one
// is consumed before the mask is restored (the write itself fails with
// EPIPE, which libslurm reports as a communication error).
#define AUGUR_NO_SIGPIPE(call) ({ \
	sigset_t set_, old_; \
	struct timespec zero_ = {0, 0}; \
	sigemptyset(&set_); sigaddset(&set_, SIGPIPE); \
	pthread_sigmask(SIG_BLOCK, &set_, &old_); \
	int rc_ = (call); \
	while (sigtimedwait(&set_, NULL, &zero_) > 0) {} \
	augur_fix_sigpipe(); \
	pthread_sigmask(SIG_SETMASK, &old_, NULL); \
	rc_; })

static int augur_load_jobs(job_info_msg_t **msg, int detail) {
	return AUGUR_NO_SIGPIPE(augur_errno(slurm_load_jobs((time_t)0, msg, detail ? SHOW_ALL | SHOW_DETAIL : SHOW_ALL)));
}

static int augur_load_nodes(node_info_msg_t **msg) {
	return AUGUR_NO_SIGPIPE(augur_errno(slurm_load_node((time_t)0, msg, SHOW_ALL)));
}

static int augur_load_partitions(partition_info_msg_t **msg) {
	return AUGUR_NO_SIGPIPE(augur_errno(slurm_load_partitions((time_t)0, msg, SHOW_ALL)));
}

// augur_default_partition copies the default partition's name into buf
// ("" when none is the default).
static void augur_default_partition(partition_info_msg_t *m, char *buf, size_t n) {
	buf[0] = 0;
	for (uint32_t i = 0; i < m->record_count; i++) {
		partition_info_t *p = &m->partition_array[i];
		if ((p->flags & PART_FLAG_DEFAULT) && p->name) {
			snprintf(buf, n, "%s", p->name);
			return;
		}
	}
}

static int augur_load_reservations(reserve_info_msg_t **msg) {
	return AUGUR_NO_SIGPIPE(augur_errno(slurm_load_reservations((time_t)0, msg)));
}

// A reservation's nodes are a hostlist expression ("n[1-4],gpu7"). The
// hostlist is handled through void *: hostlist_t is a pointer type in 22.05
// and a struct used by pointer from 23.02, so the calls read the same.
static void *augur_hostlist(const char *list) { return slurm_hostlist_create(list); }
static char *augur_hostlist_shift(void *hl) { return slurm_hostlist_shift(hl); }
static void augur_hostlist_destroy(void *hl) { slurm_hostlist_destroy(hl); }

// augur_resv_anywhere: the reservation's jobs may use nodes outside its
// list (FLEX), or it holds every node.
static int augur_resv_anywhere(reserve_info_t *r) {
	return (r->flags & (RESERVE_FLAG_FLEX | RESERVE_FLAG_ALL_NODES | RESERVE_FLAG_ANY_NODES)) != 0;
}

static slurm_job_info_t *augur_job(job_info_msg_t *m, uint32_t i) { return &m->job_array[i]; }
static reserve_info_t *augur_resv(reserve_info_msg_t *m, uint32_t i) { return &m->reservation_array[i]; }
static node_info_t *augur_node(node_info_msg_t *m, uint32_t i) { return &m->node_array[i]; }
static char *augur_gres_detail(slurm_job_info_t *j, uint32_t i) { return j->gres_detail_str[i]; }

// site_factor travels offset by NICE_OFFSET (slurm.h); the job_modify of
// job_submit plugins sees the same descriptor.
static int augur_set_site_factor(uint32_t id, int64_t v) {
	job_desc_msg_t d;
	slurm_init_job_desc_msg(&d);
	AUGUR_DESC_SET_JOB(&d, id);
	d.site_factor = (uint32_t)((int64_t)NICE_OFFSET + v);
	return AUGUR_NO_SIGPIPE(augur_errno(slurm_update_job(&d)));
}

static int augur_signal(uint32_t id, uint16_t sig) {
	return AUGUR_NO_SIGPIPE(augur_errno(slurm_kill_job(AUGUR_JOB_REF(id), sig, KILL_FULL_JOB)));
}

// augur_cancel ends a job as scancel does: SIGKILL to every step, and the
// job CANCELLED.
static int augur_cancel(uint32_t id) {
	return AUGUR_NO_SIGPIPE(augur_errno(slurm_kill_job(AUGUR_JOB_REF(id), SIGKILL, 0)));
}

static int augur_requeue(uint32_t id) { return AUGUR_NO_SIGPIPE(augur_errno(slurm_requeue(AUGUR_JOB_REF(id), 0))); }

// augur_requeue_hold puts a finished (or running) batch job back into the
// queue held, so that it cannot start before its request is changed.
static int augur_requeue_hold(uint32_t id) {
	return AUGUR_NO_SIGPIPE(augur_errno(slurm_requeue(AUGUR_JOB_REF(id), JOB_REQUEUE_HOLD)));
}

// augur_update_request changes a pending job's GPU request (the non-NULL
// TRES strings) and AdminComment; with release set it also releases the
// job from its hold (as scontrol release does: priority INFINITE).
static int augur_update_request(uint32_t id, char *per_node, char *per_job, char *per_task, char *per_socket,
				char *admin_comment, int release) {
	job_desc_msg_t d;
	slurm_init_job_desc_msg(&d);
	AUGUR_DESC_SET_JOB(&d, id);
	d.tres_per_node = per_node;
	d.tres_per_job = per_job;
	d.tres_per_task = per_task;
	d.tres_per_socket = per_socket;
	d.admin_comment = admin_comment;
	if (release)
		d.priority = INFINITE;
	return AUGUR_NO_SIGPIPE(augur_errno(slurm_update_job(&d)));
}

static void augur_init(void) { AUGUR_NO_SIGPIPE((slurm_init(NULL), 0)); }
*/
import "C"

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// Lib talks to slurmctld through libslurm (-lslurm, slurm_init(NULL), so
// SLURM_CONF decides which cluster): no process per call, which is what
// keeps a pass over 10,000 pending jobs within its budget. Calls are
// blocking C calls; ctx is checked between them.
type Lib struct {
	// Workers is how many updates run at once (default 8): slurmctld
	// answers RPCs on several threads, and a write waits mostly on munge
	// and the network, not on the CPU.
	Workers int
	// NoDetail leaves out each job's per-node GRES (GresDetail): a cheaper
	// read, for callers that do not place jobs.
	NoDetail bool
}

var (
	initMu sync.Mutex
	inited bool
)

func libInit() error {
	initMu.Lock()
	defer initMu.Unlock()
	if inited {
		return nil
	}
	// libslurm ends the process (fatal) when it finds no configuration:
	// read it only once slurm.conf is there, so that augurd waits instead.
	path := confPath()
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%w: cannot read %s (SLURM_CONF): %v", ErrUnavailable, path, err)
	}
	// A daemon wants EPIPE, not SIGPIPE: with SIGPIPE ignored, no
	// handler libslurm saves and restores can ever run.
	signal.Ignore(syscall.SIGPIPE)
	C.augur_init()
	inited = true
	return nil
}

// defaultConf is where Debian's libslurm looks without SLURM_CONF.
const defaultConf = "/etc/slurm/slurm.conf"

func confPath() string {
	if p := os.Getenv("SLURM_CONF"); p != "" {
		return p
	}
	return defaultConf
}

// libError turns a Slurm error number into an error; controller
// communication failures wrap ErrUnavailable.
func libError(op string, rc C.int) error {
	if rc == 0 {
		return nil
	}
	msg := C.GoString(C.slurm_strerror(rc))
	switch {
	case rc >= 1000 && rc < 1100, rc >= 1800 && rc < 1900, rc == C.SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT:
		return fmt.Errorf("%w: %s: %s (%d)", ErrUnavailable, op, msg, int(rc))
	case rc == C.ESLURM_INVALID_JOB_ID || rc == C.ESLURM_ALREADY_DONE:
		return fmt.Errorf("slurm: %s: %w: %s", op, ErrGone, msg)
	}
	return fmt.Errorf("slurm: %s: %s (%d)", op, msg, int(rc))
}

func gostr(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

func unix(t C.time_t) time.Time {
	if t <= 0 || int64(t) > 1<<40 {
		return time.Time{}
	}
	return time.Unix(int64(t), 0)
}

var jobStates = [...]string{"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED",
	"TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}

// Jobs lists every job slurmctld knows, as CLI.Jobs does.
func (l *Lib) Jobs(ctx context.Context) ([]Job, error) {
	if err := begin(ctx); err != nil {
		return nil, err
	}
	defer runtime.UnlockOSThread()
	var msg *C.job_info_msg_t
	detail := C.int(1)
	if l.NoDetail {
		detail = 0
	}
	if err := libError("load jobs", C.augur_load_jobs(&msg, detail)); err != nil {
		return nil, err
	}
	defer C.slurm_free_job_info_msg(msg)
	out := make([]Job, 0, int(msg.record_count))
	for i := C.uint32_t(0); i < msg.record_count; i++ {
		j := C.augur_job(msg, i)
		st := "UNKNOWN"
		if b := int(j.job_state & C.JOB_STATE_BASE); b < len(jobStates) {
			st = jobStates[b]
		}
		job := Job{
			ID: uint64(j.job_id), State: st, UserID: uint32(j.user_id), UserName: gostr(j.user_name),
			Name: gostr(j.name), Partition: gostr(j.partition), AdminComment: gostr(j.admin_comment), Comment: gostr(j.comment),
			Constraint: gostr(j.features),
			Account:    gostr(j.account), QOS: gostr(j.qos), ExitCode: int(j.exit_code),
			Priority: uint64(j.priority), Submit: unix(j.submit_time), Start: unix(j.start_time), End: unix(j.end_time),
			Nodes: gostr(j.nodes), NodeCount: int(j.num_nodes), Requeue: j.requeue != 0,
			Restarts: int(j.restart_cnt), TRESPerNode: gostr(j.tres_per_node), TRESPerJob: gostr(j.tres_per_job),
			TRESPerTask: gostr(j.tres_per_task), TRESPerSock: gostr(j.tres_per_socket),
			Tasks:      int(j.num_tasks),
			SiteFactor: int64(j.site_factor) - int64(C.NICE_OFFSET), SiteFactorKnown: true,
		}
		job.TimeLimit = wire.LimitDuration(uint32(j.time_limit))
		for k := C.uint32_t(0); k < j.gres_detail_cnt; k++ {
			job.GresDetail = append(job.GresDetail, gostr(C.augur_gres_detail(j, k)))
		}
		out = append(out, job)
	}
	return out, nil
}

// begin readies a libslurm call: the library set up, the context still
// live, and the goroutine on one OS thread (errno is per thread); the
// caller defers runtime.UnlockOSThread.
func begin(ctx context.Context) error {
	if err := libInit(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	runtime.LockOSThread()
	return nil
}

// Nodes lists the nodes with their GPUs and the GPUs in use.
func (l *Lib) Nodes(ctx context.Context) ([]Node, error) {
	if err := begin(ctx); err != nil {
		return nil, err
	}
	defer runtime.UnlockOSThread()
	var msg *C.node_info_msg_t
	if err := libError("load nodes", C.augur_load_nodes(&msg)); err != nil {
		return nil, err
	}
	defer C.slurm_free_node_info_msg(msg)
	// A node's partitions are filled in from the partition table, here on
	// the client side.
	var parts *C.partition_info_msg_t
	if err := libError("load partitions", C.augur_load_partitions(&parts)); err != nil {
		return nil, err
	}
	defer C.slurm_free_partition_info_msg(parts)
	C.slurm_populate_node_partitions(msg, parts)
	out := make([]Node, 0, int(msg.record_count))
	for i := C.uint32_t(0); i < msg.record_count; i++ {
		n := C.augur_node(msg, i)
		if n.name == nil {
			continue // a hole in the node table
		}
		node := Node{
			Name: gostr(n.name), State: nodeState(uint32(n.node_state)),
			Gres: gostr(n.gres), GresUsed: gostr(n.gres_used),
			Features: features(gostr(n.features), gostr(n.features_act)),
		}
		if p := gostr(n.partitions); p != "" {
			node.Partitions = strings.Split(p, ",")
		}
		out = append(out, node)
	}
	return out, nil
}

// Reservations lists the reservations with their nodes.
func (l *Lib) Reservations(ctx context.Context) ([]Reservation, error) {
	if err := begin(ctx); err != nil {
		return nil, err
	}
	defer runtime.UnlockOSThread()
	var msg *C.reserve_info_msg_t
	if err := libError("load reservations", C.augur_load_reservations(&msg)); err != nil {
		return nil, err
	}
	defer C.slurm_free_reservation_info_msg(msg)
	out := make([]Reservation, 0, int(msg.record_count))
	for i := C.uint32_t(0); i < msg.record_count; i++ {
		r := C.augur_resv(msg, i)
		if r.name == nil {
			continue
		}
		res := Reservation{Name: gostr(r.name), AnyNode: C.augur_resv_anywhere(r) != 0}
		if r.node_list != nil && *r.node_list != 0 {
			hl := C.augur_hostlist(r.node_list)
			for h := C.augur_hostlist_shift(hl); h != nil; h = C.augur_hostlist_shift(hl) {
				res.Nodes = append(res.Nodes, C.GoString(h))
				C.free(unsafe.Pointer(h))
			}
			C.augur_hostlist_destroy(hl)
		}
		out = append(out, res)
	}
	return out, nil
}

// DefaultPartition returns the name of the default partition ("" when
// slurm.conf marks none).
func (l *Lib) DefaultPartition(ctx context.Context) (string, error) {
	if err := begin(ctx); err != nil {
		return "", err
	}
	defer runtime.UnlockOSThread()
	var msg *C.partition_info_msg_t
	if err := libError("load partitions", C.augur_load_partitions(&msg)); err != nil {
		return "", err
	}
	defer C.slurm_free_partition_info_msg(msg)
	var buf [256]C.char
	C.augur_default_partition(msg, &buf[0], C.size_t(len(buf)))
	return C.GoString(&buf[0]), nil
}

func nodeState(s uint32) string {
	base := [...]string{"UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE"}
	name := "UNKNOWN"
	if b := s & C.NODE_STATE_BASE; int(b) < len(base) {
		name = base[b]
	}
	if s&C.NODE_STATE_DRAIN != 0 {
		name += "+DRAIN"
	}
	if s&C.NODE_STATE_NO_RESPOND != 0 {
		name += "+NOT_RESPONDING"
	}
	if s&C.NODE_STATE_FAIL != 0 {
		name += "+FAIL"
	}
	return name
}

// SetSiteFactors writes each job's SiteFactor, Workers at a time, and
// returns one error per update (nil where it worked), in order. An
// unavailable controller stops the rest (they are reported as ctx errors
// or ErrUnavailable).
func (l *Lib) SetSiteFactors(ctx context.Context, ups []SiteFactor) []error {
	errs := make([]error, len(ups))
	if err := libInit(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	w := l.Workers
	if w <= 0 {
		w = 8
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(w, len(ups)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for i := range next {
				if err := context.Cause(ctx); err != nil {
					errs[i] = err
					continue
				}
				u := ups[i]
				err := libError(fmt.Sprintf("job %d: SiteFactor=%d", u.JobID, u.Value),
					C.augur_set_site_factor(C.uint32_t(u.JobID), C.int64_t(u.Value)))
				if isUnavailable(err) {
					cancel(err)
				}
				errs[i] = err
			}
		}()
	}
	for i := range ups {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}

// Signal sends sig to every step of a job, the batch shell included (as
// scancel --full --signal does).
func (l *Lib) Signal(ctx context.Context, id uint64, sig int) error {
	if err := begin(ctx); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	return libError(fmt.Sprintf("signal job %d", id), C.augur_signal(C.uint32_t(id), C.uint16_t(sig)))
}

// RequeueOnto puts a finished batch job back into the queue with another
// GPU request: requeued held (scontrol requeuehold), its TRES strings
// (those not empty) and AdminComment replaced, then released. A failure
// after the requeue leaves the job held, which the error says: an admin
// releases it (scontrol release) or cancels it.
func (l *Lib) RequeueOnto(ctx context.Context, id uint64, tres wire.TRES, adminComment string) error {
	if err := begin(ctx); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	if err := libError(fmt.Sprintf("requeue job %d held", id), C.augur_requeue_hold(C.uint32_t(id))); err != nil {
		return err
	}
	cstr := func(s string) *C.char {
		if s == "" {
			return nil
		}
		return C.CString(s)
	}
	strs := []*C.char{cstr(tres.PerNode), cstr(tres.PerJob), cstr(tres.PerTask), cstr(tres.PerSocket), cstr(adminComment)}
	defer func() {
		for _, p := range strs {
			if p != nil {
				C.free(unsafe.Pointer(p))
			}
		}
	}()
	if err := libError(fmt.Sprintf("change job %d's GPU request", id),
		C.augur_update_request(C.uint32_t(id), strs[0], strs[1], strs[2], strs[3], strs[4], 0)); err != nil {
		return fmt.Errorf("%w (the job is requeued and held: scontrol release %d, or scancel it)", err, id)
	}
	if err := libError(fmt.Sprintf("release job %d", id),
		C.augur_update_request(C.uint32_t(id), nil, nil, nil, nil, nil, 1)); err != nil {
		return fmt.Errorf("%w (the job is requeued onto its new request but held: scontrol release %d)", err, id)
	}
	return nil
}

// Cancel ends a job as scancel does; the job's state becomes CANCELLED.
func (l *Lib) Cancel(ctx context.Context, id uint64) error {
	if err := begin(ctx); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	return libError(fmt.Sprintf("cancel job %d", id), C.augur_cancel(C.uint32_t(id)))
}

// SetAdminComment replaces a job's AdminComment (pending or running).
func (l *Lib) SetAdminComment(ctx context.Context, id uint64, comment string) error {
	if err := begin(ctx); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	c := C.CString(comment)
	defer C.free(unsafe.Pointer(c))
	return libError(fmt.Sprintf("set job %d's AdminComment", id), C.augur_update_request(C.uint32_t(id), nil, nil, nil, nil, c, 0))
}

// Requeue puts a job back into the queue (scontrol requeue).
func (l *Lib) Requeue(ctx context.Context, id uint64) error {
	if err := begin(ctx); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	return libError(fmt.Sprintf("requeue job %d", id), C.augur_requeue(C.uint32_t(id)))
}
