// Package trace reads the public GPU-cluster job traces that `augur
// simulate` replays: Microsoft Philly (the Sia artifact's CSV), Gavel's
// heterogeneous workloads (tab-separated, with per-GPU-type throughputs)
// and Tiresias' simulator inputs.
//
//	philly.csv ──ParsePhilly──┐
//	*.trace    ──ParseGavel───┼──> []Job ──> sim.FromTrace ──> sim.Run
//	*.csv      ──ParseTiresias┘
//	simulation_throughputs.json ──ParseThroughputs──> Throughputs
//
// Parsers read only what they are given (an io.Reader), reject malformed
// rows with the line number, and never panic (each has a fuzz test).
package trace
