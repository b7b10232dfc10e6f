package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/augur-hpc/augur/sidecar/config"
	"github.com/augur-hpc/augur/sidecar/report"
	"github.com/augur-hpc/augur/sidecar/store"
)

func init() {
	register(command{"report", "report [-S TIME] [-E TIME] [--html FILE] [--json]: the cluster over a window (default the last 7 days): prediction accuracy, GPU OOM seen and avoided, wasted GPU-hours, queue wait and JCT, preemptions", runReport})
}

// progressWriter is stderr when it is a terminal, else nil (no progress).
func progressWriter() io.Writer {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return os.Stderr
	}
	return nil
}

func runReport(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	var start, end, htmlOut, cfgPath string
	for _, n := range []string{"S", "starttime"} {
		fs.StringVar(&start, n, "now-7days", "jobs that ended at or after this time (sacct's formats)")
	}
	for _, n := range []string{"E", "endtime"} {
		fs.StringVar(&end, n, "now", "jobs that ended before this time")
	}
	fs.StringVar(&htmlOut, "html", "", "also write one self-contained HTML page with charts to this file")
	asJSON := fs.Bool("json", false, "print the summary as JSON instead of text")
	fs.StringVar(&cfgPath, "config", "", "configuration file (default $AUGUR_CONFIG or "+config.DefaultPath+")")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return badUsage(fs, "unexpected arguments %q", fs.Args())
	}
	cfg, err := config.Load(config.Path(cfgPath), nil)
	if err != nil {
		return err
	}
	now := clock()
	from, err := report.ParseTime(start, now, zone)
	if err != nil {
		return fmt.Errorf("-S: %w", err)
	}
	to, err := report.ParseTime(end, now, zone)
	if err != nil {
		return fmt.Errorf("-E: %w", err)
	}
	if !to.After(from) {
		return fmt.Errorf("-E %s is not after -S %s", report.Date(to, zone), report.Date(from, zone))
	}
	ctx := context.Background()
	st, err := store.OpenReadOnly(ctx, cfg.Store.Path)
	if err != nil {
		return err
	}
	defer st.Close()
	sum, err := buildSummary(ctx, st, report.Options{From: from, To: to, GPUMemMiB: gpuMem(cfg)}, progressWriter())
	if err != nil {
		return err
	}
	if htmlOut != "" {
		if err := writeFileAtomic(htmlOut, func(w io.Writer) error { return report.WriteHTML(w, sum, zone) }); err != nil {
			return err
		}
	}
	w := bufio.NewWriter(os.Stdout)
	if *asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else if err := report.WriteText(w, sum, zone); err != nil {
		return err
	}
	if htmlOut != "" && !*asJSON {
		fmt.Fprintf(w, "\nHTML report: %s\n", htmlOut)
	}
	return w.Flush()
}

// buildSummary reads the window from the store into a summary, showing
// progress on progress (nil: none).
func buildSummary(ctx context.Context, st *store.Reader, o report.Options, progress io.Writer) (*report.Summary, error) {
	b := report.NewBuilder(o)
	subs, err := st.CountSubmissions(ctx, o.From, o.To)
	if err != nil {
		return nil, err
	}
	b.SetSubmissions(subs)
	hints, err := st.CountTimeHints(ctx, o.From, o.To)
	if err != nil {
		return nil, err
	}
	b.SetTimeHints(hints)
	if err := st.EachRejection(ctx, o.From, o.To, func(r store.Rejection) error { b.AddRejection(r); return nil }); err != nil {
		return nil, err
	}
	if ok, err := st.HasActions(ctx); err != nil {
		return nil, err
	} else if ok {
		b.MarkActions()
		err := st.EachAction(ctx, o.From, o.To, []string{store.ActionSignal, store.ActionRequeue, store.ActionOOMRequeue,
			store.ActionIdleFlag, store.ActionIdleWarn, store.ActionIdleCancel}, func(a store.Action) error {
			b.AddAction(a)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	f := store.JobFilter{From: o.From, To: o.To, Lean: true}
	var bar *bar
	if progress != nil {
		n, err := st.CountJobs(ctx, f)
		if err != nil {
			return nil, err
		}
		bar = newBar(progress, int(n))
		defer bar.done()
	}
	const chunk = 4096
	seen := 0
	err = st.EachJob(ctx, f, func(j *store.JobRow) error {
		b.Add(j)
		if seen++; bar != nil && seen%chunk == 0 {
			bar.add(chunk)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b.Summary(), nil
}

// writeFileAtomic writes path through a temporary file renamed over it.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	if err := write(w); err != nil {
		tmp.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
