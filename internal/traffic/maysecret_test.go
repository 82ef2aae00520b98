package traffic

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
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

// TestKeysMaySecret holds the check that lets a body skip the walk to the
// walk itself: on random JSON bodies whose keys and values carry the
// fragments in every case, near misses, Unicode letters that lower-case to
// ASCII ones, e-mail addresses and escapes, a body it lets pass holds
// nothing the walk would redact, and the fragments in values alone (the
// words of a location's name) do not send a body to the walk.
func TestKeysMaySecret(t *testing.T) {
	keys := []string{"id", "status", "name", "evses", "last_updated", "data", "coordinates", "directions",
		"token", "TOKEN", "Auth_Token", "client_secret", "PassWord", "api_key", "apiKey", "x_signature", "EMAIL",
		"e_mail", "phone_number", "Mobile", "vpa", "Contact", "msisdn", "tokem", "secre", "to\u212aen", "mob\u0130le",
		"na\u00efve", "日本", "emai", "phon"}
	values := []string{"AVAILABLE", "Tokenized", "secretariat", "Phone Park", "mobile van", "a@b.in", "x@y",
		"\u212a", "Bengaluru – MG Road", "", "12.5", `quote " inside`, "back\\slash", "colon: here"}
	rng := rand.New(rand.NewPCG(3, 4))
	var gen func(depth int) string
	gen = func(depth int) string {
		ws := func() string { return []string{"", " ", "\n\t", "\r\n  "}[rng.IntN(4)] }
		str := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		switch r := rng.IntN(10); {
		case depth < 3 && r < 4:
			var sb strings.Builder
			sb.WriteString("{")
			for i := range rng.IntN(4) {
				if i > 0 {
					sb.WriteString(",")
				}
				sb.WriteString(ws() + str(keys[rng.IntN(len(keys))]) + ws() + ":" + ws() + gen(depth+1))
			}
			return sb.String() + ws() + "}"
		case depth < 3 && r < 6:
			var parts []string
			for range rng.IntN(3) {
				parts = append(parts, gen(depth+1))
			}
			return "[" + strings.Join(parts, ","+ws()) + "]"
		case r < 9:
			return str(values[rng.IntN(len(values))])
		default:
			return []string{"1", "-2.5e3", "true", "null"}[rng.IntN(4)]
		}
	}
	var passed, walked, valuesOnly int
	for range 30000 {
		b := []byte(gen(0))
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("the generator made invalid JSON %q: %v", b, err)
		}
		may := keysMaySecret(b, len(b))
		if !may && wouldRedact(v, "") {
			t.Fatalf("keysMaySecret(%q) = false, but the walk redacts or masks something in it", b)
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
