package legacyapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/session"
)

// Legacy sessions and CDRs: a legacy CPO pushes them (its objects carry the
// whole location and the contract id, auth_id, instead of the token: the
// hub finds the token by its contract id, so that the session reaches the
// token's eMSP), a legacy eMSP pulls those of its tokens.

// contractToken finds the token of a legacy session's or CDR's auth_id. A
// contract id with several tokens gives the first stored one: they share
// the owner, which is what routing needs (the loss is logged).
func (s *handlers) contractToken(ctx context.Context, version, authID string) (*ocpi.CdrToken, error) {
	toks, err := s.cfg.Tokens.FindByContract(ctx, authID)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, ocpi.Invalid("auth_id", "no token with contract id "+authID+" is known to the hub: the session or CDR cannot be given to its eMSP")
	}
	if len(toks) > 1 {
		s.cfg.LegacyRecorder.Lost(ctx, version, session.Module, "auth_id "+authID, v211.Loss{"cdr_token.uid: the contract has several tokens; the first is named"})
	}
	t := toks[0]
	return &ocpi.CdrToken{CountryCode: t.CountryCode, PartyID: t.PartyID, UID: t.UID, Type: t.Type, ContractID: t.ContractID}, nil
}

// legacySessionRef reads a legacy CPO's session URL; the party must be the
// caller's.
func legacySessionRef(r *http.Request) (session.Ref, error) {
	owner, err := kit.OwnerOf(r, party.RoleCPO)
	if err != nil {
		return session.Ref{}, err
	}
	ref := session.Ref{CountryCode: owner.CountryCode, PartyID: owner.PartyID, ID: r.PathValue("session_id")}
	c := ocpi.NewCheck("")
	c.CiString("session_id", ref.ID, 36, true)
	return ref, c.Err()
}

// handleLegacyCPOSessionPut stores a legacy CPO's session.
func (s *handlers) handleLegacyCPOSessionPut(w http.ResponseWriter, r *http.Request) error {
	ref, err := legacySessionRef(r)
	if err != nil {
		return err
	}
	ls, v, err := decodeLegacy[v211.Session](s, r, session.Module)
	if err != nil {
		return err
	}
	if !ocpi.EqualCI(ls.ID, ref.ID) {
		return ocpi.Invalid("id", "must equal the session_id of the URL ("+ref.ID+")")
	}
	tok, err := s.contractToken(r.Context(), v, ls.AuthID)
	if err != nil {
		return err
	}
	sess, loss := ls.To221(ref.CountryCode, ref.PartyID, tok)
	s.cfg.LegacyRecorder.Lost(r.Context(), v, session.Module, "session "+ref.String(), loss)
	body, err := json.Marshal(sess)
	if err != nil {
		return err
	}
	created, err := s.cfg.Sessions.Put(r.Context(), session.Change{CorrelationID: kit.CorrelationID(r.Context())}, ref, body)
	if err != nil {
		return err
	}
	return s.legacyStored(w, created)
}

// handleLegacyCPOSessionPatch merges a legacy CPO's session PATCH (stamped
// with the time it arrived when it has no last_updated, which 2.1.1 does not
// require).
func (s *handlers) handleLegacyCPOSessionPatch(w http.ResponseWriter, r *http.Request) error {
	ref, raw, err := kit.RefAndBody(r, legacySessionRef)
	if err != nil {
		return err
	}
	patch, v, err := s.legacyPatch(r, session.Module, raw)
	if err != nil {
		return err
	}
	p, loss, err := v211.SessionPatchTo221(patch, func(authID string) (*ocpi.CdrToken, error) {
		return s.contractToken(r.Context(), v, authID)
	})
	if err != nil {
		return err
	}
	s.cfg.LegacyRecorder.Lost(r.Context(), v, session.Module, "session "+ref.String(), loss)
	body, err := ocpi.MarshalObject(p)
	if err != nil {
		return err
	}
	ch := session.Change{CorrelationID: kit.CorrelationID(r.Context())}
	err = writePatch(raw, body, func(body []byte) error { return s.cfg.Sessions.Patch(r.Context(), ch, ref, body) })
	if err != nil {
		return err
	}
	return s.legacyStored(w, false)
}

