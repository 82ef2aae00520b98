package tariff

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// This file is the cost engine: it turns a Tariff and a session's charging
// periods into money. The rules, as implemented (tariffs.md §4–§6, cdrs.md §7,
// and the spec repository's 2.2.1 and 2.3.0 texts):
//
//   - Element selection, per dimension: the first element that has a price
//     component of the dimension and whose restrictions all hold supplies its
//     price (mod_tariffs "TariffElement"). Restrictions are evaluated at the
//     start of every charging period and again wherever a restriction's limit
//     is crossed inside a period: a time of day, a local midnight, a session
//     duration and a consumed-energy limit each split the period, and volumes
//     are shared out in proportion to time (energy in proportion to time too,
//     except that a kWh limit splits exactly where the energy reaches it).
//   - Current and power restrictions read the period's own dimensions: a
//     minimum holds when the period's lowest value (MIN_CURRENT, else CURRENT)
//     reaches it, a maximum when its highest value (MAX_CURRENT, else CURRENT)
//     stays below it — so the restriction holds for the whole period. A
//     period without the value fails the restriction (the fallback element
//     applies), and Explain says so.
//   - FLAT is charged once per session, from the element selected at the start
//     of the first charging part; a reservation's FLAT once more, from the
//     reservation element (mod_tariffs "Reservation").
//   - step_size is applied once per session on totals (cdrs.md §7): ENERGY's
//     total is rounded up to the last active ENERGY component's step and the
//     excess billed at that component's price; of TIME and PARKING_TIME only
//     the last of the two in the session is rounded (charging time followed by
//     parking time is not rounded; 2.2.1 "Complex Tariff example"), with the
//     step of its last active component. Reservation TIME is rounded on its
//     own total. A step of 0 changes nothing; 1 bills whole Wh or seconds.
//   - A reservation part (a period with RESERVATION_TIME) is priced only by
//     elements with a reservation restriction, and ordinary parts never are;
//     a reservation that expired without charging is priced by
//     RESERVATION_EXPIRES elements when the tariff has them (tariffs.md §6.5).
//   - VAT per component: incl_vat = excl_vat × (1 + vat/100); a component
//     without vat has no VAT (incl_vat = excl_vat).
//   - min_price and max_price bound the session total, excl_vat and incl_vat
//     each by its own bound when the tariff gives it (tariffs.md §2).
//   - Money: every amount is computed exactly (decimal; divisions by 3 600 to
//     price seconds carry 20 digits), and rounded once, in Round, to 4
//     decimals (the OCPI number precision), half away from zero, after the
//     remainders of shared-out volumes (below 1e-12) are dropped. The spec has
//     no money rounding rule (cdrs.md §7); the spec's own tables round to
//     cents in some examples and not in others.
//   - Time zone: restrictions read local time in the location's time zone
//     (Input.TimeZone; UTC when nil).

// Dimension names of the breakdown.
const (
	DimEnergy      = "ENERGY"
	DimFlat        = "FLAT"
	DimTime        = "TIME"
	DimParkingTime = "PARKING_TIME"
	// DimReservation is the cost of a reservation: its TIME and FLAT
	// components (total_reservation_cost of a CDR).
	DimReservation = "RESERVATION"
)

// Input is what a session is priced from.
type Input struct {
	// Tariffs are the tariffs of the session: a period with a tariff_id takes
	// that tariff, the others the first one.
	Tariffs []ocpi.Tariff
	// Start and End bound the session; End may be zero for a live session
	// whose last period then lasts until Now.
	Start, End time.Time
	// Now ends a live session's last period when End is zero.
	Now time.Time
	// Periods are the charging periods, in any order.
	Periods []ocpi.ChargingPeriod
	// TimeZone is the location's; nil means UTC.
	TimeZone *time.Location
	// ReservationExpired says the session is a reservation that expired
	// without charging (its cost comes from RESERVATION_EXPIRES elements).
	ReservationExpired bool
	// Explain asks for Cost.Steps: which element priced which part of
	// which period, and why.
	Explain bool
}

