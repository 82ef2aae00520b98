package location

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFitsPublishedAsDecoded: the check without decoding never changes what
// FitPublished returns. On generated locations (address and state under,
// at and over their lengths, in several characters and escapes, a key
// escaped, written twice, nested, not strings; compact and as PostgreSQL's
// jsonb writes them) and on cuts of them, FitPublished returns what
// decoding does.
func TestFitsPublishedAsDecoded(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	str := func(n int) string {
		var sb strings.Builder
		ascii := rng.IntN(2) == 0 // else characters of two and six bytes among the letters
		for range n {
			switch c := rng.IntN(6); {
			case ascii || c > 2:
				sb.WriteByte('a' + byte(rng.IntN(26)))
			case c == 0:
				sb.WriteString("ü")
			case c == 1:
				sb.WriteString(`\u00fc`)
			default:
				sb.WriteString(`\"`)
			}
		}
		return `"` + sb.String() + `"`
	}
	value := func(max int) string {
		switch rng.IntN(8) {
		case 0:
			return "null"
		case 1:
			return "12345"
		case 2:
			return `{"address":` + str(max+5) + `}`
		default:
			return str(max - 3 + rng.IntN(7))
		}
	}
	var fits, cut int
	for range 20000 {
		sep := []string{":", ": "}[rng.IntN(2)]
		comma := []string{",", ", "}[rng.IntN(2)]
		var members []string
		for range rng.IntN(6) {
			switch k := rng.IntN(6); k {
			case 0:
				members = append(members, `"address"`+sep+value(PublishedAddressMax))
			case 1:
				key := []string{`"state"`, `"st\u0061te"`}[rng.IntN(2)]
				members = append(members, key+sep+value(PublishedStateMax))
			case 2:
				members = append(members, `"evses"`+sep+`[{"uid":"E1","address":`+str(60)+`,"state":`+str(30)+`}]`)
			case 3:
				members = append(members, `"name"`+sep+`"address state"`)
			default:
				members = append(members, fmt.Sprintf(`"k%d"%s%d.50`, k, sep, rng.IntN(100)))
			}
		}
		body := []byte("{" + strings.Join(members, comma) + "}")
		if rng.IntN(10) == 0 {
			body = body[:rng.IntN(len(body)+1)]
		}
		var probe any
		valid := json.Unmarshal(body, &probe) == nil
		got, want := FitPublished(body), cutPublished(body)
		if !bytes.Equal(got, want) {
			t.Fatalf("FitPublished(%s) = %s, decoding gives %s", body, got, want)
		}
		if valid && bytes.Equal(want, body) {
			fits++
		} else if valid {
			cut++
		}
	}
	if fits < 2000 || cut < 2000 {
		t.Fatalf("%d valid bodies kept, %d cut: the generator does not reach both", fits, cut)
	}
}

// BenchmarkFitsPublished: the check on a location as SQLite returns it
// (compact, keys sorted) and as PostgreSQL does (jsonb: a space after each
// colon and comma, keys shortest first).
func BenchmarkFitsPublished(b *testing.B) {
	evse := `{"uid":"E1","status":"AVAILABLE","connectors":[{"id":"1","standard":"IEC_62196_T2","format":"SOCKET","power_type":"AC_3_PHASE","max_voltage":230,"max_amperage":32,"tariff_ids":["T1"],"last_updated":"2026-02-01T00:00:00Z"}],"last_updated":"2026-02-01T00:00:00Z"}`
	compact := `{"address":"Bench Road 1","city":"Pune","coordinates":{"latitude":"18.00001","longitude":"73.85670"},"country":"IND","country_code":"NL","evses":[` +
		evse + `,` + evse + `],"id":"D000001","last_updated":"2026-02-01T00:00:00Z","party_id":"BCP","publish":true,"time_zone":"Asia/Kolkata"}`
	jsonb := `{"id": "D000001", "city": "Pune", "evses": [` + strings.ReplaceAll(strings.ReplaceAll(evse, `":`, `": `), `,"`, `, "`) + `, ` +
		strings.ReplaceAll(strings.ReplaceAll(evse, `":`, `": `), `,"`, `, "`) + `], "address": "Bench Road 1", "country": "IND", "publish": true, "party_id": "BCP", "time_zone": "Asia/Kolkata", "coordinates": {"latitude": "18.00001", "longitude": "73.85670"}, "country_code": "NL", "last_updated": "2026-02-01T00:00:00Z"}`
	for _, c := range []struct{ name, body string }{{"compact", compact}, {"jsonb", jsonb}} {
		body := []byte(c.body)
		if !json.Valid(body) || !fitsPublished(body) {
			b.Fatalf("%s: not a valid location that fits", c.name)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				fitsPublished(body)
			}
		})
	}
}
