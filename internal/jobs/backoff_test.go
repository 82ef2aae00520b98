package jobs_test

import (
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/jobs"
)

// TestBackoffCountsFromTheEndOfTheAttempt: an attempt that ran longer than
// the delay is retried a delay after it ended, never in the past.
func TestBackoffCountsFromTheEndOfTheAttempt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b := jobs.Backoff{Time: clock.NewFake(now)}
	for attempt := 1; attempt <= 12; attempt++ {
		started := now.Add(-90 * time.Second) // a 90 s attempt (a partner timing out)
		next := b.NextRetry(&rivertype.JobRow{Attempt: attempt, AttemptedAt: &started})
		want := min(2*time.Second<<(attempt-1), time.Hour) // before jitter
		lo, hi := now.Add(time.Duration(float64(want)*0.8)), now.Add(time.Duration(float64(want)*1.2))
		if next.Before(lo) || next.After(hi) {
			t.Errorf("attempt %d: next retry at %s, want within [%s, %s]", attempt, next, lo, hi)
		}
	}
}

// TestBackoffDelayGrowsAndCaps: doubling from 2 s, capped at an hour, with
// at most ±20 % jitter.
func TestBackoffDelayGrowsAndCaps(t *testing.T) {
	t.Parallel()
	for attempt, base := range map[int]time.Duration{1: 2 * time.Second, 2: 4 * time.Second, 5: 32 * time.Second, 30: time.Hour} {
		for range 50 {
			d := jobs.BackoffDelay(attempt)
			if d < time.Duration(float64(base)*0.8) || d > time.Duration(float64(base)*1.2) {
				t.Fatalf("attempt %d: delay %s outside %s ±20%%", attempt, d, base)
			}
		}
	}
}
