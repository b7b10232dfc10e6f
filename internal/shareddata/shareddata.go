// Package shareddata finds the real data tests read from ../shared/data
// beside the repository (public traces, memory measurements, telemetry):
// the repository reads it there and never copies it in, and a test skips
// when it is absent.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Path returns the path of parts under ../shared/data beside the root of
// the repository holding the working directory (the go.mod a test's
// package sits under), or skips the test when that path is absent.
func Path(t testing.TB, parts ...string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root (go.mod) not found")
		}
		dir = parent
	}
	p := filepath.Join(append([]string{dir, "..", "shared", "data"}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared data %s absent (%v): tests on real data skipped", p, err)
	}
	return p
}
