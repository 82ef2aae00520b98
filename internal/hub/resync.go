package hub

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// resyncObject queues, inside tx, a full push of the current state of an
// object to one platform (superseding what is queued for it) and clears the
// object's resync mark.
func (h *Hub) resyncObject(ctx context.Context, tx *store.Tx, platformID int64, module, key string) error {
	if _, err := tx.Exec(ctx, "DELETE FROM hub_resync WHERE platform_id = $1 AND module = $2 AND object_key = $3",
		platformID, module, key); err != nil {
		return err
	}
	src, ok := h.sources[module]
	if !ok {
		return nil
	}
	p, ok, err := src.Current(ctx, tx, key)
	if err != nil || !ok {
		return err
	}
	p.Module, p.ObjectKey, p.Full = module, key, true
	return h.Enqueue(ctx, tx, platformID, p)
}

// reconnected schedules the resync of a platform that answers again.
func (h *Hub) reconnected(ctx context.Context, platformID int64) {
	if _, err := h.jobs.Insert(ctx, ResyncArgs{PlatformID: platformID}, &river.InsertOpts{Queue: jobs.QueuePush,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByPeriod: time.Second}}); err != nil {
		h.logger.WarnContext(ctx, "could not schedule a resync", "platform_id", platformID, "error", err)
	}
}

// Resync queues full pushes of every object marked for a platform. It is
// what the resync job runs; the operator may run it too.
func (h *Hub) Resync(ctx context.Context, platformID int64) (int, error) {
	p, err := h.parties.Find(ctx, platformID)
	if err != nil {
		return 0, err
	}
	if p.Status != party.StatusConnected || p.Connection == party.ClientOffline {
		return 0, nil
	}
	total := 0
	for {
		type mark struct{ module, key string }
		marks, err := store.QueryAll(ctx, h.db.Read(), func(r store.Row) (m mark, err error) {
			err = r.Scan(&m.module, &m.key)
			return m, err
		}, `SELECT module, object_key FROM hub_resync WHERE platform_id = $1
			ORDER BY module, object_key LIMIT 200`, platformID)
		if err != nil {
			return total, err
		}
		if len(marks) == 0 {
			return total, nil
		}
		err = h.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			for _, m := range marks {
				if err := h.resyncObject(ctx, tx, platformID, m.module, m.key); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += len(marks)
	}
}

// ResyncArgs is the job that resyncs one platform.
type ResyncArgs struct {
	PlatformID int64 `json:"platform_id"`
}

// Kind implements river.JobArgs.
func (ResyncArgs) Kind() string { return "hub_resync" }

// resyncJob is the work of a ResyncArgs job.
func (h *Hub) resyncJob(ctx context.Context, a ResyncArgs) error {
	n, err := h.Resync(ctx, a.PlatformID)
	if n > 0 {
		h.logger.InfoContext(ctx, "resyncing a receiver", "platform_id", a.PlatformID, "objects", n)
	}
	return err
}

// CleanupArgs is the periodic job that prunes finished pushes and retries
// the resync of connected platforms with marks left (a receiver whose
// endpoint failed while its versions endpoint kept answering).
type CleanupArgs struct{}

// Kind implements river.JobArgs.
func (CleanupArgs) Kind() string { return "hub_cleanup" }

// cleanup is the work of a CleanupArgs job.
func (h *Hub) cleanup(ctx context.Context) error {
	horizon := h.clock.Now().Add(-h.cfg.Keep).UnixMicro()
	err := h.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM hub_push WHERE state IN ('delivered', 'rejected', 'superseded', 'failed', 'skipped') AND updated_at < $1`, horizon)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM hub_resync WHERE NOT EXISTS (SELECT 1 FROM platforms p WHERE p.id = hub_resync.platform_id AND p.status <> 'UNREGISTERED')`)
		return err
	})
	if err != nil {
		return err
	}
	ids, err := store.QueryAll(ctx, h.db.Read(), scanPlatformID, "SELECT DISTINCT platform_id FROM hub_resync")
	if err != nil {
		return err
	}
	for _, id := range ids {
		h.reconnected(ctx, id)
	}
	return h.rearmLoads(ctx)
}

// scanPlatformID reads a row of one platform id.
func scanPlatformID(r store.Row) (id int64, err error) {
	err = r.Scan(&id)
	return id, err
}
