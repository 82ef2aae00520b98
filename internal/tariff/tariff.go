// Package tariff stores the Tariffs CPOs publish through the hub, serves them
// to eMSPs, and broadcasts their changes.
//
// A tariff is a document (tariffs.body, the canonical JSON as sent, unknown
// fields kept). A DELETE of a tariff that a connector still lists in its
// tariff_ids is accepted and broadcast: tariffs.md §1 only recommends that
// the CPO re-points the connectors first, and refusing would leave every eMSP
// holding a tariff its owner deleted. The connectors still naming it are
// logged (and named in the CPO's answer's status_message), so the operator
// can chase the CPO.
package tariff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Module is the OCPI module identifier.
const Module = "tariffs"

// Service manages tariffs.
type Service struct {
	db     *store.DB
	hub    *hub.Hub
	clock  clock.Clock
	logger *slog.Logger
	totals *store.Totals
}

// New returns a Service and registers it as the hub's source of tariffs.
func New(db *store.DB, h *hub.Hub, clk clock.Clock, logger *slog.Logger) *Service {
	clk = clock.OrReal(clk)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{db: db, hub: h, clock: clk, logger: logger, totals: &store.Totals{TTL: 5 * time.Second, Now: clk.Now}}
	if h != nil {
		h.Register(Module, source{s.current})
	}
	return s
}

// Ref names a tariff.
type Ref struct{ CountryCode, PartyID, ID string }

func (r Ref) path() string { return hub.PathOf(ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), r.ID) }

// String names the tariff in messages.
func (r Ref) String() string { return ocpi.Key(r.CountryCode) + "/" + ocpi.Key(r.PartyID) + "/" + r.ID }

func errUnknown(r Ref) error {
	return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "unknown tariff " + r.ID + " of " + ocpi.Key(r.CountryCode) + "/" + ocpi.Key(r.PartyID)}
}

// Change is who makes a change and how it is traced.
type Change struct {
	PlatformID    int64
	CorrelationID string
}

// Get returns a stored tariff.
func (s *Service) Get(ctx context.Context, r Ref) (json.RawMessage, error) {
	var body []byte
	err := s.db.Read().QueryRow(ctx, "SELECT body FROM tariffs WHERE country_code = $1 AND party_id = $2 AND id = $3",
		ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.ID)).Scan(&body)
	if errors.Is(err, store.ErrNoRows) {
		return nil, errUnknown(r)
	}
	return body, err
}

// Filter restricts a listing to one CPO.
type Filter struct{ CountryCode, PartyID string }

// List returns a page of tariffs of every CPO (or one).
func (s *Service) List(ctx context.Context, f Filter, p ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
	l := store.List{Table: "tariffs", Columns: "pk, last_updated, body", Totals: s.totals}.WithPage(p)
	if f.CountryCode != "" {
		l.Where = []string{"country_code = $1", "party_id = $2"}
		l.Args = []any{ocpi.Key(f.CountryCode), ocpi.Key(f.PartyID)}
	}
	return store.Documents(ctx, s.db.Read(), l)
}

// Validate decodes and checks a tariff body against the ref.
func Validate(r Ref, raw []byte) (*ocpi.Tariff, []byte, error) {
	var t ocpi.Tariff
	if err := ocpi.DecodeValid(raw, &t); err != nil {
		return nil, nil, err
	}
	switch {
	case !ocpi.EqualCI(t.CountryCode, r.CountryCode):
		return nil, nil, ocpi.Invalid("country_code", "must equal the country_code of the URL ("+r.CountryCode+")")
	case !ocpi.EqualCI(t.PartyID, r.PartyID):
		return nil, nil, ocpi.Invalid("party_id", "must equal the party_id of the URL ("+r.PartyID+")")
	case !ocpi.EqualCI(t.ID, r.ID):
		return nil, nil, ocpi.Invalid("id", "must equal the tariff_id of the URL ("+r.ID+")")
	}
	body, err := ocpi.Canonical(raw, &t)
	return &t, body, err
}

// Put creates or replaces a tariff. created reports a new one; changed is
// false when the stored body stayed the same (nothing is broadcast then). A
// tariff older than the stored one is an ocpi.StaleError.
func (s *Service) Put(ctx context.Context, ch Change, r Ref, raw []byte) (created, changed bool, err error) {
	t, body, err := Validate(r, raw)
	if err != nil {
		return false, false, err
	}
	fn := func(ctx context.Context, tx *store.Tx) error {
		old, found, err := lockTariff(ctx, tx, r)
		if err != nil {
			return err
		}
		created, changed, err = s.write(ctx, tx, ch, r, old, found, t, body)
		return err
	}
	err = s.db.InTxRetryUnique(ctx, fn)
	return created, changed, err
}

