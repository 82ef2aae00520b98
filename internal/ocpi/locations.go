package ocpi

import (
	"regexp"
	"slices"
	"strconv"

	"github.com/ocpihub/ocpihub/internal/ocpi/core"
)

// Location is the 2.2.1 Location (locations.md §4). Lengths follow the 2026
// errata (gaps.md §6): address string(255), state string(45).
type Location struct {
	CountryCode        string                  `json:"country_code"`
	PartyID            string                  `json:"party_id"`
	ID                 string                  `json:"id"`
	Publish            *bool                   `json:"publish"`
	PublishAllowedTo   []PublishTokenType      `json:"publish_allowed_to,omitempty"`
	Name               string                  `json:"name,omitempty"`
	Address            string                  `json:"address"`
	City               string                  `json:"city"`
	PostalCode         string                  `json:"postal_code,omitempty"`
	State              string                  `json:"state,omitempty"`
	Country            string                  `json:"country"`
	Coordinates        *GeoLocation            `json:"coordinates"`
	RelatedLocations   []AdditionalGeoLocation `json:"related_locations,omitempty"`
	ParkingType        string                  `json:"parking_type,omitempty"`
	EVSEs              []EVSE                  `json:"evses,omitempty"`
	Directions         []DisplayText           `json:"directions,omitempty"`
	Operator           *BusinessDetails        `json:"operator,omitempty"`
	Suboperator        *BusinessDetails        `json:"suboperator,omitempty"`
	Owner              *BusinessDetails        `json:"owner,omitempty"`
	Facilities         []string                `json:"facilities,omitempty"`
	TimeZone           string                  `json:"time_zone"`
	OpeningTimes       *Hours                  `json:"opening_times,omitempty"`
	ChargingWhenClosed *bool                   `json:"charging_when_closed,omitempty"`
	Images             []Image                 `json:"images,omitempty"`
	EnergyMix          *EnergyMix              `json:"energy_mix,omitempty"`
	LastUpdated        DateTime                `json:"last_updated"`
}

// EVSE is the 2.2.1 EVSE (locations.md §5).
type EVSE struct {
	UID                 string           `json:"uid"`
	EVSEID              string           `json:"evse_id,omitempty"`
	Status              string           `json:"status"`
	StatusSchedule      []StatusSchedule `json:"status_schedule,omitempty"`
	Capabilities        []string         `json:"capabilities,omitempty"`
	Connectors          []Connector      `json:"connectors"`
	FloorLevel          string           `json:"floor_level,omitempty"`
	Coordinates         *GeoLocation     `json:"coordinates,omitempty"`
	PhysicalReference   string           `json:"physical_reference,omitempty"`
	Directions          []DisplayText    `json:"directions,omitempty"`
	ParkingRestrictions []string         `json:"parking_restrictions,omitempty"`
	Images              []Image          `json:"images,omitempty"`
	LastUpdated         DateTime         `json:"last_updated"`
}

// Connector is the 2.2.1 Connector (locations.md §6).
type Connector struct {
	ID                 string   `json:"id"`
	Standard           string   `json:"standard"`
	Format             string   `json:"format"`
	PowerType          string   `json:"power_type"`
	MaxVoltage         *int64   `json:"max_voltage"`
	MaxAmperage        *int64   `json:"max_amperage"`
	MaxElectricPower   *int64   `json:"max_electric_power,omitempty"`
	TariffIDs          []string `json:"tariff_ids,omitempty"`
	TermsAndConditions string   `json:"terms_and_conditions,omitempty"`
	LastUpdated        DateTime `json:"last_updated"`
}

// GeoLocation is a WGS84 point, coordinates as decimal strings.
type GeoLocation struct {
	Latitude  string `json:"latitude"`
	Longitude string `json:"longitude"`
}

// AdditionalGeoLocation is a related point (an entrance, a parking lot).
type AdditionalGeoLocation struct {
	Latitude  string       `json:"latitude"`
	Longitude string       `json:"longitude"`
	Name      *DisplayText `json:"name,omitempty"`
}

