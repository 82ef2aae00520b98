package command

import (
	"context"
	"encoding/json"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
)

// SendRequest is a command ocpihub sends as its own eMSP.
type SendRequest struct {
	// Command is a CommandType (ocpi.CommandStartSession…).
	Command string
	// Body is the command object (ocpi.StartSession, ocpi.StopSession…);
	// its response_url is set by the hub, the token must be one of our
	// eMSP's (token.Service.Issue).
	Body any
	// Hook names the registered Hook that receives the result.
	Hook string
	// CPO addresses the CPO outright (zero: found from the location or
	// session).
	CPO           ocpiclient.Party
	CorrelationID string
}

// Sent is the synchronous outcome of Send.
type Sent struct {
	// ID is the stored command's id; the Hook's HookResult carries it.
	ID string
	// StatusCode is the answer's OCPI status_code: 1000, 2003 (unknown
	// location, EVSE or connector), or the CPO's own.
	StatusCode int
	// Response is the CommandResponse (REJECTED is an answer, not an error).
	Response *ocpi.CommandResponse
}

// Send relays a command as ocpihub's own eMSP, exactly as an eMSP's command
// is relayed, except that the result goes to the named in-process hook (by a
// job, retried until the hook returns nil) instead of a response_url. An
// ACCEPTED command always ends with one result at the hook: the CPO's, or
// TIMEOUT. Errors are the hub's: 4001/4003 (the CPO was not reached; no
// result follows) and 4002 (the CPO did not answer in time; the command stays
// open and the hook still gets its result or TIMEOUT); in both cases Sent
// carries the command id.
func (s *Service) Send(ctx context.Context, sr SendRequest) (*Sent, error) {
	if _, ok := s.hook(sr.Hook); !ok || sr.Hook == "" {
		return nil, ocpi.Errorf(ocpi.EINTERNAL, "command hook %q is not registered", sr.Hook)
	}
	own, ok := s.parties.OwnParty(party.RoleEMSP)
	if !ok {
		return nil, ocpi.Errorf(ocpi.EINTERNAL, "ocpihub has no eMSP party configured")
	}
	raw, err := json.Marshal(sr.Body)
	if err != nil {
		return nil, err
	}
	obj, err := ocpi.ParseObject(raw)
	if err != nil {
		return nil, err
	}
	// A placeholder that passes validation; the CPO gets the hub's result
	// URL and the result goes to the hook.
	obj["response_url"] = s.cfg.PublicURL + "/ocpi/2.2.1/cpo/commands/" + sr.Command
	body, err := ocpi.MarshalObject(obj)
	if err != nil {
		return nil, err
	}
	out, err := s.Submit(ctx, Request{Module: Module, Command: sr.Command, Parties: []party.PartyRef{own},
		From: ocpiclient.Party{CountryCode: own.CountryCode, PartyID: own.PartyID}, To: sr.CPO, Body: body, Hook: sr.Hook,
		CorrelationID: sr.CorrelationID})
	if out == nil {
		return nil, err
	}
	sent := &Sent{ID: out.ID}
	if err != nil {
		return sent, err
	}
	if out.Local != nil {
		sent.StatusCode = out.Local.StatusCode
		if r, ok := out.Local.Data.(ocpi.CommandResponse); ok {
			sent.Response = &r
		}
		return sent, nil
	}
	env, err := ocpi.DecodeEnvelope(out.Forwarded.Body)
	if err != nil {
		return sent, ocpi.Errorf(ocpi.EHUB, "the CPO answered without an OCPI envelope (HTTP %d)", out.Forwarded.HTTPStatus)
	}
	sent.StatusCode = env.StatusCode
	if len(env.Data) > 0 {
		var r ocpi.CommandResponse
		if json.Unmarshal(env.Data, &r) == nil && r.Result != "" {
			sent.Response = &r
		}
	}
	return sent, nil
}
