package charging

import (
	"encoding/json"
	"net/http"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/session"
)

// sessionRef reads the session a CPO's URL names and checks the caller owns
// it.
func sessionRef(r *http.Request) (session.Ref, error) {
	ref := session.Ref{CountryCode: r.PathValue("cc"), PartyID: r.PathValue("pid"), ID: r.PathValue("id")}
	if err := kit.OwnsParty(r, party.RoleCPO, ref.CountryCode, ref.PartyID); err != nil {
		return ref, err
	}
	if len(ref.ID) > 36 {
		return ref, ocpi.Invalid("session_id", "is longer than 36 characters")
	}
	return ref, nil
}

// sessionChange is the change a session write by the calling platform
// makes.
func sessionChange(r *http.Request) session.Change {
	return session.Change{CorrelationID: kit.CorrelationID(r.Context()), Sender: kit.SenderOf(r)}
}

// handleCPOSessionPut serves PUT /ocpi/2.2.1/cpo/sessions/{cc}/{pid}/{id}.
func (s *handlers) handleCPOSessionPut(w http.ResponseWriter, r *http.Request) error {
	return putObject(s.Kit, w, r, sessionRef, sessionChange(r), s.cfg.Sessions.Put)
}

// handleCPOSessionPatch serves PATCH /ocpi/2.2.1/cpo/sessions/{cc}/{pid}/{id}.
func (s *handlers) handleCPOSessionPatch(w http.ResponseWriter, r *http.Request) error {
	return patchObject(s.Kit, w, r, sessionRef, sessionChange(r), s.cfg.Sessions.Patch)
}

// handleCPOSessionGet serves GET /ocpi/2.2.1/cpo/sessions/{cc}/{pid}/{id}:
// the CPO checks the hub's copy.
func (s *handlers) handleCPOSessionGet(w http.ResponseWriter, r *http.Request) error {
	return getObject(s.Kit, w, r, sessionRef, s.cfg.Sessions.Get)
}

// handleEMSPSessions serves GET /ocpi/2.2.1/emsp/sessions: an eMSP pulls
// the sessions of its own tokens (of one CPO, with OCPI-to-*).
func (s *handlers) handleEMSPSessions(w http.ResponseWriter, r *http.Request) error {
	return s.ownTokensPage(w, r, func(owners []ocpiclient.Party, cpo ocpiclient.Party, req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		return s.cfg.Sessions.List(r.Context(), session.Filter{Owners: owners, CPO: cpo}, req)
	})
}

// ownTokensPage answers an eMSP's pull of what its own tokens made
// (sessions, CDRs): list gives a page of the owners' objects, of the CPO
// OCPI-to-* names (zero: of every CPO).
func (s *handlers) ownTokensPage(w http.ResponseWriter, r *http.Request,
	list func(owners []ocpiclient.Party, cpo ocpiclient.Party, req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error)) error {
	if _, err := kit.CallerParty(r, party.RoleEMSP); err != nil {
		return err
	}
	return kit.SenderPage(s.Kit, w, r, func(req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		cpo, _ := s.AddressedElsewhere(r)
		return list(kit.Owners(r), cpo, req)
	})
}

// handleEMSPChargingPreferences serves PUT
// /ocpi/2.2.1/emsp/sessions/{session_id}/charging_preferences: relayed to
// the session's CPO, its answer passed back.
func (s *handlers) handleEMSPChargingPreferences(w http.ResponseWriter, r *http.Request) error {
	from, raw, err := kit.CallerAndBody(r, party.RoleEMSP)
	if err != nil {
		return err
	}
	req := session.PreferencesRequest{Owners: kit.Owners(r), From: kit.AsParty(from), SessionID: r.PathValue("session_id"), Body: raw,
		CorrelationID: kit.CorrelationID(r.Context())}
	if to, ok := s.AddressedElsewhere(r); ok {
		req.CPO = to
	}
	out, err := s.cfg.Sessions.SetChargingPreferences(r.Context(), req)
	if err != nil {
		return err
	}
	writeForwarded(w, out)
	return nil
}
