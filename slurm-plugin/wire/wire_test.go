package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func sampleRequest() *Request {
	return &Request{
		V: Version, Token: "0123456789abcdef0123456789abcdef",
		SubmitUID: 1000, UserID: 1000, GroupID: 1000,
		Name: "train-llama", Account: "ml", Partition: "gpu", QOS: "normal",
		WorkDir:  "/home/alice/llama",
		TRES:     TRES{PerNode: "gres:gpu:a100:2"},
		MinNodes: 1, NumTasks: 2, CPUsPerTask: 8, MemPerNodeMB: 64000, TimeLimitMin: 240,
		Script: "#!/bin/bash\n#SBATCH --gres=gpu:a100:2\ntorchrun --nproc_per_node 2 train.py --batch-size 32\n",
		Shim:   ShimStats{FailOpens: 2, Skipped: 1, LastRoundTripUS: 180},
	}
}

// sampleTypedRequest is a typeless request that names its GPU type the way
// most sites do: a node feature, a partition and an account.
func sampleTypedRequest() *Request {
	r := sampleRequest()
	r.Partition, r.Account = "gpu_a100", "proj@a100"
	r.TRES = TRES{PerNode: "gres:gpu:2"}
	r.Constraint, r.Prefer, r.ClusterFeatures, r.Reservation = "[v100-32g|a100]&ib", "a100", "fed1", "maint"
	return r
}

func sampleResponse() *Response {
	sf := int64(4200)
	return &Response{
		V: Version, Token: "0123456789abcdef0123456789abcdef", Action: Accept,
		Annotation: "augur:tok=0123456789abcdef0123456789abcdef pred_gpu_mem=30G(p95:33G) pred_time=01:00:00 src=history/history runs=3",
		TRES:       &TRES{PerNode: "gres:gpu:a100:2"},
		SiteFactor: &sf,
	}
}

// TestGolden pins the encoding: a change here is a protocol change that an
// older shim or augurd would see. Regenerate with go test -update.
func TestGolden(t *testing.T) {
	cases := map[string]any{
		"request.golden": sampleRequest(),
		// The GPU-type fields are new and optional: request.golden, which
		// has none of them, is what an older shim sends, unchanged.
		"request_gputype.golden": sampleTypedRequest(),
		"response.golden":        sampleResponse(),
		"reject.golden": &Response{V: Version, Token: "t1", Action: Reject,
			Message: "augur: this job used at least 38G of GPU memory ..."},
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, v); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name)
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update once)", err)
			}
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("encoding changed (-golden +now):\n%s", diff)
			}
		})
	}
}

// TestOptionalFieldsCompatible: a request from an older shim (no
// constraint, prefer, cluster features or reservation) decodes with them
// empty, and one from a newer shim with fields this version does not know
// decodes with them ignored, so either end can be upgraded first.
func TestOptionalFieldsCompatible(t *testing.T) {
	old, err := DecodeRequest([]byte(`{"v":1,"token":"ab","partition":"gpu","tres":{"per_node":"gres:gpu:1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if old.Constraint != "" || old.Prefer != "" || old.ClusterFeatures != "" || old.Reservation != "" || old.Partition != "gpu" {
		t.Errorf("older request decoded as %+v", old)
	}
	newer, err := DecodeRequest([]byte(`{"v":1,"token":"ab","constraint":"a100","some_future_field":{"x":[1]}}`))
	if err != nil || newer.Constraint != "a100" {
		t.Errorf("newer request: %+v, %v", newer, err)
	}
	body, err := json.Marshal(sampleRequest())
	if err != nil {
		t.Fatal(err)
	}
	args, err := DecodeRequest([]byte(`{"v":1,"token":"ab","args_known":true,"args":["llama-7b","32"]}`))
	if err != nil || !args.ArgsKnown || len(args.Args) != 2 || args.Args[0] != "llama-7b" {
		t.Errorf("request with script arguments: %+v, %v", args, err)
	}
	if old.ArgsKnown || old.Args != nil || old.Env != nil {
		t.Errorf("an older shim's request has arguments or an environment: %+v", old)
	}
	env, err := DecodeRequest([]byte(`{"v":1,"token":"ab","env":["MODEL=llama-2-7b","HF_TOKEN"]}`))
	if err != nil || len(env.Env) != 2 || env.Env[0] != "MODEL=llama-2-7b" || env.Env[1] != "HF_TOKEN" {
		t.Errorf("request with an environment: %+v, %v", env, err)
	}
	for _, key := range []string{"constraint", "prefer", "cluster_features", "reservation", "args", "args_known", "env"} {
		if bytes.Contains(body, []byte(`"`+key+`"`)) {
			t.Errorf("a request without %s still sends the key: %s", key, body)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	want := sampleTypedRequest()
	if err := Write(&buf, want); err != nil {
		t.Fatal(err)
	}
	body, err := ReadFrame(&buf, MaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	buf.Reset()
	wantResp := sampleResponse()
	if err := Write(&buf, wantResp); err != nil {
		t.Fatal(err)
	}
	body, err = ReadFrame(&buf, MaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	gotResp, err := DecodeResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := gotResp.Validate(wantResp.Token); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantResp, gotResp); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func frame(body string) []byte {
	var buf bytes.Buffer
	buf.WriteString(Magic)
	n := len(body)
	buf.Write([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
	buf.WriteString(body)
	return buf.Bytes()
}

func TestReadFrameErrors(t *testing.T) {
	cases := map[string]struct {
		in   []byte
		want error
	}{
		"empty":          {nil, io.EOF},
		"bad magic":      {[]byte("HTTP/1.1 200 OK\r\n"), ErrBadMagic},
		"short header":   {[]byte("AUG1\x00"), io.ErrUnexpectedEOF},
		"too large":      {[]byte("AUG1\xff\xff\xff\xff"), ErrTooLarge},
		"truncated body": {frame("{\"v\":1}")[:10], io.ErrUnexpectedEOF},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ReadFrame(bytes.NewReader(tc.in), 1<<20)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	cases := map[string]string{
		"not json":       "garbage",
		"wrong version":  `{"v":99,"token":"a"}`,
		"no token":       `{"v":1}`,
		"long token":     `{"v":1,"token":"` + strings.Repeat("a", 65) + `"}`,
		"ctl in token":   `{"v":1,"token":"a\nb"}`,
		"not hex":        `{"v":1,"token":"xyz"}`,
		"wrong types":    `{"v":1,"token":"a","user_id":"root"}`,
		"negative uid":   `{"v":1,"token":"a","user_id":-1}`,
		"args not known": `{"v":1,"token":"a","args":["x"]}`,
		"too many args":  `{"v":1,"token":"a","args_known":true,"args":[` + strings.Repeat(`"x",`, MaxArgs) + `"x"]}`,
		"args too long":  `{"v":1,"token":"a","args_known":true,"args":["` + strings.Repeat("x", MaxArgBytes+1) + `"]}`,
		"too much env":   `{"v":1,"token":"a","env":[` + strings.Repeat(`"X=1",`, MaxEnv) + `"X=1"]}`,
		"env too long":   `{"v":1,"token":"a","env":["X=` + strings.Repeat("x", MaxEnvBytes) + `"]}`,
		"env not text":   `{"v":1,"token":"a","env":[1]}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeRequest([]byte(body)); !errors.Is(err, ErrBadBody) {
				t.Errorf("err = %v, want ErrBadBody", err)
			}
		})
	}
}

