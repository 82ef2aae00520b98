// Package location is the directory of Locations, EVSEs and Connectors that
// CPOs publish through the hub: validation, storage, the eMSP/driver
// directory, broadcast to receivers, pull recovery and the driver search.
//
// A location is stored as a document (locations.body, the canonical JSON the
// CPO sent, unknown fields included) with key columns; its EVSEs are indexed
// in evses (status, power, connector types) and the tariffs its connectors
// reference in tariff_refs. The body is the source of truth.
//
// Rules the spec leaves to us, decided here:
//   - EVSEs are never deleted: a PUT or PATCH of a location whose evses list
//     lacks a stored EVSE is rejected (send it with status REMOVED). A PATCH
//     never removes anything: lists of EVSEs or connectors it carries are
//     merged by uid/id and must contain every stored one.
//   - PATCH merges like JSON Merge Patch (RFC 7396): objects field by field,
//     lists and values replaced, except the evses and connectors lists.
//   - last_updated is stored as sent; EVSE- and connector-level changes raise
//     the parents' last_updated to theirs when it is later (the cascade the
//     spec demands of receivers), never lower it.
//   - A change that leaves the stored body byte-for-byte the same is answered
//     as a success and neither broadcast nor emitted.
package location

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Module is the OCPI module identifier.
const Module = "locations"

// Service manages the location directory.
type Service struct {
	db     *store.DB
	hub    *hub.Hub
	events event.Emitter
	clock  clock.Clock
	logger *slog.Logger
	// positions counts the directory and finds its OFFSET pages (list.go).
	positions *store.Positions
}

// New returns a Service and registers it as the hub's source of locations.
func New(db *store.DB, h *hub.Hub, events event.Emitter, clk clock.Clock, logger *slog.Logger) *Service {
	events = event.OrDiscard(events)
	clk = clock.OrReal(clk)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{db: db, hub: h, events: events, clock: clk, logger: logger, positions: &store.Positions{TTL: 5 * time.Second, Now: clk.Now}}
	if h != nil {
		h.Register(Module, source{s.current})
		h.Adapt(Module, adaptPublished)
	}
	return s
}

// Ref addresses a location, or an EVSE or connector in it.
type Ref struct {
	CountryCode, PartyID string
	LocationID           string
	EVSEUID              string
	ConnectorID          string
}

// Level is what the ref names: "location", "evse" or "connector".
func (r Ref) Level() string {
	switch {
	case r.ConnectorID != "":
		return "connector"
	case r.EVSEUID != "":
		return "evse"
	}
	return "location"
}

func (r Ref) key() string { return hub.ObjectKey(r.CountryCode, r.PartyID, r.LocationID) }

// path is the push path of the ref's object, with the ids as the body has
// them.
func (r Ref) path() string {
	parts := []string{ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), r.LocationID}
	if r.EVSEUID != "" {
		parts = append(parts, r.EVSEUID)
	}
	if r.ConnectorID != "" {
		parts = append(parts, r.ConnectorID)
	}
	return hub.PathOf(parts...)
}

func (r Ref) String() string {
	s := ocpi.Key(r.CountryCode) + "/" + ocpi.Key(r.PartyID) + "/" + r.LocationID
	if r.EVSEUID != "" {
		s += "/" + r.EVSEUID
	}
	if r.ConnectorID != "" {
		s += "/" + r.ConnectorID
	}
	return s
}

// errUnknown is the error of a ref that names nothing stored: HTTP 404 with
// OCPI 2003 (unknown location).
func errUnknown(r Ref) error {
	what := "location " + r.LocationID
	switch r.Level() {
	case "evse":
		what = "EVSE " + r.EVSEUID + " of location " + r.LocationID
	case "connector":
		what = "connector " + r.ConnectorID + " of EVSE " + r.EVSEUID + " of location " + r.LocationID
	}
	if r.CountryCode != "" || r.PartyID != "" {
		what += " of " + ocpi.Key(r.CountryCode) + "/" + ocpi.Key(r.PartyID)
	}
	return &ocpi.Error{Code: ocpi.EUNKNOWNLOCATION, Message: "unknown " + what}
}

