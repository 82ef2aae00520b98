package hubtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ocpihub/ocpihub/internal/httpapi"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/schematest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// DefaultChecks are the checks every test hub runs on every response.
func DefaultChecks() []Check {
	return []Check{CheckEnvelope, CheckSchemas, CheckOpenAPI}
}

// validators caches compiled OpenAPI documents by content: hubs with the
// same route table share one (the document is compiled once, not per hub).
var validators sync.Map // sha256 of the document → *openapi.Validator

// validatorFor returns the compiled OpenAPI document of a hub's server.
func validatorFor(s *httpapi.Server) (*openapi.Validator, error) {
	doc := s.OpenAPI()
	doc.Servers = nil // the hub's address is not part of what is checked
	raw, err := doc.JSON()
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256(raw)
	if v, ok := validators.Load(key); ok {
		return v.(*openapi.Validator), nil
	}
	v, err := openapi.NewValidator(doc)
	if err != nil {
		return nil, err
	}
	actual, _ := validators.LoadOrStore(key, v)
	return actual.(*openapi.Validator), nil
}

// bareValidator is the document of a server without optional modules, for
// exchanges made up by hand.
var bareValidator = sync.OnceValues(func() (*openapi.Validator, error) {
	return validatorFor(httpapi.New(httpapi.Config{}))
})

// CheckOpenAPI validates every response against the hub's own OpenAPI
// document (/openapi.json): the operation must declare the HTTP status, the
// media type must be the declared one, and the body must match the declared
// schema (on OCPI routes the envelope, and data against the schema of the Go
// type the route documents). Requests no operation matches (unknown paths,
// the console's pages) are not checked here.
func CheckOpenAPI(t testing.TB, ex Exchange) {
	v := ex.API
	if v == nil {
		var err error
		if v, err = bareValidator(); err != nil {
			t.Errorf("the OpenAPI document does not compile: %v", err)
			return
		}
	}
	method := ex.Method
	if method == http.MethodHead {
		return
	}
	if err := v.Check(method, httpapi.CanonicalPath(ex.Path), ex.Status, ex.Header, ex.Body); err != nil && !errors.Is(err, openapi.ErrUndocumented) {
		t.Errorf("openapi: %v", err)
	}
}

// CheckSchemas validates every OCPI 2.2.1 response against the JSON schemas
// of the spec (internal/schematest): the envelope always, and data on the
// routes schematest.Routes221 lists.
func CheckSchemas(t testing.TB, ex Exchange) {
	if err := schematest.CheckResponse(ex.Method, ex.Path, ex.Header, ex.Body); err != nil {
		t.Errorf("schema: %v\n%s", err, ex)
	}
}

// CheckEnvelope requires every /ocpi and /admin response to be an OCPI
// envelope: a JSON object with an integer status_code and a timestamp in the
// canonical form; errors carry error.code and error.description, success
// never carries error; status_code and the HTTP status agree in class.
func CheckEnvelope(t testing.TB, ex Exchange) {
	if !strings.HasPrefix(ex.Path, "/ocpi/") && !strings.HasPrefix(ex.Path, "/admin/") && ex.Path != "/ocpi" {
		return
	}
	if !strings.HasPrefix(ex.Header.Get("Content-Type"), "application/json") {
		// Non-JSON answers (PDFs, images, pages) are not envelopes.
		if ex.Status >= 400 {
			t.Errorf("non-JSON error response: %s", ex)
		}
		return
	}
	var env struct {
		Data          json.RawMessage  `json:"data"`
		StatusCode    *json.Number     `json:"status_code"`
		StatusMessage *string          `json:"status_message"`
		Error         *json.RawMessage `json:"error"`
		Timestamp     *string          `json:"timestamp"`
	}
	dec := json.NewDecoder(bytes.NewReader(ex.Body))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		t.Errorf("response is not a JSON object: %v: %s", err, ex)
		return
	}
	if env.StatusCode == nil {
		t.Errorf("envelope without status_code: %s", ex)
		return
	}
	code, err := env.StatusCode.Int64()
	if err != nil {
		t.Errorf("status_code is not an integer: %s", ex)
		return
	}
	if env.Timestamp == nil {
		t.Errorf("envelope without timestamp: %s", ex)
	} else if dt, err := ocpi.ParseDateTime(*env.Timestamp); err != nil || dt.String() != *env.Timestamp {
		t.Errorf("timestamp %q is not canonical: %s", *env.Timestamp, ex)
	}
	if ocpi.IsSuccess(int(code)) {
		if env.Error != nil {
			t.Errorf("success envelope with an error object: %s", ex)
		}
		if ex.Status >= 400 {
			t.Errorf("success status_code with HTTP %d: %s", ex.Status, ex)
		}
		return
	}
	if env.Error == nil {
		t.Errorf("error envelope without error object: %s", ex)
		return
	}
	var e struct {
		Code        string `json:"code"`
		Description string `json:"description"`
		Details     *struct {
			Field string `json:"field"`
			Issue string `json:"issue"`
		} `json:"details"`
	}
	if err := json.Unmarshal(*env.Error, &e); err != nil || e.Code == "" || e.Description == "" {
		t.Errorf("error object lacks code or description: %s", ex)
	}
	if e.Details != nil && (e.Details.Field == "" || e.Details.Issue == "") {
		t.Errorf("error details lack field or issue: %s", ex)
	}
}

// CheckLegacyRequests validates every body a simulated platform received
// from the hub on its OCPI 2.1.1 endpoints against the 2.1.1 schemas
// (schematest.CheckRequest211): what the hub sends a 2.1.1 partner is held
// to the same standard as what it answers.
func CheckLegacyRequests(t testing.TB, p *sim.Platform) {
	t.Helper()
	for _, r := range p.Requests(func(r sim.Request) bool { return strings.HasPrefix(r.Path, "/ocpi/2.1.1/") && len(r.Body) > 0 }) {
		module, level := legacyModule(r.Path)
		if err := schematest.CheckRequest211(module, r.Method, level, r.Body); err != nil {
			t.Errorf("%s received %s %s: %v\n%s", p.Name(), r.Method, r.Path, err, r.Body)
		}
	}
}

// legacyModule reads the module and level of a simulator's 2.1.1 path:
// /ocpi/2.1.1/credentials, /ocpi/2.1.1/{role}/{module}/… (locations: the
// level from the segments after the module; tokens: "authorize").
func legacyModule(path string) (module, level string) {
	seg := strings.Split(strings.Trim(strings.TrimPrefix(path, "/ocpi/2.1.1/"), "/"), "/")
	if len(seg) > 0 && seg[0] == "credentials" {
		return "credentials", ""
	}
	if len(seg) < 2 {
		return "", ""
	}
	module, rest := seg[1], seg[2:]
	switch {
	case module == "locations" && len(rest) == 4:
		level = "evse"
	case module == "locations" && len(rest) == 5:
		level = "connector"
	case module == "locations":
		level = "location"
	case module == "tokens" && len(rest) > 0 && rest[len(rest)-1] == "authorize":
		level = "authorize"
	case module == "commands" && seg[0] == "cpo" && len(rest) == 1:
		level = rest[0] // a command the CPO receives
	case module == "commands":
		level = "result" // a result at the eMSP's response_url
	}
	return module, level
}
