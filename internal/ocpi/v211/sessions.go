package v211

import (
	"slices"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Session is the 2.1.1 Session (legacy.md §5): the whole Location (trimmed
// to the EVSE and connector in use) instead of ids, auth_id instead of a
// cdr_token, a number for total_cost.
type Session struct {
	ID              string           `json:"id"`
	StartDateTime   DateTime         `json:"start_datetime"`
	EndDateTime     *DateTime        `json:"end_datetime,omitempty"`
	KWh             ocpi.Number      `json:"kwh"`
	AuthID          string           `json:"auth_id"`
	AuthMethod      string           `json:"auth_method"`
	Location        *Location        `json:"location"`
	MeterID         string           `json:"meter_id,omitempty"`
	Currency        string           `json:"currency"`
	ChargingPeriods []ChargingPeriod `json:"charging_periods,omitempty"`
	TotalCost       ocpi.Number      `json:"total_cost,omitzero"`
	Status          string           `json:"status"`
	LastUpdated     DateTime         `json:"last_updated"`
}

// ChargingPeriod is a 2.1.1 charging period (no tariff_id).
type ChargingPeriod struct {
	StartDateTime DateTime            `json:"start_date_time"`
	Dimensions    []ocpi.CdrDimension `json:"dimensions"`
}

// The 2.1.1 enumerations of sessions and CDRs.
var (
	SessionStatuses   = []string{"ACTIVE", "COMPLETED", "INVALID", "PENDING"}
	AuthMethods       = []string{"AUTH_REQUEST", "WHITELIST"}
	CdrDimensionTypes = []string{"ENERGY", "FLAT", "MAX_CURRENT", "MIN_CURRENT", "PARKING_TIME", "TIME"}
)

// SessionLocation returns the 2.1.1 form of the location a session or CDR
// took place at: loc trimmed to one EVSE and its one connector. ok is false
// when they are not in loc or have no 2.1.1 form.
func SessionLocation(loc *ocpi.Location, evseUID, connectorID string) (*Location, Loss, bool) {
	l := *loc
	e, _ := loc.EVSE(evseUID)
	if e == nil {
		return nil, Loss{"location: EVSE " + evseUID + " is not in the hub's copy of location " + loc.ID}, false
	}
	ev := *e
	k, _ := ev.Connector(connectorID)
	if k == nil {
		return nil, Loss{"location: connector " + connectorID + " is not in the hub's copy of EVSE " + evseUID}, false
	}
	ev.Connectors = []ocpi.Connector{*k}
	l.EVSEs = []ocpi.EVSE{ev}
	out, loss := FromLocation(&l)
	if len(out.EVSEs) != 1 {
		return nil, loss, false
	}
	return &out, loss, true
}

// FromSession converts a 2.2.1 Session to 2.1.1; loc is the session's
// location from the hub's directory. ok is false when the session cannot
// be expressed: its location is unknown or has no 2.1.1 form, or it is a
// reservation (2.1.1 sessions have no RESERVATION status).
func FromSession(s *ocpi.Session, loc *ocpi.Location) (Session, Loss, bool) {
	var loss Loss
	out := Session{ID: s.ID, StartDateTime: NewDateTime(s.StartDateTime), EndDateTime: OptDateTime(s.EndDateTime), KWh: s.KWh,
		AuthMethod: authMethod(s.AuthMethod, &loss), MeterID: s.MeterID, Currency: s.Currency, Status: s.Status,
		LastUpdated: NewDateTime(s.LastUpdated)}
	if s.CdrToken != nil {
		out.AuthID = s.CdrToken.ContractID
		loss.Add("cdr_token.uid", "2.1.1 names the contract (auth_id), not the token")
	}
	if s.AuthorizationReference != "" {
		loss.Add("authorization_reference", "not in 2.1.1")
	}
	if s.TotalCost != nil {
		out.TotalCost = s.TotalCost.ExclVAT
		if s.TotalCost.InclVAT != nil {
			loss.Add("total_cost.incl_vat", "2.1.1 has the cost excluding VAT only")
		}
	}
	out.ChargingPeriods = fromPeriods(s.ChargingPeriods, &loss)
	if s.Status == ocpi.SessionReservation {
		loss.Add("status", "a reservation is not a 2.1.1 session; not sent")
		return out, loss, false
	}
	if loc == nil {
		loss.Add("location", "location %s is not in the hub's directory; the session is not sent", s.LocationID)
		return out, loss, false
	}
	l, sub, ok := SessionLocation(loc, s.EVSEUID, s.ConnectorID)
	loss.Merge("location", sub)
	if !ok {
		return out, loss, false
	}
	out.Location = l
	return out, loss, true
}

func authMethod(m string, loss *Loss) string {
	if m == "COMMAND" {
		loss.Add("auth_method", "COMMAND is not in 2.1.1; sent as AUTH_REQUEST (the command authorized the token)")
		return "AUTH_REQUEST"
	}
	return m
}

func fromPeriods(ps []ocpi.ChargingPeriod, loss *Loss) []ChargingPeriod {
	var out []ChargingPeriod
	for i, p := range ps {
		cp := ChargingPeriod{StartDateTime: NewDateTime(p.StartDateTime)}
		if p.TariffID != "" {
			loss.Add(index("charging_periods", i)+".tariff_id", "not in 2.1.1")
		}
		for j, d := range p.Dimensions {
			if slices.Contains(CdrDimensionTypes, d.Type) {
				cp.Dimensions = append(cp.Dimensions, d)
				continue
			}
			loss.Add(index(index("charging_periods", i)+".dimensions", j), "%s is not a 2.1.1 dimension", d.Type)
		}
		if len(cp.Dimensions) > 0 {
			out = append(out, cp)
		}
	}
	return out
}

func periodsTo221(ps []ChargingPeriod, loss *Loss) []ocpi.ChargingPeriod {
	var out []ocpi.ChargingPeriod
	for i, p := range ps {
		cp := ocpi.ChargingPeriod{StartDateTime: p.StartDateTime.Time()}
		for j, d := range p.Dimensions {
			if d.Type == "FLAT" {
				loss.Add(index(index("charging_periods", i)+".dimensions", j), "FLAT was removed in 2.2")
				continue
			}
			cp.Dimensions = append(cp.Dimensions, d)
		}
		if len(cp.Dimensions) > 0 {
			out = append(out, cp)
		}
	}
	return out
}

// Place returns the location, EVSE and connector a 2.1.1 session or CDR
// took place at: its location's first EVSE and that EVSE's first connector
// (2.1.1 sends the location trimmed to them). ok is false when the location
// names none.
func (l *Location) Place() (locationID, evseUID, connectorID string, loss Loss, ok bool) {
	if l == nil || len(l.EVSEs) == 0 || len(l.EVSEs[0].Connectors) == 0 {
		return "", "", "", nil, false
	}
	if len(l.EVSEs) > 1 || len(l.EVSEs[0].Connectors) > 1 {
		loss.Add("location", "several EVSEs or connectors: the first connector of the first EVSE is taken as the one in use")
	}
	return l.ID, l.EVSEs[0].UID, l.EVSEs[0].Connectors[0].ID, loss, true
}

// To221 converts a 2.1.1 Session of the CPO cc/pid to 2.2.1; tok is the
// token of its auth_id (the caller finds it: 2.1.1 names only the contract).
func (s *Session) To221(cc, pid string, tok *ocpi.CdrToken) (ocpi.Session, Loss) {
	var loss Loss
	out := ocpi.Session{CountryCode: cc, PartyID: pid, ID: s.ID, StartDateTime: s.StartDateTime.Time(), EndDateTime: s.EndDateTime.Ptr(),
		KWh: s.KWh, CdrToken: tok, AuthMethod: s.AuthMethod, MeterID: s.MeterID, Currency: s.Currency, Status: s.Status,
		LastUpdated: s.LastUpdated.Time()}
	if s.TotalCost.Valid() {
		out.TotalCost = &ocpi.Price{ExclVAT: s.TotalCost}
	}
	out.ChargingPeriods = periodsTo221(s.ChargingPeriods, &loss)
	if id, evse, conn, sub, ok := s.Location.Place(); ok {
		out.LocationID, out.EVSEUID, out.ConnectorID = id, evse, conn
		loss = append(loss, sub...)
	}
	return out, loss
}

// Check validates what is particular to a 2.1.1 Session.
func (s *Session) Check(c *ocpi.Check) {
	c.String("id", s.ID, 36, true)
	c.DateTime("start_datetime", s.StartDateTime.Time(), true)
	c.Required("kwh", s.KWh.Valid())
	c.String("auth_id", s.AuthID, 36, true)
	c.Enum("auth_method", s.AuthMethod, AuthMethods, true)
	if c.Required("location", s.Location != nil) {
		if _, _, _, _, ok := s.Location.Place(); !ok {
			c.Fail("location.evses", "must name the EVSE and connector of the session")
		}
	}
	c.Currency("currency", s.Currency, true)
	c.Enum("status", s.Status, SessionStatuses, true)
	c.DateTime("last_updated", s.LastUpdated.Time(), true)
}

// SessionPatchFrom221 converts a 2.2.1 session PATCH to 2.1.1, field by
// field; loc is the session's location when the PATCH moves it (location_id,
// evse_uid or connector_id in it). ok is false when nothing a 2.1.1 receiver
// knows is left, or the change cannot be expressed.
func SessionPatchFrom221(patch ocpi.Object, loc *ocpi.Location, evseUID, connectorID string) (ocpi.Object, Loss, bool) {
	var loss Loss
	out := ocpi.Object{}
	moved := false
	for k, v := range patch {
		switch k {
		case "country_code", "party_id":
		case "start_date_time":
			out["start_datetime"] = legacyTime(v)
		case "end_date_time":
			out["end_datetime"] = legacyTime(v)
		case "last_updated":
			out[k] = legacyTime(v)
		case "cdr_token":
			var t ocpi.CdrToken
			if decodeInto(v, &t) == nil {
				out["auth_id"] = t.ContractID
			}
		case "auth_method":
			s, _ := v.(string)
			out[k] = authMethod(s, &loss)
		case "authorization_reference":
			loss.Add(k, "not in 2.1.1")
		case "location_id", "evse_uid", "connector_id":
			moved = true
		case "total_cost":
			var p ocpi.Price
			if v == nil {
				out[k] = nil
			} else if decodeInto(v, &p) == nil {
				out[k] = p.ExclVAT
			}
		case "charging_periods":
			var ps []ocpi.ChargingPeriod
			if decodeInto(v, &ps) == nil {
				out[k] = orEmptyPeriods(fromPeriods(ps, &loss))
			}
		case "status":
			if s, _ := v.(string); s == ocpi.SessionReservation {
				loss.Add(k, "a reservation is not a 2.1.1 session; the change is not sent")
				return nil, loss, false
			}
			out[k] = v
		default:
			out[k] = v
		}
	}
	if moved {
		if loc == nil {
			loss.Add("location", "the session's new location is not in the hub's directory; the change is not sent")
			return nil, loss, false
		}
		l, sub, ok := SessionLocation(loc, evseUID, connectorID)
		loss.Merge("location", sub)
		if !ok {
			return nil, loss, false
		}
		out["location"] = l
	}
	for k := range out {
		if k != "last_updated" {
			return out, loss, true
		}
	}
	return nil, loss, false
}

func orEmptyPeriods(ps []ChargingPeriod) []ChargingPeriod {
	if ps == nil {
		return []ChargingPeriod{}
	}
	return ps
}

// SessionPatchTo221 converts a 2.1.1 session PATCH to 2.2.1; token finds
// the token of an auth_id the PATCH carries.
func SessionPatchTo221(patch ocpi.Object, token func(authID string) (*ocpi.CdrToken, error)) (ocpi.Object, Loss, error) {
	var loss Loss
	out := ocpi.Object{}
	for k, v := range patch {
		switch k {
		case "start_datetime":
			out["start_date_time"] = v
		case "end_datetime":
			out["end_date_time"] = v
		case "total_cost":
			if v == nil {
				out[k] = nil
			} else {
				out[k] = map[string]any{"excl_vat": v}
			}
		case "auth_id":
			s, _ := v.(string)
			tok, err := token(s)
			if err != nil {
				return nil, nil, err
			}
			out["cdr_token"] = tok
		case "location":
			var l Location
			if err := decodeField(k, v, &l); err != nil {
				return nil, nil, err
			}
			id, evse, conn, sub, ok := l.Place()
			if !ok {
				return nil, nil, ocpi.Invalid("location.evses", "must name the EVSE and connector of the session")
			}
			loss = append(loss, sub...)
			out["location_id"], out["evse_uid"], out["connector_id"] = id, evse, conn
		case "charging_periods":
			var ps []ChargingPeriod
			if err := decodeField(k, v, &ps); err != nil {
				return nil, nil, err
			}
			out[k] = periodsTo221(ps, &loss)
		default:
			out[k] = v
		}
	}
	return out, loss, nil
}
