// Package config is Augur's one configuration file, read by augurd, the
// job_submit shim and the CLI. It is the only package that imports viper; the
// rest of Augur receives a plain, validated *Config.
//
// Precedence, highest first: a flag the caller passes as an override, an
// environment variable AUGUR_<SECTION>_<KEY> (for example AUGUR_SHIM_TIMEOUT=80ms),
// the YAML file, the defaults below. The file is /etc/augur/augur.yaml unless
// AUGUR_CONFIG or --config names another. A key the schema does not know, or a
// value that does not parse or is out of range, is an error that names the key
// and says what is accepted.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/user"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/augur-hpc/augur/sidecar/policy"
	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// DefaultPath is where the file lives when neither AUGUR_CONFIG nor --config says otherwise.
const DefaultPath = "/etc/augur/augur.yaml"

// EnvPath names the environment variable that overrides DefaultPath.
const EnvPath = "AUGUR_CONFIG"

// CurrentVersion is the schema version this build reads.
const CurrentVersion = 1

// Config is the whole, validated configuration.
type Config struct {
	Version   int       `mapstructure:"version"`
	SlurmUser string    `mapstructure:"slurm_user"`
	Socket    Socket    `mapstructure:"socket"`
	Shim      Shim      `mapstructure:"shim"`
	Store     Store     `mapstructure:"store"`
	Metrics   Metrics   `mapstructure:"metrics"`
	Log       Log       `mapstructure:"log"`
	Cluster   Cluster   `mapstructure:"cluster"`
	Policy    Policy    `mapstructure:"policy"`
	Outcomes  Outcomes  `mapstructure:"outcomes"`
	Predictor Predictor `mapstructure:"predictor"`
	Node      Node      `mapstructure:"node"`
	Live      Live      `mapstructure:"live"`
	Balance   Balance   `mapstructure:"balance"`

	// Path is the file the configuration was read from ("" when none existed).
	Path string `mapstructure:"-"`
}

// Socket is augurd's unix socket, the shim's way in.
type Socket struct {
	Path string `mapstructure:"path"`
	// Mode is the socket file's permission bits, octal as in chmod ("0660").
	Mode FileMode `mapstructure:"mode"`
	// AllowedUsers may connect besides root and slurm_user (names or numeric uids).
	AllowedUsers []string `mapstructure:"allowed_users"`
}

// Shim is what the job_submit plugin inside slurmctld obeys.
type Shim struct {
	// Timeout is the hard deadline of one round trip to augurd; slurmctld
	// holds its job lock meanwhile.
	Timeout time.Duration `mapstructure:"timeout"`
	// FailureThreshold consecutive failures open the circuit ...
	FailureThreshold int `mapstructure:"failure_threshold"`
	// ... and for Cooldown the shim accepts jobs without asking augurd.
	Cooldown time.Duration `mapstructure:"cooldown"`
	// MaxScriptBytes caps the batch script sent to augurd; longer scripts are
	// sent truncated and marked so.
	MaxScriptBytes ByteSize `mapstructure:"max_script_bytes"`
	// ReuseWindow: for this long after augurd decided a submission, an
	// identical one (every field, the script included) gets the same
	// decision without a round trip; augurd records it with the next
	// request. 0 turns it off.
	ReuseWindow time.Duration `mapstructure:"reuse_window"`
	// ForwardEnv sends augurd what of the job's environment its script
	// reads (MODEL=llama-2-7b sbatch train.sh), the values of variables
	// named like secrets withheld; false sends none.
	ForwardEnv bool `mapstructure:"forward_env"`
}

// Store is augurd's SQLite database.
type Store struct {
	Path string `mapstructure:"path"`
	// CommitWait is how long a submission's answer may wait for its record
	// to be committed; past it the answer goes out and the record stays
	// queued for the writer. 0 (the default) answers at once: slurmctld
	// should not wait on a disk, and a record lost with a killed augurd is
	// rebuilt from the job's AdminComment annotation.
	CommitWait time.Duration `mapstructure:"commit_wait"`
}

// Metrics is the Prometheus endpoint.
type Metrics struct {
	// Listen is a TCP address for /metrics; empty turns the endpoint off.
	Listen string `mapstructure:"listen"`
}

// Log is augurd's and the CLI's logging.
type Log struct {
	Level  string `mapstructure:"level"`  // debug, info, warn, error
	Format string `mapstructure:"format"` // text or json
}

// Cluster describes the hardware Augur decides about.
type Cluster struct {
	// GPUTypes lists the gres/gpu types of the cluster, smallest or cheapest
	// first: a typeless request is placed on the first type that fits.
	GPUTypes []GPUType `mapstructure:"gpu_types"`
}

