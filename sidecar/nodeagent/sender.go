package nodeagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/augur-hpc/augur/sidecar/outcome"
)

// Signer signs a report; munge.Client is one.
type Signer interface {
	Encode(payload []byte) (string, error)
}

// Sender delivers one report to augurd's outcome listener:
//
//	connect ─> frame("AUO1", len, MUNGE credential of the report JSON) ─> read one frame ─> JSON outcome.Ack
//
// Each attempt signs the report afresh, so a resend is a new credential
// (MUNGE refuses to decode one credential twice) and augurd tells a resend
// from a replay; the same job id makes it a duplicate, which augurd
// acknowledges without storing it again.
type Sender struct {
	Addr    string // host:port
	Signer  Signer
	Timeout time.Duration // for the whole exchange; 10 s when 0
	// Dial connects; net.Dialer's when nil.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// ErrBadAck is wrapped when augurd's answer is not an Ack for the report
// sent: the report stays in the outbox and is tried again.
var ErrBadAck = errors.New("augurd's answer is not an acknowledgement of the report")

// Deliver sends report (the JSON of job jobID) and returns augurd's Ack.
// An error means the report's fate is unknown and it must be sent again.
func (s *Sender) Deliver(ctx context.Context, jobID uint64, report []byte) (outcome.Ack, error) {
	body, err := s.exchange(ctx, report)
	if err != nil {
		return outcome.Ack{}, err
	}
	return DecodeAck(body, jobID)
}

// exchange signs payload, sends it in one frame and returns augurd's one
// frame of answer.
func (s *Sender) exchange(ctx context.Context, payload []byte) ([]byte, error) {
	cred, err := s.Signer.Encode(payload)
	if err != nil {
		return nil, fmt.Errorf("sign report: %w", err)
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dial := s.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	c, err := dial(ctx, "tcp", s.Addr)
	if err != nil {
		return nil, fmt.Errorf("connect to augurd %s: %w", s.Addr, err)
	}
	defer c.Close()
	dl, _ := ctx.Deadline()
	c.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := outcome.WriteFrame(c, []byte(cred)); err != nil {
		return nil, fmt.Errorf("send to augurd %s: %w", s.Addr, err)
	}
	body, err := outcome.ReadFrame(c)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadAck, err)
	}
	return body, nil
}

// DeliverLive sends a live period (outcome.Live's JSON) the same way as a
// report. Only augurd's "stored" is success: an augurd from before live
// periods refuses them as malformed reports.
func (s *Sender) DeliverLive(ctx context.Context, live []byte) error {
	body, err := s.exchange(ctx, live)
	if err != nil {
		return err
	}
	var a outcome.Ack
	if err := json.Unmarshal(body, &a); err != nil {
		return fmt.Errorf("%w: %v", ErrBadAck, err)
	}
	if a.Status != outcome.Stored {
		return fmt.Errorf("augurd did not take the live period: %s %s", a.Status, a.Error)
	}
	return nil
}

// DecodeAck parses augurd's answer for job jobID. Anything but a JSON Ack
// naming that job with a known status is ErrBadAck.
func DecodeAck(body []byte, jobID uint64) (outcome.Ack, error) {
	var a outcome.Ack
	if err := json.Unmarshal(body, &a); err != nil {
		return outcome.Ack{}, fmt.Errorf("%w: %v", ErrBadAck, err)
	}
	switch a.Status {
	case outcome.Stored, outcome.Duplicate, outcome.Refused, outcome.Failed:
	default:
		return outcome.Ack{}, fmt.Errorf("%w: status %q", ErrBadAck, a.Status)
	}
	// A refusal of something augurd could not even decode cannot name the
	// job, nor can a failure to verify it (munged down at augurd's end).
	anon := a.JobID == 0 && (a.Status == outcome.Refused || a.Status == outcome.Failed)
	if a.JobID != jobID && !anon {
		return outcome.Ack{}, fmt.Errorf("%w: ack for job %d, sent job %d", ErrBadAck, a.JobID, jobID)
	}
	return a, nil
}

// Backoff is the wait before attempt number attempts+1 of a report:
// 2 s doubling per failed attempt, capped at 5 minutes.
func Backoff(attempts int) time.Duration {
	const base, limit = 2 * time.Second, 5 * time.Minute
	if attempts < 1 {
		return 0
	}
	if attempts > 9 {
		return limit
	}
	return min(limit, base<<(attempts-1))
}
