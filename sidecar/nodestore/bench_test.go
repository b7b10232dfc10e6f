package nodestore

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkAddSamples measures the store's insert rate: rounds of 8 samples
// (one job per GPU of an 8-GPU node, one transaction per round, as the agent
// writes) and large batches (a backlog). The target is 50,000 samples/s.
func BenchmarkAddSamples(b *testing.B) {
	for _, per := range []int{8, 1000} {
		b.Run(fmt.Sprintf("round_of_%d", per), func(b *testing.B) {
			ctx := context.Background()
			s := open(b)
			for g := 0; g < 8; g++ {
				startJob(b, s, uint64(g+1), g)
			}
			batch := make([]Sample, per)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ts := t0.Add(time.Duration(i) * time.Second)
				for k := range batch {
					batch[k] = Sample{JobID: uint64(k%8 + 1), GPU: k % 8, TS: ts.Add(time.Duration(k/8) * time.Millisecond),
						DurS: 1, MemMiB: float64(k), SMUtil: 50, MemUtil: 20, PowerW: 250}
				}
				if err := s.AddSamples(ctx, nil, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*per)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
