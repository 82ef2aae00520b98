package ocpi

// CDR is the 2.2.1 Charge Detail Record (cdrs.md §4): the sealed billing
// record of a session, owned by the CPO and never changed once sent.
type CDR struct {
	CountryCode            string           `json:"country_code"`
	PartyID                string           `json:"party_id"`
	ID                     string           `json:"id"`
	StartDateTime          DateTime         `json:"start_date_time"`
	EndDateTime            DateTime         `json:"end_date_time"`
	SessionID              string           `json:"session_id,omitempty"`
	CdrToken               *CdrToken        `json:"cdr_token"`
	AuthMethod             string           `json:"auth_method"`
	AuthorizationReference string           `json:"authorization_reference,omitempty"`
	CdrLocation            *CdrLocation     `json:"cdr_location"`
	MeterID                string           `json:"meter_id,omitempty"`
	Currency               string           `json:"currency"`
	Tariffs                []Tariff         `json:"tariffs,omitempty"`
	ChargingPeriods        []ChargingPeriod `json:"charging_periods"`
	SignedData             *SignedData      `json:"signed_data,omitempty"`
	TotalCost              *Price           `json:"total_cost"`
	TotalFixedCost         *Price           `json:"total_fixed_cost,omitempty"`
	TotalEnergy            Number           `json:"total_energy"`
	TotalEnergyCost        *Price           `json:"total_energy_cost,omitempty"`
	TotalTime              Number           `json:"total_time"`
	TotalTimeCost          *Price           `json:"total_time_cost,omitempty"`
	TotalParkingTime       Number           `json:"total_parking_time,omitzero"`
	TotalParkingCost       *Price           `json:"total_parking_cost,omitempty"`
	TotalReservationCost   *Price           `json:"total_reservation_cost,omitempty"`
	Remark                 string           `json:"remark,omitempty"`
	InvoiceReferenceID     string           `json:"invoice_reference_id,omitempty"`
	Credit                 *bool            `json:"credit,omitempty"`
	CreditReferenceID      string           `json:"credit_reference_id,omitempty"`
	HomeChargingCompensate *bool            `json:"home_charging_compensation,omitempty"`
	LastUpdated            DateTime         `json:"last_updated"`
}

// CdrLocation is the location of a CDR as it was at the session's start.
// Its lengths are the published ones (address 45, state 20): the 2026
// errata lengthened them on Location only (gaps.md §6).
type CdrLocation struct {
	ID                 string       `json:"id"`
	Name               string       `json:"name,omitempty"`
	Address            string       `json:"address"`
	City               string       `json:"city"`
	PostalCode         string       `json:"postal_code,omitempty"`
	State              string       `json:"state,omitempty"`
	Country            string       `json:"country"`
	Coordinates        *GeoLocation `json:"coordinates"`
	EVSEUID            string       `json:"evse_uid"`
	EVSEID             string       `json:"evse_id"`
	ConnectorID        string       `json:"connector_id"`
	ConnectorStandard  string       `json:"connector_standard"`
	ConnectorFormat    string       `json:"connector_format"`
	ConnectorPowerType string       `json:"connector_power_type"`
}

// SignedData carries calibration-law signed meter values.
type SignedData struct {
	EncodingMethod        string        `json:"encoding_method"`
	EncodingMethodVersion *int          `json:"encoding_method_version,omitempty"`
	PublicKey             string        `json:"public_key,omitempty"`
	SignedValues          []SignedValue `json:"signed_values"`
	URL                   string        `json:"url,omitempty"`
}

// SignedValue is one signed meter reading. plain_data is string(5000) per the
// 2026 erratum (published 2.2.1: 512).
type SignedValue struct {
	Nature     string `json:"nature"`
	PlainData  string `json:"plain_data"`
	SignedData string `json:"signed_data"`
}

// IsCredit reports whether the CDR is a credit CDR.
func (d *CDR) IsCredit() bool { return d.Credit != nil && *d.Credit }

