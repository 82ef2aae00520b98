package hub

import (
	"context"
	"fmt"
	"slices"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Push states.
const (
	statePending    = "pending"
	stateLeased     = "leased"
	stateDelivered  = "delivered"
	stateRejected   = "rejected"
	stateSuperseded = "superseded"
	stateFailed     = "failed"
	// stateSkipped is a push a receiver's version cannot express (Dialect).
	stateSkipped = "skipped"
)

// CPOAudience are the roles a CPO's broadcast reaches (routing.CPOAudience):
// the sending platform never gets its own broadcast back.
var CPOAudience = routing.CPOAudience

// EMSPAudience are the roles an eMSP's broadcast (tokens) reaches
// (routing.EMSPAudience).
var EMSPAudience = routing.EMSPAudience

// receiver is a platform a broadcast goes to (routing.Receivers decides).
type receiver = routing.Receiver

// Broadcast enqueues p, inside tx, for every connected platform other than
// the sender that hosts a party in one of the audience roles and offers the
// module's RECEIVER interface. Platforms marked OFFLINE by the liveness job
// get nothing now: the object is marked for a full resync when they come
// back (hubclientinfo.md: OFFLINE means do not send, do not queue).
//
// tx must already hold the lock of the object's own row (the state change is
// written first), so that for one object the outbox ids follow commit order.
func (h *Hub) Broadcast(ctx context.Context, tx *store.Tx, sender int64, audience []party.Role, p Push) error {
	rs, err := h.receivers(ctx, tx, sender, audience, p.Module)
	if err != nil {
		return err
	}
	var online []receiver
	var ids []int64
	for _, r := range rs {
		if r.Offline {
			if err := h.markResync(ctx, tx, r.PlatformID, p.Module, p.ObjectKey); err != nil {
				return err
			}
			continue
		}
		online = append(online, r)
		ids = append(ids, r.PlatformID)
	}
	if len(online) == 0 {
		return nil
	}
	if err := h.insertRows(ctx, tx, online, p); err != nil {
		return err
	}
	// One job fans the delivery jobs out after the commit: the request pays
	// for one job insert, not one per receiver.
	d := DispatchArgs{Module: p.Module, ObjectKey: p.ObjectKey, PlatformIDs: ids}
	_, err = h.jobs.InsertTx(ctx, tx, d, &river.InsertOpts{Queue: jobs.QueuePush, MaxAttempts: 1_000})
	return err
}

// insertRows adds p to the outbox of each receiver, in one statement (and
// supersedes their earlier pending rows of the object when p is full). A
// push without an addressee goes to each receiver's party in the audience.
func (h *Hub) insertRows(ctx context.Context, tx *store.Tx, receivers []receiver, p Push) error {
	now := h.now()
	if p.Full {
		args := []any{stateSuperseded, now, p.Module, p.ObjectKey}
		in := ""
		for i, r := range receivers {
			if i > 0 {
				in += ", "
			}
			args = append(args, r.PlatformID)
			in += fmt.Sprintf("$%d", len(args))
		}
		// The state terms repeat the queue index's own condition so that
		// SQLite may use that partial index (a bound parameter cannot prove
		// it; without it every pending row of the outbox is scanned).
		if _, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, updated_at = $2
			WHERE module = $3 AND object_key = $4 AND state IN ('pending', 'leased') AND state = 'pending'
			AND platform_id IN (`+in+`)`, args...); err != nil {
			return fmt.Errorf("supersede pushes: %w", err)
		}
	}
	var body any
	if p.Body != nil {
		body = string(p.Body)
	}
	args := []any{p.Module, p.ObjectKey, p.Method, p.Path, body, p.Full, statePending, p.CorrelationID, now,
		p.From.CountryCode, p.From.PartyID, iface(p)}
	q := `INSERT INTO hub_push (platform_id, module, object_key, method, path, body, full_object, state, correlation_id, created_at, updated_at,
		to_country_code, to_party_id, from_country_code, from_party_id, iface) VALUES `
	for i, r := range receivers {
		if i > 0 {
			q += ", "
		}
		to := p.To
		if to.IsZero() {
			to = r.To
		}
		args = append(args, r.PlatformID, to.CountryCode, to.PartyID)
		n := len(args)
		q += fmt.Sprintf("($%d, $1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $%d, $%d, $10, $11, $12)", n-2, n-1, n)
	}
	if _, err := tx.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("enqueue pushes: %w", err)
	}
	return nil
}

// DispatchArgs is the job that starts the delivery of one broadcast: a
// delivery job per receiving platform's queue of the object. It is
// idempotent: a delivery job finding nothing to do (or the head leased)
// exits at once.
type DispatchArgs struct {
	Module      string  `json:"module"`
	ObjectKey   string  `json:"object_key"`
	PlatformIDs []int64 `json:"platform_ids"`
}

// Kind implements river.JobArgs.
func (DispatchArgs) Kind() string { return "hub_dispatch" }

type dispatchWorker struct {
	river.WorkerDefaults[DispatchArgs]
	h *Hub
}

func (w *dispatchWorker) Work(ctx context.Context, job *river.Job[DispatchArgs]) error {
	a := job.Args
	params := make([]river.InsertManyParams, len(a.PlatformIDs))
	for i, id := range a.PlatformIDs {
		params[i] = river.InsertManyParams{Args: PushArgs{PlatformID: id, Module: a.Module, ObjectKey: a.ObjectKey},
			InsertOpts: &river.InsertOpts{Queue: jobs.QueuePush, MaxAttempts: 1_000}}
	}
	return w.h.jobs.InsertMany(ctx, params)
}

// receivers lists the platforms a broadcast of module goes to
// (routing.Router.Receivers: the audience, the loop rule).
func (h *Hub) receivers(ctx context.Context, q store.Querier, sender int64, audience []party.Role, module string) ([]receiver, error) {
	return h.route.Receivers(ctx, q, sender, audience, module)
}

// Enqueue adds p to the outbox of one platform, inside tx, with the job that
// delivers it. A full-object push supersedes the earlier undelivered pushes
// of the same object to that platform (a PATCH storm to a slow receiver
// collapses into the latest state).
func (h *Hub) Enqueue(ctx context.Context, tx *store.Tx, platformID int64, p Push) error {
	now := h.now()
	if p.Full {
		if _, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, updated_at = $2
			WHERE platform_id = $3 AND module = $4 AND object_key = $5 AND state IN ('pending', 'leased') AND state = 'pending'`,
			stateSuperseded, now, platformID, p.Module, p.ObjectKey); err != nil {
			return fmt.Errorf("supersede pushes: %w", err)
		}
	}
	var body any
	if p.Body != nil {
		body = string(p.Body)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO hub_push (platform_id, module, object_key, method, path, body, full_object, state,
		correlation_id, created_at, updated_at, to_country_code, to_party_id, from_country_code, from_party_id, iface)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13, $14, $15)`,
		platformID, p.Module, p.ObjectKey, p.Method, p.Path, body, p.Full, statePending, p.CorrelationID, now,
		p.To.CountryCode, p.To.PartyID, p.From.CountryCode, p.From.PartyID, iface(p)); err != nil {
		return fmt.Errorf("enqueue push: %w", err)
	}
	_, err := h.jobs.InsertTx(ctx, tx, PushArgs{PlatformID: platformID, Module: p.Module, ObjectKey: p.ObjectKey},
		&river.InsertOpts{Queue: jobs.QueuePush, MaxAttempts: 1_000})
	return err
}

// markResync records that a platform must get an object again in full.
func (h *Hub) markResync(ctx context.Context, tx *store.Tx, platformID int64, module, key string) error {
	_, err := tx.Exec(ctx, `INSERT INTO hub_resync (platform_id, module, object_key, marked_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (platform_id, module, object_key) DO NOTHING`, platformID, module, key, h.now())
	return err
}

// PushArgs is the job that works one (platform, module, object) queue of the
// outbox: it delivers the queue's rows in order until it is empty.
type PushArgs struct {
	PlatformID int64  `json:"platform_id"`
	Module     string `json:"module"`
	ObjectKey  string `json:"object_key"`
}

// Kind implements river.JobArgs.
func (PushArgs) Kind() string { return "hub_push" }

// iface is the receiving interface role of a push.
func iface(p Push) string {
	if p.Interface == "" {
		return ocpi.InterfaceReceiver
	}
	return p.Interface
}

// Outbox row, as the worker sees it.
type pushRow struct {
	id            int64
	method, path  string
	body          []byte
	full          bool
	attempts      int
	correlationID string
	createdAt     int64
	to, from      ocpiclient.Party
	iface         string
}

// OutboxEntry is a push as the admin API and tests see it.
type OutboxEntry struct {
	ID         int64  `json:"id"`
	PlatformID int64  `json:"platform_id"`
	Module     string `json:"module"`
	ObjectKey  string `json:"object_key"`
	Method     string `json:"method"`
	Path       string `json:"path"`
	State      string `json:"state"`
	Attempts   int    `json:"attempts"`
	LastError  string `json:"last_error,omitempty"`
}

// Outbox lists the pushes of a platform (all platforms when 0) in states
// (all when empty), oldest first.
func (h *Hub) Outbox(ctx context.Context, platformID int64, states ...string) ([]OutboxEntry, error) {
	rows, err := h.db.Read().Query(ctx, `SELECT id, platform_id, module, object_key, method, path, state, attempts, last_error
		FROM hub_push WHERE ($1 = 0 OR platform_id = $1) ORDER BY id`, platformID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OutboxEntry
	for rows.Next() {
		var e OutboxEntry
		if err := rows.Scan(&e.ID, &e.PlatformID, &e.Module, &e.ObjectKey, &e.Method, &e.Path, &e.State, &e.Attempts, &e.LastError); err != nil {
			return nil, err
		}
		if len(states) == 0 || slices.Contains(states, e.State) {
			out = append(out, e)
		}
	}
	return out, rows.Err()
}
