package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// tones group the statuses of every module by what they mean to an operator;
// a module adds its statuses here. Badges and map points are coloured by
// tones: ok (green), active (blue), warn (amber), bad (red), muted (grey).
var tones = map[string]string{
	// parties
	"CONNECTED": "ok", "PENDING": "warn", "SUSPENDED": "bad", "UNREGISTERED": "muted",
	"OFFLINE": "bad", "PLANNED": "muted",
	// receiver health (party.Health)
	"DEGRADED": "bad", "OK": "ok",
	// invitations
	"OPEN": "active", "USED": "ok", "EXPIRED": "muted",
	// jobs
	"available": "active", "running": "active", "scheduled": "muted", "pending": "muted",
	"retryable": "warn", "discarded": "bad", "cancelled": "muted", "completed": "ok",
	// EVSE statuses (locations)
	"AVAILABLE": "ok", "CHARGING": "active", "BLOCKED": "warn", "RESERVED": "warn",
	"OUTOFORDER": "bad", "INOPERATIVE": "bad", "UNKNOWN": "muted", "REMOVED": "muted",
	// commands (lifecycle states, lower case)
	"forwarding": "active", "accepted": "ok", "unconfirmed": "warn", "rejected": "bad", "failed": "bad", "timeout": "bad",
	// sessions, commands, payments
	"ACTIVE": "active", "COMPLETED": "ok", "INVALID": "bad", "ACCEPTED": "ok", "REJECTED": "bad",
	"TIMEOUT": "bad", "FAILED": "bad", "CAPTURED": "ok", "REFUNDED": "muted", "SUCCEEDED": "ok",
	// sessions (the rest above) and CDRs' cost check against their session
	"RESERVATION": "warn", "match": "ok", "mismatch": "warn",
	// UPI payments and refunds, webhook deliveries
	"SESSION_REQUESTED": "active", "SETTLED": "ok", "REFUNDING": "warn", "QUEUED": "muted", "PROCESSED": "ok",
	"DELIVERED": "ok", "DISABLED": "bad",
}

// Tone returns the tone of a status ("muted" when unknown).
func Tone(status any) string {
	if t, ok := tones[fmt.Sprint(status)]; ok {
		return t
	}
	return "muted"
}

// ToTime accepts the time types pages carry.
func ToTime(v any) time.Time {
	switch t := v.(type) {
	case time.Time:
		return t
	case *time.Time:
		if t != nil {
			return *t
		}
	case ocpi.DateTime:
		return t.Time
	case *ocpi.DateTime:
		if t != nil {
			return t.Time
		}
	case int64: // microseconds, as stored
		if t > 0 {
			return time.UnixMicro(t)
		}
	}
	return time.Time{}
}

// Ago says how far t is from now in words: "just now", "3 min ago",
// "in 2 h", "5 d ago".
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var s string
	switch {
	case d < 10*time.Second:
		return "just now"
	case d < time.Minute:
		s = strconv.Itoa(int(d/time.Second)) + " s"
	case d < time.Hour:
		s = strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 48*time.Hour:
		s = strconv.Itoa(int(d/time.Hour)) + " h"
	default:
		s = strconv.Itoa(int(d/(24*time.Hour))) + " d"
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// AbsTime is the exact time, UTC, for tooltips and detail pages.
func AbsTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// Truncate shortens s to n characters with an ellipsis.
func Truncate(n int, s string) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// TitleCase turns "party_clientinfo_push" or "DISCARDED" into words.
func TitleCase(s string) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == '_' || r == '-' || r == ' ' })
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

// Thousands writes n with thousands separators.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func ToInt64(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case int32:
		return int64(n)
	}
	return 0
}

// Scaled writes v/scale exactly with the given decimals and thousands
// separators: 123456 paise, scale 100, 2 decimals → "1,234.56". Charts and
// money columns use it; nothing here is a float.
func Scaled(v, scale int64, decimals int) string {
	if scale <= 1 {
		return Thousands(v)
	}
	neg := v < 0
	if neg {
		v = -v
	}
	whole, frac := v/scale, v%scale
	s := Thousands(whole)
	if decimals > 0 {
		// frac/scale to decimals digits, rounded half up.
		pow := int64(1)
		for i := 0; i < decimals; i++ {
			pow *= 10
		}
		f := (frac*pow*2 + scale) / (scale * 2)
		if f >= pow {
			whole++
			f -= pow
			s = Thousands(whole)
		}
		s += "." + fmt.Sprintf("%0*d", decimals, f)
	}
	if neg {
		s = "-" + s
	}
	return s
}