// Check validates a CDR.
func (d *CDR) Check(c *Check) {
	c.CountryCode("country_code", d.CountryCode, true)
	c.PartyID("party_id", d.PartyID, true)
	// Credit CDRs may add a suffix to the original id (hence 39); a normal
	// CDR's id is at most 36 (cdrs.md §4).
	if d.IsCredit() {
		c.CiString("id", d.ID, 39, true)
	} else {
		c.CiString("id", d.ID, 36, true)
	}
	c.DateTime("start_date_time", d.StartDateTime, true)
	c.DateTime("end_date_time", d.EndDateTime, true)
	if !d.StartDateTime.IsZero() && !d.EndDateTime.IsZero() && d.EndDateTime.Before(d.StartDateTime.Time) {
		c.Fail("end_date_time", "must not be before start_date_time")
	}
	c.CiString("session_id", d.SessionID, 36, false)
	if c.Required("cdr_token", d.CdrToken != nil) {
		sub := c.Sub("cdr_token")
		d.CdrToken.Check(sub)
		c.Merge(sub)
	}
	c.Enum("auth_method", d.AuthMethod, AuthMethods, true)
	c.CiString("authorization_reference", d.AuthorizationReference, 36, false)
	if c.Required("cdr_location", d.CdrLocation != nil) {
		sub := c.Sub("cdr_location")
		d.CdrLocation.Check(sub)
		c.Merge(sub)
	}
	c.String("meter_id", d.MeterID, 255, false)
	c.Currency("currency", d.Currency, true)
	for i := range d.Tariffs {
		sub := c.Index("tariffs", i)
		d.Tariffs[i].Check(sub)
		c.Merge(sub)
	}
	if len(d.ChargingPeriods) == 0 {
		c.Fail("charging_periods", "must list at least one charging period")
	}
	c.ChargingPeriods("charging_periods", d.ChargingPeriods, SessionOnlyDimensionTypes)
	if d.SignedData != nil {
		sub := c.Sub("signed_data")
		d.SignedData.Check(sub)
		c.Merge(sub)
	}
	c.Price("total_cost", d.TotalCost, true)
	if !d.IsCredit() && d.TotalCost != nil && d.TotalCost.ExclVAT.IsNegative() {
		c.Fail("total_cost.excl_vat", "must not be negative outside a credit CDR")
	}
	c.Price("total_fixed_cost", d.TotalFixedCost, false)
	if c.Required("total_energy", d.TotalEnergy.Valid()) && !d.IsCredit() && d.TotalEnergy.IsNegative() {
		// Negative energy is possible (V2G) but not as a whole session's
		// charge billed to a driver.
		c.Fail("total_energy", "must not be negative")
	}
	c.Price("total_energy_cost", d.TotalEnergyCost, false)
	if c.Required("total_time", d.TotalTime.Valid()) && d.TotalTime.IsNegative() {
		c.Fail("total_time", "must not be negative")
	}
	c.Price("total_time_cost", d.TotalTimeCost, false)
	if d.TotalParkingTime.IsNegative() {
		c.Fail("total_parking_time", "must not be negative")
	} else if d.TotalParkingTime.Valid() && d.TotalTime.Valid() && d.TotalParkingTime.Cmp(d.TotalTime) > 0 {
		c.Fail("total_parking_time", "must not exceed total_time")
	}
	c.Price("total_parking_cost", d.TotalParkingCost, false)
	c.Price("total_reservation_cost", d.TotalReservationCost, false)
	c.String("remark", d.Remark, 255, false)
	c.CiString("invoice_reference_id", d.InvoiceReferenceID, 39, false)
	c.CiString("credit_reference_id", d.CreditReferenceID, 39, false)
	switch {
	case d.IsCredit() && d.CreditReferenceID == "":
		c.Fail("credit_reference_id", "is required on a credit CDR")
	case !d.IsCredit() && d.CreditReferenceID != "":
		c.Fail("credit_reference_id", "may only be set on a credit CDR (credit: true)")
	case d.IsCredit() && EqualCI(d.CreditReferenceID, d.ID):
		c.Fail("credit_reference_id", "must name another CDR than the credit CDR itself")
	}
	c.DateTime("last_updated", d.LastUpdated, true)
}

// Check validates a CdrLocation.
func (l *CdrLocation) Check(c *Check) {
	c.CiString("id", l.ID, 36, true)
	c.String("name", l.Name, 255, false)
	c.String("address", l.Address, 45, true)
	c.String("city", l.City, 45, true)
	c.String("postal_code", l.PostalCode, 10, false)
	c.String("state", l.State, 20, false)
	checkPlace(c, l.Country, l.Coordinates)
	c.CiString("evse_uid", l.EVSEUID, 36, true)
	c.CiString("evse_id", l.EVSEID, 48, true)
	c.CiString("connector_id", l.ConnectorID, 36, true)
	c.Enum("connector_standard", l.ConnectorStandard, ConnectorTypes, true)
	c.Enum("connector_format", l.ConnectorFormat, ConnectorFormats, true)
	c.Enum("connector_power_type", l.ConnectorPowerType, PowerTypes, true)
}

// Check validates SignedData.
func (s *SignedData) Check(c *Check) {
	c.CiString("encoding_method", s.EncodingMethod, 36, true)
	if s.EncodingMethodVersion != nil && *s.EncodingMethodVersion < 0 {
		c.Fail("encoding_method_version", "must not be negative")
	}
	c.String("public_key", s.PublicKey, 512, false)
	if len(s.SignedValues) == 0 {
		c.Fail("signed_values", "must list at least one signed value")
	}
	for i, v := range s.SignedValues {
		sub := c.Index("signed_values", i)
		sub.CiString("nature", v.Nature, 32, true)
		sub.String("plain_data", v.PlainData, 5000, true)
		sub.String("signed_data", v.SignedData, 5000, true)
		c.Merge(sub)
	}
	c.String("url", s.URL, 512, false)
}
