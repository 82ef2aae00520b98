package traffic

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestStoredBodies: a body shorter than compressFrom is stored as it is,
// a longer one compressed, one that begins like a compressed body is
// compressed whatever its length; each reads back as recorded, and so do
// the bodies of rows stored before short ones were kept as they are (all
// compressed).
func TestStoredBodies(t *testing.T) {
	r := New(nil, nil, nil, nil, Config{})
	json := http.Header{"Content-Type": {"application/json"}}
	text := http.Header{"Content-Type": {"text/plain"}}
	for _, c := range []struct {
		name       string
		body       string
		h          http.Header
		compressed bool
	}{
		{"envelope", `{"status_code":1000,"status_message":"Success","timestamp":"2026-02-01T00:00:00Z"}`, json, false},
		{"just short", `{"name":"` + strings.Repeat("a", compressFrom-12) + `"}`, json, false},
		{"just long", `{"name":"` + strings.Repeat("a", compressFrom-11) + `"}`, json, true},
		{"page", `{"data":[` + strings.Repeat(`{"id":"L1","name":"Koramangala"},`, 100) + `{}]}`, json, true},
		{"magic", "\x1f\x8bnot a gzip stream", text, true},
		{"text", "plain words", text, false},
	} {
		stored, _ := r.body([]byte(c.body), c.h)
		if got := bytes.HasPrefix(stored, gzipMagic); got != c.compressed {
			t.Errorf("%s (%d bytes): stored compressed %v, want %v", c.name, len(c.body), got, c.compressed)
		}
		if got := gunzip(stored); got != c.body {
			t.Errorf("%s: reads back as %q", c.name, got)
		}
	}
	// A row of before: a short body, compressed.
	var buf bytes.Buffer
	r.zw.Reset(&buf)
	r.zw.Write([]byte(`{"status":"AVAILABLE"}`))
	r.zw.Close()
	if got := gunzip(buf.Bytes()); got != `{"status":"AVAILABLE"}` {
		t.Errorf("a compressed short body reads back as %q", got)
	}
}

// TestStoredPrefix: of a body longer than what is stored, only the stored
// part's keys decide whether it is redacted; an '@' anywhere still sends it
// to the walk, so a value cut before its '@' is masked, not stored as it is.
func TestStoredPrefix(t *testing.T) {
	const limit = 1 << 10
	r := New(nil, nil, nil, nil, Config{MaxBodyBytes: limit})
	json := http.Header{"Content-Type": {"application/json"}}
	filler := `"name":"` + strings.Repeat("a", limit) + `"`
	for _, c := range []struct {
		name, body string
		raw        bool // stored as the body's first bytes
		absent     string
	}{
		{"secret beyond the cut", `{` + filler + `,"token":"SECRET-VALUE"}`, true, "SECRET-VALUE"},
		{"secret before the cut", `{"token":"SECRET-VALUE",` + filler + `}`, false, "SECRET-VALUE"},
		{"e-mail across the cut", `{"note":"` + strings.Repeat("b", limit-20) + `ravi.kumar.longname@example.in"}`, false, "ravi.kumar"},
	} {
		stored, _ := r.body([]byte(c.body), json)
		got := gunzip(stored)
		if raw := strings.HasPrefix(got, c.body[:limit]); raw != c.raw {
			t.Errorf("%s: stored as it is %v, want %v", c.name, raw, c.raw)
		}
		if strings.Contains(got, c.absent) {
			t.Errorf("%s: %q is stored", c.name, c.absent)
		}
	}
}
