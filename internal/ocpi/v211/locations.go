package v211

import (
	"slices"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Location is the 2.1.1 Location (legacy.md §4): no owner fields, no
// publish, a required type instead of parking_type, a required postal_code
// and an optional time_zone.
type Location struct {
	ID                 string                       `json:"id"`
	Type               string                       `json:"type"`
	Name               string                       `json:"name,omitempty"`
	Address            string                       `json:"address"`
	City               string                       `json:"city"`
	PostalCode         string                       `json:"postal_code,omitempty"`
	Country            string                       `json:"country"`
	Coordinates        *ocpi.GeoLocation            `json:"coordinates"`
	RelatedLocations   []ocpi.AdditionalGeoLocation `json:"related_locations,omitempty"`
	EVSEs              []EVSE                       `json:"evses,omitempty"`
	Directions         []ocpi.DisplayText           `json:"directions,omitempty"`
	Operator           *ocpi.BusinessDetails        `json:"operator,omitempty"`
	Suboperator        *ocpi.BusinessDetails        `json:"suboperator,omitempty"`
	Owner              *ocpi.BusinessDetails        `json:"owner,omitempty"`
	Facilities         []string                     `json:"facilities,omitempty"`
	TimeZone           string                       `json:"time_zone,omitempty"`
	OpeningTimes       *Hours                       `json:"opening_times,omitempty"`
	ChargingWhenClosed *bool                        `json:"charging_when_closed,omitempty"`
	Images             []ocpi.Image                 `json:"images,omitempty"`
	EnergyMix          *EnergyMix                   `json:"energy_mix,omitempty"`
	LastUpdated        DateTime                     `json:"last_updated"`
}

// EVSE is the 2.1.1 EVSE: 2.2.1's fields, with uid string(39) and fewer
// capabilities.
type EVSE struct {
	UID                 string             `json:"uid"`
	EVSEID              string             `json:"evse_id,omitempty"`
	Status              string             `json:"status"`
	StatusSchedule      []StatusSchedule   `json:"status_schedule,omitempty"`
	Capabilities        []string           `json:"capabilities,omitempty"`
	Connectors          []Connector        `json:"connectors"`
	FloorLevel          string             `json:"floor_level,omitempty"`
	Coordinates         *ocpi.GeoLocation  `json:"coordinates,omitempty"`
	PhysicalReference   string             `json:"physical_reference,omitempty"`
	Directions          []ocpi.DisplayText `json:"directions,omitempty"`
	ParkingRestrictions []string           `json:"parking_restrictions,omitempty"`
	Images              []ocpi.Image       `json:"images,omitempty"`
	LastUpdated         DateTime           `json:"last_updated"`
}

// Connector is the 2.1.1 Connector: voltage and amperage (required), one
// optional tariff_id, no max_electric_power.
type Connector struct {
	ID                 string   `json:"id"`
	Standard           string   `json:"standard"`
	Format             string   `json:"format"`
	PowerType          string   `json:"power_type"`
	Voltage            *int64   `json:"voltage"`
	Amperage           *int64   `json:"amperage"`
	TariffID           string   `json:"tariff_id,omitempty"`
	TermsAndConditions string   `json:"terms_and_conditions,omitempty"`
	LastUpdated        DateTime `json:"last_updated"`
}

// StatusSchedule is a planned status of an EVSE.
type StatusSchedule struct {
	PeriodBegin DateTime  `json:"period_begin"`
	PeriodEnd   *DateTime `json:"period_end,omitempty"`
	Status      string    `json:"status"`
}

// Hours are opening times: regular hours or twentyfourseven (a choice in
// 2.1.1), and exceptions.
type Hours struct {
	RegularHours        []ocpi.RegularHours `json:"regular_hours,omitempty"`
	TwentyFourSeven     *bool               `json:"twentyfourseven,omitempty"`
	ExceptionalOpenings []ExceptionalPeriod `json:"exceptional_openings,omitempty"`
	ExceptionalClosings []ExceptionalPeriod `json:"exceptional_closings,omitempty"`
}

// ExceptionalPeriod is a period of exceptional opening or closing.
type ExceptionalPeriod struct {
	PeriodBegin DateTime `json:"period_begin"`
	PeriodEnd   DateTime `json:"period_end"`
}

// EnergyMix is the 2.1.1 EnergyMix: environ_impact entries name their
// category "source".
type EnergyMix struct {
	IsGreenEnergy     *bool                 `json:"is_green_energy"`
	EnergySources     []ocpi.EnergySource   `json:"energy_sources,omitempty"`
	EnvironImpact     []EnvironmentalImpact `json:"environ_impact,omitempty"`
	SupplierName      string                `json:"supplier_name,omitempty"`
	EnergyProductName string                `json:"energy_product_name,omitempty"`
}

// EnvironmentalImpact is an amount in g/kWh.
type EnvironmentalImpact struct {
	Source string      `json:"source"`
	Amount ocpi.Number `json:"amount"`
}

// The 2.1.1 enumerations of locations (legacy.md §4).
var (
	LocationTypes = []string{"ON_STREET", "PARKING_GARAGE", "UNDERGROUND_GARAGE", "PARKING_LOT", "OTHER", "UNKNOWN"}
	Capabilities  = []string{"CHARGING_PROFILE_CAPABLE", "CREDIT_CARD_PAYABLE", "REMOTE_START_STOP_CAPABLE", "RESERVABLE",
		"RFID_READER", "UNLOCK_CAPABLE"}
	ConnectorTypes = []string{"CHADEMO", "DOMESTIC_A", "DOMESTIC_B", "DOMESTIC_C", "DOMESTIC_D", "DOMESTIC_E", "DOMESTIC_F",
		"DOMESTIC_G", "DOMESTIC_H", "DOMESTIC_I", "DOMESTIC_J", "DOMESTIC_K", "DOMESTIC_L", "IEC_60309_2_single_16",
		"IEC_60309_2_three_16", "IEC_60309_2_three_32", "IEC_60309_2_three_64", "IEC_62196_T1", "IEC_62196_T1_COMBO",
		"IEC_62196_T2", "IEC_62196_T2_COMBO", "IEC_62196_T3A", "IEC_62196_T3C", "TESLA_R", "TESLA_S"}
	PowerTypes = []string{"AC_1_PHASE", "AC_3_PHASE", "DC"}
	Facilities = []string{"HOTEL", "RESTAURANT", "CAFE", "MALL", "SUPERMARKET", "SPORT", "RECREATION_AREA", "NATURE",
		"MUSEUM", "BUS_STOP", "TAXI_STAND", "TRAIN_STATION", "AIRPORT", "CARPOOL_PARKING", "FUEL_STATION", "WIFI"}
)

// Length limits that differ between 2.1.1 and 2.2.1.
const (
	maxAddress = 45
	maxUID     = 39
)

// Shareable reports whether a 2.2.1 location may go to a legacy partner:
// only published ones. A legacy partner cannot honour publish_allowed_to, so
// a location restricted to some tokens is not shared with it at all.
func Shareable(l *ocpi.Location) bool { return l.Publish == nil || *l.Publish }

// FromLocation converts a 2.2.1 Location to 2.1.1.
func FromLocation(l *ocpi.Location) (Location, Loss) {
	var loss Loss
	out := Location{
		ID: l.ID, Type: locationType(l.ParkingType), Name: l.Name, Address: l.Address, City: l.City,
		PostalCode: l.PostalCode, Country: l.Country, RelatedLocations: slices.Clone(l.RelatedLocations), Directions: l.Directions,
		Operator: l.Operator, Suboperator: l.Suboperator, Owner: l.Owner, TimeZone: l.TimeZone,
		ChargingWhenClosed: l.ChargingWhenClosed, Images: l.Images, LastUpdated: NewDateTime(l.LastUpdated),
	}
	if l.ParkingType == "ALONG_MOTORWAY" || l.ParkingType == "ON_DRIVEWAY" {
		loss.Add("parking_type", "%s has no 2.1.1 LocationType; sent as OTHER", l.ParkingType)
	}
	if len(l.PublishAllowedTo) > 0 {
		loss.Add("publish_allowed_to", "not in 2.1.1")
	}
	if l.State != "" {
		loss.Add("state", "not in 2.1.1")
	}
	if l.PostalCode == "" {
		loss.Add("postal_code", "required in 2.1.1 but absent; sent without it")
	}
	if len([]rune(out.Address)) > maxAddress {
		out.Address = string([]rune(out.Address)[:maxAddress])
		loss.Add("address", "cut to the 45 characters of 2.1.1")
	}
	if l.Coordinates != nil {
		c, lossy := coordinates(*l.Coordinates)
		out.Coordinates = &c
		if lossy {
			loss.Add("coordinates", "rounded to the 6 decimals of 2.1.1")
		}
	}
	for i, r := range out.RelatedLocations {
		c, lossy := coordinates(ocpi.GeoLocation{Latitude: r.Latitude, Longitude: r.Longitude})
		out.RelatedLocations[i].Latitude, out.RelatedLocations[i].Longitude = c.Latitude, c.Longitude
		if lossy {
			loss.Add(index("related_locations", i), "rounded to the 6 decimals of 2.1.1")
		}
	}
	out.Facilities = filterEnum(l.Facilities, Facilities, "facilities", &loss)
	if l.OpeningTimes != nil {
		out.OpeningTimes = fromHours(l.OpeningTimes)
	}
	if l.EnergyMix != nil {
		out.EnergyMix = fromEnergyMix(l.EnergyMix)
	}
	out.EVSEs = appendFrom(out.EVSEs, "evses", l.EVSEs, &loss, FromEVSE)
	return out, loss
}

// FromEVSE converts a 2.2.1 EVSE to 2.1.1. ok is false when none of its
// connectors can be expressed in 2.1.1: the EVSE is then left out.
func FromEVSE(e *ocpi.EVSE) (EVSE, Loss, bool) {
	var loss Loss
	out := EVSE{UID: e.UID, EVSEID: e.EVSEID, Status: e.Status, FloorLevel: e.FloorLevel, PhysicalReference: e.PhysicalReference,
		Directions: e.Directions, ParkingRestrictions: e.ParkingRestrictions, Images: e.Images, LastUpdated: NewDateTime(e.LastUpdated)}
	for _, s := range e.StatusSchedule {
		out.StatusSchedule = append(out.StatusSchedule, StatusSchedule{PeriodBegin: NewDateTime(s.PeriodBegin), PeriodEnd: OptDateTime(s.PeriodEnd), Status: s.Status})
	}
	out.Capabilities = filterEnum(e.Capabilities, Capabilities, "capabilities", &loss)
	if e.Coordinates != nil {
		c, lossy := coordinates(*e.Coordinates)
		out.Coordinates = &c
		if lossy {
			loss.Add("coordinates", "rounded to the 6 decimals of 2.1.1")
		}
	}
	out.Connectors = appendFrom(out.Connectors, "connectors", e.Connectors, &loss, FromConnector)
	if len(out.Connectors) == 0 {
		loss.Add("", "EVSE %s left out: none of its connectors exists in 2.1.1", e.UID)
		return out, loss, false
	}
	return out, loss, true
}

// FromConnector converts a 2.2.1 Connector to 2.1.1. ok is false when its
// standard or power type has no 2.1.1 value (GB/T, NEMA, ChaoJi,
// pantographs, two-phase AC): the connector is then left out.
func FromConnector(k *ocpi.Connector) (Connector, Loss, bool) {
	var loss Loss
	out := Connector{ID: k.ID, Standard: k.Standard, Format: k.Format, PowerType: k.PowerType, Voltage: k.MaxVoltage,
		Amperage: k.MaxAmperage, TermsAndConditions: k.TermsAndConditions, LastUpdated: NewDateTime(k.LastUpdated)}
	if len(k.TariffIDs) > 0 {
		out.TariffID = k.TariffIDs[0]
		if len(k.TariffIDs) > 1 {
			loss.Add("tariff_ids", "2.1.1 has one tariff_id; %d more dropped", len(k.TariffIDs)-1)
		}
	}
	if k.MaxElectricPower != nil {
		loss.Add("max_electric_power", "not in 2.1.1")
	}
	if !slices.Contains(ConnectorTypes, k.Standard) {
		loss.Add("standard", "connector %s left out: %s is not a 2.1.1 ConnectorType", k.ID, k.Standard)
		return out, loss, false
	}
	if !slices.Contains(PowerTypes, k.PowerType) {
		loss.Add("power_type", "connector %s left out: %s is not a 2.1.1 PowerType", k.ID, k.PowerType)
		return out, loss, false
	}
	return out, loss, true
}

// locationType maps 2.2.1 parking_type to the 2.1.1 LocationType: the four
// shared values as they are, the two 2.2 additions to OTHER, absent to
// UNKNOWN (the value 2.1.1 has for "not known").
func locationType(parking string) string {
	switch parking {
	case "":
		return "UNKNOWN"
	case "ALONG_MOTORWAY", "ON_DRIVEWAY":
		return "OTHER"
	}
	return parking
}

func fromHours(h *ocpi.Hours) *Hours {
	out := &Hours{}
	if h.TwentyFourSeven != nil && *h.TwentyFourSeven {
		out.TwentyFourSeven = boolPtr(true)
	} else {
		out.RegularHours = h.RegularHours
	}
	for _, p := range h.ExceptionalOpenings {
		out.ExceptionalOpenings = append(out.ExceptionalOpenings, ExceptionalPeriod{NewDateTime(p.PeriodBegin), NewDateTime(p.PeriodEnd)})
	}
	for _, p := range h.ExceptionalClosings {
		out.ExceptionalClosings = append(out.ExceptionalClosings, ExceptionalPeriod{NewDateTime(p.PeriodBegin), NewDateTime(p.PeriodEnd)})
	}
	return out
}

func fromEnergyMix(m *ocpi.EnergyMix) *EnergyMix {
	out := &EnergyMix{IsGreenEnergy: m.IsGreenEnergy, EnergySources: m.EnergySources, SupplierName: m.SupplierName, EnergyProductName: m.EnergyProductName}
	for _, e := range m.EnvironImpact {
		out.EnvironImpact = append(out.EnvironImpact, EnvironmentalImpact{Source: e.Category, Amount: e.Amount})
	}
	return out
}

// coordinates writes a point with exactly six decimals, as 2.1.1 requires;
// lossy is true when a seventh decimal was rounded away.
func coordinates(g ocpi.GeoLocation) (ocpi.GeoLocation, bool) {
	lat, l1 := sixDecimals(g.Latitude)
	lon, l2 := sixDecimals(g.Longitude)
	return ocpi.GeoLocation{Latitude: lat, Longitude: lon}, l1 || l2
}

func sixDecimals(s string) (string, bool) {
	n, err := ocpi.ParseNumber(s)
	if err != nil {
		return s, false
	}
	d := n.Decimal()
	r := d.Round(6)
	return r.StringFixed(6), !r.Equal(d)
}

// filterEnum keeps the values of list that allowed has, reporting the others.
func filterEnum(list, allowed []string, field string, loss *Loss) []string {
	var out []string
	for i, v := range list {
		if slices.Contains(allowed, v) {
			out = append(out, v)
			continue
		}
		loss.Add(index(field, i), "%s is not a 2.1.1 value", v)
	}
	return out
}

// To221 converts a 2.1.1 Location of the party cc/pid to 2.2.1. A legacy
// location is public (publish true: 2.1.1 shares every location). A missing
// time_zone is taken from the country when the country has one time zone
// (TimeZoneOf); otherwise it stays empty and 2.2.1 validation refuses it.
func (l *Location) To221(cc, pid string) (ocpi.Location, Loss) {
	var loss Loss
	out := ocpi.Location{
		CountryCode: cc, PartyID: pid, ID: l.ID, Publish: boolPtr(true), Name: l.Name, Address: l.Address, City: l.City,
		PostalCode: l.PostalCode, Country: l.Country, Coordinates: l.Coordinates, RelatedLocations: l.RelatedLocations,
		Directions: l.Directions, Operator: l.Operator, Suboperator: l.Suboperator, Owner: l.Owner, Facilities: l.Facilities,
		TimeZone: l.TimeZone, ChargingWhenClosed: l.ChargingWhenClosed, Images: l.Images, LastUpdated: l.LastUpdated.Time(),
	}
	switch l.Type {
	case "OTHER":
		loss.Add("type", "OTHER has no 2.2.1 parking_type; left out")
	case "UNKNOWN", "":
	default:
		out.ParkingType = l.Type
	}
	if out.TimeZone == "" {
		out.TimeZone = TimeZoneOf(l.Country)
	}
	if l.OpeningTimes != nil {
		out.OpeningTimes = l.OpeningTimes.to221()
	}
	if l.EnergyMix != nil {
		out.EnergyMix = l.EnergyMix.to221()
	}
	for i := range l.EVSEs {
		out.EVSEs = append(out.EVSEs, l.EVSEs[i].To221())
	}
	return out, loss
}

// To221 converts a 2.1.1 EVSE to 2.2.1.
func (e *EVSE) To221() ocpi.EVSE {
	out := ocpi.EVSE{UID: e.UID, EVSEID: e.EVSEID, Status: e.Status, Capabilities: e.Capabilities, FloorLevel: e.FloorLevel,
		Coordinates: e.Coordinates, PhysicalReference: e.PhysicalReference, Directions: e.Directions,
		ParkingRestrictions: e.ParkingRestrictions, Images: e.Images, LastUpdated: e.LastUpdated.Time()}
	for _, s := range e.StatusSchedule {
		out.StatusSchedule = append(out.StatusSchedule, ocpi.StatusSchedule{PeriodBegin: s.PeriodBegin.Time(), PeriodEnd: s.PeriodEnd.Ptr(), Status: s.Status})
	}
	out.Connectors = []ocpi.Connector{}
	for i := range e.Connectors {
		out.Connectors = append(out.Connectors, e.Connectors[i].To221())
	}
	return out
}

// To221 converts a 2.1.1 Connector to 2.2.1.
func (k *Connector) To221() ocpi.Connector {
	out := ocpi.Connector{ID: k.ID, Standard: k.Standard, Format: k.Format, PowerType: k.PowerType, MaxVoltage: k.Voltage,
		MaxAmperage: k.Amperage, TermsAndConditions: k.TermsAndConditions, LastUpdated: k.LastUpdated.Time()}
	if k.TariffID != "" {
		out.TariffIDs = []string{k.TariffID}
	}
	return out
}

func (h *Hours) to221() *ocpi.Hours {
	out := &ocpi.Hours{TwentyFourSeven: boolPtr(h.TwentyFourSeven != nil && *h.TwentyFourSeven), RegularHours: h.RegularHours}
	for _, p := range h.ExceptionalOpenings {
		out.ExceptionalOpenings = append(out.ExceptionalOpenings, ocpi.ExceptionalPeriod{PeriodBegin: p.PeriodBegin.Time(), PeriodEnd: p.PeriodEnd.Time()})
	}
	for _, p := range h.ExceptionalClosings {
		out.ExceptionalClosings = append(out.ExceptionalClosings, ocpi.ExceptionalPeriod{PeriodBegin: p.PeriodBegin.Time(), PeriodEnd: p.PeriodEnd.Time()})
	}
	return out
}

func (m *EnergyMix) to221() *ocpi.EnergyMix {
	out := &ocpi.EnergyMix{IsGreenEnergy: m.IsGreenEnergy, EnergySources: m.EnergySources, SupplierName: m.SupplierName, EnergyProductName: m.EnergyProductName}
	for _, e := range m.EnvironImpact {
		out.EnvironImpact = append(out.EnvironImpact, ocpi.EnvironmentalImpact{Category: e.Source, Amount: e.Amount})
	}
	return out
}
