package munge

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// requireMunged skips unless munged answers; `make test` starts it first
// (tests/cluster/munge-up.sh), so CI runs these for real.
func requireMunged(t *testing.T) Client {
	t.Helper()
	c := Client{}
	if _, err := c.Encode([]byte("ping")); err != nil {
		if os.Getenv("AUGUR_REQUIRE_MUNGE") != "" {
			t.Fatalf("munged required but unavailable: %v", err)
		}
		t.Skipf("munged not running (%v): run tests/cluster/munge-up.sh", err)
	}
	return c
}

func TestRoundTripAndReplay(t *testing.T) {
	c := requireMunged(t)
	cred, err := c.Encode([]byte(`{"job_id":42}`))
	if err != nil {
		t.Fatal(err)
	}
	payload, id, err := c.Decode(cred)
	if err != nil {
		t.Fatal(err)
	}
	if string(payload) != `{"job_id":42}` {
		t.Errorf("payload %q", payload)
	}
	if id.UID != uint32(os.Getuid()) {
		t.Errorf("signer uid %d, want %d", id.UID, os.Getuid())
	}
	if _, _, err := c.Decode(cred); !errors.Is(err, ErrReplayed) {
		t.Errorf("second decode: err = %v, want ErrReplayed", err)
	}
}

func TestForgedAndGarbage(t *testing.T) {
	c := requireMunged(t)
	cred, _ := c.Encode([]byte("payload"))
	// Flip a character inside the base64 body of the credential.
	i := len(cred) / 2
	b := []byte(cred)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	for name, in := range map[string]string{
		"tampered": string(b),
		"garbage":  "MUNGE:not-a-credential:",
		"empty":    "",
		"plain":    `{"job_id":42}`,
	} {
		if _, _, err := c.Decode(in); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !errors.Is(err, ErrInvalid) && !strings.Contains(err.Error(), "munge") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// TestInteroperatesWithCLI: a credential from the munge command decodes here.
func TestInteroperatesWithCLI(t *testing.T) {
	c := requireMunged(t)
	out, err := exec.Command("munge", "-s", "hello").Output()
	if err != nil {
		t.Skipf("munge CLI: %v", err)
	}
	payload, _, err := c.Decode(strings.TrimSpace(string(out)))
	if err != nil || string(payload) != "hello" {
		t.Errorf("decode CLI credential: %q, %v", payload, err)
	}
}

func TestUnavailable(t *testing.T) {
	c := Client{Socket: "/nonexistent/munge.socket"}
	if _, err := c.Encode([]byte("x")); !errors.Is(err, ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", err)
	}
}
