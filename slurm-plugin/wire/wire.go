// Package wire is the protocol between the job_submit shim inside slurmctld
// and augurd: one request frame per submission, one response frame back, over
// a unix stream socket.
//
// A frame is an 8-byte header, the magic "AUG1" followed by the body length as
// a big-endian uint32, then the body: one JSON object. JSON keeps the format
// readable in a packet capture and in golden files; the bodies are small
// (the batch script dominates) and both ends are Go. The shim and augurd
// import this package, so they cannot drift apart; the golden files in
// testdata pin the encoding against accidental change.
//
//	shim                                   augurd
//	 | -- "AUG1" len Request{token,...} --> |
//	 | <-- "AUG1" len Response{action,...}- |
//
// Decoding is strict about size (MaxFrame) and lenient about unknown fields,
// so that an older shim can talk to a newer augurd during a rolling upgrade.
package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
	"unicode/utf8"
)

// LimitDuration turns a Slurm time limit in minutes into a duration: 0 (none)
// for 0 and for Slurm's NO_VAL and INFINITE, and the largest duration for a
// limit longer than a time.Duration holds (~292 years) rather than a wrapped,
// negative one.
func LimitDuration(minutes uint32) time.Duration {
	const infinite, noVal = math.MaxUint32, math.MaxUint32 - 1
	switch {
	case minutes == 0 || minutes == infinite || minutes == noVal:
		return 0
	case int64(minutes) > int64(math.MaxInt64/time.Minute):
		return math.MaxInt64
	}
	return time.Duration(minutes) * time.Minute
}

// Version is the protocol version carried in every message.
const Version = 1

// Magic starts every frame.
const Magic = "AUG1"

// MaxFrame bounds a frame's body: the largest batch script the shim sends
// (shim.max_script_bytes, at most 64 MiB) plus room for the other fields.
const MaxFrame = 64<<20 + 1<<20

// Sentinel errors; decoders wrap them with detail.
var (
	ErrBadMagic = errors.New("wire: bad magic")
	ErrTooLarge = errors.New("wire: frame too large")
	ErrBadBody  = errors.New("wire: malformed body")
)

// Request is one submission, as slurmctld handed it to job_submit.
// Numeric fields that Slurm leaves unset (NO_VAL, INFINITE) are sent as 0.
type Request struct {
	V     int    `json:"v"`
	Token string `json:"token"` // random id the shim gives this submission: hex, see ValidToken

	SubmitUID uint32 `json:"submit_uid"` // who ran sbatch
	UserID    uint32 `json:"user_id"`    // who the job runs as
	GroupID   uint32 `json:"group_id"`

	Name      string `json:"name,omitempty"`
	Account   string `json:"account,omitempty"`
	Partition string `json:"partition,omitempty"`
	QOS       string `json:"qos,omitempty"`
	WorkDir   string `json:"work_dir,omitempty"`
	Comment   string `json:"comment,omitempty"`
	// Constraint is the job's --constraint (job_desc features), a Slurm
	// feature expression such as "[v100|a100]&ib"; Prefer its --prefer,
	// the same form but soft; ClusterFeatures its --cluster-constraint
	// (federation). Reservation is its --reservation. augurd reads GPU
	// types from them (an older augurd ignores them).
	Constraint      string `json:"constraint,omitempty"`
	Prefer          string `json:"prefer,omitempty"`
	ClusterFeatures string `json:"cluster_features,omitempty"`
	Reservation     string `json:"reservation,omitempty"`

	TRES TRES `json:"tres"`

	MinNodes     uint32 `json:"min_nodes,omitempty"`
	MaxNodes     uint32 `json:"max_nodes,omitempty"`
	NumTasks     uint32 `json:"num_tasks,omitempty"`
	MinCPUs      uint32 `json:"min_cpus,omitempty"`
	CPUsPerTask  uint32 `json:"cpus_per_task,omitempty"`
	MemPerNodeMB uint64 `json:"mem_per_node_mb,omitempty"`
	MemPerCPUMB  uint64 `json:"mem_per_cpu_mb,omitempty"`
	// TimeLimitMin is the --time limit in minutes; 0 when the user gave none.
	TimeLimitMin uint32 `json:"time_limit_min,omitempty"`

	Script          string `json:"script,omitempty"`
	ScriptTruncated bool   `json:"script_truncated,omitempty"`
	// Args are the batch script's arguments (sbatch job.sh ARG...), without
	// the script's own name, when ArgsKnown: augurd reads $1 and "$@" with
	// them, so a script given its model as an argument is read as it runs.
	// ArgsKnown is false from an older shim, and for a job with more than
	// MaxArgs arguments or MaxArgBytes of them: $1 is then unknown.
	Args         []string `json:"args,omitempty"`
	ArgsKnown    bool     `json:"args_known,omitempty"`
	AdminComment string   `json:"admin_comment,omitempty"`
	// Env is what of the environment sbatch exports to the job (job_desc's,
	// as --export built it) augurd reads the script with: "NAME=value" for
	// the variables the script refers to and those programs read their
	// settings from (predictor/progenv), "NAME" alone for one whose value
	// is withheld (a secret's, or one longer than MaxEnvValue). Slurm's own
	// (SLURM_*, SBATCH_*) are never sent. At most MaxEnv entries of at most
	// MaxEnvBytes together; none from an older shim.
	Env []string `json:"env,omitempty"`
	// Files are the text of the config files the script names
	// (predictor.Script.Files) that augurd read from the submitter's disk
	// (predictor.job_files), by the path the script names them by. augurd
	// sets them, after the request arrives, so that the stored request
	// reads as it was decided; the shim never sends any.
	Files map[string]string `json:"files,omitempty"`

	// Shim reports the shim's own health since its last successful request,
	// which augurd turns into metrics (the shim has no endpoint of its own).
	Shim ShimStats `json:"shim"`

	// Reused lists the submissions the shim answered, since its last request,
	// with the decision augurd gave an identical earlier request (the shim's
	// reuse window), for augurd to record. At most MaxReused.
	Reused []Reuse `json:"reused,omitempty"`
	// ReportOnly marks a request that only carries Reused (the shim sends
	// one when reports have waited and no submission came): augurd records
	// them and answers accept; there is no job.
	ReportOnly bool `json:"report_only,omitempty"`
}

