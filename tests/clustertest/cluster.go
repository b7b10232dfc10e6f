package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// RunTimeout is the budget of one command run by Cluster.Run.
const RunTimeout = 60 * time.Second

// Cluster is a test cluster started by one of tests/cluster's scripts.
type Cluster struct {
	Dir  string   // the cluster's directory: etc/, log/, var/
	Repo string   // the repository root
	Bin  string   // the binaries under test: $AUGUR_BIN, default <Repo>/bin
	Env  []string // the environment of every command: SLURM_CONF, AUGUR_CONFIG and the shim's 2 s cool-down

	releaseMu    sync.Mutex
	major, minor int // the running release, once read (0: not yet)
}

// New describes the cluster in the directory named by the environment
// variable dirEnv, or in defaultDir (relative to the repository root) when
// that is unset. It starts nothing.
func New(dirEnv, defaultDir string) *Cluster {
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	dir := os.Getenv(dirEnv)
	if dir == "" {
		dir = filepath.Join(repo, defaultDir)
	}
	bin := os.Getenv("AUGUR_BIN")
	if bin == "" {
		bin = filepath.Join(repo, "bin")
	}
	return &Cluster{
		Dir:  dir,
		Repo: repo,
		Bin:  bin,
		Env: append(os.Environ(),
			"SLURM_CONF="+filepath.Join(dir, "etc", "slurm.conf"),
			"AUGUR_CONFIG="+filepath.Join(dir, "etc", "augur.yaml"),
			"AUGUR_TEST_SHIM_COOLDOWN=2s",
		),
	}
}

// RequireRoot, for TestMain, exits with status 1 saying "PKG: needs root
// (WHY)" unless the process runs as root.
func RequireRoot(pkg, why string) {
	if os.Getuid() != 0 {
		fmt.Fprintf(os.Stderr, "%s: needs root (%s)\n", pkg, why)
		os.Exit(1)
	}
}

// Script runs tests/cluster/NAME DIR ARGS... and returns its combined output.
func (c *Cluster) Script(name string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(c.Repo, "tests", "cluster", name), append([]string{c.Dir}, args...)...)
	cmd.Env = c.Env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Run runs a command in the cluster's environment, killed after RunTimeout,
// and returns its stdout and stderr.
func (c *Cluster) Run(t testing.TB, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.Env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// Must runs a command as Run does, returns its stdout, and fails the test if
// it fails.
func (c *Cluster) Must(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, stderr, err := c.Run(t, name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr)
	}
	return out
}

// JobOut is the path of a job's output file; id may be sbatch's "%j".
func (c *Cluster) JobOut(id string) string {
	return filepath.Join(c.Dir, "log", "job-"+id+".out")
}

// BatchScript writes a batch script into the cluster directory, removed
// when the test ends, and returns its path.
func (c *Cluster) BatchScript(t testing.TB, body string) string {
	t.Helper()
	f, err := os.CreateTemp(c.Dir, "job-*.sh")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(body)
	f.Close()
	t.Cleanup(func() { os.Remove(f.Name()) })
	return f.Name()
}

// TrySbatch runs sbatch --parsable with ARGS, the job's output going to
// the cluster directory (JobOut), never into the source tree. It returns
// the job id and sbatch's stderr.
func (c *Cluster) TrySbatch(t testing.TB, args ...string) (uint64, string, error) {
	t.Helper()
	return c.TrySbatchEnv(t, nil, args...)
}

// TrySbatchEnv is TrySbatch run with the variables vars ("NAME=value")
// added to its environment, as MODEL=x sbatch ... runs it.
func (c *Cluster) TrySbatchEnv(t testing.TB, vars []string, args ...string) (uint64, string, error) {
	t.Helper()
	cmd := append([]string{"sbatch", "--parsable", "--output=" + c.JobOut("%j")}, args...)
	if len(vars) > 0 {
		cmd = append(append([]string{"env"}, vars...), cmd...)
	}
	out, stderr, err := c.Run(t, cmd[0], cmd[1:]...)
	if err != nil {
		return 0, stderr, err
	}
	id, err := ParseSbatchID(out)
	return id, stderr, err
}

