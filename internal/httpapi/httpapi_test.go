package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ocpihub/ocpihub/internal/httpapi"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// answer is what a test asserts about a response.
type answer struct {
	HTTP      int
	Status    int
	Code      string // error.code; "" for success
	Field     string // error.details.field
	HasDetail bool
}

func answerOf(t *testing.T, resp *ocpiclient.Response) answer {
	t.Helper()
	env, err := ocpi.DecodeEnvelope(resp.Body)
	if err != nil {
		t.Fatalf("HTTP %d is not an envelope: %v: %s", resp.HTTPStatus, err, resp.Body)
	}
	a := answer{HTTP: resp.HTTPStatus, Status: env.StatusCode}
	if env.Error != nil {
		a.Code = env.Error.Code
		if env.Error.Details != nil {
			a.HasDetail = true
			a.Field = env.Error.Details.Field
		}
	}
	return a
}

func invite(t *testing.T, h *hubtest.Hub, name string) string {
	t.Helper()
	inv, err := h.Parties.Invite(hubtest.Ctx(t, 10e9), name, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	return inv.Token
}

// TestDesignErrorRowsOverHTTP drives the rows of DESIGN §6 that the hub can
// produce today through the real server on both engines. (429 arrives with
// rate limiting, 4002/4003 with forwarding; a crash is TestPanicAnswers500.)
func TestDesignErrorRowsOverHTTP(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo := hubtest.Add(t, h, sim.StartCPO, "Rows CPO", "NL", "RWC")
		// A partner whose versions URL answers with a plain 404.
		broken := httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(broken.Close)

		json := http.Header{"Content-Type": {"application/json"}}
		tests := []struct {
			name   string
			method string
			path   string
			token  func() string
			body   string
			want   answer
		}{
			{"body is not JSON", "POST", "/ocpi/2.2.1/credentials", func() string { return invite(t, h, "a") }, `{"token": nope`,
				answer{HTTP: 400, Status: 2001, Code: "INVALID_JSON"}},
			{"empty body", "POST", "/ocpi/2.2.1/credentials", func() string { return invite(t, h, "a") }, ` `,
				answer{HTTP: 400, Status: 2001, Code: "INVALID_JSON"}},
			{"missing token", "GET", "/ocpi/2.2.1/hubclientinfo", func() string { return "" }, "",
				answer{HTTP: 401, Status: 2000, Code: "UNAUTHORIZED"}},
			{"unknown token", "GET", "/ocpi/2.2.1/hubclientinfo", func() string { return "no-such-token" }, "",
				answer{HTTP: 401, Status: 2000, Code: "UNAUTHORIZED"}},
			{"token A outside versions/credentials", "GET", "/ocpi/2.2.1/hubclientinfo", func() string { return invite(t, h, "b") }, "",
				answer{HTTP: 401, Status: 2000, Code: "UNAUTHORIZED"}},
			{"unknown object", "GET", "/admin/parties/999999", func() string { return hubtest.AdminToken }, "",
				answer{HTTP: 404, Status: 2000, Code: "NOT_FOUND"}},
			{"valid JSON that breaks the spec", "POST", "/ocpi/2.2.1/credentials", func() string { return invite(t, h, "c") },
				`{"token":"tok-b","url":"https://cpo.example/ocpi/versions","roles":[{"role":"CPO","country_code":"NL","party_id":"TOOLONG","business_details":{"name":"x"}}]}`,
				answer{HTTP: 200, Status: 2001, Code: "INVALID_REQUEST", Field: "roles[0].party_id", HasDetail: true}},
			{"wrong JSON type names the field", "POST", "/ocpi/2.2.1/credentials", func() string { return invite(t, h, "d") }, `{"token":5}`,
				answer{HTTP: 200, Status: 2001, Code: "INVALID_REQUEST", Field: "token", HasDetail: true}},
			{"credentials POST when registered", "POST", "/ocpi/2.2.1/credentials", func() string { return cpo.Token() },
				`{"token":"tok-b","url":"https://cpo.example/ocpi/versions","roles":[{"role":"CPO","country_code":"NL","party_id":"RWC","business_details":{"name":"x"}}]}`,
				answer{HTTP: 405, Status: 2000, Code: "METHOD_NOT_ALLOWED"}},
			{"body over the size cap", "POST", "/admin/invitations", func() string { return hubtest.AdminToken }, `{"name":"` + strings.Repeat("x", 1<<20) + `"}`,
				answer{HTTP: 413, Status: 2000, Code: "PAYLOAD_TOO_LARGE"}},
			{"partner API unusable", "POST", "/ocpi/2.2.1/credentials", func() string { return invite(t, h, "e") },
				`{"token":"tok-b","url":"` + broken.URL + `/ocpi/versions","roles":[{"role":"CPO","country_code":"NL","party_id":"BRK","business_details":{"name":"x"}}]}`,
				answer{HTTP: 200, Status: 3001, Code: "CLIENT_API_ERROR"}},
			{"created", "POST", "/admin/invitations", func() string { return hubtest.AdminToken }, `{"name":"new partner"}`,
				answer{HTTP: 201, Status: 1000}},
			{"read", "GET", "/ocpi/versions", func() string { return cpo.Token() }, "",
				answer{HTTP: 200, Status: 1000}},
		}
		for _, tt := range tests {
			var body []byte
			var hdr http.Header
			if tt.body != "" {
				body, hdr = []byte(tt.body), json
			}
			resp := h.Do(t, tt.method, tt.path, tt.token(), body, hdr)
			if diff := cmp.Diff(tt.want, answerOf(t, resp)); diff != "" {
				t.Errorf("%s: (-want +got):\n%s\n%s", tt.name, diff, resp.Body)
			}
		}
	})
}

