// Package predictor turns what is known about a job at submission (its batch
// script, its request, the history of its earlier runs) into a Prediction of
// its peak GPU memory and runtime, each with a median and an upper quantile
// and the source it came from.
//
//	batch script ──ParseScript──> Script{#SBATCH options, Signature}
//	TRES strings ──GPURequests──> []GPURequest
//	Job + []Outcome (same user, same Signature) ──Predictor.Predict──> Prediction
//
// The package is pure: no I/O, no clock, no daemon dependencies (a test
// checks its imports). augurd and `augur simulate` call the same code.
package predictor
