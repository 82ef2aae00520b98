package jobs

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/clock"
)

// Backoff is the default retry policy: exponential from 2 s, doubling per
// attempt, capped at one hour, with ±20 % jitter so that many jobs failing on
// one partner do not come back in lockstep. Workers with a schedule of their
// own (webhook deliveries) implement NextRetry.
//
// The delay counts from when the attempt ended, not when it started: an
// attempt that ran longer than the delay (a partner timing out after 30 s)
// would otherwise be scheduled in the past.
type Backoff struct {
	// Time is the queue's clock (nil: the wall clock).
	Time rivertype.TimeGenerator
}

// NextRetry implements river.ClientRetryPolicy.
func (b Backoff) NextRetry(job *rivertype.JobRow) time.Time {
	now := clock.Real{}.Now()
	if b.Time != nil {
		if t := b.Time.NowOrNil(); t != nil {
			now = *t
		}
	}
	if job.AttemptedAt != nil && job.AttemptedAt.After(now) {
		now = *job.AttemptedAt
	}
	return now.Add(BackoffDelay(job.Attempt))
}

// BackoffDelay returns the delay before retry number attempt (1-based).
func BackoffDelay(attempt int) time.Duration {
	base := 2 * time.Second
	d := time.Duration(float64(base) * math.Pow(2, float64(max(attempt-1, 0))))
	if d > time.Hour || d <= 0 {
		d = time.Hour
	}
	return Jitter(d, 0.2)
}

// Jitter returns d moved randomly by up to ±frac of itself.
func Jitter(d time.Duration, frac float64) time.Duration {
	return time.Duration(float64(d) * (1 + frac*(2*rand.Float64()-1)))
}

var _ river.ClientRetryPolicy = Backoff{}

// Stats counts job outcomes by kind, for the metrics endpoint.
type Stats struct {
	mu     sync.Mutex
	counts map[[2]string]int64 // kind, outcome
}

func newStats() *Stats { return &Stats{counts: map[[2]string]int64{}} }

func (s *Stats) add(kind, outcome string) {
	s.mu.Lock()
	s.counts[[2]string{kind, outcome}]++
	s.mu.Unlock()
}

// known adds the zero counters of a job kind, one per outcome, so
// ocpihub_jobs_total has every kind from the start.
func (s *Stats) known(kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled, river.EventKindJobSnoozed} {
		if _, ok := s.counts[[2]string{kind, string(o)}]; !ok {
			s.counts[[2]string{kind, string(o)}] = 0
		}
	}
}

// Each calls fn for every (kind, outcome) counter.
func (s *Stats) Each(fn func(kind, outcome string, n int64)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, n := range s.counts {
		fn(k[0], k[1], n)
	}
}

func (c *Client) countEvents() {
	ch, cancel := c.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled, river.EventKindJobSnoozed)
	defer cancel()
	for ev := range ch {
		if ev == nil || ev.Job == nil {
			continue
		}
		c.stats.add(ev.Job.Kind, string(ev.Kind))
	}
}
