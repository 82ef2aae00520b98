// Package token keeps the Tokens eMSPs push through the hub and ocpihub's own
// eMSP tokens, forwards every change to the connected CPOs, serves the CPOs'
// pulls, and answers real-time authorizations.
//
// A token is stored as a document (tokens.body, the canonical JSON the eMSP
// sent, unknown fields included) keyed by (country_code, party_id, uid, type);
// type defaults to RFID when a URL omits it (tokens.md §2).
//
// Rules the spec leaves to us, decided here:
//   - Tokens are never deleted; valid=false is stored at once, answers every
//     later authorization with BLOCKED and is forwarded to the CPOs like any
//     other change.
//   - A PUT or PATCH that leaves the stored body byte-for-byte the same is a
//     success that is neither forwarded nor emitted.
//   - A PATCH merges like JSON Merge Patch and may not change the token's key
//     fields.
//   - A PUT or PATCH older than the stored token changes nothing and is not
//     forwarded (ocpi.StaleError): a delayed valid=true cannot re-enable a
//     card revoked later.
//   - Changes reach every connected platform hosting a CPO that offers the
//     tokens RECEIVER, through the hub's ordered outbox (hub.Broadcast), and
//     the hub resyncs a CPO that missed them from this package's Source.
package token

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Module is the OCPI module identifier.
const Module = "tokens"

// Directory answers whether a location, and an EVSE in it, is in the hub's
// location directory. It returns an EUNKNOWNLOCATION error when not.
type Directory interface {
	CheckLocation(ctx context.Context, countryCode, partyID, locationID, evseUID, connectorID string) error
}

// EVSEDirectory is a Directory that checks a location and its EVSEs in one
// read of the location, queued with the authorization's other reads:
// CheckEVSEsWith queues it on rs, and the function it returns gives, once
// rs has run, an EUNKNOWNLOCATION error when the location is not in the
// directory, else the index in evseUIDs of the first EVSE it does not have
// (-1: it has them all).
type EVSEDirectory interface {
	Directory
	CheckEVSEsWith(rs *store.Reads, countryCode, partyID, locationID string, evseUIDs []string) func() (int, error)
}

// Config tunes the Service.
type Config struct {
	// NoFallback turns off the whitelist fallback: by default, when the
	// owning eMSP of an ALLOWED or ALLOWED_OFFLINE token cannot be reached,
	// the hub answers from its copy of the token (tokens.md §6).
	NoFallback bool
}

// Service manages tokens.
type Service struct {
	db      *store.DB
	hub     *hub.Hub
	parties *party.Service
	dir     Directory
	events  event.Emitter
	clock   clock.Clock
	logger  *slog.Logger
	cfg     Config
	// NewReferenceFunc makes authorization references for our own tokens;
	// tests may replace it.
	NewReferenceFunc func() string
}

// New returns a Service and registers it as the hub's source of tokens.
func New(db *store.DB, h *hub.Hub, parties *party.Service, dir Directory, events event.Emitter, clk clock.Clock,
	logger *slog.Logger, cfg Config) *Service {
	events = event.OrDiscard(events)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{db: db, hub: h, parties: parties, dir: dir, events: events, clock: clk, logger: logger, cfg: cfg,
		NewReferenceFunc: newReference}
	if h != nil {
		h.Register(Module, source{s})
	}
	return s
}

// Ref addresses a token.
type Ref struct {
	CountryCode, PartyID, UID string
	// Type is the TokenType; "" means RFID.
	Type string
}

func (r Ref) typ() string {
	if r.Type == "" {
		return ocpi.DefaultTokenType
	}
	return r.Type
}

func (r Ref) key() string { return hub.ObjectKey(r.CountryCode, r.PartyID, r.UID, r.typ()) }

func (r Ref) args() []any {
	return []any{ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), ocpi.Key(r.UID), r.typ()}
}

// path is the push path of a token as a CPO's receiver expects it; uid is
// spelled as the body spells it.
func (r Ref) path(uid string) string {
	return hub.PathOf(ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), uid) + "?type=" + url.QueryEscape(r.typ())
}