// GPUType is one gres/gpu type, as named in gres.conf.
type GPUType struct {
	Name   string   `mapstructure:"name"`
	Memory ByteSize `mapstructure:"memory"`
	// Shards is how many gres/shard each GPU of this type carries (gres.conf
	// "Name=shard Count=N File=<that GPU>"); 0: the type is never shared.
	Shards int `mapstructure:"shards"`
	// Aliases are the other names that mean this type at the site: node
	// features (--constraint=volta32gb), partition names (kempner_h100),
	// account suffixes (@h100 or h100: proj@h100) and QOS or reservation
	// names, matched case-insensitively. augurd reads a job's GPU type from
	// its gres, then its constraint (features matched against the names and
	// aliases here, and against the nodes' own features), then its
	// partition, account, QOS and reservation by these aliases, and last by
	// the GPU names their words spell (gpu_a100, proj@h100, v100-32g).
	Aliases []string `mapstructure:"aliases"`
}

// Policy tunes the submission decision.
type Policy struct {
	// HistoryMinRuns is how many finished runs of the same user and script
	// it takes before their figures are used as the prediction.
	HistoryMinRuns int `mapstructure:"history_min_runs"`
	// RewriteTypelessGPUs lets Augur name the GPU type of a request that
	// names none, choosing the first of cluster.gpu_types that fits.
	RewriteTypelessGPUs bool `mapstructure:"rewrite_typeless_gpus"`
	// RewriteTypedGPUs lets Augur move a request that names a GPU type too
	// small for its predicted peak memory (from earlier runs or the trained
	// model) to the first of cluster.gpu_types that holds it, rather than
	// let it die of GPU out-of-memory.
	RewriteTypedGPUs bool `mapstructure:"rewrite_typed_gpus"`
	// RewriteFromPrior lets both rewrites rest on the prediction shipped in
	// the binaries (the prior for image models, the formula for
	// transformers) for a job with no history and no trained model behind
	// it; off, only earlier runs and the trained model move a job.
	RewriteFromPrior bool `mapstructure:"rewrite_from_prior"`
	// RejectCertainOOM rejects a job whose named GPU type is smaller than the
	// memory the same job used in every one of its recorded runs.
	RejectCertainOOM bool `mapstructure:"reject_certain_oom"`
	// SiteFactorMax is the largest initial SiteFactor given at submission to
	// jobs with a runtime prediction (shorter predicted jobs get more); 0 turns
	// the initial SiteFactor off.
	SiteFactorMax int64 `mapstructure:"site_factor_max"`
	// ShardSmallJobs turns a one-GPU request into a gres/shard request on a
	// type with shards (cluster.gpu_types[].shards) when the job's earlier
	// runs show that a few shards hold its peak memory and its GPU use.
	ShardSmallJobs bool `mapstructure:"shard_small_jobs"`
}

// Predictor is the trained model's life in augurd.
type Predictor struct {
	// ModelDir holds the versioned model files (the newest that loads is used).
	ModelDir string `mapstructure:"model_dir"`
	// RetrainInterval is the longest time between two trainings.
	RetrainInterval time.Duration `mapstructure:"retrain_interval"`
	// RetrainAfter new outcomes start a training early.
	RetrainAfter int `mapstructure:"retrain_after"`
	// JobFiles lets augurd read the config files and the program a job's
	// script names from the submitter's disk.
	JobFiles JobFiles `mapstructure:"job_files"`
}

// JobFiles is augurd reading the config files (YAML, JSON) a batch script's
// launch commands name and do not write (python train.py --config
// configs/llama2-7b.yaml) and the Python programs they run, from the job's
// submission directory, as the job will: the model, batch size and
// precision the files set are read as the command's own flags, and the
// program's option defaults where the command sets neither. augurd reads
// a file only where it is a regular file the job's user owns, within the
// budget; otherwise it decides as if the file were not there.
type JobFiles struct {
	// Enabled turns the reading on; it needs the users' file systems
	// mounted where augurd runs.
	Enabled bool `mapstructure:"enabled"`
	// Budget is how long one submission waits for its files (all of
	// them); a file not read by then is left out of that decision.
	Budget time.Duration `mapstructure:"budget"`
	// MaxBytes is the largest file read; a larger one is left out.
	MaxBytes ByteSize `mapstructure:"max_bytes"`
}

// Outcomes is augurd's endpoint for the compute nodes' job reports.
type Outcomes struct {
	// Listen is a TCP address; reports must be MUNGE-signed by root or
	// slurm_user. Empty turns the endpoint off.
	Listen string `mapstructure:"listen"`
	// MungeSocket is munged's socket ("" for libmunge's default).
	MungeSocket string `mapstructure:"munge_socket"`
}

