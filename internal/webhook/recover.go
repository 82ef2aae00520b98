package webhook

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/instance"
)

// Recover wakes the delivery of every subscription whose delivery in flight
// was left leased by a holder that stopped: its lease ran out, or its
// holder is known to be gone (instance.ID.Gone: a killed process seen from
// its restart on the same machine, whose lease is taken at once instead of
// when it runs out). The claim takes the lease over. It returns how many
// subscriptions it woke. Every hub process runs it every few seconds
// (app.App); the engine's polling would find a lease that ran out too, a
// little later. A live holder's lease is never taken before its deadline.
func (s *Service) Recover(ctx context.Context) (int, error) {
	// Leased deliveries are few (a run per subscription being delivered
	// to): the read pool, and an index on the lease.
	now := s.now().UnixMicro()
	rows, err := s.db.Read().Query(ctx, `SELECT r.id, d.lease_token, d.lease_until FROM webhook_deliveries d
		JOIN webhook_receivers r ON r.subscription_id = d.subscription_id
		WHERE d.lease_token <> '' AND d.status = $1`, StatusPending)
	if err != nil {
		return 0, err
	}
	// A run leases several deliveries of a subscription under one token.
	var free []int64
	seen := map[int64]bool{}
	for rows.Next() {
		var receiver, until int64
		var token string
		if err := rows.Scan(&receiver, &token, &until); err != nil {
			rows.Close()
			return 0, err
		}
		if !seen[receiver] && (until <= now || s.cfg.Instance.Gone(instance.Holder(token))) {
			seen[receiver] = true
			free = append(free, receiver)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, r := range free {
		s.engine.Wake(r)
	}
	if len(free) > 0 {
		s.logger.WarnContext(ctx, "restarted webhook queues whose sender stopped", "subscriptions", len(free))
	}
	return len(free), nil
}