func (r Ref) String() string {
	return ocpi.Key(r.CountryCode) + "/" + ocpi.Key(r.PartyID) + "/" + r.UID + " (" + r.typ() + ")"
}

// RefFromKey is the inverse of the object key the outbox uses.
func refFromKey(key string) (Ref, bool) {
	parts := hub.SplitKey(key)
	if len(parts) != 4 {
		return Ref{}, false
	}
	return Ref{CountryCode: parts[0], PartyID: parts[1], UID: parts[2], Type: parts[3]}, true
}

func errUnknown(r Ref) error {
	return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "unknown token " + r.String()}
}

// Get returns the stored token a ref names, as stored.
func (s *Service) Get(ctx context.Context, r Ref) (json.RawMessage, error) {
	var body []byte
	err := s.db.ReadIn(ctx).QueryRow(ctx, "SELECT body FROM tokens WHERE country_code = $1 AND party_id = $2 AND uid = $3 AND type = $4",
		r.args()...).Scan(&body)
	if errors.Is(err, store.ErrNoRows) {
		return nil, errUnknown(r)
	}
	return body, err
}

// Find returns a stored token decoded.
func (s *Service) Find(ctx context.Context, r Ref) (*ocpi.Token, error) {
	body, err := s.Get(ctx, r)
	if err != nil {
		return nil, err
	}
	var t ocpi.Token
	if err := json.Unmarshal(body, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// FindByContract returns the stored tokens of a contract id (the auth_id of
// OCPI 2.1.1 and 2.0), oldest change first.
func (s *Service) FindByContract(ctx context.Context, contractID string) ([]ocpi.Token, error) {
	return store.QueryAll(ctx, s.db.ReadIn(ctx), func(row store.Row) (ocpi.Token, error) {
		var body []byte
		var t ocpi.Token
		if err := row.Scan(&body); err != nil {
			return t, err
		}
		return t, json.Unmarshal(body, &t)
	}, "SELECT body FROM tokens WHERE contract_id = $1 ORDER BY last_updated, pk LIMIT 20", ocpi.Key(contractID))
}

// Filter selects tokens in List.
type Filter struct {
	// CountryCode and PartyID restrict the list to one eMSP (OCPI-to-*).
	CountryCode, PartyID string
}

// List returns a page of tokens of every eMSP (the CPOs' pull), ordered by
// last_updated, then by row.
func (s *Service) List(ctx context.Context, f Filter, p ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
	l := store.List{Table: "tokens", Columns: "pk, last_updated, body"}.WithPage(p)
	if f.CountryCode != "" {
		l.Where = []string{"country_code = $1", "party_id = $2"}
		l.Args = []any{ocpi.Key(f.CountryCode), ocpi.Key(f.PartyID)}
	}
	return store.Documents(ctx, s.db.Read(), l)
}

// Change is who makes a change and how it is traced.
type Change struct {
	// PlatformID is the sending eMSP's platform (0 for ocpihub's own
	// tokens): it never gets its own change back.
	PlatformID int64
	// CorrelationID continues the sender's request chain in the pushes.
	CorrelationID string
}

// stored is a locked token row.
type stored struct {
	pk   int64
	body []byte
	// canon is body in the canonical form (PostgreSQL renders JSONB with
	// its own spacing and key order): what a new body is compared with.
	canon []byte
	doc   ocpi.Object
}

// lock locks and reads a token row inside tx (nil when absent): a write of
// the same token waits for this transaction, which orders the outbox.
func lock(ctx context.Context, tx *store.Tx, r Ref) (*stored, error) {
	var cur stored
	found, err := tx.LockRow(ctx, "tokens", "pk, body", "country_code = $1 AND party_id = $2 AND uid = $3 AND type = $4",
		r.args(), &cur.pk, &cur.body)
	if err != nil || !found {
		return nil, err
	}
	if cur.doc, cur.canon, err = ocpi.ParseStored(cur.body); err != nil {
		return nil, err
	}
	return &cur, nil
}

// Put creates or replaces a token with raw (a full Token). It reports
// whether the token is new.
func (s *Service) Put(ctx context.Context, ch Change, r Ref, raw []byte) (created bool, err error) {
	created, _, err = s.Store(ctx, ch, r, raw)
	return created, err
}

// Store is Put that also reports whether anything changed: a pull tells a
// copy it already holds from a new or updated one.
func (s *Service) Store(ctx context.Context, ch Change, r Ref, raw []byte) (created, changed bool, err error) {
	var t ocpi.Token
	body, err := ocpi.DecodeChecked(raw, &t, func() error { return checkToken(&t, r) })
	if err != nil {
		return false, false, err
	}
	err = s.db.InSharedRetryUnique(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		created, changed, err = s.put(ctx, tx, ch, r, &t, body)
		return err
	})
	return created, changed, err
}

// put stores a validated token and forwards it, inside tx. It reports
// whether the token is new and whether anything changed.
func (s *Service) put(ctx context.Context, tx *store.Tx, ch Change, r Ref, t *ocpi.Token, body []byte) (created, changed bool, err error) {
	cur, err := lock(ctx, tx, r)
	if err != nil {
		return false, false, err
	}
	if cur != nil {
		if err := ocpi.CheckFresh(Module, "token "+r.String(), ocpi.LastUpdatedOf(cur.body), t.LastUpdated); err != nil {
			return false, false, err
		}
		if bytes.Equal(cur.canon, body) {
			return false, false, nil
		}
	}
	if err := s.write(ctx, tx, r, cur, t, body); err != nil {
		return false, false, err
	}
	push := hub.Push{Module: Module, ObjectKey: r.key(), Method: http.MethodPut, Path: r.path(t.UID), Body: body, Full: true,
		CorrelationID: ch.CorrelationID}
	return cur == nil, true, s.forward(ctx, tx, ch, r, t, push)
}

// Patch applies a partial Token (which must carry last_updated) to a stored
// token.
func (s *Service) Patch(ctx context.Context, ch Change, r Ref, raw []byte) error {
	var partial struct {
		LastUpdated ocpi.DateTime `json:"last_updated"`
	}
	patch, err := ocpi.ParsePatch(raw, &partial, &partial.LastUpdated)
	if err != nil {
		return err
	}
	if err := ocpi.PatchIdentity(patch, map[string]string{"country_code": r.CountryCode, "party_id": r.PartyID, "uid": r.UID, "type": r.typ()}); err != nil {
		return err
	}
	return s.db.InSharedRetryUnique(ctx, func(ctx context.Context, tx *store.Tx) error {
		cur, err := lock(ctx, tx, r)
		if err != nil {
			return err
		}
		if cur == nil {
			return errUnknown(r)
		}
		var t ocpi.Token
		merged, err := ocpi.ApplyPatch(cur.doc, patch, &t)
		if err != nil {
			return err
		}
		if err := checkToken(&t, r); err != nil {
			return err
		}
		// Bad input is refused as such even when it is stale too.
		if err := ocpi.CheckFresh(Module, "token "+r.String(), ocpi.LastUpdatedOf(cur.body), partial.LastUpdated); err != nil {
			return err
		}
		body, err := ocpi.Canonical(merged, &t)
		if err != nil {
			return err
		}
		if bytes.Equal(cur.canon, body) {
			return nil
		}
		if err := s.write(ctx, tx, r, cur, &t, body); err != nil {
			return err
		}
		patchBody, err := ocpi.CanonicalPatch(patch)
		if err != nil {
			return err
		}
		push := hub.Push{Module: Module, ObjectKey: r.key(), Method: http.MethodPatch, Path: r.path(t.UID), Body: patchBody,
			CorrelationID: ch.CorrelationID}
		return s.forward(ctx, tx, ch, r, &t, push)
	})
}

// checkToken validates a token and its identity against the URL.
func checkToken(t *ocpi.Token, r Ref) error {
	c := ocpi.NewCheck("")
	t.Check(c)
	if err := c.Err(); err != nil {
		return err
	}
	switch {
	case !ocpi.EqualCI(t.CountryCode, r.CountryCode):
		return ocpi.Invalid("country_code", "must equal the country_code in the URL ("+r.CountryCode+")")
	case !ocpi.EqualCI(t.PartyID, r.PartyID):
		return ocpi.Invalid("party_id", "must equal the party_id in the URL ("+r.PartyID+")")
	case !ocpi.EqualCI(t.UID, r.UID):
		return ocpi.Invalid("uid", "must equal the token uid in the URL ("+r.UID+")")
	case t.Type != r.typ():
		return ocpi.Invalid("type", "must equal the type the URL names ("+r.typ()+"; RFID when ?type= is absent)")
	}
	return nil
}

// write stores a token row. It is queued (ExecLater): on PostgreSQL it
// travels with the next statement or the COMMIT.
func (s *Service) write(ctx context.Context, tx *store.Tx, r Ref, cur *stored, t *ocpi.Token, body []byte) error {
	if cur == nil {
		return tx.ExecLater(ctx, `INSERT INTO tokens (country_code, party_id, uid, type, valid, whitelist, last_updated, body, contract_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, append(r.args(), t.IsValid(), t.Whitelist, t.LastUpdated.Micros(), string(body),
			ocpi.Key(t.ContractID))...)
	}
	return tx.ExecLater(ctx, "UPDATE tokens SET valid = $1, whitelist = $2, last_updated = $3, body = $4, contract_id = $5 WHERE pk = $6",
		t.IsValid(), t.Whitelist, t.LastUpdated.Micros(), string(body), ocpi.Key(t.ContractID), cur.pk)
}

// forward broadcasts a change to the CPOs (and peer hubs, for the CPOs
// behind them) and emits token.updated.
func (s *Service) forward(ctx context.Context, tx *store.Tx, ch Change, r Ref, t *ocpi.Token, p hub.Push) error {
	if s.hub != nil && !s.isPrivate(t) {
		if err := s.hub.Broadcast(ctx, tx, ch.PlatformID, hub.EMSPAudience, p); err != nil {
			return err
		}
	}
	return s.events.Emit(ctx, tx, event.Event{
		Name: event.TokenUpdated,
		Data: map[string]any{"country_code": ocpi.Key(t.CountryCode), "party_id": ocpi.Key(t.PartyID), "uid": t.UID, "type": t.Type,
			"valid": t.IsValid(), "whitelist": t.Whitelist, "last_updated": t.LastUpdated},
		Parties: []event.Party{{Role: string(party.RoleEMSP), CountryCode: ocpi.Key(t.CountryCode), PartyID: ocpi.Key(t.PartyID)}},
	})
}

// isPrivate reports an own token that is not forwarded: one-off AD_HOC_USER
// tokens of our own eMSP are used in commands only, which need no push
// (tokens.md §7).
func (s *Service) isPrivate(t *ocpi.Token) bool {
	return t.Type == "AD_HOC_USER" && s.isOwn(t.CountryCode, t.PartyID)
}

// isOwn reports whether cc/pid is ocpihub's own eMSP.
func (s *Service) isOwn(cc, pid string) bool {
	if s.parties == nil {
		return false
	}
	p, ok := s.parties.OwnParty(party.RoleEMSP)
	return ok && p.Matches(cc, pid)
}

// source gives the hub the current state of a token for resyncs.
type source struct{ s *Service }

// Current implements hub.Source.
func (src source) Current(ctx context.Context, tx *store.Tx, key string) (hub.Push, bool, error) {
	r, ok := refFromKey(key)
	if !ok {
		return hub.Push{}, false, nil
	}
	cur, err := lock(ctx, tx, r)
	if err != nil || cur == nil {
		return hub.Push{}, false, err
	}
	uid, _ := cur.doc["uid"].(string)
	return hub.Push{Method: http.MethodPut, Path: r.path(uid), Body: cur.body}, true, nil
}

func (s *Service) now() time.Time { return s.clock.Now() }