// PublishTokenType names the tokens allowed to see an unpublished location.
type PublishTokenType struct {
	UID          string `json:"uid,omitempty"`
	Type         string `json:"type,omitempty"`
	VisualNumber string `json:"visual_number,omitempty"`
	Issuer       string `json:"issuer,omitempty"`
	GroupID      string `json:"group_id,omitempty"`
}

// Hours are opening times.
type Hours struct {
	TwentyFourSeven     *bool               `json:"twentyfourseven"`
	RegularHours        []RegularHours      `json:"regular_hours,omitempty"`
	ExceptionalOpenings []ExceptionalPeriod `json:"exceptional_openings,omitempty"`
	ExceptionalClosings []ExceptionalPeriod `json:"exceptional_closings,omitempty"`
}

// RegularHours is one weekday's opening period, in local time.
type RegularHours struct {
	Weekday     *int   `json:"weekday"`
	PeriodBegin string `json:"period_begin"`
	PeriodEnd   string `json:"period_end"`
}

// ExceptionalPeriod is a UTC period of exceptional opening or closing.
type ExceptionalPeriod struct {
	PeriodBegin DateTime `json:"period_begin"`
	PeriodEnd   DateTime `json:"period_end"`
}

// StatusSchedule is a planned future status of an EVSE.
type StatusSchedule struct {
	PeriodBegin DateTime  `json:"period_begin"`
	PeriodEnd   *DateTime `json:"period_end,omitempty"`
	Status      string    `json:"status"`
}

// EnergyMix describes the energy supplied.
type EnergyMix struct {
	IsGreenEnergy     *bool                 `json:"is_green_energy"`
	EnergySources     []EnergySource        `json:"energy_sources,omitempty"`
	EnvironImpact     []EnvironmentalImpact `json:"environ_impact,omitempty"`
	SupplierName      string                `json:"supplier_name,omitempty"`
	EnergyProductName string                `json:"energy_product_name,omitempty"`
}

// EnergySource is one source's share, in percent.
type EnergySource struct {
	Source     string `json:"source"`
	Percentage Number `json:"percentage"`
}

// EnvironmentalImpact is an amount in g/kWh.
type EnvironmentalImpact struct {
	Category string `json:"category"`
	Amount   Number `json:"amount"`
}

