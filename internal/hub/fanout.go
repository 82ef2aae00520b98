package hub

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// fanoutBatch bounds the changes one expansion takes.
const fanoutBatch = 500

// fanoutPoll is how often the expansion looks for changes it was not woken
// for (another replica's, or ones whose wake was lost in a crash).
const fanoutPoll = 250 * time.Millisecond

// pushColumns are the columns of a hub_push insert, in its order.
const pushColumns = `platform_id, module, object_key, method, path, body, full_object, state, correlation_id, created_at, updated_at,
	to_country_code, to_party_id, from_country_code, from_party_id, iface, traceparent, fields`

// change is a hub_change record being expanded.
type change struct {
	id       int64
	sender   int64
	audience []party.Role
	p        Push
	created  int64
	// traceparent names the span whose transaction recorded the change.
	traceparent string
	// fields is what the push rewrites (collapseFields).
	fields string
}

// outRow is a hub_push row an expansion inserts.
type outRow struct {
	platformID int64
	c          *change
	state      string
	to         ocpiclient.Party
}

// wakeFanout asks the expansion loop to run now (after a change commits).
func (h *Hub) wakeFanout() {
	select {
	case h.fanoutWake <- struct{}{}:
	default:
	}
}

// fanoutLoop expands changes until ctx ends: at once when woken, and every
// fanoutPoll when something is waiting.
func (h *Hub) fanoutLoop(ctx context.Context) {
	t := time.NewTicker(cmp.Or(h.cfg.Poll, fanoutPoll))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.fanoutWake:
		case <-t.C:
			var waiting bool
			if err := h.db.Read().QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM hub_change)").Scan(&waiting); err != nil || !waiting {
				continue
			}
		}
		if _, err := h.Expand(ctx); err != nil && ctx.Err() == nil {
			h.logger.WarnContext(ctx, "could not expand changes into pushes", "error", err)
		}
	}
}

// Expand expands every recorded change into per-receiver pushes, a batch
// per transaction, and wakes their delivery. It returns how many changes it
// expanded. The delivery side runs it; Outbox runs it first so that the
// outbox shows every committed change.
func (h *Hub) Expand(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := h.expandBatch(store.Background(ctx))
		total += n
		if err != nil || n < fanoutBatch {
			return total, err
		}
	}
}

// expandBatch expands up to fanoutBatch changes in one transaction.
func (h *Hub) expandBatch(ctx context.Context) (int, error) {
	var woken map[int64]bool
	var n int
	routes, err := h.table.Routes(ctx)
	if err != nil {
		return 0, err
	}
	err = h.db.InBatch(ctx, func(ctx context.Context, tx *store.Tx) error {
		woken, n = map[int64]bool{}, 0
		// The lock of the one row serializes expansions (replicas):
		// pushes are inserted in change order.
		if _, err := tx.Exec(ctx, "UPDATE hub_fanout SET expanded = expanded WHERE id = 1"); err != nil {
			return err
		}
		cs, err := loadChanges(ctx, tx)
		if err != nil || len(cs) == 0 {
			return err
		}
		n = len(cs)
		var rows []outRow
		// open: the index in rows of the latest pending row of a
		// (platform, module, object) in this batch, for supersession.
		open := map[string][]int{}
		for _, c := range cs {
			rs := routes.Receivers(c.sender, c.audience, c.p.Module)
			var online []int64
			for _, r := range rs {
				if r.Offline {
					if err := h.markResync(ctx, tx, r.PlatformID, c.p.Module, c.p.ObjectKey); err != nil {
						return err
					}
					continue
				}
				online = append(online, r.PlatformID)
				k := strconv.FormatInt(r.PlatformID, 10) + "\x00" + c.p.Module + "\x00" + c.p.ObjectKey
				if c.p.Full {
					for _, i := range open[k] {
						rows[i].state = stateSuperseded
					}
					open[k] = open[k][:0]
				}
				to := c.p.To
				if to.IsZero() {
					to = r.To
				}
				open[k] = append(open[k], len(rows))
				rows = append(rows, outRow{platformID: r.PlatformID, c: c, state: statePending, to: to})
				woken[r.PlatformID] = true
			}
			if c.p.Full && len(online) > 0 {
				if err := h.supersede(ctx, tx, online, c.p.Module, c.p.ObjectKey); err != nil {
					return err
				}
			}
		}
		if err := h.insertPushes(ctx, tx, rows); err != nil {
			return err
		}
		return deleteChanges(ctx, tx, cs)
	})
	if err != nil {
		return 0, err
	}
	for id := range woken {
		h.engine.Wake(id)
	}
	return n, nil
}

