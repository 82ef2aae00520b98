// Package cdr keeps the CDRs CPOs post through the hub, routes each to the
// eMSP that owns its token (or keeps it, when the token is ocpihub's own),
// serves the eMSPs' pulls, links CDRs to their sessions and emits
// cdr.created.
//
// Rules the spec leaves to us, decided here (gaps.md §2, cdrs.md §8):
//   - CDRs are immutable. A POST of an id the CPO already posted with the
//     same content (compared in canonical form) is answered 1000 again and
//     changes nothing; with different content it is refused with 2001 (HTTP
//     200) naming the first field that differs. Corrections are credit
//     CDRs, which are accepted like any CDR.
//   - A CDR goes to the eMSP named by cdr_token.country_code/party_id only,
//     as a POST to its cdrs RECEIVER through the hub's outbox (retried, and
//     posted again after an outage: a receiver must treat a repeat of the
//     same CDR as the same). The URL the eMSP answers with (Location) is kept
//     for reference.
//   - A CDR whose session (same CPO, session_id) the hub holds is linked to
//     it, and its total_cost is compared with the session's; a difference is
//     logged, counted (ocpihub_cdr_cost_mismatch_total) and kept in
//     cost_check.
//   - The hub prices every CDR itself (internal/tariff) from the tariffs the
//     CDR carries, or its connector's when it carries none, and keeps the
//     outcome (price_status, hub_total_cost, cost_difference). A CDR whose
//     total_cost is off by more than the tolerance is flagged: logged,
//     counted (ocpihub_cdr_price_checks_total), cdr.cost_mismatch emitted,
//     listed in the console. It is still forwarded unchanged: the hub
//     reports, it does not rewrite another party's CDR.
package cdr

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Module is the OCPI module identifier.
const Module = "cdrs"

// Observer is told, inside the transaction that stores a new CDR, about it:
// the payment flows reconcile the captured amount with it. An error rolls
// the CDR back.
type Observer func(ctx context.Context, tx *store.Tx, c *Stored) error

// Service manages CDRs.
type Service struct {
	db        *store.DB
	hub       *hub.Hub
	parties   *party.Service
	sessions  *session.Service
	events    event.Emitter
	clock     clock.Clock
	logger    *slog.Logger
	mismatch  prometheus.Counter
	observers []Observer

	tolerance   Tolerance
	priceChecks *prometheus.CounterVec
}

// New returns a Service, registers it as the hub's source of CDRs and
// remembers the URL each eMSP stores a CDR at.
func New(db *store.DB, h *hub.Hub, parties *party.Service, sessions *session.Service, events event.Emitter, clk clock.Clock,
	logger *slog.Logger, reg prometheus.Registerer) *Service {
	events = event.OrDiscard(events)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{db: db, hub: h, parties: parties, sessions: sessions, events: events, clock: clk, logger: logger,
		mismatch: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ocpihub_cdr_cost_mismatch_total",
			Help: "CDRs whose total_cost differs from the last total_cost of their session.",
		}),
		tolerance: DefaultTolerance,
		priceChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocpihub_cdr_price_checks_total",
			Help: "CDRs the hub priced from their tariffs, by outcome: ok, mismatch (total_cost off by more than the tolerance), unpriceable.",
		}, []string{"outcome"}),
	}
	for _, o := range []string{PriceOK, PriceMismatch, PriceUnpriceable} {
		s.priceChecks.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(s.mismatch, s.priceChecks)
	}
	if h != nil {
		h.Register(Module, hub.PartySource(s.current))
		h.OnDelivered(Module, s.delivered)
	}
	return s
}

// Observe adds an observer of new CDRs. Call it while wiring.
func (s *Service) Observe(fn Observer) { s.observers = append(s.observers, fn) }

// Ref addresses a CDR: the CPO's party and the CDR id.
type Ref struct{ CountryCode, PartyID, ID string }

func (r Ref) key() string { return hub.ObjectKey(r.CountryCode, r.PartyID, r.ID) }

func (r Ref) args() []any { return []any{ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.ID)} }

func (r Ref) String() string { return ocpi.Key(r.CountryCode) + "/" + ocpi.Key(r.PartyID) + "/" + r.ID }

// Stored is a CDR as the hub holds it.
type Stored struct {
	CountryCode, PartyID, ID string
	// Owner is the eMSP that owns the CDR's token.
	Owner ocpiclient.Party
	// SessionKnown is true when the hub holds the CDR's session.
	SessionKnown bool
	// CostCheck compares total_cost with the session's: "", "match" or
	// "mismatch".
	CostCheck string
	// Price is the hub's own price of the CDR (when it was posted).
	Price PriceCheck
	// EMSPLocation is the URL the owning eMSP stored the CDR at.
	EMSPLocation string
	CDR          ocpi.CDR
	Body         json.RawMessage
}

// Ref returns the CDR's address.
func (c *Stored) Ref() Ref { return Ref{c.CountryCode, c.PartyID, c.ID} }

