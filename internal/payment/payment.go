// Package payment is Direct Payment through the hub (payments.md): the
// payment terminals Payment Terminal Providers (PTPs) run, their assignment
// to CPOs' locations and EVSEs, the pre-authorised sessions a PTP starts with
// an authorization_reference, and the financial advice confirmations (what
// the PTP actually captured) that go to the CPO.
//
// The hub plays the CPO's side of the Payments module to PTPs (it stores
// their terminals and confirmations) and the PTP's side to CPOs (they read
// terminals from it, assign them, and receive confirmations). Every change
// that must reach a partner goes through the hub's ordered outbox, enqueued
// in the transaction of the change.
//
// Rules the spec leaves to us, decided here:
//   - terminal_id is unique across the hub: the PTP chooses it and CPOs
//     address a terminal by it alone (payments.md §2, §3), so ids cannot be
//     scoped per PTP. Another PTP's terminal is absent to a PTP: its GET and
//     PATCH answer 404 as for an unknown terminal; its POST or PUT (which
//     create) is checked as a create and, when valid, refused with 2001
//     naming terminal_id and a message that does not say another PTP holds
//     the id. That the create is refused is unavoidable with unique ids;
//     nothing else is disclosed.
//   - A terminal's customer is the CPO it serves: the party its country_code
//     and party_id name, else the OCPI-to party of its creation, else the
//     owner of the first locations assigned to it. A CPO sees and assigns the
//     terminals of its parties and the unclaimed ones (no customer yet:
//     assigning one claims it); another CPO's terminal is 404 to it.
//   - POST creates or replaces a terminal; PUT merges into it (the spec's
//     PUT example is partial, gaps.md §14e), PATCH too. A CPO changes only
//     location_ids and evse_uids: any other field it sends must equal the
//     stored value. Its change is relayed to the PTP as a PATCH of the
//     assignment (the PTP's payments SENDER); a PTP's change is posted in
//     full to the customer CPO's payments RECEIVER, when it has one.
//   - Activation (a CPO asks a PTP to activate a terminal built into a
//     charger) is forwarded to the PTP named by OCPI-to (or the only PTP
//     connected) and its answer returned as it came; deactivation is queued
//     to the terminal's PTP in the outbox.
//   - A PTP's START_SESSION must carry an authorization_reference, unique
//     across the hub: a reference another payment, command or session uses
//     is refused with 2001. A request the hub refuses itself (invalid,
//     unknown location) does not use the reference up.
//   - Sessions and CDRs carrying the reference (or whose token is a PTP's)
//     are pushed to the PTP's receivers: every session change as a PUT of
//     the whole session, the CDR as a POST.
//   - Confirmations are immutable like CDRs: a repeat with the same content
//     is 1000 and changes nothing, different content is 2001. One is linked
//     to its payment by authorization_reference (only a payment of the same
//     PTP), compared with the CDR's total_cost (with VAT when both give it,
//     without otherwise) and currency, and forwarded to the CPO. A mismatch,
//     a FAILED capture or an unknown reference is accepted and flagged for
//     the operator (metric, log, financial_advice.flagged). An unmatched
//     confirmation is linked, compared and forwarded when its payment's
//     session or CDR arrives.
//   - Prices go out in the shape of the receiver's version: 2.3.0
//     ({before_taxes, taxes}) to 2.3.0 peers, 2.2.1 ({excl_vat, incl_vat})
//     to the others, for confirmations, sessions and CDRs (hub adapters).
package payment

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Module is the OCPI module identifier (payments.md §1).
const Module = "payments"

// The modules whose pushes to a PTP this package makes.
const (
	sessionsModule = "sessions"
	cdrsModule     = "cdrs"
)

// Party is a country code and party id.
type Party = ocpiclient.Party

// Directory answers questions about the hub's location directory.
type Directory interface {
	// LocationOwner returns the CPO publishing a location id
	// (EUNKNOWNLOCATION when none, EINVALID when several).
	LocationOwner(ctx context.Context, locationID string) (countryCode, partyID string, err error)
	// CheckLocation is nil when the CPO publishes the location (and the EVSE
	// and connector named; "" = not checked), EUNKNOWNLOCATION otherwise.
	CheckLocation(ctx context.Context, countryCode, partyID, locationID, evseUID, connectorID string) error
	// EVSELocations returns the ids of the CPO's locations that have an EVSE
	// with the uid (none: empty).
	EVSELocations(ctx context.Context, countryCode, partyID, evseUID string) ([]string, error)
}

// Records reads what the commands, sessions and CDRs modules keep, for the
// admin chain and the uniqueness of references.
type Records interface {
	// Command returns a stored command by id.
	Command(ctx context.Context, id string) (any, error)
	// Session and CDR return a stored session or CDR of a CPO.
	Session(ctx context.Context, cpo Party, id string) (json.RawMessage, error)
	CDR(ctx context.Context, cpo Party, id string) (json.RawMessage, error)
	// ReferenceInUse reports whether any command or session carries the
	// authorization_reference.
	ReferenceInUse(ctx context.Context, reference string) (bool, error)
}