// handleLegacyCPOSessionDelete answers a 2.0 CPO's session DELETE: 2.2.1
// has no deletion of sessions, so the session stays as last sent (the
// DELETE is logged and counted as a dropped change).
func (s *handlers) handleLegacyCPOSessionDelete(w http.ResponseWriter, r *http.Request) error {
	ref, err := legacySessionRef(r)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Sessions.Get(r.Context(), ref); err != nil {
		return err
	}
	s.cfg.LegacyRecorder.Lost(r.Context(), v211.V20, session.Module, "session "+ref.String(), v211.Loss{"DELETE: 2.2.1 sessions are not deleted; the session stays as last sent"})
	return s.legacyOK(w, nil)
}

// handleLegacyCPOSessionGet serves the hub's copy of a legacy CPO's
// session, in its version.
func (s *handlers) handleLegacyCPOSessionGet(w http.ResponseWriter, r *http.Request) error {
	ref, err := legacySessionRef(r)
	if err != nil {
		return err
	}
	raw, err := s.cfg.Sessions.Get(r.Context(), ref)
	if err != nil {
		return err
	}
	out, ok, err := s.sessionOut(r, raw)
	if err != nil {
		return err
	}
	if !ok {
		return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "session " + ref.String() + " has no OCPI " + Version(r.URL.Path) + " form"}
	}
	return s.legacyOK(w, json.RawMessage(out))
}

// sessionOut converts a stored session for the caller's version.
func (s *handlers) sessionOut(r *http.Request, raw []byte) ([]byte, bool, error) {
	var sess ocpi.Session
	if err := json.Unmarshal(raw, &sess); err != nil {
		return nil, false, err
	}
	loc, err := s.cfg.DirectoryLocation(r.Context(), sess.CountryCode, sess.PartyID, sess.LocationID)
	if err != nil {
		return nil, false, err
	}
	v := Version(r.URL.Path)
	ls, loss, ok := v211.FromSession(&sess, loc)
	s.cfg.LegacyRecorder.Lost(r.Context(), v, session.Module, "session "+sess.ID, loss)
	if !ok {
		return nil, false, nil
	}
	out, err := v211.Encode(v, session.Module, "", ls)
	return out, err == nil, err
}

// handleLegacyEMSPSessions is the sessions sender for legacy eMSPs: the
// sessions of their tokens, converted.
func (s *handlers) handleLegacyEMSPSessions(w http.ResponseWriter, r *http.Request) error {
	list := func(owners []ocpiclient.Party, req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		return s.cfg.Sessions.List(r.Context(), session.Filter{Owners: owners}, req)
	}
	return s.legacyOwnTokens(w, r, list, func(it json.RawMessage) ([]byte, bool, error) {
		return s.sessionOut(r, it)
	})
}

// legacyOwnTokens is legacySender for a legacy eMSP's pull of what its own
// tokens made (sessions, CDRs): list gives a page of the owners' objects.
func (s *handlers) legacyOwnTokens(w http.ResponseWriter, r *http.Request, list func(owners []ocpiclient.Party, req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error),
	out func(json.RawMessage) ([]byte, bool, error)) error {
	if _, err := kit.CallerParty(r, party.RoleEMSP); err != nil {
		return err
	}
	return s.legacySender(w, r, func(req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) { return list(kit.Owners(r), req) }, out)
}