// TestHTTPSurface runs the checks that need a hub but no state of their own
// on one shared hub.
func TestHTTPSurface(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, "sqlite")
	for name, fn := range map[string]func(*testing.T, *hubtest.Hub){
		"RequestAndCorrelationIDs": testRequestAndCorrelationIDs,
		"AuthorizationHeader":      testAuthorizationHeader,
		"NoRoute":                  testNoRoute,
		"Aliases":                  testAliases,
		"VersionsAndDetails":       testVersionsAndDetails,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, h)
		})
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// testRequestAndCorrelationIDs echoes both ids, also on errors, and replaces
// missing or malformed ones with fresh UUIDs.
func testRequestAndCorrelationIDs(t *testing.T, h *hubtest.Hub) {
	tests := []struct {
		name     string
		rid, cid string
		token    string
		keep     bool
		wantHTTP int
	}{
		{"given ids are echoed", "req-1", "corr-1", hubtest.AdminToken, true, 200},
		{"echoed on errors too", "req-2", "corr-2", "", true, 401},
		{"uuid ids", "7d2b0b4e-2f0c-4d3c-9c86-0a4d1f4a6e01", "3f1c7f5e-8d7a-4b6e-9c3a-5e2d1b0a9f88", hubtest.AdminToken, true, 200},
		{"missing ids are generated", "", "", hubtest.AdminToken, false, 200},
		{"ids with spaces are replaced", "a b", "c d", hubtest.AdminToken, false, 200},
		{"non-ASCII ids are replaced", "réq", "cörr", hubtest.AdminToken, false, 200},
		{"overlong ids are replaced", strings.Repeat("r", 256), strings.Repeat("c", 256), hubtest.AdminToken, false, 200},
	}
	for _, tt := range tests {
		hdr := http.Header{}
		if tt.rid != "" {
			hdr.Set("X-Request-ID", tt.rid)
			hdr.Set("X-Correlation-ID", tt.cid)
		}
		resp := h.Do(t, "GET", "/ocpi/versions", tt.token, nil, hdr)
		if resp.HTTPStatus != tt.wantHTTP {
			t.Errorf("%s: HTTP %d", tt.name, resp.HTTPStatus)
		}
		rid, cid := resp.Header.Get("X-Request-ID"), resp.Header.Get("X-Correlation-ID")
		if tt.keep {
			if rid != tt.rid || cid != tt.cid {
				t.Errorf("%s: echoed %q, %q", tt.name, rid, cid)
			}
			continue
		}
		if !uuidRE.MatchString(rid) || !uuidRE.MatchString(cid) || rid == cid {
			t.Errorf("%s: generated %q, %q; want two fresh UUIDs", tt.name, rid, cid)
		}
		// Made in this order (internal/ids).
		hubtest.TimeOrdered(t, tt.name+": the generated X-Request-ID, then X-Correlation-ID", rid, cid)
	}
	a := h.Do(t, "GET", "/ocpi/versions", hubtest.AdminToken, nil, nil).Header.Get("X-Request-ID")
	b := h.Do(t, "GET", "/ocpi/versions", hubtest.AdminToken, nil, nil).Header.Get("X-Request-ID")
	if a == b {
		t.Errorf("two requests got the same generated id %s", a)
	}
	hubtest.TimeOrdered(t, "the X-Request-IDs generated for two requests in turn", a, b)
}

