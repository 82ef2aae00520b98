package core_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/core"
)

// canonicalBases are objects as partners send them, one of each kind
// Canonical stores.
var canonicalBases = []struct {
	name string
	new  func() any
	body string
}{
	{"cdr", func() any { return new(ocpi.CDR) }, `{"country_code":"IN","party_id":"CP1","id":"CDR1","start_date_time":"2026-03-01T10:00:00Z",
		"end_date_time":"2026-03-01T12:00:00Z","session_id":"S1","cdr_token":{"country_code":"DE","party_id":"EM1","uid":"T1","type":"RFID","contract_id":"C1"},
		"auth_method":"WHITELIST","cdr_location":{"id":"LOC1","address":"Road 1","city":"Pune","country":"IND","coordinates":{"latitude":"18.00001","longitude":"73.85670"},
		"evse_uid":"E1","evse_id":"IN*CP1*E1","connector_id":"1","connector_standard":"IEC_62196_T2","connector_format":"SOCKET","connector_power_type":"AC_3_PHASE"},
		"currency":"INR","charging_periods":[{"start_date_time":"2026-03-01T10:00:00Z","dimensions":[{"type":"ENERGY","volume":6.25},{"type":"TIME","volume":1}]},
		{"start_date_time":"2026-03-01T11:00:00Z","dimensions":[{"type":"ENERGY","volume":6.25},{"type":"TIME","volume":1}],"tariff_id":"T1"}],
		"total_cost":{"excl_vat":231.25,"incl_vat":272.88},"total_energy":12.5,"total_time":2,"last_updated":"2026-03-01T12:00:00Z"}`},
	{"session", func() any { return new(ocpi.Session) }, `{"country_code":"IN","party_id":"CP1","id":"S1","start_date_time":"2026-03-01T10:00:00Z","kwh":3.5,
		"cdr_token":{"country_code":"DE","party_id":"EM1","uid":"T1","type":"RFID","contract_id":"C1"},"auth_method":"WHITELIST","location_id":"LOC1",
		"evse_uid":"E1","connector_id":"1","currency":"INR","status":"ACTIVE","charging_periods":[{"start_date_time":"2026-03-01T10:00:00Z",
		"dimensions":[{"type":"ENERGY","volume":3.5}]}],"total_cost":{"excl_vat":"70.00"},"last_updated":"2026-03-01T10:30:00Z"}`},
	{"location", func() any { return new(ocpi.Location) }, `{"country_code":"IN","party_id":"CP1","id":"LOC1","publish":true,"name":"Koramangala <Hub> & Co",
		"address":"80 Feet Road","city":"Bengaluru","country":"IND","coordinates":{"latitude":"12.935242","longitude":"77.624480"},"time_zone":"Asia/Kolkata",
		"evses":[{"uid":"E1","evse_id":"IN*CP1*E1","status":"AVAILABLE","capabilities":["RFID_READER"],"connectors":[{"id":"1","standard":"IEC_62196_T2",
		"format":"SOCKET","power_type":"AC_3_PHASE","max_voltage":400,"max_amperage":32,"tariff_ids":["T1"],"last_updated":"2026-03-01T10:00:00Z"}],
		"last_updated":"2026-03-01T10:00:00Z"},{"uid":"E2","status":"CHARGING","connectors":[{"id":"1","standard":"CHADEMO","format":"CABLE",
		"power_type":"DC","max_voltage":500,"max_amperage":125,"last_updated":"2026-03-01T10:00:00Z"}],"last_updated":"2026-03-01T10:00:00Z"}],
		"operator":{"name":"Volt"},"facilities":["CAFE"],"last_updated":"2026-03-01T10:00:00Z"}`},
	{"tariff", func() any { return new(ocpi.Tariff) }, `{"country_code":"IN","party_id":"CP1","id":"T1","currency":"INR","elements":[{"price_components":
		[{"type":"ENERGY","price":18.50,"vat":18,"step_size":1}],"restrictions":{"day_of_week":["MONDAY"],"max_kwh":50.0}}],
		"tariff_alt_text":[{"language":"en","text":"18.50 a kWh"}],"last_updated":"2026-03-01T10:00:00Z"}`},
	{"token", func() any { return new(ocpi.Token) }, `{"country_code":"DE","party_id":"EM1","uid":"T1","type":"RFID","contract_id":"C1","issuer":"Volt",
		"valid":true,"whitelist":"ALLOWED","last_updated":"2026-03-01T10:00:00Z"}`},
}

