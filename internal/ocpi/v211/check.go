package v211

import (
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Check validates what is particular to a 2.1.1 Location: the fields 2.2.1
// renamed (type, voltage, amperage, tariff_id), the ones it made optional
// (postal_code) or required (time_zone, unless the country has one time
// zone), and the 2.1.1 enumerations. The rest is the 2.2.1 rules, which run
// on the converted object and name the same fields.
func (l *Location) Check(c *ocpi.Check) {
	c.String("id", l.ID, 39, true)
	c.Enum("type", l.Type, LocationTypes, true)
	c.String("address", l.Address, maxAddress, true)
	c.String("city", l.City, 45, true)
	c.String("postal_code", l.PostalCode, 10, true)
	c.String("country", l.Country, 3, true)
	c.Required("coordinates", l.Coordinates != nil)
	for i := range l.EVSEs {
		sub := c.Index("evses", i)
		l.EVSEs[i].Check(sub)
		c.Merge(sub)
	}
	c.Enums("facilities", l.Facilities, Facilities)
	if l.TimeZone == "" && TimeZoneOf(l.Country) == "" && !c.Failed() {
		c.Fail("time_zone", "is required here: the hub cannot tell the time zone of a location in %q (several time zones or an unknown country)", l.Country)
	}
	c.DateTime("last_updated", l.LastUpdated.Time(), true)
}

// Check validates what is particular to a 2.1.1 EVSE.
func (e *EVSE) Check(c *ocpi.Check) {
	c.String("uid", e.UID, maxUID, true)
	c.Enum("status", e.Status, ocpi.EVSEStatuses, true)
	c.Enums("capabilities", e.Capabilities, Capabilities)
	if len(e.Connectors) == 0 {
		c.Fail("connectors", "must list at least one connector")
	}
	for i := range e.Connectors {
		sub := c.Index("connectors", i)
		e.Connectors[i].Check(sub)
		c.Merge(sub)
	}
	c.DateTime("last_updated", e.LastUpdated.Time(), true)
}

// Check validates what is particular to a 2.1.1 Connector.
func (k *Connector) Check(c *ocpi.Check) {
	c.String("id", k.ID, 36, true)
	c.Enum("standard", k.Standard, ConnectorTypes, true)
	c.Enum("format", k.Format, ocpi.ConnectorFormats, true)
	c.Enum("power_type", k.PowerType, PowerTypes, true)
	if c.Required("voltage", k.Voltage != nil) && *k.Voltage < 0 {
		c.Fail("voltage", "must not be negative")
	}
	if c.Required("amperage", k.Amperage != nil) && *k.Amperage < 0 {
		c.Fail("amperage", "must not be negative")
	}
	c.String("tariff_id", k.TariffID, 36, false)
	c.DateTime("last_updated", k.LastUpdated.Time(), true)
}

// timeZones are the IANA zones of countries (ISO 3166-1 alpha-3) that have
// exactly one, for locations whose 2.1.1 time_zone is absent.
var timeZones = map[string]string{
	"ARE": "Asia/Dubai", "AUT": "Europe/Vienna", "BEL": "Europe/Brussels", "BGD": "Asia/Dhaka", "BGR": "Europe/Sofia",
	"CHE": "Europe/Zurich", "CZE": "Europe/Prague", "DEU": "Europe/Berlin", "DNK": "Europe/Copenhagen", "EST": "Europe/Tallinn",
	"FIN": "Europe/Helsinki", "FRA": "Europe/Paris", "GBR": "Europe/London", "GRC": "Europe/Athens", "HRV": "Europe/Zagreb",
	"HUN": "Europe/Budapest", "IND": "Asia/Kolkata", "IRL": "Europe/Dublin", "ISL": "Atlantic/Reykjavik", "ISR": "Asia/Jerusalem",
	"ITA": "Europe/Rome", "JPN": "Asia/Tokyo", "KOR": "Asia/Seoul", "LKA": "Asia/Colombo", "LTU": "Europe/Vilnius",
	"LUX": "Europe/Luxembourg", "LVA": "Europe/Riga", "NLD": "Europe/Amsterdam", "NOR": "Europe/Oslo", "NPL": "Asia/Kathmandu",
	"POL": "Europe/Warsaw", "ROU": "Europe/Bucharest", "SGP": "Asia/Singapore", "SVK": "Europe/Bratislava",
	"SVN": "Europe/Ljubljana", "SWE": "Europe/Stockholm", "ZAF": "Africa/Johannesburg",
}

// TimeZoneOf returns the time zone of a country that has only one ("" for
// the others and for unknown codes).
func TimeZoneOf(country string) string { return timeZones[ocpi.Key(country)] }