// The Location enumerations (locations.md §8), complete for 2.2.1.
var (
	EVSEStatuses = []string{"AVAILABLE", "BLOCKED", "CHARGING", "INOPERATIVE", "OUTOFORDER", "PLANNED", "REMOVED", "RESERVED", "UNKNOWN"}
	Capabilities = []string{"CHARGING_PROFILE_CAPABLE", "CHARGING_PREFERENCES_CAPABLE", "CHIP_CARD_SUPPORT",
		"CONTACTLESS_CARD_SUPPORT", "CREDIT_CARD_PAYABLE", "DEBIT_CARD_PAYABLE", "PED_TERMINAL", "REMOTE_START_STOP_CAPABLE",
		"RESERVABLE", "RFID_READER", "START_SESSION_CONNECTOR_REQUIRED", "TOKEN_GROUP_CAPABLE", "UNLOCK_CAPABLE"}
	ConnectorFormats = []string{"SOCKET", "CABLE"}
	ConnectorTypes   = []string{"CHADEMO", "CHAOJI", "DOMESTIC_A", "DOMESTIC_B", "DOMESTIC_C", "DOMESTIC_D", "DOMESTIC_E",
		"DOMESTIC_F", "DOMESTIC_G", "DOMESTIC_H", "DOMESTIC_I", "DOMESTIC_J", "DOMESTIC_K", "DOMESTIC_L", "DOMESTIC_M",
		"DOMESTIC_N", "DOMESTIC_O", "GBT_AC", "GBT_DC", "IEC_60309_2_single_16", "IEC_60309_2_three_16",
		"IEC_60309_2_three_32", "IEC_60309_2_three_64", "IEC_62196_T1", "IEC_62196_T1_COMBO", "IEC_62196_T2",
		"IEC_62196_T2_COMBO", "IEC_62196_T3A", "IEC_62196_T3C", "NEMA_5_20", "NEMA_6_30", "NEMA_6_50", "NEMA_10_30",
		"NEMA_10_50", "NEMA_14_30", "NEMA_14_50", "PANTOGRAPH_BOTTOM_UP", "PANTOGRAPH_TOP_DOWN", "TESLA_R", "TESLA_S"}
	PowerTypes          = []string{"AC_1_PHASE", "AC_2_PHASE", "AC_2_PHASE_SPLIT", "AC_3_PHASE", "DC"}
	ParkingTypes        = []string{"ALONG_MOTORWAY", "PARKING_GARAGE", "PARKING_LOT", "ON_DRIVEWAY", "ON_STREET", "UNDERGROUND_GARAGE"}
	ParkingRestrictions = []string{"EV_ONLY", "PLUGGED", "DISABLED", "CUSTOMERS", "MOTORCYCLES"}
	Facilities          = []string{"HOTEL", "RESTAURANT", "CAFE", "MALL", "SUPERMARKET", "SPORT", "RECREATION_AREA", "NATURE",
		"MUSEUM", "BIKE_SHARING", "BUS_STOP", "TAXI_STAND", "TRAM_STOP", "METRO_STATION", "TRAIN_STATION", "AIRPORT",
		"PARKING_LOT", "CARPOOL_PARKING", "FUEL_STATION", "WIFI"}
	EnergySourceCategories        = []string{"NUCLEAR", "GENERAL_FOSSIL", "COAL", "GAS", "GENERAL_GREEN", "SOLAR", "WIND", "WATER"}
	EnvironmentalImpactCategories = []string{"NUCLEAR_WASTE", "CARBON_DIOXIDE"}
	// TokenTypes are the 2.2.1 TokenType values (PublishTokenType.type).
	TokenTypes = []string{"AD_HOC_USER", "APP_USER", "OTHER", "RFID"}
)

var (
	latitudeRE  = regexp.MustCompile(`^-?[0-9]{1,2}\.[0-9]{5,7}$`)
	longitudeRE = regexp.MustCompile(`^-?[0-9]{1,3}\.[0-9]{5,7}$`)
	hhmmRE      = regexp.MustCompile(`^([0-1][0-9]|2[0-3]):[0-5][0-9]$`)
)

// Check validates a Location.
func (l *Location) Check(c *Check) {
	c.CountryCode("country_code", l.CountryCode, true)
	c.PartyID("party_id", l.PartyID, true)
	c.CiString("id", l.ID, 36, true)
	c.Required("publish", l.Publish != nil)
	for i := range l.PublishAllowedTo {
		sub := c.Index("publish_allowed_to", i)
		l.PublishAllowedTo[i].check(sub)
		c.Merge(sub)
	}
	if len(l.PublishAllowedTo) > 0 && l.Publish != nil && *l.Publish {
		c.Fail("publish_allowed_to", "may only be set when publish is false")
	}
	c.String("name", l.Name, 255, false)
	c.String("address", l.Address, 255, true)
	c.String("city", l.City, 45, true)
	c.String("postal_code", l.PostalCode, 10, false)
	c.String("state", l.State, 45, false)
	checkPlace(c, l.Country, l.Coordinates)
	for i, r := range l.RelatedLocations {
		sub := c.Index("related_locations", i)
		sub.GeoLocation("", r.Latitude, r.Longitude)
		if r.Name != nil {
			n := sub.Sub("name")
			n.Language("language", r.Name.Language, true)
			n.String("text", r.Name.Text, 512, true)
			sub.Merge(n)
		}
		c.Merge(sub)
	}
	c.Enum("parking_type", l.ParkingType, ParkingTypes, false)
	uids := map[string]bool{}
	for i := range l.EVSEs {
		sub := c.Index("evses", i)
		l.EVSEs[i].Check(sub)
		if k := Key(l.EVSEs[i].UID); uids[k] && !sub.Failed() {
			sub.Fail("uid", "%q is used by two EVSEs of this location", l.EVSEs[i].UID)
		} else {
			uids[k] = true
		}
		c.Merge(sub)
	}
	c.DisplayTexts("directions", l.Directions)
	checkBusiness(c, "operator", l.Operator)
	checkBusiness(c, "suboperator", l.Suboperator)
	checkBusiness(c, "owner", l.Owner)
	c.Enums("facilities", l.Facilities, Facilities)
	c.String("time_zone", l.TimeZone, 255, true)
	if l.OpeningTimes != nil {
		sub := c.Sub("opening_times")
		l.OpeningTimes.check(sub)
		c.Merge(sub)
	}
	c.Images("images", l.Images)
	if l.EnergyMix != nil {
		sub := c.Sub("energy_mix")
		l.EnergyMix.Check(sub)
		c.Merge(sub)
	}
	c.DateTime("last_updated", l.LastUpdated, true)
}

