package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPath(t *testing.T) {
	p := Path(t) // skips where ../shared/data is absent
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		t.Fatalf("Path() = %q: %v", p, err)
	}
	if filepath.Base(p) != "data" || filepath.Base(filepath.Dir(p)) != "shared" {
		t.Errorf("Path() = %q, want …/shared/data", p)
	}
}

// TestPathAbsentSkips runs Path for a file that is not there in a subtest
// and checks that the subtest skipped rather than failed.
func TestPathAbsentSkips(t *testing.T) {
	var skipped bool
	t.Run("absent", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Path(t, "no-such-file-in-shared-data")
		t.Error("Path returned for an absent file")
	})
	if !skipped {
		t.Error("an absent file did not skip the test")
	}
}
