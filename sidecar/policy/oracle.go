package policy

// Oracle policies see each job's true service (Job.True): they are the
// lower bounds the predicting policies are measured against, never policies
// augurd runs.
const (
	SJFOracleName  = "sjf-oracle"
	SRTFOracleName = "srtf-oracle"
)

// SJF is non-preemptive shortest job first on true durations: pending jobs
// start shortest first wherever they fit.
type SJF struct {
	p Params
	a allocator
}

// SRTF is preemptive shortest remaining time first on true durations.
type SRTF struct {
	p Params
	a allocator
}

var (
	_ Policy = (*SJF)(nil)
	_ Oracle = (*SJF)(nil)
	_ Policy = (*SRTF)(nil)
	_ Oracle = (*SRTF)(nil)
)

// NewSJF returns the sjf-oracle policy.
func NewSJF(p Params) *SJF { return &SJF{p: p} }

// NewSRTF returns the srtf-oracle policy.
func NewSRTF(p Params) *SRTF { return &SRTF{p: p} }

func init() {
	register(SJFOracleName, func(p Params) Policy { return NewSJF(p) })
	register(SRTFOracleName, func(p Params) Policy { return NewSRTF(p) })
}

// Name implements Policy.
func (*SJF) Name() string { return SJFOracleName }

// UsesTrueDurations implements Oracle.
func (*SJF) UsesTrueDurations() bool { return true }

// Schedule implements Policy.
func (o *SJF) Schedule(s *Snapshot) Plan {
	o.a.begin()
	for _, j := range s.Pending {
		o.a.add(j, j.True/j.BestRate())
	}
	return o.a.run(s, o.p, false)
}

// Name implements Policy.
func (*SRTF) Name() string { return SRTFOracleName }

// UsesTrueDurations implements Oracle.
func (*SRTF) UsesTrueDurations() bool { return true }

// Schedule implements Policy.
func (o *SRTF) Schedule(s *Snapshot) Plan {
	o.a.begin()
	for _, j := range s.Running {
		o.a.addTimed(j, (j.True-j.Done)/j.RateOn(j.Placement.Type), (j.True-j.Done)/j.BestRate())
	}
	for _, j := range s.Pending {
		o.a.addTimed(j, (j.True-j.Done)/j.BestRate(), (j.True-j.Done)/j.BestRate())
	}
	return o.a.run(s, o.p, true)
}
