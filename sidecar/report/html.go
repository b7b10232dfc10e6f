package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// chart geometry (SVG user units).
const (
	chartW, chartH = 560, 360
	padL, padR     = 70, 40
	padT, padB     = 20, 50
)

// axis maps values to pixels, linear or log10.
type axis struct {
	lo, hi  float64
	log     bool
	p0, p1  float64 // pixel range
	label   string
	tickFmt func(float64) string
}

func (a axis) at(v float64) float64 {
	if a.log {
		v = math.Log10(math.Max(v, a.lo))
		lo, hi := math.Log10(a.lo), math.Log10(a.hi)
		return a.p0 + (v-lo)/(hi-lo)*(a.p1-a.p0)
	}
	return a.p0 + (v-a.lo)/(a.hi-a.lo)*(a.p1-a.p0)
}

func (a axis) ticks() []float64 {
	var out []float64
	if a.log {
		for e := math.Log10(a.lo); e <= math.Log10(a.hi)+1e-9; e++ {
			out = append(out, math.Pow(10, e))
		}
		return out
	}
	for i := 0; i <= 4; i++ {
		out = append(out, a.lo+(a.hi-a.lo)*float64(i)/4)
	}
	return out
}

// logRange is the decades around the positive values of v.
func logRange(v ...float64) (float64, float64) {
	lo, hi := math.Inf(1), 0.0
	for _, x := range v {
		if x > 0 {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if math.IsInf(lo, 1) {
		return 1, 10
	}
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

func svgStart(b *strings.Builder, title string, x, y axis) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`+"\n",
		chartW, chartH, chartW, chartH, html.EscapeString(title))
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", chartW, chartH)
	for _, t := range x.ticks() {
		px := x.at(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e3e3e3"/><text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n",
			px, padT, px, chartH-padB, px, chartH-padB+16, html.EscapeString(x.tickFmt(t)))
	}
	for _, t := range y.ticks() {
		py := y.at(t)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e3e3e3"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
			padL, py, chartW-padR, py, padL-6, py+4, html.EscapeString(y.tickFmt(t)))
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", padL, padT, chartW-padL-padR, chartH-padT-padB)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", padL+(chartW-padL-padR)/2, chartH-10, html.EscapeString(x.label))
	fmt.Fprintf(b, `<text transform="translate(16 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", padT+(chartH-padT-padB)/2, html.EscapeString(y.label))
}

func xAxis(lo, hi float64, log bool, label string, f func(float64) string) axis {
	return axis{lo: lo, hi: hi, log: log, p0: padL, p1: chartW - padR, label: label, tickFmt: f}
}

func yAxis(lo, hi float64, log bool, label string, f func(float64) string) axis {
	return axis{lo: lo, hi: hi, log: log, p0: chartH - padB, p1: padT, label: label, tickFmt: f}
}

// gibTick labels a GiB axis.
func gibTick(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) + "G" }

// inGiB converts MiB points to GiB, so that the log axis has round decades.
func inGiB(pts []Point) []Point {
	out := make([]Point, len(pts))
	for i, p := range pts {
		out[i] = Point{p.X / 1024, p.Y / 1024}
	}
	return out
}

