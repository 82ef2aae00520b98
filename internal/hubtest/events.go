package hubtest

import (
	"context"
	"sync"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Recorder is an event.Emitter that keeps the events of committed
// transactions, for tests.
type Recorder struct {
	mu      sync.Mutex
	events  []event.Event
	changed simwire.Signal
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{} }

// Emit implements event.Emitter: the event is kept once tx commits.
func (r *Recorder) Emit(ctx context.Context, tx *store.Tx, e event.Event) error {
	tx.AfterCommit(func() {
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
		r.changed.Notify()
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
	var got []event.Event
	if err := r.changed.Wait(ctx, func() bool { got = r.Events(name); return len(got) >= n }); err != nil {
		return r.Events(name), err
	}
	return got, nil
}
