package daemon

import "testing"

// TestRunAsWarning: augurd as root with a non-root slurm_user is told to run
// as the SlurmUser; as the SlurmUser, or with slurm_user root, it is not.
func TestRunAsWarning(t *testing.T) {
	cases := map[string]struct {
		euid      uint32
		slurmUser string
		warn      bool
	}{
		"root, slurm_user slurm":    {euid: 0, slurmUser: "slurm", warn: true},
		"root, slurm_user 64030":    {euid: 0, slurmUser: "64030", warn: true},
		"root, slurm_user root":     {euid: 0, slurmUser: "root", warn: false},
		"root, slurm_user 0":        {euid: 0, slurmUser: "0", warn: false},
		"slurm, slurm_user slurm":   {euid: 64030, slurmUser: "slurm", warn: false},
		"other uid, any slurm_user": {euid: 1000, slurmUser: "slurm", warn: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := runAsWarning(tc.euid, tc.slurmUser); (got != "") != tc.warn {
				t.Errorf("runAsWarning(%d, %q) = %q, want a warning: %v", tc.euid, tc.slurmUser, got, tc.warn)
			}
		})
	}
}
