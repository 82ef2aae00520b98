package location

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Change is who makes a change and how it is traced.
type Change struct {
	// PlatformID is the sending platform: it never gets its own change back.
	PlatformID int64
	// CorrelationID continues the sender's request chain in the pushes.
	CorrelationID string
}

// Result says what a write did.
type Result struct {
	// Created is true when the object the ref names did not exist.
	Created bool
	// Changed is false when the stored body stayed the same.
	Changed bool
}

// stored is a locked location row.
type stored struct {
	pk   int64
	lu   int64  // the last_updated column: the row's place in the directory
	id   string // as the body spells it
	body []byte
	// canon is body in the canonical form (a body stored on PostgreSQL
	// before migration 1140 has JSONB's spacing): what a new body is
	// compared with.
	canon []byte
	doc   ocpi.Object
}

// lockLocation locks and reads a location row inside tx (nil when absent):
// a write of the same location waits for this transaction, which is what
// orders the outbox (hub.Broadcast). One statement: on PostgreSQL the
// read takes the row lock (FOR UPDATE); on SQLite a write transaction
// (BEGIN IMMEDIATE) already excludes every other writer.
func lockLocation(ctx context.Context, tx *store.Tx, r Ref) (*stored, error) {
	cur, err := lockRow(ctx, tx, r)
	if cur == nil || err != nil {
		return nil, err
	}
	return cur.parse()
}

// lockRow is lockLocation without decoding the body (pk, last_updated and body only).
func lockRow(ctx context.Context, tx *store.Tx, r Ref) (*stored, error) {
	args := []any{ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.LocationID)}
	q := "SELECT pk, last_updated, body FROM locations WHERE country_code = $1 AND party_id = $2 AND id = $3"
	if tx.Engine() == store.Postgres {
		q += " FOR UPDATE"
	}
	var cur stored
	err := tx.QueryRow(ctx, q, args...).Scan(&cur.pk, &cur.lu, &cur.body)
	if errors.Is(err, store.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &cur, nil
}

// holds reports whether the row holds body, a document in canonical form.
// A row lockRow read without decoding it is compared as it lies: a body the
// hub wrote is in canonical form, and one with white space between its
// tokens (a row PostgreSQL stored as JSONB before migration 1140) is put in
// canonical form first.
func (cur *stored) holds(body []byte) bool {
	switch {
	case cur.canon != nil:
		return bytes.Equal(cur.canon, body)
	case bytes.Equal(cur.body, body):
		return true
	case compact(cur.body):
		return false
	}
	_, canon, err := ocpi.ParseStored(cur.body)
	return err == nil && bytes.Equal(canon, body)
}

// compact reports whether a JSON text has no white space between its
// tokens, as the hub writes documents.
func compact(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\n' || c == '\t' || c == '\r'):
			return false
		}
	}
	return true
}

// parse decodes the body of a row lockRow read.
func (cur *stored) parse() (*stored, error) {
	var err error
	if cur.doc, cur.canon, err = ocpi.ParseStored(cur.body); err != nil {
		return nil, err
	}
	cur.id, _ = cur.doc["id"].(string)
	return cur, nil
}

// decodeItem decodes raw, a full EVSE or connector, into v and checks it:
// its id (field, read by id) must be the one the URL names in param (want).
// It returns the item's canonical form, as a tree and as bytes.
func decodeItem(raw []byte, v ocpi.Checkable, field string, id func() string, param, want string) (ocpi.Object, []byte, error) {
	if err := ocpi.DecodeValid(raw, v); err != nil {
		return nil, nil, err
	}
	if !ocpi.EqualCI(id(), want) {
		return nil, nil, ocpi.Invalid(field, "must equal the "+param+" of the URL ("+want+")")
	}
	canon, err := ocpi.Canonical(raw, v)
	if err != nil {
		return nil, nil, err
	}
	item, _ := ocpi.ParseObject(canon)
	return item, canon, nil
}

