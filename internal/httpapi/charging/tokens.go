package charging

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/token"
)

// tokenType reads the ?type= of a token URL: a TokenType, RFID when absent.
func tokenType(r *http.Request) (string, error) {
	t := r.URL.Query().Get("type")
	if t == "" {
		return ocpi.DefaultTokenType, nil
	}
	if !slices.Contains(ocpi.TokenTypes, t) {
		return "", ocpi.Invalid("type", "query parameter "+t+" is not a TokenType (AD_HOC_USER, APP_USER, OTHER, RFID)")
	}
	return t, nil
}

// tokenRef reads the token an eMSP's URL names and checks the caller owns
// it.
func tokenRef(r *http.Request) (token.Ref, error) {
	typ, err := tokenType(r)
	if err != nil {
		return token.Ref{}, err
	}
	ref := token.Ref{CountryCode: r.PathValue("cc"), PartyID: r.PathValue("pid"), UID: r.PathValue("uid"), Type: typ}
	if len(ref.UID) > 36 {
		return ref, ocpi.Invalid("token_uid", "is longer than 36 characters")
	}
	return ref, kit.OwnsParty(r, party.RoleEMSP, ref.CountryCode, ref.PartyID)
}

// handleEMSPTokenPut serves PUT /ocpi/2.2.1/emsp/tokens/{cc}/{pid}/{uid}.
func (s *handlers) handleEMSPTokenPut(w http.ResponseWriter, r *http.Request) error {
	return putObject(s.Kit, w, r, tokenRef, kit.TokenChange(r), s.cfg.Tokens.Put)
}

// handleEMSPTokenPatch serves PATCH /ocpi/2.2.1/emsp/tokens/{cc}/{pid}/{uid}.
func (s *handlers) handleEMSPTokenPatch(w http.ResponseWriter, r *http.Request) error {
	return patchObject(s.Kit, w, r, tokenRef, kit.TokenChange(r), s.cfg.Tokens.Patch)
}

// handleEMSPTokenGet serves GET /ocpi/2.2.1/emsp/tokens/{cc}/{pid}/{uid}:
// the eMSP checks the hub's copy.
func (s *handlers) handleEMSPTokenGet(w http.ResponseWriter, r *http.Request) error {
	return getObject(s.Kit, w, r, tokenRef, s.cfg.Tokens.Get)
}

// handleCPOTokens serves GET /ocpi/2.2.1/cpo/tokens: a CPO pulls the tokens
// of every eMSP (GET ALL via hub), or of the one OCPI-to-* names.
func (s *handlers) handleCPOTokens(w http.ResponseWriter, r *http.Request) error {
	if _, err := kit.CallerParty(r, party.RoleCPO); err != nil {
		return err
	}
	return kit.SenderPage(s.Kit, w, r, func(req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		var f token.Filter
		if to, ok := s.AddressedElsewhere(r); ok {
			f.CountryCode, f.PartyID = to.CountryCode, to.PartyID
		}
		return s.cfg.Tokens.List(r.Context(), f, req)
	})
}

// handleCPOTokenAuthorize serves POST /ocpi/2.2.1/cpo/tokens/{uid}/authorize.
func (s *handlers) handleCPOTokenAuthorize(w http.ResponseWriter, r *http.Request) error {
	req, raw, err := kit.AuthorizeRequest(r, tokenType, "uid")
	if err != nil {
		return err
	}
	req.To, _ = s.AddressedElsewhere(r)
	if len(bytes.TrimSpace(raw)) > 0 {
		req.Location = &ocpi.LocationReferences{}
		if err := ocpi.Decode(raw, req.Location); err != nil {
			return err
		}
		req.Body = raw
	}
	res, err := s.cfg.Tokens.Authorize(r.Context(), req)
	if err != nil {
		return err
	}
	if res.Forwarded != nil {
		writeForwarded(w, res.Forwarded)
		return nil
	}
	s.SetHubRouting(w, r)
	return s.OK(w, res.Answer)
}

// writeForwarded writes a forwarded answer back as it came.
func writeForwarded(w http.ResponseWriter, out *hub.Forwarded) {
	for k, vs := range out.Header {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(out.HTTPStatus)
	_, _ = w.Write(out.Body)
}
