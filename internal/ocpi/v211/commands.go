package v211

import (
	"encoding/json"
	"strconv"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// 2.1.1 commands (commands.md §7): no CANCEL_RESERVATION, no connector_id or
// authorization_reference in StartSession, integer reservation ids, and one
// CommandResponse {result} for both the immediate answer and the result
// posted to response_url.

// StartSession is the 2.1.1 START_SESSION request.
type StartSession struct {
	ResponseURL string `json:"response_url"`
	Token       *Token `json:"token"`
	LocationID  string `json:"location_id"`
	EVSEUID     string `json:"evse_uid,omitempty"`
}

// ReserveNow is the 2.1.1 RESERVE_NOW request.
type ReserveNow struct {
	ResponseURL   string   `json:"response_url"`
	Token         *Token   `json:"token"`
	ExpiryDate    DateTime `json:"expiry_date"`
	ReservationID int64    `json:"reservation_id"`
	LocationID    string   `json:"location_id"`
	EVSEUID       string   `json:"evse_uid,omitempty"`
}

// CommandResponse is the 2.1.1 CommandResponse: the immediate answer to a
// command and the result posted later.
type CommandResponse struct {
	Result string `json:"result"`
}

// The 2.1.1 command enumerations.
var (
	CommandTypes         = []string{"RESERVE_NOW", "START_SESSION", "STOP_SESSION", "UNLOCK_CONNECTOR"}
	CommandResponseTypes = []string{"NOT_SUPPORTED", "REJECTED", "ACCEPTED", "TIMEOUT", "UNKNOWN_SESSION"}
)

// CommandFrom221 converts the body of a 2.2.1 command to 2.1.1. ok is false
// when the command has no 2.1.1 form (CANCEL_RESERVATION, a reservation id
// that is not an integer).
func CommandFrom221(command string, body []byte) ([]byte, Loss, bool, error) {
	var loss Loss
	switch command {
	case ocpi.CommandStartSession:
		var s ocpi.StartSession
		if err := json.Unmarshal(body, &s); err != nil {
			return nil, nil, false, err
		}
		out := StartSession{ResponseURL: s.ResponseURL, LocationID: s.LocationID, EVSEUID: s.EVSEUID, Token: commandToken(s.Token, &loss)}
		if s.ConnectorID != "" {
			loss.Add("connector_id", "not in a 2.1.1 START_SESSION; the CPO picks the connector of the EVSE")
		}
		if s.AuthorizationReference != "" {
			loss.Add("authorization_reference", "not in 2.1.1")
		}
		b, err := Marshal(out)
		return b, loss, err == nil, err
	case ocpi.CommandReserveNow:
		var r ocpi.ReserveNow
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, nil, false, err
		}
		id, err := strconv.ParseInt(r.ReservationID, 10, 64)
		if err != nil {
			loss.Add("reservation_id", "%q is not an integer, as 2.1.1 reservation ids are; not sent", r.ReservationID)
			return nil, loss, false, nil
		}
		out := ReserveNow{ResponseURL: r.ResponseURL, ExpiryDate: NewDateTime(r.ExpiryDate), ReservationID: id, LocationID: r.LocationID,
			EVSEUID: r.EVSEUID, Token: commandToken(r.Token, &loss)}
		if r.AuthorizationReference != "" {
			loss.Add("authorization_reference", "not in 2.1.1")
		}
		b, err := Marshal(out)
		return b, loss, err == nil, err
	case ocpi.CommandStopSession, ocpi.CommandUnlockConnector:
		return body, nil, true, nil
	}
	loss.Add("command", "%s is not a 2.1.1 command; not sent", command)
	return nil, loss, false, nil
}

// commandToken converts the token of a command (nil when it has none), its
// losses merged under "token".
func commandToken(t *ocpi.Token, loss *Loss) *Token {
	if t == nil {
		return nil
	}
	lt, sub := FromToken(t)
	loss.Merge("token", sub)
	return &lt
}