// Node is augur-node's part: the Prolog/Epilog hooks and the node agent.
type Node struct {
	// Augurd is where the node sends reports: augurd's outcomes.listen,
	// as host:port.
	Augurd string `mapstructure:"augurd"`
	// Store is the node's SQLite database.
	Store string `mapstructure:"store"`
	// Interval is how often the agent samples the GPUs.
	Interval time.Duration `mapstructure:"interval"`
	// LiveEvery is how often the agent sends augurd its running jobs' GPU
	// use over the last period (outcome.Live), for live.idle_gpu.
	LiveEvery time.Duration `mapstructure:"live_every"`
	// RawRetention is how long samples are kept at Interval before they
	// are folded into one row per minute.
	RawRetention time.Duration `mapstructure:"raw_retention"`
	// Retention is how long finished, delivered jobs stay on the node.
	Retention time.Duration `mapstructure:"retention"`
	// DCGMJobMapDir, when set, gets dcgm-exporter's job-mapping files
	// (--hpc-job-mapping-dir): one file per GPU index listing its job ids.
	DCGMJobMapDir string `mapstructure:"dcgm_job_map_dir"`
	// NVML selects the GPU backend: "real" (libnvidia-ml). Test builds
	// also accept "mock-dgxa100"; production builds refuse it.
	NVML string `mapstructure:"nvml"`
	// NVMLAccounting turns NVML accounting mode on for each GPU where it is
	// off, when the agent starts (as root; it stays on until the driver
	// unloads; `nvidia-smi -am 0` turns it off). The driver then keeps
	// each process's most GPU memory held, which the agent reads so that
	// a peak between two samples (the allocation a job dies of) is seen.
	// Off, the agent still uses accounting where it is already on.
	NVMLAccounting bool `mapstructure:"nvml_accounting"`
	// MungeSocket is munged's socket ("" for libmunge's default).
	MungeSocket string `mapstructure:"munge_socket"`
	// Socket is the agent's socket, where the hooks tell it about jobs.
	Socket string `mapstructure:"socket"`
}

// Live is augurd's live scheduling: a loop that reads Slurm's queue, asks
// a policy (the same code augur simulate runs) for an order and for
// preemptions, and applies them as SiteFactor values and signal+requeue.
type Live struct {
	// Enabled starts the loop (and the admin socket) in augurd.
	Enabled bool `mapstructure:"enabled"`
	// Interval is the time between two passes.
	Interval time.Duration `mapstructure:"interval"`
	// Policy names the policy (augur simulate --policy lists them).
	Policy string `mapstructure:"policy"`
	// DryRun records what the loop would do and does none of it.
	DryRun bool `mapstructure:"dry_run"`
	// SiteFactorMax bounds the SiteFactor values the loop writes (0 to it):
	// how far Augur's order may move a job against the site's other factors.
	SiteFactorMax int64 `mapstructure:"site_factor_max"`
	// Grace is the time between the signal and the requeue of a preempted
	// job (0: requeue at once, without a signal).
	Grace time.Duration `mapstructure:"grace"`
	// PreemptSignal is the signal sent to all of a preempted job's steps,
	// the batch shell included (TERM, USR1, USR2, INT, HUP, CONT).
	PreemptSignal string `mapstructure:"preempt_signal"`
	// MinRunTime: a job that has run less than this is never preempted.
	MinRunTime time.Duration `mapstructure:"min_run_time"`
	// MaxPreemptions caps how often one job is requeued (Slurm's restart
	// count); 0 turns preemption off.
	MaxPreemptions int `mapstructure:"max_preemptions"`
	// AdminSocket is where `augur pause`, `augur resume` and `augur status`
	// reach augurd (root and slurm_user only, checked with SO_PEERCRED).
	AdminSocket string `mapstructure:"admin_socket"`
	// OOMRecovery requeues jobs that died of GPU out-of-memory onto a GPU
	// type that holds them (it runs whether or not Enabled is set; DryRun
	// and the pause switch apply to it too).
	OOMRecovery OOMRecovery `mapstructure:"oom_recovery"`
	// IdleGPU flags running jobs whose GPUs stay idle and, where the site
	// says so, warns then cancels them (it runs whether or not Enabled is
	// set; DryRun and the pause switch apply to it too).
	IdleGPU IdleGPU `mapstructure:"idle_gpu"`
	// TimeMin sets each predictable job's Slurm TimeMin at submission to
	// its upper predicted runtime, below its own limit (DryRun only
	// annotates it).
	TimeMin TimeMin `mapstructure:"time_min"`
}

// TimeMin is live.time_min (see predictor.TimeMin).
type TimeMin struct {
	// Enabled turns it on.
	Enabled bool `mapstructure:"enabled"`
}

