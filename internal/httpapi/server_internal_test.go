package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/hubtest/logsink"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// These tests need routes the product does not have (a panicking handler, an
// echo of the routed path, a body reader without authentication), so they
// register them on a Server built with New, in this package, without a
// database.

type testBundle struct {
	srv  *Server
	ts   *httptest.Server
	logs *logsink.Buffer
	reg  *prometheus.Registry
}

func setup(t *testing.T, maxBody int64) *testBundle {
	t.Helper()
	logs := &logsink.Buffer{}
	reg := prometheus.NewRegistry()
	s := New(Config{
		Logger:       slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registry:     reg,
		MaxBodyBytes: maxBody,
	})
	s.add(route.Row{Pattern: "GET /ocpi/2.2.1/test/panic", Access: route.Public, Handler: func(w http.ResponseWriter, r *http.Request) error {
		panic("handler exploded")
	}})
	s.add(route.Row{Pattern: "GET /ocpi/2.2.1/cpo/test/echo/{id}", Access: route.Public, Handler: func(w http.ResponseWriter, r *http.Request) error {
		return s.kit.OK(w, map[string]string{"path": r.URL.Path, "pattern": r.Pattern, "id": r.PathValue("id")})
	}})
	s.add(route.Row{Pattern: "POST /ocpi/2.2.1/test/body", Access: route.Public, Handler: func(w http.ResponseWriter, r *http.Request) error {
		var v map[string]any
		if err := kit.Decode(r, &v); err != nil {
			return err
		}
		return s.kit.OK(w, map[string]int{"keys": len(v)})
	}})
	s.add(route.Row{Pattern: "PUT /ocpi/2.2.1/test/objects/{id}", Access: route.Public, Handler: func(w http.ResponseWriter, r *http.Request) error {
		s.logger.InfoContext(r.Context(), "object stored", kit.LogAttrs(r)...)
		return s.kit.Stored(w, r.PathValue("id") == "new")
	}})
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return &testBundle{srv: s, ts: ts, logs: logs, reg: reg}
}

func (b *testBundle) do(t *testing.T, method, path string, body io.Reader, header http.Header) (*http.Response, ocpi.Envelope) {
	t.Helper()
	req, err := http.NewRequest(method, b.ts.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := b.ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	env, err := ocpi.DecodeEnvelope(raw)
	if err != nil {
		t.Fatalf("%s %s: HTTP %d, not an envelope: %v: %s", method, path, resp.StatusCode, err, raw)
	}
	return resp, *env
}

// TestPanicAnswers500 recovers a panicking handler: HTTP 500, status 3000, a
// generic message, the panic logged with the request id, and the request
// counted as a 500 of its route.
func TestPanicAnswers500(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	resp, env := b.do(t, http.MethodGet, "/ocpi/2.2.1/test/panic", nil, http.Header{"X-Request-Id": {"req-panic-1"}})
	if resp.StatusCode != http.StatusInternalServerError || env.StatusCode != ocpi.StatusServerError {
		t.Fatalf("answered HTTP %d / %d", resp.StatusCode, env.StatusCode)
	}
	if env.Error == nil || env.Error.Code != ocpi.EINTERNAL || strings.Contains(env.Error.Description, "exploded") {
		t.Errorf("error object %+v (the panic value must not leak)", env.Error)
	}
	if got := resp.Header.Get("X-Request-ID"); got != "req-panic-1" {
		t.Errorf("X-Request-ID = %q", got)
	}
	var logged bool
	for _, line := range strings.Split(strings.TrimSpace(b.logs.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["msg"] == "panic serving request" && rec["request_id"] == "req-panic-1" && rec["panic"] == "handler exploded" && rec["stack"] != "" {
			logged = true
		}
	}
	if !logged {
		t.Errorf("panic not logged with its request id:\n%s", b.logs.String())
	}
	if n := testutil.ToFloat64(b.srv.metrics.requests.WithLabelValues("GET /ocpi/2.2.1/test/panic", "GET", "500")); n != 1 {
		t.Errorf("requests_total for the panic = %v, want 1", n)
	}
	// The server survives.
	if resp, _ := b.do(t, http.MethodGet, "/ocpi/2.2.1/cpo/test/echo/1", nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("after the panic: HTTP %d", resp.StatusCode)
	}
}

// TestAliasesRoute maps the URL forms of DESIGN §4 onto the route table.
func TestAliasesRoute(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	for _, path := range []string{
		"/ocpi/2.2.1/cpo/test/echo/42",
		"/ocpi/cpo/2.2.1/test/echo/42",
		"/ocpi/cpo/2.2.1/test/echo/42/",
	} {
		resp, env := b.do(t, http.MethodGet, path, nil, nil)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: HTTP %d %+v", path, resp.StatusCode, env.Error)
			continue
		}
		var got map[string]string
		if err := json.Unmarshal(env.Data, &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"path": "/ocpi/2.2.1/cpo/test/echo/42", "pattern": "GET /ocpi/2.2.1/cpo/test/echo/{id}", "id": "42"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", path, k, got[k], v)
			}
		}
	}
	// The role alias only applies to known roles and versions.
	for _, path := range []string{"/ocpi/xyz/2.2.1/test/echo/42", "/ocpi/cpo/9.9/test/echo/42"} {
		if resp, env := b.do(t, http.MethodGet, path, nil, nil); resp.StatusCode != http.StatusNotFound || env.Error.Code != ocpi.ENOTFOUND {
			t.Errorf("%s: HTTP %d, want 404", path, resp.StatusCode)
		}
	}
}

