package config

import (
	"strings"
	"testing"
)

func TestBalanceValidation(t *testing.T) {
	cases := map[string]struct {
		edit    func(*Balance)
		wantKey string
	}{
		"clear over slow": {func(b *Balance) { b.ClearRatio = 1.5 }, "balance.clear_ratio"},
		"slow of 1":       {func(b *Balance) { b.SlowRatio, b.ClearRatio = 1, 1 }, "balance.slow_ratio"},
		"tiny window":     {func(b *Balance) { b.Window = 1 }, "balance.window"},
		"no jobs":         {func(b *Balance) { b.MaxJobs = 0 }, "balance.max_jobs"},
		"gain over 1":     {func(b *Balance) { b.MinGain = 2 }, "balance.min_gain"},
		"persist 0":       {func(b *Balance) { b.Persist = 0 }, "balance.persist"},
		"idle 1s":         {func(b *Balance) { b.JobIdle = 1e9 }, "balance.job_idle"},
		"owner cache 0":   {func(b *Balance) { b.OwnerCache = 0 }, "balance.owner_cache"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Default()
			tc.edit(&c.Balance)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.wantKey) {
				t.Errorf("Validate = %v; want an error naming %s", err, tc.wantKey)
			}
		})
	}
	c := Default()
	c.Balance.Listen = ":6832"
	if err := c.Validate(); err != nil {
		t.Errorf("listen set: %v", err)
	}
}
