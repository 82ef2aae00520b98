package token

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ids"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// AuthorizeRequest is a CPO's real-time authorization request
// (POST .../tokens/{uid}/authorize[?type=…], tokens.md §3).
type AuthorizeRequest struct {
	// CPO is the asking party (OCPI-from); CPOParties are every CPO party of
	// its platform: the location must be one of theirs.
	CPO        ocpiclient.Party
	CPOParties []party.PartyRef
	// To is the party the CPO addressed with OCPI-to-* (zero when absent).
	To   ocpiclient.Party
	UID  string
	Type string // "" means RFID
	// Location is the decoded LocationReferences (nil when the body is
	// empty); Body is the body as received, forwarded as it is.
	Location      *ocpi.LocationReferences
	Body          []byte
	CorrelationID string
}

// Answer is an AuthorizationInfo the hub gives itself; the token is the
// stored one, unknown fields included.
type Answer struct {
	Allowed                string                   `json:"allowed"`
	Token                  json.RawMessage          `json:"token"`
	Location               *ocpi.LocationReferences `json:"location,omitempty"`
	AuthorizationReference string                   `json:"authorization_reference,omitempty"`
	Info                   *ocpi.DisplayText        `json:"info,omitempty"`
}

// Authorization is the outcome of Authorize: the hub's own Answer, or the
// owning eMSP's answer to pass back unchanged.
type Authorization struct {
	Answer    *Answer
	Forwarded *hub.Forwarded
	// Source says who decided: own (our token), whitelist (an eMSP's ALWAYS
	// token, answered from our copy), fallback (an ALLOWED/ALLOWED_OFFLINE
	// token whose eMSP could not be reached), forwarded.
	Source string
}

// Authorization sources.
const (
	SourceOwn       = "own"
	SourceWhitelist = "whitelist"
	SourceFallback  = "fallback"
	SourceForwarded = "forwarded"
)

// candidate is a stored token that matches a uid and type.
type candidate struct {
	cc, pid   string
	whitelist string
	body      []byte
	token     ocpi.Token
}

// Authorize answers a CPO's real-time authorization.
//
// The owning eMSP is the one the CPO addresses with OCPI-to-*; without it,
// the owner of the only stored token with that uid and type (several owners:
// 2002, the CPO must address one; none: HTTP 404 with 2004). Then:
//   - our own eMSP's token: answered here (valid → ALLOWED with a new
//     authorization_reference we remember; not valid → BLOCKED);
//   - another eMSP's token with whitelist ALWAYS: answered here from our copy
//     (real-time authorization is not allowed for it, its eMSP need not
//     implement it);
//   - otherwise forwarded to the eMSP's tokens SENDER and its answer passed
//     back; when the eMSP cannot be reached (4001, 4002, 4003), an ALLOWED or
//     ALLOWED_OFFLINE token is answered from our copy, a NEVER token (or one
//     we do not hold) gets the hub error.
//
// A location the request names must be in the hub's directory under one of
// the CPO's parties, with every EVSE it lists (2003 otherwise).
func (s *Service) Authorize(ctx context.Context, req AuthorizeRequest) (*Authorization, error) {
	if req.Type == "" {
		req.Type = ocpi.DefaultTokenType
	}
	own, _ := s.parties.OwnParty(party.RoleEMSP)
	to := req.To
	if s.hub != nil {
		// Addressed to the hub itself: we find the owner; addressed to our
		// own eMSP, it answers (routing.Router.Owner).
		to = s.hub.Routing().Owner(to, party.RoleEMSP)
	}
	// The token and the location it is used at, read together (one round
	// trip on PostgreSQL); the location is checked first.
	rs := s.db.Reads()
	located := func() error { return nil }
	if req.Location != nil {
		var err error
		if located, err = s.checkLocationWith(ctx, rs, req); err != nil {
			return nil, err
		}
	}
	var cands []candidate
	s.candidatesWith(rs, req.UID, req.Type, to, &cands)
	if err := rs.Run(ctx); err != nil {
		return nil, err
	}
	if err := located(); err != nil {
		return nil, err
	}
	var tok *candidate
	owner := to
	switch {
	case !to.IsZero():
		if len(cands) > 0 {
			tok = &cands[0]
		}
	case len(cands) == 0:
		return nil, unknownToken(req)
	case len(cands) > 1:
		return nil, &ocpi.Error{Code: ocpi.ENOTENOUGHINFO, Message: fmt.Sprintf(
			"token %s (%s) is held by %d eMSPs; address the owner with OCPI-to-country-code and OCPI-to-party-id", req.UID, req.Type, len(cands))}
	default:
		tok = &cands[0]
		owner = ocpiclient.Party{CountryCode: tok.cc, PartyID: tok.pid}
	}
	if own.Matches(owner.CountryCode, owner.PartyID) {
		if tok == nil {
			return nil, unknownToken(req)
		}
		return s.answer(ctx, req, tok, SourceOwn)
	}
	if tok != nil && tok.whitelist == ocpi.WhitelistAlways {
		return s.answer(ctx, req, tok, SourceWhitelist)
	}
	fwd, err := s.hub.Forward(ctx, hub.ForwardRequest{
		From: req.CPO, To: owner, Module: Module, Interface: ocpi.InterfaceSender, Method: http.MethodPost,
		Suffix: "/" + url.PathEscape(req.UID) + "/authorize", Query: "type=" + url.QueryEscape(req.Type),
		Body: req.Body, CorrelationID: req.CorrelationID,
	})
	if err != nil {
		if tok != nil && !s.cfg.NoFallback && hubFailure(err) &&
			(tok.whitelist == ocpi.WhitelistAllowed || tok.whitelist == ocpi.WhitelistAllowedOffline) {
			s.logger.WarnContext(ctx, "owning eMSP unreachable; authorization answered from our copy of the token",
				"token", req.UID, "owner", owner.CountryCode+"/"+owner.PartyID, "error", err)
			return s.answer(ctx, req, tok, SourceFallback)
		}
		return nil, err
	}
	s.recordForwarded(ctx, req, owner, fwd)
	return &Authorization{Forwarded: fwd, Source: SourceForwarded}, nil
}

