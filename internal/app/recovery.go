package app

import (
	"context"
	"errors"
	"time"
)

// RecoverEvery is how often a serving hub looks for leased queues whose
// holder died (hub pushes, webhooks) and for jobs a dead process was
// working (jobs.Client.Recover), and starts them again. It runs in
// every process, not as a periodic job: after a kill the job queue's
// leader is the dead process until its leadership runs out (about 15 s),
// and the queues must move before that.
const RecoverEvery = 2 * time.Second

// startRecovery runs the queues' recovery at once (a restart reclaims the
// leases of its dead predecessor first thing) and then every RecoverEvery,
// until Close.
func (a *App) startRecovery() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	a.stopRecover = func() { cancel(); <-done }
	go func() {
		defer close(done)
		t := time.NewTicker(RecoverEvery)
		defer t.Stop()
		for {
			a.recoverQueues(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

func (a *App) recoverQueues(ctx context.Context) {
	if _, err := a.Hub.Recover(ctx); err != nil && !errors.Is(err, context.Canceled) {
		a.Logger.WarnContext(ctx, "push queue recovery failed", "error", err)
	}
	if _, err := a.Webhooks.Recover(ctx); err != nil && !errors.Is(err, context.Canceled) {
		a.Logger.WarnContext(ctx, "webhook queue recovery failed", "error", err)
	}
	if _, err := a.Jobs.Recover(ctx); err != nil && !errors.Is(err, context.Canceled) {
		a.Logger.WarnContext(ctx, "job recovery failed", "error", err)
	}
}