// Reuse is one submission answered from an earlier decision.
type Reuse struct {
	Token string `json:"token"` // the submission's own token
	Of    string `json:"of"`    // the token of the request whose decision it got
	// AtUnixNano is when the shim received it.
	AtUnixNano int64 `json:"at"`
}

// MaxReused bounds Request.Reused.
const MaxReused = 4096

// MaxArgs and MaxArgBytes bound the script arguments a request carries
// (Request.Args): the shim sends none, not some, of a job's that exceed them.
const (
	MaxArgs     = 256
	MaxArgBytes = 64 << 10
)

// MaxEnv, MaxEnvBytes and MaxEnvValue bound the environment a request
// carries (Request.Env): its entries, their bytes together, and the
// longest value sent (a longer one goes as its name alone).
const (
	MaxEnv      = 256
	MaxEnvBytes = 64 << 10
	MaxEnvValue = 4 << 10
)

// MaxReusedScript is the longest batch script whose decision the shim
// reuses (and augurd keeps at hand for the reports).
const MaxReusedScript = 64 << 10

// TRES holds Slurm's four per-scope trackable-resource request strings, as in
// job_desc_msg_t ("gres:gpu:a100:2" in 22.05, "gres/gpu:2" from 23.11).
type TRES struct {
	PerNode   string `json:"per_node,omitempty"`
	PerJob    string `json:"per_job,omitempty"`
	PerTask   string `json:"per_task,omitempty"`
	PerSocket string `json:"per_socket,omitempty"`
}

// ShimStats is the shim's view of its recent failures.
type ShimStats struct {
	FailOpens       uint64 `json:"fail_opens,omitempty"`         // submissions accepted unchanged because augurd failed
	Skipped         uint64 `json:"skipped,omitempty"`            // of those, accepted during a cool-down without trying
	LastRoundTripUS uint64 `json:"last_round_trip_us,omitempty"` // the previous successful round trip
	// InFlight is how many submissions the shim was deciding when it sent
	// this one, this one included: always 1 where slurmctld serialises
	// job_submit (22.05), up to its RPC threads from 23.02 on.
	InFlight uint32 `json:"in_flight,omitempty"`
}

// Action is what the shim does with the job.
type Action string

const (
	// Accept lets the job in, with whatever changes the response carries.
	Accept Action = "accept"
	// Reject refuses the job; Message tells the user what to change.
	Reject Action = "reject"
)

// Response is augurd's decision for one submission.
type Response struct {
	V      int    `json:"v"`
	Token  string `json:"token"`
	Action Action `json:"action"`
	// Annotation is appended to the job's AdminComment ("augur:...").
	Annotation string `json:"annotation,omitempty"`
	// TRES, when set, replaces all four request strings of the job.
	TRES *TRES `json:"tres,omitempty"`
	// SiteFactor, when set, is the job's initial SiteFactor.
	SiteFactor *int64 `json:"site_factor,omitempty"`
	// TimeMinMin, when not 0, is the job's TimeMin in minutes
	// (live.time_min); the shim sets it only below the job's time limit
	// and when the user gave no --time-min.
	TimeMinMin uint32 `json:"time_min_min,omitempty"`
	// Message is shown to the user by sbatch when the job is rejected.
	Message string `json:"message,omitempty"`
}

