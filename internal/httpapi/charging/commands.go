package charging

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// submit relays a command or charging profile request and writes the
// answer: the CPO's as it came, or the hub's own.
func (s *handlers) submit(w http.ResponseWriter, r *http.Request, req command.Request) error {
	s.fromCaller(r, &req)
	out, err := s.cfg.Commands.Submit(r.Context(), req)
	if err != nil {
		return err
	}
	return s.answer(w, r, out)
}

// fromCaller fills in who sends req: the calling platform and its parties,
// the request's correlation id and the OCPI-to-* party when it is not the hub.
func (s *handlers) fromCaller(r *http.Request, req *command.Request) {
	c := party.CallerFrom(r.Context())
	req.PlatformID, req.Parties, req.CorrelationID = c.PlatformID, c.Roles, kit.CorrelationID(r.Context())
	req.To, _ = s.AddressedElsewhere(r)
}

// answer writes a command's synchronous answer: the CPO's as it came, or the
// hub's own.
func (s *handlers) answer(w http.ResponseWriter, r *http.Request, out *command.Outcome) error {
	if out.Forwarded != nil {
		writeForwarded(w, out.Forwarded)
		return nil
	}
	s.SetHubRouting(w, r)
	s.writeLocal(w, out.Local)
	return nil
}

// writeLocal writes the hub's own answer to a command: an envelope with the
// CommandResponse as data and, for an error status, the error that
// explains it (commands.md §1: unknown location is 2003 with REJECTED).
func (s *handlers) writeLocal(w http.ResponseWriter, l *command.Local) {
	resp := ocpi.Success(l.Data, s.Clock.Now())
	resp.StatusCode, resp.StatusMessage = l.StatusCode, ocpi.StatusText(l.StatusCode)
	if l.Err != nil {
		_, e := ocpi.ErrorResponse(l.Err, s.Clock.Now())
		resp.Error, resp.StatusMessage = e.Error, e.StatusMessage
	}
	kit.WriteJSON(w, l.HTTPStatus, resp)
}

// handleEMSPCommand serves POST /ocpi/2.2.1/emsp/commands/{command}.
// A PTP sends commands here too: its START_SESSION carries the payment's
// authorization_reference and goes through the payment service.
func (s *handlers) handleEMSPCommand(w http.ResponseWriter, r *http.Request) error {
	from, err := commandRequester(r)
	if err != nil {
		return err
	}
	cmd := r.PathValue("command")
	if !slices.Contains(ocpi.CommandTypes, cmd) {
		return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "unknown command " + cmd + "; commands are CANCEL_RESERVATION, RESERVE_NOW, START_SESSION, STOP_SESSION, UNLOCK_CONNECTOR"}
	}
	raw, err := kit.ReadBody(r)
	if err != nil {
		return err
	}
	req := command.Request{Module: command.Module, Command: cmd, From: kit.AsParty(from), Body: raw}
	if from.Role == party.RolePTP && cmd == ocpi.CommandStartSession && s.cfg.Payments != nil {
		return s.startPayment(w, r, req)
	}
	return s.submit(w, r, req)
}

// handleCPOCommandResult serves POST
// /ocpi/2.2.1/cpo/commands/{command}/{id}: the response_url the hub gave
// the CPO.
func (s *handlers) handleCPOCommandResult(w http.ResponseWriter, r *http.Request) error {
	return s.receiveResult(w, r, command.Module)
}

func (s *handlers) receiveResult(w http.ResponseWriter, r *http.Request, module string) error {
	_, raw, err := kit.CallerAndBody(r, party.RoleCPO)
	if err != nil {
		return err
	}
	if err := s.cfg.Commands.Receive(r.Context(), command.ResultRequest{Module: module, Command: r.PathValue("command"),
		ID: r.PathValue("id"), CPOs: kit.CallerParties(r, party.RoleCPO), Body: raw}); err != nil {
		return err
	}
	s.SetHubRouting(w, r)
	return s.OK(w, nil)
}

// profileRequester returns the party a charging profile request acts for:
// an eMSP, or an SCSP.
func profileRequester(r *http.Request) (party.PartyRef, error) {
	if p, err := kit.CallerParty(r, party.RoleEMSP); err == nil {
		return p, nil
	}
	return kit.CallerParty(r, party.RoleSCSP)
}

// handleEMSPChargingProfile serves GET, PUT and DELETE
// /ocpi/2.2.1/emsp/chargingprofiles/{session_id}: an eMSP or SCSP asks for
// the active profile, sets one, or clears it.
func (s *handlers) handleEMSPChargingProfile(w http.ResponseWriter, r *http.Request) error {
	from, err := profileRequester(r)
	if err != nil {
		return err
	}
	req := command.Request{Module: command.ProfilesModule, From: kit.AsParty(from), SessionID: r.PathValue("session_id"), Query: r.URL.Query()}
	switch r.Method {
	case http.MethodGet:
		req.Command = ocpi.ProfileGet
	case http.MethodDelete:
		req.Command = ocpi.ProfileClear
	default:
		req.Command = ocpi.ProfileSet
		if req.Body, err = kit.ReadBody(r); err != nil {
			return err
		}
	}
	return s.submit(w, r, req)
}

// handleCPOProfileResult serves POST
// /ocpi/2.2.1/cpo/chargingprofiles/{command}/{id}: the response_url the
// hub gave the CPO for a charging profile request.
func (s *handlers) handleCPOProfileResult(w http.ResponseWriter, r *http.Request) error {
	return s.receiveResult(w, r, command.ProfilesModule)
}

// handleCPOActiveProfile serves PUT
// /ocpi/2.2.1/cpo/chargingprofiles/{session_id}: a CPO's
// ActiveChargingProfile update, relayed to the parties that set a profile.
func (s *handlers) handleCPOActiveProfile(w http.ResponseWriter, r *http.Request) error {
	_, raw, err := kit.CallerAndBody(r, party.RoleCPO)
	if err != nil {
		return err
	}
	if err := s.cfg.Commands.UpdateActiveProfile(r.Context(), command.ProfileUpdate{CPOs: kit.CallerParties(r, party.RoleCPO),
		SessionID: r.PathValue("session_id"), Body: raw, CorrelationID: kit.CorrelationID(r.Context())}); err != nil {
		return err
	}
	s.SetHubRouting(w, r)
	return s.OK(w, nil)
}

// handleAdminCommands serves GET /admin/commands: commands newest first,
// filtered by state, command, module, platform_id, authorization_reference;
// limit and offset page them (X-Total-Count).
func (s *handlers) handleAdminCommands(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := command.ListFilter{State: q.Get("state"), Command: q.Get("command"), Module: q.Get("module"),
		AuthorizationReference: q.Get("authorization_reference")}
	for name, dst := range map[string]*int{"limit": &f.Limit, "offset": &f.Offset} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return ocpi.Invalid(name, "must be a non-negative integer")
			}
			*dst = n
		}
	}
	if v := q.Get("platform_id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return ocpi.Invalid("platform_id", "must be an integer")
		}
		f.PlatformID = n
	}
	list, total, err := s.cfg.Commands.List(r.Context(), f)
	if err != nil {
		return err
	}
	w.Header().Set("X-Total-Count", strconv.FormatInt(total, 10))
	return s.OK(w, list)
}

// handleAdminCommand serves GET /admin/commands/{id}: one command with its
// request, forwarded body, CPO answer and every result with its relay.
func (s *handlers) handleAdminCommand(w http.ResponseWriter, r *http.Request) error {
	return kit.ByPath(s.Kit, w, r, "id", s.cfg.Commands.Get)
}
