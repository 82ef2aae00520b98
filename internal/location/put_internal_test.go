package location

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// genLocation writes a location as a partner might send it: members in any
// order, some known members in another case, unknown members (nested,
// escaped, numbers with exponents), EVSEs and connectors with their own
// timestamps, in one of several spellings, compact or indented. Some are
// invalid (a status outside the enum, a timestamp that does not parse).
func genLocation(rng *rand.Rand) []byte {
	stamp := func() any {
		switch rng.IntN(60) {
		case 0:
			return "not a time"
		case 1:
			return 17
		case 2, 3, 4, 5, 6, 7:
			return fmt.Sprintf("2026-11-%02dT10:%02d:00.5Z", 1+rng.IntN(28), rng.IntN(60))
		case 8, 9, 10, 11, 12, 13:
			return fmt.Sprintf("2026-11-%02dT10:%02d:00", 1+rng.IntN(28), rng.IntN(60))
		}
		return fmt.Sprintf("2026-11-%02dT10:%02d:00Z", 1+rng.IntN(28), rng.IntN(60))
	}
	name := func(n string) string {
		if rng.IntN(6) == 0 {
			return strings.ToUpper(n[:1]) + n[1:]
		}
		return n
	}
	unknown := func(m map[string]any) {
		switch rng.IntN(5) {
		case 0:
			m["x_note"] = "caf\u00e9 <b> \"quoted\" \u2028"
		case 1:
			m["x_vendor"] = map[string]any{"last_updated": stamp(), "evses": []any{map[string]any{"last_updated": stamp()}}, "n": json.Number("1e3")}
		case 2:
			m["x_power"] = json.Number("22.50")
		}
	}
	var evses []any
	for i := range rng.IntN(4) {
		var conns []any
		for j := range 1 + rng.IntN(2) {
			c := map[string]any{name("id"): fmt.Sprint(j + 1), "standard": []string{"IEC_62196_T2", "CHADEMO"}[rng.IntN(2)], "format": "SOCKET",
				"power_type":  []string{"AC_3_PHASE", "AC_1_PHASE", "AC_2_PHASE", "AC_2_PHASE_SPLIT", "DC"}[rng.IntN(5)],
				"max_voltage": 230, "max_amperage": json.Number([]string{"32", "16", "32", "16", "32", "16", "32", "16", "32", "3.2e1"}[rng.IntN(10)]), "last_updated": stamp()}
			switch rng.IntN(4) {
			case 0:
				c["tariff_ids"] = []any{fmt.Sprintf("T%d", rng.IntN(3))}
			case 1:
				c["tariff_ids"] = []any{"t1", fmt.Sprintf("T%d", rng.IntN(3))}
			}
			if rng.IntN(4) == 0 {
				c["max_electric_power"] = 50000 + rng.IntN(3)*11000
			}
			unknown(c)
			conns = append(conns, c)
		}
		status := []string{"AVAILABLE", "CHARGING", "REMOVED", "BLOCKED", "AVAILABLE", "CHARGING", "available"}[rng.IntN(7)]
		e := map[string]any{"uid": fmt.Sprintf("E%d", i+1), "evse_id": fmt.Sprintf("IN*CP1*E%d", i+1), name("status"): status,
			"last_updated": stamp(), "connectors": conns}
		if rng.IntN(3) == 0 {
			e["uid"] = fmt.Sprintf("e%d", i+1)
		}
		unknown(e)
		evses = append(evses, e)
	}
	loc := map[string]any{"country_code": "NL", "party_id": "CP1", "id": "LOC1", name("publish"): rng.IntN(4) != 0,
		name("name"): "Station", "address": "Main Street 1", "city": "Bengaluru", "country": "IND",
		"coordinates": map[string]any{"latitude": "12.97160", "longitude": "77.59460"},
		"time_zone":   "Asia/Kolkata", "last_updated": stamp()}
	if evses != nil || rng.IntN(3) == 0 {
		loc["evses"] = evses
	}
	unknown(loc)
	var b bytes.Buffer
	writeShuffled(&b, loc, rng)
	if rng.IntN(4) == 0 {
		var out bytes.Buffer
		_ = json.Indent(&out, b.Bytes(), "", "  ")
		return out.Bytes()
	}
	return b.Bytes()
}

// writeShuffled writes v as JSON with each object's members in a random order.
func writeShuffled(b *bytes.Buffer, v any, rng *rand.Rand) {
	writeJSON(b, v, func(keys []string) {
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	}, "")
}

// jsonbText writes a canonical document as PostgreSQL renders a JSONB
// value: keys ordered by length, then bytes, a space after each ':' and ','.
func jsonbText(t *testing.T, body []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	writeJSON(&b, map[string]any(mustParse(t, body)), func(keys []string) {
		slices.SortFunc(keys, func(a, b string) int {
			if len(a) != len(b) {
				return len(a) - len(b)
			}
			return strings.Compare(a, b)
		})
	}, " ")
	return b.Bytes()
}

