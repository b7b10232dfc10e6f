package report

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrSyntax is wrapped by the parsers of sacct-style arguments.
var ErrSyntax = errors.New("syntax error")

// GPUHours prints GPU-hours to a tenth, or, below a tenth, to two
// significant digits, so that a few minutes of one GPU do not read as none.
func GPUHours(h float64) string {
	if h > 0 && h < 0.1 {
		return strconv.FormatFloat(h, 'g', 2, 64)
	}
	return strconv.FormatFloat(h, 'f', 1, 64)
}

// Elapsed formats seconds as sacct does: [D-]HH:MM:SS.
func Elapsed(sec float64) string {
	if sec < 0 || math.IsNaN(sec) {
		sec = 0
	}
	s := int64(math.Round(sec))
	d, h, m := s/86400, s/3600%24, s/60%60
	s %= 60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// Date formats t as sacct does (YYYY-MM-DDTHH:MM:SS in loc); a zero time is
// "Unknown".
func Date(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "Unknown"
	}
	return t.In(loc).Format("2006-01-02T15:04:05")
}

// unitLetters are sacct's --units, from KiB up; the base unit of memory
// values here is MiB.
const unitLetters = "KMGTP"

// ParseUnits checks sacct's --units value: one of K, M, G, T, P, or "" for
// automatic.
func ParseUnits(s string) (byte, error) {
	switch {
	case s == "":
		return 0, nil
	case len(s) == 1 && strings.Contains(unitLetters, strings.ToUpper(s)):
		return strings.ToUpper(s)[0], nil
	}
	return 0, fmt.Errorf("%w: --units=%q: want one of K, M, G, T, P", ErrSyntax, s)
}

// Memory formats MiB with a K/M/G/T/P suffix as sacct's convert_num_unit
// does: in unit when one is given, else in the largest unit that keeps the
// number at 1024 or more of the next; whole numbers without decimals, others
// with two. Zero is "0".
func Memory(mib float64, unit byte) string {
	if mib <= 0 || math.IsNaN(mib) {
		return "0"
	}
	v, i := mib, 1 // index of M in unitLetters
	if unit != 0 {
		want := strings.IndexByte(unitLetters, unit)
		for ; i < want; i++ {
			v /= 1024
		}
		for ; i > want; i-- {
			v *= 1024
		}
	} else {
		for v >= 1024 && i < len(unitLetters)-1 {
			v /= 1024
			i++
		}
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f%c", v, unitLetters[i])
	}
	return fmt.Sprintf("%.2f%c", v, unitLetters[i])
}