// CommandTo221 converts the body of a 2.1.1 command from an eMSP of cc/pid
// to 2.2.1 (its token is that eMSP's).
func CommandTo221(command string, raw []byte, cc, pid string) ([]byte, error) {
	switch command {
	case ocpi.CommandStartSession:
		var s StartSession
		if err := ocpi.Decode(raw, &s); err != nil {
			return nil, err
		}
		out := ocpi.StartSession{ResponseURL: s.ResponseURL, LocationID: s.LocationID, EVSEUID: s.EVSEUID}
		if s.Token != nil {
			t := s.Token.To221(cc, pid)
			out.Token = &t
		}
		return json.Marshal(out)
	case ocpi.CommandReserveNow:
		var r ReserveNow
		if err := ocpi.Decode(raw, &r); err != nil {
			return nil, err
		}
		out := ocpi.ReserveNow{ResponseURL: r.ResponseURL, ExpiryDate: r.ExpiryDate.Time(), ReservationID: strconv.FormatInt(r.ReservationID, 10),
			LocationID: r.LocationID, EVSEUID: r.EVSEUID}
		if r.Token != nil {
			t := r.Token.To221(cc, pid)
			out.Token = &t
		}
		return json.Marshal(out)
	}
	return raw, nil
}

// ResultTo221 converts a 2.1.1 CommandResponse posted as a command's result
// into a 2.2.1 CommandResult. UNKNOWN_SESSION, which 2.2.1 results lack,
// becomes FAILED with the original value in the message.
func ResultTo221(raw []byte) ([]byte, Loss, error) {
	var r CommandResponse
	if err := ocpi.Decode(raw, &r); err != nil {
		return nil, nil, err
	}
	c := ocpi.NewCheck("")
	c.Enum("result", r.Result, CommandResponseTypes, true)
	if err := c.Err(); err != nil {
		return nil, nil, err
	}
	var loss Loss
	out := ocpi.CommandResult{Result: r.Result}
	if r.Result == "UNKNOWN_SESSION" {
		out.Result = "FAILED"
		out.Message = []ocpi.DisplayText{{Language: "en", Text: "the CPO answered UNKNOWN_SESSION (OCPI 2.1.1)"}}
		loss.Add("result", "UNKNOWN_SESSION is not a 2.2.1 CommandResultType; relayed as FAILED")
	}
	b, err := json.Marshal(out)
	return b, loss, err
}

// ResultFrom221 converts a 2.2.1 CommandResult into the 2.1.1
// CommandResponse posted to a 2.1.1 eMSP: the results 2.1.1 lacks become
// REJECTED.
func ResultFrom221(raw []byte) ([]byte, Loss, error) {
	var r ocpi.CommandResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, nil, err
	}
	var loss Loss
	out := CommandResponse{Result: r.Result}
	switch r.Result {
	case "ACCEPTED", "REJECTED", "NOT_SUPPORTED", "TIMEOUT":
	default:
		loss.Add("result", "%s is not a 2.1.1 CommandResponseType; sent as REJECTED", r.Result)
		out.Result = "REJECTED"
	}
	if len(r.Message) > 0 {
		loss.Add("message", "not in 2.1.1")
	}
	b, err := Marshal(out)
	return b, loss, err
}

// ResponseTo221 converts the immediate 2.1.1 CommandResponse of a CPO into
// 2.2.1: TIMEOUT (the charger did not answer the CPO) is REJECTED, and the
// timeout 2.2.1 requires is wait, the seconds the hub waits for the result.
func ResponseTo221(raw []byte, wait int) ([]byte, Loss, error) {
	var r CommandResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, nil, err
	}
	var loss Loss
	out := ocpi.CommandResponse{Result: r.Result, Timeout: &wait}
	if r.Result == "TIMEOUT" {
		out.Result = "REJECTED"
		out.Message = []ocpi.DisplayText{{Language: "en", Text: "the CPO answered TIMEOUT (OCPI 2.1.1)"}}
		loss.Add("result", "TIMEOUT is not a 2.2.1 CommandResponseType; answered as REJECTED")
	}
	b, err := json.Marshal(out)
	return b, loss, err
}

// ResponseFrom221 converts a 2.2.1 CommandResponse into 2.1.1 for a 2.1.1
// eMSP (no timeout or message).
func ResponseFrom221(r ocpi.CommandResponse) CommandResponse {
	return CommandResponse{Result: r.Result}
}