func checkBusiness(c *Check, field string, b *BusinessDetails) {
	if b == nil {
		return
	}
	sub := c.Sub(field)
	b.check(sub)
	c.Merge(sub)
}

// Check validates an EVSE.
func (e *EVSE) Check(c *Check) {
	c.CiString("uid", e.UID, 36, true)
	c.CiString("evse_id", e.EVSEID, 48, false)
	c.Enum("status", e.Status, EVSEStatuses, true)
	for i, s := range e.StatusSchedule {
		sub := c.Index("status_schedule", i)
		sub.DateTime("period_begin", s.PeriodBegin, true)
		sub.Enum("status", s.Status, EVSEStatuses, true)
		if s.PeriodEnd != nil && !s.PeriodBegin.IsZero() && !s.PeriodEnd.After(s.PeriodBegin.Time) {
			sub.Fail("period_end", "must be after period_begin")
		}
		c.Merge(sub)
	}
	c.Enums("capabilities", e.Capabilities, Capabilities)
	if len(e.Connectors) == 0 {
		c.Fail("connectors", "must list at least one connector")
	}
	ids := map[string]bool{}
	for i := range e.Connectors {
		sub := c.Index("connectors", i)
		e.Connectors[i].Check(sub)
		if k := Key(e.Connectors[i].ID); ids[k] && !sub.Failed() {
			sub.Fail("id", "%q is used by two connectors of this EVSE", e.Connectors[i].ID)
		} else {
			ids[k] = true
		}
		c.Merge(sub)
	}
	c.String("floor_level", e.FloorLevel, 4, false)
	if e.Coordinates != nil {
		c.GeoLocation("coordinates", e.Coordinates.Latitude, e.Coordinates.Longitude)
	}
	c.String("physical_reference", e.PhysicalReference, 16, false)
	c.DisplayTexts("directions", e.Directions)
	c.Enums("parking_restrictions", e.ParkingRestrictions, ParkingRestrictions)
	c.Images("images", e.Images)
	c.DateTime("last_updated", e.LastUpdated, true)
}

// Check validates a Connector.
func (k *Connector) Check(c *Check) {
	c.CiString("id", k.ID, 36, true)
	c.Enum("standard", k.Standard, ConnectorTypes, true)
	c.Enum("format", k.Format, ConnectorFormats, true)
	c.Enum("power_type", k.PowerType, PowerTypes, true)
	if c.Required("max_voltage", k.MaxVoltage != nil) && *k.MaxVoltage < 0 {
		c.Fail("max_voltage", "must not be negative")
	}
	if c.Required("max_amperage", k.MaxAmperage != nil) && *k.MaxAmperage < 0 {
		c.Fail("max_amperage", "must not be negative")
	}
	if k.MaxElectricPower != nil && *k.MaxElectricPower < 0 {
		c.Fail("max_electric_power", "must not be negative")
	}
	for i, id := range k.TariffIDs {
		c.CiString("tariff_ids["+strconv.Itoa(i)+"]", id, 36, true)
	}
	c.URL("terms_and_conditions", k.TermsAndConditions, false)
	c.DateTime("last_updated", k.LastUpdated, true)
}

