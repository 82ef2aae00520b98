package webhook

import (
	"context"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/lease"
	"github.com/ocpihub/ocpihub/internal/store"
)

// keepLease renews the job's lease on the subscription every third of
// leaseFor while it drains, so a batch slower than the lease keeps it.
// Renewing stops by itself once the lease was given back (the update
// matches no row); stop ends it and waits.
func (s *Service) keepLease(ctx context.Context, jobID int64, subID string) (stop func()) {
	return lease.Keep(ctx, leaseFor/3, func(ctx context.Context) error {
		return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET lease_until = $1 WHERE id = $2 AND lease_owner = $3 AND status = $4",
				s.now().Add(leaseFor).UnixMicro(), subID, jobID, StatusActive)
			return err
		})
	}, func(ctx context.Context, err error) {
		s.logger.WarnContext(ctx, "could not renew a webhook lease", "subscription", subID, "error", err)
	})
}

// Recover frees the leases that ran out without being given back (their
// sender died: a killed process) and starts a delivery job for each of
// those subscriptions whose head is due. It returns how many it started.
// Every hub process runs it every few seconds (app.App), so a killed
// sender's queue moves again within seconds of its lease running out;
// Sweep remains the slower net for due heads that lost their job.
func (s *Service) Recover(ctx context.Context) (int, error) {
	// Look on the read pool first: most runs find nothing, and a write
	// transaction every few seconds would contend with real work for
	// SQLite's one writer.
	var lapsed bool
	if err := s.db.Read().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_subscriptions
		WHERE status = $1 AND lease_owner <> 0 AND lease_until <= $2)`, StatusActive, s.now().UnixMicro()).Scan(&lapsed); err != nil || !lapsed {
		return 0, err
	}
	n := 0
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		now := s.now().UnixMicro()
		rows, err := tx.Query(ctx, `SELECT id, lease_owner FROM webhook_subscriptions
			WHERE status = $1 AND lease_owner <> 0 AND lease_until <= $2 ORDER BY id`, StatusActive, now)
		if err != nil {
			return err
		}
		type lapsed struct {
			id    string
			owner int64
		}
		var subs []lapsed
		for rows.Next() {
			var l lapsed
			if err := rows.Scan(&l.id, &l.owner); err != nil {
				rows.Close()
				return err
			}
			subs = append(subs, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		var params []river.InsertManyParams
		for _, l := range subs {
			freed, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET lease_owner = 0, lease_until = 0 WHERE id = $1 AND lease_owner = $2 AND lease_until <= $3",
				l.id, l.owner, now)
			if err != nil {
				return err
			}
			if freed == 0 {
				continue
			}
			head, at, ok, err := nextHead(ctx, tx, l.id)
			if err != nil {
				return err
			}
			if ok && at <= now {
				params = append(params, river.InsertManyParams{Args: deliverArgs{SubscriptionID: l.id, DeliveryID: head}})
			}
		}
		n = len(params)
		return s.jobs.InsertManyTx(ctx, tx, params)
	})
	if n > 0 {
		s.logger.WarnContext(ctx, "restarted webhook queues whose sender died", "subscriptions", n)
	}
	return n, err
}
