package traffic

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Redacted replaces a secret.
const Redacted = "[redacted]"

// secretHeader reports headers whose values are secrets: credentials,
// cookies, signatures of payment gateways and webhooks.
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	for _, w := range []string{"token", "secret", "signature", "api-key", "apikey", "password"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// secretKey reports JSON or form keys whose string values are secrets: the
// credentials token (a Token object under "token", as in START_SESSION, is
// kept: only strings are redacted), webhook signing secrets, passwords.
func secretKey(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "token", "token_a", "token_b", "token_c", "credentials_token", "admin_token":
		return true
	}
	for _, w := range []string{"secret", "password", "api_key", "apikey", "signature"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// personalKey reports keys whose values are a driver's personal data,
// masked rather than removed so an engineer still recognises them.
func personalKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"email", "e_mail", "phone", "mobile", "vpa", "contact", "msisdn"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// Mask hides most of a personal value: the first character, and for an
// address the part after '@' (a mail domain, a UPI handle); for a number
// its last two digits.
func Mask(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	if i := strings.LastIndexByte(s, '@'); i > 0 {
		return string(r[0]) + "***" + s[i:]
	}
	if len(r) <= 4 {
		return "***"
	}
	return string(r[0]) + "***" + string(r[len(r)-2:])
}

// looksLikeEmail reports a string that is a mail address wherever it
// appears.
func looksLikeEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	return at > 0 && at < len(s)-3 && strings.Contains(s[at:], ".") && !strings.ContainsAny(s, " /:")
}

// RedactHeader returns a copy of h without secrets.
func RedactHeader(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		if secretHeader(k) {
			out[k] = []string{Redacted}
			continue
		}
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// RedactURL removes secrets from a URL's query.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return raw
	}
	q := u.Query()
	changed := false
	for k := range q {
		if secretKey(k) {
			q[k] = []string{Redacted}
			changed = true
		}
	}
	if u.User != nil {
		u.User = nil
		changed = true
	}
	if !changed {
		return raw
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// facts are what the redaction walk learns of a body on the way.
type facts struct {
	objectIDs  []string
	statusCode int
}

// idKeys are the keys whose values name the objects an exchange is about.
var idKeys = map[string]bool{"id": true, "uid": true, "location_id": true, "evse_uid": true, "session_id": true,
	"authorization_reference": true, "terminal_id": true, "tariff_id": true, "cdr_id": true, "command_id": true,
	"payment_id": true, "order_id": true}

// RedactBody returns the body without secrets and with personal data
// masked, and what it found (object ids, the envelope's status_code).
// JSON keeps its key order; form bodies are redacted by key; other bodies
// are kept as they are.
func RedactBody(body []byte, contentType string) ([]byte, facts, error) {
	return redactBody(body, contentType, len(body))
}

// redactBody is RedactBody for a body of which only the first keep bytes
// are stored: a JSON body whose keys in those bytes name nothing secret or
// personal is kept as it is (scanBody).
func redactBody(body []byte, contentType string, keep int) ([]byte, facts, error) {
	var f facts
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, f, nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/x-www-form-urlencoded" {
		q, err := url.ParseQuery(string(trimmed))
		if err != nil {
			return nil, f, err
		}
		for _, k := range slices.Sorted(maps.Keys(q)) {
			for i, v := range q[k] {
				switch {
				case secretKey(k):
					q[k][i] = Redacted
				case personalKey(k) || looksLikeEmail(v):
					q[k][i] = Mask(v)
				}
			}
		}
		return []byte(q.Encode()), f, nil
	}
	if trimmed[0] != '{' && trimmed[0] != '[' {
		return body, f, nil
	}
	var sc scanned
	valid := scanBody(trimmed, keep, &sc)
	if valid && !sc.maySecret || !valid && !maySecretFold(trimmed) {
		// Nothing to redact or mask (most pushes, every directory page):
		// the body is kept as it is, and only the facts are read, much
		// faster than the walk.
		if !valid {
			return body, f, nil
		}
		return body, sc.facts(), nil
	}
	if !valid {
		// A fragment may be in it, and its keys cannot be told from its
		// values: not kept (the caller notes why).
		return nil, f, errors.New("not valid JSON")
	}
	out := bytes.NewBuffer(make([]byte, 0, len(trimmed)+16))
	w := walker{out: out, f: &f}
	w.value(gjson.Parse(bodyView(trimmed)), "", 0, "")
	return out.Bytes(), f, nil
}

// walker copies a valid JSON body, redacting and masking as it goes. What
// it does not change it copies as written (keys, numbers, strings with
// their escapes; only the white space between tokens goes), so it needs no
// decoding of what it keeps: on a CDR, whose cdr_token key sends it here,
// the walk over encoding/json's tokens it replaces cost 41 µs and 687
// allocations.
type walker struct {
	out *bytes.Buffer
	f   *facts
}

// list copies an object's members or an array's elements, each through
// one, between open and close.
func (w *walker) list(v gjson.Result, open, close byte, one func(k, e gjson.Result)) {
	w.out.WriteByte(open)
	first := true
	v.ForEach(func(k, e gjson.Result) bool {
		if !first {
			w.out.WriteByte(',')
		}
		first = false
		one(k, e)
		return true
	})
	w.out.WriteByte(close)
}

// value copies one JSON value; key is the key it is under (decoded),
// depth its nesting, parent the key of the object that holds it.
func (w *walker) value(v gjson.Result, key string, depth int, parent string) {
	switch {
	case v.IsObject():
		w.list(v, '{', '}', func(k, e gjson.Result) {
			w.out.WriteString(k.Raw)
			w.out.WriteByte(':')
			w.value(e, k.Str, depth+1, key)
		})
	case v.IsArray():
		// Elements are under the array's key: a list of e-mails is masked
		// like one.
		w.list(v, '[', ']', func(_, e gjson.Result) { w.value(e, key, depth+1, parent) })
	case v.Type == gjson.String:
		switch s := v.Str; {
		case secretKey(key):
			w.out.WriteString(`"` + Redacted + `"`)
		case personalKey(key) || looksLikeEmail(s):
			b, _ := json.Marshal(Mask(s))
			w.out.Write(b)
		default:
			// Object ids: top-level fields of a request body, and those of an
			// answer's data object.
			if idKeys[key] && (depth == 1 || (depth == 2 && parent == "data")) && len(s) <= 64 {
				w.f.objectIDs = append(w.f.objectIDs, strings.Clone(s)) // not a view of the body
			}
			w.out.WriteString(v.Raw)
		}
	default:
		if key == "status_code" && depth == 1 && v.Type == gjson.Number {
			if n, err := strconv.ParseInt(v.Raw, 10, 64); err == nil {
				w.f.statusCode = int(n)
			}
		}
		w.out.WriteString(v.Raw)
	}
}

// sensitive are the fragments without which a JSON body holds nothing to
// redact or mask: the keys of secretKey and personalKey, and '@' (an e-mail
// or VPA anywhere).
var sensitive = [][]byte{[]byte("token"), []byte("secret"), []byte("password"), []byte("api_key"), []byte("apikey"),
	[]byte("signature"), []byte("email"), []byte("e_mail"), []byte("phone"), []byte("mobile"), []byte("vpa"),
	[]byte("contact"), []byte("msisdn"), []byte("@")}

// keyMaySecret reports whether a key holds a fragment of sensitive longer
// than a byte, as strings.ToLower would find it ('@' the scan looks for in
// the whole body).
func keyMaySecret(k []byte) bool {
	for i, c := range k {
		switch {
		case c >= utf8.RuneSelf:
			// Unicode lower-casing maps a few other letters to ASCII ones
			// (the Kelvin sign to 'k').
			return maySecretFold(k)
		case i+1 < len(k):
			for _, s := range fragmentsFrom[fragmentStart[lowerASCII(c)][lowerASCII(k[i+1]&0x7f)]] {
				if hasLowerPrefix(k[i:], s) {
					return true
				}
			}
		}
	}
	return false
}

// maySecretFold reports whether a body may hold something to redact,
// looking for each fragment of sensitive anywhere in it, lower-cased: for
// bodies that are not valid JSON, whose keys cannot be told from values.
func maySecretFold(b []byte) bool {
	if bytes.IndexByte(b, '\\') >= 0 {
		return true
	}
	lower := bytes.ToLower(b)
	for _, s := range sensitive {
		if bytes.Contains(lower, s) {
			return true
		}
	}
	return false
}

// fragmentStart numbers the first two letters of the fragments of
// sensitive longer than one byte (0: no fragment begins with them), and
// fragmentsFrom lists the fragments under each number: only where two such
// letters stand is a fragment compared, and only those that begin with
// them. A location's keys meet the first letters of a fragment often
// ("co" in country_code, coordinates and connectors, "pa" in party_id);
// comparing every fragment there made the scan of a directory page a tenth
// slower (BenchmarkMaySecret: 181 against 163 µs).
var fragmentStart, fragmentsFrom = func() (t [utf8.RuneSelf][utf8.RuneSelf]uint8, from [][][]byte) {
	from = [][][]byte{nil}
	for _, s := range sensitive {
		if len(s) < 2 {
			continue
		}
		if t[s[0]][s[1]] == 0 {
			t[s[0]][s[1]] = uint8(len(from))
			from = append(from, nil)
		}
		n := t[s[0]][s[1]]
		from[n] = append(from[n], s)
	}
	return t, from
}()

// hasLowerPrefix reports whether b begins with p once its ASCII letters are
// lower-cased; p is lower case.
func hasLowerPrefix(b, p []byte) bool {
	if len(b) < len(p) {
		return false
	}
	for i, c := range p {
		if lowerASCII(b[i]) != c {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// factKeys are the keys a scan reads ids from, in the order it lists
// them.
var factKeys = [...]string{"id", "uid", "location_id", "evse_uid", "session_id", "authorization_reference", "terminal_id",
	"tariff_id", "cdr_id", "command_id", "payment_id", "order_id"}

// bodyView is b seen as a string, without copying it, for gjson's
// string-only walks and the scan's keys and ids. It is only read while b
// is unchanged: the recorder prepares a capture before its buffers go back
// to the pool, and nothing kept holds a part of the view (the walk and the
// facts copy the ids they keep).
func bodyView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
