package webhook

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/store"
)

// retentionArgs is the periodic cleanup of old deliveries and events.
type retentionArgs struct{}

// Kind implements river.JobArgs.
func (retentionArgs) Kind() string { return "webhook_retention" }

// Prune deletes finished deliveries older than the retention period and
// events no delivery refers to any more, in batches. It returns the number
// of deliveries deleted.
func (s *Service) Prune(ctx context.Context) (int64, error) {
	cutoff := s.now().Add(-s.cfg.Retention).UnixMicro()
	total, err := s.db.DeleteBatches(ctx, 5000, `DELETE FROM webhook_deliveries WHERE id IN (
		SELECT id FROM webhook_deliveries WHERE status <> $1 AND updated_at < $2 LIMIT 5000)`, StatusPending, cutoff)
	if err != nil {
		return total, err
	}
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM webhook_events WHERE created_at < $1
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`, cutoff)
		return err
	})
	return total, err
}

// Jobs of the kinds below were how deliveries were set going before the
// delivery engine ran them. A hub upgraded with some still queued works
// them as a nudge to the engine, which finds the deliveries by itself, so
// they end quietly instead of failing as unknown kinds.
type (
	retiredDispatch struct{}
	retiredDeliver  struct{}
	retiredSweep    struct{}
)

// Kind implements river.JobArgs.
func (retiredDispatch) Kind() string { return "webhook_dispatch" }

// Kind implements river.JobArgs.
func (retiredDeliver) Kind() string { return "webhook_deliver" }

// Kind implements river.JobArgs.
func (retiredSweep) Kind() string { return "webhook_sweep" }

// addRetired registers the retired kinds' workers on jc.
func addRetired(jc *jobs.Client, s *Service) {
	poll := func(context.Context) error { s.engine.Poll(); return nil }
	jobs.AddWorker(jc, jobs.Task[retiredDispatch](poll))
	jobs.AddWorker(jc, jobs.Task[retiredDeliver](poll))
	jobs.AddWorker(jc, jobs.Task[retiredSweep](poll))
}