// TestCanonicalOverAsTheTrees holds Canonical's walk over the typed
// encoding (canonicalOver) to the trees it replaced, byte for byte, on
// thousands of generated bodies of every kind Canonical stores: members in
// any order, with spacing, unknown members at every depth (objects, lists,
// nulls, numbers), known members in another case, a member twice, strings
// with escapes, HTML characters, U+2028 and non-ASCII letters, numbers
// with trailing zeros and exponents, timestamps with offsets, and nulls
// for optional members. It counts which way each case went: a body the
// walk leaves to the trees (a member two received members match in case
// only) must be among them, and most must take the walk.
func TestCanonicalOverAsTheTrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const cases = 4000
	over, trees, refused := 0, 0, 0
	for n := range cases {
		base := canonicalBases[n%len(canonicalBases)]
		tree, err := core.ParseObject([]byte(base.body))
		if err != nil {
			t.Fatal(err)
		}
		mutate(rng, tree, 0)
		raw := writeRandom(rng, tree)
		if rng.IntN(10) == 0 {
			raw = withDuplicate(rng, raw)
		}
		typed := base.new()
		if err := core.Decode(raw, typed); err != nil {
			refused++
			continue
		}
		var in any
		if err := core.DecodeNumbers(raw, &in); err != nil {
			t.Fatalf("%s: %v\n%s", base.name, err, raw)
		}
		strict, err := json.Marshal(typed)
		if err != nil {
			t.Fatal(err)
		}
		want, err := core.CanonicalTrees(in, strict)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := core.CanonicalOver(strict, in)
		if !ok {
			trees++
			continue
		}
		over++
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the walk wrote\n%s\nthe trees\n%s\nfrom\n%s", base.name, got, want, raw)
		}
		if viaCanonical, err := core.Canonical(raw, typed); err != nil || !bytes.Equal(viaCanonical, want) {
			t.Fatalf("%s: Canonical %s %v", base.name, viaCanonical, err)
		}
	}
	t.Logf("%d cases: %d by the walk, %d by the trees, %d refused by Decode", cases, over, trees, refused)
	if trees < 20 || over < cases*3/4 || refused > cases/5 {
		t.Errorf("%d by the walk, %d by the trees, %d refused: the generator no longer reaches every way", over, trees, refused)
	}
}

// TestCanonicalOverEdges: what the walk must leave to the trees, and what
// it writes as they do, on small typed values.
func TestCanonicalOverEdges(t *testing.T) {
	type inner struct {
		A string `json:"a"`
		B *int   `json:"b,omitempty"`
	}
	type outer struct {
		ID    string            `json:"id"`
		In    inner             `json:"in"`
		List  []inner           `json:"list"`
		Extra json.RawMessage   `json:"extra,omitempty"`
		Map   map[string]string `json:"map,omitempty"`
	}
	for _, c := range []struct {
		name   string
		raw    string
		typed  outer
		byWalk bool
	}{
		{"the same", `{"id":"x","in":{"a":"1"},"list":[]}`, outer{ID: "x", In: inner{A: "1"}, List: []inner{}}, true},
		{"unknown kept", `{"id":"x","z":[1,{"q":null}],"in":{"a":"1","y":true},"list":[{"a":"2","w":"<>"}]}`,
			outer{ID: "x", In: inner{A: "1"}, List: []inner{{A: "2"}}}, true},
		{"a case-insensitive match", `{"ID":"x","in":{"A":"1"},"list":null}`, outer{ID: "x", In: inner{A: "1"}}, true},
		{"two case-insensitive matches", `{"Id":"x","ID":"y","in":{"a":"1"},"list":null}`, outer{ID: "y", In: inner{A: "1"}}, false},
		{"lists of other lengths", `{"id":"x","in":{"a":"1"},"list":[{"a":"1","k":1}]}`, outer{ID: "x", List: []inner{{A: "1"}, {A: "2"}}}, true},
		{"an empty name", `{"id":"x","":1,"in":{"":{"":null}},"list":[]}`, outer{ID: "x", List: []inner{}}, true},
		{"a received object under a strict string", `{"id":{"deep":1},"in":{"a":"1"},"list":[]}`, outer{ID: "x", List: []inner{}}, true},
		{"HTML and U+2028 in strict", `{"id":"<a>&\u2028","in":{"a":"é\u0041"},"list":[]}`, outer{ID: "<a>&\u2028", In: inner{A: "éA"}, List: []inner{}}, true},
		{"a strict member twice", `{"id":"x"}`, outer{ID: "x", Extra: json.RawMessage(`{"k":1,"k":2}`)}, false},
		{"raw JSON in strict, sorted", `{"id":"x"}`, outer{ID: "x", Extra: json.RawMessage(`{"z":1,"a":[{"y":2,"b":3}]}`)}, true},
		{"a map in strict, two keys matching one", `{"id":"x","map":{"K":"1"}}`, outer{ID: "x", Map: map[string]string{"k": "1", "K": "2"}}, false},
		{"a map in strict taking a received key twice", `{"id":"x","map":{"k":"1"}}`, outer{ID: "x", Map: map[string]string{"K": "2"}}, true},
	} {
		var in any
		if err := core.DecodeNumbers([]byte(c.raw), &in); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		strict, err := json.Marshal(c.typed)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := core.CanonicalOver(strict, in)
		if ok != c.byWalk {
			t.Errorf("%s: by the walk %v, want %v", c.name, ok, c.byWalk)
		}
		if !ok {
			continue
		}
		want, err := core.CanonicalTrees(in, strict)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the walk wrote\n%s\nthe trees\n%s", c.name, got, want)
		}
	}
}