// writeJSON writes v as JSON text, each object's keys in the order order
// puts them (sorted before), sep after each ':' and ','.
func writeJSON(b *bytes.Buffer, v any, order func(keys []string), sep string) {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		order(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString("," + sep)
			}
			kb, _ := ocpi.MarshalObject(k)
			b.Write(kb)
			b.WriteString(":" + sep)
			writeJSON(b, v[k], order, sep)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, it := range v {
			if i > 0 {
				b.WriteString("," + sep)
			}
			writeJSON(b, it, order, sep)
		}
		b.WriteByte(']')
	default:
		vb, _ := ocpi.MarshalObject(v)
		b.Write(vb)
	}
}

// TestPutLocationAsTheTrees: a whole location's PUT decides and stores what
// it did when it merged trees. On 1 200 generated bodies, and pairs of them
// as stored and sent:
//   - the stored document (the canonical form of the body as received) is
//     the old one (the received tree written out, decoded and put in
//     canonical form), and a body is refused by both or by neither;
//   - the push, the stored document as it is, is the document written again;
//   - the newest timestamp read from the bytes (compact and as JSONB renders
//     them) is the tree's, and so are the EVSE removal check and the index
//     rows (what the evses and tariff_refs tables hold);
//   - a row holds a body when it holds it in either rendering, and never
//     holds another one.
//
// The generator never sends a member under two spellings at once: there the
// old way could validate one value and store the other (putLocation).
func TestPutLocationAsTheTrees(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(17, 40))
	var sent [][]byte
	ways := map[string]int{}
	for range 1200 {
		raw := genLocation(rng)
		var loc ocpi.Location
		errNew := ocpi.DecodeValid(raw, &loc)
		var body []byte
		if errNew == nil {
			var err error
			if body, err = ocpi.Canonical(raw, &loc); err != nil {
				t.Fatal(err)
			}
		}
		doc, err := ocpi.ParseObject(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		_, old, errOld := finalize(doc)
		if (errNew == nil) != (errOld == nil) {
			t.Fatalf("%s:\nrefused now: %v\nrefused before: %v", raw, errNew, errOld)
		}
		if errNew != nil {
			ways["refused"]++
			continue
		}
		if !bytes.Equal(body, old) {
			t.Fatalf("%s:\nstored now    %s\nstored before %s", raw, body, old)
		}
		ways["stored"]++
		if again, err := ocpi.MarshalObject(mustParse(t, body)); err != nil || !bytes.Equal(again, body) {
			t.Fatalf("the canonical form written again differs:\n%s\n%s", body, again)
		}
		jb := jsonbText(t, body)
		wantRows, wantRefs := evseRows(&loc), tariffRefs(&loc)
		for _, b := range [][]byte{body, jb} {
			rows, refs := indexIn(b)
			if !reflect.DeepEqual(rows, wantRows) || !reflect.DeepEqual(refs, wantRefs) {
				t.Fatalf("%s: index rows\n%v %v\ndecoded\n%v %v", b, rows, refs, wantRows, wantRefs)
			}
			if got, want := newestIn(b), newestOf(mustParse(t, b)); !got.Equal(want.Time) {
				t.Fatalf("%s: newest %v, the tree's %v", b, got, want)
			}
			if !(&stored{body: b}).holds(body) {
				t.Fatalf("a row of\n%s\ndoes not hold\n%s", b, body)
			}
		}
		for _, prev := range sent[max(0, len(sent)-3):] {
			if bytes.Equal(prev, body) {
				continue
			}
			ways["compared"]++
			for _, b := range [][]byte{prev, jsonbText(t, prev)} {
				if (&stored{body: b}).holds(body) {
					t.Fatalf("a row of\n%s\nholds another body\n%s", b, body)
				}
				got, want := keepsEVSEsIn(b, body, "evses"), keepsEVSEs(mustParse(t, b), mustParse(t, body), "evses")
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("EVSE check of\n%s\nagainst\n%s\n%v, the trees' %v", body, b, got, want)
				}
				if got != nil {
					ways["an EVSE removed"]++
				}
			}
		}
		sent = append(sent, body)
	}
	t.Logf("ways: %v", ways)
	for _, w := range []string{"refused", "stored", "compared", "an EVSE removed"} {
		if ways[w] == 0 {
			t.Errorf("no body went the way %q", w)
		}
	}
}

