// Package session keeps the Sessions CPOs push through the hub, routes each
// to the eMSP that owns its token (or keeps it, when the token is ocpihub's
// own), serves the eMSPs' pulls, relays charging preferences, and emits
// session.started and session.stopped.
//
// A session is stored as a document (sessions.body, the canonical JSON the
// CPO sent, unknown fields included) keyed by the CPO's (country_code,
// party_id, id), with the token owner, status and authorization_reference as
// columns.
//
// Rules the spec leaves to us, decided here:
//   - Sessions are party-specific (transport.md §11): a session goes to the
//     eMSP named by cdr_token.country_code/party_id only, through the hub's
//     ordered outbox (one queue per session): a PUT as a full push (it
//     supersedes what is still queued), a PATCH as the PATCH the CPO sent.
//     An eMSP that misses them is resynced with a PUT of the stored session.
//   - A PATCH appends its charging_periods to the stored list and merges the
//     other fields like JSON Merge Patch; it must carry last_updated and may
//     not change the key fields or the token owner. PATCH of an unknown
//     session is 404; the CPO then PUTs it (sessions.md §7).
//   - session.started is emitted once, the first time the session is ACTIVE
//     or COMPLETED (a session first seen completed did start);
//     session.stopped once, when it is COMPLETED or INVALID or has an
//     end_date_time. Both in the transaction of the change.
//   - A change that leaves the stored body the same is a success that is
//     neither routed nor emitted.
//   - A change older than the stored session is ignored (ocpi.StaleError);
//     so is one that would take an ended session back to a status that is
//     not final at the same last_updated (checkFresh).
package session

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Module is the OCPI module identifier.
const Module = "sessions"

// Directory gives the evse_id of an EVSE in the hub's location directory
// (events name EVSEs by it); "" when unknown.
type Directory interface {
	EVSEID(ctx context.Context, countryCode, partyID, locationID, evseUID string) string
}

// Observer is told, inside the transaction of a change, what happened to a
// session: the payment flows bind sessions to payments with it. An error
// rolls the change back.
type Observer func(ctx context.Context, tx *store.Tx, u Update) error

// Update is one stored change of a session.
type Update struct {
	Session *Stored
	// Created is true for the first version the hub stored; Started and
	// Stopped when this change emitted session.started or session.stopped.
	Created, Started, Stopped bool
}

// Service manages sessions.
type Service struct {
	db        *store.DB
	hub       *hub.Hub
	parties   *party.Service
	dir       Directory
	events    event.Emitter
	clock     clock.Clock
	logger    *slog.Logger
	observers []Observer
	// afterRead, when set (tests), runs between the read a PATCH is
	// applied to and its transaction.
	afterRead func()
}

// New returns a Service and registers it as the hub's source of sessions.
func New(db *store.DB, h *hub.Hub, parties *party.Service, dir Directory, events event.Emitter, clk clock.Clock, logger *slog.Logger) *Service {
	events = event.OrDiscard(events)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{db: db, hub: h, parties: parties, dir: dir, events: events, clock: clk, logger: logger}
	if h != nil {
		h.Register(Module, hub.PartySource(s.current))
	}
	return s
}

// Observe adds an observer of every stored change. Call it while wiring.
func (s *Service) Observe(fn Observer) { s.observers = append(s.observers, fn) }

// Ref addresses a session: the CPO's party and the session id.
type Ref struct{ CountryCode, PartyID, ID string }

func (r Ref) key() string { return hub.ObjectKey(r.CountryCode, r.PartyID, r.ID) }

func (r Ref) args() []any { return []any{ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.ID)} }

// path is the push path at an eMSP's receiver, with the id as the body
// spells it.
func (r Ref) path(id string) string {
	return hub.PathOf(ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), id)
}

func (r Ref) String() string { return ocpi.Key(r.CountryCode) + "/" + ocpi.Key(r.PartyID) + "/" + r.ID }

func errUnknown(r Ref) error {
	return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "unknown session " + r.String()}
}

// Stored is a session as the hub holds it.
type Stored struct {
	CountryCode, PartyID, ID string
	// Owner is the eMSP that owns the session's token.
	Owner                  ocpiclient.Party
	Status                 string
	AuthorizationReference string
	Session                ocpi.Session
	Body                   json.RawMessage
}

