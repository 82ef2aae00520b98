package traffic

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// The three passes over a body that scanBody replaced (validity by
// gjson.ValidBytes, the keys, the facts), kept as the reference it is held
// to.

// refKeysMaySecret reports whether a valid JSON body may hold something the
// walk would redact or mask; a false answer is certain. The walk redacts
// and masks by key (secretKey, personalKey) and masks values with an '@'
// (looksLikeEmail), so only keys are looked at for the fragments of
// sensitive, matched case-insensitively, with '@' and escapes (which could
// spell either) anywhere. It finds the keys without parsing: with no
// backslash in the body no string holds a quote, so every quote that is
// followed by a colon closes a key, and the quote before it opens it. On a
// directory page of 120 KB, looking for each fragment anywhere in a
// lower-cased copy had been half of what recording the exchange cost.
//
// Only the keys in the first keep bytes are looked at, when no more of the
// body is stored: a key beyond them is cut off with its value, and one cut
// in two leaves its value out. An '@' is looked for in the whole body: a
// value cut before its '@' would otherwise be stored unmasked.
func refKeysMaySecret(b []byte, keep int) bool {
	if bytes.IndexByte(b, '\\') >= 0 || bytes.IndexByte(b, '@') >= 0 {
		return true
	}
	b = b[:min(keep, len(b))]
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], ':')
		if j < 0 {
			return false
		}
		colon := i + j
		i = colon + 1
		end := colon - 1
		for end >= 0 && (b[end] == ' ' || b[end] == '\t' || b[end] == '\n' || b[end] == '\r') {
			end--
		}
		if end < 0 || b[end] != '"' {
			continue // a colon inside a value
		}
		if keyMaySecret(b[bytes.LastIndexByte(b[:end], '"')+1 : end]) {
			return true
		}
	}
}

// refScanValidFacts read the facts of a valid body that needs no redaction:
// its top-level ids, the envelope's status_code and its data's ids, keys
// read as encoding/json reads them (case-insensitively, the last of a
// repeated key; a status_code that is not a whole number left out). It reads
// the body through a string view (bodyView) instead of gjson.ParseBytes'
// copy: on a directory page the copy, a large allocation per exchange, cost
// more than the scan. The ids it keeps are copied (refIDsOf).
func refScanValidFacts(b []byte) facts {
	var f facts
	if b[0] != '{' {
		return f
	}
	var data gjson.Result
	f.objectIDs = refIDsOf(gjson.Parse(bodyView(b)), func(key string, v gjson.Result) {
		switch key {
		case "status_code":
			f.statusCode = 0
			if v.Type == gjson.Number {
				if n, err := strconv.ParseInt(v.Raw, 10, 64); err == nil {
					f.statusCode = int(n)
				}
			}
		case "data":
			data = v
		}
	})
	if data.IsObject() {
		f.objectIDs = append(f.objectIDs, refIDsOf(data, nil)...)
	}
	return f
}

// refIDsOf lists the string ids under factKeys of the object o, passing every
// other key to other.
func refIDsOf(o gjson.Result, other func(key string, v gjson.Result)) []string {
	var ids [len(factKeys)]string
	o.ForEach(func(k, v gjson.Result) bool {
		key := strings.ToLower(k.Str)
		for i, fk := range factKeys {
			if key == fk {
				ids[i] = ""
				if v.Type == gjson.String {
					ids[i] = strings.Clone(v.Str) // not a view of the body
				}
				return true
			}
		}
		if other != nil {
			other(key, v)
		}
		return true
	})
	var out []string
	for _, s := range ids {
		if s != "" && len(s) <= 64 {
			out = append(out, s)
		}
	}
	return out
}

// scanFacts is what the recorder reads of a body's facts: those of a valid
// body, nothing of another.
func scanFacts(b []byte) facts {
	var sc scanned
	if !scanBody(b, len(b), &sc) {
		return facts{}
	}
	return sc.facts()
}

// scanMaySecret is the scan's answer for a body of which keep bytes are
// stored.
func scanMaySecret(b []byte, keep int) bool {
	var sc scanned
	scanBody(b, keep, &sc)
	return sc.maySecret
}