// Get returns the stored Location, EVSE or Connector the ref names.
func (s *Service) Get(ctx context.Context, r Ref) (json.RawMessage, error) {
	body, err := s.storedBody(ctx, r)
	if err != nil {
		return nil, err
	}
	return pick(body, r)
}

// storedBody reads the stored body of the location r names
// (EUNKNOWNLOCATION when there is none). ReadIn: the session service looks
// EVSE ids up inside its write transaction.
func (s *Service) storedBody(ctx context.Context, r Ref) ([]byte, error) {
	var body []byte
	err := s.db.ReadIn(ctx).QueryRow(ctx, "SELECT body FROM locations WHERE country_code = $1 AND party_id = $2 AND id = $3",
		ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.LocationID)).Scan(&body)
	if errors.Is(err, store.ErrNoRows) {
		return nil, errUnknown(r)
	}
	return body, err
}

// pick extracts the EVSE or connector a ref names from a location body.
func pick(body []byte, r Ref) (json.RawMessage, error) {
	if r.Level() == "location" {
		return body, nil
	}
	doc, err := ocpi.ParseObject(body)
	if err != nil {
		return nil, err
	}
	evse := findItem(doc["evses"], "uid", r.EVSEUID)
	if evse == nil {
		return nil, errUnknown(r)
	}
	if r.ConnectorID == "" {
		return ocpi.MarshalObject(evse)
	}
	conn := findItem(evse["connectors"], "id", r.ConnectorID)
	if conn == nil {
		return nil, errUnknown(r)
	}
	return ocpi.MarshalObject(conn)
}

// findItem returns the object in a JSON list whose key field equals id
// (CiString).
func findItem(list any, key, id string) map[string]any {
	items, _ := list.([]any)
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		if v, _ := m[key].(string); strings.EqualFold(v, id) {
			return m
		}
	}
	return nil
}

// Lookup finds a location by id alone, for a directory GET that does not
// name the owner. It is ErrAmbiguous when several CPOs use the id.
func (s *Service) Lookup(ctx context.Context, locationID string) (cc, pid string, err error) {
	owners, err := routing.Owners(ctx, s.db.ReadIn(ctx), routing.Locations, locationID)
	if err != nil {
		return "", "", err
	}
	switch len(owners) {
	case 0:
		return "", "", errUnknown(Ref{LocationID: locationID})
	case 1:
		return owners[0].CountryCode, owners[0].PartyID, nil
	}
	names := make([]string, len(owners))
	for i, o := range owners {
		names[i] = o.CountryCode + "/" + o.PartyID
	}
	return "", "", ambiguous(locationID, names)
}

// source is the hub's view of locations: the current one and the list of
// an initial load.
type source struct{ hub.PartySource }

// current gives the hub the current body of a location as a full PUT.
func (s *Service) current(ctx context.Context, tx *store.Tx, countryCode, partyID, id string) (hub.Push, bool, error) {
	cur, err := lockLocation(ctx, tx, Ref{CountryCode: countryCode, PartyID: partyID, LocationID: id})
	if err != nil || cur == nil {
		return hub.Push{}, false, err
	}
	r := Ref{CountryCode: countryCode, PartyID: partyID, LocationID: cur.id}
	return hub.Push{Method: "PUT", Path: r.path(), Body: cur.body}, true, nil
}

// List gives the hub the locations for a new receiver's initial load, in pk
// order.
func (src source) List(ctx context.Context, tx *store.Tx, after int64, limit int) ([]hub.Listed, error) {
	return hub.ListObjects(ctx, tx, "SELECT pk, country_code, party_id, id FROM locations WHERE pk > $1 ORDER BY pk LIMIT $2", after, limit)
}
