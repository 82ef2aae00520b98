package command

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// parse validates a request and reads its target.
func (s *Service) parse(req Request) (*target, error) {
	t := &target{method: http.MethodPost, suffix: "/" + req.Command, request: req.Body}
	switch req.Module + "/" + req.Command {
	case Module + "/" + ocpi.CommandStartSession:
		var b ocpi.StartSession
		if err := ocpi.DecodeValid(req.Body, &b); err != nil {
			return nil, err
		}
		if err := ownToken(req, b.Token); err != nil {
			return nil, err
		}
		t.responseURL, t.locationID, t.evse, t.conn, t.authorizationReference = b.ResponseURL, b.LocationID, b.EVSEUID, b.ConnectorID, b.AuthorizationReference
	case Module + "/" + ocpi.CommandReserveNow:
		var b ocpi.ReserveNow
		if err := ocpi.DecodeValid(req.Body, &b); err != nil {
			return nil, err
		}
		if err := ownToken(req, b.Token); err != nil {
			return nil, err
		}
		t.responseURL, t.locationID, t.evse, t.reservationID, t.authorizationReference = b.ResponseURL, b.LocationID, b.EVSEUID, b.ReservationID, b.AuthorizationReference
	case Module + "/" + ocpi.CommandUnlockConnector:
		var b ocpi.UnlockConnector
		if err := ocpi.DecodeValid(req.Body, &b); err != nil {
			return nil, err
		}
		t.responseURL, t.locationID, t.evse, t.conn = b.ResponseURL, b.LocationID, b.EVSEUID, b.ConnectorID
	case Module + "/" + ocpi.CommandStopSession:
		var b ocpi.StopSession
		if err := ocpi.DecodeValid(req.Body, &b); err != nil {
			return nil, err
		}
		t.responseURL, t.sessionID = b.ResponseURL, b.SessionID
	case Module + "/" + ocpi.CommandCancelReservation:
		var b ocpi.CancelReservation
		if err := ocpi.DecodeValid(req.Body, &b); err != nil {
			return nil, err
		}
		t.responseURL, t.reservationID = b.ResponseURL, b.ReservationID
	case ProfilesModule + "/" + ocpi.ProfileSet:
		var b ocpi.SetChargingProfile
		if err := ocpi.DecodeValid(req.Body, &b); err != nil {
			return nil, err
		}
		t.method, t.responseURL = http.MethodPut, b.ResponseURL
	case ProfilesModule + "/" + ocpi.ProfileGet, ProfilesModule + "/" + ocpi.ProfileClear:
		c := ocpi.NewCheck("")
		t.method = http.MethodDelete
		if req.Command == ocpi.ProfileGet {
			t.method = http.MethodGet
			d := req.Query.Get("duration")
			if n, err := strconv.Atoi(d); err != nil || n < 0 {
				c.Fail("duration", "query parameter must be a non-negative number of seconds")
			}
		}
		t.responseURL = req.Query.Get("response_url")
		c.URL("response_url", t.responseURL, true)
		if err := c.Err(); err != nil {
			return nil, err
		}
		q := map[string]string{"response_url": t.responseURL}
		if d := req.Query.Get("duration"); d != "" {
			q["duration"] = d
		}
		t.request, _ = json.Marshal(q)
	default:
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "unknown command " + req.Command}
	}
	if req.Module == ProfilesModule {
		c := ocpi.NewCheck("")
		c.CiString("session_id", req.SessionID, 36, true)
		if err := c.Err(); err != nil {
			return nil, err
		}
		t.sessionID, t.suffix = req.SessionID, "/"+url.PathEscape(req.SessionID)
	}
	return t, nil
}

// ownToken requires a command's token to be the requester's own (an eMSP
// may only use its own tokens, commands.md §5; a PTP the ad-hoc tokens it
// issues under its own party, payments.md §6.3).
func ownToken(req Request, tok *ocpi.Token) error {
	for _, p := range req.Parties {
		if (p.Role == party.RoleEMSP || p.Role == party.RolePTP) && p.Matches(tok.CountryCode, tok.PartyID) {
			return nil
		}
	}
	return ocpi.Invalid("token.party_id", "the token belongs to "+ocpi.Key(tok.CountryCode)+"/"+ocpi.Key(tok.PartyID)+
		", not to your eMSP party; an eMSP may only use its own tokens")
}