// checkScanAsPasses fails t when the scan of b tells anything the three
// passes did not: validity (gjson's, and encoding/json's), for a valid
// body whether it may hold a secret with every keep, and its facts.
func checkScanAsPasses(t *testing.T, b []byte) (valid bool) {
	t.Helper()
	var sc scanned
	valid = scanBody(b, len(b), &sc)
	if want := gjson.ValidBytes(b); valid != want {
		t.Fatalf("scanBody(%q) valid = %v, gjson.ValidBytes %v", b, valid, want)
	}
	if want := json.Valid(b); valid != want {
		t.Fatalf("scanBody(%q) valid = %v, json.Valid %v", b, valid, want)
	}
	if !valid {
		return false
	}
	for _, keep := range []int{0, 1, len(b) / 3, len(b) / 2, len(b) - 1, len(b), len(b) + 10} {
		if got, want := scanMaySecret(b, keep), refKeysMaySecret(b, keep); got != want {
			t.Fatalf("scanBody(%q, keep %d) maySecret = %v, the key pass %v", b, keep, got, want)
		}
	}
	if got, want := sc.facts(), refScanValidFacts(b); got.statusCode != want.statusCode || !slices.Equal(got.objectIDs, want.objectIDs) {
		t.Fatalf("scanBody(%q) facts %+v, the facts pass %+v", b, got, want)
	}
	return true
}

