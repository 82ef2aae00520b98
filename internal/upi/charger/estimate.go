package charger

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/tariff"
)

// Estimate is what an amount buys at a connector now, by the hub's cost
// engine (internal/tariff) applied to the connector's tariff.
type Estimate struct {
	Amount string
	// KWh is the energy the amount pays for, charging from now at the
	// connector's maximum power ("" when the tariff does not price energy
	// or time, so any amount buys a whole session).
	KWh string
}

// estimateBudget bounds the engine runs of one estimate (a bisection).
const estimateBudget = 24

// Estimates says, for each amount, how much energy it buys at this
// connector if charging started at now, incl. VAT: the largest energy whose
// price the engine puts within the amount, to 0.1 kWh. The session is
// assumed to charge at the connector's maximum power (7.4 kW when unknown)
// without parking. Nil when the connector has no tariff the engine can
// apply.
func (c *Connector) Estimates(amounts []pg.Amount, now time.Time) []Estimate {
	if c.Tariff == nil || tariff.CheckPricing(c.Tariff) != nil {
		return nil
	}
	tz := tariff.Zone(c.TimeZone)
	kw := decimal.NewFromInt(c.MaxPowerW).Div(decimal.NewFromInt(1000))
	if c.MaxPowerW <= 0 {
		kw = decimal.RequireFromString("7.4")
	}
	price := func(kwh decimal.Decimal) (decimal.Decimal, bool) {
		hours := kwh.DivRound(kw, 6)
		end := now.Add(time.Duration(hours.Mul(decimal.NewFromInt(int64(time.Hour))).IntPart()))
		cost, err := tariff.Price(tariff.Input{Tariffs: []ocpi.Tariff{*c.Tariff}, Start: now, End: end, TimeZone: tz,
			Periods: []ocpi.ChargingPeriod{{StartDateTime: ocpi.NewDateTime(now), Dimensions: []ocpi.CdrDimension{
				{Type: "ENERGY", Volume: ocpi.NumberFromDecimal(kwh)}, {Type: "TIME", Volume: ocpi.NumberFromDecimal(hours)},
				{Type: "POWER", Volume: ocpi.NumberFromDecimal(kw)}}}}})
		if err != nil {
			return decimal.Zero, false
		}
		return cost.TotalCost.InclVAT.Decimal(), true
	}
	// The price of a huge session tells whether energy or time is priced
	// at all.
	ceiling := decimal.NewFromInt(500)
	top, ok := price(ceiling)
	if !ok {
		return nil
	}
	base, _ := price(decimal.Zero)
	var out []Estimate
	for _, a := range amounts {
		e := Estimate{Amount: a.Display()}
		budget := decimal.New(a.Paise, -2)
		if top.LessThanOrEqual(budget) || top.Equal(base) {
			out = append(out, e)
			continue
		}
		lo, hi := decimal.Zero, ceiling
		for i := 0; i < estimateBudget && hi.Sub(lo).GreaterThan(decimal.RequireFromString("0.001")); i++ {
			mid := lo.Add(hi).Div(decimal.NewFromInt(2))
			if p, _ := price(mid); p.LessThanOrEqual(budget) {
				lo = mid
			} else {
				hi = mid
			}
		}
		e.KWh = lo.RoundFloor(1).String()
		out = append(out, e)
	}
	return out
}

// parkingHorizon is how far into a session ParkingNote looks for parking
// that costs something.
const parkingHorizon = 12

// ParkingNote says what parking at this connector costs, by the engine:
// the price (incl. VAT) of one hour of parking that starts when the session
// has lasted 0, 1, … 12 hours, charging until then, from the first of those
// hours at which parking costs anything — "Parking after charging costs
// ₹60.00 per hour", or "Parking costs ₹60.00 per hour once the session has
// lasted 2 h" for a tariff whose parking element applies from a duration.
// "" when the tariff does not price parking within 12 hours or the engine
// cannot apply it.
func (c *Connector) ParkingNote(now time.Time) string {
	if c.Tariff == nil || tariff.CheckPricing(c.Tariff) != nil || !pricesDimension(c.Tariff, "PARKING_TIME") {
		return ""
	}
	tz := tariff.Zone(c.TimeZone)
	cost := func(periods []ocpi.ChargingPeriod, end time.Time) (decimal.Decimal, bool) {
		if len(periods) == 0 {
			return decimal.Zero, true
		}
		p, err := tariff.Price(tariff.Input{Tariffs: []ocpi.Tariff{*c.Tariff}, Start: now, End: end, TimeZone: tz, Periods: periods})
		if err != nil {
			return decimal.Zero, false
		}
		return p.TotalCost.InclVAT.Decimal(), true
	}
	for h := range parkingHorizon + 1 {
		parkAt := now.Add(time.Duration(h) * time.Hour)
		var periods []ocpi.ChargingPeriod
		if h > 0 {
			periods = append(periods, ocpi.ChargingPeriod{StartDateTime: ocpi.NewDateTime(now),
				Dimensions: []ocpi.CdrDimension{{Type: "TIME", Volume: ocpi.NumberFromDecimal(decimal.NewFromInt(int64(h)))}}})
		}
		charging, ok1 := cost(periods, parkAt)
		periods = append(periods, ocpi.ChargingPeriod{StartDateTime: ocpi.NewDateTime(parkAt),
			Dimensions: []ocpi.CdrDimension{{Type: "PARKING_TIME", Volume: ocpi.NumberFromDecimal(decimal.NewFromInt(1))}}})
		parked, ok2 := cost(periods, parkAt.Add(time.Hour))
		if !ok1 || !ok2 {
			return ""
		}
		if hour := parked.Sub(charging); hour.IsPositive() {
			price := Money(c.Tariff.Currency, hour.Round(2))
			if h == 0 {
				return "Parking after charging costs " + price + " per hour"
			}
			return fmt.Sprintf("Parking costs %s per hour once the session has lasted %d h", price, h)
		}
	}
	return ""
}

func pricesDimension(t *ocpi.Tariff, dim string) bool {
	for _, e := range t.Elements {
		for _, pc := range e.PriceComponents {
			if pc.Type == dim {
				return true
			}
		}
	}
	return false
}
