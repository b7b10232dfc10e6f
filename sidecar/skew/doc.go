// Package skew finds the slow ranks of a distributed training job and plans
// how to even them out. It is pure: it reads numbers the job and its GPUs
// reported and returns numbers; it opens no socket, file or database and
// reads no clock, so augurd (sidecar/balance), `augur balance --simulate`
// and the tests all run the same code.
//
//	per-rank step times ─┐
//	(the job, every N    ├─> Tracker.Observe ─> Tracker.Assess ─> Assessment (slow ranks, slowdown,
//	 steps)              │     sliding window     hysteresis        imbalance, likely cause)
//	per-GPU telemetry ───┘                                               │
//	(SM/mem util, power, clocks, memory)                                 v
//	                                    Replan (data parallel: batch shares ∝ throughput,
//	                                            largest remainder, every rank ≥ 1 micro-batch)
//	per-layer costs + stage times ───>  PipelineSplit (contiguous layers per stage, exact DP
//	                                                   minimising the slowest stage)
//
// Step times must be the rank's own compute time for its share of the step
// (forward and backward up to the gradient exchange), not the wall time of
// the whole step: in synchronous data parallelism every rank waits for the
// slowest, so whole-step times are all equal and show no skew.
package skew
