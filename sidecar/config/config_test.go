package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "augur.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExampleIsDefault keeps etc/augur.yaml honest: it documents the defaults.
func TestExampleIsDefault(t *testing.T) {
	cfg, err := Load("../../etc/augur.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Path = "../../etc/augur.yaml"
	if diff := cmp.Diff(&want, cfg); diff != "" {
		t.Errorf("etc/augur.yaml differs from the defaults (-default +file):\n%s", diff)
	}
}

func TestLoad(t *testing.T) {
	cases := map[string]struct {
		file string
		env  map[string]string
		over map[string]any
		want func(*Config)
	}{
		"empty file is the defaults": {file: "version: 1\n", want: func(*Config) {}},
		"values and units": {
			file: `
shim: {timeout: 80ms, cooldown: 1m}
socket: {mode: "0600"}
cluster:
  gpu_types:
    - {name: t4, memory: 16GiB, shards: 4}
    - {name: a100, memory: 80G}
    - {name: h100, memory: 85899345920, aliases: [hopper, kempner_h100, "@h100"]}
policy: {rewrite_typeless_gpus: true, site_factor_max: 5000, shard_small_jobs: true}
`,
			want: func(c *Config) {
				c.Shim.Timeout, c.Shim.Cooldown = 80*time.Millisecond, time.Minute
				c.Socket.Mode = 0o600
				c.Cluster.GPUTypes = []GPUType{{"t4", 16 << 30, 4, nil}, {"a100", 80 << 30, 0, nil},
					{"h100", 80 << 30, 0, []string{"hopper", "kempner_h100", "@h100"}}}
				c.Policy.RewriteTypelessGPUs, c.Policy.SiteFactorMax, c.Policy.ShardSmallJobs = true, 5000, true
			},
		},
		"environment beats the file": {
			file: "shim: {timeout: 80ms}\n",
			env:  map[string]string{"AUGUR_SHIM_TIMEOUT": "20ms", "AUGUR_LOG_LEVEL": "debug"},
			want: func(c *Config) { c.Shim.Timeout, c.Log.Level = 20*time.Millisecond, "debug" },
		},
		"a variable named like a section leaves the section alone": {
			file: "shim: {timeout: 80ms}\nnode: {store: /srv/augur/node.db}\n",
			env:  map[string]string{"AUGUR_NODE": "/usr/bin/augur-node", "AUGUR_SHIM": "x", "AUGUR_NODE_INTERVAL": "5s"},
			want: func(c *Config) {
				c.Shim.Timeout, c.Node.Store, c.Node.Interval = 80*time.Millisecond, "/srv/augur/node.db", 5*time.Second
			},
		},
		"flags beat the environment": {
			env:  map[string]string{"AUGUR_LOG_LEVEL": "debug"},
			over: map[string]any{"log.level": "error"},
			want: func(c *Config) { c.Log.Level = "error" },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			path := write(t, tc.file)
			got, err := Load(path, tc.over)
			if err != nil {
				t.Fatal(err)
			}
			want := Default()
			want.Path = path
			tc.want(&want)
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrorsNameTheKey: every bad file is refused with the key in the message.
func TestErrorsNameTheKey(t *testing.T) {
	cases := map[string]struct{ file, key string }{
		"unknown key":          {"shim: {timout: 5ms}\n", "timout"},
		"unknown section":      {"polcy: {}\n", "polcy"},
		"bad duration":         {"shim: {timeout: fast}\n", "timeout"},
		"timeout too long":     {"shim: {timeout: 10s}\n", "shim.timeout"},
		"bad size":             {"cluster: {gpu_types: [{name: t4, memory: 16 gallons}]}\n", "memory"},
		"no memory":            {"cluster: {gpu_types: [{name: t4}]}\n", "cluster.gpu_types[0].memory"},
		"bad type name":        {"cluster: {gpu_types: [{name: 't4;rm', memory: 1G}]}\n", "cluster.gpu_types[0].name"},
		"duplicate type":       {"cluster: {gpu_types: [{name: t4, memory: 1G}, {name: t4, memory: 2G}]}\n", "cluster.gpu_types[1].name"},
		"relative socket":      {"socket: {path: augurd.sock}\n", "socket.path"},
		"mode not octal":       {"socket: {mode: \"rw-rw----\"}\n", "mode"},
		"owner cannot write":   {"socket: {mode: \"0440\"}\n", "socket.mode"},
		"log level":            {"log: {level: loud}\n", "log.level"},
		"future version":       {"version: 2\n", "version"},
		"threshold":            {"shim: {failure_threshold: 0}\n", "shim.failure_threshold"},
		"negative site factor": {"policy: {site_factor_max: -1}\n", "policy.site_factor_max"},
		"not yaml":             {"shim: [\n", "YAML"},
		"negative shards":      {"cluster: {gpu_types: [{name: t4, memory: 1G, shards: -1}]}\n", "cluster.gpu_types[0].shards"},
		"shards without types": {"cluster: {gpu_types: [{name: t4, memory: 1G}]}\npolicy: {shard_small_jobs: true}\n", "policy.shard_small_jobs"},
		"wrong shape":          {"shim: 5\n", "shim"},
		"alias with blank": {"cluster: {gpu_types: [{name: a100, memory: 80G, aliases: ['gpu a100']}]}\n",
			"cluster.gpu_types[0].aliases[0]"},
		"alias with operator": {"cluster: {gpu_types: [{name: a100, memory: 80G, aliases: ['a100|v100']}]}\n",
			"cluster.gpu_types[0].aliases[0]"},
		"empty alias": {"cluster: {gpu_types: [{name: a100, memory: 80G, aliases: ['']}]}\n",
			"cluster.gpu_types[0].aliases[0]"},
		"alias of two types": {"cluster: {gpu_types: [{name: a100, memory: 80G, aliases: [big]}, {name: h100, memory: 80G, aliases: [BIG]}]}\n",
			"cluster.gpu_types[1].aliases[0]"},
		"alias is another type": {"cluster: {gpu_types: [{name: a100, memory: 80G, aliases: [t4]}, {name: t4, memory: 16G}]}\n",
			"cluster.gpu_types[0].aliases[0]"},
		"aliases not a list": {"cluster: {gpu_types: [{name: a100, memory: 80G, aliases: {a: b}}]}\n", "aliases"},
		"job files budget over the shim's": {"shim: {timeout: 20ms}\npredictor: {job_files: {enabled: true, budget: 20ms}}\n",
			"predictor.job_files.budget"},
		"job files too large": {"predictor: {job_files: {enabled: true, max_bytes: 64MiB}}\n", "predictor.job_files.max_bytes"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Load(write(t, tc.file), nil)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.key) {
				t.Errorf("error %q does not name %q", err, tc.key)
			}
		})
	}
}

// TestJobFilesOffNotChecked: job_files' settings bind only where it is on,
// so a site with a shim.timeout under the default budget loads as before.
func TestJobFilesOffNotChecked(t *testing.T) {
	if _, err := Load(write(t, "shim: {timeout: 5ms}\n"), nil); err != nil {
		t.Errorf("shim.timeout 5ms with job_files off: %v", err)
	}
	if _, err := Load(write(t, "shim: {timeout: 5ms}\npredictor: {job_files: {enabled: true}}\n"), nil); err == nil {
		t.Error("job_files on with its 10ms budget over a 5ms shim.timeout: accepted")
	}
}

func TestMissingFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil); err == nil || !strings.Contains(err.Error(), EnvPath) {
		t.Errorf("named missing file: err = %v, want one that says how to point at a file", err)
	}
}

