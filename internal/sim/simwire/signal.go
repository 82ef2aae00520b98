package simwire

import (
	"context"
	"sync"
)

// Signal wakes the goroutines waiting for a simulator's (or a recorder's)
// state to change: the owner calls Notify after each change, a waiter
// calls Wait with its condition. The zero value is ready to use.
type Signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// Notify wakes every goroutine in Wait, which checks its condition again.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// Wait returns nil once done reports true, checking it now and after every
// Notify, or ctx's error when ctx ends first. done runs without the
// signal's lock, so it may take the owner's.
func (s *Signal) Wait(ctx context.Context, done func() bool) error {
	for {
		ch := s.next()
		if done() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// next is the channel the next Notify closes.
func (s *Signal) next() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}
