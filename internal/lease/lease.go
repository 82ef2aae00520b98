// Package lease keeps a worker's lease on a queue alive while it works: the
// delivery engine (hub pushes, webhooks) holds leases that a slow delivery
// would otherwise outlive.
package lease

import (
	"context"
	"errors"
	"time"
)

// Keep calls renew every interval until stop is called, so that work slower
// than the lease keeps it. renew runs under a context that outlives ctx's
// cancellation (a request ending does not end the work) and ends with stop;
// failed hears each renewal error other than that ending. stop ends the
// renewals and waits for the one in flight.
func Keep(ctx context.Context, every time.Duration, renew func(context.Context) error, failed func(context.Context, error)) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := renew(ctx); err != nil && !errors.Is(err, context.Canceled) {
				failed(ctx, err)
			}
		}
	}()
	return func() { cancel(); <-done }
}
