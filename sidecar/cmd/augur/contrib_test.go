package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const (
	rulesFile     = "../../../contrib/prometheus/augur-rules.yml"
	dashboardFile = "../../../contrib/grafana/augur-dashboard.json"
	metricsSource = "../../metrics/metrics.go"
)

// definedMetrics are the metric names sidecar/metrics builds with
// fq(subsystem, name), read from its source.
func definedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile(metricsSource)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`fq\("(\w*)",\s*"(\w+)"\)`).FindAllStringSubmatch(string(src), -1) {
		name := "augur_" + m[2]
		if m[1] != "" {
			name = "augur_" + m[1] + "_" + m[2]
		}
		out[name] = true
	}
	if len(out) < 5 {
		t.Fatalf("found only %d metrics in %s: has the way it names them changed?", len(out), metricsSource)
	}
	return out
}

// usedMetrics are the augur_ series an expression text names, without the
// histogram suffixes.
func usedMetrics(text string) []string {
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`\baugur_[a-z0-9_]+`).FindAllString(text, -1) {
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			m = strings.TrimSuffix(m, suf)
		}
		seen[m] = true
	}
	var out []string
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func TestAlertRules(t *testing.T) {
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert       string
				Expr        string
				For         string
				Labels      map[string]string
				Annotations map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	defined := definedMetrics(t)
	names := map[string]bool{}
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" || r.Annotations["summary"] == "" {
				t.Errorf("rule %+v: needs alert, expr and a summary", r)
			}
			if names[r.Alert] {
				t.Errorf("alert %s twice", r.Alert)
			}
			names[r.Alert] = true
			switch r.Labels["severity"] {
			case "critical", "warning", "info":
			default:
				t.Errorf("%s: severity %q", r.Alert, r.Labels["severity"])
			}
			for _, m := range usedMetrics(r.Expr) {
				if !defined[m] {
					t.Errorf("%s uses %s, which sidecar/metrics does not define", r.Alert, m)
				}
			}
		}
	}
	t.Run("promtool", func(t *testing.T) {
		promtool, err := exec.LookPath("promtool")
		if err != nil {
			t.Skip("promtool not installed (Debian: apt-get install prometheus); the rules were only parse-checked")
		}
		out, err := exec.Command(promtool, "check", "rules", rulesFile).CombinedOutput()
		if err != nil {
			t.Errorf("promtool check rules: %v\n%s", err, out)
		}
	})
}

func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string
		Title  string
		Panels []struct {
			ID      int
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard without uid, title or panels")
	}
	defined := definedMetrics(t)
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range usedMetrics(tg.Expr) {
				if !defined[m] {
					t.Errorf("panel %q uses %s, which sidecar/metrics does not define", p.Title, m)
				}
			}
		}
	}
}