// routeTo finds the CPO of a request, or the hub's own answer when the
// target is unknown.
func (s *Service) routeTo(ctx context.Context, req Request, t *target) (ocpiclient.Party, *Local, error) {
	to := req.To
	if s.hub != nil {
		// OCPI-to naming the hub: find the CPO (routing.Router.Owner).
		to = s.hub.Routing().Owner(to, party.RoleCPO)
	}
	switch {
	case t.locationID != "":
		return s.routeLocation(ctx, req, t, to)
	case t.sessionID != "":
		var owners []ocpiclient.Party
		scsp := false
		for _, p := range req.Parties {
			switch p.Role {
			case party.RoleEMSP, party.RolePTP:
				owners = append(owners, ocpiclient.Party{CountryCode: p.CountryCode, PartyID: p.PartyID})
			case party.RoleSCSP:
				scsp = true
			}
		}
		if scsp && req.Module == ProfilesModule {
			owners = nil // an SCSP may try any session; the CPO decides
		} else if owners == nil {
			owners = []ocpiclient.Party{}
		}
		st, err := s.sessions.FindForOwner(ctx, owners, to, t.sessionID)
		switch {
		case err == nil:
			return ocpiclient.Party{CountryCode: st.CountryCode, PartyID: st.PartyID}, nil, nil
		case !ocpi.IsNotFound(err):
			return ocpiclient.Party{}, nil, err
		case !to.IsZero():
			// The hub does not hold the session (yet): the addressed CPO
			// knows better.
			return to, nil, nil
		}
		return ocpiclient.Party{}, s.unknownSession(req, t), nil
	case t.reservationID != "":
		if !to.IsZero() {
			return to, nil, nil
		}
		var cc, pid string
		err := s.db.Read().QueryRow(ctx, `SELECT cpo_country_code, cpo_party_id FROM commands WHERE requester_country_code = $1
			AND requester_party_id = $2 AND reservation_id = $3 AND command = $4 AND cpo_country_code <> ''
			ORDER BY created_at DESC LIMIT 1`, ocpi.Key(req.From.CountryCode), ocpi.Key(req.From.PartyID), t.reservationID,
			ocpi.CommandReserveNow).Scan(&cc, &pid)
		if err == nil {
			return ocpiclient.Party{CountryCode: cc, PartyID: pid}, nil, nil
		}
		if !errors.Is(err, store.ErrNoRows) {
			return ocpiclient.Party{}, nil, err
		}
		msg := "no reservation " + t.reservationID + " was made through this hub; address the CPO with OCPI-to-*"
		return ocpiclient.Party{}, rejected(http.StatusOK, ocpi.StatusSuccess, ocpi.CommandRejected, msg, nil), nil
	}
	return ocpiclient.Party{}, nil, ocpi.Errorf(ocpi.EINTERNAL, "command %s has no target", req.Command)
}

// routeLocation finds the CPO of a location and checks the EVSE and
// connector the request names are in the directory.
func (s *Service) routeLocation(ctx context.Context, req Request, t *target, to ocpiclient.Party) (ocpiclient.Party, *Local, error) {
	cpo := to
	unknown := func(field, what string) *Local {
		msg := "unknown " + what
		return rejected(http.StatusOK, ocpi.StatusUnknownLocation, ocpi.CommandRejected, msg,
			&ocpi.Error{Code: ocpi.EUNKNOWNLOCATION, Message: msg, Field: field, Issue: "is not in the hub's location directory"})
	}
	steps := []struct{ field, evse, conn, what string }{
		{"location_id", "", "", "location " + t.locationID},
		{"evse_uid", t.evse, "", "EVSE " + t.evse + " of location " + t.locationID},
		{"connector_id", t.evse, t.conn, "connector " + t.conn + " of EVSE " + t.evse},
	}
	// The deepest object named implies its parents: one lookup when all is
	// well (with the owner's, when OCPI-to names none); the levels are
	// checked one by one only to name what is unknown.
	deepest := 0
	if t.evse != "" {
		deepest = 1
		if t.conn != "" {
			deepest = 2
		}
	}
	if cpo.IsZero() {
		cc, pid, holds, err := s.dir.Locate(ctx, t.locationID, steps[deepest].evse, steps[deepest].conn)
		if ocpi.ErrorCode(err) == ocpi.EUNKNOWNLOCATION {
			return cpo, unknown("location_id", "location "+t.locationID), nil
		}
		if err != nil {
			return cpo, nil, err
		}
		cpo = ocpiclient.Party{CountryCode: cc, PartyID: pid}
		if holds {
			return cpo, nil, nil
		}
	} else {
		err := s.dir.CheckLocation(ctx, cpo.CountryCode, cpo.PartyID, t.locationID, steps[deepest].evse, steps[deepest].conn)
		if err == nil || ocpi.ErrorCode(err) != ocpi.EUNKNOWNLOCATION {
			return cpo, nil, err
		}
	}
	for i, st := range steps[:deepest+1] {
		if (i == 1 && t.evse == "") || (i == 2 && t.conn == "") {
			continue
		}
		err := s.dir.CheckLocation(ctx, cpo.CountryCode, cpo.PartyID, t.locationID, st.evse, st.conn)
		if ocpi.ErrorCode(err) == ocpi.EUNKNOWNLOCATION {
			return cpo, unknown(st.field, st.what), nil
		}
		if err != nil {
			return cpo, nil, err
		}
	}
	return cpo, nil, nil
}

// unknownSession is the answer to a request for a session the requester
// does not have.
func (s *Service) unknownSession(req Request, t *target) *Local {
	msg := "unknown session " + t.sessionID
	if req.Module == ProfilesModule {
		zero := 0
		return &Local{HTTPStatus: http.StatusOK, StatusCode: ocpi.StatusSuccess,
			Data: ocpi.ChargingProfileResponse{Result: "UNKNOWN_SESSION", Timeout: &zero}}
	}
	return rejected(http.StatusOK, ocpi.StatusSuccess, ocpi.CommandUnknownSession, msg, nil)
}

// rejected builds the hub's own negative answer.
func rejected(httpStatus, code int, result, msg string, err *ocpi.Error) *Local {
	zero := 0
	return &Local{HTTPStatus: httpStatus, StatusCode: code, Err: err,
		Data: ocpi.CommandResponse{Result: result, Timeout: &zero, Message: []ocpi.DisplayText{{Language: "en", Text: msg}}}}
}