// Put creates or replaces the Location, EVSE or Connector the ref names with
// raw (a full object). An EVSE or connector is created inside its location,
// which must exist.
func (s *Service) Put(ctx context.Context, ch Change, r Ref, raw []byte) (Result, error) {
	var res Result
	level := r.Level()
	var item ocpi.Object // the EVSE or connector, canonical
	var itemCanon []byte // the same as bytes
	var err error
	switch level {
	case "location":
		var loc ocpi.Location
		if err := ocpi.DecodeValid(raw, &loc); err != nil {
			return res, err
		}
		if err := matchOwner(r, loc.CountryCode, loc.PartyID, loc.ID); err != nil {
			return res, err
		}
		return s.putLocation(ctx, ch, r, &loc, raw)
	case "evse":
		var e ocpi.EVSE
		if item, itemCanon, err = decodeItem(raw, &e, "uid", func() string { return e.UID }, "evse_uid", r.EVSEUID); err != nil {
			return res, err
		}
	case "connector":
		var k ocpi.Connector
		if item, _, err = decodeItem(raw, &k, "id", func() string { return k.ID }, "connector_id", r.ConnectorID); err != nil {
			return res, err
		}
	}
	err = s.db.InSharedRetryUnique(ctx, func(ctx context.Context, tx *store.Tx) error {
		res = Result{}
		row, err := lockRow(ctx, tx, r)
		if err != nil {
			return err
		}
		if row == nil {
			return errUnknown(Ref{CountryCode: r.CountryCode, PartyID: r.PartyID, LocationID: r.LocationID})
		}
		if level == "evse" {
			lu, _ := item["last_updated"].(string)
			next, created, ok, err := putEVSEInPlace(row.body, r, itemCanon, lu, newestOf(item))
			if err != nil {
				return err
			}
			if ok {
				res.Created = created
				var loc ocpi.Location
				if err := ocpi.DecodeValid(next, &loc); err != nil {
					return err
				}
				r.EVSEUID, _ = item["uid"].(string)
				return s.saveFinal(ctx, tx, ch, r, row, &loc, next, http.MethodPut, nil, itemCanon, &res)
			}
		}
		cur, err := row.parse()
		if err != nil {
			return err
		}
		if res.Created, err = putItem(cur.doc, r, item); err != nil {
			return err
		}
		return s.save(ctx, tx, ch, r, cur, cur.doc, http.MethodPut, nil, &res)
	})
	return res, err
}

// putItem puts item, the canonical form of the EVSE or connector r names,
// into doc, the stored location decoded, and raises the last_updated of what
// holds it. It reports whether the item is new.
func putItem(doc ocpi.Object, r Ref, item ocpi.Object) (created bool, err error) {
	lu, _ := item["last_updated"].(string)
	if r.Level() == "evse" {
		created, err = putInList(doc, "evses", "uid", r.EVSEUID, r, item)
	} else {
		evse := findItem(doc["evses"], "uid", r.EVSEUID)
		if evse == nil {
			return false, errUnknown(Ref{CountryCode: r.CountryCode, PartyID: r.PartyID, LocationID: r.LocationID, EVSEUID: r.EVSEUID})
		}
		created, err = putInList(evse, "connectors", "id", r.ConnectorID, r, item)
		if err == nil {
			raiseLastUpdated(evse, lu)
		}
	}
	if err == nil {
		raiseLastUpdated(doc, lu)
	}
	return created, err
}

// putInList puts item into holder's list key in place of the item whose
// idKey is id (appended when there is none), after the staleness rule
// against that item. It reports whether the item is new.
func putInList(holder ocpi.Object, key, idKey, id string, r Ref, item ocpi.Object) (bool, error) {
	list, _ := holder[key].([]any)
	old := findItem(list, idKey, id)
	if err := checkFresh(r, old, newestOf(item)); err != nil {
		return false, err
	}
	if old == nil {
		holder[key] = append(list, item)
	} else {
		replaceItem(list, idKey, id, item)
	}
	return old == nil, nil
}

