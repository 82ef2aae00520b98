package ocpi

import "slices"

// Session is the 2.2.1 Session (sessions.md §4): the live view of one
// charging session, owned by the CPO.
type Session struct {
	CountryCode            string           `json:"country_code"`
	PartyID                string           `json:"party_id"`
	ID                     string           `json:"id"`
	StartDateTime          DateTime         `json:"start_date_time"`
	EndDateTime            *DateTime        `json:"end_date_time,omitempty"`
	KWh                    Number           `json:"kwh"`
	CdrToken               *CdrToken        `json:"cdr_token"`
	AuthMethod             string           `json:"auth_method"`
	AuthorizationReference string           `json:"authorization_reference,omitempty"`
	LocationID             string           `json:"location_id"`
	EVSEUID                string           `json:"evse_uid"`
	ConnectorID            string           `json:"connector_id"`
	MeterID                string           `json:"meter_id,omitempty"`
	Currency               string           `json:"currency"`
	ChargingPeriods        []ChargingPeriod `json:"charging_periods,omitempty"`
	TotalCost              *Price           `json:"total_cost,omitempty"`
	Status                 string           `json:"status"`
	LastUpdated            DateTime         `json:"last_updated"`
}

// CdrToken is the snapshot of the token a session or CDR was charged to; its
// country_code and party_id name the eMSP that owns the token.
type CdrToken struct {
	CountryCode string `json:"country_code"`
	PartyID     string `json:"party_id"`
	UID         string `json:"uid"`
	Type        string `json:"type"`
	ContractID  string `json:"contract_id"`
}

// ChargingPeriod is a period of a session or CDR with constant prices.
type ChargingPeriod struct {
	StartDateTime DateTime       `json:"start_date_time"`
	Dimensions    []CdrDimension `json:"dimensions"`
	TariffID      string         `json:"tariff_id,omitempty"`
}

// CdrDimension is one measured quantity of a charging period.
type CdrDimension struct {
	Type   string `json:"type"`
	Volume Number `json:"volume"`
}

// ChargingPreferences are the driver's wishes for a running session.
type ChargingPreferences struct {
	ProfileType      string    `json:"profile_type"`
	DepartureTime    *DateTime `json:"departure_time,omitempty"`
	EnergyNeed       Number    `json:"energy_need,omitzero"`
	DischargeAllowed *bool     `json:"discharge_allowed,omitempty"`
}

// The Sessions enumerations (sessions.md §6, cdrs.md §6).
var (
	SessionStatuses = []string{"ACTIVE", "COMPLETED", "INVALID", "PENDING", "RESERVATION"}
	AuthMethods     = []string{"AUTH_REQUEST", "COMMAND", "WHITELIST"}
	// CdrDimensionTypes are every dimension a Session may carry.
	CdrDimensionTypes = []string{"CURRENT", "ENERGY", "ENERGY_EXPORT", "ENERGY_IMPORT", "MAX_CURRENT", "MIN_CURRENT",
		"MAX_POWER", "MIN_POWER", "PARKING_TIME", "POWER", "RESERVATION_TIME", "STATE_OF_CHARGE", "TIME"}
	// SessionOnlyDimensionTypes may not appear in a CDR.
	SessionOnlyDimensionTypes    = []string{"CURRENT", "ENERGY_EXPORT", "ENERGY_IMPORT", "POWER", "STATE_OF_CHARGE"}
	ChargingPreferencesResponses = []string{"ACCEPTED", "DEPARTURE_REQUIRED", "ENERGY_NEED_REQUIRED", "NOT_POSSIBLE",
		"PROFILE_TYPE_NOT_SUPPORTED"}
)

// Session statuses.
const (
	SessionActive      = "ACTIVE"
	SessionCompleted   = "COMPLETED"
	SessionInvalid     = "INVALID"
	SessionPending     = "PENDING"
	SessionReservation = "RESERVATION"
)

// Check validates a Session.
func (s *Session) Check(c *Check) {
	c.CountryCode("country_code", s.CountryCode, true)
	c.PartyID("party_id", s.PartyID, true)
	c.CiString("id", s.ID, 36, true)
	c.DateTime("start_date_time", s.StartDateTime, true)
	if s.EndDateTime != nil && !s.StartDateTime.IsZero() && s.EndDateTime.Before(s.StartDateTime.Time) {
		c.Fail("end_date_time", "must not be before start_date_time")
	}
	c.Required("kwh", s.KWh.Valid())
	if c.Required("cdr_token", s.CdrToken != nil) {
		sub := c.Sub("cdr_token")
		s.CdrToken.Check(sub)
		c.Merge(sub)
	}
	c.Enum("auth_method", s.AuthMethod, AuthMethods, true)
	c.CiString("authorization_reference", s.AuthorizationReference, 36, false)
	c.CiString("location_id", s.LocationID, 36, true)
	c.CiString("evse_uid", s.EVSEUID, 36, true)
	c.CiString("connector_id", s.ConnectorID, 36, true)
	c.String("meter_id", s.MeterID, 255, false)
	c.Currency("currency", s.Currency, true)
	c.ChargingPeriods("charging_periods", s.ChargingPeriods, nil)
	c.Price("total_cost", s.TotalCost, false)
	c.Enum("status", s.Status, SessionStatuses, true)
	c.DateTime("last_updated", s.LastUpdated, true)
}

// Check validates a CdrToken.
func (t *CdrToken) Check(c *Check) {
	c.CountryCode("country_code", t.CountryCode, true)
	c.PartyID("party_id", t.PartyID, true)
	c.CiString("uid", t.UID, 36, true)
	c.Enum("type", t.Type, TokenTypes, true)
	c.CiString("contract_id", t.ContractID, 36, true)
}

// ChargingPeriods checks a list of ChargingPeriod; dimension types in
// forbidden are refused (the Session-only types, in a CDR).
func (c *Check) ChargingPeriods(field string, ps []ChargingPeriod, forbidden []string) {
	for i, p := range ps {
		sub := c.Index(field, i)
		sub.DateTime("start_date_time", p.StartDateTime, true)
		if len(p.Dimensions) == 0 {
			sub.Fail("dimensions", "must list at least one dimension")
		}
		for j, d := range p.Dimensions {
			ds := sub.Index("dimensions", j)
			ds.Enum("type", d.Type, CdrDimensionTypes, true)
			if slices.Contains(forbidden, d.Type) {
				ds.Fail("type", "%s is a Session-only dimension and may not appear here", d.Type)
			}
			ds.Required("volume", d.Volume.Valid())
			sub.Merge(ds)
		}
		sub.CiString("tariff_id", p.TariffID, 36, false)
		c.Merge(sub)
	}
}

// Check validates ChargingPreferences.
func (p *ChargingPreferences) Check(c *Check) {
	c.Enum("profile_type", p.ProfileType, ProfileTypes, true)
	if p.EnergyNeed.IsNegative() {
		c.Fail("energy_need", "must not be negative")
	}
}

// IsFinalSessionStatus reports whether a session status is an end state.
func IsFinalSessionStatus(status string) bool {
	return status == SessionCompleted || status == SessionInvalid
}
