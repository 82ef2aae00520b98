package app

import (
	"context"
	"errors"
	"time"
)

// DefaultRecoverEvery is how often a serving hub looks for leased queues whose
// holder died (hub pushes, webhooks) and for jobs a dead process was
// working (jobs.Client.Recover), and starts them again. It runs in
// every process, not as a periodic job: after a kill the job queue's
// leader is the dead process until its leadership runs out (about 15 s),
// and the queues must move before that.
const DefaultRecoverEvery = 2 * time.Second

// startRecovery runs the queues' recovery at once (a restart reclaims the
// leases of its dead predecessor first thing) and then every
// Config.RecoverEvery,
// until Close.
func (a *App) startRecovery() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	a.stopRecover = func() { cancel(); <-done }
	go func() {
		defer close(done)
		every := a.Config.RecoverEvery
		if every <= 0 {
			every = DefaultRecoverEvery
		}
		t := time.NewTicker(every)
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
