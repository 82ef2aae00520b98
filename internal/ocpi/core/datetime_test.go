package core

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestParseDateTime reads every shape transport.md §2 allows, and what
// partners send besides, leniently; and rejects what is not a timestamp.
func TestParseDateTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // canonical output; "" means rejected
	}{
		// The four shapes of the spec.
		{"2015-06-29T20:39:09Z", "2015-06-29T20:39:09Z"},
		{"2015-06-29T20:39:09", "2015-06-29T20:39:09Z"},
		{"2016-12-29T17:45:09.2Z", "2016-12-29T17:45:09.2Z"},
		{"2018-01-01T01:08:01.123", "2018-01-01T01:08:01.123Z"},
		// Fractions of any length; kept to the millisecond, never rounded up.
		{"2018-01-01T01:08:01.1", "2018-01-01T01:08:01.1Z"},
		{"2018-01-01T01:08:01.12Z", "2018-01-01T01:08:01.12Z"},
		{"2018-01-01T01:08:01.000Z", "2018-01-01T01:08:01Z"},
		{"2018-01-01T01:08:01.100", "2018-01-01T01:08:01.1Z"},
		{"2018-01-01T01:08:01.1239", "2018-01-01T01:08:01.123Z"},
		{"2018-01-01T01:08:01.999999Z", "2018-01-01T01:08:01.999Z"},
		{"2018-01-01T01:08:01.123456789Z", "2018-01-01T01:08:01.123Z"},
		{"2018-01-01T01:08:01.123456789012345678Z", "2018-01-01T01:08:01.123Z"},
		// Lower case designators and a space separator.
		{"2015-06-29t20:39:09z", "2015-06-29T20:39:09Z"},
		{"2015-06-29t20:39:09.5", "2015-06-29T20:39:09.5Z"},
		{"2015-06-29 20:39:09Z", "2015-06-29T20:39:09Z"},
		// Offsets are converted to UTC (the spec wants UTC; partners send them).
		{"2015-06-29T20:39:09+05:30", "2015-06-29T15:09:09Z"},
		{"2015-06-29T02:00:00.250+05:30", "2015-06-28T20:30:00.25Z"},
		{"2015-06-29T20:39:09-07:00", "2015-06-30T03:39:09Z"},
		{"2015-06-29T20:39:09+00:00", "2015-06-29T20:39:09Z"},
		{"2015-06-29T20:39:09-00:00", "2015-06-29T20:39:09Z"},
		{"2015-12-31T23:30:00-01:00", "2016-01-01T00:30:00Z"},
		// Calendar edges.
		{"2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"},
		{"9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"},
		{"0001-01-01T00:00:00.001Z", "0001-01-01T00:00:00.001Z"},

		// Rejected.
		{"", ""},
		{"2015-06-29", ""},
		{"2015-06-29T20:39", ""},
		{"20150629T203909Z", ""},
		{"2015-06-29T20:39:09.Z", ""},
		{"2015-06-29T20:39:09ZZ", ""},
		{"2015-06-29T20:39:09+0530", ""},
		{"2015-06-29T20:39:09+05", ""},
		{"2015-06-29T20:39:09+24:00", ""},
		{"2015-06-29T20:39:09+05:60", ""},
		{"2015-06-29T24:00:00Z", ""},
		{"2015-06-29T20:60:00Z", ""},
		{"2015-06-29T20:39:60Z", ""},
		{"2015-02-29T20:39:09Z", ""},
		{"2015-13-01T20:39:09Z", ""},
		{"2015-6-29T20:39:09Z", ""},
		{" 2015-06-29T20:39:09Z", ""},
		{"2015-06-29T20:39:09Z ", ""},
		{"2015-06-29X20:39:09Z", ""},
		{"1435610349", ""},
		{"0000-01-01T00:00:00Z", ""},
		{"0001-01-01T00:00:00Z", ""}, // the zero time means "absent"
		{"0001-01-01T00:30:00+01:00", ""},
		{"9999-12-31T23:00:00-01:00", ""},
		{"2018-01-01T01:08:01." + strings.Repeat("1", 60) + "Z", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseDateTime(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("ParseDateTime(%q) = %s, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseDateTime(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.Location() != time.UTC {
				t.Errorf("location %v, want UTC", got.Location())
			}
			// Through JSON too, both ways.
			var viaJSON DateTime
			if err := json.Unmarshal([]byte(`"`+tt.in+`"`), &viaJSON); err != nil || !viaJSON.Equal(got.Time) {
				t.Errorf("UnmarshalJSON = %v, %v", viaJSON, err)
			}
			b, _ := json.Marshal(got)
			if string(b) != `"`+tt.want+`"` {
				t.Errorf("MarshalJSON = %s", b)
			}
		})
	}
}