// Sbatch submits as TrySbatch does and returns the job id; it fails the
// test if sbatch fails or prints no job id.
func (c *Cluster) Sbatch(t testing.TB, args ...string) uint64 {
	t.Helper()
	id, stderr, err := c.TrySbatch(t, args...)
	if err != nil {
		t.Fatalf("sbatch %v: %v\n%s", args, err, stderr)
	}
	return id
}

// ParseSbatchID reads the job id from what sbatch --parsable printed:
// "ID" or "ID;CLUSTER".
func ParseSbatchID(out string) (uint64, error) {
	return strconv.ParseUint(strings.TrimSpace(strings.Split(out, ";")[0]), 10, 64)
}

// WaitFor polls cond every 100 ms until it holds, and fails the test if
// the timeout passes first.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// SlurmRelease is the running Slurm's major and minor release (26, 5 for
// 26.05.5), from scontrol --version, read once.
func (c *Cluster) SlurmRelease(t testing.TB) (major, minor int) {
	t.Helper()
	c.releaseMu.Lock()
	defer c.releaseMu.Unlock()
	if c.major == 0 {
		c.major, c.minor = c.readRelease(t)
	}
	return c.major, c.minor
}

func (c *Cluster) readRelease(t testing.TB) (major, minor int) {
	t.Helper()
	out, stderr, err := c.Run(t, "scontrol", "--version")
	if err != nil {
		t.Fatalf("scontrol --version: %v %s", err, stderr)
	}
	major, minor, ok := parseRelease(out)
	if !ok {
		t.Fatalf("no version in scontrol --version: %q", out)
	}
	return major, minor
}

// ConcurrentJobSubmit says whether the running slurmctld may call
// job_submit from several threads at once.
func (c *Cluster) ConcurrentJobSubmit(t testing.TB) bool {
	t.Helper()
	return concurrentJobSubmit(c.SlurmRelease(t))
}

var releaseRE = regexp.MustCompile(`(\d+)\.(\d+)\.\d+`)

// parseRelease reads "slurm 26.05.5" (or "slurm-wlm 22.05.8") as 26, 5.
func parseRelease(version string) (major, minor int, ok bool) {
	m := releaseRE.FindStringSubmatch(version)
	if m == nil {
		return 0, 0, false
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	return major, minor, true
}

// concurrentJobSubmit: from 23.02 on, slurmctld may call job_submit from
// several threads at once; 22.05 holds one global mutex around every call.
func concurrentJobSubmit(major, minor int) bool {
	return major > 23 || major == 23 && minor >= 2
}

// TRES writes a GRES request ("gres:gpu:t4:1", as 22.05 prints it) the way
// the running release prints tres_per_node and tres_per_job: from 23.11 on
// they say "gres/gpu:t4:1".
func (c *Cluster) TRES(t testing.TB, s string) string {
	t.Helper()
	if major, minor := c.SlurmRelease(t); major > 23 || major == 23 && minor >= 11 {
		return strings.ReplaceAll(s, "gres:", "gres/")
	}
	return s
}

// TRESPerTask is TRES for tres_per_task, where 24.11 and 26.05 write GPUs
// as a TRES, name=count: --gpus-per-task=1 is "gres/gpu=1" there (the 23.x
// releases are not tested).
func (c *Cluster) TRESPerTask(t testing.TB, s string) string {
	t.Helper()
	s = c.TRES(t, s)
	if major, _ := c.SlurmRelease(t); major >= 24 {
		if i := strings.LastIndexByte(s, ':'); i >= 0 {
			s = s[:i] + "=" + s[i+1:]
		}
	}
	return s
}

// GresPart keeps the GRES entries of a TRES string: from 23.02 on
// --cpus-per-task (one CPU by default) also lands in tres_per_task, as
// "cpu=1" beside the GPUs.
func GresPart(s string) string {
	var kept []string
	for _, e := range strings.Split(s, ",") {
		if strings.HasPrefix(e, "gres") {
			kept = append(kept, e)
		}
	}
	return strings.Join(kept, ",")
}