// putEVSEInPlace is an EVSE's PUT applied to the stored location's bytes
// (stored): the EVSE's canonical form (item, last updated at itemLU, its
// newest timestamp newest) set where the EVSE lies or appended to the list,
// and the location's last_updated raised to itemLU, with sjson. The stored
// document is in canonical form, and so is the item, so the result is too:
// nothing is decoded, merged or written out again. It returns the new
// document and whether the EVSE is new; ok is false, with nothing done, for
// what it leaves to the tree (a row not in the hub's compact form, a
// location without an EVSE list or a last_updated, where a member would be
// added out of order), and true with the staleness error of an older PUT.
func putEVSEInPlace(stored []byte, r Ref, item []byte, itemLU string, newest ocpi.DateTime) (next []byte, created, ok bool, err error) {
	if !compact(stored) {
		return nil, false, false, nil
	}
	doc := gjson.ParseBytes(stored)
	evses, docLU := doc.Get("evses"), doc.Get("last_updated")
	if !doc.IsObject() || !evses.IsArray() || !docLU.Exists() {
		return nil, false, false, nil
	}
	idx, i := -1, 0
	var evse gjson.Result
	evses.ForEach(func(_, v gjson.Result) bool {
		if uid := v.Get("uid"); v.IsObject() && uid.Type == gjson.String && ocpi.EqualCI(uid.Str, r.EVSEUID) {
			idx, evse = i, v
			return false
		}
		i++
		return true
	})
	var was ocpi.DateTime
	if idx >= 0 {
		was = newestIn([]byte(evse.Raw))
	}
	if err := ocpi.CheckFresh(Module, r.Level()+" "+r.String(), was, newest); err != nil {
		return nil, false, true, err
	}
	at := "evses.-1" // appended
	if idx >= 0 {
		at = "evses." + strconv.Itoa(idx)
	}
	if next, err = sjson.SetRawBytes(stored, at, item); err != nil {
		return nil, false, false, err
	}
	// raiseLastUpdated on the bytes.
	if lu, err := ocpi.ParseDateTime(itemLU); err == nil {
		if c, err := ocpi.ParseDateTime(docLU.String()); docLU.Type != gjson.String || err != nil || lu.After(c.Time) {
			if next, err = sjson.SetBytes(next, "last_updated", lu.String()); err != nil {
				return nil, false, false, err
			}
		}
	}
	return next, idx < 0, true, nil
}

// putLocation stores loc, received as raw and validated, as the whole
// location r names. Its canonical form is made before the transaction, and
// inside it the stored row is read as it lies: its freshness and EVSEs are
// checked where they stand in its bytes (newestIn, keepsEVSEsIn), and the
// new document is the canonical form itself, with nothing to merge. Under
// the writer (SQLite's one connection, a PostgreSQL row lock) the request
// only reads the stored bytes (the index rows they held too: indexIn).
//
// Decided here: the stored document is the canonical form of the body as
// received. Before, the received tree was written out and decoded again,
// which for a body holding one member under two spellings ("status" and
// "Status") could validate one value and store the other; now the value
// validated is the value stored, as for an EVSE or connector PUT.
func (s *Service) putLocation(ctx context.Context, ch Change, r Ref, loc *ocpi.Location, raw []byte) (Result, error) {
	var res Result
	body, err := ocpi.Canonical(raw, loc)
	if err != nil {
		return res, err
	}
	err = s.db.InSharedRetryUnique(ctx, func(ctx context.Context, tx *store.Tx) error {
		res = Result{}
		cur, err := lockRow(ctx, tx, r)
		if err != nil {
			return err
		}
		res.Created = cur == nil
		if cur != nil {
			if err := ocpi.CheckFresh(Module, r.Level()+" "+r.String(), newestIn(cur.body), newestIn(body)); err != nil {
				return err
			}
			if err := keepsEVSEsIn(cur.body, body, "evses"); err != nil {
				return err
			}
		}
		return s.saveFinal(ctx, tx, ch, r, cur, loc, body, http.MethodPut, nil, nil, &res)
	})
	return res, err
}