// Ref returns the session's address.
func (st *Stored) Ref() Ref { return Ref{st.CountryCode, st.PartyID, st.ID} }

const storedColumns = "country_code, party_id, id, token_country_code, token_party_id, status, authorization_reference, body"

func scanStored(row store.Row) (*Stored, error) {
	var st Stored
	var body []byte
	if err := row.Scan(&st.CountryCode, &st.PartyID, &st.ID, &st.Owner.CountryCode, &st.Owner.PartyID, &st.Status,
		&st.AuthorizationReference, &body); err != nil {
		return nil, err
	}
	st.Body = body
	if err := json.Unmarshal(body, &st.Session); err != nil {
		return nil, err
	}
	st.ID = st.Session.ID
	return &st, nil
}

// Find returns a stored session.
func (s *Service) Find(ctx context.Context, r Ref) (*Stored, error) {
	st, err := scanStored(s.db.ReadIn(ctx).QueryRow(ctx, "SELECT "+storedColumns+" FROM sessions WHERE country_code = $1 AND party_id = $2 AND id = $3", r.args()...))
	if errors.Is(err, store.ErrNoRows) {
		return nil, errUnknown(r)
	}
	return st, err
}

// Cost is what a CDR is checked against of its session: whether the hub
// holds the session, and its last total_cost (nil when it has none).
type Cost struct {
	Known     bool
	TotalCost *ocpi.Price
}

// CostWith queues on rs the read of a session's Cost into *c: when rs runs,
// c.Known says whether the hub holds the session. A CDR reads it with its
// duplicate and its location, waiting for the database once for all. Only
// total_cost is decoded: a session at its CDR holds every charging period
// (a two-hour session with five-minute meter values holds 24), and
// decoding the whole of it was most of reading it.
func (s *Service) CostWith(rs *store.Reads, r Ref, c *Cost) {
	rs.QueryRow(func(row store.Row) error {
		*c = Cost{}
		var body []byte
		err := row.Scan(&body)
		if errors.Is(err, store.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		c.Known = true
		v := gjson.GetBytes(body, "total_cost")
		if v.Type != gjson.JSON {
			return nil
		}
		c.TotalCost = new(ocpi.Price)
		return json.Unmarshal([]byte(v.Raw), c.TotalCost)
	}, "SELECT body FROM sessions WHERE country_code = $1 AND party_id = $2 AND id = $3", r.args()...)
}

// FindForOwner finds a session by its id alone among the sessions of the
// token owners given (an eMSP naming a session in a command; nil owners:
// any, for an SCSP), of one CPO when cpo is not zero, and returns its
// address (the id as its body spells it). It is not found when the session
// belongs to another eMSP, and EINVALID when two CPOs use the id. The
// session's body is not decoded: at a STOP_SESSION it holds every charging
// period, and only its id is read.
func (s *Service) FindForOwner(ctx context.Context, owners []ocpiclient.Party, cpo ocpiclient.Party, id string) (Ref, error) {
	q := "SELECT country_code, party_id, token_country_code, token_party_id, body FROM sessions WHERE id = $1"
	args := []any{ocpi.Key(id)}
	if !cpo.IsZero() {
		q += " AND country_code = $2 AND party_id = $3"
		args = append(args, ocpi.Key(cpo.CountryCode), ocpi.Key(cpo.PartyID))
	}
	rows, err := s.db.ReadIn(ctx).Query(ctx, q+" ORDER BY pk LIMIT 20", args...)
	if err != nil {
		return Ref{}, err
	}
	defer rows.Close()
	var found []Ref
	for rows.Next() {
		var r Ref
		var owner ocpiclient.Party
		var body []byte
		if err := rows.Scan(&r.CountryCode, &r.PartyID, &owner.CountryCode, &owner.PartyID, &body); err != nil {
			return Ref{}, err
		}
		r.ID = gjson.GetBytes(body, "id").String()
		if owners == nil || slices.ContainsFunc(owners, func(o ocpiclient.Party) bool {
			return ocpi.EqualCI(o.CountryCode, owner.CountryCode) && ocpi.EqualCI(o.PartyID, owner.PartyID)
		}) {
			found = append(found, r)
		}
	}
	if err := rows.Err(); err != nil {
		return Ref{}, err
	}
	switch len(found) {
	case 0:
		return Ref{}, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "unknown session " + id}
	case 1:
		return found[0], nil
	}
	return Ref{}, &ocpi.Error{Code: ocpi.EINVALID, Field: "session_id",
		Issue:   "is used by several CPOs; name the CPO with OCPI-to-country-code and OCPI-to-party-id",
		Message: "session " + id + " exists at several CPOs; send OCPI-to-country-code and OCPI-to-party-id"}
}