// IdleGPU is live.idle_gpu (see core.DecideIdle). It judges jobs from the
// node agents' live periods (node.live_every).
type IdleGPU struct {
	// Enabled turns flagging on.
	Enabled bool `mapstructure:"enabled"`
	// ThresholdPct: a GPU under this SM utilisation (percent) is idle.
	ThresholdPct float64 `mapstructure:"threshold_pct"`
	// Grace is the time from a job's start that is never judged.
	Grace time.Duration `mapstructure:"grace"`
	// Window: a job whose GPUs all stay idle this long is flagged.
	Window time.Duration `mapstructure:"window"`
	// Cancel warns a flagged job and cancels it WarnDelay later if it is
	// still idle.
	Cancel    bool          `mapstructure:"cancel"`
	WarnDelay time.Duration `mapstructure:"warn_delay"`
	// Signal is sent to the job's steps and batch shell with the warning
	// ("" sends none): a signal the site's jobs handle, as they do
	// sbatch --signal's.
	Signal string `mapstructure:"signal"`
	// ExemptPartitions are never judged.
	ExemptPartitions []string `mapstructure:"exempt_partitions"`
}

// OOMRecovery is live.oom_recovery (see core.DecideOOM).
type OOMRecovery struct {
	// Enabled turns it on.
	Enabled bool `mapstructure:"enabled"`
	// MaxRequeues bounds how often one job is requeued for GPU OOM.
	MaxRequeues int `mapstructure:"max_requeues"`
	// Margin is the headroom the new type must have over what the job is
	// known to need (0.1: 10%).
	Margin float64 `mapstructure:"margin"`
}

// Balance is augurd's endpoint for running jobs (sidecar/balance): a job's
// ranks report their step times and fetch a plan that evens out slow GPUs.
// Requests are MUNGE-signed by the job's owner (or root or slurm_user).
type Balance struct {
	// Listen is a TCP address reachable from the compute nodes; empty (the
	// default) turns the endpoint off.
	Listen string `mapstructure:"listen"`
	// MungeSocket is munged's socket ("" for libmunge's default).
	MungeSocket string `mapstructure:"munge_socket"`
	// MaxJobs bounds the jobs followed in memory; past it the job that
	// reported least recently is forgotten.
	MaxJobs int `mapstructure:"max_jobs"`
	// JobIdle: a job that has not reported for this long is forgotten.
	JobIdle time.Duration `mapstructure:"job_idle"`
	// Window is how many step times are kept per rank.
	Window int `mapstructure:"window"`
	// SlowRatio is the slowdown (the median rank's speed over the rank's)
	// at which a rank counts as slow, ClearRatio the one under which it
	// stops, and Persist how many reports in a row it must stay over
	// SlowRatio before it is called slow.
	SlowRatio  float64 `mapstructure:"slow_ratio"`
	ClearRatio float64 `mapstructure:"clear_ratio"`
	Persist    int     `mapstructure:"persist"`
	// MinGain is the least predicted gain (0.03 = 3%) for which a job's
	// plan changes.
	MinGain float64 `mapstructure:"min_gain"`
	// OwnerCache is how long the owners of Slurm's jobs, read with one
	// squeue, are trusted before they are read again.
	OwnerCache time.Duration `mapstructure:"owner_cache"`
}

// PreemptSignals maps the accepted live.preempt_signal names to numbers (Linux).
var PreemptSignals = map[string]int{"HUP": 1, "INT": 2, "USR1": 10, "USR2": 12, "TERM": 15, "CONT": 18}

// Default returns the configuration used for every key the file leaves out.
func Default() Config {
	return Config{
		Version:   CurrentVersion,
		SlurmUser: "slurm",
		Socket: Socket{
			Path:         "/run/augur/augurd.sock",
			Mode:         0o660,
			AllowedUsers: []string{},
		},
		Shim: Shim{
			Timeout:          50 * time.Millisecond,
			FailureThreshold: 3,
			Cooldown:         30 * time.Second,
			MaxScriptBytes:   4 << 20,
			ReuseWindow:      time.Second,
			ForwardEnv:       true,
		},
		Store:   Store{Path: "/var/lib/augur/augur.db", CommitWait: 0},
		Metrics: Metrics{Listen: "127.0.0.1:9467"},
		Log:     Log{Level: "info", Format: "text"},
		Cluster: Cluster{GPUTypes: []GPUType{}},
		Policy: Policy{
			HistoryMinRuns: 1,
			SiteFactorMax:  0,
		},
		Outcomes: Outcomes{Listen: ":6831"},
		Predictor: Predictor{
			ModelDir:        "/var/lib/augur/models",
			RetrainInterval: 6 * time.Hour,
			RetrainAfter:    200,
			JobFiles:        JobFiles{Budget: 10 * time.Millisecond, MaxBytes: 256 << 10},
		},
		Node: Node{
			Augurd:         "localhost:6831",
			Store:          "/var/lib/augur/node.db",
			Interval:       time.Second,
			RawRetention:   time.Hour,
			Retention:      30 * 24 * time.Hour,
			NVML:           "real",
			NVMLAccounting: true,
			LiveEvery:      time.Minute,
			Socket:         "/run/augur/node.sock",
		},
		Live: Live{
			Enabled:        false,
			Interval:       10 * time.Second,
			Policy:         "augur",
			SiteFactorMax:  100000,
			Grace:          60 * time.Second,
			PreemptSignal:  "USR1",
			MinRunTime:     10 * time.Minute,
			MaxPreemptions: 3,
			AdminSocket:    "/run/augur/admin.sock",
			OOMRecovery:    OOMRecovery{MaxRequeues: 1, Margin: 0.1},
			IdleGPU:        IdleGPU{ThresholdPct: 5, Grace: 15 * time.Minute, Window: 30 * time.Minute, WarnDelay: 15 * time.Minute},
		},
		Balance: Balance{
			MaxJobs:    1024,
			JobIdle:    time.Hour,
			Window:     20,
			SlowRatio:  1.10,
			ClearRatio: 1.05,
			Persist:    3,
			MinGain:    0.03,
			OwnerCache: 30 * time.Second,
		},
	}
}

