package store_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
)

// benchScripts are a handful of distinct ~2 KiB batch scripts, as a cluster's
// users resubmit the same few scripts over and over.
func benchScripts(n int) []string {
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		fmt.Fprintf(&b, "#!/bin/bash\n#SBATCH --job-name=exp%d\n#SBATCH --gres=gpu:a100:%d\n#SBATCH --time=04:00:00\n", i, 1+i%4)
		for j := 0; b.Len() < 2<<10; j++ {
			fmt.Fprintf(&b, "srun python train.py --config configs/exp%d.yaml --seed %d --epochs 90\n", i, j)
		}
		out[i] = b.String()
	}
	return out
}

// BenchmarkRecordParallel measures Record throughput with group commit, at
// one caller per CPU and at many callers (augurd serves many shims at once).
func BenchmarkRecordParallel(b *testing.B) {
	scripts := benchScripts(8)
	for _, perCPU := range []int{1, 32} {
		b.Run(fmt.Sprintf("callers_per_cpu=%d", perCPU), func(b *testing.B) {
			s := openStore(b, dbPath(b), store.Options{})
			var next atomic.Int64
			b.SetParallelism(perCPU)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					n := int(next.Add(1))
					sub := newSub(token(n)).Script(scripts[n%len(scripts)]).At(time.Duration(n) * time.Millisecond).Obj()
					if err := s.Record(ctx, sub); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
		})
	}
}

// BenchmarkHistory measures the per-submission history lookup on a table of
// 100,000 outcomes: 1,000 users with 10 signatures each.
func BenchmarkHistory(b *testing.B) {
	const users, sigs, perKey = 1000, 10, 10
	s := openStore(b, dbPath(b), store.Options{})
	var wg sync.WaitGroup
	for u := range users {
		wg.Go(func() {
			for i := range sigs * perKey {
				id := uint64(u*sigs*perKey + i + 1)
				o := newOutcome(id).User(uint32(1000 + u)).Sig(fmt.Sprintf("sig-%d", i%sigs)).EndedAt(time.Duration(id) * time.Second).Obj()
				if err := s.AddOutcome(ctx, o); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 0))
		for pb.Next() {
			u, sig := r.IntN(users), r.IntN(sigs)
			got, err := s.History(ctx, uint32(1000+u), fmt.Sprintf("sig-%d", sig), 20)
			if err != nil || len(got) != perKey {
				b.Errorf("History = %d rows, %v; want %d rows", len(got), err, perKey)
				return
			}
		}
	})
}
