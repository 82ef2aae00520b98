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
// personal is kept as it is (keysMaySecret).
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
	valid := gjson.ValidBytes(trimmed)
	if valid && !keysMaySecret(trimmed, keep) || !valid && !maySecretFold(trimmed) {
		// Nothing to redact or mask (most pushes, every directory page):
		// the body is kept as it is, and only the facts are read, much
		// faster than the walk.
		if !valid {
			return body, f, nil
		}
		return body, scanValidFacts(trimmed), nil
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

// keysMaySecret reports whether a valid JSON body may hold something the
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
func keysMaySecret(b []byte, keep int) bool {
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

// keyMaySecret reports whether a key holds a fragment of sensitive, as
// strings.ToLower would find it.
func keyMaySecret(k []byte) bool {
	for i, c := range k {
		switch {
		case c >= utf8.RuneSelf:
			// Unicode lower-casing maps a few other letters to ASCII ones
			// (the Kelvin sign to 'k').
			return maySecretFold(k)
		case i+1 < len(k) && fragmentStart[lowerASCII(c)][lowerASCII(k[i+1]&0x7f)]:
			for _, s := range sensitive {
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

// fragmentStart marks the first two letters of every fragment of sensitive
// longer than one byte: only where they stand is a fragment compared.
var fragmentStart = func() (t [utf8.RuneSelf][utf8.RuneSelf]bool) {
	for _, s := range sensitive {
		if len(s) > 1 {
			t[s[0]][s[1]] = true
		}
	}
	return t
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

// factKeys are the keys scanFacts reads ids from, in the order it lists
// them.
var factKeys = [...]string{"id", "uid", "location_id", "evse_uid", "session_id", "authorization_reference", "terminal_id",
	"tariff_id", "cdr_id", "command_id", "payment_id", "order_id"}

// bodyView is b seen as a string, without copying it, for gjson's
// string-only walks. It is only read while b is unchanged: the recorder
// prepares a capture before its buffers go back to the pool, and nothing
// the walk returns keeps a part of the view (idsOf copies what it keeps).
func bodyView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// scanFacts reads the facts of a body that needs no redaction: its
// top-level ids, the envelope's status_code and its data's ids. It walks the
// top-level keys once without decoding the values it skips (a directory
// page's data is a hundred locations; decoding it was a quarter of the
// page's CPU), and reads keys as encoding/json would: case-insensitively,
// the last of a repeated key, nothing of a body that is not valid JSON (a
// status_code that is not a whole number is left out).
func scanFacts(b []byte) facts {
	if !gjson.ValidBytes(b) {
		return facts{}
	}
	return scanValidFacts(b)
}

// scanValidFacts is scanFacts for a body known to be valid JSON. It reads
// the body through a string view (bodyView) instead of gjson.ParseBytes'
// copy: on a directory page the copy, a large allocation per exchange, cost
// more than the scan. The ids it keeps are copied (idsOf).
func scanValidFacts(b []byte) facts {
	var f facts
	if b[0] != '{' {
		return f
	}
	var data gjson.Result
	f.objectIDs = idsOf(gjson.Parse(bodyView(b)), func(key string, v gjson.Result) {
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
		f.objectIDs = append(f.objectIDs, idsOf(data, nil)...)
	}
	return f
}

// idsOf lists the string ids under factKeys of the object o, passing every
// other key to other.
func idsOf(o gjson.Result, other func(key string, v gjson.Result)) []string {
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
