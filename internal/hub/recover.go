package hub

import (
	"context"
	"time"

	"github.com/ocpihub/ocpihub/internal/instance"
	"github.com/ocpihub/ocpihub/internal/store"
)

// DefaultLease is how long a push lease lasts without renewal: short, so a
// killed worker's queue is free again within seconds, and renewed while a
// delivery is in flight, so a slow receiver's delivery keeps it.
const DefaultLease = 10 * time.Second

// StallAfter is how long a due, unleased queue head may wait before
// Recover starts a job for it (a job that was lost: a dispatch that died
// with its process before it fanned out). Queues that are only busy get at
// most one extra job per StallAfter; a job that finds the head leased exits.
const StallAfter = 5 * time.Second

// recoverBatch bounds the queues one Recover call re-arms.
const recoverBatch = 500

// Recover re-arms the push queues nobody is working: it frees heads whose
// lease expired or whose holder is known to be gone (instance.ID.Gone: a
// killed process seen from its restart on the same machine) and starts a
// delivery job for them, and starts a job for due heads that waited
// unleased for StallAfter. It returns how many queues it re-armed. Every
// hub process runs it every few seconds (app.App); it is safe to run
// concurrently on several replicas: a live replica's lease is never taken
// before its deadline, and an extra job finds the head leased and exits.
func (h *Hub) Recover(ctx context.Context) (int, error) {
	now := h.now()
	// Look on the read pool first: most runs find nothing, and a write
	// transaction every few seconds would contend with real work for
	// SQLite's one writer.
	if work, err := h.recoverable(ctx, h.db.Read(), now); err != nil || !work {
		return 0, err
	}
	var params []PushArgs
	arm := func(a PushArgs) { params = append(params, a) }
	err := h.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		// Leased rows are few (one per queue being delivered); the state
		// terms let both engines use the history index.
		rows, err := tx.Query(ctx, `SELECT id, platform_id, module, object_key, lease_token, lease_until FROM hub_push
			WHERE state = 'leased' ORDER BY id`)
		if err != nil {
			return err
		}
		type held struct {
			id    int64
			a     PushArgs
			token string
		}
		var free []held
		for rows.Next() {
			var r held
			var until int64
			if err := rows.Scan(&r.id, &r.a.PlatformID, &r.a.Module, &r.a.ObjectKey, &r.token, &until); err != nil {
				rows.Close()
				return err
			}
			if until <= now || h.cfg.Instance.Gone(instance.Holder(r.token)) {
				free = append(free, r)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range free {
			if len(params) >= recoverBatch {
				break
			}
			// The attempt the dead holder made stays counted: the
			// receiver may have got it.
			n, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, lease_token = '', lease_until = 0, updated_at = $2
				WHERE id = $3 AND state = $4 AND lease_token = $5`, statePending, now, r.id, stateLeased, r.token)
			if err != nil {
				return err
			}
			if n == 1 {
				arm(r.a)
			}
		}
		// Due heads nobody touched for StallAfter. Bumping updated_at
		// spaces the re-arms of one queue by StallAfter.
		cut := now - StallAfter.Microseconds()
		stalled, err := store.QueryAll(ctx, tx, func(row store.Row) (r held, err error) {
			err = row.Scan(&r.id, &r.a.PlatformID, &r.a.Module, &r.a.ObjectKey)
			return r, err
		}, `SELECT p.id, p.platform_id, p.module, p.object_key FROM hub_push p
			WHERE p.state = 'pending' AND p.updated_at <= $1 AND p.retry_at <= $1
			AND NOT EXISTS (SELECT 1 FROM hub_push q WHERE q.platform_id = p.platform_id AND q.module = p.module
				AND q.object_key = p.object_key AND q.state IN ('pending', 'leased') AND q.id < p.id)
			ORDER BY p.id LIMIT $2`, cut, recoverBatch)
		if err != nil {
			return err
		}
		for _, r := range stalled {
			if _, err := tx.Exec(ctx, "UPDATE hub_push SET updated_at = $1 WHERE id = $2 AND state = $3", now, r.id, statePending); err != nil {
				return err
			}
			arm(r.a)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, a := range params {
		h.engine.Wake(a.PlatformID)
	}
	if len(params) > 0 {
		h.logger.WarnContext(ctx, "restarted push queues nobody was working", "queues", len(params))
	}
	return len(params), nil
}

// recoverable reports whether Recover has anything to do.
func (h *Hub) recoverable(ctx context.Context, q store.Querier, now int64) (bool, error) {
	rows, err := q.Query(ctx, "SELECT lease_token, lease_until FROM hub_push WHERE state = 'leased'")
	if err != nil {
		return false, err
	}
	found := false
	for rows.Next() && !found {
		var token string
		var until int64
		if err := rows.Scan(&token, &until); err != nil {
			rows.Close()
			return false, err
		}
		found = until <= now || h.cfg.Instance.Gone(instance.Holder(token))
	}
	rows.Close()
	if found || rows.Err() != nil {
		return found, rows.Err()
	}
	cut := now - StallAfter.Microseconds()
	err = q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM hub_push p WHERE p.state = 'pending' AND p.updated_at <= $1 AND p.retry_at <= $1
		AND NOT EXISTS (SELECT 1 FROM hub_push q WHERE q.platform_id = p.platform_id AND q.module = p.module
			AND q.object_key = p.object_key AND q.state IN ('pending', 'leased') AND q.id < p.id))`, cut).Scan(&found)
	return found, err
}
