package ocpi

import (
	"regexp"

	"github.com/ocpihub/ocpihub/internal/ocpi/core"
)

// Tariff is the 2.2.1 Tariff (tariffs.md §2).
type Tariff struct {
	CountryCode   string          `json:"country_code"`
	PartyID       string          `json:"party_id"`
	ID            string          `json:"id"`
	Currency      string          `json:"currency"`
	Type          string          `json:"type,omitempty"`
	TariffAltText []DisplayText   `json:"tariff_alt_text,omitempty"`
	TariffAltURL  string          `json:"tariff_alt_url,omitempty"`
	MinPrice      *Price          `json:"min_price,omitempty"`
	MaxPrice      *Price          `json:"max_price,omitempty"`
	Elements      []TariffElement `json:"elements"`
	StartDateTime *DateTime       `json:"start_date_time,omitempty"`
	EndDateTime   *DateTime       `json:"end_date_time,omitempty"`
	EnergyMix     *EnergyMix      `json:"energy_mix,omitempty"`
	// PreauthorizeAmount is what a Payment Terminal Provider should
	// pre-authorise for a card session (2.3.0 Payments edition, tariffs.md
	// §2): kept and served when a CPO sends it.
	PreauthorizeAmount Number   `json:"preauthorize_amount,omitzero"`
	LastUpdated        DateTime `json:"last_updated"`
}

// TariffElement is a set of price components sharing restrictions.
type TariffElement struct {
	PriceComponents []PriceComponent    `json:"price_components"`
	Restrictions    *TariffRestrictions `json:"restrictions,omitempty"`
}

// PriceComponent prices one dimension.
type PriceComponent struct {
	Type     string `json:"type"`
	Price    Number `json:"price"`
	VAT      Number `json:"vat,omitzero"`
	StepSize *int64 `json:"step_size"`
}

// TariffRestrictions limit when an element applies.
type TariffRestrictions struct {
	StartTime   string   `json:"start_time,omitempty"`
	EndTime     string   `json:"end_time,omitempty"`
	StartDate   string   `json:"start_date,omitempty"`
	EndDate     string   `json:"end_date,omitempty"`
	MinKWh      Number   `json:"min_kwh,omitzero"`
	MaxKWh      Number   `json:"max_kwh,omitzero"`
	MinCurrent  Number   `json:"min_current,omitzero"`
	MaxCurrent  Number   `json:"max_current,omitzero"`
	MinPower    Number   `json:"min_power,omitzero"`
	MaxPower    Number   `json:"max_power,omitzero"`
	MinDuration *int64   `json:"min_duration,omitempty"`
	MaxDuration *int64   `json:"max_duration,omitempty"`
	DayOfWeek   []string `json:"day_of_week,omitempty"`
	Reservation string   `json:"reservation,omitempty"`
}

// The Tariff enumerations (tariffs.md §7).
var (
	TariffDimensionTypes        = []string{"ENERGY", "FLAT", "PARKING_TIME", "TIME"}
	TariffTypes                 = []string{"AD_HOC_PAYMENT", "PROFILE_CHEAP", "PROFILE_FAST", "PROFILE_GREEN", "REGULAR"}
	DaysOfWeek                  = []string{"MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"}
	ReservationRestrictionTypes = []string{"RESERVATION", "RESERVATION_EXPIRES"}
)

var dateRE = regexp.MustCompile(`^([12][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`)

// Check validates a Tariff.
func (t *Tariff) Check(c *Check) {
	c.CountryCode("country_code", t.CountryCode, true)
	c.PartyID("party_id", t.PartyID, true)
	c.CiString("id", t.ID, 36, true)
	c.Currency("currency", t.Currency, true)
	c.Enum("type", t.Type, TariffTypes, false)
	c.DisplayTexts("tariff_alt_text", t.TariffAltText)
	c.URL("tariff_alt_url", t.TariffAltURL, false)
	c.Price("min_price", t.MinPrice, false)
	c.Price("max_price", t.MaxPrice, false)
	if t.MinPrice != nil && t.MaxPrice != nil && !c.Failed() && t.MinPrice.ExclVAT.Cmp(t.MaxPrice.ExclVAT) > 0 {
		c.Fail("max_price", "must not be lower than min_price")
	}
	if len(t.Elements) == 0 {
		c.Fail("elements", "must list at least one element")
	}
	for i := range t.Elements {
		sub := c.Index("elements", i)
		t.Elements[i].check(sub)
		c.Merge(sub)
	}
	if t.StartDateTime != nil && t.EndDateTime != nil && !t.EndDateTime.After(t.StartDateTime.Time) {
		c.Fail("end_date_time", "must be after start_date_time")
	}
	if t.EnergyMix != nil {
		sub := c.Sub("energy_mix")
		t.EnergyMix.Check(sub)
		c.Merge(sub)
	}
	if t.PreauthorizeAmount.IsNegative() {
		c.Fail("preauthorize_amount", "must not be negative")
	}
	c.DateTime("last_updated", t.LastUpdated, true)
}

func (e *TariffElement) check(c *Check) {
	if len(e.PriceComponents) == 0 {
		c.Fail("price_components", "must list at least one price component")
	}
	for i, p := range e.PriceComponents {
		sub := c.Index("price_components", i)
		sub.Enum("type", p.Type, TariffDimensionTypes, true)
		if sub.Required("price", p.Price.Valid()) && p.Price.IsNegative() {
			sub.Fail("price", "must not be negative")
		}
		if p.VAT.IsNegative() {
			sub.Fail("vat", "must not be negative")
		}
		if sub.Required("step_size", p.StepSize != nil) && *p.StepSize < 0 {
			sub.Fail("step_size", "must not be negative")
		}
		if e.Restrictions != nil && e.Restrictions.Reservation != "" && p.Type != "FLAT" && p.Type != "TIME" && !sub.Failed() {
			sub.Fail("type", "an element with a reservation restriction may only price FLAT and TIME")
		}
		c.Merge(sub)
	}
	if e.Restrictions != nil {
		sub := c.Sub("restrictions")
		e.Restrictions.check(sub)
		c.Merge(sub)
	}
}

func (r *TariffRestrictions) check(c *Check) {
	c.HHMM("start_time", r.StartTime, false)
	c.HHMM("end_time", r.EndTime, false)
	for _, d := range [][2]string{{"start_date", r.StartDate}, {"end_date", r.EndDate}} {
		if d[1] != "" && !dateRE.MatchString(d[1]) {
			c.Fail(d[0], "%q must be a date YYYY-MM-DD", core.Truncate(d[1], 20))
		}
	}
	for _, n := range []struct {
		name string
		v    Number
	}{{"min_kwh", r.MinKWh}, {"max_kwh", r.MaxKWh}, {"min_current", r.MinCurrent}, {"max_current", r.MaxCurrent},
		{"min_power", r.MinPower}, {"max_power", r.MaxPower}} {
		if n.v.IsNegative() {
			c.Fail(n.name, "must not be negative")
		}
	}
	if r.MinDuration != nil && *r.MinDuration < 0 {
		c.Fail("min_duration", "must not be negative")
	}
	if r.MaxDuration != nil && *r.MaxDuration < 0 {
		c.Fail("max_duration", "must not be negative")
	}
	c.Enums("day_of_week", r.DayOfWeek, DaysOfWeek)
	c.Enum("reservation", r.Reservation, ReservationRestrictionTypes, false)
}
