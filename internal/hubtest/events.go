package hubtest

import (
	"context"
	"sync"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Recorder is an event.Emitter that keeps the events of committed
// transactions, for tests.
type Recorder struct {
	mu     sync.Mutex
	events []event.Event
	notify chan struct{}
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{notify: make(chan struct{})} }

// Emit implements event.Emitter: the event is kept once tx commits.
func (r *Recorder) Emit(ctx context.Context, tx *store.Tx, e event.Event) error {
	tx.AfterCommit(func() {
		r.mu.Lock()
		r.events = append(r.events, e)
		close(r.notify)
		r.notify = make(chan struct{})
		r.mu.Unlock()
	})
	return nil
}

// Events returns the recorded events named name ("" for all), in order.
func (r *Recorder) Events(name string) []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event.Event
	for _, e := range r.events {
		if name == "" || e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// Wait waits until at least n events named name were recorded, or ctx ends;
// it returns them.
func (r *Recorder) Wait(ctx context.Context, name string, n int) ([]event.Event, error) {
	for {
		r.mu.Lock()
		ch := r.notify
		r.mu.Unlock()
		if got := r.Events(name); len(got) >= n {
			return got, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return r.Events(name), ctx.Err()
		}
	}
}
