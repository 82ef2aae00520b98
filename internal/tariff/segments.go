package tariff

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// segment is a part of a charging period during which no restriction's
// limit is crossed: one element per dimension prices all of it.
type segment struct {
	period   int
	tariff   *ocpi.Tariff
	from, to time.Time
	local    time.Time // from, in the location's time zone
	// energyAt is the energy consumed since the session's start, in kWh
	// (kept only when the tariff has kWh restrictions: nothing else reads it),
	// when the segment begins; elapsed the session's duration then.
	energyAt decimal.Decimal
	elapsed  time.Duration
	// The volumes of the segment: kWh, and hours.
	energy, time, parking, reservation decimal.Decimal
	// The period's current (A) and power (kW): lowest and highest known
	// values, not ok when the period does not say.
	lowCurrent, highCurrent, lowPower, highPower opt
}

// opt is a value a period may not give (a value, not a pointer: a segment
// is copied for every part of a period, and pricing must not allocate per
// dimension).
type opt struct {
	v  decimal.Decimal
	ok bool
}

// split is a point inside a period where restrictions are evaluated anew, as
// a share of the period (0 < share < 1).
type split struct {
	share decimal.Decimal
	// at is the exact time when the split comes from a clock or duration
	// limit; energy the exact energy when it comes from a kWh limit.
	at     time.Time
	energy *decimal.Decimal
}

// segments cuts the session's periods where a restriction's limit is
// crossed and hands each part to emit, in time order (streamed, not
// collected: a 48-period session must not allocate a slice of parts).
func segments(in Input, tz *time.Location, emit func(segment)) error {
	byStart := func(a, b ocpi.ChargingPeriod) int { return a.StartDateTime.Compare(b.StartDateTime.Time) }
	periods := in.Periods
	if !slices.IsSortedFunc(periods, byStart) {
		periods = slices.Clone(periods)
		slices.SortStableFunc(periods, byStart)
	}
	end := in.End
	if end.IsZero() {
		end = in.Now
	}
	var total acc // the energy of the periods before this one
	limits := map[*ocpi.Tariff]*limitSet{}
	for i, p := range periods {
		t, err := tariffOf(in.Tariffs, p.TariffID)
		if err != nil {
			return ocpi.Invalid(fmt.Sprintf("charging_periods[%d].tariff_id", i), err.Error())
		}
		from, to := p.StartDateTime.Time, end
		if i+1 < len(periods) {
			to = periods[i+1].StartDateTime.Time
		}
		if to.Before(from) {
			to = from
		}
		base := segment{period: i, tariff: t}
		if err := base.volumes(i, p.Dimensions); err != nil {
			return err
		}
		ls := limits[t]
		if ls == nil {
			ls = limitsOf(t)
			limits[t] = ls
		}
		var consumed decimal.Decimal
		if len(ls.kwh) > 0 {
			consumed = total.value()
		}
		splits := cuts(ls, in.Start, from, to, consumed, base.energy, tz)
		if len(splits) == 0 {
			base.from, base.to, base.local = from, to, from.In(tz)
			base.elapsed, base.energyAt = from.Sub(in.Start), consumed
			emit(base)
		} else {
			share(base, splits, from, to, consumed, in.Start, tz, emit)
		}
		total.add(base.energy)
	}
	return nil
}

// tariffOf finds the tariff a period names (the first without a name).
func tariffOf(ts []ocpi.Tariff, id string) (*ocpi.Tariff, error) {
	if id == "" {
		return &ts[0], nil
	}
	for i := range ts {
		if strings.EqualFold(ts[i].ID, id) {
			return &ts[i], nil
		}
	}
	return nil, fmt.Errorf("names tariff %q, which is not among the session's tariffs", id)
}

// volumes reads a period's dimensions into s.
func (s *segment) volumes(i int, dims []ocpi.CdrDimension) error {
	var energyImport decimal.Decimal
	var hasEnergy bool
	var vals [len(electrical)]opt
	for j, d := range dims {
		if !d.Volume.Valid() {
			return ocpi.Invalid(fmt.Sprintf("charging_periods[%d].dimensions[%d].volume", i, j), "is required")
		}
		v := d.Volume.Decimal()
		switch d.Type {
		case "ENERGY":
			s.energy, hasEnergy = plus(s.energy, v), true
		case "ENERGY_IMPORT":
			energyImport = plus(energyImport, v)
		case "TIME", "PARKING_TIME", "RESERVATION_TIME":
			if v.IsNegative() {
				return ocpi.Invalid(fmt.Sprintf("charging_periods[%d].dimensions[%d].volume", i, j), "a duration must not be negative")
			}
			switch d.Type {
			case "TIME":
				s.time = plus(s.time, v)
			case "PARKING_TIME":
				s.parking = plus(s.parking, v)
			default:
				s.reservation = plus(s.reservation, v)
			}
		default:
			if k := slices.Index(electrical[:], d.Type); k >= 0 {
				vals[k] = opt{v: v, ok: true}
			}
		}
	}
	if !hasEnergy {
		s.energy = energyImport
	}
	pick := func(a, b int) opt {
		if vals[a].ok {
			return vals[a]
		}
		return vals[b]
	}
	s.lowCurrent, s.highCurrent = pick(1, 0), pick(2, 0)
	s.lowPower, s.highPower = pick(4, 3), pick(5, 3)
	return nil
}

