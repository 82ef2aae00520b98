package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// DateTime is an OCPI DateTime: RFC 3339, always UTC.
//
// Parsing is lenient: the Z designator is optional, fractional seconds of any
// length are accepted, and an explicit offset (+05:30) is converted to UTC. The
// value is kept at millisecond precision, the finest a string(25) with Z can
// carry. Output is strict: "2006-01-02T15:04:05Z", with ".000" milliseconds only
// when they are not zero.
type DateTime struct{ time.Time }

// NewDateTime returns t as a DateTime (UTC, milliseconds).
func NewDateTime(t time.Time) DateTime { return DateTime{t.UTC().Truncate(time.Millisecond)} }

const outLayout = "2006-01-02T15:04:05.999Z07:00"

// String returns the canonical form.
func (d DateTime) String() string {
	if d.IsZero() {
		return ""
	}
	return d.UTC().Format(outLayout)
}

// maxDateTimeInput bounds what ParseDateTime reads: room for a fraction of any
// sensible length and an offset, without parsing megabytes.
const maxDateTimeInput = 64

// ParseDateTime parses the shapes transport.md §2 allows, and an explicit UTC
// offset. The instant must lie between 0001-01-01 and 9999-12-31 in UTC and
// must not be the zero time (which means "absent" here): so whatever is
// accepted formats back to a string that parses to the same instant.
func ParseDateTime(s string) (DateTime, error) {
	if s == "" {
		return DateTime{}, fmt.Errorf("empty timestamp")
	}
	if len(s) > maxDateTimeInput {
		return DateTime{}, fmt.Errorf("timestamp %q is too long", Truncate(s, 40))
	}
	v := s
	if i := strings.IndexAny(v, "Tt "); i != 10 {
		return DateTime{}, fmt.Errorf("timestamp %q is not RFC 3339 (want 2006-01-02T15:04:05Z)", s)
	}
	v = v[:10] + "T" + v[11:]
	if strings.HasSuffix(v, "z") {
		v = v[:len(v)-1] + "Z"
	}
	offset, hasOffset := offsetOf(v)
	if hasOffset && !validOffset(offset) {
		return DateTime{}, fmt.Errorf("timestamp %q has an offset outside -23:59..+23:59", s)
	}
	if !hasOffset && !strings.HasSuffix(v, "Z") {
		v += "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return DateTime{}, fmt.Errorf("timestamp %q is not RFC 3339 (want 2006-01-02T15:04:05Z)", s)
	}
	d := NewDateTime(t)
	if y := d.Year(); y < 1 || y > 9999 || d.IsZero() {
		return DateTime{}, fmt.Errorf("timestamp %q is out of range", s)
	}
	return d, nil
}

// offsetOf returns the ±hh:mm a timestamp ends in, if it has one.
func offsetOf(v string) (string, bool) {
	if len(v) < 20 {
		return "", false
	}
	tail := v[len(v)-6:]
	return tail, (tail[0] == '+' || tail[0] == '-') && tail[3] == ':'
}

// validOffset reports whether ±hh:mm is an RFC 3339 offset (hours 00-23,
// minutes 00-59); the time package alone lets +24:00 through.
func validOffset(o string) bool {
	for _, i := range []int{1, 2, 4, 5} {
		if o[i] < '0' || o[i] > '9' {
			return false
		}
	}
	return (o[1]-'0')*10+(o[2]-'0') <= 23 && o[4] <= '5'
}

// MarshalJSON writes the canonical form.
func (d DateTime) MarshalJSON() ([]byte, error) {
	if d.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + d.String() + `"`), nil
}

// UnmarshalJSON reads any accepted shape.
func (d *DateTime) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*d = DateTime{}
		return nil
	}
	s, ok := plainString(b)
	if !ok {
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("timestamp must be a string")
		}
	}
	v, err := ParseDateTime(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Micros returns the time as microseconds since the Unix epoch: the form
// timestamps take in the database, identical on both engines.
func (d DateTime) Micros() int64 { return d.UnixMicro() }

// FromMicros is the inverse of Micros.
func FromMicros(us int64) DateTime { return NewDateTime(time.UnixMicro(us)) }

// Truncate cuts s to n bytes for an error message, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// plainString is the JSON string b as it is, when it needs no decoding:
// quoted, printable ASCII, no escapes (every timestamp a partner sends).
func plainString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	for _, c := range b[1 : len(b)-1] {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(b[1 : len(b)-1]), true
}
