package ocpi

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

// ParseDateTime parses the shapes transport.md §2 allows, and an explicit UTC
// offset.
func ParseDateTime(s string) (DateTime, error) {
	if s == "" {
		return DateTime{}, fmt.Errorf("empty timestamp")
	}
	if len(s) > 35 {
		return DateTime{}, fmt.Errorf("timestamp %q is too long", truncate(s, 40))
	}
	v := s
	if i := strings.IndexAny(v, "Tt "); i != 10 {
		return DateTime{}, fmt.Errorf("timestamp %q is not RFC 3339 (want 2006-01-02T15:04:05Z)", s)
	}
	v = v[:10] + "T" + v[11:]
	if strings.HasSuffix(v, "z") {
		v = v[:len(v)-1] + "Z"
	}
	hasZone := strings.HasSuffix(v, "Z") || hasOffset(v)
	if !hasZone {
		v += "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return DateTime{}, fmt.Errorf("timestamp %q is not RFC 3339 (want 2006-01-02T15:04:05Z)", s)
	}
	return NewDateTime(t), nil
}

// hasOffset reports whether a timestamp ends in ±hh:mm.
func hasOffset(v string) bool {
	if len(v) < 20 {
		return false
	}
	tail := v[len(v)-6:]
	return (tail[0] == '+' || tail[0] == '-') && tail[3] == ':'
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
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp must be a string")
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
