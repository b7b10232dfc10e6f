package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Human formats seconds as a short duration: 45s, 12.5m, 3.2h, 1.5d.
func Human(sec float64) string {
	switch {
	case sec >= 86400:
		return fmt.Sprintf("%.1fd", sec/86400)
	case sec >= 3600:
		return fmt.Sprintf("%.1fh", sec/3600)
	case sec >= 60:
		return fmt.Sprintf("%.1fm", sec/60)
	}
	return fmt.Sprintf("%.0fs", sec)
}

func pct(part, whole float64) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * part / whole
}

func window(s *Summary, loc *time.Location) string {
	from, to := "the beginning", "now"
	if !s.From.IsZero() {
		from = Date(s.From, loc)
	}
	if !s.To.IsZero() {
		to = Date(s.To, loc)
	}
	return from + " to " + to
}

// WriteText writes the summary for a terminal.
func WriteText(w io.Writer, s *Summary, loc *time.Location) error {
	ew := &errWriter{w: w}
	p := ew.printf
	p("Augur report: jobs that ended %s\n\n", window(s, loc))
	p("Jobs          %d ended", s.Jobs)
	if len(s.States) > 0 {
		parts := make([]string, len(s.States))
		for i, c := range s.States {
			parts[i] = fmt.Sprintf("%s %d", c.Name, c.N)
		}
		p(" (%s)", strings.Join(parts, ", "))
	}
	p("\nSubmissions   %d received, %d accepted, %d refused\n\n",
		s.Submissions["accept"]+s.Submissions["reject"], s.Submissions["accept"], s.Submissions["reject"])

	p("Prediction accuracy\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tjobs\tmedian error\tp90 error\tunder median\tover upper bound\t\n")
	acc := func(name string, a Accuracy) {
		if a.Jobs == 0 {
			fmt.Fprintf(tw, "  %s\t0\t-\t-\t-\t-\t\n", name)
			return
		}
		fmt.Fprintf(tw, "  %s\t%d\t%.0f%%\t%.0f%%\t%.0f%%\t%.1f%%\t\n", name, a.Jobs, a.MedianErrPct, a.P90ErrPct, a.UnderPct, a.UnderHiPct)
	}
	acc("GPU memory", s.Memory)
	for _, src := range s.Sources {
		acc("  from "+src.Source, src.Accuracy)
	}
	acc("runtime (completed)", s.Runtime)
	tw.Flush()
	p("\n")

	p("GPU out-of-memory\n")
	p("  failures seen       %d jobs, %.1f GPU-hours lost", s.OOM.Seen, s.OOM.GPUHoursLost)
	if s.OOM.Seen > 0 {
		p(" (%d had been predicted at 95%%+ of their GPU)", s.OOM.Flagged)
	}
	p("\n  avoided             %d submissions refused before they could fail\n", s.OOM.Avoided)
	for _, r := range s.OOM.Rejections {
		who := r.User
		if who == "" {
			who = uidName(r.UserID)
		}
		p("    %s  %-10s %-16s %s\n", Date(r.Received, loc), who, r.Name, r.Message)
	}
	p("\n")

	wst := s.Waste
	p("GPU time\n")
	p("  allocated           %.1f GPU-hours, used %.1f (%.0f%% mean SM utilisation)\n",
		wst.AllocGPUHours, wst.UsedGPUHours, pct(wst.UsedGPUHours, wst.AllocGPUHours))
	p("  idle jobs           %d jobs, %.1f GPU-hours (%.0f%% of allocated)\n", wst.IdleJobs, wst.IdleGPUHours, pct(wst.IdleGPUHours, wst.AllocGPUHours))
	p("  oversized jobs      %d jobs, %.1f GPU-hours on GPUs they did not need\n", wst.OversizedJobs, wst.OversizedGPUHours)
	if len(wst.TopUsers) > 0 {
		tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  user\tjobs\twasted GPU-h\tof allocated\n")
		for _, u := range wst.TopUsers {
			fmt.Fprintf(tw, "  %s\t%d\t%.1f\t%.0f%%\n", u.User, u.Jobs, u.WastedGPUHour, pct(u.WastedGPUHour, u.AllocGPUHours))
		}
		tw.Flush()
	}
	p("\n")

	p("Queue wait and job completion time by partition\n")
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "partition\tjobs\twait p50\twait p95\twait max\tJCT p50\tJCT p95\tJCT mean\t\n")
	for _, ps := range s.Partitions {
		name := ps.Partition
		if name == "" {
			name = "(default)"
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, ps.Jobs, Human(ps.Wait.P50), Human(ps.Wait.P95),
			Human(ps.Wait.Max), Human(ps.JCT.P50), Human(ps.JCT.P95), Human(ps.JCT.Mean))
	}
	tw.Flush()
	p("\n")

	if pr := s.Preemptions; pr != nil {
		p("Preemptions (live scheduler)\n")
		p("  %d signals, %d requeues of %d jobs (at most %d per job); %d planned only (dry run), %d failed\n",
			pr.Signals, pr.Requeues, pr.Jobs, pr.MostPerJob, pr.DryRun, pr.Failed)
		for _, c := range pr.ByPolicy {
			p("  by %-18s %d\n", c.Name, c.N)
		}
	} else {
		p("Preemptions: none recorded (this store has no live-scheduler actions)\n")
	}
	if s.TimeHints > 0 {
		p("Time limits: %d submissions asked for more than twice the runtime Augur predicted for them (their annotation's time_hint, and augur job, say what --time to ask for)\n", s.TimeHints)
	}
	if o := s.OOMRecovery; o != nil {
		p("GPU out-of-memory recovery (live.oom_recovery)\n")
		p("  %d jobs requeued onto a larger GPU type, %d of them completed there (%s GPU-hours of finished work); %d planned only (dry run), %d failed\n",
			o.Requeued, o.Completed, GPUHours(o.CompletedGPUHours), o.DryRun, o.Failed)
	}
	if g := s.IdleGPU; g != nil {
		p("Idle GPUs (live.idle_gpu)\n")
		p("  %d running jobs flagged, %d warned of a cancel, %d cancelled (%s GPU-hours of their time limits freed, at most); %d actions planned only (dry run: %s GPU-hours), %d failed\n",
			g.Flagged+g.Warned, g.Warned, g.Cancelled, GPUHours(g.FreedGPUHours), g.DryRun, GPUHours(g.DryRunGPUHours), g.Failed)
	}
	return ew.err
}

// errWriter remembers the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return len(b), nil
	}
	_, e.err = e.w.Write(b)
	return len(b), nil
}

func (e *errWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }
