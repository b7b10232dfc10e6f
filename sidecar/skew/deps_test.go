package skew

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPure: skew stays a decision package (STYLE.md rules 1 and 14): no
// augurd package, SQL, network, exec or metrics below it.
func TestPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{"github.com/augur-hpc/augur/sidecar/", "github.com/prometheus/", "database/sql", "net", "os/exec", "github.com/spf13/viper"} {
			if (dep == bad || strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) && dep != "github.com/augur-hpc/augur/sidecar/skew" {
				t.Errorf("skew depends on %s", dep)
			}
		}
	}
}