func loadChanges(ctx context.Context, tx *store.Tx) ([]*change, error) {
	rows, err := tx.Query(ctx, `SELECT id, sender, audience, module, object_key, method, path, body, full_object, correlation_id,
		to_country_code, to_party_id, from_country_code, from_party_id, iface, created_at, traceparent
		FROM hub_change ORDER BY id LIMIT $1`, fanoutBatch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*change
	for rows.Next() {
		c := &change{}
		var audience string
		var body *string
		if err := rows.Scan(&c.id, &c.sender, &audience, &c.p.Module, &c.p.ObjectKey, &c.p.Method, &c.p.Path, &body, &c.p.Full,
			&c.p.CorrelationID, &c.p.To.CountryCode, &c.p.To.PartyID, &c.p.From.CountryCode, &c.p.From.PartyID, &c.p.Interface,
			&c.created, &c.traceparent); err != nil {
			return nil, err
		}
		if body != nil {
			c.p.Body = []byte(*body)
		}
		c.fields = collapseFields(c.p)
		for _, r := range strings.Split(audience, ",") {
			if r != "" {
				c.audience = append(c.audience, party.Role(r))
			}
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// supersede marks the pending pushes of an object to platforms superseded
// (a full push of it follows).
func (h *Hub) supersede(ctx context.Context, tx *store.Tx, platforms []int64, module, key string) error {
	args := []any{stateSuperseded, h.now(), module, key}
	var in strings.Builder
	for i, id := range platforms {
		if i > 0 {
			in.WriteString(", ")
		}
		args = append(args, id)
		fmt.Fprintf(&in, "$%d", len(args))
	}
	// The state terms repeat the queue index's own condition so that
	// SQLite may use that partial index (a bound parameter cannot prove
	// it; without it every pending row of the outbox is scanned).
	if _, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, updated_at = $2
		WHERE module = $3 AND object_key = $4 AND state IN ('pending', 'leased') AND state = 'pending'
		AND platform_id IN (`+in.String()+`)`, args...); err != nil {
		return fmt.Errorf("supersede pushes: %w", err)
	}
	return nil
}

// insertPushes inserts rows in order, one statement per change (its
// columns bound once, its receivers' few after them: SQLite looks bound
// parameters up by name, so a statement of thousands costs more to bind
// than to run). A row keeps its change's commit time as created_at:
// delivery lag is measured from it.
func (h *Hub) insertPushes(ctx context.Context, tx *store.Tx, rows []outRow) error {
	now := h.now()
	for len(rows) > 0 {
		c, n := rows[0].c, 1
		for n < len(rows) && rows[n].c == c {
			n++
		}
		chunk := rows[:n]
		rows = rows[n:]
		var body any
		if c.p.Body != nil {
			body = string(c.p.Body)
		}
		args := []any{c.p.Module, c.p.ObjectKey, c.p.Method, c.p.Path, body, c.p.Full, c.p.CorrelationID, c.created, now,
			c.p.From.CountryCode, c.p.From.PartyID, iface(c.p), c.traceparent, c.fields}
		var q strings.Builder
		q.WriteString("INSERT INTO hub_push (" + pushColumns + ") VALUES ")
		for i, r := range chunk {
			if i > 0 {
				q.WriteString(", ")
			}
			args = append(args, r.platformID, r.state, r.to.CountryCode, r.to.PartyID)
			k := len(args)
			fmt.Fprintf(&q, "($%d, $1, $2, $3, $4, $5, $6, $%d, $7, $8, $9, $%d, $%d, $10, $11, $12, $13, $14)", k-3, k-2, k-1, k)
		}
		if _, err := tx.Exec(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("enqueue pushes: %w", err)
		}
	}
	return nil
}

// deleteChanges removes expanded changes (by id: on PostgreSQL a lower id
// may still be uncommitted, and is expanded by a later batch).
func deleteChanges(ctx context.Context, tx *store.Tx, cs []*change) error {
	for len(cs) > 0 {
		chunk := cs[:min(len(cs), 500)]
		cs = cs[len(chunk):]
		var in strings.Builder
		for i, c := range chunk {
			if i > 0 {
				in.WriteString(",")
			}
			in.WriteString(strconv.FormatInt(c.id, 10))
		}
		if _, err := tx.Exec(ctx, "DELETE FROM hub_change WHERE id IN ("+in.String()+")"); err != nil {
			return err
		}
	}
	return nil
}