func unknownToken(req AuthorizeRequest) error {
	return &ocpi.Error{Code: ocpi.EUNKNOWNTOKEN, Message: "unknown token " + req.UID + " (" + req.Type + ")"}
}

// hubFailure reports the errors that mean the eMSP was not reached.
func hubFailure(err error) bool {
	switch ocpi.ErrorCode(err) {
	case ocpi.ETIMEOUT, ocpi.ENOTCONNECTED, ocpi.EUNKNOWNRECEIVER, ocpi.EHUB:
		return true
	}
	return false
}

// candidatesWith queues on rs the read of the stored tokens with uid and
// type (of owner only, when owner is set) into *found.
func (s *Service) candidatesWith(rs *store.Reads, uid, typ string, owner ocpiclient.Party, found *[]candidate) {
	q := "SELECT country_code, party_id, whitelist, body FROM tokens WHERE uid = $1 AND type = $2"
	args := []any{ocpi.Key(uid), typ}
	if !owner.IsZero() {
		q += " AND country_code = $3 AND party_id = $4"
		args = append(args, ocpi.Key(owner.CountryCode), ocpi.Key(owner.PartyID))
	}
	rs.Query(func(rows store.Rows) (err error) {
		*found, err = store.Collect(rows, func(row store.Row) (candidate, error) {
			var c candidate
			if err := row.Scan(&c.cc, &c.pid, &c.whitelist, &c.body); err != nil {
				return c, err
			}
			return c, json.Unmarshal(c.body, &c.token)
		})
		return err
	}, q+" ORDER BY country_code, party_id LIMIT 10", args...)
}

// cpoParties returns the caller's CPO parties, which may own the location
// of a request.
func cpoParties(req AuthorizeRequest) []party.PartyRef {
	var out []party.PartyRef
	for _, p := range req.CPOParties {
		if p.Role == party.RoleCPO {
			out = append(out, p)
		}
	}
	return out
}

