package webhook

import (
	"testing"
	"time"
)

// TestDelayFollowsTheSchedule: after the n-th consecutive failure the next
// attempt waits the schedule's n-th delay, ±10 %, and the last delay
// repeats.
func TestDelayFollowsTheSchedule(t *testing.T) {
	t.Parallel()
	s := &Service{cfg: Config{Schedule: DefaultSchedule()}}
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	for i, w := range want {
		failures := i + 1
		seen := map[time.Duration]bool{}
		for range 50 {
			d := s.delay(failures)
			if d < w-w/10 || d > w+w/10 {
				t.Fatalf("after %d failures: %s, want %s ± 10%%", failures, d, w)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Fatalf("after %d failures the delay has no jitter", failures)
		}
	}
	if n := len(DefaultSchedule()); n != 8 {
		t.Fatalf("a delivery gets %d attempts, want 8", n)
	}
}
