package tariff

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// selectElement finds the element that prices dim during s: the first that
// has a component of dim and whose restrictions hold (tariffs.md §6). It
// returns -1 when none does, and says why in either case.
func selectElement(t *ocpi.Tariff, dim string, s segment, reservation, expired, explain bool) (element, component int, why string) {
	var skipped []string
	kinds := []string{""}
	if reservation {
		kinds = []string{"RESERVATION"}
		if expired {
			kinds = []string{"RESERVATION_EXPIRES", "RESERVATION"}
		}
	}
	for _, kind := range kinds {
		for i, e := range t.Elements {
			c := slices.IndexFunc(e.PriceComponents, func(p ocpi.PriceComponent) bool { return p.Type == dim })
			if c < 0 {
				continue
			}
			var r ocpi.TariffRestrictions
			if e.Restrictions != nil {
				r = *e.Restrictions
			}
			if r.Reservation != kind {
				continue
			}
			if ok, reason := holds(&r, s, explain); !ok {
				if explain {
					skipped = append(skipped, fmt.Sprintf("elements[%d]: %s", i, reason))
				}
				continue
			}
			if !explain {
				return i, c, ""
			}
			why = fmt.Sprintf("elements[%d] is the first %s element pricing %s whose restrictions hold", i, kindName(kind), dim)
			if len(skipped) > 0 {
				why += " (skipped " + strings.Join(skipped, "; ") + ")"
			}
			return i, c, why
		}
	}
	if !explain {
		return -1, -1, ""
	}
	why = "no " + kindName(kinds[len(kinds)-1]) + " element prices " + dim + " now: it costs nothing"
	if len(skipped) > 0 {
		why += " (skipped " + strings.Join(skipped, "; ") + ")"
	}
	return -1, -1, why
}

func kindName(kind string) string {
	if kind == "" {
		return "ordinary"
	}
	return kind
}

// weekdays are the DayOfWeek values by time.Weekday.
var weekdays = [...]string{"SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"}

// holds evaluates restrictions at the start of s, and, with explain, says
// which one failed.
func holds(r *ocpi.TariffRestrictions, s segment, explain bool) (bool, string) {
	// fail formats the reason only when it is asked for: pricing without
	// explain must not allocate for every element it skips.
	fail := func(reason func() string) (bool, string) {
		if !explain {
			return false, ""
		}
		return false, reason()
	}
	now := s.local
	if r.StartTime != "" || r.EndTime != "" {
		m := now.Hour()*60 + now.Minute()
		start, end := minutes(r.StartTime), minutes(r.EndTime)
		if r.EndTime == "" || end == 0 {
			end = 24 * 60
		}
		var in bool
		if start <= end {
			in = m >= start && m < end
		} else {
			in = m >= start || m < end
		}
		if !in {
			return fail(func() string {
				return fmt.Sprintf("%s local is outside %s–%s", now.Format("15:04"), or(r.StartTime, "00:00"), or(r.EndTime, "24:00"))
			})
		}
	}
	var date string
	if r.StartDate != "" || r.EndDate != "" {
		date = now.Format(time.DateOnly)
	}
	if r.StartDate != "" && date < r.StartDate {
		return fail(func() string { return fmt.Sprintf("the date %s is before start_date %s", date, r.StartDate) })
	}
	if r.EndDate != "" && date >= r.EndDate {
		return fail(func() string { return fmt.Sprintf("the date %s is not before end_date %s", date, r.EndDate) })
	}
	if len(r.DayOfWeek) > 0 {
		day := weekdays[now.Weekday()]
		if !slices.Contains(r.DayOfWeek, day) {
			return fail(func() string { return fmt.Sprintf("%s is not in day_of_week", day) })
		}
	}
	if r.MinKWh.Valid() && s.energyAt.LessThan(r.MinKWh.Decimal()) {
		return fail(func() string { return fmt.Sprintf("%s kWh consumed is below min_kwh %s", s.energyAt, r.MinKWh) })
	}
	if r.MaxKWh.Valid() && !s.energyAt.LessThan(r.MaxKWh.Decimal()) {
		return fail(func() string { return fmt.Sprintf("%s kWh consumed reaches max_kwh %s", s.energyAt, r.MaxKWh) })
	}
	secs := int64(s.elapsed / time.Second)
	if r.MinDuration != nil && secs < *r.MinDuration {
		return fail(func() string {
			return fmt.Sprintf("the session has lasted %d s, below min_duration %d", secs, *r.MinDuration)
		})
	}
	if r.MaxDuration != nil && secs >= *r.MaxDuration {
		return fail(func() string {
			return fmt.Sprintf("the session has lasted %d s, reaching max_duration %d", secs, *r.MaxDuration)
		})
	}
	for _, lim := range []struct {
		name  string
		limit ocpi.Number
		value opt
		min   bool
	}{
		{"min_current", r.MinCurrent, s.lowCurrent, true}, {"max_current", r.MaxCurrent, s.highCurrent, false},
		{"min_power", r.MinPower, s.lowPower, true}, {"max_power", r.MaxPower, s.highPower, false},
	} {
		if !lim.limit.Valid() {
			continue
		}
		if !lim.value.ok {
			return fail(func() string { return fmt.Sprintf("the period gives no value for %s", lim.name) })
		}
		if lim.min && lim.value.v.LessThan(lim.limit.Decimal()) {
			return fail(func() string { return fmt.Sprintf("%s is below %s %s", lim.value.v, lim.name, lim.limit) })
		}
		if !lim.min && !lim.value.v.LessThan(lim.limit.Decimal()) {
			return fail(func() string { return fmt.Sprintf("%s reaches %s %s", lim.value.v, lim.name, lim.limit) })
		}
	}
	return true, ""
}