// TestBodyCap answers bodies over the cap with 413, whether the client
// announces the length or streams the body chunked.
func TestBodyCap(t *testing.T) {
	t.Parallel()
	const limit = 1024
	b := setup(t, limit)
	big := `{"a":"` + strings.Repeat("x", 2*limit) + `"}`
	small := `{"a":"` + strings.Repeat("x", limit-20) + `"}`
	tests := []struct {
		name     string
		body     func() io.Reader
		wantHTTP int
	}{
		{"content-length over the cap", func() io.Reader { return strings.NewReader(big) }, http.StatusRequestEntityTooLarge},
		{"chunked over the cap", func() io.Reader { return io.MultiReader(strings.NewReader(big)) }, http.StatusRequestEntityTooLarge},
		{"content-length under the cap", func() io.Reader { return strings.NewReader(small) }, http.StatusOK},
		{"chunked under the cap", func() io.Reader { return io.MultiReader(strings.NewReader(small)) }, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, env := b.do(t, http.MethodPost, "/ocpi/2.2.1/test/body", tt.body(), http.Header{"Content-Type": {"application/json"}})
			if resp.StatusCode != tt.wantHTTP {
				t.Fatalf("HTTP %d, want %d: %+v", resp.StatusCode, tt.wantHTTP, env.Error)
			}
			if tt.wantHTTP == http.StatusOK {
				return
			}
			if env.StatusCode != ocpi.StatusClientError || env.Error == nil || env.Error.Code != ocpi.ETOOLARGE ||
				!strings.Contains(env.Error.Description, "1024 bytes") {
				t.Errorf("envelope %d %+v", env.StatusCode, env.Error)
			}
		})
	}
}

// TestStoredAnswers201Or200 is the last row of DESIGN §6: a client-owned
// object newly created is HTTP 201, a replaced one HTTP 200, both 1000
// without data (2.2.1-d2 erratum); handlers log with both ids.
func TestStoredAnswers201Or200(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	for id, want := range map[string]int{"new": http.StatusCreated, "old": http.StatusOK} {
		resp, env := b.do(t, http.MethodPut, "/ocpi/2.2.1/test/objects/"+id, nil,
			http.Header{"X-Request-Id": {"req-" + id}, "X-Correlation-Id": {"corr-" + id}})
		if resp.StatusCode != want || env.StatusCode != ocpi.StatusSuccess || env.Data != nil || env.Error != nil {
			t.Errorf("%s: HTTP %d, envelope %+v; want HTTP %d, 1000 without data", id, resp.StatusCode, env, want)
		}
		if !strings.Contains(b.logs.String(), `"msg":"object stored","request_id":"req-`+id+`","correlation_id":"corr-`+id+`"`) {
			t.Errorf("%s: log lacks the ids:\n%s", id, b.logs.String())
		}
	}
}
