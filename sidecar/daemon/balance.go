package daemon

import (
	"github.com/augur-hpc/augur/sidecar/balance"
	"github.com/augur-hpc/augur/sidecar/metrics"
)

// balanceCounters counts the rebalancing endpoint's work in the metrics.
type balanceCounters struct{ m *metrics.Metrics }

var _ balance.Counters = balanceCounters{}

func (b balanceCounters) Request(e balance.Endpoint, r balance.Result) {
	b.m.BalanceRequests.WithLabelValues(string(e), string(r)).Inc()
}

func (b balanceCounters) Assessed(maxSlowdown float64) { b.m.BalanceSlowdown.Observe(maxSlowdown) }

func (b balanceCounters) PlanChanged(gain float64) {
	b.m.BalancePlans.Inc()
	b.m.BalanceGain.Observe(gain)
}

func (b balanceCounters) Jobs(followed, skewed int) {
	b.m.BalanceJobs.WithLabelValues("followed").Set(float64(followed))
	b.m.BalanceJobs.WithLabelValues("skewed").Set(float64(skewed))
}
