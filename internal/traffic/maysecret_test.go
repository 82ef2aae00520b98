package traffic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// wouldRedact is what the walk (RedactBody) redacts or masks in a decoded
// body, told independently of it: a string under a secret or personal key
// (array elements are under their array's key), or one that looks like an
// e-mail address.
func wouldRedact(v any, key string) bool {
	switch v := v.(type) {
	case string:
		return secretKey(key) || personalKey(key) || looksLikeEmail(v)
	case []any:
		for _, e := range v {
			if wouldRedact(e, key) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if wouldRedact(e, k) {
				return true
			}
		}
	}
	return false
}

// bodyKeys and bodyValues are what randomBody builds bodies of: keys and
// values carrying the fragments in every case, near misses, Unicode letters
// that lower-case to ASCII ones, e-mail addresses and escapes.
var (
	bodyKeys = []string{"id", "status", "name", "evses", "last_updated", "data", "coordinates", "directions",
		"token", "TOKEN", "Auth_Token", "client_secret", "PassWord", "api_key", "apiKey", "x_signature", "EMAIL",
		"e_mail", "phone_number", "Mobile", "vpa", "Contact", "msisdn", "tokem", "secre", "to\u212aen", "mob\u0130le",
		"na\u00efve", "日本", "emai", "phon"}
	bodyValues = []string{"AVAILABLE", "Tokenized", "secretariat", "Phone Park", "mobile van", "a@b.in", "x@y",
		"\u212a", "Bengaluru – MG Road", "", "12.5", `quote " inside`, "back\\slash", "colon: here"}
)

// randomBody returns a random JSON body of bodyKeys and bodyValues, with
// white space between its tokens and, now and then, a key or value written
// with \u escapes (as a partner may write "\u0074oken").
func randomBody(rng *rand.Rand, depth int) string {
	ws := func() string { return []string{"", " ", "\n\t", "\r\n  "}[rng.IntN(4)] }
	str := func(s string) string {
		if rng.IntN(8) == 0 {
			var sb strings.Builder
			sb.WriteByte('"')
			for _, r := range s {
				if r < 0x10000 {
					fmt.Fprintf(&sb, "\\u%04x", r)
				} else {
					b, _ := json.Marshal(string(r))
					sb.Write(b[1 : len(b)-1])
				}
			}
			return sb.String() + `"`
		}
		b, _ := json.Marshal(s)
		return string(b)
	}
	switch r := rng.IntN(10); {
	case depth < 3 && r < 4:
		var sb strings.Builder
		sb.WriteString("{")
		for i := range rng.IntN(4) {
			if i > 0 {
				sb.WriteString(",")
			}
			sb.WriteString(ws() + str(bodyKeys[rng.IntN(len(bodyKeys))]) + ws() + ":" + ws() + randomBody(rng, depth+1))
		}
		return sb.String() + ws() + "}"
	case depth < 3 && r < 6:
		var parts []string
		for range rng.IntN(3) {
			parts = append(parts, randomBody(rng, depth+1))
		}
		return "[" + strings.Join(parts, ","+ws()) + "]"
	case r < 9:
		return str(bodyValues[rng.IntN(len(bodyValues))])
	default:
		return []string{"1", "-2.5e3", "true", "null", "1.50"}[rng.IntN(5)]
	}
}

// TestKeysMaySecret holds the check that lets a body skip the walk to the
// walk itself: on random JSON bodies whose keys and values carry the
// fragments in every case, near misses, Unicode letters that lower-case to
// ASCII ones, e-mail addresses and escapes, a body it lets pass holds
// nothing the walk would redact, and the fragments in values alone (the
// words of a location's name) do not send a body to the walk.
func TestKeysMaySecret(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var passed, walked, valuesOnly int
	for range 30000 {
		b := []byte(randomBody(rng, 0))
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("the generator made invalid JSON %q: %v", b, err)
		}
		may := scanMaySecret(b, len(b))
		if !may && wouldRedact(v, "") {
			t.Fatalf("scanBody(%q) may hold no secret, but the walk redacts or masks something in it", b)
		}
		if !may {
			passed++
			if maySecretFold(b) {
				valuesOnly++
			}
		} else {
			walked++
		}
	}
	if passed < 1000 || walked < 1000 || valuesOnly < 100 {
		t.Fatalf("%d bodies passed (%d with fragments in values only), %d walked: the generator does not reach every case",
			passed, valuesOnly, walked)
	}
}

