package v211

import (
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Tariff is the 2.1.1 Tariff (legacy.md §7): no owner, type, price bounds or
// validity period.
type Tariff struct {
	ID            string             `json:"id"`
	Currency      string             `json:"currency"`
	TariffAltText []ocpi.DisplayText `json:"tariff_alt_text,omitempty"`
	TariffAltURL  string             `json:"tariff_alt_url,omitempty"`
	Elements      []TariffElement    `json:"elements"`
	EnergyMix     *EnergyMix         `json:"energy_mix,omitempty"`
	LastUpdated   DateTime           `json:"last_updated"`
}

// TariffElement is a set of price components sharing restrictions.
type TariffElement struct {
	PriceComponents []PriceComponent    `json:"price_components"`
	Restrictions    *TariffRestrictions `json:"restrictions,omitempty"`
}

// PriceComponent prices one dimension (no VAT in 2.1.1).
type PriceComponent struct {
	Type     string      `json:"type"`
	Price    ocpi.Number `json:"price"`
	StepSize *int64      `json:"step_size"`
}

// TariffRestrictions limit when an element applies (no current or
// reservation restrictions in 2.1.1).
type TariffRestrictions struct {
	StartTime   string      `json:"start_time,omitempty"`
	EndTime     string      `json:"end_time,omitempty"`
	StartDate   string      `json:"start_date,omitempty"`
	EndDate     string      `json:"end_date,omitempty"`
	MinKWh      ocpi.Number `json:"min_kwh,omitzero"`
	MaxKWh      ocpi.Number `json:"max_kwh,omitzero"`
	MinPower    ocpi.Number `json:"min_power,omitzero"`
	MaxPower    ocpi.Number `json:"max_power,omitzero"`
	MinDuration *int64      `json:"min_duration,omitempty"`
	MaxDuration *int64      `json:"max_duration,omitempty"`
	DayOfWeek   []string    `json:"day_of_week,omitempty"`
}

// FromTariff converts a 2.2.1 Tariff to 2.1.1. An element restricted by
// current or reservation cannot be expressed: without its restriction it
// would price every session, so it is left out, not loosened. ok is false
// when no element is left.
func FromTariff(t *ocpi.Tariff) (Tariff, Loss, bool) {
	var loss Loss
	out := Tariff{ID: t.ID, Currency: t.Currency, TariffAltText: t.TariffAltText, TariffAltURL: t.TariffAltURL,
		LastUpdated: NewDateTime(t.LastUpdated)}
	if t.Type != "" {
		loss.Add("type", "not in 2.1.1")
	}
	if t.MinPrice != nil {
		loss.Add("min_price", "not in 2.1.1")
	}
	if t.MaxPrice != nil {
		loss.Add("max_price", "not in 2.1.1")
	}
	if t.StartDateTime != nil || t.EndDateTime != nil {
		loss.Add("start_date_time", "2.1.1 tariffs have no validity period; sent as always valid")
	}
	if t.EnergyMix != nil {
		out.EnergyMix = fromEnergyMix(t.EnergyMix)
	}
	out.Elements = appendFrom(out.Elements, "elements", t.Elements, &loss, fromElement)
	if len(out.Elements) == 0 {
		loss.Add("elements", "tariff %s left out: none of its elements exists in 2.1.1", t.ID)
		return out, loss, false
	}
	return out, loss, true
}

func fromElement(e *ocpi.TariffElement) (TariffElement, Loss, bool) {
	var loss Loss
	var out TariffElement
	for i, p := range e.PriceComponents {
		if p.VAT.Valid() {
			loss.Add(index("price_components", i)+".vat", "not in 2.1.1")
		}
		out.PriceComponents = append(out.PriceComponents, PriceComponent{Type: p.Type, Price: p.Price, StepSize: p.StepSize})
	}
	if r := e.Restrictions; r != nil {
		if r.MinCurrent.Valid() || r.MaxCurrent.Valid() || r.Reservation != "" {
			loss.Add("restrictions", "element left out: its current or reservation restriction is not in 2.1.1")
			return out, loss, false
		}
		out.Restrictions = &TariffRestrictions{StartTime: r.StartTime, EndTime: r.EndTime, StartDate: r.StartDate, EndDate: r.EndDate,
			MinKWh: r.MinKWh, MaxKWh: r.MaxKWh, MinPower: r.MinPower, MaxPower: r.MaxPower, MinDuration: r.MinDuration,
			MaxDuration: r.MaxDuration, DayOfWeek: r.DayOfWeek}
	}
	return out, loss, true
}

// To221 converts a 2.1.1 Tariff of the party cc/pid to 2.2.1.
func (t *Tariff) To221(cc, pid string) ocpi.Tariff {
	out := ocpi.Tariff{CountryCode: cc, PartyID: pid, ID: t.ID, Currency: t.Currency, TariffAltText: t.TariffAltText,
		TariffAltURL: t.TariffAltURL, LastUpdated: t.LastUpdated.Time()}
	if t.EnergyMix != nil {
		out.EnergyMix = t.EnergyMix.to221()
	}
	out.Elements = []ocpi.TariffElement{}
	for _, e := range t.Elements {
		el := ocpi.TariffElement{}
		for _, p := range e.PriceComponents {
			el.PriceComponents = append(el.PriceComponents, ocpi.PriceComponent{Type: p.Type, Price: p.Price, StepSize: p.StepSize})
		}
		if r := e.Restrictions; r != nil {
			el.Restrictions = &ocpi.TariffRestrictions{StartTime: r.StartTime, EndTime: r.EndTime, StartDate: r.StartDate,
				EndDate: r.EndDate, MinKWh: r.MinKWh, MaxKWh: r.MaxKWh, MinPower: r.MinPower, MaxPower: r.MaxPower,
				MinDuration: r.MinDuration, MaxDuration: r.MaxDuration, DayOfWeek: r.DayOfWeek}
		}
		out.Elements = append(out.Elements, el)
	}
	return out
}

// Check validates what is particular to a 2.1.1 Tariff; the 2.2.1 rules run
// on the converted object.
func (t *Tariff) Check(c *ocpi.Check) {
	c.String("id", t.ID, 36, true)
	c.Currency("currency", t.Currency, true)
	if len(t.Elements) == 0 {
		c.Fail("elements", "must list at least one element")
	}
	c.DateTime("last_updated", t.LastUpdated.Time(), true)
}
