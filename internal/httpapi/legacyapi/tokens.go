package legacyapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/token"
)

// Legacy tokens and commands: a legacy eMSP pushes its tokens (owned by the
// party of the URL) and sends commands (2.1.1); a legacy CPO pulls tokens,
// asks for real-time authorizations and posts command results to the
// response_url the hub gave it.

// legacyTokenRef reads a legacy eMSP's token URL; the party must be the
// caller's. 2.1.1 token URLs name no type: type is the body's (PUT), the
// ?type= a client may add anyway, or RFID.
func legacyTokenRef(r *http.Request) (token.Ref, error) {
	owner, err := kit.OwnerOf(r, party.RoleEMSP)
	if err != nil {
		return token.Ref{}, err
	}
	ref := token.Ref{CountryCode: owner.CountryCode, PartyID: owner.PartyID, UID: r.PathValue("token_uid"), Type: r.URL.Query().Get("type")}
	c := ocpi.NewCheck("")
	c.CiString("token_uid", ref.UID, 36, true)
	c.Enum("type", ref.Type, v211.TokenTypes, false)
	return ref, c.Err()
}

// findLegacyToken resolves a token URL without a type: RFID, else OTHER.
func (s *handlers) findLegacyToken(r *http.Request, ref token.Ref) (token.Ref, *ocpi.Token, error) {
	types := []string{ref.Type}
	if ref.Type == "" {
		types = []string{"RFID", "OTHER"}
	}
	var err error
	for _, t := range types {
		ref.Type = t
		var tok *ocpi.Token
		if tok, err = s.cfg.Tokens.Find(r.Context(), ref); err == nil {
			return ref, tok, nil
		}
	}
	return ref, nil, err
}

// handleLegacyEMSPTokenPut stores a legacy eMSP's token.
func (s *handlers) handleLegacyEMSPTokenPut(w http.ResponseWriter, r *http.Request) error {
	ref, err := legacyTokenRef(r)
	if err != nil {
		return err
	}
	lt, _, err := decodeLegacy[v211.Token](s, r, token.Module)
	if err != nil {
		return err
	}
	if !ocpi.EqualCI(lt.UID, ref.UID) {
		return ocpi.Invalid("uid", "must equal the token uid in the URL ("+ref.UID+")")
	}
	ref.Type = lt.Type
	body, err := json.Marshal(lt.To221(ref.CountryCode, ref.PartyID))
	if err != nil {
		return err
	}
	created, err := s.cfg.Tokens.Put(r.Context(), kit.TokenChange(r), ref, body)
	if err != nil {
		return err
	}
	return s.legacyStored(w, created)
}

// handleLegacyEMSPTokenPatch merges a legacy eMSP's token PATCH (stamped
// with the time it arrived when it has no last_updated).
func (s *handlers) handleLegacyEMSPTokenPatch(w http.ResponseWriter, r *http.Request) error {
	ref, raw, err := kit.RefAndBody(r, legacyTokenRef)
	if err != nil {
		return err
	}
	if ref, _, err = s.findLegacyToken(r, ref); err != nil {
		return err
	}
	patch, _, err := s.legacyPatch(r, token.Module, raw)
	if err != nil {
		return err
	}
	body, err := ocpi.MarshalObject(v211.TokenPatchTo221(patch))
	if err != nil {
		return err
	}
	err = writePatch(raw, body, func(body []byte) error { return s.cfg.Tokens.Patch(r.Context(), kit.TokenChange(r), ref, body) })
	if err != nil {
		return err
	}
	return s.legacyStored(w, false)
}

// handleLegacyEMSPTokenGet serves the hub's copy of a legacy eMSP's token.
func (s *handlers) handleLegacyEMSPTokenGet(w http.ResponseWriter, r *http.Request) error {
	ref, err := legacyTokenRef(r)
	if err != nil {
		return err
	}
	_, tok, err := s.findLegacyToken(r, ref)
	if err != nil {
		return err
	}
	return s.legacyTokenAnswer(w, r, tok)
}