// testAuthorizationHeader: missing, malformed and unknown tokens get a 401
// envelope with WWW-Authenticate; Base64 and raw forms of a known token both
// work.
func testAuthorizationHeader(t *testing.T, h *hubtest.Hub) {
	b64 := base64.StdEncoding.EncodeToString([]byte(hubtest.AdminToken))
	tests := []struct {
		name   string
		header string
		want   int
	}{
		{"missing", "", 401},
		{"empty", "Token ", 401},
		{"bearer scheme", "Bearer " + hubtest.AdminToken, 401},
		{"no scheme", hubtest.AdminToken, 401},
		{"unknown token", "Token not-a-known-token", 401},
		{"unknown Base64 token", "Token " + base64.StdEncoding.EncodeToString([]byte("not-known")), 401},
		{"token with a space", "Token abc def", 401},
		{"raw", "Token " + hubtest.AdminToken, 200},
		{"Base64", "Token " + b64, 200},
		{"Base64 with the spec's trailing newline", "Token " + base64.StdEncoding.EncodeToString([]byte(hubtest.AdminToken+"\n")), 200},
		{"lower-case scheme", "token " + b64, 200},
	}
	for _, tt := range tests {
		hdr := http.Header{}
		if tt.header != "" {
			hdr.Set("Authorization", tt.header)
		}
		resp := h.Do(t, "GET", "/admin/parties", "", nil, hdr)
		got := answerOf(t, resp)
		if got.HTTP != tt.want {
			t.Errorf("%s: HTTP %d, want %d: %s", tt.name, got.HTTP, tt.want, resp.Body)
			continue
		}
		if tt.want == 401 {
			if got.Status != 2000 || got.Code != ocpi.EUNAUTHORIZED {
				t.Errorf("%s: %+v", tt.name, got)
			}
			if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Token") {
				t.Errorf("%s: WWW-Authenticate = %q", tt.name, resp.Header.Get("WWW-Authenticate"))
			}
		}
	}
}

