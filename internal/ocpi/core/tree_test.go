package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// stdTree is what parseTree must agree with: encoding/json's decoder with
// UseNumber, into an interface.
func stdTree(b []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	err := dec.Decode(&v)
	return v, err
}

// checkTree fails when parseTree accepts b and decodes it otherwise than
// encoding/json, or accepts what encoding/json refuses.
func checkTree(t *testing.T, b []byte) bool {
	t.Helper()
	got, ok := parseTree(b)
	if !ok {
		return false
	}
	want, err := stdTree(b)
	if err != nil {
		t.Fatalf("%q: parseTree accepts what encoding/json refuses (%v)", b, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n parseTree    %#v\n encoding/json %#v", b, got, want)
	}
	return true
}

// randomJSON writes a random document with every kind of escape: short
// ones, \u of ASCII, of multi-byte runes, surrogate pairs, lone and
// reversed surrogates, raw multi-byte and invalid bytes, repeated keys,
// odd spacing, and now and then a flaw (a control character, a bad
// escape, a bad number, trailing text) that makes it invalid.
func randomJSON(rng *rand.Rand, b *strings.Builder, depth int) {
	sp := func() {
		for range rng.IntN(3) {
			b.WriteByte(" \t\r\n"[rng.IntN(4)])
		}
	}
	str := func() {
		b.WriteByte('"')
		pieces := []string{"a", "Z", " ", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0041`, `\u00e9`, `\u20AC`,
			`\ud834\udd1e`, `\ud834`, `\udd1e`, `\ud834\u0041`, `\udd1e\ud834`, `\u0000`, "é", "𝄞", "\u2028", "\xff", "\xc3(", "<&>"}
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		if rng.IntN(60) == 0 {
			b.WriteString([]string{"\x01", `\x`, `\u12`, `\uZZZZ`, "\n"}[rng.IntN(5)])
		}
		b.WriteByte('"')
	}
	sp()
	switch n := rng.IntN(9); {
	case depth > 4 || n < 2:
		nums := []string{"0", "-0", "12", "-3.50", "1e5", "2.5E-3", "1E+2", "12345678901234567890.000001", "0.1"}
		if rng.IntN(40) == 0 {
			nums = []string{"01", "1.", "+1", "1e", "-", ".5", "1.e3", "--1", "0x1"}
		}
		b.WriteString(nums[rng.IntN(len(nums))])
	case n == 2:
		b.WriteString([]string{"true", "false", "null"}[rng.IntN(3)])
	case n == 3:
		str()
	case n <= 6:
		b.WriteByte('{')
		for i := range rng.IntN(5) {
			if i > 0 {
				b.WriteByte(',')
			}
			sp()
			if rng.IntN(4) == 0 {
				b.WriteString(`"k"`)
			} else {
				str()
			}
			sp()
			b.WriteByte(':')
			randomJSON(rng, b, depth+1)
		}
		sp()
		b.WriteByte('}')
	default:
		b.WriteByte('[')
		for i := range rng.IntN(5) {
			if i > 0 {
				b.WriteByte(',')
			}
			randomJSON(rng, b, depth+1)
		}
		sp()
		b.WriteByte(']')
	}
	sp()
	if depth == 0 && rng.IntN(50) == 0 {
		b.WriteString([]string{"x", "{}", ",", "]"}[rng.IntN(4)])
	}
}

// TestTreeDecodingIsEncodingJSON: on 100 000 random documents, parseTree
// decodes what it accepts exactly as encoding/json does and accepts
// nothing encoding/json refuses; and it accepts most of them (the fast path
// is taken).
func TestTreeDecodingIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	accepted, invalid := 0, 0
	for range 100_000 {
		var b strings.Builder
		randomJSON(rng, &b, 0)
		if checkTree(t, []byte(b.String())) {
			accepted++
		} else if _, err := stdTree([]byte(b.String())); err != nil {
			invalid++
		}
	}
	if accepted < 70_000 || invalid == 0 {
		t.Errorf("parseTree accepted %d of 100 000 documents, %d were invalid: the generator should reach both", accepted, invalid)
	}
}

// TestDecodeNumbersFallsBack: what parseTree does not take is decoded, or
// refused, by encoding/json as before: trailing text after the first value,
// null into an Object, a nesting deeper than parseTree goes.
func TestDecodeNumbersFallsBack(t *testing.T) {
	var v any
	if err := DecodeNumbers([]byte(`{"a":1} trailing`), &v); err != nil || !reflect.DeepEqual(v, map[string]any{"a": json.Number("1")}) {
		t.Errorf("trailing text: %#v, %v", v, err)
	}
	var o Object
	if err := DecodeNumbers([]byte(`null`), &o); err != nil || o != nil {
		t.Errorf("null into an Object: %#v, %v", o, err)
	}
	if err := DecodeNumbers([]byte(`[1]`), &o); err == nil {
		t.Errorf("a list into an Object: %#v", o)
	}
	deep := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
	if err := DecodeNumbers([]byte(deep), &v); err != nil {
		t.Errorf("2000 levels: %v", err)
	}
	if err := DecodeNumbers([]byte(`{"a":01}`), &v); err == nil {
		t.Error("a number with a leading zero was accepted")
	}
	// Into a map that holds keys already, encoding/json merges.
	o = Object{"kept": true}
	if err := DecodeNumbers([]byte(`{"a":1}`), &o); err != nil || !reflect.DeepEqual(o, Object{"kept": true, "a": json.Number("1")}) {
		t.Errorf("into a map that is not empty: %#v, %v", o, err)
	}
}

// FuzzTreeDecoding: on any input, parseTree agrees with encoding/json or
// leaves the input to it.
func FuzzTreeDecoding(f *testing.F) {
	for _, s := range []string{`{"a":"\ud834\udd1e","b":[1,-2.5e3,{"c":null}],"a":true}`, `"\ud834\u0041"`, "\"\xff\"", `[01]`, ` {"x" : [ ] } `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkTree(t, b) })
}

func BenchmarkDecodeNumbersCDR(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"country_code":"NL","party_id":"CPO","id":"12345","currency":"EUR","charging_periods":[`)
	for i := range 8 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"start_date_time":"2026-06-29T21:%02d:09Z","dimensions":[{"type":"ENERGY","volume":1.2%d},{"type":"TIME","volume":0.25}],"tariff_id":"T1"}`, i, i)
	}
	sb.WriteString(`],"total_cost":{"excl_vat":12.50,"incl_vat":14.88},"total_energy":15.342,"last_updated":"2026-06-29T22:39:09Z"}`)
	raw := []byte(sb.String())
	b.Run("tree", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := DecodeNumbers(raw, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := stdTree(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
