// Package charger is the connector a QR sticker names, as the driver pages show it: its location and status,
// its tariff in lines, and what charging there costs (the estimates before paying).
package charger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/tariff"
)

// ConnectorRef names a connector of the directory.
type ConnectorRef struct {
	CountryCode string `json:"country_code"`
	PartyID     string `json:"party_id"`
	LocationID  string `json:"location_id"`
	EVSEUID     string `json:"evse_uid"`
	ConnectorID string `json:"connector_id"`
}

func (r ConnectorRef) String() string {
	return ocpi.Key(r.CountryCode) + "*" + ocpi.Key(r.PartyID) + " " + r.LocationID + "/" + r.EVSEUID + "/" + r.ConnectorID
}

// Connector is a connector as the landing page and the sticker show it; ids
// are spelled as the CPO spells them.
type Connector struct {
	ConnectorRef
	LocationName string
	Address      string
	City         string
	EVSEID       string
	// Status is the EVSE's status (AVAILABLE, CHARGING, …).
	Status       string
	Capabilities []string
	Standard     string
	PowerType    string
	MaxPowerW    int64
	// Operator is the CPO's business name when the location gives it.
	Operator string
	// Tariff is the first tariff of the connector, nil when it has none.
	Tariff *ocpi.Tariff
	// TimeZone is the location's (IANA name; "" when it gives none).
	TimeZone string
}

// Available reports whether the connector can take a payment now.
func (c *Connector) Available() bool { return c.Status == "AVAILABLE" }

// Label names the connector for people: the EVSE id (or uid) and the
// connector id.
func (c *Connector) Label() string {
	evse := c.EVSEID
	if evse == "" {
		evse = c.EVSEUID
	}
	return evse + " · connector " + c.ConnectorID
}

// PowerKW is the connector's maximum power in kW, for display.
func (c *Connector) PowerKW() string {
	if c.MaxPowerW <= 0 {
		return ""
	}
	return decimal.New(c.MaxPowerW, -3).Round(1).String() + " kW"
}

// TariffLines describes the tariff for people, one line per price
// component of its first element ("₹18.50 per kWh + 18% tax"); the CPO's
// alternative text in English comes first when it has one.
func (c *Connector) TariffLines() []string {
	return TariffSummary(c.Tariff)
}

// TariffSummary describes a tariff in a few lines.
func TariffSummary(t *ocpi.Tariff) []string {
	if t == nil {
		return nil
	}
	var out []string
	for _, d := range t.TariffAltText {
		if strings.EqualFold(d.Language, "en") && d.Text != "" {
			out = append(out, d.Text)
		}
	}
	if len(t.Elements) == 0 {
		return out
	}
	for _, pc := range t.Elements[0].PriceComponents {
		line := Money(t.Currency, pc.Price.Decimal())
		switch pc.Type {
		case "ENERGY":
			line += " per kWh"
		case "TIME":
			line += " per hour of charging"
		case "PARKING_TIME":
			line += " per hour of parking"
		case "FLAT":
			line += " per session"
		}
		if pc.VAT.Valid() && !pc.VAT.Decimal().IsZero() {
			line += " + " + pc.VAT.Decimal().String() + "% tax"
		}
		out = append(out, line)
	}
	if len(t.Elements) > 1 || t.Elements[0].Restrictions != nil {
		out = append(out, "Prices vary with time of day or duration.")
	}
	return out
}

// Money writes a decimal price: ₹ with Indian grouping for INR, two
// decimals unless it has more.
func Money(currency string, d decimal.Decimal) string {
	if d.Equal(d.Round(2)) {
		if p := d.Shift(2); p.IsInteger() {
			return pg.Amount{Paise: p.IntPart(), Currency: currency}.Display()
		}
	}
	prefix := currency + " "
	if currency == pg.CurrencyINR {
		prefix = "₹"
	}
	return prefix + d.String()
}

// LocationDirectory is the Directory over the hub's location and tariff
// services.
type LocationDirectory struct {
	Locations *location.Service
	Tariffs   *tariff.Service
}

// Connector implements Directory.
func (d LocationDirectory) Connector(ctx context.Context, ref ConnectorRef) (*Connector, error) {
	raw, err := d.Locations.Get(ctx, location.Ref{CountryCode: ref.CountryCode, PartyID: ref.PartyID, LocationID: ref.LocationID})
	var oe *ocpi.Error
	if errors.As(err, &oe) && oe.Code == ocpi.EUNKNOWNLOCATION {
		return nil, &ocpi.Error{Code: ocpi.EUNKNOWNLOCATION, Field: "location_id", Issue: "is not in the directory",
			Message: "unknown location " + ref.LocationID + " of " + ocpi.Key(ref.CountryCode) + "/" + ocpi.Key(ref.PartyID)}
	}
	if err != nil {
		return nil, err
	}
	var loc ocpi.Location
	if err := json.Unmarshal(raw, &loc); err != nil {
		return nil, fmt.Errorf("stored location %s: %w", ref.LocationID, err)
	}
	unknown := func(field, what string) error {
		return &ocpi.Error{Code: ocpi.EUNKNOWNLOCATION, Field: field, Issue: "is not in the directory",
			Message: "unknown " + what + " of location " + ref.LocationID + " of " + ocpi.Key(ref.CountryCode) + "/" + ocpi.Key(ref.PartyID)}
	}
	for _, e := range loc.EVSEs {
		if !strings.EqualFold(e.UID, ref.EVSEUID) {
			continue
		}
		if e.Status == "REMOVED" {
			return nil, unknown("evse_uid", "EVSE "+ref.EVSEUID+" (removed)")
		}
		for _, k := range e.Connectors {
			if !strings.EqualFold(k.ID, ref.ConnectorID) {
				continue
			}
			c := &Connector{
				ConnectorRef: ConnectorRef{CountryCode: loc.CountryCode, PartyID: loc.PartyID, LocationID: loc.ID, EVSEUID: e.UID, ConnectorID: k.ID},
				LocationName: loc.Name, Address: loc.Address, City: loc.City, EVSEID: e.EVSEID, Status: e.Status,
				Capabilities: e.Capabilities, Standard: k.Standard, PowerType: k.PowerType, MaxPowerW: k.PowerW(),
				TimeZone: loc.TimeZone,
			}
			if loc.Operator != nil {
				c.Operator = loc.Operator.Name
			}
			if len(k.TariffIDs) > 0 && d.Tariffs != nil {
				if traw, err := d.Tariffs.Get(ctx, tariff.Ref{CountryCode: loc.CountryCode, PartyID: loc.PartyID, ID: k.TariffIDs[0]}); err == nil {
					var t ocpi.Tariff
					if json.Unmarshal(traw, &t) == nil {
						c.Tariff = &t
					}
				} else if !ocpi.IsNotFound(err) {
					return nil, err
				}
			}
			return c, nil
		}
		return nil, unknown("connector_id", "connector "+ref.ConnectorID+" of EVSE "+ref.EVSEUID)
	}
	return nil, unknown("evse_uid", "EVSE "+ref.EVSEUID)
}

// Owner implements Directory.
func (d LocationDirectory) Owner(ctx context.Context, locationID string) (string, string, error) {
	return d.Locations.Lookup(ctx, locationID)
}
