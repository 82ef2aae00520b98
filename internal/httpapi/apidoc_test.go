package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/httpapi"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/openapi"
)

// TestEveryRouteDescribed holds the OpenAPI document to the route table of
// an assembled hub: every route with a method has a description (add it to
// the module's apidoc_*.go), every description has its route, and every
// route is in the document once.
func TestEveryRouteDescribed(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, "sqlite")
	docs := httpapi.Docs()
	doc := h.Server.OpenAPI()
	seen := map[string]bool{}
	for _, r := range h.Server.Routes() {
		method, path, ok := strings.Cut(r.Pattern, " ")
		if !ok {
			if !httpapi.IsFallback(r.Pattern) {
				t.Errorf("route %q has no method: give it one, or list it as a fallback", r.Pattern)
			}
			continue
		}
		seen[r.Pattern] = true
		d, ok := docs[r.Pattern]
		if !ok {
			t.Errorf("route %q has no description: add it to the module's apiDocs (internal/httpapi/apidoc_*.go)", r.Pattern)
			continue
		}
		if d.Summary == "" {
			t.Errorf("route %q: the description has no summary", r.Pattern)
		}
		tmpl := strings.NewReplacer("...}", "}").Replace(path)
		if _, ok := doc.Operation(method, tmpl); !ok {
			t.Errorf("route %q is not in the document", r.Pattern)
		}
	}
	for p := range docs {
		if !seen[p] {
			t.Errorf("description of %q, which is not a route (a typo, or a route that was removed)", p)
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