func TestValidateResponse(t *testing.T) {
	big := int64(MaxSiteFactor + 1)
	cases := map[string]struct {
		r  Response
		ok bool
	}{
		"accept":          {Response{V: 1, Token: "t", Action: Accept}, true},
		"other token":     {Response{V: 1, Token: "u", Action: Accept}, false},
		"unknown action":  {Response{V: 1, Token: "t", Action: "hold"}, false},
		"silent reject":   {Response{V: 1, Token: "t", Action: Reject}, false},
		"site factor":     {Response{V: 1, Token: "t", Action: Accept, SiteFactor: &big}, false},
		"nul in message":  {Response{V: 1, Token: "t", Action: Reject, Message: "a\x00b"}, false},
		"bad utf8":        {Response{V: 1, Token: "t", Action: Accept, Annotation: "\xff"}, false},
		"tres newline":    {Response{V: 1, Token: "t", Action: Accept, TRES: &TRES{PerNode: "gres:gpu:1\n"}}, false},
		"version":         {Response{V: 2, Token: "t", Action: Accept}, false},
		"long annotation": {Response{V: 1, Token: "t", Action: Accept, Annotation: strings.Repeat("a", MaxText+1)}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.r.Validate("t")
			if (err == nil) != tc.ok {
				t.Errorf("Validate = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// FuzzDecode feeds arbitrary bytes to both decoders: they must return an
// error or a value, never panic or hang, and a valid response must survive
// Validate without panicking.
func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	Write(&buf, sampleRequest())
	f.Add(buf.Bytes())
	buf.Reset()
	Write(&buf, sampleResponse())
	f.Add(buf.Bytes())
	f.Add(frame(`{"v":1,"token":"ab12","tres":{"per_node":"gres:gpu:2"}}`))
	buf.Reset()
	Write(&buf, sampleTypedRequest())
	f.Add(buf.Bytes())
	f.Add([]byte("AUG1\x00\x00\x00\x02{}"))
	f.Add(frame(`{"v":1,"token":"ab12","args_known":true,"args":["x"],"env":["MODEL=gpt2","HF_TOKEN"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := ReadFrame(bytes.NewReader(data), 1<<20)
		if err != nil {
			body = data
		}
		if req, err := DecodeRequest(body); err == nil && req.Token == "" {
			t.Fatal("decoded a request without a token")
		}
		if resp, err := DecodeResponse(body); err == nil {
			_ = resp.Validate(resp.Token)
		}
	})
}

func TestLimitDuration(t *testing.T) {
	for m, want := range map[uint32]time.Duration{
		0: 0, 1: time.Minute, 60: time.Hour,
		math.MaxUint32: 0, math.MaxUint32 - 1: 0, // INFINITE, NO_VAL
		math.MaxUint32 - 2: math.MaxInt64,           // a real limit past what a Duration holds
		153722867:          153722867 * time.Minute, // the largest that fits
		153722868:          math.MaxInt64,
	} {
		if got := LimitDuration(m); got != want {
			t.Errorf("LimitDuration(%d) = %v, want %v", m, got, want)
		}
	}
}

func TestResponseTimeMin(t *testing.T) {
	r := Response{V: Version, Token: "t", Action: Accept, TimeMinMin: 90}
	if err := r.Validate("t"); err != nil {
		t.Errorf("90 minutes: %v", err)
	}
	r.TimeMinMin = 366*24*60 + 1
	if err := r.Validate("t"); err == nil {
		t.Error("a TimeMin over a year accepted")
	}
}