// Path returns the file to read: explicit if not empty, else $AUGUR_CONFIG, else DefaultPath.
func Path(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if p := os.Getenv(EnvPath); p != "" {
		return p
	}
	return DefaultPath
}

// ErrNotFound is returned by Load when an explicitly named file does not exist.
var ErrNotFound = errors.New("config file not found")

// Load reads the file at path (see Path), applies the environment and the
// overrides (flat keys such as "log.level"), and validates the result. A
// missing file at the default location is not an error: the defaults apply.
func Load(path string, overrides map[string]any) (*Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	v.SetEnvPrefix("AUGUR")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	// Each setting is bound to its AUGUR_* variable by setDefaults; a
	// section is not (AutomaticEnv would let AUGUR_NODE=anything replace
	// the whole node: section of the file with a string, silently).
	setDefaults(v, "", reflect.ValueOf(Default()))

	cfg := Default()
	if path == "" {
		path = Path("")
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		var raw map[string]any
		if err := yaml.Unmarshal(data, &raw); err != nil {
			return nil, fmt.Errorf("config %s: not valid YAML: %w", path, err)
		}
		if err := checkKeys(raw); err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
		if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("config %s: not valid YAML: %w", path, err)
		}
		cfg.Path = path
	case errors.Is(err, os.ErrNotExist) && path == DefaultPath:
		// No file: defaults, environment and overrides only.
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("config %s: %w (set %s or --config to an existing file)", path, ErrNotFound, EnvPath)
	default:
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	for k, val := range overrides {
		v.Set(k, val)
	}

	var md mapstructure.Metadata
	dc := func(c *mapstructure.DecoderConfig) {
		c.ErrorUnused = true
		c.Metadata = &md
		c.WeaklyTypedInput = true
		c.DecodeHook = mapstructure.ComposeDecodeHookFunc(
			byteSizeHook, fileModeHook,
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToSliceHookFunc(","),
		)
	}
	if err := v.Unmarshal(&cfg, dc); err != nil {
		return nil, fmt.Errorf("config %s: %w", describe(path), cleanDecodeError(err))
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config %s: %w", describe(path), err)
	}
	return &cfg, nil
}

func describe(path string) string {
	if _, err := os.Stat(path); err != nil {
		return "(defaults)"
	}
	return path
}

// cleanDecodeError turns mapstructure's wording into one that names keys the
// way the file spells them.
func cleanDecodeError(err error) error {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "decoding failed due to the following error(s):\n\n", "")
	if strings.Contains(msg, "has invalid keys:") {
		msg += " (see etc/augur.yaml for every key this version knows)"
	}
	return errors.New(msg)
}

// setDefaults registers every leaf of the default struct with viper, and
// binds it to its AUGUR_* variable (node.store to AUGUR_NODE_STORE).
func setDefaults(v *viper.Viper, prefix string, rv reflect.Value) {
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		tag := rt.Field(i).Tag.Get("mapstructure")
		if tag == "" || tag == "-" {
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		fv := rv.Field(i)
		if fv.Kind() == reflect.Struct {
			setDefaults(v, key, fv)
			continue
		}
		_ = v.BindEnv(key) // fails only without a key
		switch val := fv.Interface().(type) {
		case time.Duration:
			v.SetDefault(key, val.String())
		case ByteSize:
			v.SetDefault(key, int64(val))
		case FileMode:
			v.SetDefault(key, fmt.Sprintf("%04o", uint32(val)))
		default:
			v.SetDefault(key, val)
		}
	}
}