func (s *handlers) legacyTokenAnswer(w http.ResponseWriter, r *http.Request, tok *ocpi.Token) error {
	v := Version(r.URL.Path)
	lt, loss := v211.FromToken(tok)
	s.cfg.LegacyRecorder.Lost(r.Context(), v, token.Module, "token "+tok.UID, loss)
	out, err := v211.Encode(v, token.Module, "", lt)
	if err != nil {
		return err
	}
	return s.legacyOK(w, json.RawMessage(out))
}

// handleLegacyCPOTokens is the tokens sender for legacy CPOs: the tokens of
// every eMSP, converted.
func (s *handlers) handleLegacyCPOTokens(w http.ResponseWriter, r *http.Request) error {
	if _, err := kit.CallerParty(r, party.RoleCPO); err != nil {
		return err
	}
	v := Version(r.URL.Path)
	list := func(req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		return s.cfg.Tokens.List(r.Context(), token.Filter{}, req)
	}
	return s.legacySender(w, r, list, func(it json.RawMessage) ([]byte, bool, error) {
		var t ocpi.Token
		if err := json.Unmarshal(it, &t); err != nil {
			return nil, false, err
		}
		lt, loss := v211.FromToken(&t)
		s.cfg.LegacyRecorder.Lost(r.Context(), v, token.Module, "token "+t.UID, loss)
		b, err := v211.Encode(v, token.Module, "", lt)
		return b, err == nil, err
	})
}

// legacyTokenType reads the optional 2.1.1 TokenType of a request's query.
func legacyTokenType(r *http.Request) (string, error) {
	typ := r.URL.Query().Get("type")
	if typ != "" && !slices.Contains(v211.TokenTypes, typ) {
		return "", ocpi.Invalid("type", "query parameter "+typ+" is not a 2.1.1 TokenType (OTHER, RFID)")
	}
	return typ, nil
}

// handleLegacyCPOAuthorize answers a 2.1.1 CPO's real-time authorization as
// a 2.2.1 CPO's is answered (tokens.md §3), in 2.1.1: without the token and
// authorization_reference.
func (s *handlers) handleLegacyCPOAuthorize(w http.ResponseWriter, r *http.Request) error {
	req, raw, err := kit.AuthorizeRequest(r, legacyTokenType, "token_uid")
	if err != nil {
		return err
	}
	uid := req.UID
	if len(bytes.TrimSpace(raw)) > 0 {
		var lr v211.LocationReferences
		if err := ocpi.Decode(raw, &lr); err != nil {
			return err
		}
		var loss v211.Loss
		req.Location = lr.To221(&loss)
		s.cfg.LegacyRecorder.Lost(r.Context(), v211.V211, token.Module, "authorization of "+uid, loss)
		if req.Body, err = json.Marshal(req.Location); err != nil {
			return err
		}
	}
	res, err := s.cfg.Tokens.Authorize(r.Context(), req)
	if err != nil {
		return err
	}
	var info ocpi.AuthorizationInfo
	if res.Forwarded != nil {
		env, err := ocpi.DecodeEnvelope(res.Forwarded.Body)
		if err != nil || !ocpi.IsSuccess(env.StatusCode) || res.Forwarded.HTTPStatus >= 300 {
			return forwardedError(res.Forwarded, env)
		}
		if err := json.Unmarshal(env.Data, &info); err != nil {
			return ocpi.Errorf(ocpi.EHUB, "the token's eMSP answered with an AuthorizationInfo the hub cannot read")
		}
	} else {
		info = ocpi.AuthorizationInfo{Allowed: res.Answer.Allowed, Location: res.Answer.Location, Info: res.Answer.Info}
	}
	return s.legacyOK(w, v211.FromAuthorizationInfo(&info))
}