// plus adds without allocating when a is zero (the usual case: one
// dimension of a type per period).
func plus(a, b decimal.Decimal) decimal.Decimal {
	if a.IsZero() {
		return b
	}
	return a.Add(b)
}

// electrical are the period dimensions current and power restrictions read.
var electrical = [...]string{"CURRENT", "MIN_CURRENT", "MAX_CURRENT", "POWER", "MIN_POWER", "MAX_POWER"}

// limitSet is what of a tariff's restrictions can change inside a period:
// the clock times (minutes after local midnight; midnight itself always, for
// dates and days of the week), the session durations (seconds) and the
// consumed energies (kWh) its elements name.
type limitSet struct {
	clocks    []int
	durations []int64
	kwh       []decimal.Decimal
}

func limitsOf(t *ocpi.Tariff) *limitSet {
	ls := &limitSet{clocks: []int{0}}
	for _, e := range t.Elements {
		r := e.Restrictions
		if r == nil {
			continue
		}
		for _, hhmm := range []string{r.StartTime, r.EndTime} {
			if m := minutes(hhmm); m != 0 && !slices.Contains(ls.clocks, m) {
				ls.clocks = append(ls.clocks, m)
			}
		}
		for _, d := range []*int64{r.MinDuration, r.MaxDuration} {
			if d != nil {
				ls.durations = append(ls.durations, *d)
			}
		}
		for _, lim := range []ocpi.Number{r.MinKWh, r.MaxKWh} {
			if lim.Valid() {
				ls.kwh = append(ls.kwh, lim.Decimal())
			}
		}
	}
	return ls
}

// cuts lists where restrictions may change inside [from, to).
func cuts(ls *limitSet, start, from, to time.Time, consumed, energy decimal.Decimal, tz *time.Location) []split {
	var out []split
	if span := to.Sub(from); span > 0 {
		var spanUS decimal.Decimal
		at := func(x time.Time) {
			if x.After(from) && x.Before(to) {
				if spanUS.IsZero() {
					spanUS = decimal.NewFromInt(span.Microseconds())
				}
				out = append(out, split{share: decimal.NewFromInt(x.Sub(from).Microseconds()).DivRound(spanUS, divPrecision), at: x})
			}
		}
		for _, d := range ls.durations {
			at(start.Add(time.Duration(d) * time.Second))
		}
		lf := from.In(tz)
		for day := time.Date(lf.Year(), lf.Month(), lf.Day(), 0, 0, 0, 0, tz); day.Before(to); day = day.AddDate(0, 0, 1) {
			for _, m := range ls.clocks {
				at(day.Add(time.Duration(m) * time.Minute))
			}
		}
	}
	if energy.IsPositive() && len(ls.kwh) > 0 {
		reached := consumed.Add(energy)
		for _, l := range ls.kwh {
			if l.GreaterThan(consumed) && l.LessThan(reached) {
				l := l
				out = append(out, split{share: l.Sub(consumed).DivRound(energy, divPrecision), energy: &l})
			}
		}
	}
	if len(out) < 2 {
		return out
	}
	slices.SortFunc(out, func(a, b split) int { return a.share.Cmp(b.share) })
	return slices.CompactFunc(out, func(a, b split) bool { return a.share.Equal(b.share) })
}

// share cuts base at the splits, sharing the period's volumes out by share
// of time (the last part takes the remainder, so the parts add up exactly).
func share(base segment, splits []split, from, to time.Time, consumed decimal.Decimal, start time.Time, tz *time.Location, emit func(segment)) {
	bounds := append([]split{{share: decimal.Zero, at: from, energy: &consumed}}, splits...)
	var used [4]decimal.Decimal
	total := [4]decimal.Decimal{base.energy, base.time, base.parking, base.reservation}
	spanUS := decimal.NewFromInt(to.Sub(from).Microseconds())
	for k, b := range bounds {
		next := one
		if k+1 < len(bounds) {
			next = bounds[k+1].share
		}
		s := base
		s.from = b.at
		if s.from.IsZero() {
			s.from = from.Add(time.Duration(b.share.Mul(spanUS).Round(0).IntPart()) * time.Microsecond)
		}
		s.to = to
		if k+1 < len(bounds) {
			s.to = bounds[k+1].at
			if s.to.IsZero() {
				s.to = from.Add(time.Duration(next.Mul(spanUS).Round(0).IntPart()) * time.Microsecond)
			}
		}
		s.local = s.from.In(tz)
		s.elapsed = s.from.Sub(start)
		if b.energy != nil {
			s.energyAt = *b.energy
		} else {
			s.energyAt = consumed.Add(base.energy.Mul(b.share))
		}
		var part [4]decimal.Decimal
		for v := range total {
			if k == len(bounds)-1 {
				part[v] = total[v].Sub(used[v])
			} else {
				part[v] = total[v].Mul(next.Sub(b.share))
			}
			used[v] = used[v].Add(part[v])
		}
		s.energy, s.time, s.parking, s.reservation = part[0], part[1], part[2], part[3]
		emit(s)
	}
}