func mustParse(t *testing.T, b []byte) ocpi.Object {
	t.Helper()
	doc, err := ocpi.ParseObject(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return doc
}

// TestCompact: white space between tokens, and only there, makes a text
// not compact.
func TestCompact(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text string
		want bool
	}{
		{`{"a":"b c","d":[1,2]}`, true},
		{`{"a":"b\" c","d":"\\"}`, true},
		{`{"a": "b"}`, false},
		{`{"a":"b\\", "c":1}`, false},
		{"{\"a\":1,\n\"b\":2}", false},
		{`{"a":"\\\" x"}`, true},
	} {
		if got := compact([]byte(c.text)); got != c.want {
			t.Errorf("compact(%s) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestPutEVSEInPlaceAsTheTree: an EVSE's PUT applied to the stored bytes
// decides and stores what the tree way does. On generated stored locations
// and EVSEs (an EVSE the location holds, named in another case, or a new
// one; older, as old and newer than the stored one): the same staleness
// answers, the same new-or-not, the same document byte for byte, the same
// refusals of the result, the pushed EVSE as the tree way writes it, and the
// stored bytes untouched. A row in JSONB's rendering, or a location without
// an EVSE list, is left to the tree way.
func TestPutEVSEInPlaceAsTheTree(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 28))
	ways := map[string]int{}
	var storedBodies [][]byte
	var items []any
	for len(storedBodies) < 150 {
		raw := genLocation(rng)
		var loc ocpi.Location
		if ocpi.DecodeValid(raw, &loc) != nil {
			continue
		}
		body, err := ocpi.Canonical(raw, &loc)
		if err != nil {
			t.Fatal(err)
		}
		storedBodies = append(storedBodies, body)
		var generic map[string]any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&generic); err != nil {
			t.Fatal(err)
		}
		for k, v := range generic {
			if strings.EqualFold(k, "evses") {
				list, _ := v.([]any)
				items = append(items, list...)
			}
		}
	}
	for n := range 1500 {
		stored := storedBodies[rng.IntN(len(storedBodies))]
		it, _ := items[rng.IntN(len(items))].(map[string]any)
		uid := "E9"
		if uids := gjsonUIDs(stored); len(uids) > 0 && rng.IntN(4) != 0 {
			uid = uids[rng.IntN(len(uids))]
		}
		if rng.IntN(3) == 0 {
			uid = strings.ToLower(uid)
		}
		it = maps.Clone(it)
		delete(it, "Uid")
		it["uid"] = uid
		if rng.IntN(20) == 0 {
			it["capabilities"] = []any{"NOT_A_CAPABILITY"}
		}
		var b bytes.Buffer
		writeShuffled(&b, it, rng)
		r := Ref{CountryCode: "NL", PartyID: "CP1", LocationID: "LOC1", EVSEUID: strings.ToUpper(uid)}
		var e ocpi.EVSE
		item, canon, err := decodeItem(b.Bytes(), &e, "uid", func() string { return e.UID }, "evse_uid", r.EVSEUID)
		if err != nil {
			ways["item refused"]++
			continue
		}
		before := bytes.Clone(stored)
		lu, _ := item["last_updated"].(string)
		next, created, ok, errNew := putEVSEInPlace(stored, r, canon, lu, newestOf(item))
		if !bytes.Equal(stored, before) {
			t.Fatal("the stored bytes changed")
		}
		if jb := jsonbText(t, stored); n%10 == 0 {
			if _, _, ok, err := putEVSEInPlace(jb, r, canon, lu, newestOf(item)); ok || err != nil {
				t.Fatalf("a row in JSONB's rendering was taken in place (%v)", err)
			}
		}
		doc := mustParse(t, stored)
		createdOld, errOld := putItem(doc, r, maps.Clone(item))
		if !ok {
			if gjson.GetBytes(stored, "evses").IsArray() {
				t.Fatalf("%s: left to the tree", stored)
			}
			ways["left to the tree"]++
			continue
		}
		if fmt.Sprint(errNew) != fmt.Sprint(errOld) {
			t.Fatalf("%s with %s:\nnow %v\nbefore %v", stored, canon, errNew, errOld)
		}
		if errNew != nil {
			ways["stale"]++
			continue
		}
		if created != createdOld {
			t.Fatalf("%s with %s: new %v, the tree says %v", stored, canon, created, createdOld)
		}
		_, old, errOldValid := finalize(doc)
		var loc ocpi.Location
		errNewValid := ocpi.DecodeValid(next, &loc)
		if (errNewValid == nil) != (errOldValid == nil) {
			t.Fatalf("%s:\nrefused now %v\nbefore %v", next, errNewValid, errOldValid)
		}
		if errNewValid != nil {
			ways["result refused"]++
			continue
		}
		if !bytes.Equal(next, old) {
			t.Fatalf("stored now\n%s\nbefore\n%s", next, old)
		}
		pushed, err := ocpi.MarshalObject(findItem(mustParse(t, old)["evses"], "uid", r.EVSEUID))
		if err != nil || !bytes.Equal(pushed, canon) {
			t.Fatalf("pushed %s, the tree way %s", canon, pushed)
		}
		if created {
			ways["added"]++
		} else {
			ways["replaced"]++
		}
	}
	t.Logf("ways: %v", ways)
	for _, w := range []string{"item refused", "left to the tree", "stale", "added", "replaced"} {
		if ways[w] == 0 {
			t.Errorf("no PUT went the way %q", w)
		}
	}
}

// gjsonUIDs returns the uids of a stored location's EVSEs.
func gjsonUIDs(body []byte) []string {
	var out []string
	for _, u := range gjson.GetBytes(body, "evses.#.uid").Array() {
		out = append(out, u.Str)
	}
	return out
}