// forwardedError turns the error answer of a party the hub forwarded to into
// an error for a legacy caller (the same status, in its envelope).
func forwardedError(f *hub.Forwarded, env *ocpi.Envelope) error {
	e := &ocpi.Error{Code: ocpi.EHUB, Message: "the party the request went to answered HTTP " + strconv.Itoa(f.HTTPStatus), HTTPStatus: f.HTTPStatus}
	if env != nil {
		e.StatusCode = env.StatusCode
		if env.StatusMessage != "" {
			e.Message = env.StatusMessage
		}
		if env.StatusCode == ocpi.StatusUnknownToken {
			e.Code = ocpi.EUNKNOWNTOKEN
		}
	}
	return e
}

// handleLegacyEMSPCommand relays a 2.1.1 eMSP's command as a 2.2.1 one (its
// token is the eMSP's); the answer and, later, the result reach the eMSP in
// 2.1.1.
func (s *handlers) handleLegacyEMSPCommand(w http.ResponseWriter, r *http.Request) error {
	from, err := kit.CallerParty(r, party.RoleEMSP)
	if err != nil {
		return err
	}
	cmd := r.PathValue("command")
	if !slices.Contains(v211.CommandTypes, cmd) {
		return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "unknown command " + cmd + "; OCPI 2.1.1 commands are RESERVE_NOW, START_SESSION, STOP_SESSION, UNLOCK_CONNECTOR"}
	}
	raw, err := kit.ReadBody(r)
	if err != nil {
		return err
	}
	body, err := v211.CommandTo221(cmd, raw, from.CountryCode, from.PartyID)
	if err != nil {
		return err
	}
	c := party.CallerFrom(r.Context())
	out, err := s.cfg.Commands.Submit(r.Context(), command.Request{Module: command.Module, Command: cmd, From: kit.AsParty(from), Body: body,
		PlatformID: c.PlatformID, Parties: c.Roles, CorrelationID: kit.CorrelationID(r.Context())})
	if err != nil {
		return err
	}
	var resp ocpi.CommandResponse
	status, httpStatus := ocpi.StatusSuccess, http.StatusOK
	if out.Forwarded != nil {
		env, err := ocpi.DecodeEnvelope(out.Forwarded.Body)
		if err != nil {
			return forwardedError(out.Forwarded, nil)
		}
		status, httpStatus = env.StatusCode, out.Forwarded.HTTPStatus
		_ = json.Unmarshal(env.Data, &resp)
	} else {
		status, httpStatus = out.Local.StatusCode, out.Local.HTTPStatus
		if lr, ok := out.Local.Data.(ocpi.CommandResponse); ok {
			resp = lr
		}
	}
	env := ocpi.Success(v211.ResponseFrom221(resp), v211.Timestamp(s.Clock.Now()).Time)
	if resp.Result == "" {
		env.Data = nil
	}
	env.StatusCode, env.StatusMessage = status, ocpi.StatusText(status)
	if !ocpi.IsSuccess(status) {
		env = Envelope(env)
		env.Error = &ocpi.ErrorDetail{Code: "CPO_ERROR", Description: "the command was not accepted: " + ocpi.StatusText(status)}
	}
	kit.WriteJSON(w, httpStatus, env)
	return nil
}

// handleLegacyCPOCommandResult receives a 2.1.1 CPO's command result (a
// CommandResponse) at the response_url the hub gave it, as a 2.2.1
// CommandResult.
func (s *handlers) handleLegacyCPOCommandResult(w http.ResponseWriter, r *http.Request) error {
	_, raw, err := kit.CallerAndBody(r, party.RoleCPO)
	if err != nil {
		return err
	}
	body, loss, err := v211.ResultTo221(raw)
	if err != nil {
		return err
	}
	s.cfg.LegacyRecorder.Lost(r.Context(), v211.V211, command.Module, "result of "+r.PathValue("id"), loss)
	if err := s.cfg.Commands.Receive(r.Context(), command.ResultRequest{Module: command.Module, Command: r.PathValue("command"),
		ID: r.PathValue("id"), CPOs: kit.CallerParties(r, party.RoleCPO), Body: body}); err != nil {
		return err
	}
	return s.legacyOK(w, nil)
}