// handleLegacyCPOCDRPost stores a legacy CPO's CDR: 201 with its URL at the
// hub (in the CPO's version) in Location; a repeat 200 with the same.
func (s *handlers) handleLegacyCPOCDRPost(w http.ResponseWriter, r *http.Request) error {
	owner, err := kit.CallerParty(r, party.RoleCPO)
	if err != nil {
		return err
	}
	lc, v, err := decodeLegacy[v211.CDR](s, r, cdr.Module)
	if err != nil {
		return err
	}
	tok, err := s.contractToken(r.Context(), v, lc.AuthID)
	if err != nil {
		return err
	}
	evseID := ""
	if _, evse, _, _, ok := lc.Location.Place(); ok {
		// 2.2.1 names the EVSE by evse_id, which 2.1.1 may leave out: the
		// hub's copy of the location may have it.
		if loc, err := s.cfg.DirectoryLocation(r.Context(), owner.CountryCode, owner.PartyID, lc.Location.ID); err == nil && loc != nil {
			if e, _ := loc.EVSE(evse); e != nil {
				evseID = e.EVSEID
			}
		}
	}
	d, loss, err := lc.To221(owner.CountryCode, owner.PartyID, tok, evseID)
	if err != nil {
		return err
	}
	s.cfg.LegacyRecorder.Lost(r.Context(), v, cdr.Module, "CDR "+lc.ID, loss)
	body, err := json.Marshal(d)
	if err != nil {
		return err
	}
	res, err := s.cfg.CDRs.Create(r.Context(), cdr.Change{CPOs: kit.CallerParties(r, party.RoleCPO), CorrelationID: kit.CorrelationID(r.Context())}, body)
	if err != nil {
		return err
	}
	w.Header().Set("Location", s.PublicURL("/ocpi/"+v+"/cpo/cdrs/"+url.PathEscape(res.Ref.CountryCode)+"/"+url.PathEscape(res.Ref.PartyID)+"/"+url.PathEscape(res.Ref.ID)))
	return s.legacyStored(w, res.Created)
}

// handleLegacyCPOCDRGet serves a CDR at the URL a legacy CPO's POST was
// answered with.
func (s *handlers) handleLegacyCPOCDRGet(w http.ResponseWriter, r *http.Request) error {
	owner, err := kit.OwnerOf(r, party.RoleCPO)
	if err != nil {
		return err
	}
	c, err := s.cfg.CDRs.Find(r.Context(), cdr.Ref{CountryCode: owner.CountryCode, PartyID: owner.PartyID, ID: r.PathValue("cdr_id")})
	if err != nil {
		return err
	}
	out, ok, err := s.cdrOut(r, &c.CDR)
	if err != nil {
		return err
	}
	if !ok {
		return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "CDR " + c.ID + " has no OCPI " + Version(r.URL.Path) + " form"}
	}
	return s.legacyOK(w, json.RawMessage(out))
}

// cdrOut converts a stored CDR for the caller's version.
func (s *handlers) cdrOut(r *http.Request, d *ocpi.CDR) ([]byte, bool, error) {
	var loc *ocpi.Location
	if d.CdrLocation != nil {
		var err error
		if loc, err = s.cfg.DirectoryLocation(r.Context(), d.CountryCode, d.PartyID, d.CdrLocation.ID); err != nil {
			return nil, false, err
		}
	}
	v := Version(r.URL.Path)
	lc, loss, ok := v211.FromCDR(d, loc)
	s.cfg.LegacyRecorder.Lost(r.Context(), v, cdr.Module, "CDR "+d.ID, loss)
	if !ok {
		return nil, false, nil
	}
	out, err := v211.Encode(v, cdr.Module, "", lc)
	return out, err == nil, err
}

// handleLegacyEMSPCDRs is the CDRs sender for legacy eMSPs.
func (s *handlers) handleLegacyEMSPCDRs(w http.ResponseWriter, r *http.Request) error {
	list := func(owners []ocpiclient.Party, req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		return s.cfg.CDRs.List(r.Context(), cdr.Filter{Owners: owners}, req)
	}
	return s.legacyOwnTokens(w, r, list, func(it json.RawMessage) ([]byte, bool, error) {
		var d ocpi.CDR
		if err := json.Unmarshal(it, &d); err != nil {
			return nil, false, err
		}
		return s.cdrOut(r, &d)
	})
}
