package v211

import (
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// CDR is the 2.1.1 CDR (legacy.md §6): the Location instead of a
// cdr_location, auth_id instead of a cdr_token, numbers for the costs, no
// session_id, signed data, cost breakdown or credit.
type CDR struct {
	ID               string           `json:"id"`
	StartDateTime    DateTime         `json:"start_date_time"`
	StopDateTime     DateTime         `json:"stop_date_time"`
	AuthID           string           `json:"auth_id"`
	AuthMethod       string           `json:"auth_method"`
	Location         *Location        `json:"location"`
	MeterID          string           `json:"meter_id,omitempty"`
	Currency         string           `json:"currency"`
	Tariffs          []Tariff         `json:"tariffs,omitempty"`
	ChargingPeriods  []ChargingPeriod `json:"charging_periods"`
	TotalCost        ocpi.Number      `json:"total_cost"`
	TotalEnergy      ocpi.Number      `json:"total_energy"`
	TotalTime        ocpi.Number      `json:"total_time"`
	TotalParkingTime ocpi.Number      `json:"total_parking_time,omitzero"`
	Remark           string           `json:"remark,omitempty"`
	LastUpdated      DateTime         `json:"last_updated"`
}

// FromCDR converts a 2.2.1 CDR to 2.1.1; loc is the CDR's location from the
// hub's directory (nil when it has none: the location is then rebuilt from
// the cdr_location, without the voltage and amperage 2.1.1 wants). ok is
// false for a credit CDR (2.1.1 has none) or one whose place has no 2.1.1
// form.
func FromCDR(d *ocpi.CDR, loc *ocpi.Location) (CDR, Loss, bool) {
	var loss Loss
	out := CDR{ID: d.ID, StartDateTime: NewDateTime(d.StartDateTime), StopDateTime: NewDateTime(d.EndDateTime),
		AuthMethod: authMethod(d.AuthMethod, &loss), MeterID: d.MeterID, Currency: d.Currency, TotalEnergy: d.TotalEnergy,
		TotalTime: d.TotalTime, TotalParkingTime: d.TotalParkingTime, Remark: d.Remark, LastUpdated: NewDateTime(d.LastUpdated)}
	if d.IsCredit() {
		loss.Add("credit", "2.1.1 has no credit CDRs; not sent")
		return out, loss, false
	}
	if d.CdrToken != nil {
		out.AuthID = d.CdrToken.ContractID
		loss.Add("cdr_token.uid", "2.1.1 names the contract (auth_id), not the token")
	}
	if d.TotalCost != nil {
		out.TotalCost = d.TotalCost.ExclVAT
		if d.TotalCost.InclVAT != nil {
			loss.Add("total_cost.incl_vat", "2.1.1 has the cost excluding VAT only")
		}
	}
	for _, f := range []struct {
		name    string
		present bool
	}{{"session_id", d.SessionID != ""}, {"authorization_reference", d.AuthorizationReference != ""}, {"signed_data", d.SignedData != nil},
		{"total_fixed_cost", d.TotalFixedCost != nil}, {"total_energy_cost", d.TotalEnergyCost != nil}, {"total_time_cost", d.TotalTimeCost != nil},
		{"total_parking_cost", d.TotalParkingCost != nil}, {"total_reservation_cost", d.TotalReservationCost != nil},
		{"invoice_reference_id", d.InvoiceReferenceID != ""}, {"home_charging_compensation", d.HomeChargingCompensate != nil}} {
		if f.present {
			loss.Add(f.name, "not in 2.1.1")
		}
	}
	out.Tariffs = appendFrom(out.Tariffs, "tariffs", d.Tariffs, &loss, FromTariff)
	out.ChargingPeriods = orEmptyPeriods(fromPeriods(d.ChargingPeriods, &loss))
	var cl ocpi.CdrLocation
	if d.CdrLocation != nil {
		cl = *d.CdrLocation
	}
	if loc != nil {
		l, sub, ok := SessionLocation(loc, cl.EVSEUID, cl.ConnectorID)
		loss.Merge("location", sub)
		if ok {
			out.Location = l
			return out, loss, true
		}
	}
	l, sub, ok := cdrLocation(cl, d.LastUpdated)
	loss.Merge("location", sub)
	out.Location = l
	return out, loss, ok
}

// cdrLocation rebuilds a 2.1.1 location from a cdr_location: what it lacks
// (type, the connector's voltage and amperage, the EVSE's status) is left
// out or UNKNOWN, never made up.
func cdrLocation(cl ocpi.CdrLocation, lastUpdated ocpi.DateTime) (*Location, Loss, bool) {
	var loss Loss
	k := ocpi.Connector{ID: cl.ConnectorID, Standard: cl.ConnectorStandard, Format: cl.ConnectorFormat, PowerType: cl.ConnectorPowerType,
		LastUpdated: lastUpdated}
	conn, sub, ok := FromConnector(&k)
	loss.Merge("evses[0].connectors[0]", sub)
	if !ok {
		return nil, loss, false
	}
	loss.Add("evses[0].connectors[0].voltage", "unknown: the hub has no copy of the location")
	l := &Location{ID: cl.ID, Type: "UNKNOWN", Name: cl.Name, Address: cl.Address, City: cl.City, PostalCode: cl.PostalCode,
		Country: cl.Country, LastUpdated: NewDateTime(lastUpdated),
		EVSEs: []EVSE{{UID: cl.EVSEUID, EVSEID: cl.EVSEID, Status: "UNKNOWN", Connectors: []Connector{conn}, LastUpdated: NewDateTime(lastUpdated)}}}
	if cl.Coordinates != nil {
		c, _ := coordinates(*cl.Coordinates)
		l.Coordinates = &c
	}
	return l, loss, true
}

// To221 converts a 2.1.1 CDR of the CPO cc/pid to 2.2.1; tok is the token
// of its auth_id and evseID the evse_id of its EVSE when the CDR's location
// lacks one (2.2.1 requires it in cdr_location; the hub's directory may
// have it). It fails when the CDR's location names no EVSE or evse_id.
func (d *CDR) To221(cc, pid string, tok *ocpi.CdrToken, evseID string) (ocpi.CDR, Loss, error) {
	var loss Loss
	out := ocpi.CDR{CountryCode: cc, PartyID: pid, ID: d.ID, StartDateTime: d.StartDateTime.Time(), EndDateTime: d.StopDateTime.Time(),
		CdrToken: tok, AuthMethod: d.AuthMethod, MeterID: d.MeterID, Currency: d.Currency, TotalEnergy: d.TotalEnergy,
		TotalTime: d.TotalTime, TotalParkingTime: d.TotalParkingTime, Remark: d.Remark, LastUpdated: d.LastUpdated.Time()}
	if d.TotalCost.Valid() {
		out.TotalCost = &ocpi.Price{ExclVAT: d.TotalCost}
	}
	for i := range d.Tariffs {
		out.Tariffs = append(out.Tariffs, d.Tariffs[i].To221(cc, pid))
	}
	out.ChargingPeriods = periodsTo221(d.ChargingPeriods, &loss)
	l := d.Location
	_, _, _, sub, ok := l.Place()
	if !ok {
		return out, loss, ocpi.Invalid("location.evses", "must name the EVSE and connector of the CDR")
	}
	loss = append(loss, sub...)
	e, k := l.EVSEs[0], l.EVSEs[0].Connectors[0]
	if e.EVSEID != "" {
		evseID = e.EVSEID
	}
	if evseID == "" {
		return out, loss, ocpi.Invalid("location.evses[0].evse_id", "is required here: 2.2.1 CDRs name the EVSE by its evse_id, and the hub's copy of the location has none either")
	}
	out.CdrLocation = &ocpi.CdrLocation{ID: l.ID, Name: l.Name, Address: l.Address, City: l.City, PostalCode: l.PostalCode, Country: l.Country,
		Coordinates: l.Coordinates, EVSEUID: e.UID, EVSEID: evseID, ConnectorID: k.ID, ConnectorStandard: k.Standard,
		ConnectorFormat: k.Format, ConnectorPowerType: k.PowerType}
	return out, loss, nil
}

// Check validates what is particular to a 2.1.1 CDR.
func (d *CDR) Check(c *ocpi.Check) {
	c.String("id", d.ID, 36, true)
	c.DateTime("start_date_time", d.StartDateTime.Time(), true)
	c.DateTime("stop_date_time", d.StopDateTime.Time(), true)
	c.String("auth_id", d.AuthID, 36, true)
	c.Enum("auth_method", d.AuthMethod, AuthMethods, true)
	c.Required("location", d.Location != nil)
	c.Currency("currency", d.Currency, true)
	if len(d.ChargingPeriods) == 0 {
		c.Fail("charging_periods", "must list at least one charging period")
	}
	for i, p := range d.ChargingPeriods {
		sub := c.Index("charging_periods", i)
		for j, dim := range p.Dimensions {
			ds := sub.Index("dimensions", j)
			ds.Enum("type", dim.Type, CdrDimensionTypes, true)
			sub.Merge(ds)
		}
		c.Merge(sub)
	}
	c.Required("total_cost", d.TotalCost.Valid())
	c.Required("total_energy", d.TotalEnergy.Valid())
	c.Required("total_time", d.TotalTime.Valid())
	c.DateTime("last_updated", d.LastUpdated.Time(), true)
}
