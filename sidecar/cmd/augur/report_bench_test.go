package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/report"
	"github.com/augur-hpc/augur/sidecar/store"
)

// benchT0 is the synthetic cluster's first submission.
var benchT0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// fillStore makes a store at path with n finished jobs spread over 30 days,
// each with its submission and outcome, plus one refused submission in 50.
// The schema is the store's own (store.Open migrates); the rows are written
// with one INSERT ... SELECT each, since the writer's group commit is built
// for latency, not for a million rows at once.
func fillStore(tb testing.TB, path string, n int) {
	tb.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := st.Close(); err != nil {
		tb.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=OFF")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	span := int64(30 * 24 * time.Hour)
	// i*2654435761 mod 2^32 is a cheap deterministic hash of the row number.
	stmts := []string{
		`INSERT INTO scripts (sha256, size_bytes, compression, body) VALUES (x'00', 10, 'none', x'23210a')`,
		fmt.Sprintf(`
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d),
h(i, r) AS (SELECT i, (i * 2654435761) %% 4294967296 FROM n)
INSERT INTO submissions (token, received_at_ns, submit_uid, user_id, user_name, account, partition_name, qos,
	job_name, script_sha256, signature, request_json, decision_json, action, pred_mem_mib, pred_mem_hi_mib,
	pred_runtime_sec, pred_runtime_hi_sec, pred_source, decision_us, job_id, features_json)
SELECT printf('%%016x', i), %d + (i * %d) / %d, 0, 1000 + r %% 200, 'u' || (r %% 200), 'acct' || (r %% 7),
	CASE r %% 3 WHEN 0 THEN 'gpu' WHEN 1 THEN 'long' ELSE 'debug' END, 'normal', 'job' || (r %% 500), x'00',
	'sig' || (r %% 500), '{}', '{"action":"' || CASE WHEN r %% 50 = 0 THEN 'reject' ELSE 'accept' END || '"}',
	CASE WHEN r %% 50 = 0 THEN 'reject' ELSE 'accept' END,
	1000 + r %% 30000, 1500 + r %% 30000 * 1.3, 60 + r %% 7200, 120 + r %% 7200 * 1.5,
	CASE r %% 4 WHEN 0 THEN 'history' WHEN 1 THEN 'forest' WHEN 2 THEN 'analytic' ELSE 'default' END,
	200, CASE WHEN r %% 50 = 0 THEN NULL ELSE i END, NULL
FROM h`, n, benchT0.UnixNano(), span, n),
		fmt.Sprintf(`
INSERT INTO outcomes (job_id, token, user_id, signature, gpu_type, gpus, peak_gpu_mem_mib, runtime_sec,
	exit_state, ended_at_ns, source, node, started_at_ns, mean_sm_util, energy_j, oom_suspect, finalized,
	received_at_ns, report_json)
SELECT s.job_id, s.token, s.user_id, s.signature, CASE s.job_id %% 2 WHEN 0 THEN 'a100' ELSE 't4' END,
	1 + s.job_id %% 4, s.pred_mem_mib * (0.6 + (s.job_id %% 80) / 100.0), s.pred_runtime_sec * (0.5 + (s.job_id %% 100) / 100.0),
	CASE WHEN s.job_id %% 97 = 0 THEN 'FAILED' WHEN s.job_id %% 41 = 0 THEN 'CANCELLED' WHEN s.job_id %% 53 = 0 THEN 'TIMEOUT' ELSE 'COMPLETED' END,
	s.received_at_ns + (s.job_id %% 600) * 1000000000 + CAST(s.pred_runtime_sec * (0.5 + (s.job_id %% 100) / 100.0) * 1e9 AS INTEGER),
	'node', 'gpu' || (s.job_id %% 16), s.received_at_ns + (s.job_id %% 600) * 1000000000, s.job_id %% 100, 1000 * (s.job_id %% 100),
	s.job_id %% 97 = 0, 'epilog', s.received_at_ns, NULL
FROM submissions s WHERE s.job_id IS NOT NULL`),
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			tb.Fatalf("%v\n%s", err, q)
		}
	}
	if _, err := db.ExecContext(ctx, `ANALYZE`); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkReport1M is augur report over a window holding a million jobs:
// every query, the aggregation, the text and the HTML page. The bar is
// under 5 s per report.
func BenchmarkReport1M(b *testing.B) {
	const n = 1_000_000
	path := filepath.Join(b.TempDir(), "augur.db")
	if keep := os.Getenv("AUGUR_BENCH_DB"); keep != "" {
		path = keep
	}
	start := time.Now()
	if _, err := os.Stat(path); err != nil {
		fillStore(b, path, n)
		b.Logf("filled %d jobs in %s", n, time.Since(start).Round(time.Millisecond))
	}
	ctx := context.Background()
	st, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	o := report.Options{From: benchT0, To: benchT0.Add(31 * 24 * time.Hour), GPUMemMiB: map[string]float64{"a100": 40960, "t4": 15360}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sum, err := buildSummary(ctx, st, o, nil)
		if err != nil {
			b.Fatal(err)
		}
		if sum.Jobs < n*9/10 {
			b.Fatalf("summary of %d jobs, want about %d", sum.Jobs, n)
		}
		if err := report.WriteText(discard{}, sum, time.UTC); err != nil {
			b.Fatal(err)
		}
		if err := report.WriteHTML(discard{}, sum, time.UTC); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N), "s/report")
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