// Validate checks a response before the shim applies anything of it.
func (r *Response) Validate(token string) error {
	switch {
	case r.V != Version:
		return fmt.Errorf("%w: version %d, want %d", ErrBadBody, r.V, Version)
	case r.Token != token:
		return fmt.Errorf("%w: answer for token %q, asked %q", ErrBadBody, r.Token, token)
	case r.Action != Accept && r.Action != Reject:
		return fmt.Errorf("%w: unknown action %q", ErrBadBody, r.Action)
	case r.Action == Reject && r.Message == "":
		return fmt.Errorf("%w: rejection without a message", ErrBadBody)
	case r.SiteFactor != nil && (*r.SiteFactor > MaxSiteFactor || *r.SiteFactor < -MaxSiteFactor):
		return fmt.Errorf("%w: site factor %d out of range", ErrBadBody, *r.SiteFactor)
	case r.TimeMinMin > 366*24*60:
		return fmt.Errorf("%w: time_min of %d minutes out of range", ErrBadBody, r.TimeMinMin)
	}
	for _, s := range []string{r.Annotation, r.Message} {
		if len(s) > MaxText || !utf8.ValidString(s) || bytes.IndexByte([]byte(s), 0) >= 0 {
			return fmt.Errorf("%w: text field too long or not clean UTF-8", ErrBadBody)
		}
	}
	if r.TRES != nil {
		return r.TRES.Validate()
	}
	return nil
}

// Validate checks that each of the four strings is one Slurm could parse:
// printable ASCII, at most 1024 bytes.
func (t TRES) Validate() error {
	for _, s := range []string{t.PerNode, t.PerJob, t.PerTask, t.PerSocket} {
		if len(s) > 1024 || !printableASCII(s) {
			return fmt.Errorf("%w: TRES string %q is not a request Slurm can parse", ErrBadBody, s)
		}
	}
	return nil
}

// MaxSiteFactor is the largest SiteFactor magnitude Slurm accepts (NICE_OFFSET - 3).
const MaxSiteFactor = 0x80000000 - 3

// MaxText bounds the annotation and the rejection message.
const MaxText = 4096

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// Write sends one frame holding v.
func Write(w io.Writer, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("wire: encode: %w", err)
	}
	if len(body) > MaxFrame {
		return fmt.Errorf("%w: %d bytes", ErrTooLarge, len(body))
	}
	buf := make([]byte, 8, 8+len(body))
	copy(buf, Magic)
	binary.BigEndian.PutUint32(buf[4:], uint32(len(body)))
	buf = append(buf, body...)
	_, err = w.Write(buf)
	return err
}

// ReadFrame reads one frame's body, refusing bodies over limit bytes.
func ReadFrame(r io.Reader, limit int) ([]byte, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	if string(hdr[:4]) != Magic {
		return nil, fmt.Errorf("%w: %q", ErrBadMagic, hdr[:4])
	}
	n := binary.BigEndian.Uint32(hdr[4:])
	if int64(n) > int64(limit) {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, limit)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("wire: truncated body: %w", err)
	}
	return body, nil
}

// DecodeRequest parses a request body.
func DecodeRequest(body []byte) (*Request, error) {
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadBody, err)
	}
	if req.V != Version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrBadBody, req.V, Version)
	}
	if !ValidToken(req.Token) {
		return nil, fmt.Errorf("%w: token must be 1 to 64 lowercase hex digits", ErrBadBody)
	}
	if n := len(req.Args); n > MaxArgs || n > 0 && !req.ArgsKnown {
		return nil, fmt.Errorf("%w: %d script arguments (args_known %v), at most %d", ErrBadBody, n, req.ArgsKnown, MaxArgs)
	}
	if n := argBytes(req.Args); n > MaxArgBytes {
		return nil, fmt.Errorf("%w: script arguments of %d bytes, at most %d", ErrBadBody, n, MaxArgBytes)
	}
	if n := len(req.Env); n > MaxEnv {
		return nil, fmt.Errorf("%w: %d environment variables, at most %d", ErrBadBody, n, MaxEnv)
	}
	if n := argBytes(req.Env); n > MaxEnvBytes {
		return nil, fmt.Errorf("%w: environment of %d bytes, at most %d", ErrBadBody, n, MaxEnvBytes)
	}
	if len(req.Reused) > MaxReused {
		return nil, fmt.Errorf("%w: %d reused decisions, at most %d", ErrBadBody, len(req.Reused), MaxReused)
	}
	for _, r := range req.Reused {
		if !ValidToken(r.Token) || !ValidToken(r.Of) || r.AtUnixNano <= 0 {
			return nil, fmt.Errorf("%w: a reused decision needs two tokens and a time", ErrBadBody)
		}
	}
	return &req, nil
}

// ScriptArgs are the arguments to read the request's script with: nil when
// they are not known (an older shim, or too many), never nil when known.
func (r *Request) ScriptArgs() []string {
	if !r.ArgsKnown {
		return nil
	}
	if r.Args == nil {
		return []string{}
	}
	return r.Args
}

// argBytes is the size of a job's script arguments (or environment
// entries) together.
func argBytes(args []string) int {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	return n
}

// ValidToken reports whether s is a submission token: 1 to 64 lowercase hex digits.
func ValidToken(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// DecodeResponse parses a response body; call Validate before using it.
func DecodeResponse(body []byte) (*Response, error) {
	var resp Response
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadBody, err)
	}
	return &resp, nil
}