// Validate checks ranges and relations that types alone cannot.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if c.Version != CurrentVersion {
		bad("version", "is %d; this augur reads version %d", c.Version, CurrentVersion)
	}
	if c.SlurmUser == "" {
		bad("slurm_user", "must name the SlurmUser of slurm.conf (e.g. slurm)")
	}
	if c.Socket.Path == "" || !strings.HasPrefix(c.Socket.Path, "/") {
		bad("socket.path", "must be an absolute path, got %q", c.Socket.Path)
	}
	if len(c.Socket.Path) > 104 {
		bad("socket.path", "is %d bytes; unix socket paths must be under 104", len(c.Socket.Path))
	}
	if c.Socket.Mode&^0o777 != 0 || c.Socket.Mode&0o600 != 0o600 {
		bad("socket.mode", "is %04o; give octal permission bits that let the owner read and write, e.g. 0660", uint32(c.Socket.Mode))
	}
	if c.Shim.Timeout < time.Millisecond || c.Shim.Timeout > 5*time.Second {
		bad("shim.timeout", "is %s; give 1ms to 5s (slurmctld waits this long, under its locks, when augurd is slow)", c.Shim.Timeout)
	}
	if c.Shim.FailureThreshold < 1 || c.Shim.FailureThreshold > 1000 {
		bad("shim.failure_threshold", "is %d; give 1 to 1000", c.Shim.FailureThreshold)
	}
	if c.Shim.Cooldown < 0 || c.Shim.Cooldown > time.Hour {
		bad("shim.cooldown", "is %s; give 0s to 1h", c.Shim.Cooldown)
	}
	if c.Shim.ReuseWindow < 0 || c.Shim.ReuseWindow > time.Minute {
		bad("shim.reuse_window", "is %s; give 0s (off) to 1m", c.Shim.ReuseWindow)
	}
	if c.Shim.MaxScriptBytes < 1024 || c.Shim.MaxScriptBytes > 64<<20 {
		bad("shim.max_script_bytes", "is %d; give 1KiB to 64MiB", int64(c.Shim.MaxScriptBytes))
	}
	if c.Store.Path == "" {
		bad("store.path", "must name the SQLite database file")
	}
	if c.Store.CommitWait < 0 || c.Store.CommitWait > time.Second {
		bad("store.commit_wait", "is %s; give 0s to 1s", c.Store.CommitWait)
	}
	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "is %q; give debug, info, warn or error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format", "is %q; give text or json", c.Log.Format)
	}
	seen := map[string]bool{}
	for i, t := range c.Cluster.GPUTypes {
		key := fmt.Sprintf("cluster.gpu_types[%d]", i)
		if !validGresName(t.Name) {
			bad(key+".name", "is %q; give the type as in gres.conf (letters, digits, '-', '_', '.')", t.Name)
		}
		if seen[t.Name] {
			bad(key+".name", "%q is listed twice", t.Name)
		}
		seen[t.Name] = true
		if t.Memory <= 0 {
			bad(key+".memory", "must be the GPU's memory, e.g. 80GiB")
		}
		if t.Shards < 0 || t.Shards > MaxShardsPerGPU {
			bad(key+".shards", "is %d; give gres.conf's shard Count per GPU of this type (0 to %d)", t.Shards, MaxShardsPerGPU)
		}
	}
	c.Cluster.validateAliases(bad)
	if c.Policy.ShardSmallJobs && !c.Cluster.HasShards() {
		bad("policy.shard_small_jobs", "needs a type with shards in cluster.gpu_types (e.g. {name: t4, memory: 16GiB, shards: 4})")
	}
	if c.Policy.HistoryMinRuns < 1 {
		bad("policy.history_min_runs", "is %d; give 1 or more", c.Policy.HistoryMinRuns)
	}
	if c.Predictor.ModelDir == "" || !strings.HasPrefix(c.Predictor.ModelDir, "/") {
		bad("predictor.model_dir", "must be an absolute path, got %q", c.Predictor.ModelDir)
	}
	if c.Predictor.RetrainInterval < time.Minute || c.Predictor.RetrainInterval > 30*24*time.Hour {
		bad("predictor.retrain_interval", "is %s; give 1m to 720h", c.Predictor.RetrainInterval)
	}
	if c.Predictor.RetrainAfter < 1 {
		bad("predictor.retrain_after", "is %d; give 1 or more", c.Predictor.RetrainAfter)
	}
	if jf := c.Predictor.JobFiles; jf.Enabled && (jf.Budget < time.Millisecond || jf.Budget >= c.Shim.Timeout) {
		bad("predictor.job_files.budget", "is %s; give 1ms or more, and less than shim.timeout (%s), which the whole decision must fit in",
			jf.Budget, c.Shim.Timeout)
	}
	if jf := c.Predictor.JobFiles; jf.Enabled && (jf.MaxBytes < 1<<10 || jf.MaxBytes > 1<<20) {
		bad("predictor.job_files.max_bytes", "is %d bytes; give 1KiB to 1MiB", int64(jf.MaxBytes))
	}
	if c.Node.Interval < 100*time.Millisecond || c.Node.Interval > time.Minute {
		bad("node.interval", "is %s; give 100ms to 1m", c.Node.Interval)
	}
	if c.Node.LiveEvery < c.Node.Interval || c.Node.LiveEvery > time.Hour {
		bad("node.live_every", "is %s; give node.interval (%s) to 1h", c.Node.LiveEvery, c.Node.Interval)
	}
	if c.Node.RawRetention < c.Node.Interval || c.Node.RawRetention > 30*24*time.Hour {
		bad("node.raw_retention", "is %s; give node.interval to 720h", c.Node.RawRetention)
	}
	if c.Node.Retention < time.Hour || c.Node.Retention > 3650*24*time.Hour {
		bad("node.retention", "is %s; give 1h to 87600h", c.Node.Retention)
	}
	if c.Node.Store == "" || !strings.HasPrefix(c.Node.Store, "/") {
		bad("node.store", "must be an absolute path, got %q", c.Node.Store)
	}
	if c.Node.Socket == "" || !strings.HasPrefix(c.Node.Socket, "/") || len(c.Node.Socket) > 104 {
		bad("node.socket", "must be an absolute path under 104 bytes, got %q", c.Node.Socket)
	}
	switch c.Node.NVML {
	case "real", "mock-dgxa100":
	default:
		bad("node.nvml", "is %q; give real (mock-dgxa100 exists only in test builds)", c.Node.NVML)
	}
	if c.Node.DCGMJobMapDir != "" && !strings.HasPrefix(c.Node.DCGMJobMapDir, "/") {
		bad("node.dcgm_job_map_dir", "must be an absolute path or empty, got %q", c.Node.DCGMJobMapDir)
	}
	if c.Policy.SiteFactorMax < 0 || c.Policy.SiteFactorMax > 1<<30 {
		bad("policy.site_factor_max", "is %d; give 0 (off) to %d", c.Policy.SiteFactorMax, 1<<30)
	}
	c.validateLive(bad)
	c.validateBalance(bad)
	return errors.Join(errs...)
}