// Patch merges a partial tariff into the stored one (OCPI 2.1.1 has a tariff
// PATCH; 2.2.1 does not) and stores the result whole, broadcast as a PUT.
// The merge is ocpi.MergePatch of the row read under its lock, in the
// transaction that writes it, so concurrent PATCHes of different fields
// both survive. patch must carry last_updated (the legacy handler stamps
// the arrival time on one without); one older than the stored tariff is an
// ocpi.StaleError.
func (s *Service) Patch(ctx context.Context, ch Change, r Ref, patch ocpi.Object) (changed bool, err error) {
	lu, _ := patch["last_updated"].(string)
	if _, err := ocpi.ParseDateTime(lu); err != nil {
		return false, ocpi.Invalid("last_updated", "is required in a PATCH: "+err.Error())
	}
	if err := ocpi.PatchIdentity(patch, map[string]string{"country_code": r.CountryCode, "party_id": r.PartyID, "id": r.ID}); err != nil {
		return false, err
	}
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		old, err := lockKnown(ctx, tx, r)
		if err != nil {
			return err
		}
		doc, err := ocpi.ParseObject(old)
		if err != nil {
			return err
		}
		ocpi.MergePatch(doc, patch)
		merged, err := ocpi.MarshalObject(doc)
		if err != nil {
			return err
		}
		t, body, err := Validate(r, merged)
		if err != nil {
			return err
		}
		// write compares the merged last_updated (the PATCH's) with the
		// stored one after the merged tariff passed validation.
		_, changed, err = s.write(ctx, tx, ch, r, old, true, t, body)
		return err
	})
	return changed, err
}

// write stores a validated tariff over the locked row (old, when found) and
// broadcasts it, inside tx.
func (s *Service) write(ctx context.Context, tx *store.Tx, ch Change, r Ref, old []byte, found bool, t *ocpi.Tariff, body []byte) (created, changed bool, err error) {
	if found {
		if err := ocpi.CheckFresh(Module, "tariff "+r.String(), ocpi.LastUpdatedOf(old), t.LastUpdated); err != nil {
			return false, false, err
		}
		if sameJSON(old, body) {
			return false, false, nil
		}
	}
	if found {
		// A replaced tariff keeps its place in every CPO filter: only the
		// totals of date windows can change.
		tx.AfterCommit(s.totals.Moved)
	} else {
		tx.AfterCommit(s.totals.Invalidate)
	}
	// Queued (ExecLater): on PostgreSQL the row travels with the broadcast's
	// statements or the COMMIT.
	if found {
		err = tx.ExecLater(ctx, "UPDATE tariffs SET last_updated = $1, body = $2 WHERE country_code = $3 AND party_id = $4 AND id = $5",
			t.LastUpdated.Micros(), string(body), ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.ID))
	} else {
		err = tx.ExecLater(ctx, "INSERT INTO tariffs (country_code, party_id, id, last_updated, body) VALUES ($1, $2, $3, $4, $5)",
			ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.ID), t.LastUpdated.Micros(), string(body))
	}
	if err != nil {
		return false, false, err
	}
	return !found, true, s.broadcast(ctx, tx, ch, hub.Push{Method: http.MethodPut, Path: Ref{r.CountryCode, r.PartyID, t.ID}.path(), Body: body})
}

// Delete removes a tariff and broadcasts the DELETE, even while connectors
// still list it in their tariff_ids (see the package comment). dangling names
// up to 10 of those connectors (location/evse/connector), for the answer and
// the log.
func (s *Service) Delete(ctx context.Context, ch Change, r Ref) (dangling []string, err error) {
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		old, err := lockKnown(ctx, tx, r)
		if err != nil {
			return err
		}
		if dangling, err = referencedBy(ctx, tx, r); err != nil {
			return err
		}
		tx.AfterCommit(s.totals.Invalidate)
		if _, err := tx.Exec(ctx, "DELETE FROM tariffs WHERE country_code = $1 AND party_id = $2 AND id = $3",
			ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.ID)); err != nil {
			return err
		}
		id := r.ID
		var t struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(old, &t) == nil && t.ID != "" {
			id = t.ID
		}
		return s.broadcast(ctx, tx, ch, hub.Push{Method: http.MethodDelete, Path: Ref{r.CountryCode, r.PartyID, id}.path()})
	})
	if err != nil {
		return nil, err
	}
	if len(dangling) > 0 {
		s.logger.WarnContext(ctx, "tariff deleted while connectors still list it", "tariff", ocpi.Key(r.CountryCode)+"/"+ocpi.Key(r.PartyID)+"/"+r.ID,
			"connectors", strings.Join(dangling, ", "))
	}
	return dangling, nil
}

