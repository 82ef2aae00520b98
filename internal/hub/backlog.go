package hub

import (
	"context"
	"time"

	"github.com/ocpihub/ocpihub/internal/instance"
)

// Backlog is what waits to be delivered, as the database holds it: every
// replica's work, not only this process' engine (its lag metrics are per
// process).
type Backlog struct {
	// Unexpanded counts committed changes the fan-out has not yet turned
	// into per-receiver pushes.
	Unexpanded int64 `json:"unexpanded_changes"`
	// Receivers lists each platform with open pushes or resync marks, the
	// furthest behind (oldest open push) first.
	Receivers []ReceiverBacklog `json:"receivers"`
}

// ReceiverBacklog is one receiver's share of the backlog.
type ReceiverBacklog struct {
	PlatformID int64  `json:"platform_id"`
	Name       string `json:"name"`
	Connection string `json:"connection"` // CONNECTED or OFFLINE
	// Open counts the pushes not yet delivered (those in flight too);
	// Retrying the ones waiting for a retry after a failed attempt.
	Open     int64 `json:"open"`
	Retrying int64 `json:"retrying"`
	// Holder names the process delivering to the receiver while its lease
	// lasts (internal/instance: boot id, PID namespace, PID, nonce); empty
	// when no process holds it.
	Holder string `json:"holder,omitempty"`
	// OldestOpen is when the oldest open push was queued, and OldestAgeMS
	// its age in milliseconds (absent when nothing is open).
	OldestOpen  *time.Time `json:"oldest_open,omitempty"`
	OldestAgeMS int64      `json:"oldest_age_ms"`
	// ResyncMarked counts objects waiting for a full resync (failed for
	// good, or changed while the receiver was OFFLINE).
	ResyncMarked int64 `json:"resync_marked"`
}

// Backlog reads the delivery backlog on the read pool: open pushes per
// receiver, resync marks and the changes not yet fanned out.
func (h *Hub) Backlog(ctx context.Context) (Backlog, error) {
	q := h.db.Read()
	var b Backlog
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM hub_change").Scan(&b.Unexpanded); err != nil {
		return b, err
	}
	now := h.clock.Now()
	rows, err := q.Query(ctx, `SELECT p.id, p.name, p.connection,
		COALESCE(o.open, 0), COALESCE(o.retrying, 0), COALESCE(o.oldest, 0), COALESCE(r.marked, 0), COALESCE(l.lease_token, '')
		FROM platforms p
		LEFT JOIN (SELECT platform_id, COUNT(*) AS open,
				SUM(CASE WHEN state = 'pending' AND retry_at > $1 THEN 1 ELSE 0 END) AS retrying,
				MIN(created_at) AS oldest
			FROM hub_push WHERE state IN ('pending', 'leased') GROUP BY platform_id) o ON o.platform_id = p.id
		LEFT JOIN (SELECT platform_id, COUNT(*) AS marked FROM hub_resync GROUP BY platform_id) r ON r.platform_id = p.id
		LEFT JOIN hub_receiver_lease l ON l.platform_id = p.id AND l.lease_until > $1
		WHERE o.open IS NOT NULL OR r.marked IS NOT NULL
		ORDER BY CASE WHEN o.oldest IS NULL THEN 1 ELSE 0 END, o.oldest, p.id`, now.UnixMicro())
	if err != nil {
		return b, err
	}
	defer rows.Close()
	b.Receivers = []ReceiverBacklog{}
	for rows.Next() {
		var r ReceiverBacklog
		var oldest int64
		var token string
		if err := rows.Scan(&r.PlatformID, &r.Name, &r.Connection, &r.Open, &r.Retrying, &oldest, &r.ResyncMarked, &token); err != nil {
			return b, err
		}
		r.Holder = string(instance.Holder(token))
		if r.Open > 0 {
			t := time.UnixMicro(oldest).UTC()
			r.OldestOpen = &t
			r.OldestAgeMS = max(now.Sub(t).Milliseconds(), 0)
		}
		b.Receivers = append(b.Receivers, r)
	}
	return b, rows.Err()
}