func (c *Config) validateLive(bad func(key, format string, args ...any)) {
	l := c.Live
	if o := l.OOMRecovery; o.MaxRequeues < 0 || o.MaxRequeues > 10 {
		bad("live.oom_recovery.max_requeues", "is %d; give 0 to 10", o.MaxRequeues)
	}
	if o := l.OOMRecovery; math.IsNaN(o.Margin) || o.Margin < 0 || o.Margin > 4 {
		bad("live.oom_recovery.margin", "is %v; give 0 to 4 (0.1 asks for 10%% more memory than the job needs)", o.Margin)
	}
	if g := l.IdleGPU; math.IsNaN(g.ThresholdPct) || g.ThresholdPct <= 0 || g.ThresholdPct > 100 {
		bad("live.idle_gpu.threshold_pct", "is %v; give a percentage over 0 and at most 100 (5 calls a GPU under 5%% SM utilisation idle)", g.ThresholdPct)
	}
	if g := l.IdleGPU; g.Grace < 0 || g.Grace > 7*24*time.Hour {
		bad("live.idle_gpu.grace", "is %s; give 0 to 168h", g.Grace)
	}
	if g := l.IdleGPU; g.Window < time.Second || g.Window > 7*24*time.Hour {
		bad("live.idle_gpu.window", "is %s; give 1s to 168h (30m is the default)", g.Window)
	}
	if g := l.IdleGPU; g.WarnDelay < 0 || g.WarnDelay > 7*24*time.Hour {
		bad("live.idle_gpu.warn_delay", "is %s; give 0 to 168h", g.WarnDelay)
	}
	if g := l.IdleGPU; g.Signal != "" {
		if _, ok := PreemptSignals[g.Signal]; !ok {
			bad("live.idle_gpu.signal", "is %q; give TERM, USR1, USR2, INT, HUP, CONT or \"\" (none)", g.Signal)
		}
	}
	if l.Interval < 100*time.Millisecond || l.Interval > 10*time.Minute {
		bad("live.interval", "is %s; give 100ms to 10m", l.Interval)
	}
	ok := false
	for _, n := range policy.Names() {
		if n == l.Policy && !strings.HasSuffix(n, "-oracle") {
			ok = true
		}
	}
	if !ok {
		var names []string
		for _, n := range policy.Names() {
			if !strings.HasSuffix(n, "-oracle") {
				names = append(names, n)
			}
		}
		bad("live.policy", "is %q; give one of %s (the oracles need true run times, which only a trace has)", l.Policy, strings.Join(names, ", "))
	}
	if l.SiteFactorMax < 1 || l.SiteFactorMax > 1<<30 {
		bad("live.site_factor_max", "is %d; give 1 to %d", l.SiteFactorMax, 1<<30)
	}
	if l.Grace < 0 || l.Grace > time.Hour {
		bad("live.grace", "is %s; give 0s (requeue without a signal) to 1h", l.Grace)
	}
	if _, ok := PreemptSignals[l.PreemptSignal]; !ok {
		bad("live.preempt_signal", "is %q; give TERM, USR1, USR2, INT, HUP or CONT", l.PreemptSignal)
	}
	if l.MinRunTime < 0 || l.MinRunTime > 30*24*time.Hour {
		bad("live.min_run_time", "is %s; give 0s to 720h", l.MinRunTime)
	}
	if l.MaxPreemptions < 0 || l.MaxPreemptions > 1000 {
		bad("live.max_preemptions", "is %d; give 0 (never preempt) to 1000", l.MaxPreemptions)
	}
	if l.AdminSocket == "" || !strings.HasPrefix(l.AdminSocket, "/") || len(l.AdminSocket) > 104 {
		bad("live.admin_socket", "must be an absolute path under 104 bytes, got %q", l.AdminSocket)
	}
}

