package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/httpapi"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/openapi"
)

// TestEveryRouteDescribed holds the OpenAPI document to the route table of
// an assembled hub: every row with a method has a description with a
// summary, and every route is in the document once.
func TestEveryRouteDescribed(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, "sqlite")
	doc := h.Server.OpenAPI()
	for _, r := range h.Server.Routes() {
		method, path, ok := strings.Cut(r.Pattern, " ")
		if !ok {
			if !httpapi.IsFallback(r.Pattern) {
				t.Errorf("route %q has no method: give it one, or list it as a fallback", r.Pattern)
			}
			continue
		}
		if r.Doc.Summary == "" {
			t.Errorf("row %q has no Doc.Summary: describe it in its row", r.Pattern)
		}
		tmpl := strings.NewReplacer("...}", "}").Replace(path)
		if _, ok := doc.Operation(method, tmpl); !ok {
			t.Errorf("route %q is not in the document", r.Pattern)
		}
	}
	ids := map[string]string{}
	doc.Each(func(method, path string, op *openapi.Operation) {
		if prev, dup := ids[op.OperationID]; dup {
			t.Errorf("operationId %s of %s %s is also %s", op.OperationID, method, path, prev)
		}
		ids[op.OperationID] = method + " " + path
		for _, p := range op.Parameters {
			if p.In == "path" && !strings.Contains(path, "{"+p.Name+"}") {
				t.Errorf("%s %s: path parameter %s is not in the path", method, path, p.Name)
			}
		}
		if len(op.Security) == 0 && strings.HasPrefix(path, "/admin") {
			t.Errorf("%s %s: an admin operation without security", method, path)
		}
	})
	if _, err := openapi.NewValidator(doc); err != nil {
		t.Fatalf("the document does not compile: %v", err)
	}
}

// TestOpenAPIServed: /openapi.json is public, OpenAPI 3.1, names the hub's
// public URL as its server, and describes the admin and OCPI routes with the
// OCPI envelope around the documented data.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, "sqlite")
	resp := h.Do(t, http.MethodGet, "/openapi.json", "", nil, nil)
	if resp.HTTPStatus != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json: HTTP %d %s", resp.HTTPStatus, resp.Header.Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
		Paths map[string]map[string]struct {
			Security  []map[string][]string `json:"security"`
			Responses map[string]json.RawMessage
		} `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(resp.Body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || len(doc.Servers) != 1 || doc.Servers[0].URL != h.PublicURL() {
		t.Errorf("openapi %q, servers %+v", doc.OpenAPI, doc.Servers)
	}
	admin := doc.Paths["/admin/parties/{id}"]["get"]
	if len(admin.Security) != 1 || admin.Security[0]["adminToken"] == nil {
		t.Errorf("GET /admin/parties/{id} security: %v", admin.Security)
	}
	for _, code := range []string{"200", "401", "404"} {
		if admin.Responses[code] == nil {
			t.Errorf("GET /admin/parties/{id} does not declare HTTP %s", code)
		}
	}
	if ok := string(admin.Responses["200"]); !strings.Contains(ok, `#/components/schemas/Platform`) || !strings.Contains(ok, `#/components/schemas/OcpiSuccess`) {
		t.Errorf("GET /admin/parties/{id} 200: %s", ok)
	}
	if doc.Paths["/ocpi/2.2.1/hubclientinfo"]["get"].Security[0]["ocpiToken"] == nil {
		t.Error("hubclientinfo is not behind the OCPI token")
	}
	if pub := doc.Paths["/healthz"]["get"].Security; pub == nil || len(pub) != 0 {
		t.Errorf("/healthz security %v, want [] (public)", pub)
	}
	for _, name := range []string{"Credentials", "ClientInfo", "VersionDetails", "Invitation", "OcpiErrorResponse"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("no component schema %s", name)
		}
	}
}

// TestRowsComplete holds every row of the route table (served or not) to
// what the mux, version details and schema tests need from it: a pattern
// registered once, a summary, a version details entry on every OCPI module
// route of a partner (2.2.1, 2.3.0, 2.1.1 and 2.0 modules are listed;
// ocpihub's own APIs under /ocpi/2.2.1 are named in ours), and data schemas
// on every 2.2.1 and 2.3.0 module route of the OCPI spec.
func TestRowsComplete(t *testing.T) {
	t.Parallel()
	// ours are routes under /ocpi/2.2.1 that are ocpihub's own APIs, not
	// OCPI modules: they are not listed in version details.
	ours := []string{"/ocpi/2.2.1/webhooks", "/ocpi/2.2.1/traffic", "/ocpi/2.2.1/payments/upi/"}
	// unchecked are OCPI module routes without a data schema: the answer
	// passed back from another party as it came.
	unchecked := map[string]bool{
		"POST /ocpi/2.2.1/payments/terminals/activate": true,
		"POST /ocpi/2.3.0/payments/terminals/activate": true,
	}
	seen := map[string]bool{}
	for _, r := range httpapi.Rows() {
		if seen[r.Pattern] {
			t.Errorf("row %q is declared twice", r.Pattern)
		}
		seen[r.Pattern] = true
		_, path, ok := strings.Cut(r.Pattern, " ")
		if !ok {
			continue
		}
		if r.Doc.Summary == "" {
			t.Errorf("row %q has no Doc.Summary", r.Pattern)
		}
		module := false
		for _, v := range []string{"/ocpi/2.2.1/", "/ocpi/2.3.0/"} {
			if strings.HasPrefix(path, v) && !slices.ContainsFunc(ours, func(p string) bool { return strings.HasPrefix(path, p) }) {
				module = true
			}
		}
		if !module {
			continue
		}
		if r.Listed.Identifier == "" || !strings.HasPrefix(path, r.Listed.Path) {
			t.Errorf("row %q: Listed %+v does not list the module it belongs to", r.Pattern, r.Listed)
		}
		if r.Schema == nil && !unchecked[r.Pattern] {
			t.Errorf("row %q has no Schema: name the OCPI schemas of its data (route.Data(\"\") for none)", r.Pattern)
		}
	}
}