// scatter draws predicted (x) against measured (y) on log axes, with the
// line where they are equal.
func scatter(title, unit string, pts []Point, tick func(float64) string) string {
	var b strings.Builder
	vals := make([]float64, 0, 2*len(pts))
	for _, p := range pts {
		vals = append(vals, p.X, p.Y)
	}
	lo, hi := logRange(vals...)
	x := xAxis(lo, hi, true, "predicted "+unit, tick)
	y := yAxis(lo, hi, true, "measured "+unit, tick)
	svgStart(&b, title, x, y)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888" stroke-dasharray="4 3"/>`+"\n", x.at(lo), y.at(lo), x.at(hi), y.at(hi))
	for _, p := range pts {
		if p.X <= 0 || p.Y <= 0 {
			continue
		}
		c := "#1f77b4"
		if p.Y > p.X {
			c = "#d62728" // under-predicted
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s" fill-opacity="0.55"/>`+"\n", x.at(p.X), y.at(p.Y), c)
	}
	if len(pts) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="#777">no jobs with both a prediction and a measurement</text>`+"\n", chartW/2, chartH/2)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func cdf(pts []Point) string {
	var b strings.Builder
	vals := make([]float64, len(pts))
	for i, p := range pts {
		vals[i] = math.Max(p.X, 1)
	}
	lo, hi := logRange(vals...)
	x := xAxis(lo, hi, true, "job completion time (submit to end)", func(v float64) string { return Human(v) })
	y := yAxis(0, 1, false, "fraction of jobs", func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) })
	svgStart(&b, "JCT CDF", x, y)
	if len(pts) > 0 {
		b.WriteString(`<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="`)
		fmt.Fprintf(&b, "%.1f,%.1f ", x.at(math.Max(pts[0].X, 1)), y.at(0))
		for _, p := range pts {
			fmt.Fprintf(&b, "%.1f,%.1f ", x.at(math.Max(p.X, 1)), y.at(p.Y))
		}
		b.WriteString("\"/>\n")
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func utilChart(bs []UtilBucket, loc *time.Location) string {
	var b strings.Builder
	if len(bs) == 0 {
		return ""
	}
	step := time.Hour
	if len(bs) > 1 {
		step = bs[1].Start.Sub(bs[0].Start)
	}
	hours := step.Hours()
	top := 0.0
	for _, u := range bs {
		top = math.Max(top, u.AllocGPUHours/hours)
	}
	if top <= 0 {
		top = 1
	}
	t0, t1 := float64(bs[0].Start.Unix()), float64(bs[len(bs)-1].Start.Add(step).Unix())
	layout := "01-02 15:04"
	if step >= 12*time.Hour {
		layout = "2006-01-02"
	}
	x := xAxis(t0, t1, false, "time", func(v float64) string { return time.Unix(int64(v), 0).In(loc).Format(layout) })
	y := yAxis(0, top*1.1, false, "GPUs (mean over each step)", func(v float64) string { return fmt.Sprintf("%.1f", v) })
	svgStart(&b, "GPU utilisation over time", x, y)
	area := func(val func(UtilBucket) float64, fill string) {
		fmt.Fprintf(&b, `<polygon fill="%s" fill-opacity="0.6" stroke="none" points="%.1f,%.1f `, fill, x.at(t0), y.at(0))
		for _, u := range bs {
			v := val(u) / hours
			fmt.Fprintf(&b, "%.1f,%.1f %.1f,%.1f ", x.at(float64(u.Start.Unix())), y.at(v), x.at(float64(u.Start.Add(step).Unix())), y.at(v))
		}
		fmt.Fprintf(&b, "%.1f,%.1f\"/>\n", x.at(t1), y.at(0))
	}
	area(func(u UtilBucket) float64 { return u.AllocGPUHours }, "#9ecae1")
	area(func(u UtilBucket) float64 { return u.Used }, "#08519c")
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="#9ecae1"/><text x="%d" y="%d">allocated</text>`+"\n", padL+10, padT+8, padL+26, padT+18)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="#08519c"/><text x="%d" y="%d">used (SM utilisation)</text>`+"\n", padL+100, padT+8, padL+116, padT+18)
	b.WriteString("</svg>\n")
	return b.String()
}

const css = `body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd;padding-bottom:.2em}
.sub{color:#666;margin-top:0}.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{border:1px solid #ddd;border-radius:6px;padding:10px 14px;min-width:150px}.card b{display:block;font-size:1.5em}
.card span{color:#666;font-size:.9em}table{border-collapse:collapse;margin:.6em 0}
td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:right}th{background:#f6f6f6}td:first-child,th:first-child{text-align:left}
.charts{display:flex;flex-wrap:wrap;gap:16px}figure{margin:0}figcaption{color:#555;font-size:.9em;max-width:560px}
svg{font-size:11px;font-family:inherit}`

// WriteHTML writes the summary as one self-contained HTML page: inline CSS
// and SVG charts, no scripts, nothing fetched.
func WriteHTML(w io.Writer, s *Summary, loc *time.Location) error {
	ew := &errWriter{w: w}
	p := ew.printf
	e := html.EscapeString
	p("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>Augur report</title>\n<style>%s</style></head><body>\n", css)
	p("<h1>Augur report</h1>\n<p class=\"sub\">Jobs that ended %s</p>\n", e(window(s, loc)))
	wst := s.Waste
	p("<div class=\"cards\">\n")
	card := func(v, label string) { p("<div class=\"card\"><b>%s</b><span>%s</span></div>\n", e(v), e(label)) }
	card(fmt.Sprint(s.Jobs), "jobs ended")
	card(fmt.Sprintf("%.0f%%", s.Memory.MedianErrPct), "median GPU memory error")
	card(fmt.Sprintf("%.1f%%", s.Memory.UnderHiPct), "over predicted upper bound")
	card(fmt.Sprint(s.OOM.Seen), "GPU OOM failures")
	card(fmt.Sprint(s.OOM.Avoided), "OOM failures avoided")
	card(fmt.Sprintf("%.0f%%", pct(wst.UsedGPUHours, wst.AllocGPUHours)), "of allocated GPU time used")
	card(fmt.Sprintf("%.1f", wst.IdleGPUHours+wst.OversizedGPUHours), "GPU-hours idle or oversized")
	p("</div>\n")

	p("<h2>Prediction accuracy</h2>\n<table><tr><th></th><th>jobs</th><th>median error</th><th>p90 error</th><th>under median</th><th>over upper bound</th></tr>\n")
	row := func(name string, a Accuracy) {
		p("<tr><td>%s</td><td>%d</td><td>%.0f%%</td><td>%.0f%%</td><td>%.0f%%</td><td>%.1f%%</td></tr>\n", e(name), a.Jobs, a.MedianErrPct, a.P90ErrPct, a.UnderPct, a.UnderHiPct)
	}
	row("GPU memory", s.Memory)
	for _, src := range s.Sources {
		row("\u00a0\u00a0from "+src.Source, src.Accuracy)
	}
	row("runtime (completed jobs)", s.Runtime)
	p("</table>\n<div class=\"charts\">\n")
	p("<figure>%s<figcaption>Peak GPU memory per GPU: predicted against measured; red points used more than predicted.</figcaption></figure>\n",
		scatter("GPU memory: predicted vs measured", "GPU memory", inGiB(s.MemPoints), gibTick))
	p("<figure>%s<figcaption>Runtime of completed jobs: predicted against measured.</figcaption></figure>\n",
		scatter("Runtime: predicted vs measured", "runtime", s.RuntimePoints, Human))
	p("</div>\n")

	p("<h2>GPU out-of-memory</h2>\n<p>%d jobs look like they died of GPU out-of-memory (%.1f GPU-hours); %d submissions were refused as certain to, before they could fail.</p>\n",
		s.OOM.Seen, s.OOM.GPUHoursLost, s.OOM.Avoided)
	if len(s.OOM.Rejections) > 0 {
		p("<table><tr><th>refused</th><th>user</th><th>job</th><th>told</th></tr>\n")
		for _, r := range s.OOM.Rejections {
			who := r.User
			if who == "" {
				who = uidName(r.UserID)
			}
			p("<tr><td>%s</td><td>%s</td><td>%s</td><td style=\"text-align:left\">%s</td></tr>\n", e(Date(r.Received, loc)), e(who), e(r.Name), e(r.Message))
		}
		p("</table>\n")
	}

	p("<h2>GPU time</h2>\n<p>%.1f GPU-hours allocated, %.1f used (mean SM utilisation %.0f%%). Idle jobs (under 5%% utilisation): %d, %.1f GPU-hours. Oversized multi-GPU jobs: %d, %.1f GPU-hours on GPUs they did not need.</p>\n",
		wst.AllocGPUHours, wst.UsedGPUHours, pct(wst.UsedGPUHours, wst.AllocGPUHours), wst.IdleJobs, wst.IdleGPUHours, wst.OversizedJobs, wst.OversizedGPUHours)
	if o := s.OOMRecovery; o != nil {
		p("<p>GPU out-of-memory recovery (live.oom_recovery): %d jobs requeued onto a larger GPU type, %d of them completed there (%s GPU-hours of finished work); %d planned only (dry run), %d failed.</p>\n",
			o.Requeued, o.Completed, GPUHours(o.CompletedGPUHours), o.DryRun, o.Failed)
	}
	if g := s.IdleGPU; g != nil {
		p("<p>Idle GPUs (live.idle_gpu): %d running jobs flagged, %d warned of a cancel, %d cancelled (%s GPU-hours of their time limits freed, at most); %d actions planned only (dry run: %s GPU-hours), %d failed.</p>\n",
			g.Flagged+g.Warned, g.Warned, g.Cancelled, GPUHours(g.FreedGPUHours), g.DryRun, GPUHours(g.DryRunGPUHours), g.Failed)
	}
	if c := utilChart(s.Utilisation, loc); c != "" {
		p("<figure>%s<figcaption>GPUs allocated and used (allocation weighted by SM utilisation), mean over each step.</figcaption></figure>\n", c)
	}
	if len(wst.TopUsers) > 0 {
		p("<table><tr><th>user</th><th>jobs</th><th>wasted GPU-hours</th><th>of allocated</th></tr>\n")
		for _, u := range wst.TopUsers {
			p("<tr><td>%s</td><td>%d</td><td>%.1f</td><td>%.0f%%</td></tr>\n", e(u.User), u.Jobs, u.WastedGPUHour, pct(u.WastedGPUHour, u.AllocGPUHours))
		}
		p("</table>\n")
	}

	p("<h2>Queue wait and job completion time</h2>\n<table><tr><th>partition</th><th>jobs</th><th>wait p50</th><th>wait p95</th><th>wait max</th><th>JCT p50</th><th>JCT p95</th><th>JCT mean</th></tr>\n")
	for _, ps := range s.Partitions {
		name := ps.Partition
		if name == "" {
			name = "(default)"
		}
		p("<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", e(name), ps.Jobs,
			Human(ps.Wait.P50), Human(ps.Wait.P95), Human(ps.Wait.Max), Human(ps.JCT.P50), Human(ps.JCT.P95), Human(ps.JCT.Mean))
	}
	p("</table>\n<figure>%s<figcaption>Fraction of jobs completed within a time from their submission.</figcaption></figure>\n", cdf(s.JCTCDF))

	p("<h2>Preemptions</h2>\n")
	if pr := s.Preemptions; pr != nil {
		p("<p>%d signals and %d requeues of %d jobs (at most %d per job); %d planned only (dry run), %d failed.</p>\n",
			pr.Signals, pr.Requeues, pr.Jobs, pr.MostPerJob, pr.DryRun, pr.Failed)
		if len(pr.ByPolicy) > 0 {
			p("<table><tr><th>policy</th><th>preemptions</th></tr>\n")
			for _, c := range pr.ByPolicy {
				p("<tr><td>%s</td><td>%d</td></tr>\n", e(c.Name), c.N)
			}
			p("</table>\n")
		}
	} else {
		p("<p>None recorded: this store has no live-scheduler actions.</p>\n")
	}
	p("</body></html>\n")
	return ew.err
}