func (c *Config) validateBalance(bad func(key, format string, args ...any)) {
	b := c.Balance
	if b.MaxJobs < 1 || b.MaxJobs > 1<<20 {
		bad("balance.max_jobs", "is %d; give 1 to %d", b.MaxJobs, 1<<20)
	}
	if b.JobIdle < time.Minute || b.JobIdle > 30*24*time.Hour {
		bad("balance.job_idle", "is %s; give 1m to 720h", b.JobIdle)
	}
	if b.Window < 3 || b.Window > 1000 {
		bad("balance.window", "is %d; give 3 to 1000 step times per rank", b.Window)
	}
	if !(b.SlowRatio > 1) || b.SlowRatio > 10 {
		bad("balance.slow_ratio", "is %v; give a ratio above 1 up to 10, e.g. 1.10 (10%% slower than the median rank)", b.SlowRatio)
	}
	if !(b.ClearRatio >= 1) || b.ClearRatio > b.SlowRatio {
		bad("balance.clear_ratio", "is %v; give 1 up to balance.slow_ratio (%v)", b.ClearRatio, b.SlowRatio)
	}
	if b.Persist < 1 || b.Persist > 1000 {
		bad("balance.persist", "is %d; give 1 to 1000 reports", b.Persist)
	}
	if !(b.MinGain >= 0) || b.MinGain > 1 {
		bad("balance.min_gain", "is %v; give 0 to 1 (0.03 = 3%%)", b.MinGain)
	}
	if b.OwnerCache < time.Second || b.OwnerCache > time.Hour {
		bad("balance.owner_cache", "is %s; give 1s to 1h", b.OwnerCache)
	}
}

// MaxAliases bounds cluster.gpu_types[].aliases.
const MaxAliases = 256

// validateAliases checks that every alias is a name a job can carry and
// means one type only.
func (c *Cluster) validateAliases(bad func(key, format string, args ...any)) {
	owner := map[string]string{} // lower-cased name or alias -> the type it means
	for _, t := range c.GPUTypes {
		owner[strings.ToLower(t.Name)] = t.Name
	}
	for i, t := range c.GPUTypes {
		if len(t.Aliases) > MaxAliases {
			bad(fmt.Sprintf("cluster.gpu_types[%d].aliases", i), "has %d; give at most %d", len(t.Aliases), MaxAliases)
			continue
		}
		for j, a := range t.Aliases {
			key := fmt.Sprintf("cluster.gpu_types[%d].aliases[%d]", i, j)
			l := strings.ToLower(a)
			switch prev, taken := owner[l]; {
			case !validAlias(a):
				bad(key, "is %q; give a node feature, partition, account suffix or QOS name (letters, digits, '-', '_', '.', '@', '+', ':', at most 64)", a)
			case taken && prev != t.Name:
				bad(key, "%q already means GPU type %s; an alias must mean one type", a, prev)
			default:
				owner[l] = t.Name
			}
		}
	}
}

func validAlias(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.@+:", r)) {
			return false
		}
	}
	return true
}

func validGresName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// MaxShardsPerGPU bounds cluster.gpu_types[].shards.
const MaxShardsPerGPU = 1024

// HasShards reports whether any configured GPU type carries gres/shard.
func (c *Cluster) HasShards() bool {
	for _, t := range c.GPUTypes {
		if t.Shards > 0 {
			return true
		}
	}
	return false
}

// GPUType returns the configured type of that name.
func (c *Cluster) GPUType(name string) (GPUType, bool) {
	for _, t := range c.GPUTypes {
		if t.Name == name {
			return t, true
		}
	}
	return GPUType{}, false
}

// AllowedUIDs resolves slurm_user and socket.allowed_users to uids; root (0)
// is always included. Names that do not resolve are returned as an error
// naming them, together with the uids that did resolve.
func (c *Config) AllowedUIDs() (map[uint32]bool, error) {
	uids := map[uint32]bool{0: true}
	var errs []error
	names := append([]string{c.SlurmUser}, c.Socket.AllowedUsers...)
	sort.Strings(names[1:])
	for _, n := range names {
		uid, err := lookupUID(n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uids[uid] = true
	}
	return uids, errors.Join(errs...)
}

func lookupUID(name string) (uint32, error) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n), nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return 0, fmt.Errorf("user %q: %w", name, err)
	}
	n, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("user %q has uid %q: %w", name, u.Uid, err)
	}
	return uint32(n), nil
}