// ParseTime reads a time in one of sacct's -S/-E formats, relative to now
// in loc:
//
//	HH:MM[:SS][AM|PM]              today
//	MMDD[YY][-HH:MM[:SS]]
//	MM.DD[.YY][-HH:MM[:SS]]
//	MM/DD[/YY][-HH:MM[:SS]]
//	YYYY-MM-DD[THH:MM[:SS]]
//	today, midnight, noon, elevenses, fika, teatime, tomorrow
//	now[{+|-}count[seconds|minutes|hours|days|weeks]]
//
// A date without a year is the latest such date not after now (sacct's
// rule for -S: a start time is in the past).
func ParseTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	in := strings.TrimSpace(s)
	now = now.In(loc)
	bad := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("%w: time %q: want e.g. 2025-03-01T12:00, 03/01, 0301, 12:00, now-2days", ErrSyntax, s)
	}
	if in == "" {
		return bad()
	}
	low := strings.ToLower(in)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	switch low {
	case "today", "midnight":
		return day, nil
	case "tomorrow":
		return day.AddDate(0, 0, 1), nil
	case "noon":
		return day.Add(12 * time.Hour), nil
	case "elevenses":
		return day.Add(11 * time.Hour), nil
	case "fika":
		return day.Add(15 * time.Hour), nil
	case "teatime":
		return day.Add(16 * time.Hour), nil
	}
	if strings.HasPrefix(low, "now") {
		rest := low[3:]
		if rest == "" {
			return now, nil
		}
		sign := time.Duration(1)
		switch rest[0] {
		case '+':
		case '-':
			sign = -1
		default:
			return bad()
		}
		rest = rest[1:]
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i > 9 {
			return bad()
		}
		n, _ := strconv.Atoi(rest[:i])
		unit := time.Second
		switch u := rest[i:]; {
		case u == "" || strings.HasPrefix("seconds", u):
		case strings.HasPrefix("minutes", u):
			unit = time.Minute
		case strings.HasPrefix("hours", u):
			unit = time.Hour
		case strings.HasPrefix("days", u):
			unit = 24 * time.Hour
		case strings.HasPrefix("weeks", u):
			unit = 7 * 24 * time.Hour
		default:
			return bad()
		}
		return now.Add(sign * time.Duration(n) * unit), nil
	}
	// YYYY-MM-DD[THH:MM[:SS]]
	if len(in) >= 10 && in[4] == '-' && in[7] == '-' {
		for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
			if t, err := time.ParseInLocation(layout, in, loc); err == nil {
				if t.Year() < 1970 {
					break // no job ran before the epoch (and year 1 is Go's zero time)
				}
				return t, nil
			}
		}
		return bad()
	}
	date, clock, hasClock := strings.Cut(in, "-")
	if !hasClock && strings.Contains(in, ":") {
		// HH:MM[:SS][AM|PM] alone.
		h, m, sec, ok := parseClock(in)
		if !ok {
			return bad()
		}
		return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second), nil
	}
	var parts []string
	switch {
	case strings.Contains(date, "."):
		parts = strings.Split(date, ".")
	case strings.Contains(date, "/"):
		parts = strings.Split(date, "/")
	case len(date) == 4 || len(date) == 6:
		for i := 0; i < len(date); i += 2 {
			parts = append(parts, date[i:i+2])
		}
	}
	if len(parts) < 2 || len(parts) > 3 {
		return bad()
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		if len(p) == 0 || len(p) > 2 && !(i == 2 && len(p) == 4) {
			return bad()
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return bad()
		}
		nums[i] = n
	}
	mon, dd := nums[0], nums[1]
	if mon < 1 || mon > 12 || dd < 1 || dd > 31 {
		return bad()
	}
	var h, m, sec int
	if hasClock {
		var ok bool
		if h, m, sec, ok = parseClock(clock); !ok {
			return bad()
		}
	}
	year := now.Year()
	if len(nums) == 3 {
		year = nums[2]
		if year < 100 {
			year += 2000
		}
	}
	t := time.Date(year, time.Month(mon), dd, h, m, sec, 0, loc)
	if t.Month() != time.Month(mon) {
		return bad() // 02/31
	}
	if len(nums) == 2 && t.After(now) {
		t = t.AddDate(-1, 0, 0)
	}
	return t, nil
}

// parseClock reads HH:MM[:SS][AM|PM].
func parseClock(s string) (h, m, sec int, ok bool) {
	low := strings.ToLower(s)
	pm, am := strings.HasSuffix(low, "pm"), strings.HasSuffix(low, "am")
	if pm || am {
		low = low[:len(low)-2]
	}
	f := strings.Split(low, ":")
	if len(f) < 2 || len(f) > 3 {
		return 0, 0, 0, false
	}
	var v [3]int
	for i, p := range f {
		if len(p) == 0 || len(p) > 2 {
			return 0, 0, 0, false
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, 0, 0, false
		}
		v[i] = n
	}
	h, m, sec = v[0], v[1], v[2]
	if am || pm {
		if h < 1 || h > 12 {
			return 0, 0, 0, false
		}
		h %= 12
		if pm {
			h += 12
		}
	}
	if h > 23 || m > 59 || sec > 59 {
		return 0, 0, 0, false
	}
	return h, m, sec, true
}

// stateCodes are sacct's -s abbreviations of the job states.
var stateCodes = map[string]string{
	"BF": "BOOT_FAIL", "CA": "CANCELLED", "CD": "COMPLETED", "DL": "DEADLINE", "F": "FAILED",
	"NF": "NODE_FAIL", "OOM": "OUT_OF_MEMORY", "PD": "PENDING", "PR": "PREEMPTED", "R": "RUNNING",
	"RQ": "REQUEUED", "RS": "RESIZING", "RV": "REVOKED", "S": "SUSPENDED", "TO": "TIMEOUT",
}

// ParseStates reads sacct's -s list (comma separated, full names or
// abbreviations, any case) into full state names.
func ParseStates(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.ToUpper(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		if full, ok := stateCodes[f]; ok {
			out = append(out, full)
			continue
		}
		known := false
		for _, full := range stateCodes {
			if full == f {
				known = true
				break
			}
		}
		if !known {
			return nil, fmt.Errorf("%w: state %q: want e.g. CD, F, OOM, TO, CA or COMPLETED", ErrSyntax, f)
		}
		out = append(out, f)
	}
	return out, nil
}