const storedColumns = "country_code, party_id, id, token_country_code, token_party_id, session_known, cost_check, emsp_location, body, " +
	"price_status, hub_total_cost, cost_difference, price_note"

func scanStored(row store.Row) (*Stored, error) {
	var c Stored
	var body []byte
	var hubCost, diff string
	if err := row.Scan(&c.CountryCode, &c.PartyID, &c.ID, &c.Owner.CountryCode, &c.Owner.PartyID, &c.SessionKnown, &c.CostCheck,
		&c.EMSPLocation, &body, &c.Price.Status, &hubCost, &diff, &c.Price.Note); err != nil {
		return nil, err
	}
	c.Body = body
	for _, p := range []struct {
		raw string
		dst **ocpi.Price
	}{{hubCost, &c.Price.Hub}, {diff, &c.Price.Difference}} {
		if p.raw != "" {
			var v ocpi.Price
			if err := json.Unmarshal([]byte(p.raw), &v); err != nil {
				return nil, err
			}
			*p.dst = &v
		}
	}
	if err := json.Unmarshal(body, &c.CDR); err != nil {
		return nil, err
	}
	c.ID = c.CDR.ID
	return &c, nil
}

// Find returns a stored CDR.
func (s *Service) Find(ctx context.Context, r Ref) (*Stored, error) {
	c, err := scanStored(s.db.ReadIn(ctx).QueryRow(ctx, "SELECT "+storedColumns+" FROM cdrs WHERE country_code = $1 AND party_id = $2 AND id = $3", r.args()...))
	if errors.Is(err, store.ErrNoRows) {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "unknown CDR " + r.String()}
	}
	return c, err
}

// FindByAuthorizationReference returns the CDRs carrying an
// authorization_reference, newest first: how the payment flows find the
// CDR of a payment's session.
func (s *Service) FindByAuthorizationReference(ctx context.Context, reference string) ([]*Stored, error) {
	return s.query(ctx, "authorization_reference = $1", reference)
}

// FindBySession returns the CDRs of a session (its CDR, and credit and
// replacement CDRs), newest first.
func (s *Service) FindBySession(ctx context.Context, r session.Ref) ([]*Stored, error) {
	return s.query(ctx, "country_code = $1 AND party_id = $2 AND session_id = $3", ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.ID))
}

func (s *Service) query(ctx context.Context, where string, args ...any) ([]*Stored, error) {
	return store.QueryAll(ctx, s.db.ReadIn(ctx), scanStored, "SELECT "+storedColumns+" FROM cdrs WHERE "+where+" ORDER BY pk DESC LIMIT 100", args...)
}

// Filter selects CDRs in List: the Owners' CDRs (an empty list lists
// nothing), of one CPO when CPO is not zero.
type Filter = session.Filter

// List returns a page of the CDRs of the owners' tokens, ordered by
// last_updated, then by row.
func (s *Service) List(ctx context.Context, f Filter, p ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
	l := store.List{Table: "cdrs", Columns: "pk, last_updated, body"}.WithPage(p)
	l.Where, l.Args = f.Where()
	return store.Documents(ctx, s.db.Read(), l)
}

// hash is the fingerprint of a canonical body.
func hash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// current gives the hub a CDR to post again (after an outage): the CDR as
// stored, to the eMSP that owns its token.
func (s *Service) current(ctx context.Context, tx *store.Tx, countryCode, partyID, id string) (hub.Push, bool, error) {
	r := Ref{countryCode, partyID, id}
	var body []byte
	var owner ocpiclient.Party
	err := tx.QueryRow(ctx, "SELECT body, token_country_code, token_party_id FROM cdrs WHERE country_code = $1 AND party_id = $2 AND id = $3",
		r.args()...).Scan(&body, &owner.CountryCode, &owner.PartyID)
	if errors.Is(err, store.ErrNoRows) {
		return hub.Push{}, false, nil
	}
	if err != nil {
		return hub.Push{}, false, err
	}
	return hub.Push{Method: "POST", Body: body, To: owner,
		From: ocpiclient.Party{CountryCode: ocpi.Key(r.CountryCode), PartyID: ocpi.Key(r.PartyID)}}, true, nil
}

// delivered keeps the URL an eMSP stored a CDR at.
func (s *Service) delivered(ctx context.Context, d hub.Delivery) {
	loc := d.Header.Get("Location")
	parts := hub.SplitKey(d.ObjectKey)
	if loc == "" || len(parts) != 3 {
		return
	}
	if len(loc) > 512 {
		loc = loc[:512]
	}
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE cdrs SET emsp_location = $1 WHERE country_code = $2 AND party_id = $3 AND id = $4",
			append([]any{loc}, Ref{parts[0], parts[1], parts[2]}.args()...)...)
		return err
	})
	if err != nil {
		s.logger.WarnContext(ctx, "could not keep an eMSP's CDR location", "cdr", d.ObjectKey, "error", err)
	}
}