// TestTokenAReachesOnlyVersionsAndCredentials (transport.md §8).
func TestTokenAReachesOnlyVersionsAndCredentials(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		tokenA := invite(t, h, "Token A partner")
		for _, tt := range []struct {
			method, path string
			want         int
		}{
			{"GET", "/ocpi/versions", 200},
			{"GET", "/ocpi/2.2.1", 200},
			{"GET", "/ocpi/2.2.1/credentials", 200},
			{"GET", "/ocpi/credentials", 200},
			{"GET", "/ocpi/2.2.1/hubclientinfo", 401},
			{"GET", "/admin/parties", 401},
			{"POST", "/admin/invitations", 401},
			{"PUT", "/ocpi/2.2.1/credentials", 405}, // not registered yet
			{"DELETE", "/ocpi/2.2.1/credentials", 405},
		} {
			var body []byte
			var hdr http.Header
			if tt.method == "PUT" || tt.method == "POST" {
				body, hdr = []byte(`{"name":"x"}`), http.Header{"Content-Type": {"application/json"}}
			}
			resp := h.Do(t, tt.method, tt.path, base64.StdEncoding.EncodeToString([]byte(tokenA)), body, hdr)
			if resp.HTTPStatus != tt.want {
				t.Errorf("%s %s with token A: HTTP %d, want %d: %s", tt.method, tt.path, resp.HTTPStatus, tt.want, resp.Body)
			}
		}
	})
}

// testNoRoute answers unknown paths with a 404 envelope and known paths with
// a wrong method with 405 and Allow.
func testNoRoute(t *testing.T, h *hubtest.Hub) {
	tests := []struct {
		method, path string
		want         answer
		allow        string
	}{
		{"GET", "/ocpi/2.2.1/nothing-here", answer{HTTP: 404, Status: 2000, Code: "NOT_FOUND"}, ""},
		{"GET", "/ocpi/9.9.9", answer{HTTP: 404, Status: 2000, Code: "NOT_FOUND"}, ""},
		{"GET", "/admin/nothing", answer{HTTP: 404, Status: 2000, Code: "NOT_FOUND"}, ""},
		{"PATCH", "/ocpi/2.2.1/credentials", answer{HTTP: 405, Status: 2000, Code: "METHOD_NOT_ALLOWED"}, "GET, POST, PUT, DELETE"},
		{"PATCH", "/ocpi/credentials", answer{HTTP: 405, Status: 2000, Code: "METHOD_NOT_ALLOWED"}, "GET, POST, PUT, DELETE"},
		{"POST", "/ocpi/versions", answer{HTTP: 405, Status: 2000, Code: "METHOD_NOT_ALLOWED"}, "GET"},
		{"DELETE", "/ocpi/2.2.1/hubclientinfo", answer{HTTP: 405, Status: 2000, Code: "METHOD_NOT_ALLOWED"}, "GET"},
		{"PUT", "/admin/invitations", answer{HTTP: 405, Status: 2000, Code: "METHOD_NOT_ALLOWED"}, "GET, POST"},
	}
	for _, tt := range tests {
		resp := h.Do(t, tt.method, tt.path, hubtest.AdminToken, nil, nil)
		if diff := cmp.Diff(tt.want, answerOf(t, resp)); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tt.method, tt.path, diff)
		}
		if got := resp.Header.Get("Allow"); got != tt.allow {
			t.Errorf("%s %s: Allow = %q, want %q", tt.method, tt.path, got, tt.allow)
		}
	}
}

// testAliases serves the URL forms of DESIGN §4 from the same routes.
func testAliases(t *testing.T, h *hubtest.Hub) {
	get := func(path string) (int, string) {
		resp := h.Do(t, "GET", path, hubtest.AdminToken, nil, nil)
		env, err := ocpi.DecodeEnvelope(resp.Body)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return resp.HTTPStatus, string(env.Data)
	}
	_, details := get("/ocpi/2.2.1")
	_, versions := get("/ocpi/versions")
	for path, want := range map[string]string{
		"/ocpi/2.2.1/":      details,
		"/ocpi/cpo/2.2.1":   details,
		"/ocpi/cpo/2.2.1/":  details,
		"/ocpi/emsp/2.2.1":  details,
		"/ocpi/ptp/2.2.1/":  details,
		"/ocpi/versions/":   versions,
		"/ocpi/versions///": versions,
	} {
		status, data := get(path)
		if status != 200 || data != want {
			t.Errorf("GET %s: HTTP %d %s; want the data of its canonical URL", path, status, data)
		}
	}
	// The unversioned credentials alias reaches the credentials module: the
	// admin token has no credentials, which that module alone says.
	for _, path := range []string{"/ocpi/credentials", "/ocpi/2.2.1/credentials"} {
		resp := h.Do(t, "GET", path, hubtest.AdminToken, nil, nil)
		if a := answerOf(t, resp); a.HTTP != 405 || !strings.Contains(string(resp.Body), "admin token has no credentials") {
			t.Errorf("GET %s: %+v %s", path, a, resp.Body)
		}
	}
}

