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
	for _, s := range bodies {
		b := []byte(s)
		for k := range 4 {
			if k > 0 {
				b = mutate(rng, b)
			}
			if checkScanAsPasses(t, b) {
				valid++
			} else {
				broken++
			}
		}
	}
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
