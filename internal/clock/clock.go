// Package clock gives ocpihub its sense of time. Every component takes a
// Clock; production passes Real, tests pass a *Fake they move by hand.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns the current time in UTC.
func (Real) Now() time.Time { return time.Now().UTC() }

// OrReal returns c, or Real when c is nil: what a component given no clock
// tells the time with.
func OrReal(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}

// Fake is a clock that only moves when told to. It is safe for concurrent use.
// It also satisfies River's time generator, so the job queue shares it.
type Fake struct {
	mu sync.Mutex
	t  time.Time
}

// NewFake returns a fake clock set to t.
func NewFake(t time.Time) *Fake { return &Fake{t: t.UTC()} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

// Add moves the clock forward by d.
func (f *Fake) Add(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
}

// Set moves the clock to t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = t.UTC()
}

// NowOrNil implements River's TimeGenerator: a stubbed time is always
// returned, so River stamps rows with the fake time.
func (f *Fake) NowOrNil() *time.Time {
	t := f.Now()
	return &t
}