// FindByAuthorizationReference returns the sessions carrying an
// authorization_reference, most recently changed first: how the payment
// flows find the session a payment started.
func (s *Service) FindByAuthorizationReference(ctx context.Context, reference string) ([]*Stored, error) {
	return store.QueryAll(ctx, s.db.ReadIn(ctx), scanStored, "SELECT "+storedColumns+` FROM sessions WHERE authorization_reference = $1
		ORDER BY last_updated DESC, pk DESC LIMIT 100`, reference)
}

// Get returns the stored body of a session.
func (s *Service) Get(ctx context.Context, r Ref) (json.RawMessage, error) {
	st, err := s.Find(ctx, r)
	if err != nil {
		return nil, err
	}
	return st.Body, nil
}

// Filter selects sessions in List, and CDRs in cdr's (cdr.Filter): both
// tables name the CPO's party and the token's owner in the same columns.
type Filter struct {
	// Owners are the token owners (eMSP parties) whose sessions are listed;
	// an empty list lists nothing.
	Owners []ocpiclient.Party
	// CPO restricts the list to one CPO (OCPI-to-*), when not zero.
	CPO ocpiclient.Party
}

// List returns a page of the sessions of the owners' tokens, ordered by
// last_updated, then by row.
func (s *Service) List(ctx context.Context, f Filter, p ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
	l := store.List{Table: "sessions", Columns: "pk, last_updated, body"}.WithPage(p)
	l.Where, l.Args = f.Where()
	return store.Documents(ctx, s.db.Read(), l)
}

// Where returns the filter's conditions, for a store.List of sessions or
// CDRs, with their arguments numbered from $1.
func (f Filter) Where() ([]string, []any) {
	where, args := ownerWhere(f.Owners)
	if !f.CPO.IsZero() {
		n := len(args)
		where = append(where, "country_code = $"+strconv.Itoa(n+1), "party_id = $"+strconv.Itoa(n+2))
		args = append(args, ocpi.Key(f.CPO.CountryCode), ocpi.Key(f.CPO.PartyID))
	}
	return where, args
}

// ownerWhere restricts a list to the sessions (or CDRs) of some token
// owners.
func ownerWhere(owners []ocpiclient.Party) ([]string, []any) {
	if len(owners) == 0 {
		return []string{"1 = 0"}, nil
	}
	var conds []string
	var args []any
	for _, o := range owners {
		args = append(args, ocpi.Key(o.CountryCode), ocpi.Key(o.PartyID))
		conds = append(conds, "(token_country_code = $"+strconv.Itoa(len(args)-1)+" AND token_party_id = $"+strconv.Itoa(len(args))+")")
	}
	return []string{"(" + strings.Join(conds, " OR ") + ")"}, args
}

// current gives the hub the current state of a session for resyncs: a PUT
// to the eMSP that owns its token.
func (s *Service) current(ctx context.Context, tx *store.Tx, countryCode, partyID, id string) (hub.Push, bool, error) {
	r := Ref{countryCode, partyID, id}
	cur, err := lock(ctx, tx, r)
	if err != nil || cur == nil {
		return hub.Push{}, false, err
	}
	return hub.Push{Method: "PUT", Path: r.path(cur.id), Body: cur.body, To: cur.owner,
		From: ocpiclient.Party{CountryCode: ocpi.Key(r.CountryCode), PartyID: ocpi.Key(r.PartyID)}}, true, nil
}
