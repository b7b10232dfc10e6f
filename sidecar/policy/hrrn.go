package policy

// HRRNName is the HRRN policy's name.
const HRRNName = "hrrn"

// HRRN is preemptive highest response ratio next: a job's ratio is
// (time waited + predicted service) / predicted service, so short jobs go
// first but every waiting job's ratio grows until it runs. A running job's
// ratio stops growing; a waiting job that overtakes it by Hysteresis
// preempts it, which ends head-of-line blocking by long jobs.
type HRRN struct {
	p Params
	// Hysteresis is how much higher (as a factor, 1 = twice) a waiting
	// job's ratio must be to preempt a running job.
	Hysteresis float64
	// Tick is how often the ranking is revisited while jobs wait (seconds).
	Tick float64
	a    allocator
}

var _ Policy = (*HRRN)(nil)

// NewHRRN returns HRRN with a hysteresis of 1 and a 5-minute tick.
func NewHRRN(p Params) *HRRN { return &HRRN{p: p, Hysteresis: 1, Tick: 300} }

func init() { register(HRRNName, func(p Params) Policy { return NewHRRN(p) }) }

// Name implements Policy.
func (*HRRN) Name() string { return HRRNName }

// service is the predicted service in seconds at the job's best speed; a
// job without a prediction counts as DefaultService.
func service(j *Job) float64 {
	if j.Runtime.P50 > 0 {
		return max(j.Runtime.P50/j.BestRate(), 1)
	}
	return DefaultService
}

// DefaultService is the service assumed for a job with no prediction
// (seconds).
const DefaultService = 3600

// Schedule implements Policy.
func (h *HRRN) Schedule(s *Snapshot) Plan {
	h.a.begin()
	for _, j := range s.Running {
		sv := service(j)
		wait := j.Started - j.Submit - (j.Attained - (s.Now - j.Started))
		h.a.add(j, -(max(wait, 0)+sv)/sv*(1+h.Hysteresis))
	}
	for _, j := range s.Pending {
		sv := service(j)
		wait := s.Now - j.Submit - j.Attained
		h.a.add(j, -(max(wait, 0)+sv)/sv)
	}
	plan := h.a.run(s, h.p, true)
	if len(s.Pending) > len(plan.Start) && h.Tick > 0 {
		h.a.wake(s.Now + h.Tick)
		plan.Wake = h.a.plan.Wake
	}
	return plan
}
