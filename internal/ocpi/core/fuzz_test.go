package core

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeEnvelope: any input either fails or yields an envelope that
// survives a round trip through JSON unchanged.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"data":[{"version":"2.2.1","url":"https://x.example/ocpi/2.2.1"}],"status_code":1000,"status_message":"Success","timestamp":"2025-01-01T00:00:00Z"}`,
		`{"status_code":2001,"error":{"code":"INVALID_REQUEST","description":"x","details":{"field":"id","issue":"is required"}},"timestamp":"2025-01-01T00:00:00"}`,
		`{"data":null,"status_code":"3000","status_message":null}`,
		`{"status_code":1e3}`, `{"status_code":-0}`, `[]`, ``, `{`, `{"status_code":1000,"timestamp":"2015-06-29t20:39:09.123+05:30"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		env, err := DecodeEnvelope(body)
		if err != nil {
			return
		}
		if env.StatusCode < 0 || env.StatusCode > 9999 {
			t.Fatalf("status_code %d accepted", env.StatusCode)
		}
		if env.Data != nil && (!json.Valid(env.Data) || bytes.Equal(env.Data, []byte("null"))) {
			t.Fatalf("data %q kept", env.Data)
		}
		if !env.Timestamp.IsZero() && len(env.Timestamp.String()) > 25 {
			t.Fatalf("timestamp %s longer than string(25)", env.Timestamp)
		}
		out, err := json.Marshal(env)
		if err != nil {
			t.Fatalf("marshal %+v: %v", env, err)
		}
		again, err := DecodeEnvelope(out)
		if err != nil {
			t.Fatalf("re-decode %s: %v", out, err)
		}
		if again.StatusCode != env.StatusCode || again.StatusMessage != env.StatusMessage ||
			!again.Timestamp.Equal(env.Timestamp.Time) || (again.Error == nil) != (env.Error == nil) {
			t.Fatalf("round trip changed the envelope:\n%+v\n%+v", env, again)
		}
		if env.Data != nil {
			var a, b any
			if json.Unmarshal(env.Data, &a) != nil || json.Unmarshal(again.Data, &b) != nil {
				t.Fatalf("data does not decode: %s / %s", env.Data, again.Data)
			}
		}
	})
}

// FuzzParseDateTime: whatever is accepted formats canonically (UTC, Z, at
// most 25 characters) and parses back to the same instant and string; JSON
// decoding agrees with ParseDateTime.
func FuzzParseDateTime(f *testing.F) {
	for _, s := range []string{
		"2015-06-29T20:39:09Z", "2015-06-29T20:39:09", "2016-12-29T17:45:09.2Z", "2018-01-01T01:08:01.123",
		"2015-06-29t20:39:09z", "2015-06-29T20:39:09+05:30", "2015-06-29 20:39:09.123456789-07:00",
		"0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "2015-06-29T20:39:09,5Z", "2015-06-29T24:00:00Z", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDateTime(s)
		var viaJSON DateTime
		quoted, _ := json.Marshal(s)
		jerr := json.Unmarshal(quoted, &viaJSON)
		if utf8.ValidString(s) && (err == nil) != (jerr == nil) {
			t.Fatalf("ParseDateTime and UnmarshalJSON disagree on %q: %v / %v", s, err, jerr)
		}
		if err != nil {
			return
		}
		out := d.String()
		if out == "" || len(out) > 25 || !strings.HasSuffix(out, "Z") || d.Location().String() != "UTC" {
			t.Fatalf("%q → %q", s, out)
		}
		if utf8.ValidString(s) && !viaJSON.Equal(d.Time) {
			t.Fatalf("UnmarshalJSON(%q) = %s, ParseDateTime = %s", s, viaJSON, d)
		}
		again, err := ParseDateTime(out)
		if err != nil {
			t.Fatalf("%q → %q does not parse: %v", s, out, err)
		}
		if !again.Equal(d.Time) || again.String() != out {
			t.Fatalf("%q → %q → %q", s, out, again)
		}
		b, err := json.Marshal(d)
		if err != nil || string(b) != `"`+out+`"` {
			t.Fatalf("MarshalJSON = %s, %v", b, err)
		}
		if FromMicros(d.Micros()).String() != out {
			t.Fatalf("micros round trip of %s", out)
		}
	})
}

// FuzzNumberUnmarshalJSON: an accepted number is written as a short JSON
// number (never a string, never exponent notation) that reads back equal.
func FuzzNumberUnmarshalJSON(f *testing.F) {
	for _, s := range []string{`0`, `-1`, `0.1`, `"0.25"`, `1e3`, `1E-4`, `123456789012345678901234567890`, `"1e9999"`, `null`, `"NaN"`, `-0.0`, `1.50`, `"-.5"`, `"+1"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var n Number
		if err := n.UnmarshalJSON(in); err != nil || !n.Valid() {
			return
		}
		out, err := n.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(out) || out[0] == '"' || bytes.ContainsAny(out, "eE+") {
			t.Fatalf("%q → %q is not a plain JSON number", in, out)
		}
		if len(out) > 2*maxNumberDigits+2 {
			t.Fatalf("%q → %d characters", in, len(out))
		}
		var again Number
		if err := json.Unmarshal(out, &again); err != nil || again.Cmp(n) != 0 {
			t.Fatalf("%q → %q → %v, %v", in, out, again, err)
		}
		if out2, _ := again.MarshalJSON(); !bytes.Equal(out, out2) {
			t.Fatalf("%q → %q → %q", in, out, out2)
		}
	})
}