// TestDateTimeOutput is strict: always UTC with Z, milliseconds only when not
// zero, never longer than string(25).
func TestDateTimeOutput(t *testing.T) {
	t.Parallel()
	ist := time.FixedZone("IST", 5*3600+1800)
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), "2025-01-02T03:04:05Z"},
		{time.Date(2025, 1, 2, 3, 4, 5, 7_000_000, time.UTC), "2025-01-02T03:04:05.007Z"},
		{time.Date(2025, 1, 2, 3, 4, 5, 120_000_000, time.UTC), "2025-01-02T03:04:05.12Z"},
		{time.Date(2025, 1, 2, 3, 4, 5, 999_999_999, time.UTC), "2025-01-02T03:04:05.999Z"},
		{time.Date(2025, 1, 2, 8, 34, 5, 0, ist), "2025-01-02T03:04:05Z"},
		{time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC), "9999-12-31T23:59:59.999Z"},
	}
	for _, tt := range tests {
		d := NewDateTime(tt.in)
		if got := d.String(); got != tt.want {
			t.Errorf("NewDateTime(%v) = %s, want %s", tt.in, got, tt.want)
		}
		if len(d.String()) > 25 {
			t.Errorf("%s is longer than string(25)", d)
		}
		if back := FromMicros(d.Micros()); !back.Equal(d.Time) || back.String() != tt.want {
			t.Errorf("micros round trip %s → %s", d, back)
		}
	}
	var zero DateTime
	if b, _ := json.Marshal(zero); string(b) != "null" || zero.String() != "" {
		t.Errorf("zero DateTime marshals as %s", b)
	}
}

// TestDateTimeUnmarshalJSON covers the non-string inputs.
func TestDateTimeUnmarshalJSON(t *testing.T) {
	t.Parallel()
	d := NewDateTime(time.Now())
	if err := json.Unmarshal([]byte("null"), &d); err != nil || !d.IsZero() {
		t.Errorf("null → %v, %v; want zero", d, err)
	}
	for _, in := range []string{`1435610349`, `true`, `{}`, `["2015-06-29T20:39:09Z"]`, `"2015-06-29"`} {
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("UnmarshalJSON(%s) accepted: %v", in, d)
		}
	}
	var obj struct {
		LastUpdated DateTime `json:"last_updated"`
	}
	if err := json.Unmarshal([]byte(`{"last_updated":"2015-06-29T20:39:09"}`), &obj); err != nil || obj.LastUpdated.String() != "2015-06-29T20:39:09Z" {
		t.Errorf("in a struct: %v, %v", obj.LastUpdated, err)
	}
	// A string with escapes is decoded as JSON, not taken as it is.
	for in, want := range map[string]string{
		`"2015-06-29T20:39:09\u005a"`:  "2015-06-29T20:39:09Z",
		`"2015-06-29\u005420:39:09Z"`:  "2015-06-29T20:39:09Z",
		`"2015-06-29T20:39:09Z\u00e9"`: "",
		`"2015-06-29T20:39:09Zé"`:      "",
		`"2015-06-29T20:39:09\"Z"`:     "",
	} {
		err := json.Unmarshal([]byte(`{"last_updated":`+in+`}`), &obj)
		switch {
		case want == "" && err == nil:
			t.Errorf("%s accepted: %v", in, obj.LastUpdated)
		case want != "" && (err != nil || obj.LastUpdated.String() != want):
			t.Errorf("%s: %v, %v; want %s", in, obj.LastUpdated, err, want)
		}
	}
}