// Patch merges raw (a partial object with last_updated) into the Location,
// EVSE or Connector the ref names.
func (s *Service) Patch(ctx context.Context, ch Change, r Ref, raw []byte) (Result, error) {
	var res Result
	level := r.Level()
	// The typed decode names fields of the wrong type; the checks of
	// required fields and values run on the merged object.
	var shape any
	switch level {
	case "location":
		shape = &ocpi.Location{}
	case "evse":
		shape = &ocpi.EVSE{}
	default:
		shape = &ocpi.Connector{}
	}
	patch, err := ocpi.ParseObject(raw)
	if err != nil {
		// The typed decode names the field when the body is JSON.
		if derr := ocpi.Decode(raw, shape); derr != nil {
			return res, derr
		}
		return res, err
	}
	// A status patch's two fields are checked by asStatusPatch: the typed
	// decode would only repeat it.
	fast, isStatus := asStatusPatch(r, patch)
	if !isStatus {
		if err := ocpi.Decode(raw, shape); err != nil {
			return res, err
		}
	}
	lu, ok := patch["last_updated"].(string)
	if !ok || lu == "" {
		return res, ocpi.Invalid("last_updated", "is required in a PATCH")
	}
	if _, err := ocpi.ParseDateTime(lu); err != nil {
		return res, ocpi.Invalid("last_updated", err.Error())
	}
	if err := patchKeepsIdentity(r, patch); err != nil {
		return res, err
	}
	err = s.db.InSharedRetryUnique(ctx, func(ctx context.Context, tx *store.Tx) error {
		res = Result{}
		cur, err := lockRow(ctx, tx, r)
		if err != nil {
			return err
		}
		if cur == nil {
			return errUnknown(Ref{CountryCode: r.CountryCode, PartyID: r.PartyID, LocationID: r.LocationID})
		}
		if isStatus {
			if done, err := s.applyStatus(ctx, tx, ch, r, cur.pk, cur.body, fast, &res); done || err != nil {
				return err
			}
		}
		if cur, err = cur.parse(); err != nil {
			return err
		}
		doc := cur.doc
		target := doc
		var evse ocpi.Object
		if level != "location" {
			if evse = findItem(doc["evses"], "uid", r.EVSEUID); evse == nil {
				return errUnknown(Ref{CountryCode: r.CountryCode, PartyID: r.PartyID, LocationID: r.LocationID, EVSEUID: r.EVSEUID})
			}
			target = evse
		}
		if level == "connector" {
			if target = findItem(evse["connectors"], "id", r.ConnectorID); target == nil {
				return errUnknown(r)
			}
		}
		storedTarget := ocpi.Object{"last_updated": newestOf(target).String()}
		oldLU, _ := target["last_updated"].(string)
		if err := merge(target, patch, ""); err != nil {
			return err
		}
		// The object's last_updated only moves forward.
		if oldLU != "" {
			target["last_updated"] = oldLU
			raiseLastUpdated(target, lu)
		}
		// Check the patched object alone first, so the field paths are
		// relative to the URL's object.
		if err := checkItem(level, target); err != nil {
			return err
		}
		// Bad input is refused as such even when it is stale too.
		sent, _ := ocpi.ParseDateTime(lu)
		if err := checkFresh(r, storedTarget, sent); err != nil {
			return err
		}
		if level == "connector" {
			raiseLastUpdated(evse, lu)
		}
		if level != "location" {
			raiseLastUpdated(doc, lu)
		}
		method := http.MethodPatch
		if _, ok := patch["evses"]; ok && level == "location" {
			// A patched EVSE list goes out as the whole location.
			method = http.MethodPut
		}
		return s.save(ctx, tx, ch, r, cur, doc, method, patch, &res)
	})
	return res, err
}

// save validates the new location document, stores it, indexes it, and (when
// it changed) broadcasts the change and emits location.updated, all in tx.
// method and patch say what to push: a PUT of the ref's object, or a PATCH
// carrying the patched fields.
func (s *Service) save(ctx context.Context, tx *store.Tx, ch Change, r Ref, cur *stored, doc ocpi.Object, method string, patch ocpi.Object, res *Result) error {
	loc, body, err := finalize(doc)
	if err != nil {
		return err
	}
	return s.saveFinal(ctx, tx, ch, r, cur, loc, body, method, patch, nil, res)
}

// saveFinal is save of a document already validated (loc) and in canonical
// form (body). pushed, when the caller has it, is the canonical form of the
// object r names (its ids in r as stored), pushed as it is.
func (s *Service) saveFinal(ctx context.Context, tx *store.Tx, ch Change, r Ref, cur *stored, loc *ocpi.Location, body []byte, method string, patch ocpi.Object, pushed []byte, res *Result) error {
	if cur != nil && cur.holds(body) {
		return nil
	}
	res.Changed = true
	var old []byte
	if cur != nil {
		old = cur.body
	}
	pk, err := writeLocation(ctx, tx, cur, loc, body)
	if err != nil {
		return err
	}
	s.listed(tx, cur, pk, loc)
	if err := index(ctx, tx, pk, old, loc); err != nil {
		return err
	}
	// Push the object the ref names, with ids spelled as stored. A whole
	// location goes as it is stored: the canonical form written again is
	// itself.
	r.LocationID = loc.ID
	if method == http.MethodPut && r.Level() == "location" {
		return s.push(ctx, tx, ch, r, loc, body, method)
	}
	if pushed != nil {
		return s.push(ctx, tx, ch, r, loc, pushed, method)
	}
	final, err := ocpi.ParseObject(body)
	if err != nil {
		return err
	}
	var obj ocpi.Object = final
	if r.EVSEUID != "" {
		obj = findItem(final["evses"], "uid", r.EVSEUID)
		r.EVSEUID, _ = obj["uid"].(string)
	}
	if r.ConnectorID != "" {
		obj = findItem(obj["connectors"], "id", r.ConnectorID)
		r.ConnectorID, _ = obj["id"].(string)
	}
	if patch != nil && method == http.MethodPatch {
		out := ocpi.Object{}
		for k := range patch {
			if v, ok := obj[k]; ok {
				out[k] = v
			}
		}
		obj = out
	}
	pushBody, err := ocpi.MarshalObject(obj)
	if err != nil {
		return err
	}
	return s.push(ctx, tx, ch, r, loc, pushBody, method)
}