func TestPathPrecedence(t *testing.T) {
	t.Setenv(EnvPath, "/from/env.yaml")
	if got := Path("/from/flag.yaml"); got != "/from/flag.yaml" {
		t.Errorf("flag: %s", got)
	}
	if got := Path(""); got != "/from/env.yaml" {
		t.Errorf("env: %s", got)
	}
	t.Setenv(EnvPath, "")
	if got := Path(""); got != DefaultPath {
		t.Errorf("default: %s", got)
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{
		"16GiB": 16 << 30, "16G": 16 << 30, "16gb": 16e9, "512M": 512 << 20, "1.5T": 3 << 39, "42": 42, " 1 KiB ": 1024,
	} {
		got, err := ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "G", "-1G", "1Q", "NaN", "1e400"} {
		if _, err := ParseByteSize(bad); err == nil {
			t.Errorf("ParseByteSize(%q) accepted", bad)
		}
	}
	if s := ByteSize(80 << 30).String(); s != "80GiB" {
		t.Errorf("String = %s", s)
	}
}

// FuzzLoad: any file content loads or fails with an error; never a panic.
func FuzzLoad(f *testing.F) {
	ex, _ := os.ReadFile("../../etc/augur.yaml")
	f.Add(string(ex))
	f.Add("shim: {timeout: 1ms}\ncluster: {gpu_types: [{name: a, memory: 1}]}\n")
	f.Add("version: [1, 2]\nsocket: {mode: 0777777777777}\n")
	f.Fuzz(func(t *testing.T, body string) {
		p := filepath.Join(t.TempDir(), "f.yaml")
		os.WriteFile(p, []byte(body), 0o644)
		cfg, err := Load(p, nil)
		if err == nil {
			if verr := cfg.Validate(); verr != nil {
				t.Fatalf("Load accepted a config Validate refuses: %v", verr)
			}
		}
	})
}