// testVersionsAndDetails lists 2.3.0 (the Payments module), 2.2.1, 2.2 and
// the legacy 2.1.1 and 2.0, and
// every endpoint with identifier, role and an absolute URL the hub answers
// at.
func testVersionsAndDetails(t *testing.T, h *hubtest.Hub) {
	var versions []ocpi.Version
	h.Admin(t, "GET", "/ocpi/versions", nil, &versions)
	wantVersions := []ocpi.Version{{Version: "2.3.0", URL: h.PublicURL() + "/ocpi/2.3.0"}, {Version: "2.2.1", URL: h.PublicURL() + "/ocpi/2.2.1"},
		{Version: "2.2", URL: h.PublicURL() + "/ocpi/2.2"}, {Version: "2.1.1", URL: h.PublicURL() + "/ocpi/2.1.1"}, {Version: "2.0", URL: h.PublicURL() + "/ocpi/2.0"}}
	if diff := cmp.Diff(wantVersions, versions); diff != "" {
		t.Fatalf("versions (-want +got):\n%s", diff)
	}
	var d ocpi.VersionDetails
	h.Admin(t, "GET", "/ocpi/2.2.1", nil, &d)
	want := ocpi.VersionDetails{Version: "2.2.1", Endpoints: []ocpi.Endpoint{
		{Identifier: "credentials", Role: "SENDER", URL: h.PublicURL() + "/ocpi/2.2.1/credentials"},
		{Identifier: "hubclientinfo", Role: "SENDER", URL: h.PublicURL() + "/ocpi/2.2.1/hubclientinfo"},
	}}
	for _, e := range want.Endpoints {
		if _, ok := d.Find(e.Identifier, e.Role); !ok {
			t.Errorf("version details lack %s %s: %+v", e.Identifier, e.Role, d.Endpoints)
		}
	}
	for _, e := range d.Endpoints {
		if !strings.HasPrefix(e.URL, h.PublicURL()+"/ocpi/2.2.1/") || (e.Role != "SENDER" && e.Role != "RECEIVER") {
			t.Errorf("endpoint %+v", e)
		}
	}
}

// metric returns the value of a sample in the Prometheus text format, or -1.
func metric(t *testing.T, h *hubtest.Hub, name string, labels map[string]string) float64 {
	t.Helper()
	resp := h.Do(t, "GET", "/metrics", "", nil, nil)
	if resp.HTTPStatus != 200 {
		t.Fatalf("/metrics: HTTP %d", resp.HTTPStatus)
	}
next:
	for _, line := range strings.Split(string(resp.Body), "\n") {
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		for k, v := range labels {
			if !strings.Contains(line, k+`="`+v+`"`) {
				continue next
			}
		}
		f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q", line)
		}
		return f
	}
	return -1
}