// PowerW returns the connector's maximum power in watts: max_electric_power
// when set, otherwise voltage × amperage × phases.
func (k *Connector) PowerW() int64 {
	if k.MaxElectricPower != nil {
		return *k.MaxElectricPower
	}
	if k.MaxVoltage == nil || k.MaxAmperage == nil {
		return 0
	}
	phases := int64(1)
	switch k.PowerType {
	case "AC_3_PHASE":
		phases = 3
	case "AC_2_PHASE", "AC_2_PHASE_SPLIT":
		phases = 2
	}
	return *k.MaxVoltage * *k.MaxAmperage * phases
}

func (p *PublishTokenType) check(c *Check) {
	c.CiString("uid", p.UID, 36, false)
	c.Enum("type", p.Type, TokenTypes, false)
	c.String("visual_number", p.VisualNumber, 64, false)
	c.String("issuer", p.Issuer, 64, false)
	c.CiString("group_id", p.GroupID, 36, false)
	switch {
	case p.UID == "" && p.VisualNumber == "" && p.GroupID == "":
		c.Fail("", "needs at least one of uid, visual_number or group_id")
	case p.UID != "" && p.Type == "":
		c.Fail("type", "is required when uid is set")
	case p.VisualNumber != "" && p.Issuer == "":
		c.Fail("issuer", "is required when visual_number is set")
	}
}

func (h *Hours) check(c *Check) {
	c.Required("twentyfourseven", h.TwentyFourSeven != nil)
	if h.TwentyFourSeven != nil && !*h.TwentyFourSeven && len(h.RegularHours) == 0 {
		c.Fail("regular_hours", "must list at least one period when twentyfourseven is false")
	}
	if h.TwentyFourSeven != nil && *h.TwentyFourSeven && len(h.RegularHours) > 0 {
		c.Fail("regular_hours", "must be empty when twentyfourseven is true")
	}
	for i, r := range h.RegularHours {
		sub := c.Index("regular_hours", i)
		if sub.Required("weekday", r.Weekday != nil) && (*r.Weekday < 1 || *r.Weekday > 7) {
			sub.Fail("weekday", "must be 1 (Monday) to 7 (Sunday)")
		}
		sub.HHMM("period_begin", r.PeriodBegin, true)
		sub.HHMM("period_end", r.PeriodEnd, true)
		if !sub.Failed() && r.PeriodEnd <= r.PeriodBegin && r.PeriodEnd != "00:00" {
			sub.Fail("period_end", "must be later than period_begin")
		}
		c.Merge(sub)
	}
	for _, list := range []struct {
		name string
		v    []ExceptionalPeriod
	}{{"exceptional_openings", h.ExceptionalOpenings}, {"exceptional_closings", h.ExceptionalClosings}} {
		for i, p := range list.v {
			sub := c.Index(list.name, i)
			sub.DateTime("period_begin", p.PeriodBegin, true)
			sub.DateTime("period_end", p.PeriodEnd, true)
			if !sub.Failed() && !p.PeriodEnd.After(p.PeriodBegin.Time) {
				sub.Fail("period_end", "must be after period_begin")
			}
			c.Merge(sub)
		}
	}
}

// Check validates an EnergyMix.
func (m *EnergyMix) Check(c *Check) {
	c.Required("is_green_energy", m.IsGreenEnergy != nil)
	for i, s := range m.EnergySources {
		sub := c.Index("energy_sources", i)
		sub.Enum("source", s.Source, EnergySourceCategories, true)
		if sub.Required("percentage", s.Percentage.Valid()) &&
			(s.Percentage.IsNegative() || s.Percentage.Cmp(NumberFromInt(100)) > 0) {
			sub.Fail("percentage", "must be between 0 and 100")
		}
		c.Merge(sub)
	}
	for i, e := range m.EnvironImpact {
		sub := c.Index("environ_impact", i)
		sub.Enum("category", e.Category, EnvironmentalImpactCategories, true)
		if sub.Required("amount", e.Amount.Valid()) && e.Amount.IsNegative() {
			sub.Fail("amount", "must not be negative")
		}
		c.Merge(sub)
	}
	c.String("supplier_name", m.SupplierName, 64, false)
	c.String("energy_product_name", m.EnergyProductName, 64, false)
}