// minutes reads a checked "HH:MM" as minutes after midnight (0 when empty).
func minutes(hhmm string) int {
	if len(hhmm) != 5 {
		return 0
	}
	d := func(i int) int { return int(hhmm[i] - '0') }
	return (d(0)*10+d(1))*60 + d(3)*10 + d(4)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// CheckPricing refuses a tariff the engine cannot apply, with an ocpi.Error
// naming the element and field: what Tariff.Check refuses (an unknown
// dimension, a negative price or step), restrictions no moment can satisfy
// (a minimum not below its maximum, start_date not before end_date,
// start_time equal to end_time), and a component that can never apply because
// an earlier element prices the same dimension under the same restrictions
// or under none.
func CheckPricing(t *ocpi.Tariff) error {
	c := ocpi.NewCheck("")
	t.Check(c)
	if err := c.Err(); err != nil {
		return err
	}
	for i, e := range t.Elements {
		if e.Restrictions == nil {
			continue
		}
		r := e.Restrictions
		path := fmt.Sprintf("elements[%d].restrictions.", i)
		for _, p := range []struct {
			min, max  ocpi.Number
			nmin, nam string
		}{{r.MinKWh, r.MaxKWh, "min_kwh", "max_kwh"}, {r.MinCurrent, r.MaxCurrent, "min_current", "max_current"},
			{r.MinPower, r.MaxPower, "min_power", "max_power"}} {
			if p.min.Valid() && p.max.Valid() && p.min.Cmp(p.max) >= 0 {
				return ocpi.Invalid(path+p.nam, "must be above "+p.nmin+" ("+p.min.String()+"): no moment satisfies both")
			}
		}
		if r.MinDuration != nil && r.MaxDuration != nil && *r.MinDuration >= *r.MaxDuration {
			return ocpi.Invalid(path+"max_duration", "must be above min_duration: no moment satisfies both")
		}
		if r.StartDate != "" && r.EndDate != "" && r.StartDate >= r.EndDate {
			return ocpi.Invalid(path+"end_date", "must be after start_date (end_date is exclusive)")
		}
		if r.StartTime != "" && r.StartTime == r.EndTime {
			return ocpi.Invalid(path+"end_time", "equals start_time: the element would never apply")
		}
	}
	for i, e := range t.Elements {
		for ci, pc := range e.PriceComponents {
			for j := range i {
				prev := t.Elements[j]
				if !slices.ContainsFunc(prev.PriceComponents, func(p ocpi.PriceComponent) bool { return p.Type == pc.Type }) {
					continue
				}
				if covers(prev.Restrictions, e.Restrictions) {
					return ocpi.Invalid(fmt.Sprintf("elements[%d].price_components[%d].type", i, ci),
						fmt.Sprintf("%s never applies: elements[%d] prices %s first whenever this element could", pc.Type, j, pc.Type))
				}
			}
		}
	}
	return nil
}

// covers reports whether an element with restrictions a applies whenever one
// with b does: a has none (other than b's reservation kind), or the same.
func covers(a, b *ocpi.TariffRestrictions) bool {
	var ra, rb ocpi.TariffRestrictions
	if a != nil {
		ra = *a
	}
	if b != nil {
		rb = *b
	}
	if ra.Reservation != rb.Reservation {
		return false
	}
	return sameRestrictions(&ra, &ocpi.TariffRestrictions{Reservation: ra.Reservation}) || sameRestrictions(&ra, &rb)
}

// sameRestrictions compares restrictions by meaning (numbers by value: 1.0
// is 1.00), without reflection: CheckPricing runs on every price.
func sameRestrictions(a, b *ocpi.TariffRestrictions) bool {
	num := func(x, y ocpi.Number) bool { return x.Valid() == y.Valid() && (!x.Valid() || x.Cmp(y) == 0) }
	i64 := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.StartTime == b.StartTime && a.EndTime == b.EndTime && a.StartDate == b.StartDate && a.EndDate == b.EndDate &&
		num(a.MinKWh, b.MinKWh) && num(a.MaxKWh, b.MaxKWh) && num(a.MinCurrent, b.MinCurrent) && num(a.MaxCurrent, b.MaxCurrent) &&
		num(a.MinPower, b.MinPower) && num(a.MaxPower, b.MaxPower) && i64(a.MinDuration, b.MinDuration) &&
		i64(a.MaxDuration, b.MaxDuration) && slices.Equal(a.DayOfWeek, b.DayOfWeek) && a.Reservation == b.Reservation
}
