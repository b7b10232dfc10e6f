//go:build augur_testhooks

package main

import (
	"strings"

	"github.com/augur-hpc/augur/slurm-plugin/wire"
)

// testHook panics for a job whose --comment contains "augur-test-panic", so
// the e2e suite can prove that a panic inside the shim leaves slurmctld
// running and the job accepted. Only the test build (bin/test/) has it:
// `make build` never sets the augur_testhooks tag.
func testHook(r *wire.Request) {
	if strings.Contains(r.Comment, "augur-test-panic") {
		panic("augur test hook: forced panic in job_submit")
	}
}