// push broadcasts the change of the object r names (pushBody, sent with
// method) and emits location.updated, in tx.
func (s *Service) push(ctx context.Context, tx *store.Tx, ch Change, r Ref, loc *ocpi.Location, pushBody []byte, method string) error {
	if s.hub != nil {
		p := hub.Push{Module: Module, ObjectKey: r.key(), Method: method, Path: r.path(), Body: pushBody,
			Full: method == http.MethodPut && r.Level() == "location", CorrelationID: ch.CorrelationID}
		if err := s.hub.Broadcast(ctx, tx, ch.PlatformID, hub.CPOAudience, p); err != nil {
			return err
		}
	}
	return s.emit(ctx, tx, r, loc)
}

// emit records location.updated for the change.
func (s *Service) emit(ctx context.Context, tx *store.Tx, r Ref, loc *ocpi.Location) error {
	status, evseID := "", ""
	if r.EVSEUID != "" {
		if e, _ := loc.EVSE(r.EVSEUID); e != nil {
			status, evseID = e.Status, e.EVSEID
		}
	}
	return s.emitData(ctx, tx, r, loc.CountryCode, loc.PartyID, loc.LastUpdated, status, evseID)
}

// emitData records location.updated for a change of the location r names
// (its ids as stored), with the EVSE's status and evse_id when r names an
// EVSE ("" when unknown).
func (s *Service) emitData(ctx context.Context, tx *store.Tx, r Ref, countryCode, partyID string, lastUpdated ocpi.DateTime, status, evseID string) error {
	data := map[string]any{
		"country_code": countryCode, "party_id": partyID, "location_id": r.LocationID,
		"last_updated": lastUpdated,
	}
	if r.EVSEUID != "" {
		data["evse_uid"] = r.EVSEUID
		if status != "" {
			data["status"] = status
		}
		if evseID != "" {
			data["evse_id"] = evseID
		}
	}
	if r.ConnectorID != "" {
		data["connector_id"] = r.ConnectorID
	}
	return s.events.Emit(ctx, tx, event.Event{Name: event.LocationUpdated, Data: data, Public: true,
		Parties: []event.Party{{Role: string(party.RoleCPO), CountryCode: ocpi.Key(countryCode), PartyID: ocpi.Key(partyID)}}})
}

// finalize validates a whole location document and returns its typed form
// and canonical body.
func finalize(doc ocpi.Object) (*ocpi.Location, []byte, error) {
	raw, err := ocpi.MarshalObject(doc)
	if err != nil {
		return nil, nil, err
	}
	var loc ocpi.Location
	if err := ocpi.DecodeValid(raw, &loc); err != nil {
		return nil, nil, err
	}
	body, err := ocpi.Canonical(raw, &loc)
	return &loc, body, err
}

// checkItem validates a patched EVSE or connector on its own.
func checkItem(level string, obj ocpi.Object) error {
	if level == "location" {
		return nil
	}
	raw, err := ocpi.MarshalObject(obj)
	if err != nil {
		return err
	}
	c := ocpi.NewCheck("")
	if level == "evse" {
		var e ocpi.EVSE
		if err := ocpi.Decode(raw, &e); err != nil {
			return err
		}
		e.Check(c)
	} else {
		var k ocpi.Connector
		if err := ocpi.Decode(raw, &k); err != nil {
			return err
		}
		k.Check(c)
	}
	return c.Err()
}
