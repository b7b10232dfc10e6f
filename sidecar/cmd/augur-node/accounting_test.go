package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/augur-hpc/augur/sidecar/telemetry"
)

// TestLogAccounting: the agent's one line on NVML accounting says which
// GPUs read peaks between samples and, where some cannot, why and what to
// do, at the level an administrator would look for.
func TestLogAccounting(t *testing.T) {
	denied := errors.New("nvml: turning accounting on for gpu 1: Insufficient Permissions")
	cases := map[string]struct {
		states []telemetry.AccountingState
		asked  bool
		want   []string // substrings of the log, in any order
		not    []string
	}{
		"turned on by the agent": {
			states: []telemetry.AccountingState{{Index: 0, On: true, Enabled: true}, {Index: 1, On: true}},
			asked:  true,
			want:   []string{"level=INFO", "NVML accounting on", "gpus=\"[0 1]\"", "turned_on_now=[0]"},
			not:    []string{"level=WARN"},
		},
		"one GPU refused": {
			states: []telemetry.AccountingState{{Index: 0, On: true}, {Index: 1, Err: denied}},
			asked:  true,
			want:   []string{"NVML accounting on", "level=WARN", "unavailable", "gpus=[1]", "Insufficient Permissions", "nvidia-smi -am 1"},
		},
		"not asked and off": {
			states: []telemetry.AccountingState{{Index: 0}, {Index: 1}},
			want:   []string{"level=INFO", "nvml_accounting: false", "gpus=2"},
			not:    []string{"level=WARN", "accounting on"},
		},
		"not asked, on already": {
			states: []telemetry.AccountingState{{Index: 0, On: true}},
			want:   []string{"NVML accounting on", "turned_on_now=[]"},
			not:    []string{"nvml_accounting: false"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			logAccounting(slog.New(slog.NewTextHandler(&buf, nil)), tc.states, tc.asked)
			out := buf.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("log lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out, w) {
					t.Errorf("log has %q:\n%s", w, out)
				}
			}
		})
	}
}