// TestRedactBodyKeepsInvalidJSON: a body that is not valid JSON is kept as
// it is when no fragment stands anywhere in it (its keys cannot be told from
// its values), and not recorded otherwise.
func TestRedactBodyKeepsInvalidJSON(t *testing.T) {
	for _, c := range []struct {
		body string
		kept bool
	}{
		{`{"status": "AVAILABLE"`, true},
		{`{"token" "abc"}`, false},
		{`{"name": "Tokenized",}`, false},
		{`[1, 2,]`, true},
	} {
		got, _, err := RedactBody([]byte(c.body), "application/json")
		if kept := err == nil && bytes.Equal(got, []byte(c.body)); kept != c.kept {
			t.Errorf("RedactBody(%q) = %q, %v: kept %v, want %v", c.body, got, err, kept, c.kept)
		}
	}
}

// redacted is what the walk should make of a decoded body, told
// independently of it: each string under a secret key redacted, under a
// personal key or looking like an e-mail address masked, the rest as it was
// (array elements are under their array's key).
func redacted(v any, key string) any {
	switch v := v.(type) {
	case string:
		switch {
		case secretKey(key):
			return Redacted
		case personalKey(key) || looksLikeEmail(v):
			return Mask(v)
		}
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redacted(e, key)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = redacted(e, k)
		}
		return out
	}
	return v
}

// TestWalkRedactsAsDecoded holds the walk, which copies what it keeps as
// written, to the redaction rules applied to the decoded body: on random
// bodies (keys and values with \u escapes among them), what it stores
// decodes to the body with every secret redacted and every personal value
// masked, numbers as written, and nothing else changed.
func TestWalkRedactsAsDecoded(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	decode := func(b []byte) any {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		return v
	}
	changed := 0
	for range 20000 {
		b := []byte(randomBody(rng, 0))
		if b[0] != '{' && b[0] != '[' {
			continue
		}
		out, _, err := RedactBody(b, "application/json")
		if err != nil {
			t.Fatalf("RedactBody(%q): %v", b, err)
		}
		want := redacted(decode(b), "")
		if got := decode(out); !reflect.DeepEqual(got, want) {
			t.Fatalf("RedactBody(%q) = %q;\ndecoded %#v,\nwant    %#v", b, out, got, want)
		}
		if !reflect.DeepEqual(want, decode(b)) {
			changed++
		}
	}
	if changed < 1000 {
		t.Fatalf("only %d bodies had something to redact: the generator does not reach the walk", changed)
	}
}

// TestKeyMaySecretAsLowerCased: the key check answers as looking for every
// fragment longer than a byte in the lower-cased key does, on keys built of fragments, their
// near misses, their halves in every case and other letters.
func TestKeyMaySecretAsLowerCased(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var parts []string
	for _, s := range sensitive {
		f := string(s)
		parts = append(parts, f, strings.ToUpper(f), f[:len(f)/2], f[len(f)/2:], f[:len(f)-1])
	}
	parts = append(parts, "_", "country", "code", "party", "id", "o", "ken", "\u212a", "ü", "Co", "PA")
	var yes, no int
	for range 200000 {
		var sb strings.Builder
		for range 1 + rng.IntN(4) {
			sb.WriteString(parts[rng.IntN(len(parts))])
		}
		k := []byte(sb.String())
		lower := bytes.ToLower(k)
		// '@' the scan looks for in the whole body; a key with letters
		// beyond ASCII is checked as a body that is not JSON is, '@'
		// included.
		want := bytes.ContainsRune(k, '@') && !isASCII(k)
		for _, s := range sensitive {
			want = want || len(s) > 1 && bytes.Contains(lower, s)
		}
		if got := keyMaySecret(k); got != want {
			t.Fatalf("keyMaySecret(%q) = %v, want %v", k, got, want)
		}
		if want {
			yes++
		} else {
			no++
		}
	}
	if yes < 10000 || no < 10000 {
		t.Fatalf("%d keys with a fragment, %d without: the generator does not reach both", yes, no)
	}
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
