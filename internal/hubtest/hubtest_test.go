package hubtest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestHarnessRegistersAndRestarts drives the harness itself: a CPO registers,
// the hub restarts on the same database and address, and the CPO's token
// still works.
func TestHarnessRegistersAndRestarts(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo, err := sim.StartCPO("Harness CPO", "NL", "HCP", hubtest.Logger())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cpo.Close)
		h.Register(t, cpo.Platform)

		var list []*party.Platform
		h.Admin(t, http.MethodGet, "/admin/parties", nil, &list)
		if len(list) != 1 || list[0].Status != party.StatusConnected || list[0].Name != "Harness CPO" {
			t.Fatalf("parties after registration: %+v", list)
		}

		h.Restart(t)
		url, _ := cpo.HubEndpoint("credentials", "")
		if _, err := cpo.Do(hubtest.Ctx(t, 10e9), http.MethodGet, url, nil, nil); err != nil {
			t.Fatalf("credentials GET after restart: %v", err)
		}
	})
}

// recordingTB collects what checks report instead of failing the test.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestDefaultChecksValidateSchemas: the default checks catch an answer whose
// data breaks the spec's schema although its envelope is well-formed.
func TestDefaultChecksValidateSchemas(t *testing.T) {
	t.Parallel()
	ex := hubtest.Exchange{
		Method: "GET", Path: "/ocpi/2.2.1/hubclientinfo", Status: 200,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   []byte(`{"data":[{"party_id":"EXA","country_code":"NL","role":"CPO","status":"ONLINE","last_updated":"2025-01-01T00:00:00Z"}],"status_code":1000,"timestamp":"2025-01-01T00:00:00Z"}`),
	}
	rec := &recordingTB{TB: t}
	for _, c := range hubtest.DefaultChecks() {
		c(rec, ex)
	}
	// The spec's schema and our own OpenAPI document both catch it.
	if len(rec.errors) != 2 || !strings.Contains(rec.errors[0], "data[0].status") || !strings.Contains(rec.errors[1], "openapi:") || !strings.Contains(rec.errors[1], "/data/0/status") {
		t.Errorf("checks reported %q; want a schema and an OpenAPI failure naming data[0].status", rec.errors)
	}
	ex.Body = []byte(strings.Replace(string(ex.Body), "ONLINE", "OFFLINE", 1))
	rec = &recordingTB{TB: t}
	for _, c := range hubtest.DefaultChecks() {
		c(rec, ex)
	}
	if len(rec.errors) != 0 {
		t.Errorf("a valid answer was reported: %q", rec.errors)
	}
}

// TestCheckOpenAPI: the OpenAPI check catches what the envelope and schema
// checks cannot see — a status the route does not declare, an admin answer
// whose data is not the documented type, a plain endpoint answering another
// shape — and passes the answers the document describes.
func TestCheckOpenAPI(t *testing.T) {
	t.Parallel()
	jsonHdr := http.Header{"Content-Type": {"application/json"}}
	platform := `{"id":1,"name":"Acme","status":"CONNECTED","connection":"CONNECTED","version":"2.2.1","versions_url":"http://acme.invalid/ocpi/versions","endpoints":[],"roles":[],"token_base64":true,"sandbox":false,"initiated_by_us":false,"created_at":"2025-01-01T00:00:00Z","updated_at":"2025-01-01T00:00:00Z"}`
	env := func(data string) []byte {
		return []byte(`{"data":` + data + `,"status_code":1000,"timestamp":"2025-01-01T00:00:00Z"}`)
	}
	for _, tc := range []struct {
		name string
		ex   hubtest.Exchange
		want string // "" = passes
	}{
		{"documented answer", hubtest.Exchange{Method: "GET", Path: "/admin/parties/1", Status: 200, Header: jsonHdr, Body: env(platform)}, ""},
		{"OCPI error with HTTP 200", hubtest.Exchange{Method: "POST", Path: "/admin/parties/1/suspend", Status: 200, Header: jsonHdr,
			Body: []byte(`{"status_code":2001,"status_message":"x","error":{"code":"INVALID_REQUEST","description":"x"},"timestamp":"2025-01-01T00:00:00Z"}`)}, ""},
		{"undeclared status", hubtest.Exchange{Method: "GET", Path: "/admin/parties", Status: 418, Header: jsonHdr,
			Body: []byte(`{"status_code":2000,"error":{"code":"X","description":"x"},"timestamp":"2025-01-01T00:00:00Z"}`)}, "HTTP 418 is not a declared response"},
		{"data of another type", hubtest.Exchange{Method: "GET", Path: "/admin/parties/1", Status: 200, Header: jsonHdr,
			Body: env(`{"id":1,"name":"Acme","token":"t","versions_url":"http://x.invalid","expires_at":"2025-01-01T00:00:00Z"}`)}, "missing properties"},
		{"data where none is documented", hubtest.Exchange{Method: "DELETE", Path: "/ocpi/2.2.1/credentials", Status: 200, Header: jsonHdr, Body: env(`{}`)}, "/data"},
		{"readyz of another shape", hubtest.Exchange{Method: "GET", Path: "/readyz", Status: 200, Header: jsonHdr, Body: []byte(`{"ready":true}`)}, "status"},
		{"wrong media type", hubtest.Exchange{Method: "GET", Path: "/healthz", Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte(`ok`)}, "declared application/json"},
		{"alias path", hubtest.Exchange{Method: "GET", Path: "/ocpi/credentials", Status: 200, Header: jsonHdr, Body: env(`{"token":"x"}`)}, "missing properties"},
		{"unknown path", hubtest.Exchange{Method: "GET", Path: "/console/whatever", Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte(`<p>`)}, ""},
	} {
		rec := &recordingTB{TB: t}
		hubtest.CheckOpenAPI(rec, tc.ex)
		got := strings.Join(rec.errors, "\n")
		switch {
		case tc.want == "" && got != "":
			t.Errorf("%s: reported %s", tc.name, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("%s: reported %q, want it to mention %q", tc.name, got, tc.want)
		}
	}
}
