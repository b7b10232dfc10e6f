// Package e2e holds Augur's end-to-end tests on a real Slurm: a slurmctld
// that loads bin/test/job_submit_augur.so, a slurmd with stand-in GPUs of two
// types, munge, and augurd, all started by tests/cluster/up.sh as root.
//
//	go test -tags e2e ./tests/e2e/   (make e2e builds first and runs this)
//
// The load and fault tests (zz_*_test.go) run last on purpose: they leave
// thousands of finished jobs in slurmctld for MinJobAge, which slows every
// squeue --json the other tests make.
//
// Without the e2e build tag the package is empty, so `go test ./...` stays a
// unit-test run that needs neither root nor Slurm.
package e2e
