package session

import (
	"bytes"
	"context"
	"errors"
	"net/http"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Change is who makes a change and how it is traced.
type Change struct {
	// CorrelationID continues the CPO's request chain in the pushes.
	CorrelationID string
	// Sender is the platform that sent the change (0: unknown): a change
	// is never routed back to it (a peer hub's own eMSP).
	Sender int64
}

// stored is a locked session row.
type stored struct {
	pk                   int64
	id                   string // as the body spells it
	body                 []byte
	canon                []byte // body in the canonical form (a body stored on PostgreSQL before migration 1140 has JSONB's): what a new body is compared with
	doc                  ocpi.Object
	owner                ocpiclient.Party
	startedAt, stoppedAt int64
}

const rowColumns = "pk, body, token_country_code, token_party_id, started_at, stopped_at"

// lock locks and reads a session row inside tx (nil when absent): a write
// of the same session waits for this transaction, which orders the outbox.
func lock(ctx context.Context, tx *store.Tx, r Ref) (*stored, error) {
	cur, err := lockRow(ctx, tx, r)
	if err != nil || cur == nil {
		return nil, err
	}
	return cur, cur.parse()
}

// lockRow is lock without parsing the body.
func lockRow(ctx context.Context, tx *store.Tx, r Ref) (*stored, error) {
	var cur stored
	found, err := tx.LockRow(ctx, "sessions", rowColumns, "country_code = $1 AND party_id = $2 AND id = $3", r.args(),
		&cur.pk, &cur.body, &cur.owner.CountryCode, &cur.owner.PartyID, &cur.startedAt, &cur.stoppedAt)
	if err != nil || !found {
		return nil, err
	}
	return &cur, nil
}

// read reads a session row outside a transaction (nil when absent),
// without a lock and without parsing its body: what a PATCH is applied to
// before its transaction compares the locked row with (stored.same).
func (s *Service) read(ctx context.Context, r Ref) (*stored, error) {
	var cur stored
	err := s.db.Read().QueryRow(ctx, "SELECT "+rowColumns+" FROM sessions WHERE country_code = $1 AND party_id = $2 AND id = $3",
		r.args()...).Scan(&cur.pk, &cur.body, &cur.owner.CountryCode, &cur.owner.PartyID, &cur.startedAt, &cur.stoppedAt)
	if errors.Is(err, store.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &cur, nil
}

// parse parses the row's body.
func (cur *stored) parse() (err error) {
	if cur.doc, cur.canon, err = ocpi.ParseStored(cur.body); err != nil {
		return err
	}
	cur.id, _ = cur.doc["id"].(string)
	return nil
}

// same reports whether cur (locked) is the row o was read as: no write of
// the session came between.
func (cur *stored) same(o *stored) bool {
	return cur.pk == o.pk && bytes.Equal(cur.body, o.body) && cur.owner == o.owner &&
		cur.startedAt == o.startedAt && cur.stoppedAt == o.stoppedAt
}

// Put creates or replaces a session with raw (a full Session, charging
// periods included). It reports whether the session is new.
func (s *Service) Put(ctx context.Context, ch Change, r Ref, raw []byte) (created bool, err error) {
	created, _, err = s.Store(ctx, ch, r, raw)
	return created, err
}

// Store is Put that also reports whether anything changed: a pull tells a
// copy it already holds from a new or updated one.
func (s *Service) Store(ctx context.Context, ch Change, r Ref, raw []byte) (created, changed bool, err error) {
	var sess ocpi.Session
	body, err := ocpi.DecodeChecked(raw, &sess, func() error { return checkSession(&sess, r) })
	if err != nil {
		return false, false, err
	}
	err = s.db.InSharedRetryUnique(ctx, func(ctx context.Context, tx *store.Tx) error {
		cur, err := lock(ctx, tx, r)
		if err != nil {
			return err
		}
		created = cur == nil
		if err := checkFresh(r, cur, &sess); err != nil {
			return err
		}
		if cur != nil && bytes.Equal(cur.canon, body) {
			return nil
		}
		changed = true
		push := hub.Push{Method: http.MethodPut, Path: r.path(sess.ID), Body: body, Full: true}
		return s.save(ctx, tx, ch, r, cur, &sess, body, push)
	})
	return created, changed, err
}

// Patch applies a partial Session to a stored one: charging_periods are
// appended, other fields merged. It must carry last_updated.
func (s *Service) Patch(ctx context.Context, ch Change, r Ref, raw []byte) error {
	var partial struct {
		LastUpdated     ocpi.DateTime         `json:"last_updated"`
		ChargingPeriods []ocpi.ChargingPeriod `json:"charging_periods"`
	}
	patch, err := ocpi.ParsePatch(raw, &partial, &partial.LastUpdated)
	if err != nil {
		return err
	}
	c := ocpi.NewCheck("")
	c.ChargingPeriods("charging_periods", partial.ChargingPeriods, nil)
	if err := c.Err(); err != nil {
		return err
	}
	if err := ocpi.PatchIdentity(patch, map[string]string{"country_code": r.CountryCode, "party_id": r.PartyID, "id": r.ID}); err != nil {
		return err
	}
	// On SQLite the members of a write batch run one after another on the
	// one writer, so the PATCH is applied (the document parsed, merged,
	// checked and put in canonical form: most of its cost) to the session as
	// read before the transaction; in it the locked row is compared with
	// what was read, and the PATCH applied again only when another write
	// changed the session in between. On PostgreSQL, where each write is a
	// transaction of its own and the read would be one more round trip, it
	// is applied in the transaction.
	var pre *stored
	var prepared *patched
	var preErr error
	applied := false
	if s.db.Engine() == store.SQLite {
		if pre, err = s.read(ctx, r); err == nil && pre != nil {
			prepared, preErr = applyTo(r, pre, patch)
		} else {
			pre = nil
		}
		if s.afterRead != nil {
			s.afterRead()
		}
	}
	return s.db.InSharedRetryUnique(ctx, func(ctx context.Context, tx *store.Tx) error {
		cur, err := lockRow(ctx, tx, r)
		if err != nil {
			return err
		}
		if cur == nil {
			return errUnknown(r)
		}
		p, err := prepared, preErr
		if pre != nil && cur.same(pre) {
			cur = pre
		} else {
			// Applied to the row as locked; from the body again when it
			// was applied before (before the transaction, or in a run of
			// this function a retry repeats): ApplyPatch may keep parts of
			// the patch it was given in the document it made.
			again := patch
			if pre != nil || applied {
				var perr error
				if again, perr = ocpi.ParsePatch(raw, &partial, &partial.LastUpdated); perr != nil {
					return perr
				}
			}
			applied = true
			p, err = applyTo(r, cur, again)
		}
		if err != nil || p.unchanged {
			return err
		}
		push := hub.Push{Method: http.MethodPatch, Path: r.path(cur.id), Body: p.patchBody}
		return s.save(ctx, tx, ch, r, cur, &p.sess, p.body, push)
	})
}

// patched is a PATCH applied to a stored session: the session it makes,
// its body in canonical form, and the PATCH as pushed to the eMSP.
type patched struct {
	sess            ocpi.Session
	body, patchBody []byte
	unchanged       bool // the PATCH changes nothing
}

// applyTo applies patch to cur (its body not parsed yet): a meter PATCH to
// the stored bytes (applyMeter), any other by the general path.
func applyTo(r Ref, cur *stored, patch ocpi.Object) (*patched, error) {
	if p, ok, err := applyMeter(r, cur, patch); ok {
		return p, err
	}
	if err := cur.parse(); err != nil {
		return nil, err
	}
	return applyPatch(r, cur, patch)
}

// applyPatch applies patch to cur (parsed): charging_periods appended,
// other fields merged, the result checked as a session, fresher than cur
// and of the same eMSP's token. It changes cur's document.
func applyPatch(r Ref, cur *stored, patch ocpi.Object) (*patched, error) {
	rest := ocpi.Object{}
	for k, v := range patch {
		rest[k] = v
	}
	// charging_periods are appended; absent, null or empty leaves them as
	// they are (sessions.md §3).
	if periods, ok := rest["charging_periods"].([]any); ok && len(periods) > 0 {
		existing, _ := cur.doc["charging_periods"].([]any)
		cur.doc["charging_periods"] = append(existing, periods...)
	}
	delete(rest, "charging_periods")
	p := &patched{}
	merged, err := ocpi.ApplyPatch(cur.doc, rest, &p.sess)
	if err != nil {
		return nil, err
	}
	if err := checkPatched(r, cur, &p.sess); err != nil {
		return nil, err
	}
	if p.body, err = ocpi.Canonical(merged, &p.sess); err != nil {
		return nil, err
	}
	if bytes.Equal(cur.canon, p.body) {
		p.unchanged = true
		return p, nil
	}
	if p.patchBody, err = ocpi.CanonicalPatch(patch); err != nil {
		return nil, err
	}
	return p, nil
}

// checkPatched checks a session a PATCH made: valid, fresher than cur and
// of the same eMSP's token.
func checkPatched(r Ref, cur *stored, sess *ocpi.Session) error {
	if err := checkSession(sess, r); err != nil {
		return err
	}
	if err := checkFresh(r, cur, sess); err != nil {
		return err
	}
	if owner := tokenOwner(sess); !samePartyCI(owner, cur.owner) {
		return ocpi.Invalid("cdr_token", "a PATCH cannot move a session to another eMSP's token; PUT the session")
	}
	return nil
}

// checkSession validates a session and its identity against the URL.
func checkSession(sess *ocpi.Session, r Ref) error {
	c := ocpi.NewCheck("")
	sess.Check(c)
	if err := c.Err(); err != nil {
		return err
	}
	switch {
	case !ocpi.EqualCI(sess.CountryCode, r.CountryCode):
		return ocpi.Invalid("country_code", "must equal the country_code in the URL ("+r.CountryCode+")")
	case !ocpi.EqualCI(sess.PartyID, r.PartyID):
		return ocpi.Invalid("party_id", "must equal the party_id in the URL ("+r.PartyID+")")
	case !ocpi.EqualCI(sess.ID, r.ID):
		return ocpi.Invalid("id", "must equal the session id in the URL ("+r.ID+")")
	}
	return nil
}

func tokenOwner(sess *ocpi.Session) ocpiclient.Party {
	return ocpiclient.Party{CountryCode: ocpi.Key(sess.CdrToken.CountryCode), PartyID: ocpi.Key(sess.CdrToken.PartyID)}
}

func samePartyCI(a, b ocpiclient.Party) bool {
	return ocpi.EqualCI(a.CountryCode, b.CountryCode) && ocpi.EqualCI(a.PartyID, b.PartyID)
}

// evseID looks the session's EVSE up in the directory, for the events: only
// a session that starts or stops needs it, so it is read then, in the
// session's transaction, not for every meter value a PATCH brings.
func (s *Service) evseID(ctx context.Context, r Ref, sess *ocpi.Session) string {
	if s.dir == nil || sess.EVSEUID == "#NA" {
		return ""
	}
	return s.dir.EVSEID(ctx, r.CountryCode, r.PartyID, sess.LocationID, sess.EVSEUID)
}

// save writes a session row, emits its events, routes push to the token
// owner and tells the observers, inside tx.
func (s *Service) save(ctx context.Context, tx *store.Tx, ch Change, r Ref, cur *stored, sess *ocpi.Session, body []byte,
	push hub.Push) error {
	now := s.clock.Now().UnixMicro()
	owner := tokenOwner(sess)
	startedAt, stoppedAt := int64(0), int64(0)
	if cur != nil {
		startedAt, stoppedAt = cur.startedAt, cur.stoppedAt
	}
	started := startedAt == 0 && (sess.Status == ocpi.SessionActive || sess.Status == ocpi.SessionCompleted)
	stopped := stoppedAt == 0 && (ocpi.IsFinalSessionStatus(sess.Status) || sess.EndDateTime != nil)
	if started {
		startedAt = now
	}
	if stopped {
		stoppedAt = now
	}
	// Read before the row is queued: the read would send the queued row
	// first, and a failure of it (a concurrent first PUT's key) would be
	// the read's, which looking an EVSE up ignores.
	evseID := ""
	if started || stopped {
		evseID = s.evseID(ctx, r, sess)
	}
	args := []any{owner.CountryCode, owner.PartyID, ocpi.Key(sess.CdrToken.UID), sess.AuthorizationReference, sess.Status,
		ocpi.Key(sess.LocationID), ocpi.Key(sess.EVSEUID), ocpi.Key(sess.ConnectorID), startedAt, stoppedAt,
		sess.LastUpdated.Micros(), string(body)}
	// The row is queued (ExecLater): on PostgreSQL it travels with the next
	// statement or the COMMIT instead of a round trip of its own; what
	// follows reads it in that order.
	var err error
	if cur == nil {
		err = tx.ExecLater(ctx, `INSERT INTO sessions (token_country_code, token_party_id, token_uid, authorization_reference, status,
			location_id, evse_uid, connector_id, started_at, stopped_at, last_updated, body, country_code, party_id, id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`, append(args, append(r.args(), now)...)...)
	} else {
		err = tx.ExecLater(ctx, `UPDATE sessions SET token_country_code = $1, token_party_id = $2, token_uid = $3,
			authorization_reference = $4, status = $5, location_id = $6, evse_uid = $7, connector_id = $8, started_at = $9,
			stopped_at = $10, last_updated = $11, body = $12 WHERE pk = $13`, append(args, cur.pk)...)
	}
	if err != nil {
		return err
	}
	st := &Stored{CountryCode: ocpi.Key(r.CountryCode), PartyID: ocpi.Key(r.PartyID), ID: sess.ID, Owner: owner, Status: sess.Status,
		AuthorizationReference: sess.AuthorizationReference, Session: *sess, Body: body}
	if started {
		if err := s.emit(ctx, tx, event.SessionStarted, st, evseID, sess.StartDateTime); err != nil {
			return err
		}
	}
	if stopped {
		at := sess.LastUpdated
		if sess.EndDateTime != nil {
			at = *sess.EndDateTime
		}
		if err := s.emit(ctx, tx, event.SessionStopped, st, evseID, at); err != nil {
			return err
		}
	}
	if err := s.route(ctx, tx, ch, r, owner, push); err != nil {
		return err
	}
	for _, fn := range s.observers {
		if err := fn(ctx, tx, Update{Session: st, Created: cur == nil, Started: started, Stopped: stopped}); err != nil {
			return err
		}
	}
	return nil
}

// route queues a change for the eMSP that owns the token: nothing when the
// token is ours, or when no connected platform hosts the owner with a
// sessions RECEIVER (the eMSP pulls, then).
func (s *Service) route(ctx context.Context, tx *store.Tx, ch Change, r Ref, owner ocpiclient.Party, push hub.Push) error {
	if s.hub == nil || s.isOwn(owner) {
		return nil
	}
	p, found, err := routing.New(s.parties).Platform(ctx, party.RoleEMSP, owner)
	if err != nil {
		return err
	}
	if !found {
		s.logger.InfoContext(ctx, "session for an eMSP that is not connected; kept for its pull", "session", r.String(),
			"emsp", owner.CountryCode+"/"+owner.PartyID)
		return nil
	}
	// The loop rule: a session is not sent back to the platform it came
	// from (a peer hub representing both the CPO and the eMSP).
	if _, ok := p.Endpoint(Module, ocpi.InterfaceReceiver); !ok || p.Status != party.StatusConnected || p.ID == ch.Sender {
		return nil
	}
	push.Module, push.ObjectKey, push.CorrelationID = Module, r.key(), ch.CorrelationID
	push.To = owner
	push.From = ocpiclient.Party{CountryCode: ocpi.Key(r.CountryCode), PartyID: ocpi.Key(r.PartyID)}
	return s.hub.Enqueue(ctx, tx, p.ID, push)
}

func (s *Service) isOwn(p ocpiclient.Party) bool {
	if s.parties == nil {
		return false
	}
	return routing.New(s.parties).IsOwnParty(party.RoleEMSP, p)
}

// emit records session.started or session.stopped. The data carries what
// the seed names (session_id, location_id, evse_id, timestamp) and what a
// subscriber needs to act without a lookup.
func (s *Service) emit(ctx context.Context, tx *store.Tx, name string, st *Stored, evseID string, at ocpi.DateTime) error {
	sess := &st.Session
	if evseID == "" {
		evseID = sess.EVSEUID
	}
	data := map[string]any{
		"session_id": sess.ID, "country_code": st.CountryCode, "party_id": st.PartyID,
		"location_id": sess.LocationID, "evse_uid": sess.EVSEUID, "evse_id": evseID, "connector_id": sess.ConnectorID,
		"timestamp": at, "status": sess.Status, "kwh": sess.KWh, "currency": sess.Currency,
		"token": map[string]any{"country_code": st.Owner.CountryCode, "party_id": st.Owner.PartyID, "uid": sess.CdrToken.UID,
			"type": sess.CdrToken.Type},
	}
	if sess.AuthorizationReference != "" {
		data["authorization_reference"] = sess.AuthorizationReference
	}
	if sess.TotalCost != nil {
		data["total_cost"] = sess.TotalCost
	}
	return s.events.Emit(ctx, tx, event.Event{Name: name, Data: data, Parties: []event.Party{
		{Role: string(party.RoleCPO), CountryCode: st.CountryCode, PartyID: st.PartyID},
		{Role: string(party.RoleEMSP), CountryCode: st.Owner.CountryCode, PartyID: st.Owner.PartyID},
	}})
}
