package core

import (
	"strings"
	"testing"
	"time"
)

var idleSet = IdleSettings{ThresholdPct: 5, Grace: 10 * time.Minute, Window: 30 * time.Minute, WarnDelay: 10 * time.Minute}

// feed observes one-minute periods of the given busiest utilisation, the
// first ending one minute after t0+offset.
func feed(t IdleTrack, s IdleSettings, start, from time.Time, utils ...float64) (IdleTrack, time.Time) {
	at := from
	for _, u := range utils {
		at = at.Add(time.Minute)
		t = t.Observe(s, start, at, time.Minute, u, 2)
	}
	return t, at
}

func repeat(u float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = u
	}
	return out
}

func TestIdleGraceIsNotJudged(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	tr, _ := feed(IdleTrack{}, idleSet, t0, t0, repeat(0, 10)...)
	if !tr.IdleSince.IsZero() {
		t.Fatalf("idle during the grace: since %s", tr.IdleSince)
	}
	tr, at := feed(tr, idleSet, t0, t0.Add(10*time.Minute), repeat(0, 29)...)
	if got := tr.IdleFor(); got != 29*time.Minute {
		t.Fatalf("IdleFor = %s, want 29m (from the end of the grace)", got)
	}
	if d := DecideIdle(IdleInput{Track: tr, Settings: idleSet, Now: at}); d.Action != IdleNone {
		t.Fatalf("acted before the window: %+v", d)
	}
	tr, at = feed(tr, idleSet, t0, at, 0)
	d := DecideIdle(IdleInput{Track: tr, Settings: idleSet, Now: at})
	if d.Action != IdleFlag || !strings.Contains(d.Reason, "all 2 GPUs under 5% SM utilisation for 30m") {
		t.Fatalf("after the window: %+v", d)
	}
}

func TestIdleBusyPeriodEndsTheRun(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	utils := append(repeat(0, 35), 40) // idle past grace+window's start, then busy
	tr, at := feed(IdleTrack{}, idleSet, t0, t0, utils...)
	if !tr.IdleSince.IsZero() {
		t.Fatal("a busy period did not end the idle run")
	}
	if d := DecideIdle(IdleInput{Track: tr, Settings: idleSet, Now: at}); d.Action != IdleNone {
		t.Fatalf("a busy job was acted on: %+v", d)
	}
	// Low but not idle: at the threshold counts as busy.
	tr, at = feed(tr, idleSet, t0, at, repeat(5, 60)...)
	if d := DecideIdle(IdleInput{Track: tr, Settings: idleSet, Now: at}); d.Action != IdleNone {
		t.Fatalf("a job at the threshold was acted on: %+v", d)
	}
}

func TestIdleWarnThenCancel(t *testing.T) {
	s := idleSet
	s.Cancel = true
	t0 := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	tr, at := feed(IdleTrack{}, s, t0, t0, repeat(1, 40)...)
	d := DecideIdle(IdleInput{Track: tr, Settings: s, Now: at})
	if d.Action != IdleWarn || !d.CancelAt.Equal(at.Add(10*time.Minute)) || !strings.Contains(d.Reason, IdleOptOut) {
		t.Fatalf("warning: %+v", d)
	}
	tr.FlaggedAt, tr.WarnedAt = at, at
	if d := DecideIdle(IdleInput{Track: tr, Settings: s, Now: at.Add(5 * time.Minute)}); d.Action != IdleNone {
		t.Fatalf("cancelled before the delay: %+v", d)
	}
	// The delay is over but no figure came since the warning: wait.
	if d := DecideIdle(IdleInput{Track: tr, Settings: s, Now: at.Add(11 * time.Minute)}); d.Action != IdleNone {
		t.Fatalf("cancelled on figures older than the warning: %+v", d)
	}
	tr2, at2 := feed(tr, s, t0, at, repeat(0, 10)...)
	if d := DecideIdle(IdleInput{Track: tr2, Settings: s, Now: at2}); d.Action != IdleCancel {
		t.Fatalf("still idle after the delay: %+v", d)
	}
	// Busy again during the warning: no cancel, and flag and warning cleared.
	tr3, at3 := feed(tr, s, t0, at, append(repeat(0, 5), 50, 0, 0, 0, 0)...)
	if d := DecideIdle(IdleInput{Track: tr3, Settings: s, Now: at3}); d.Action != IdleNone || !tr3.WarnedAt.IsZero() {
		t.Fatalf("a job busy again was cancelled: %+v %+v", d, tr3)
	}
}

func TestIdleOptOutExemptAndStale(t *testing.T) {
	s := idleSet
	s.Cancel, s.ExemptPartitions = true, []string{"interactive"}
	t0 := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	tr, at := feed(IdleTrack{}, s, t0, t0, repeat(0, 45)...)
	d := DecideIdle(IdleInput{Track: tr, Settings: s, Now: at, Comment: "x " + IdleOptOut})
	if d.Action != IdleFlag || !strings.Contains(d.Reason, "opted out") {
		t.Fatalf("opted-out job: %+v", d)
	}
	tr.FlaggedAt = at
	tr, at = feed(tr, s, t0, at, repeat(0, 30)...)
	if d := DecideIdle(IdleInput{Track: tr, Settings: s, Now: at, Comment: IdleOptOut}); d.Action != IdleNone {
		t.Fatalf("opted-out job warned or cancelled: %+v", d)
	}
	if d := DecideIdle(IdleInput{Track: tr, Settings: s, Now: at, Partition: "interactive"}); d.Action != IdleNone {
		t.Fatalf("exempt partition judged: %+v", d)
	}
	if d := DecideIdle(IdleInput{Track: tr, Settings: s, Now: at.Add(time.Hour), Stale: 3 * time.Minute}); d.Action != IdleNone {
		t.Fatalf("acted on stale figures: %+v", d)
	}
}

func TestIdleOutOfOrderAndStart(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	tr, at := feed(IdleTrack{}, idleSet, t0, t0.Add(20*time.Minute), repeat(0, 5)...)
	old := tr.Observe(idleSet, t0, at.Add(-10*time.Minute), time.Minute, 90, 2)
	if old.IdleSince != tr.IdleSince || old.LastSeen != tr.LastSeen {
		t.Fatal("an older period changed the track")
	}
	// A second node that recorded the job earlier moves its start back.
	early := tr.Observe(idleSet, t0.Add(-time.Minute), at.Add(time.Minute), time.Minute, 0, 2)
	if !early.Start.Equal(t0.Add(-time.Minute)) {
		t.Fatalf("start = %s", early.Start)
	}
}

func TestRoundDur(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second: "45s", 50 * time.Second: "50s", 30 * time.Minute: "30m",
		time.Hour: "1h", 90 * time.Minute: "1h30m", 150*time.Minute + 20*time.Second: "2h30m",
	} {
		if got := roundDur(d); got != want {
			t.Errorf("roundDur(%s) = %q, want %q", d, got, want)
		}
	}
}