// checkLocationWith validates the request's location and returns the
// function that checks it once rs has run. A caller with one CPO party (as
// most are) is checked by a read of the location and its EVSEs queued on
// rs, with the token's; a caller with several, or a directory that checks
// an EVSE at a time, party after party (checkLocation).
func (s *Service) checkLocationWith(ctx context.Context, rs *store.Reads, req AuthorizeRequest) (func() error, error) {
	c := ocpi.NewCheck("")
	req.Location.Check(c)
	if err := c.Err(); err != nil {
		return nil, err
	}
	if s.dir == nil {
		return func() error { return nil }, nil
	}
	evses, oneRead := s.dir.(EVSEDirectory)
	cpos := cpoParties(req)
	if !oneRead || len(cpos) != 1 {
		return func() error { return s.checkLocation(ctx, req) }, nil
	}
	p := cpos[0]
	loc := req.Location
	answer := evses.CheckEVSEsWith(rs, p.CountryCode, p.PartyID, loc.LocationID, loc.EVSEUIDs)
	return func() error {
		missing, err := answer()
		switch {
		case ocpi.ErrorCode(err) == ocpi.EUNKNOWNLOCATION:
			return unknownLocation(loc, true)
		case err != nil:
			return err
		case missing >= 0:
			return unknownEVSE(loc, missing)
		}
		return nil
	}, nil
}

