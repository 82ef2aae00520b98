package hub

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/tracing"
)

// Push states.
const (
	statePending    = "pending"
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

// Broadcast records p, inside tx, for every connected platform other than
// the sender that hosts a party in one of the audience roles and offers the
// module's RECEIVER interface. The request's transaction writes one record
// (hub_change); the delivery side expands it into a push per receiver, in
// batches, resolving the receivers then from the cached routing table
// (fanout.go). Platforms marked OFFLINE by the liveness job get nothing
// then: the object is marked for a full resync when they come back
// (hubclientinfo.md: OFFLINE means do not send, do not queue).
//
// tx must already hold the lock of the object's own row (the state change is
// written first), so that for one object the record ids follow commit order.
func (h *Hub) Broadcast(ctx context.Context, tx *store.Tx, sender int64, audience []party.Role, p Push) error {
	var body any
	if p.Body != nil {
		body = string(p.Body)
	}
	roles := make([]string, len(audience))
	for i, r := range audience {
		roles[i] = string(r)
	}
	if err := tx.ExecLater(ctx, `INSERT INTO hub_change (sender, audience, module, object_key, method, path, body, full_object, correlation_id,
		to_country_code, to_party_id, from_country_code, from_party_id, iface, created_at, traceparent)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		sender, strings.Join(roles, ","), p.Module, p.ObjectKey, p.Method, p.Path, body, p.Full, p.CorrelationID,
		p.To.CountryCode, p.To.PartyID, p.From.CountryCode, p.From.PartyID, iface(p), h.now(),
		tracing.FromContext(ctx).TraceParent()); err != nil {
		return fmt.Errorf("record change: %w", err)
	}
	tx.AfterCommit(h.wakeFanout)
	return nil
}

// DispatchArgs is the job that started the delivery of one broadcast before
// delivery ran in process. Jobs of it left in a database from then only
// wake the delivery of their platforms.
type DispatchArgs struct {
	Module      string  `json:"module"`
	ObjectKey   string  `json:"object_key"`
	PlatformIDs []int64 `json:"platform_ids"`
}

// Kind implements river.JobArgs.
func (DispatchArgs) Kind() string { return "hub_dispatch" }

// dispatchJob only wakes the delivery of a DispatchArgs job's platforms.
func (h *Hub) dispatchJob(_ context.Context, a DispatchArgs) error {
	for _, id := range a.PlatformIDs {
		h.engine.Wake(id)
	}
	return nil
}

// receivers lists the platforms a broadcast of module goes to
// (routing.Router.Receivers: the audience, the loop rule).
func (h *Hub) receivers(ctx context.Context, q store.Querier, sender int64, audience []party.Role, module string) ([]receiver, error) {
	return h.route.Receivers(ctx, q, sender, audience, module)
}

// Enqueue adds p to the outbox of one platform, inside tx; its delivery is
// woken when tx commits. A full-object push supersedes the earlier undelivered pushes
// of the same object to that platform (a PATCH storm to a slow receiver
// collapses into the latest state).
func (h *Hub) Enqueue(ctx context.Context, tx *store.Tx, platformID int64, p Push) error {
	now := h.now()
	if p.Full && !p.First {
		if err := tx.ExecLater(ctx, `UPDATE hub_push SET state = $1, updated_at = $2
			WHERE platform_id = $3 AND module = $4 AND object_key = $5 AND state IN ('pending', 'leased') AND state = 'pending'`,
			stateSuperseded, now, platformID, p.Module, p.ObjectKey); err != nil {
			return fmt.Errorf("supersede pushes: %w", err)
		}
	}
	var body any
	if p.Body != nil {
		body = string(p.Body)
	}
	if err := tx.ExecLater(ctx, `INSERT INTO hub_push (platform_id, module, object_key, method, path, body, full_object, state,
		correlation_id, created_at, updated_at, to_country_code, to_party_id, from_country_code, from_party_id, iface, traceparent, fields)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13, $14, $15, $16, $17)`,
		platformID, p.Module, p.ObjectKey, p.Method, p.Path, body, p.Full, statePending, p.CorrelationID, now,
		p.To.CountryCode, p.To.PartyID, p.From.CountryCode, p.From.PartyID, iface(p), tracing.FromContext(ctx).TraceParent(),
		collapseFields(p)); err != nil {
		return fmt.Errorf("enqueue push: %w", err)
	}
	tx.AfterCommit(func() { h.engine.Wake(platformID) })
	return nil
}

// markResync records that a platform must get an object again in full.
func (h *Hub) markResync(ctx context.Context, tx *store.Tx, platformID int64, module, key string) error {
	_, err := tx.Exec(ctx, `INSERT INTO hub_resync (platform_id, module, object_key, marked_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (platform_id, module, object_key) DO NOTHING`, platformID, module, key, h.now())
	return err
}

// PushArgs is the job that worked one (platform, module, object) queue of
// the outbox before delivery ran in process. Jobs of it left in a database
// from then only wake the delivery of their platform.
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
	traceparent   string
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
//
// Changes recorded but not yet expanded into per-receiver pushes are
// expanded first, so the outbox shows every committed change.
func (h *Hub) Outbox(ctx context.Context, platformID int64, states ...string) ([]OutboxEntry, error) {
	if _, err := h.Expand(ctx); err != nil {
		return nil, err
	}
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
