package session

import (
	"context"
	"net/http"
	"net/url"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

// PreferencesRequest is an eMSP's PUT of ChargingPreferences for a session.
type PreferencesRequest struct {
	// Owners are the caller's eMSP parties (the session must be of one of
	// their tokens); From is the party the request acts for.
	Owners []ocpiclient.Party
	From   ocpiclient.Party
	// CPO is the party the eMSP addressed with OCPI-to-* (zero: found from
	// the session).
	CPO           ocpiclient.Party
	SessionID     string
	Body          []byte
	CorrelationID string
}

// SetChargingPreferences relays an eMSP's charging preferences to the CPO of
// the session (its sessions SENDER, .../{session_id}/charging_preferences)
// and returns the CPO's answer (a ChargingPreferencesResponse) unchanged. A
// session of another eMSP's token is not found (HTTP 404).
func (s *Service) SetChargingPreferences(ctx context.Context, req PreferencesRequest) (*hub.Forwarded, error) {
	var prefs ocpi.ChargingPreferences
	if err := ocpi.DecodeValid(req.Body, &prefs); err != nil {
		return nil, err
	}
	st, err := s.FindForOwner(ctx, req.Owners, req.CPO, req.SessionID)
	if err != nil {
		return nil, err
	}
	return s.hub.Forward(ctx, hub.ForwardRequest{
		From: req.From, To: ocpiclient.Party{CountryCode: st.CountryCode, PartyID: st.PartyID},
		Module: Module, Interface: ocpi.InterfaceSender, Method: http.MethodPut,
		Suffix: "/" + url.PathEscape(st.ID) + "/charging_preferences", Body: req.Body, CorrelationID: req.CorrelationID,
	})
}
