package hub

import (
	"context"
	"time"

	"github.com/ocpihub/ocpihub/internal/instance"
	"github.com/ocpihub/ocpihub/internal/store"
)

// DefaultLease is how long a receiver's lease lasts without renewal: short,
// so a killed process's receivers are free again within seconds, and
// renewed while a delivery is in flight, so a slow receiver's delivery
// keeps it.
const DefaultLease = 10 * time.Second

// StallAfter is how long a due queue head may wait untouched before
// Recover wakes its receiver (a wake that was lost: an expansion that died
// with its process).
const StallAfter = 5 * time.Second

// recoverBatch bounds the queues one Recover call re-arms.
const recoverBatch = 500

// Recover wakes the receivers nobody is delivering to: those with due
// pushes whose lease ran out or whose holder is known to be gone
// (instance.ID.Gone: a killed process seen from its restart on the same
// machine), whose claim then takes the lease, and those whose due queue
// head waited untouched for StallAfter while no process held the receiver.
// It returns how many receivers and queues it re-armed. Every hub process
// runs it every few seconds (app.App); it is safe on several replicas at
// once: it writes no lease, and a claim never takes a live one before its
// end.
func (h *Hub) Recover(ctx context.Context) (int, error) {
	now := h.now()
	// Look on the read pool first: most runs find nothing, and a write
	// transaction every few seconds would contend with real work for
	// SQLite's one writer.
	free, err := h.freeReceivers(ctx, now)
	if err != nil {
		return 0, err
	}
	stalled, err := h.stalled(ctx, h.db.Read(), now)
	if err != nil {
		return 0, err
	}
	var wake []int64
	if stalled {
		err = h.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			wake = wake[:0]
			// Due heads nobody touched for StallAfter. Bumping updated_at
			// spaces the re-arms of one queue by StallAfter.
			cut := now - StallAfter.Microseconds()
			heads, err := store.QueryAll(ctx, tx, func(row store.Row) (h [2]int64, err error) {
				err = row.Scan(&h[0], &h[1])
				return h, err
			}, `SELECT p.id, p.platform_id FROM hub_push p
				WHERE p.state = 'pending' AND p.updated_at <= $1 AND p.retry_at <= $1
				AND NOT EXISTS (SELECT 1 FROM hub_push q WHERE q.platform_id = p.platform_id AND q.module = p.module
					AND q.object_key = p.object_key AND q.state IN ('pending', 'leased') AND q.id < p.id)
				AND NOT EXISTS (SELECT 1 FROM hub_receiver_lease l WHERE l.platform_id = p.platform_id AND l.lease_until > $2)
				ORDER BY p.id LIMIT $3`, cut, now, recoverBatch)
			if err != nil {
				return err
			}
			for _, r := range heads {
				if _, err := tx.Exec(ctx, "UPDATE hub_push SET updated_at = $1 WHERE id = $2 AND state = $3", now, r[0], statePending); err != nil {
					return err
				}
				wake = append(wake, r[1])
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	for _, id := range free {
		h.engine.Wake(id)
	}
	for _, id := range wake {
		h.engine.Wake(id)
	}
	n := len(free) + len(wake)
	if n > 0 {
		h.logger.WarnContext(ctx, "restarted push queues nobody was working", "receivers", len(free), "queues", len(wake))
	}
	return n, nil
}

// freeReceivers lists the receivers with a push due whose lease, held by
// another process, ran out or whose holder is gone. This process' own
// receivers are its engine's: it wakes them itself, or finds them at its
// poll.
func (h *Hub) freeReceivers(ctx context.Context, now int64) ([]int64, error) {
	type lease struct {
		platformID int64
		token      string
		until      int64
	}
	leases, err := store.QueryAll(ctx, h.db.Read(), func(r store.Row) (l lease, err error) {
		err = r.Scan(&l.platformID, &l.token, &l.until)
		return l, err
	}, `SELECT l.platform_id, l.lease_token, l.lease_until FROM hub_receiver_lease l
		WHERE EXISTS (SELECT 1 FROM hub_push p WHERE p.platform_id = l.platform_id AND p.state IN ('pending', 'leased')
			AND p.state = 'pending' AND p.retry_at <= $1)`, now)
	if err != nil {
		return nil, err
	}
	var free []int64
	for _, l := range leases {
		if len(free) < recoverBatch && l.token != h.leases.token && (l.until <= now || h.cfg.Instance.Gone(instance.Holder(l.token))) {
			free = append(free, l.platformID)
		}
	}
	return free, nil
}

// stalled reports whether a due queue head waited untouched for StallAfter
// at a receiver no process holds (a holder's own poll finds its work).
func (h *Hub) stalled(ctx context.Context, q store.Querier, now int64) (bool, error) {
	var found bool
	cut := now - StallAfter.Microseconds()
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM hub_push p WHERE p.state = 'pending' AND p.updated_at <= $1 AND p.retry_at <= $1
		AND NOT EXISTS (SELECT 1 FROM hub_push q WHERE q.platform_id = p.platform_id AND q.module = p.module
			AND q.object_key = p.object_key AND q.state IN ('pending', 'leased') AND q.id < p.id)
		AND NOT EXISTS (SELECT 1 FROM hub_receiver_lease l WHERE l.platform_id = p.platform_id AND l.lease_until > $2))`, cut, now).Scan(&found)
	return found, err
}