// referencedBy lists (up to 10) connectors whose tariff_ids name the tariff,
// as location/evse/connector.
func referencedBy(ctx context.Context, q store.Querier, r Ref) ([]string, error) {
	return store.QueryAll(ctx, q, func(row store.Row) (string, error) {
		var l, e, c string
		err := row.Scan(&l, &e, &c)
		return l + "/" + e + "/" + c, err
	}, `SELECT l.id, t.evse_uid, t.connector_id FROM tariff_refs t JOIN locations l ON l.pk = t.location_pk
		WHERE t.country_code = $1 AND t.party_id = $2 AND t.tariff_id = $3 ORDER BY l.id, t.evse_uid, t.connector_id LIMIT 10`,
		ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.ID))
}

func (s *Service) broadcast(ctx context.Context, tx *store.Tx, ch Change, p hub.Push) error {
	if s.hub == nil {
		return nil
	}
	parts := hub.SplitKey(strings.TrimPrefix(p.Path, "/"))
	p.Module, p.Full, p.CorrelationID = Module, true, ch.CorrelationID
	p.ObjectKey = hub.ObjectKey(parts...)
	return s.hub.Broadcast(ctx, tx, ch.PlatformID, hub.CPOAudience, p)
}

// lockTariff locks and reads a tariff row in tx.
func lockTariff(ctx context.Context, tx *store.Tx, r Ref) ([]byte, bool, error) {
	var body []byte
	found, err := tx.LockRow(ctx, "tariffs", "body", "country_code = $1 AND party_id = $2 AND id = $3",
		[]any{ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.ID)}, &body)
	return body, found, err
}

// lockKnown is lockTariff of a tariff that must exist: errUnknown when it
// does not.
func lockKnown(ctx context.Context, tx *store.Tx, r Ref) ([]byte, error) {
	old, found, err := lockTariff(ctx, tx, r)
	if err == nil && !found {
		err = errUnknown(r)
	}
	return old, err
}

// source is the hub's view of tariffs: the current one and the list of an
// initial load.
type source struct{ hub.PartySource }

// current gives the hub the current tariff (a PUT) or its deletion.
func (s *Service) current(ctx context.Context, tx *store.Tx, countryCode, partyID, id string) (hub.Push, bool, error) {
	r := Ref{countryCode, partyID, id}
	body, found, err := lockTariff(ctx, tx, r)
	if err != nil {
		return hub.Push{}, false, err
	}
	if !found {
		return hub.Push{Method: http.MethodDelete, Path: r.path()}, true, nil
	}
	var t struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(body, &t) == nil && t.ID != "" {
		r.ID = t.ID
	}
	return hub.Push{Method: http.MethodPut, Path: r.path(), Body: body}, true, nil
}

// Lookup finds the owner of a tariff id, for a directory GET that does not
// name it; several owners is a 2001 asking for OCPI-to-*.
func (s *Service) Lookup(ctx context.Context, id string) (cc, pid string, err error) {
	owners, err := routing.Owners(ctx, s.db.Read(), routing.Tariffs, id)
	if err != nil {
		return "", "", err
	}
	switch len(owners) {
	case 0:
		return "", "", errUnknown(Ref{ID: id})
	case 1:
		return owners[0].CountryCode, owners[0].PartyID, nil
	}
	first := owners[0].CountryCode + "/" + owners[0].PartyID
	return "", "", &ocpi.Error{Code: ocpi.EINVALID, Field: "tariff_id",
		Issue:   "is used by several CPOs; name the owner with OCPI-to-country-code and OCPI-to-party-id",
		Message: "tariff " + id + " exists at several CPOs (" + first + ", …); send OCPI-to-country-code and OCPI-to-party-id"}
}

// sameJSON compares a stored body (one stored on PostgreSQL before
// migration 1140 has JSONB's spacing and key order) with a canonical one.
func sameJSON(stored, canon []byte) bool {
	o, err := ocpi.ParseObject(stored)
	if err != nil {
		return false
	}
	b, err := ocpi.MarshalObject(o)
	return err == nil && bytes.Equal(b, canon)
}

// List gives the hub the tariffs for a new receiver's initial load, in pk
// order.
func (src source) List(ctx context.Context, tx *store.Tx, after int64, limit int) ([]hub.Listed, error) {
	return hub.ListObjects(ctx, tx, "SELECT pk, country_code, party_id, id FROM tariffs WHERE pk > $1 ORDER BY pk LIMIT $2", after, limit)
}
