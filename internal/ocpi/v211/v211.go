// Package v211 is the wire of the legacy OCPI versions 2.1.1 and 2.0: their
// types, their validation, and converters to and from the 2.2.1 model that
// ocpihub stores (legacy.md).
//
// ocpihub keeps one model, 2.2.1. A 2.1.1 or 2.0 partner's object is
// converted into it on the way in (the owner country_code and party_id,
// which legacy objects lack, come from the partner's credentials or the URL)
// and converted back on the way out. Conversions follow legacy.md §10:
// renamed fields are renamed, values with an exact counterpart are mapped,
// and what has no counterpart is dropped — never invented. Every drop is
// reported in a Loss, which the caller logs and counts.
//
// 2.0 differs from 2.1.1 in a few places (numbers as JSON strings, no
// last_updated on locations, a status per connector, CDR total_usage,
// allow_whitelist); those are applied on top of the 2.1.1 form by the
// functions in v20.go.
package v211

import (
	"fmt"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// The legacy version numbers.
const (
	V211 = "2.1.1"
	V20  = "2.0"
)

// IsLegacy reports whether v is a legacy version this package speaks.
func IsLegacy(v string) bool { return v == V211 || v == V20 }

// DateTime is a legacy timestamp: read like ocpi.DateTime (leniently),
// written in whole seconds with Z ("2006-01-02T15:04:05Z"), the only form
// the 2.1.1 type string(25) and its published schemas allow.
type DateTime struct{ ocpi.DateTime }

// NewDateTime converts a 2.2.1 timestamp (fractions are dropped).
func NewDateTime(d ocpi.DateTime) DateTime {
	if d.IsZero() {
		return DateTime{}
	}
	return DateTime{ocpi.NewDateTime(d.Truncate(time.Second))}
}

// OptDateTime converts an optional 2.2.1 timestamp.
func OptDateTime(d *ocpi.DateTime) *DateTime {
	if d == nil || d.IsZero() {
		return nil
	}
	v := NewDateTime(*d)
	return &v
}

// Time returns the 2.2.1 form.
func (d DateTime) Time() ocpi.DateTime { return d.DateTime }

// Ptr returns the 2.2.1 form of an optional timestamp.
func (d *DateTime) Ptr() *ocpi.DateTime {
	if d == nil || d.IsZero() {
		return nil
	}
	v := d.DateTime
	return &v
}

// String returns the legacy form.
func (d DateTime) String() string {
	if d.IsZero() {
		return ""
	}
	return d.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")
}

// MarshalJSON writes the legacy form.
func (d DateTime) MarshalJSON() ([]byte, error) {
	if d.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + d.String() + `"`), nil
}

// UnmarshalJSON reads any form ocpi.DateTime accepts.
func (d *DateTime) UnmarshalJSON(b []byte) error { return d.DateTime.UnmarshalJSON(b) }

// Timestamp returns now as a legacy envelope timestamp: whole seconds.
func Timestamp(now time.Time) ocpi.DateTime { return ocpi.NewDateTime(now.Truncate(time.Second)) }

// Loss lists what a conversion dropped or could only approximate, one entry
// per field, as "path: what happened". The caller logs it and counts it.
type Loss []string

// Add records a loss.
func (l *Loss) Add(path, format string, args ...any) {
	*l = append(*l, path+": "+fmt.Sprintf(format, args...))
}

// Merge appends the losses of a nested conversion under prefix.
func (l *Loss) Merge(prefix string, sub Loss) {
	for _, s := range sub {
		switch {
		case prefix == "":
		case strings.HasPrefix(s, ": "):
			s = prefix + s
		default:
			s = prefix + "." + s
		}
		*l = append(*l, s)
	}
}

// Fields returns the field paths of the losses (without the explanations),
// for metric labels: indexes are dropped so that one field is one label.
func (l Loss) Fields() []string {
	out := make([]string, 0, len(l))
	for _, s := range l {
		f, _, _ := strings.Cut(s, ": ")
		out = append(out, stripIndexes(f))
	}
	return out
}

// String joins the losses for a log line.
func (l Loss) String() string { return strings.Join(l, "; ") }

func stripIndexes(p string) string {
	var b strings.Builder
	skip := false
	for _, r := range p {
		switch {
		case r == '[':
			skip = true
		case r == ']':
			skip = false
			b.WriteString("[]")
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func index(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }

// appendFrom appends to dst the 2.1.1 forms from makes of items, merging
// each one's losses under field[i]; an item without a 2.1.1 form is left
// out.
func appendFrom[F, T any](dst []T, field string, items []F, loss *Loss, from func(*F) (T, Loss, bool)) []T {
	for i := range items {
		t, sub, ok := from(&items[i])
		loss.Merge(index(field, i), sub)
		if ok {
			dst = append(dst, t)
		}
	}
	return dst
}

// Marshal writes a legacy object (keys in declaration order, HTML not
// escaped).
func Marshal(v any) ([]byte, error) { return ocpi.MarshalObject(v) }

func boolPtr(b bool) *bool { return &b }