// mutate changes a received tree as partners do.
func mutate(rng *rand.Rand, v any, depth int) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			mutate(rng, x[k], depth+1)
			switch rng.IntN(40) {
			case 0: // another case
				if k != strings.ToUpper(k) {
					x[strings.ToUpper(k[:1])+k[1:]] = x[k]
					delete(x, k)
				}
			case 1: // both cases
				x[strings.ToUpper(k)] = x[k]
			case 5: // two other cases, not this one
				if len(k) > 1 && k != strings.ToUpper(k) && rng.IntN(8) == 0 {
					x[strings.ToUpper(k)] = x[k]
					x[strings.ToUpper(k[:1])+k[1:]] = x[k]
					delete(x, k)
				}
			case 2:
				if s, ok := x[k].(string); ok {
					x[k] = s + oddText[rng.IntN(len(oddText))]
				}
			case 3:
				if n, ok := x[k].(json.Number); ok {
					x[k] = json.Number(oddNumber(rng, string(n)))
				}
			case 4:
				if s, ok := x[k].(string); ok && strings.HasSuffix(s, "Z") && len(s) == 20 {
					x[k] = strings.TrimSuffix(s, "Z") + "+05:30"
				}
			}
		}
		switch rng.IntN(6) {
		case 0:
			x[fmt.Sprintf("x_note_%d", depth)] = "kept"
		case 1:
			x["x_list"] = []any{json.Number("1.50"), map[string]any{"b": nil, "a": "<&>"}, "\u2028"}
		case 2:
			x["x_null"] = nil
		case 3:
			x["x_obj"] = map[string]any{"Z": json.Number("1e2"), "a": []any{}}
		}
	case []any:
		for _, it := range x {
			mutate(rng, it, depth+1)
		}
	}
}

var oddText = []string{"", " <b>", " & co", "\u2028", "é", "😀", `"quoted"`, `back\slash`, "/", "\t"}

func oddNumber(rng *rand.Rand, n string) string {
	switch rng.IntN(4) {
	case 0:
		if strings.Contains(n, ".") {
			return n + "00"
		}
		return n + ".0"
	case 1:
		return n + "e0"
	case 2:
		return "-" + n
	}
	return n
}

// writeRandom writes a tree as JSON with its members in a random order,
// random spacing and strings escaped at random.
func writeRandom(rng *rand.Rand, v any) []byte {
	var b bytes.Buffer
	var write func(v any)
	space := func() {
		if rng.IntN(8) == 0 {
			b.WriteString([]string{" ", "\n", "\t", "  "}[rng.IntN(4)])
		}
	}
	str := func(s string) {
		b.WriteByte('"')
		for _, r := range s {
			switch {
			case r == '"' || r == '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			case r < 0x20:
				fmt.Fprintf(&b, `\u%04x`, r)
			case r < 0x80 && rng.IntN(30) == 0:
				fmt.Fprintf(&b, `\u%04x`, r)
			case r == '/' && rng.IntN(2) == 0:
				b.WriteString(`\/`)
			case r > 0xffff && rng.IntN(2) == 0:
				r1, r2 := surrogates(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
	}
	write = func(v any) {
		space()
		switch x := v.(type) {
		case nil:
			b.WriteString("null")
		case bool:
			fmt.Fprint(&b, x)
		case json.Number:
			b.WriteString(string(x))
		case string:
			str(x)
		case []any:
			b.WriteByte('[')
			for i, it := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				write(it)
			}
			space()
			b.WriteByte(']')
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				space()
				str(k)
				space()
				b.WriteByte(':')
				write(x[k])
			}
			space()
			b.WriteByte('}')
		}
		space()
	}
	write(v)
	return b.Bytes()
}

func surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// withDuplicate repeats the first member of the body's object with
// another value (the last one counts).
func withDuplicate(rng *rand.Rand, raw []byte) []byte {
	i := bytes.IndexByte(raw, '{')
	return append(append(append([]byte{}, raw[:i+1]...), fmt.Sprintf(`"x_twice":%d,"x_twice":%d,`, rng.IntN(9), rng.IntN(9))...), raw[i+1:]...)
}

// FuzzCanonicalOver: for any body a kind decodes, the walk writes what the
// trees write, or leaves it to them.
func FuzzCanonicalOver(f *testing.F) {
	for _, b := range canonicalBases {
		f.Add(b.body)
	}
	f.Add(`{"Id":"x","ID":"y"}`)
	f.Add(`{"country_code":"IN","x":{"a":[1,2,{"B":null}]},"Party_ID":"\u0041B"}`)
	f.Fuzz(func(t *testing.T, body string) {
		for _, base := range canonicalBases {
			typed := base.new()
			if core.Decode([]byte(body), typed) != nil {
				continue
			}
			var in any
			if core.DecodeNumbers([]byte(body), &in) != nil {
				t.Fatalf("%s decoded, not as a tree: %q", base.name, body)
			}
			strict, err := json.Marshal(typed)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := core.CanonicalOver(strict, in)
			if !ok {
				continue
			}
			if want, err := core.CanonicalTrees(in, strict); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: the walk wrote\n%s\nthe trees\n%s (%v)\nfrom %q", base.name, got, want, err, body)
			}
		}
	})
}