// Cost is a priced session.
type Cost struct {
	Currency string `json:"currency"`
	// TotalCost is the session's price, after min_price and max_price.
	TotalCost ocpi.Price `json:"total_cost"`
	// Dimensions are the costs per dimension (before min/max price).
	Dimensions map[string]ocpi.Price `json:"dimensions"`
	// Lines are the priced components, in the order they first applied.
	Lines []Line `json:"lines"`
	// MinPriceApplied and MaxPriceApplied say a bound changed the total.
	MinPriceApplied bool `json:"min_price_applied,omitempty"`
	MaxPriceApplied bool `json:"max_price_applied,omitempty"`
	// Warnings are facts worth a look that did not stop the pricing
	// (a tariff not valid at the session's start, a restriction that could
	// not be evaluated).
	Warnings []string `json:"warnings,omitempty"`
	// Steps explain which element priced which part of which period.
	Steps []Step `json:"explain,omitempty"`
}

// Line is one price component's share of the session.
type Line struct {
	TariffID  string `json:"tariff_id"`
	Element   int    `json:"element"`
	Component int    `json:"component"`
	Dimension string `json:"dimension"`
	// Reservation marks a reservation element's component.
	Reservation bool `json:"reservation,omitempty"`
	// Volume is what was used (kWh, hours, or 1 for FLAT); Billed is Volume
	// after step_size.
	Volume ocpi.Number `json:"volume"`
	Billed ocpi.Number `json:"billed_volume"`
	Price  ocpi.Number `json:"price"`
	VAT    ocpi.Number `json:"vat,omitzero"`
	Cost   ocpi.Price  `json:"cost"`

	sum  acc             // volume used as it is priced: kWh, hours, or 1
	used decimal.Decimal // the same, in the step unit, once priced
	unit decimal.Decimal // volume billed, in the step unit: Wh, seconds, or 1
	excl decimal.Decimal
	incl decimal.Decimal
	last int // index of the last step that used it
	step int64
}

