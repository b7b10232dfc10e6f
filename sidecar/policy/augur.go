package policy

import "math"

// AugurName is Augur's own policy's name.
const AugurName = "augur"

// Augur ranks jobs by expected remaining service given what they have
// already received, using the whole predicted distribution rather than its
// median. A prediction (median P50, upper quantile Hi taken as the 95th
// percentile) defines a lognormal runtime; a job that has run for d seconds
// is expected to need E[S-d | S>d] more. For a confident prediction that is
// SRPT; a job that outlives its upper quantile is given a wide spread, and
// its expectation grows with its attained service, so wrong predictions degrade towards LAS instead of
// blocking the queue. Jobs without a prediction are treated the same way
// with a wide prior around DefaultService.
//
// A running job's key is lowered by the restart cost it would pay if
// preempted, so a preemption must gain more than it costs. On heterogeneous
// clusters remaining service is counted at the job's best speed, and the
// allocator matches jobs to types by 1/(expected remaining time there), moving
// running jobs where that gains (see hetero).
type Augur struct {
	p Params
	// Area ranks by remaining GPU service (time x GPUs) when set, by
	// remaining time otherwise (the default: on Philly, ranking by time
	// gave 25k s average JCT against 31k s by area).
	Area bool
	a    allocator
}

var _ Policy = (*Augur)(nil)

// NewAugur returns Augur's policy.
func NewAugur(p Params) *Augur { return &Augur{p: p} }

func init() { register(AugurName, func(p Params) Policy { return NewAugur(p) }) }

// Name implements Policy.
func (*Augur) Name() string { return AugurName }

// z95 is the standard normal's 95th percentile.
const z95 = 1.6448536269514722

// ExpectedRemaining returns E[S-d | S>d] for a lognormal runtime S with the
// given median and 95th percentile, after d seconds of service.
func ExpectedRemaining(p50, hi, d float64) float64 {
	sigma := 1.5 // no spread given: assume a wide one
	if hi > 0 && p50 > 0 {
		sigma = math.Log(max(hi, p50)/p50) / z95
	}
	if d > hi && hi > 0 {
		// Past the upper quantile the prediction was wrong: do not trust
		// its narrow spread (which would call the job nearly done).
		sigma = max(sigma, 1)
	}
	sigma = max(sigma, 0.02)
	mu := math.Log(p50)
	if d <= 0 {
		return math.Exp(mu + sigma*sigma/2)
	}
	ld := math.Log(d)
	surv := normCDF((mu - ld) / sigma)
	if surv < 1e-9 {
		// Far past the prediction: the lognormal's mean residual life
		// grows roughly as d*sigma^2/(ln d - mu).
		return max(d*sigma*sigma/(ld-mu), 1)
	}
	partial := math.Exp(mu+sigma*sigma/2) * normCDF((mu+sigma*sigma-ld)/sigma)
	return max(partial/surv-d, 1)
}

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// remaining is j's expected remaining time at its best speed (times its
// GPUs with Area).
func (a *Augur) remaining(j *Job) float64 {
	p50, hi := j.Runtime.P50, j.Runtime.Hi
	if p50 <= 0 {
		p50, hi = DefaultService, 0
	}
	rem := ExpectedRemaining(p50, hi, j.Done) / j.BestRate()
	if a.Area {
		rem *= float64(j.GPUs)
	}
	return rem
}

func (a *Augur) add(j *Job) {
	rem := a.remaining(j)
	key := rem
	if j.Running {
		key -= a.p.RestartCost
		if a.Area {
			key -= a.p.RestartCost * float64(j.GPUs-1)
		}
	}
	a.a.addTimed(j, key, rem)
}

// Schedule implements Policy.
func (a *Augur) Schedule(s *Snapshot) Plan {
	a.a.begin()
	for _, j := range s.Running {
		a.add(j)
	}
	for _, j := range s.Pending {
		a.add(j)
	}
	return a.a.run(s, a.p, true)
}