// mutate breaks a body the ways a partner's can be broken: cut short, a
// byte changed, dropped or doubled, a control character or a backslash put
// in.
func mutate(rng *rand.Rand, b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	b = bytes.Clone(b)
	i := rng.IntN(len(b))
	switch rng.IntN(6) {
	case 0:
		return b[:i]
	case 1:
		const set = "{}[]\",:\\ \x01\tetfn-0.1eE+u"
		b[i] = set[rng.IntN(len(set))]
		return b
	case 2:
		return append(b[:i], b[i+1:]...)
	case 3:
		return append(b[:i+1], b[i:]...)
	case 4:
		return append(b[:i], append([]byte{byte(rng.IntN(0x20))}, b[i:]...)...)
	default:
		return append(b[:i], append([]byte(`\`), b[i:]...)...)
	}
}

// eachBroken calls fn with each of bodies, then with it broken three times
// in a row (mutate).
func eachBroken(rng *rand.Rand, bodies []string, fn func(b []byte)) {
	for _, s := range bodies {
		b := []byte(s)
		for k := range 4 {
			if k > 0 {
				b = mutate(rng, b)
			}
			fn(b)
		}
	}
}

// TestScanBodyAsThreePasses holds the one pass to the three it replaced
// on random bodies (keys and values carrying the fragments in every case,
// escapes, e-mail addresses), envelopes with ids, status codes and data in
// every shape, a directory page, numbers and literals at their edges, and
// each of them broken; and counts that both valid and broken bodies were
// reached.
func TestScanBodyAsThreePasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	bodies := []string{
		`{}`, `[]`, ` {"a" : [ ] , "b":{ } } `, `"s"`, `0`, `-0`, `-`, `01`, `1.`, `1.5e`, `1e+5`, `-0.0E-0`, `2E3`,
		`true`, `tru`, `nul`, `null `, `falsey`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{1:2}`, `{"a":1}}`, `[[[]]]`,
		`{"id":"\u0041","data":{"uid":"u\"1"}}`, `{"\u0069d":"escaped key"}`, `{"id":"x\ud800y"}`, "{\"id\":\"tab\there\"}",
		`{"status_code":-5,"data":{"id":"d"},"data":[1]}`, `{"data":[1],"data":{"cdr_id":"c"}}`, `{"Data":{"ID":"up"}}`,
		`{"status_code":1e3}`, `{"status_code":"1000"}`, `{"status_code":99999999999999999999}`,
		`{"İd":"dotted capital i lower-cases to id"}`, `{"data":{"data":{"id":"deep"}}}`, `[{"id":"in an array"}]`,
		string(benchPage()), strings.Repeat("[", 100) + strings.Repeat("]", 100),
	}
	for range 3000 {
		bodies = append(bodies, randomBody(rng, 0))
	}
	keys := append(slices.Clone(factKeys[:]), "status_code", "data", "Data", "other", "Id", "STATUS_CODE", "token")
	values := []string{`"v1"`, `"v2"`, `7`, `-3`, `1.0`, `null`, `true`, `[]`, `{"id":"nested","status_code":5}`, `1000`,
		`"` + strings.Repeat("x", 65) + `"`, `{"uid":"in data?","order_id":"o"}`}
	for range 2000 {
		bodies = append(bodies, randomObject(rng, keys, values))
	}
	var valid, broken int
	eachBroken(rng, bodies, func(b []byte) {
		if checkScanAsPasses(t, b) {
			valid++
		} else {
			broken++
		}
	})
	// Deeper than encoding/json's limit, the scan answers as gjson does, on
	// a stack of its own.
	for _, deep := range []string{strings.Repeat("[", 200_000) + strings.Repeat("]", 200_000),
		strings.Repeat(`{"a":`, 100_000) + "1" + strings.Repeat("}", 99_999)} {
		var sc scanned
		if got, want := scanBody([]byte(deep), len(deep), &sc), gjson.ValidBytes([]byte(deep)); got != want {
			t.Errorf("a body %d bytes deep: scanBody %v, gjson %v", len(deep), got, want)
		}
	}
	if valid < 5000 || broken < 5000 {
		t.Fatalf("%d valid and %d broken bodies: the generator does not reach both", valid, broken)
	}
}

// FuzzScanBody holds the one pass to the three it replaced on any input.
func FuzzScanBody(f *testing.F) {
	for _, s := range []string{`{"status_code":1000,"data":{"id":"L1"}}`, `[{"token":"x"}]`, `{"a":"b@c"}`, `{"a":1,}`, `"\u00e9"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkScanAsPasses(t, b)
	})
}

// TestScanSkipsWhatIsNotStored holds the scan of a body of which keep
// bytes are stored to the scan of every byte (scanned.whole), on the bodies
// of TestScanBodyAsThreePasses, envelopes whose facts stand after a long
// data, and each of them broken, at keeps from 0 to past the end: a valid
// body is valid either way, with the same answer on secrets and the same
// facts; a body the skipping scan takes as valid has the same answer on
// secrets, so the bytes stored are checked alike; and nothing valid becomes
// invalid. It counts that skipping was reached, on valid and broken bodies.
func TestScanSkipsWhatIsNotStored(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	keys := append(slices.Clone(factKeys[:]), "status_code", "data", "other", "token", "Id")
	values := []string{`"v1"`, `7`, `null`, `[]`, `1000`, `{"id":"nested","status_code":5}`,
		`{"uid":"in data","evses":[{"uid":"E1","connectors":[{"id":"1"}]},{"uid":"E2"}],"order_id":"o"}`,
		`[{"id":"a","x":[1,2,{"y":"z"}]},{"id":"b"}]`, `"` + strings.Repeat("x", 90) + `"`}
	bodies := []string{string(benchPage()),
		`{"data":{"evses":[` + strings.Repeat(`{"uid":"E","connectors":[{"id":"1"}]},`, 50) + `{}],"id":"LOC1","token":"t"},"status_code":1000}`,
		`{"data":[` + strings.Repeat(`{"id":"x","tariff_ids":["a","b"]},`, 60) + `{}],"status_code":2001,"id":"after"}`}
	for range 2000 {
		bodies = append(bodies, randomBody(rng, 0), randomObject(rng, keys, values))
	}
	var skippedValid, skippedBroken int
	eachBroken(rng, bodies, func(b []byte) {
		for _, keep := range []int{0, 1, len(b) / 5, len(b) / 2, len(b) - 7, len(b) - 1, len(b), len(b) + 1} {
			whole := scanned{whole: true}
			wantValid := scanBody(b, keep, &whole)
			var sc scanned
			valid := scanBody(b, keep, &sc)
			switch {
			case wantValid && !valid:
				t.Fatalf("scanBody(%q, keep %d): invalid, valid read whole", b, keep)
			case valid && sc.maySecret != whole.maySecret:
				t.Fatalf("scanBody(%q, keep %d) maySecret = %v, read whole %v", b, keep, sc.maySecret, whole.maySecret)
			case wantValid:
				if got, want := sc.facts(), whole.facts(); got.statusCode != want.statusCode || !slices.Equal(got.objectIDs, want.objectIDs) {
					t.Fatalf("scanBody(%q, keep %d) facts %+v, read whole %+v", b, keep, got, want)
				}
			}
			if valid && keep < len(b) && !sc.maySecret {
				if wantValid {
					skippedValid++
				} else {
					skippedBroken++
				}
			}
		}
	})
	if skippedValid < 1000 || skippedBroken < 100 {
		t.Fatalf("skipping reached %d valid and %d broken bodies: the generator does not reach both", skippedValid, skippedBroken)
	}
	t.Logf("skipping reached %d valid and %d broken bodies", skippedValid, skippedBroken)
}

// TestPageRecordedFromWhatIsStored: a directory page longer than what is
// stored is recorded as before when it is valid, with its status_code read
// after the data; a fragment of a sensitive key in the part not stored
// changes nothing; one in the part stored sends it to the walk; and a page
// broken only inside the data after the stored part is stored cut, as a
// valid one is (a whole scan stored it too, or noted it unparseable when a
// fragment stood anywhere in it).
func TestPageRecordedFromWhatIsStored(t *testing.T) {
	page := benchPage()
	keep := len(page) / 2
	tail := bytes.LastIndex(page, []byte(`"status_code"`))
	withTail := func(s string) []byte { return append(bytes.Clone(page[:tail]), s...) }
	// A colon doubled in a location past the stored part: the skipped data.
	at := keep + bytes.Index(page[keep:], []byte(`"uid":`)) + len(`"uid":`)
	broken := func(b []byte) []byte { return append(append(bytes.Clone(b[:at]), ':'), b[at:]...) }
	for _, c := range []struct {
		name string
		body []byte
		same bool // stored as it is
	}{
		{"valid", page, true},
		{"a token key after the stored part", withTail(`"token":"abc","status_code":1000}`), true},
		{"broken after the stored part", broken(page), true},
		{"broken, with a token key, after the stored part", broken(withTail(`"token":"abc","status_code":1000}`)), true},
		{"a token key in the stored part", append([]byte(`{"token":"abc",`), page[1:]...), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			red, f, err := redactBody(c.body, "application/json", keep)
			if err != nil {
				t.Fatalf("redactBody: %v", err)
			}
			if same := bytes.Equal(red, c.body); same != c.same {
				t.Fatalf("stored as it is: %v, want %v", same, c.same)
			}
			if !c.same && bytes.Contains(red, []byte("abc")) {
				t.Fatalf("the token is stored: %.80s", red)
			}
			if f.statusCode != 1000 {
				t.Fatalf("status_code %d, want 1000", f.statusCode)
			}
		})
	}
}

// TestCleanKeysOnlyByteForByte: a key is taken as clean from the scan's
// memory only when equal to one found clean, never from a slot another key
// with the same length and ends holds.
func TestCleanKeysOnlyByteForByte(t *testing.T) {
	var c cleanKeys
	for _, k := range []string{`"tokan"`, `"tokan"`, `"token"`, `"toKen"`, `"tokan"`, `""`, `"api_kez"`, `"api_key"`} {
		want := !keyMaySecret([]byte(k[1 : len(k)-1]))
		if got := c.check([]byte(k)); got != want {
			t.Fatalf("check(%s) = %v, want %v", k, got, want)
		}
	}
	var sc scanned
	body := []byte(`{"tokan":1,"token":2}`)
	scanBody(body, len(body), &sc)
	if !sc.maySecret {
		t.Fatal("a token key after a clean key of the same length and ends was taken as clean")
	}
}
