package parsetime

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/augur-hpc/augur/predictor"
)

// agree reports whether predictor.SlurmTime reads s as Slurm does. Left
// out: Slurm's NO_VAL for "" (Augur takes it as no limit), a leading '-'
// other than -1, limits past 68 years (Slurm's int of seconds wraps), and
// past Augur's century bound.
func agree(t *testing.T, s string) {
	t.Helper()
	want := Minutes(s)
	got, err := predictor.SlurmTime(s)
	switch {
	case s == "" || strings.HasPrefix(s, "-") && s != "-1":
		// A leading '-' is an empty day count to Slurm, which it adds up
		// into nonsense ("-5" is -7199 minutes, "-0" none); Augur refuses it.
		return
	case err == nil && got > math.MaxInt32*time.Second || longNumber(s):
		// Slurm reads each part and sums the seconds in an int, which
		// wraps past 68 years.
	case want == -1: // INFINITE, UNLIMITED
		if err != nil || got != 0 {
			t.Errorf("%q: Slurm reads no limit; Augur %v, %v", s, got, err)
		}
	case want < -1:
		if err == nil {
			t.Errorf("%q: Slurm refuses it; Augur reads %v", s, got)
		}
	case want > 36500*24*60:
		// past Augur's century bound: refused there, read here
	case err != nil:
		t.Errorf("%q: Slurm reads %d minutes; Augur refuses it: %v", s, want, err)
	case got != time.Duration(want)*time.Minute:
		t.Errorf("%q: Slurm reads %d minutes; Augur %v", s, want, got)
	}
}

// longNumber reports whether s holds a number Slurm's int arithmetic may
// wrap on: past 9 digits, a day count past 68 years of seconds, or any
// other part that would as hours.
func longNumber(s string) bool {
	days, _, hasDays := strings.Cut(s, "-")
	for i, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		f = strings.TrimLeft(f, "0")
		if len(f) > 9 {
			return true
		}
		n, _ := strconv.Atoi(f)
		if hasDays && i == 0 && days != "" && int64(n)*86400 > math.MaxInt32 || int64(n)*3600 > math.MaxInt32 {
			return true
		}
	}
	return false
}

// TestSlurmTimeIsSlurms: every form sbatch's --time takes, and the near
// misses, read as libslurm reads them.
func TestSlurmTimeIsSlurms(t *testing.T) {
	for _, s := range []string{"90", "0", "1:30", "0:30", "1:60", "04:00:00", "00:00:30", "1:99:99", "2-00", "1-12:30",
		"01-02:03:04", "1-", "0-", "0-12", "0-1:30", "1-24", "36500-00:00:00", "UNLIMITED", "INFINITE", "unlimited",
		"1:2:3:4", "x", "-5", "1--2", "4h", "+5", " 5", "5 ", "1:", ":30", "1::", "-", "1-:30", "1-2-3", "1-1:", "1.5", "1-1:1:1"} {
		agree(t, s)
	}
}

func FuzzSlurmTimeIsSlurms(f *testing.F) {
	for _, s := range []string{"90", "1-12:30", "04:00:00", "1-", "0-12", "UNLIMITED", "1:99:99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) || len(s) > 64 {
			return // a C string ends at NUL; sbatch's values are short
		}
		agree(t, s)
	})
}
