package webhook

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/store"
)

// sweepArgs is the periodic job that starts a job for every due queue head
// that nobody has picked up for stallAfter: the safety net under the
// hand-over between delivery jobs.
type sweepArgs struct{}

// Kind implements river.JobArgs.
func (sweepArgs) Kind() string { return "webhook_sweep" }

// Sweep starts a delivery job for every active subscription whose due head
// has waited for more than a minute with the lease free. It returns how
// many it started.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	n := 0
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		now := s.now().UnixMicro()
		rows, err := tx.Query(ctx, `SELECT d.subscription_id, d.id FROM webhook_deliveries d
			JOIN (SELECT subscription_id, MIN(id) AS id FROM webhook_deliveries WHERE status = $1 GROUP BY subscription_id) h ON h.id = d.id
			JOIN webhook_subscriptions s ON s.id = d.subscription_id
			WHERE s.status = $2 AND s.lease_until <= $3 AND d.next_attempt_at <= $4`,
			StatusPending, StatusActive, now, now-stallAfter.Microseconds())
		if err != nil {
			return err
		}
		params, err := deliverJobs(rows)
		if err != nil {
			return err
		}
		n = len(params)
		return s.jobs.InsertManyTx(ctx, tx, params)
	})
	if n > 0 {
		s.logger.WarnContext(ctx, "restarted stalled webhook queues", "subscriptions", n)
	}
	return n, err
}

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
