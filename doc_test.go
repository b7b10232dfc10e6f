// Package augur_test holds repository-wide checks: every package has one doc
// comment, and the dependency directions ARCHITECTURE.md fixes are kept.
package augur_test

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// packages returns every package directory with Go files, relative to the root.
func packages(t *testing.T) []string {
	t.Helper()
	var dirs []string
	seen := map[string]bool{}
	filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "." || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !seen[filepath.Dir(p)] {
			seen[filepath.Dir(p)] = true
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	return dirs
}

// TestOneDocCommentPerPackage: each package says what it is for, once.
func TestOneDocCommentPerPackage(t *testing.T) {
	for _, dir := range packages(t) {
		pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi os.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		for name, pkg := range pkgs {
			n := 0
			for _, f := range pkg.Files {
				if f.Doc != nil {
					n++
				}
			}
			if n != 1 {
				t.Errorf("package %s (%s) has %d doc comments, want exactly 1", name, dir, n)
			}
		}
	}
}

// TestDependencyDirection: the predictor and the decision core stay pure
// (STYLE.md rules 1 and 14): no daemon, metrics, config, SQL or network.
func TestDependencyDirection(t *testing.T) {
	forbidden := []string{
		"github.com/augur-hpc/augur/sidecar/",
		"github.com/prometheus/",
		"github.com/spf13/viper",
		"database/sql",
		"github.com/mattn/go-sqlite3",
		"net",
		"net/http",
		"os/exec",
	}
	for _, pkg := range []string{"./predictor/...", "./sidecar/core", "./sidecar/policy", "./sidecar/skew"} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, bad := range forbidden {
				pure := dep == "github.com/augur-hpc/augur/sidecar/core" || dep == "github.com/augur-hpc/augur/sidecar/policy" ||
					dep == "github.com/augur-hpc/augur/sidecar/skew"
				if dep == bad || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad) && !pure) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
