package traffic

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"testing"
)

// TestHeaderJSONAsEncodingJSON: the stored header is byte for byte what
// encoding/json makes of the redacted header, for awkward and random
// values (control bytes, HTML characters, line separators, invalid UTF-8).
func TestHeaderJSONAsEncodingJSON(t *testing.T) {
	awkward := []string{"", "plain", `quo"te`, `back\slash`, "<script>&amp;</script>", "tab\tnew\nline\rcr", "\b\f\x00\x1f\x7f",
		"line\u2028sep\u2029para", "bad \xff\xfe utf8", "émoji 🚗 ₹", "\xe2\x80", "end\\"}
	check := func(h http.Header) {
		t.Helper()
		want, err := json.Marshal(RedactHeader(h))
		if err != nil {
			t.Fatal(err)
		}
		if got := headerJSON(h); got != string(want) {
			t.Fatalf("headerJSON(%q)\n got %s\nwant %s", h, got, want)
		}
	}
	for _, v := range awkward {
		check(http.Header{"X-Value": {v}, "Authorization": {"Token " + v}, v: {v, v}})
	}
	check(http.Header{"X-Empty": {}, "X-Nil": nil, "Content-Type": {"application/json"}})
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		h := http.Header{}
		for range 1 + rng.IntN(4) {
			var vs []string
			for range rng.IntN(3) {
				b := make([]byte, rng.IntN(12))
				for i := range b {
					b[i] = byte(rng.IntN(256))
				}
				vs = append(vs, string(b))
			}
			k := make([]byte, 1+rng.IntN(6))
			for i := range k {
				k[i] = byte(rng.IntN(256))
			}
			h[string(k)] = vs
		}
		check(h)
	}
}

// BenchmarkHeaderJSON encodes a push's request header, directly and
// through encoding/json.
func BenchmarkHeaderJSON(b *testing.B) {
	h := http.Header{"Authorization": {"Token c2VjcmV0"}, "Content-Type": {"application/json"}, "X-Request-Id": {"3f1c9a7e-1b2d-4c5e-8f90-123456789abc"},
		"X-Correlation-Id": {"9a8b7c6d-5e4f-3a2b-1c0d-abcdef123456"}, "Ocpi-To-Country-Code": {"DE"}, "Ocpi-To-Party-Id": {"E01"},
		"Ocpi-From-Country-Code": {"IN"}, "Ocpi-From-Party-Id": {"HUB"}, "Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			_ = headerJSON(h)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			v, _ := json.Marshal(RedactHeader(h))
			_ = string(v)
		}
	})
}