// Step is one decision of the engine, for --explain.
type Step struct {
	Period    int       `json:"period"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Dimension string    `json:"dimension"`
	Volume    string    `json:"volume"`
	// Element is the element that priced it, -1 for none.
	Element int    `json:"element"`
	Why     string `json:"why"`
}

// Price computes the cost of a session. It refuses a tariff the engine cannot
// apply (an impossible or unreachable restriction, an unknown dimension, a
// negative price) with an ocpi.Error naming the element and field, and a
// period naming a tariff it was not given.
func Price(in Input) (*Cost, error) {
	if len(in.Tariffs) == 0 {
		return nil, ocpi.Invalid("tariffs", "no tariff to price the session with")
	}
	for i := range in.Tariffs {
		if err := CheckPricing(&in.Tariffs[i]); err != nil {
			return nil, err
		}
		if in.Tariffs[i].Currency != in.Tariffs[0].Currency {
			return nil, ocpi.Invalid(fmt.Sprintf("tariffs[%d].currency", i), "differs from the first tariff's "+in.Tariffs[0].Currency)
		}
	}
	tz := in.TimeZone
	if tz == nil {
		tz = time.UTC
	}
	c := &Cost{Currency: in.Tariffs[0].Currency, Dimensions: map[string]ocpi.Price{}}
	t0 := in.Tariffs[0]
	if t0.StartDateTime != nil && in.Start.Before(t0.StartDateTime.Time) {
		c.Warnings = append(c.Warnings, "the tariff is valid from "+t0.StartDateTime.String()+", after the session's start")
	}
	if t0.EndDateTime != nil && !in.Start.Before(t0.EndDateTime.Time) {
		c.Warnings = append(c.Warnings, "the tariff was valid until "+t0.EndDateTime.String()+", before the session's start")
	}
	p := pricer{in: in, cost: c, lines: map[lineKey]*Line{}}
	if err := segments(in, tz, p.segment); err != nil {
		return nil, err
	}
	p.applySteps()
	p.total()
	return c, nil
}

type lineKey struct {
	tariff             string
	element, component int
	reservation        bool
}

type pricer struct {
	in        Input
	cost      *Cost
	lines     map[lineKey]*Line
	order     []*Line
	flatDone  bool
	rflatDone bool
	// lastTimeDim is TIME or PARKING_TIME, whichever was used last.
	lastTimeDim string
	step        int // decisions made so far
}

// segment prices one part of a period.
func (p *pricer) segment(s segment) {
	if s.reservation.IsPositive() {
		p.price(s, DimTime, s.reservation, true)
		if !p.rflatDone {
			p.rflatDone = p.price(s, DimFlat, one, true)
		}
		return
	}
	if !p.flatDone {
		p.flatDone = p.price(s, DimFlat, one, false)
	}
	if s.energy.Sign() != 0 {
		p.price(s, DimEnergy, s.energy, false)
	}
	if s.time.IsPositive() && p.price(s, DimTime, s.time, false) {
		p.lastTimeDim = DimTime
	}
	if s.parking.IsPositive() && p.price(s, DimParkingTime, s.parking, false) {
		p.lastTimeDim = DimParkingTime
	}
}

// price selects the element for dim at s and adds volume (kWh, hours or 1)
// to its line. It reports whether an element priced it.
func (p *pricer) price(s segment, dim string, volume decimal.Decimal, reservation bool) bool {
	t := s.tariff
	el, comp, why := selectElement(t, dim, s, reservation, p.in.ReservationExpired, p.in.Explain)
	p.step++
	if p.in.Explain {
		label := dim
		if reservation {
			label = "RESERVATION " + dim
		}
		p.cost.Steps = append(p.cost.Steps, Step{Period: s.period, From: s.from, To: s.to, Dimension: label,
			Volume: volume.String(), Element: el, Why: why})
	}
	if el < 0 {
		return false
	}
	k := lineKey{tariff: t.ID, element: el, component: comp, reservation: reservation}
	l := p.lines[k]
	if l == nil {
		pc := t.Elements[el].PriceComponents[comp]
		l = &Line{TariffID: t.ID, Element: el, Component: comp, Dimension: dim, Reservation: reservation,
			Price: pc.Price, VAT: pc.VAT}
		if pc.StepSize != nil {
			l.step = *pc.StepSize
		}
		p.lines[k] = l
		p.order = append(p.order, l)
	}
	l.sum.add(volume)
	l.last = p.step
	return true
}

// toUnit converts a volume to the unit step_size counts in: Wh for energy,
// seconds for time, 1 for FLAT.
func toUnit(dim string, v decimal.Decimal) decimal.Decimal {
	switch dim {
	case DimEnergy:
		return v.Mul(thousand)
	case DimTime, DimParkingTime:
		return v.Mul(hour)
	}
	return v
}

// fromUnit converts back for display (hours to 6 decimals).
func fromUnit(dim string, u decimal.Decimal) decimal.Decimal {
	switch dim {
	case DimEnergy:
		return u.Div(thousand)
	case DimTime, DimParkingTime:
		return u.DivRound(hour, 6)
	}
	return u
}

var (
	thousand = decimal.NewFromInt(1000)
	hour     = decimal.NewFromInt(3600)
	hundred  = decimal.NewFromInt(100)
	one      = decimal.NewFromInt(1)
)

// divPrecision is the number of decimals kept when a price per hour or per
// kWh is divided down to seconds or Wh.
const divPrecision = 20

// applySteps rounds the session totals up to the step_size of the last
// active component (cdrs.md §7) and bills the excess at that component.
func (p *pricer) applySteps() {
	for _, l := range p.order {
		l.used = toUnit(l.Dimension, l.sum.value())
		l.unit = l.used
	}
	round := func(match func(*Line) bool) {
		var total decimal.Decimal
		var last *Line
		for _, l := range p.order {
			if !match(l) {
				continue
			}
			total = total.Add(l.used)
			if last == nil || l.last > last.last {
				last = l
			}
		}
		if last == nil || last.step < 1 {
			return
		}
		step := decimal.NewFromInt(last.step)
		// Volumes shared out inside a period carry division remainders far
		// below a Wh or a second: they must not add a step.
		billed := total.Round(6).Div(step).Ceil().Mul(step)
		last.unit = last.unit.Add(billed.Sub(total))
	}
	round(func(l *Line) bool { return !l.Reservation && l.Dimension == DimEnergy })
	if p.lastTimeDim != "" {
		round(func(l *Line) bool { return !l.Reservation && l.Dimension == p.lastTimeDim })
	}
	round(func(l *Line) bool { return l.Reservation && l.Dimension == DimTime })
}

// total prices every line and the session, and applies min and max price.
func (p *pricer) total() {
	c := p.cost
	var excl, incl decimal.Decimal
	dims := map[string][2]decimal.Decimal{}
	for _, l := range p.order {
		price := l.Price.Decimal()
		switch l.Dimension {
		case DimEnergy:
			l.excl = l.unit.Mul(price).DivRound(thousand, divPrecision)
		case DimTime, DimParkingTime:
			l.excl = l.unit.Mul(price).DivRound(hour, divPrecision)
		default:
			l.excl = l.unit.Mul(price)
		}
		l.incl = l.excl
		if l.VAT.Valid() {
			l.incl = l.excl.Add(l.excl.Mul(l.VAT.Decimal()).DivRound(hundred, divPrecision))
		}
		excl, incl = excl.Add(l.excl), incl.Add(l.incl)
		dim := l.Dimension
		if l.Reservation {
			dim = DimReservation
		}
		d := dims[dim]
		dims[dim] = [2]decimal.Decimal{d[0].Add(l.excl), d[1].Add(l.incl)}
		l.Volume = ocpi.NumberFromDecimal(fromUnit(l.Dimension, l.used))
		l.Billed = ocpi.NumberFromDecimal(fromUnit(l.Dimension, l.unit))
		l.Cost = price2(l.excl, l.incl)
		c.Lines = append(c.Lines, *l)
	}
	for dim, d := range dims {
		c.Dimensions[dim] = price2(d[0], d[1])
	}
	t := p.in.Tariffs[0]
	if m := t.MinPrice; m != nil {
		if excl.LessThan(m.ExclVAT.Decimal()) {
			excl, c.MinPriceApplied = m.ExclVAT.Decimal(), true
		}
		if m.InclVAT != nil && incl.LessThan(m.InclVAT.Decimal()) {
			incl, c.MinPriceApplied = m.InclVAT.Decimal(), true
		}
	}
	if m := t.MaxPrice; m != nil {
		if excl.GreaterThan(m.ExclVAT.Decimal()) {
			excl, c.MaxPriceApplied = m.ExclVAT.Decimal(), true
		}
		if m.InclVAT != nil && incl.GreaterThan(m.InclVAT.Decimal()) {
			incl, c.MaxPriceApplied = m.InclVAT.Decimal(), true
		}
	}
	c.TotalCost = price2(excl, incl)
}

// Round is the engine's one money rounding rule: 4 decimals (the OCPI number
// precision), half away from zero.
func Round(d decimal.Decimal) decimal.Decimal {
	if d.Exponent() >= -4 {
		return d // exact to 4 decimals already: nothing to round
	}
	return d.Round(12).Round(4)
}

func price2(excl, incl decimal.Decimal) ocpi.Price {
	in := ocpi.NumberFromDecimal(Round(incl))
	return ocpi.Price{ExclVAT: ocpi.NumberFromDecimal(Round(excl)), InclVAT: &in}
}

// Difference is what a party's own total says above the engine's: own −
// ours, excl_vat, and incl_vat when both have it.
func Difference(own, ours ocpi.Price) *ocpi.Price {
	d := ocpi.Price{ExclVAT: ocpi.NumberFromDecimal(Round(own.ExclVAT.Decimal().Sub(ours.ExclVAT.Decimal())))}
	if own.InclVAT != nil && ours.InclVAT != nil {
		in := ocpi.NumberFromDecimal(Round(own.InclVAT.Decimal().Sub(ours.InclVAT.Decimal())))
		d.InclVAT = &in
	}
	return &d
}
