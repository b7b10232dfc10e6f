package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// chromiumScreenshot renders page with headless Chromium into a PNG and
// returns its path; it skips the test when no Chromium is installed
// (Debian: apt-get install chromium; make e2e installs it).
func chromiumScreenshot(t *testing.T, page string, width, height int) string {
	t.Helper()
	var bin string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("no chromium: the HTML report's rendering is not checked (Debian: apt-get install chromium)")
	}
	dir := t.TempDir()
	shot := filepath.Join(dir, "report.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot,
		"--window-size="+itoa(width)+","+itoa(height), "file://"+page)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	return shot
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestReportRendersInChromium: the HTML page loads in a real browser with
// nothing fetched, and its charts draw (the screenshot is not blank).
func TestReportRendersInChromium(t *testing.T) {
	cfg := makeFixture(t)
	fixedClock(t, rt0.Add(6*time.Hour))
	page := filepath.Join(t.TempDir(), "report.html")
	if _, err := capture(t, func() error {
		return runReport([]string{"--config", cfg, "-S", "2025-03-10T08:00", "-E", "2025-03-10T14:00", "--html", page})
	}); err != nil {
		t.Fatal(err)
	}
	shot := chromiumScreenshot(t, page, 1280, 2600)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	// Count pixels that are neither white nor near-white: text, tables and
	// the charts' points and areas.
	inked := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 < 200 || g>>8 < 200 || b>>8 < 200 {
				inked++
			}
		}
	}
	if inked < 5000 {
		t.Errorf("the rendered page is nearly blank (%d inked pixels)", inked)
	}
	if dst := os.Getenv("AUGUR_REPORT_SCREENSHOT"); dst != "" {
		os.WriteFile(dst, b, 0o644)
	}
}
