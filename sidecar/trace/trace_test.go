package trace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/augur-hpc/augur/internal/shareddata"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	cases := map[string]struct {
		format, in string
		want       []Job
		wantErr    bool
	}{
		"philly, sorted by submission": {
			format: "philly",
			in:     "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 06:13:03,2951.0,1,2951.0,6214e9\n2017-09-29 07:58:32,860662.0,8,6885296.0,6c71a0\n",
			want: []Job{
				{ID: 1, Submit: 1506671912, Duration: 860662, GPUs: 8, Group: "6c71a0"},
				{ID: 0, Submit: 1507529583, Duration: 2951, GPUs: 1, Group: "6214e9"},
			},
		},
		"philly, bad GPU count": {format: "philly", in: "timestamp,duration,num_gpus\n2017-10-09 06:13:03,1,0\n", wantErr: true},
		"philly, no header":     {format: "philly", in: "", wantErr: true},
		"gavel": {
			format: "gavel",
			in:     "ResNet-18 (batch size 16)\tcd %s && python3 main.py\t--num_steps\t1\t4000\t10.5\t4\nA3C\tpython3 a3c.py\t--max-steps\t0\t100\t0\t1\n",
			want: []Job{
				{ID: 1, Submit: 0, Steps: 100, GPUs: 1, Kind: "A3C"},
				{ID: 0, Submit: 10.5, Steps: 4000, GPUs: 4, Kind: "ResNet-18 (batch size 16)"},
			},
		},
		"gavel, six fields": {format: "gavel", in: "A3C\tx\ty\t0\t100\t0\n", wantErr: true},
		"tiresias": {
			format: "tiresias",
			in:     "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n0,1,0,606,vgg19,164,30\n1,8,30,133,vgg11,147,23\n",
			want:   []Job{{ID: 0, Submit: 0, Duration: 164, GPUs: 1, Kind: "vgg19"}, {ID: 1, Submit: 30, Duration: 147, GPUs: 8, Kind: "vgg11"}},
		},
		"tiresias, negative duration": {format: "tiresias", in: "job_id,num_gpu,submit_time,duration\n0,1,0,-5\n", wantErr: true},
		"unknown format":              {format: "slurm", in: "", wantErr: true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(c.format, strings.NewReader(c.in))
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("jobs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestThroughputs(t *testing.T) {
	in := `{"k80": {"('ResNet-50 (batch size 128)', 1)": {"null": 0.35, "('A3C', 1)": [0.1, 0.2]},
	                "('ResNet-50 (batch size 128)', 2)": {"null": 0.0},
	                "('A3C', 1)": {"null": 3.4}},
	        "k80_unconsolidated": {}}`
	thr, err := ParseThroughputs(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		gpu, kind string
		n         int
		want      float64
	}{
		"measured":                 {"k80", "ResNet-50 (batch size 128)", 1, 0.35},
		"out of memory":            {"k80", "ResNet-50 (batch size 128)", 2, 0},
		"extrapolated from 1 GPU":  {"k80", "A3C", 4, 13.6},
		"extrapolated from 2 GPUs": {"k80", "ResNet-50 (batch size 128)", 4, 0},
		"unknown type":             {"v100", "A3C", 1, 0},
	}
	for name, c := range cases {
		if got := thr.Rate(c.gpu, c.kind, c.n); got != c.want {
			t.Errorf("%s: Rate = %v, want %v", name, got, c.want)
		}
	}
	if diff := cmp.Diff([]string{"k80"}, thr.GPUTypes()); diff != "" {
		t.Errorf("GPUTypes (-want +got):\n%s", diff)
	}
	if _, err := ParseThroughputs(strings.NewReader(`{"k80": {"ResNet": {"null": 1}}}`)); !errors.Is(err, ErrFormat) {
		t.Errorf("bad key: err = %v", err)
	}
}

// TestSharedTraces parses the real traces when ../shared/data is present.
func TestSharedTraces(t *testing.T) {
	dir := shareddata.Path(t, "traces")
	for _, c := range []struct {
		format, path string
		min          int
	}{
		{"philly", "philly/philly.csv", 56000},
		{"gavel", "gavel/6214e9.trace", 2000},
		{"tiresias", "tiresias/60_job.csv", 60},
	} {
		f, err := os.Open(filepath.Join(dir, c.path))
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := Parse(c.format, f)
		f.Close()
		if err != nil || len(jobs) < c.min {
			t.Errorf("%s: %d jobs, err %v", c.path, len(jobs), err)
		}
	}
}

func fuzzParser(f *testing.F, parse func(string) error, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		_ = parse(in) // must not panic
	})
}

func FuzzPhilly(f *testing.F) {
	fuzzParser(f, func(s string) error { _, err := ParsePhilly(strings.NewReader(s)); return err },
		"timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 06:13:03,2951.0,1,2951.0,6214e9\n", "timestamp\n\"x")
}

func FuzzGavel(f *testing.F) {
	fuzzParser(f, func(s string) error { _, err := ParseGavel(strings.NewReader(s)); return err },
		"A3C\tpython3 a3c.py\t--max-steps\t0\t100\t0\t1\n", "\t\t\t\t\t\t\n")
}

func FuzzTiresias(f *testing.F) {
	fuzzParser(f, func(s string) error { _, err := ParseTiresias(strings.NewReader(s)); return err },
		"job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n0,1,0,606,vgg19,164,30\n")
}

func FuzzThroughputs(f *testing.F) {
	fuzzParser(f, func(s string) error {
		thr, err := ParseThroughputs(strings.NewReader(s))
		if err == nil {
			thr.Rate("k80", "A3C", 3)
		}
		return err
	}, `{"k80": {"('A3C', 1)": {"null": 3.4}}}`, `{"k80": {"('', 0)": {}}}`)
}