// checkLocation requires the location (and every EVSE) of the request in the
// directory under one of the CPO's parties, reading it for each party in
// turn: a caller with several CPO parties, or a directory that checks an
// EVSE at a time.
func (s *Service) checkLocation(ctx context.Context, req AuthorizeRequest) error {
	loc := req.Location
	var found *party.PartyRef
	tried := false
	for _, p := range cpoParties(req) {
		tried = true
		var err error
		if evses, oneRead := s.dir.(EVSEDirectory); oneRead {
			rs := s.db.Reads()
			answer := evses.CheckEVSEsWith(rs, p.CountryCode, p.PartyID, loc.LocationID, loc.EVSEUIDs)
			if err = rs.Run(ctx); err == nil {
				var missing int
				if missing, err = answer(); err == nil {
					if missing >= 0 {
						return unknownEVSE(loc, missing)
					}
					return nil
				}
			}
		} else {
			err = s.dir.CheckLocation(ctx, p.CountryCode, p.PartyID, loc.LocationID, "", "")
		}
		if err == nil {
			found = &p
			break
		}
		if ocpi.ErrorCode(err) != ocpi.EUNKNOWNLOCATION {
			return err
		}
	}
	if found == nil {
		return unknownLocation(loc, tried)
	}
	for i, uid := range loc.EVSEUIDs {
		err := s.dir.CheckLocation(ctx, found.CountryCode, found.PartyID, loc.LocationID, uid, "")
		if ocpi.ErrorCode(err) == ocpi.EUNKNOWNLOCATION {
			return unknownEVSE(loc, i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// unknownLocation is the 2003 of a request's location; tried is false when
// the caller has no CPO party that could own it.
func unknownLocation(loc *ocpi.LocationReferences, tried bool) error {
	msg := "location " + loc.LocationID + " is not in the hub's directory"
	if !tried {
		msg = "the caller has no CPO party to own location " + loc.LocationID
	}
	return &ocpi.Error{Code: ocpi.EUNKNOWNLOCATION, Message: msg, Field: "location_id", Issue: "unknown location",
		HTTPStatus: http.StatusOK}
}

// unknownEVSE is the 2003 of the i-th EVSE of a request's location.
func unknownEVSE(loc *ocpi.LocationReferences, i int) error {
	return &ocpi.Error{Code: ocpi.EUNKNOWNLOCATION, Message: "EVSE " + loc.EVSEUIDs[i] + " is not in location " + loc.LocationID,
		Field: "evse_uids[" + strconv.Itoa(i) + "]", Issue: "unknown EVSE", HTTPStatus: http.StatusOK}
}

// answer builds and records the hub's own answer from a stored token.
func (s *Service) answer(ctx context.Context, req AuthorizeRequest, tok *candidate, source string) (*Authorization, error) {
	a := &Answer{Allowed: ocpi.AllowedAllowed, Token: tok.body}
	if !tok.token.IsValid() {
		a.Allowed = ocpi.AllowedBlocked
		a.Info = &ocpi.DisplayText{Language: "en", Text: "This token is blocked."}
	}
	if a.Allowed == ocpi.AllowedAllowed {
		a.Location = req.Location
		if source == SourceOwn {
			a.AuthorizationReference = s.NewReferenceFunc()
		}
	}
	// The answer is given once its record has committed: a session or CDR
	// that carries the reference finds the authorization.
	if err := s.record(ctx, req, ocpiclient.Party{CountryCode: tok.cc, PartyID: tok.pid}, a.Allowed, a.AuthorizationReference, source); err != nil {
		return nil, err
	}
	return &Authorization{Answer: a, Source: source}, nil
}

// recordForwarded remembers what the eMSP answered, when it is an
// AuthorizationInfo (best effort: the answer goes back either way).
func (s *Service) recordForwarded(ctx context.Context, req AuthorizeRequest, owner ocpiclient.Party, fwd *hub.Forwarded) {
	env, err := ocpi.DecodeEnvelope(fwd.Body)
	if err != nil || !ocpi.IsSuccess(env.StatusCode) || len(env.Data) == 0 {
		return
	}
	var info ocpi.AuthorizationInfo
	if json.Unmarshal(env.Data, &info) != nil || info.Allowed == "" {
		return
	}
	if err := s.record(ctx, req, owner, info.Allowed, info.AuthorizationReference, SourceForwarded); err != nil {
		s.logger.WarnContext(ctx, "could not record a forwarded authorization", "error", err)
	}
}

// record writes an authorization: one statement, written alone after the
// reads that decided the answer (store.DB.Write), not a transaction held
// around the request.
func (s *Service) record(ctx context.Context, req AuthorizeRequest, owner ocpiclient.Party, allowed, ref, source string) error {
	var locID string
	var evses any
	if req.Location != nil {
		locID = req.Location.LocationID
		b, _ := json.Marshal(req.Location.EVSEUIDs)
		evses = string(b)
	}
	_, err := s.db.Write(ctx, `INSERT INTO token_authorizations (authorization_reference, cpo_country_code, cpo_party_id,
		token_country_code, token_party_id, token_uid, token_type, location_id, evse_uids, allowed, source, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		ref, ocpi.Key(req.CPO.CountryCode), ocpi.Key(req.CPO.PartyID), ocpi.Key(owner.CountryCode), ocpi.Key(owner.PartyID),
		ocpi.Key(req.UID), req.Type, locID, evses, allowed, source, s.now().UnixMicro())
	return err
}

// AuthorizationRecord is a remembered real-time authorization.
type AuthorizationRecord struct {
	AuthorizationReference string
	CPO                    ocpiclient.Party
	Token                  Ref
	LocationID             string
	Allowed                string
	Source                 string
	CreatedAt              ocpi.DateTime
}

// FindAuthorization returns the authorization that issued or received a
// reference (the latest, if a reference was seen twice).
func (s *Service) FindAuthorization(ctx context.Context, reference string) (*AuthorizationRecord, error) {
	var a AuthorizationRecord
	var at int64
	err := s.db.Read().QueryRow(ctx, `SELECT authorization_reference, cpo_country_code, cpo_party_id, token_country_code,
		token_party_id, token_uid, token_type, location_id, allowed, source, created_at
		FROM token_authorizations WHERE authorization_reference = $1 ORDER BY pk DESC LIMIT 1`, reference).
		Scan(&a.AuthorizationReference, &a.CPO.CountryCode, &a.CPO.PartyID, &a.Token.CountryCode, &a.Token.PartyID,
			&a.Token.UID, &a.Token.Type, &a.LocationID, &a.Allowed, &a.Source, &at)
	if errors.Is(err, store.ErrNoRows) {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "no authorization with reference " + reference}
	}
	if err != nil {
		return nil, err
	}
	a.CreatedAt = ocpi.FromMicros(at)
	return &a, nil
}

// newReference makes an authorization_reference: a time-ordered UUID
// (ids.New), which fits CiString(36) and reveals nothing the CPO that
// receives it does not know.
func newReference() string { return ids.New() }