// TestMetrics counts requests by route pattern (aliases under their route,
// unknown paths under the catch-all) and status, with latency histograms.
func TestMetrics(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, "sqlite")
	for range 3 {
		h.Do(t, "GET", "/ocpi/versions", hubtest.AdminToken, nil, nil)
	}
	h.Do(t, "GET", "/ocpi/versions/", hubtest.AdminToken, nil, nil)
	h.Do(t, "GET", "/ocpi/versions", "", nil, nil)
	h.Do(t, "GET", "/ocpi/2.2.1/no/such/thing", "", nil, nil)
	h.Do(t, "GET", "/ocpi/2.2.1/other/thing", "", nil, nil)

	for _, tt := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"route": "GET /ocpi/versions", "method": "GET", "status": "200"}, 4},
		{map[string]string{"route": "GET /ocpi/versions", "method": "GET", "status": "401"}, 1},
		{map[string]string{"route": "/ocpi/", "method": "GET", "status": "404"}, 2},
	} {
		if got := metric(t, h, "ocpihub_http_requests_total", tt.labels); got != tt.want {
			t.Errorf("requests_total%v = %v, want %v", tt.labels, got, tt.want)
		}
	}
	if got := metric(t, h, "ocpihub_http_request_duration_seconds_count", map[string]string{"route": "GET /ocpi/versions"}); got != 5 {
		t.Errorf("latency histogram count = %v, want 5", got)
	}
	// Job metrics and the Go runtime are exported too.
	resp := h.Do(t, "GET", "/metrics", "", nil, nil)
	for _, name := range []string{"go_goroutines", "ocpihub_http_request_duration_seconds_bucket"} {
		if !strings.Contains(string(resp.Body), name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}

// TestHealthAndReadiness: /healthz answers while the process lives; /readyz
// answers OK with a reachable, migrated database, and 503 once draining.
func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		var body map[string]any
		resp := h.Do(t, "GET", "/healthz", "", nil, nil)
		if resp.HTTPStatus != 200 || json.Unmarshal(resp.Body, &body) != nil || body["status"] != "ok" {
			t.Errorf("/healthz: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		resp = h.Do(t, "GET", "/readyz", "", nil, nil)
		body = nil
		if resp.HTTPStatus != 200 || json.Unmarshal(resp.Body, &body) != nil || body["status"] != "ok" || body["engine"] != string(h.Engine) {
			t.Errorf("/readyz: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		h.Server.Drain()
		resp = h.Do(t, "GET", "/readyz", "", nil, nil)
		body = nil
		if resp.HTTPStatus != 503 || json.Unmarshal(resp.Body, &body) != nil || body["status"] != "draining" {
			t.Errorf("/readyz while draining: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		if resp := h.Do(t, "GET", "/healthz", "", nil, nil); resp.HTTPStatus != 200 {
			t.Errorf("/healthz while draining: HTTP %d", resp.HTTPStatus)
		}
	})
}

// TestCanonicalPath is the alias table of DESIGN §4.
func TestCanonicalPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/ocpi/versions":                        "/ocpi/versions",
		"/ocpi/versions/":                       "/ocpi/versions",
		"/ocpi/2.2.1/":                          "/ocpi/2.2.1",
		"/ocpi/cpo/2.2.1":                       "/ocpi/2.2.1",
		"/ocpi/emsp/2.2.1/":                     "/ocpi/2.2.1",
		"/ocpi/cpo/2.2.1/locations/IN/ABC/LOC1": "/ocpi/2.2.1/cpo/locations/IN/ABC/LOC1",
		"/ocpi/emsp/2.2.1/tokens/IN/OHE/T1/":    "/ocpi/2.2.1/emsp/tokens/IN/OHE/T1",
		"/ocpi/ptp/2.2.1/payments/terminals":    "/ocpi/2.2.1/payments/terminals",
		"/ocpi/cpo/2.3.0/payments/terminals/T1": "/ocpi/2.3.0/payments/terminals/T1",
		"/ocpi/cpo/2.1.1/locations":             "/ocpi/2.1.1/cpo/locations",
		"/ocpi/credentials":                     "/ocpi/2.2.1/credentials",
		"/ocpi/credentials/":                    "/ocpi/2.2.1/credentials",
		"/ocpi/2.2.1/cpo/locations":             "/ocpi/2.2.1/cpo/locations",
		"/ocpi/nsp/2.2.1/locations":             "/ocpi/nsp/2.2.1/locations",
		"/ocpi/cpo/9.9/locations":               "/ocpi/cpo/9.9/locations",
		"/admin/parties/":                       "/admin/parties",
		"/":                                     "/",
		"///":                                   "/",
	} {
		if got := httpapi.CanonicalPath(in); got != want {
			t.Errorf("CanonicalPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// seedClientInfo adds n parties to HubClientInfo, with last_updated values
// that repeat (so paging must break ties by key).
func seedClientInfo(t *testing.T, h *hubtest.Hub, n int) {
	t.Helper()
	hubtest.SeedClientInfo(t, h.DB, n, "NL", func(i int) (string, int64) {
		return fmt.Sprintf("P%02d", i), int64(1_700_000_000_000_000 + (i/3)*1_000_000)
	})
}

// TestHubClientInfoPaging follows the Link headers of a real paged list on
// both engines: every party exactly once, X-Total-Count and X-Limit on every
// page, filters kept, no Link on the last page.
func TestHubClientInfoPaging(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo := hubtest.Add(t, h, sim.StartCPO, "Paging CPO", "NL", "PGC")
		seedClientInfo(t, h, 10)
		var all []map[string]any
		if _, err := cpo.CallHub(hubtest.Ctx(t, 10e9), "GET", "hubclientinfo", "", "", nil, &all); err != nil {
			t.Fatal(err)
		}
		total := len(all) // the seeded parties, the CPO and the hub's own eMSP

		next := h.PublicURL() + "/ocpi/2.2.1/hubclientinfo?limit=3&date_from=2000-01-01T00:00:00Z"
		seen := map[string]bool{}
		pages := 0
		for next != "" {
			pages++
			if pages > total {
				t.Fatal("Link does not end")
			}
			var page []map[string]any
			resp, err := cpo.Do(hubtest.Ctx(t, 10e9), "GET", next, nil, &page)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Header.Get("X-Total-Count") != strconv.Itoa(total) || resp.Header.Get("X-Limit") != "100" {
				t.Errorf("page %d: X-Total-Count %q X-Limit %q", pages, resp.Header.Get("X-Total-Count"), resp.Header.Get("X-Limit"))
			}
			if len(page) == 0 || len(page) > 3 {
				t.Fatalf("page %d has %d objects", pages, len(page))
			}
			for _, ci := range page {
				key := fmt.Sprint(ci["role"], ci["country_code"], ci["party_id"])
				if seen[key] {
					t.Errorf("%s on two pages", key)
				}
				seen[key] = true
			}
			next = ocpi.NextLink(resp.Header)
			if next != "" && (!strings.Contains(next, "date_from=2000-01-01T00%3A00%3A00Z") || !strings.HasPrefix(next, h.PublicURL())) {
				t.Errorf("next link %s lost the filter or the public URL", next)
			}
		}
		if len(seen) != total || pages != (total+2)/3 {
			t.Errorf("saw %d of %d parties on %d pages", len(seen), total, pages)
		}
		// A client computing offsets itself gets the same pages without the cursor.
		var tail []map[string]any
		if _, err := cpo.Do(hubtest.Ctx(t, 10e9), "GET", h.PublicURL()+"/ocpi/2.2.1/hubclientinfo?offset="+strconv.Itoa(total-2)+"&limit=100", nil, &tail); err != nil {
			t.Fatal(err)
		}
		if len(tail) != 2 {
			t.Errorf("offset %d returned %d objects, want 2", total-2, len(tail))
		}
		resp := h.Do(t, "GET", "/ocpi/2.2.1/hubclientinfo?offset=-1", cpo.Token(), nil, nil)
		if a := answerOf(t, resp); a.HTTP != 200 || a.Status != 2001 || a.Field != "offset" {
			t.Errorf("offset=-1: %+v", a)
		}
	})
}
