package ocpi

// The command request bodies (commands.md §3). Every one carries the
// response_url the CPO posts the CommandResult to.

// StartSession asks a CPO to start a session for a token.
type StartSession struct {
	ResponseURL            string `json:"response_url"`
	Token                  *Token `json:"token"`
	LocationID             string `json:"location_id"`
	EVSEUID                string `json:"evse_uid,omitempty"`
	ConnectorID            string `json:"connector_id,omitempty"`
	AuthorizationReference string `json:"authorization_reference,omitempty"`
}

// StopSession asks a CPO to stop a session.
type StopSession struct {
	ResponseURL string `json:"response_url"`
	SessionID   string `json:"session_id"`
}

// ReserveNow asks a CPO to reserve an EVSE (or any EVSE of a location).
type ReserveNow struct {
	ResponseURL            string   `json:"response_url"`
	Token                  *Token   `json:"token"`
	ExpiryDate             DateTime `json:"expiry_date"`
	ReservationID          string   `json:"reservation_id"`
	LocationID             string   `json:"location_id"`
	EVSEUID                string   `json:"evse_uid,omitempty"`
	AuthorizationReference string   `json:"authorization_reference,omitempty"`
}

// CancelReservation asks a CPO to cancel a reservation.
type CancelReservation struct {
	ResponseURL   string `json:"response_url"`
	ReservationID string `json:"reservation_id"`
}

// UnlockConnector asks a CPO to unlock a connector.
type UnlockConnector struct {
	ResponseURL string `json:"response_url"`
	LocationID  string `json:"location_id"`
	EVSEUID     string `json:"evse_uid"`
	ConnectorID string `json:"connector_id"`
}

// CommandResponse is the CPO's immediate answer to a command.
type CommandResponse struct {
	Result  string        `json:"result"`
	Timeout *int          `json:"timeout"`
	Message []DisplayText `json:"message,omitempty"`
}

// CommandResult is the outcome the CPO posts to the response_url later.
type CommandResult struct {
	Result  string        `json:"result"`
	Message []DisplayText `json:"message,omitempty"`
}

// The Commands enumerations (commands.md §4).
var (
	CommandTypes         = []string{"CANCEL_RESERVATION", "RESERVE_NOW", "START_SESSION", "STOP_SESSION", "UNLOCK_CONNECTOR"}
	CommandResponseTypes = []string{"NOT_SUPPORTED", "REJECTED", "ACCEPTED", "UNKNOWN_SESSION"}
	CommandResultTypes   = []string{"ACCEPTED", "CANCELED_RESERVATION", "EVSE_OCCUPIED", "EVSE_INOPERATIVE", "FAILED",
		"NOT_SUPPORTED", "REJECTED", "TIMEOUT", "UNKNOWN_RESERVATION"}
)

// Command types.
const (
	CommandCancelReservation = "CANCEL_RESERVATION"
	CommandReserveNow        = "RESERVE_NOW"
	CommandStartSession      = "START_SESSION"
	CommandStopSession       = "STOP_SESSION"
	CommandUnlockConnector   = "UNLOCK_CONNECTOR"
)

// CommandResponse and CommandResult values.
const (
	CommandAccepted       = "ACCEPTED"
	CommandRejected       = "REJECTED"
	CommandNotSupported   = "NOT_SUPPORTED"
	CommandUnknownSession = "UNKNOWN_SESSION"
	CommandTimeout        = "TIMEOUT"
	CommandCanceled       = "CANCELED_RESERVATION"
)

// Check validates a StartSession.
func (s *StartSession) Check(c *Check) {
	c.URL("response_url", s.ResponseURL, true)
	checkCommandToken(c, s.Token)
	c.CiString("location_id", s.LocationID, 36, true)
	c.CiString("evse_uid", s.EVSEUID, 36, false)
	c.CiString("connector_id", s.ConnectorID, 36, false)
	if s.ConnectorID != "" && s.EVSEUID == "" {
		c.Fail("evse_uid", "is required when connector_id is set")
	}
	c.CiString("authorization_reference", s.AuthorizationReference, 36, false)
}

// Check validates a StopSession.
func (s *StopSession) Check(c *Check) {
	c.URL("response_url", s.ResponseURL, true)
	c.CiString("session_id", s.SessionID, 36, true)
}

// Check validates a ReserveNow.
func (r *ReserveNow) Check(c *Check) {
	c.URL("response_url", r.ResponseURL, true)
	checkCommandToken(c, r.Token)
	c.DateTime("expiry_date", r.ExpiryDate, true)
	c.CiString("reservation_id", r.ReservationID, 36, true)
	c.CiString("location_id", r.LocationID, 36, true)
	c.CiString("evse_uid", r.EVSEUID, 36, false)
	c.CiString("authorization_reference", r.AuthorizationReference, 36, false)
}

// Check validates a CancelReservation.
func (r *CancelReservation) Check(c *Check) {
	c.URL("response_url", r.ResponseURL, true)
	c.CiString("reservation_id", r.ReservationID, 36, true)
}

// Check validates an UnlockConnector.
func (u *UnlockConnector) Check(c *Check) {
	c.URL("response_url", u.ResponseURL, true)
	c.CiString("location_id", u.LocationID, 36, true)
	c.CiString("evse_uid", u.EVSEUID, 36, true)
	c.CiString("connector_id", u.ConnectorID, 36, true)
}

func checkCommandToken(c *Check, t *Token) {
	if !c.Required("token", t != nil) {
		return
	}
	sub := c.Sub("token")
	t.Check(sub)
	c.Merge(sub)
}

// Check validates a CommandResponse.
func (r *CommandResponse) Check(c *Check) {
	c.Enum("result", r.Result, CommandResponseTypes, true)
	if c.Required("timeout", r.Timeout != nil) && *r.Timeout < 0 {
		c.Fail("timeout", "must not be negative")
	}
	c.DisplayTexts("message", r.Message)
}

// Check validates a CommandResult.
func (r *CommandResult) Check(c *Check) {
	c.Enum("result", r.Result, CommandResultTypes, true)
	c.DisplayTexts("message", r.Message)
}