// Actor is who makes a request: a registered platform, its parties, and
// the OCPI version of the URL it called (the shape of prices in answers).
type Actor struct {
	PlatformID int64
	Parties    []party.PartyRef
	// As is the party the request acts for in the role it needs (OCPI-from
	// when the caller owns it); zero: the caller's first party of the role.
	As Party
	// To is the party the request addresses with OCPI-to-* (zero: none).
	To            Party
	Version       string
	CorrelationID string
}

// has reports whether the actor plays role.
func (a Actor) has(role party.Role) bool {
	for _, p := range a.Parties {
		if p.Role == role {
			return true
		}
	}
	return false
}

// party returns the party the actor acts for in role.
func (a Actor) party(role party.Role) (Party, bool) {
	var first *party.PartyRef
	for i, p := range a.Parties {
		if p.Role != role {
			continue
		}
		if !a.As.IsZero() && p.Matches(a.As.CountryCode, a.As.PartyID) {
			return Party{CountryCode: ocpi.Key(p.CountryCode), PartyID: ocpi.Key(p.PartyID)}, true
		}
		if first == nil {
			first = &a.Parties[i]
		}
	}
	if first == nil {
		return Party{}, false
	}
	return Party{CountryCode: ocpi.Key(first.CountryCode), PartyID: ocpi.Key(first.PartyID)}, true
}

// actingAs returns the party the actor acts for in role. An actor without
// that role is refused: by wrong, when it plays the module's other role (a
// CPO asking what only a PTP does, or the reverse) and wrong is set, else as
// a party that is neither (errNotPayments).
func (a Actor) actingAs(role party.Role, wrong func() error) (Party, error) {
	if p, ok := a.party(role); ok {
		return p, nil
	}
	other := party.RoleCPO
	if role == party.RoleCPO {
		other = party.RolePTP
	}
	if wrong != nil && a.has(other) {
		return Party{}, wrong()
	}
	return Party{}, errNotPayments()
}

// parties returns the actor's parties in role.
func (a Actor) parties(role party.Role) []Party {
	var out []Party
	for _, p := range a.Parties {
		if p.Role == role {
			out = append(out, Party{CountryCode: ocpi.Key(p.CountryCode), PartyID: ocpi.Key(p.PartyID)})
		}
	}
	return out
}

// owns reports whether p is one of the actor's parties in role.
func (a Actor) owns(role party.Role, p Party) bool {
	for _, o := range a.parties(role) {
		if samePart(o, p) {
			return true
		}
	}
	return false
}

func samePart(a, b Party) bool {
	return ocpi.EqualCI(a.CountryCode, b.CountryCode) && ocpi.EqualCI(a.PartyID, b.PartyID)
}

func keyParty(p Party) Party {
	return Party{CountryCode: ocpi.Key(p.CountryCode), PartyID: ocpi.Key(p.PartyID)}
}

// Service is Direct Payment.
type Service struct {
	db      *store.DB
	hub     *hub.Hub
	parties *party.Service
	route   *routing.Router
	dir     Directory
	records Records
	events  event.Emitter
	clock   clock.Clock
	logger  *slog.Logger
	metrics *metrics
}

// New returns a Service, registers it as the hub's source of payments
// pushes, and adapts the prices of sessions, CDRs and confirmations pushed to
// 2.3.0 partners. records may be nil (no admin chain details, references
// checked against payments only).
func New(db *store.DB, h *hub.Hub, parties *party.Service, dir Directory, records Records, events event.Emitter,
	clk clock.Clock, logger *slog.Logger, reg prometheus.Registerer) *Service {
	events = event.OrDiscard(events)
	clk = clock.OrReal(clk)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{db: db, hub: h, parties: parties, route: routing.New(parties), dir: dir, records: records, events: events, clock: clk, logger: logger,
		metrics: newMetrics(reg)}
	if h != nil {
		h.Register(Module, source{s})
		h.OnDelivered(Module, s.delivered)
		h.Adapt(Module, adaptAdvice)
		h.Adapt(sessionsModule, adaptPrices(ocpi.SessionPriceFields))
		h.Adapt(cdrsModule, adaptPrices(ocpi.CDRPriceFields))
	}
	return s
}

func (s *Service) now() int64 { return s.clock.Now().UnixMicro() }

// platformWith returns the connected platform hosting p in role that offers
// module with interface iface, or nil.
func (s *Service) platformWith(ctx context.Context, role party.Role, p Party, module, iface string) (*party.Platform, error) {
	pl, found, err := s.route.Enqueueable(ctx, role, p, module, iface)
	if err != nil || !found {
		return nil, err
	}
	return pl, nil
}
