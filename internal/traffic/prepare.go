package traffic

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

// row is a capture ready to store.
type row struct {
	at                        int64
	direction                 Direction
	platformID                int64
	partner, module           string
	method, url               string
	httpStatus, statusCode    int
	durationUS                int64
	requestID, correlationID  string
	fromParty, toParty        string
	objectIDs                 string
	errText                   string
	requestHeader, respHeader string
	requestBody, respBody     []byte
	size                      int64
}

// modules are the path segments that name an OCPI module (and ours).
var modules = []string{"locations", "tariffs", "tokens", "sessions", "cdrs", "commands", "chargingprofiles",
	"credentials", "hubclientinfo", "clientinfo", "payments", "webhooks", "versions"}

// ModuleOf names the module of an OCPI URL path: the first segment that is
// a module's name; "versions" for version details (/ocpi/2.2.1).
func ModuleOf(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for _, s := range segs {
		for _, m := range modules {
			if s == m {
				return m
			}
		}
	}
	if len(segs) > 0 && isVersionSeg(segs[len(segs)-1]) {
		return "versions"
	}
	return ""
}

func isVersionSeg(s string) bool {
	return s == "2.3.0" || s == "2.2.1" || s == "2.2" || s == "2.1.1" || s == "2.0"
}

// pathObjectIDs returns the object ids in a path after the module segment,
// without the {country_code}/{party_id} that precede them.
func pathObjectIDs(path, module string) []string {
	if module == "" || module == "versions" || module == "credentials" {
		return nil
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	i := 0
	for i < len(segs) && segs[i] != module {
		i++
	}
	rest := segs[min(i+1, len(segs)):]
	switch module {
	case "locations", "tariffs", "sessions", "cdrs", "tokens", "clientinfo":
		if len(rest) >= 3 && len(rest[0]) == 2 && len(rest[1]) == 3 {
			rest = rest[2:]
		}
	case "commands", "chargingprofiles":
		// {command}/{id}: the command's name is not an object.
		if len(rest) >= 1 && strings.ToUpper(rest[0]) == rest[0] {
			rest = rest[1:]
		}
	}
	var out []string
	for _, s := range rest {
		if u, err := url.PathUnescape(s); err == nil {
			s = u
		}
		if s != "" && len(s) <= 64 {
			out = append(out, s)
		}
	}
	return out
}

// prepare turns a capture into a row: redacted, capped, compressed.
func (r *Recorder) prepare(c *Capture) row {
	u := RedactURL(c.URL)
	path := u
	if pu, err := url.Parse(u); err == nil {
		path = pu.Path
	}
	module := c.Module
	if module == "" {
		module = ModuleOf(path)
	}
	out := row{at: c.At.UnixMicro(), direction: c.Direction, platformID: c.PlatformID, partner: c.Partner, module: module,
		method: c.Method, url: u, httpStatus: c.HTTPStatus, durationUS: c.Duration.Microseconds(),
		requestID: c.RequestID, correlationID: c.CorrelationID, fromParty: c.FromParty, toParty: c.ToParty, errText: c.Error}
	ids := pathObjectIDs(path, module)
	var f facts
	out.requestBody, f = r.body(c.RequestBody, c.RequestHeader)
	ids = append(ids, f.objectIDs...)
	out.respBody, f = r.body(c.ResponseBody, c.ResponseHeader)
	ids = append(ids, f.objectIDs...)
	out.statusCode = f.statusCode
	out.objectIDs = joinIDs(ids)
	out.requestHeader = headerJSON(c.RequestHeader)
	out.respHeader = headerJSON(c.ResponseHeader)
	out.size = int64(len(out.requestBody)+len(out.respBody)+len(out.requestHeader)+len(out.respHeader)+len(out.url)) + 256
	return out
}

// body redacts, caps and compresses one body.
func (r *Recorder) body(b []byte, h http.Header) ([]byte, facts) {
	if len(b) == 0 {
		return nil, facts{}
	}
	cut := len(b) >= CaptureLimit
	red, f, err := redactBody(b, h.Get("Content-Type"), r.cfg.MaxBodyBytes)
	if err != nil {
		// A body we cannot parse is not kept: it might hide a secret we
		// would not find.
		note := "[body not recorded: not parseable as its content type"
		if cut {
			note = "[body not recorded: longer than the capture limit"
		}
		red = []byte(note + "]")
	}
	var more []byte
	if len(red) > r.cfg.MaxBodyBytes {
		// Cut; the cut part is compressed from where it stands, not copied
		// first (a directory page's 64 KB).
		red, more = red[:r.cfg.MaxBodyBytes], []byte("…[cut]")
	}
	if len(red)+len(more) < compressFrom && !bytes.HasPrefix(red, gzipMagic) {
		return append(bytes.Clone(red), more...), f // not the capture's bytes
	}
	var buf bytes.Buffer
	buf.Grow(len(red) / 8) // about what a JSON body compresses to
	// A compressor holds about a megabyte of tables: one per writer, reused.
	// klauspost's gzip at its fastest level writes the same format as the
	// standard library's in half the time on a directory page.
	if r.zw == nil {
		r.zw, _ = gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	} else {
		r.zw.Reset(&buf)
	}
	r.zw.Write(red)
	r.zw.Write(more)
	r.zw.Close()
	return buf.Bytes(), f
}

// compressFrom is the length from which a stored body is compressed. A
// shorter one is stored as it is: a status PATCH, an envelope, a token, a
// command, an authorization's answer (most of what delivery and the
// charging flow record). Under 256 bytes gzip's 18 bytes of framing leave
// a body no smaller; under a kilobyte it saves a third (an authorization's
// answer of 484 bytes: 336), at 30 µs of the recorder's CPU an exchange in
// a busy hub, where the compressor's tables have left the cache (6 % of
// authorize-own's CPU). A row's headers and fixed part are about as long
// as such a body, so the row grows by a sixth, and the inspector's
// MaxBytes keeps a sixth fewer of them. Longer bodies (CDRs, locations,
// directory pages) compress to a fifth to a tenth and are compressed. A
// stored body that begins with gzipMagic is compressed, whatever its
// length, so gunzip can tell the two apart.
const compressFrom = 1024

var gzipMagic = []byte{0x1f, 0x8b}

// gunzip returns a stored body as text.
func gunzip(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if !bytes.HasPrefix(b, gzipMagic) {
		return string(b)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return ""
	}
	out, _ := io.ReadAll(zr)
	return string(out)
}

// joinIDs stores object ids as "|a|b|", each once.
func joinIDs(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	seen := map[string]bool{}
	var sb strings.Builder
	sb.WriteByte('|')
	for _, id := range ids {
		id = strings.ReplaceAll(id, "|", "")
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		sb.WriteString(id)
		sb.WriteByte('|')
	}
	return sb.String()
}

func splitIDs(s string) []string {
	s = strings.Trim(s, "|")
	if s == "" {
		return nil
	}
	return strings.Split(s, "|")
}

// headerJSON is the redacted header as the JSON object encoding/json makes
// of it (keys sorted, strings escaped the same way), written directly: the
// reflection of json.Marshal over two headers per exchange was 4 % of the
// CPU of a status PATCH run, in which every PATCH is 11 exchanges.
func headerJSON(h http.Header) string {
	if len(h) == 0 {
		return ""
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, 64*len(h))
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		vs := h[k]
		if secretHeader(k) {
			vs = []string{Redacted}
		}
		if len(vs) == 0 {
			// RedactHeader's copy of an empty list is nil.
			b = append(b, "null"...)
			continue
		}
		b = append(b, '[')
		for j, v := range vs {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, v)
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	return string(b)
}

// appendJSONString appends s as a JSON string the way encoding/json writes
// it: <, > and & escaped for HTML, U+2028 and U+2029 escaped, invalid UTF-8
// replaced by U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