// GeoLocation checks a latitude/longitude pair of strings (a field "" checks
// them on the current object).
func (c *Check) GeoLocation(field, lat, lon string) {
	sub := c.Sub(field)
	if field == "" {
		sub = c
	}
	if sub.Required("latitude", lat != "") && !latitudeRE.MatchString(lat) {
		sub.Fail("latitude", "%q must match -?[0-9]{1,2}\\.[0-9]{5,7}", core.Truncate(lat, 20))
	}
	if sub.Required("longitude", lon != "") && !longitudeRE.MatchString(lon) {
		sub.Fail("longitude", "%q must match -?[0-9]{1,3}\\.[0-9]{5,7}", core.Truncate(lon, 20))
	}
	if !sub.Failed() {
		if f, _ := strconv.ParseFloat(lat, 64); f < -90 || f > 90 {
			sub.Fail("latitude", "must be between -90 and 90")
		} else if f, _ := strconv.ParseFloat(lon, 64); f < -180 || f > 180 {
			sub.Fail("longitude", "must be between -180 and 180")
		}
	}
	if sub != c {
		c.Merge(sub)
	}
}

// HHMM checks a local time of day "HH:MM".
func (c *Check) HHMM(field, v string, required bool) {
	if !c.given(field, v, required) {
		return
	}
	if !hhmmRE.MatchString(v) {
		c.Fail(field, "%q must be a time of day HH:MM", core.Truncate(v, 20))
	}
}

// Enums checks a list of enum values.
func (c *Check) Enums(field string, vs []string, allowed []string) {
	for i, v := range vs {
		c.Enum(field+"["+strconv.Itoa(i)+"]", v, allowed, true)
	}
}

// Images checks a list of Image.
func (c *Check) Images(field string, imgs []Image) {
	for i := range imgs {
		sub := c.Index(field, i)
		imgs[i].check(sub)
		c.Merge(sub)
	}
}

func (img *Image) check(c *Check) {
	c.URL("url", img.URL, true)
	c.URL("thumbnail", img.Thumbnail, false)
	c.Enum("category", img.Category, ImageCategories, true)
	c.CiString("type", img.Type, 4, true)
	if img.Width != nil && (*img.Width < 0 || *img.Width > 99999) {
		c.Fail("width", "must be a non-negative integer of at most 5 digits")
	}
	if img.Height != nil && (*img.Height < 0 || *img.Height > 99999) {
		c.Fail("height", "must be a non-negative integer of at most 5 digits")
	}
}

// EVSE returns the EVSE with uid (CiString match) and its index.
func (l *Location) EVSE(uid string) (*EVSE, int) {
	i := slices.IndexFunc(l.EVSEs, func(e EVSE) bool { return EqualCI(e.UID, uid) })
	if i < 0 {
		return nil, -1
	}
	return &l.EVSEs[i], i
}

// Connector returns the connector with id (CiString match) and its index.
func (e *EVSE) Connector(id string) (*Connector, int) {
	i := slices.IndexFunc(e.Connectors, func(k Connector) bool { return EqualCI(k.ID, id) })
	if i < 0 {
		return nil, -1
	}
	return &e.Connectors[i], i
}

// checkPlace checks where a Location and a CdrLocation both say they are:
// an ISO 3166-1 alpha-3 country and the coordinates.
func checkPlace(c *Check, country string, coords *GeoLocation) {
	c.String("country", country, 3, true)
	if !c.Failed() && (len(country) != 3 || !isLetters(country)) {
		c.Fail("country", "must be a three-letter ISO 3166-1 alpha-3 code")
	}
	if c.Required("coordinates", coords != nil) {
		c.GeoLocation("coordinates", coords.Latitude, coords.Longitude)
	}
}
