package openapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/openapi"
)

type inner struct {
	Code string `json:"code"`
}

type embedded struct {
	Shared string `json:"shared"`
}

type sample struct {
	embedded
	Name     string            `json:"name"`
	Note     string            `json:"note,omitempty"`
	Count    int64             `json:"count"`
	Ratio    float64           `json:"ratio,omitempty"`
	OK       bool              `json:"ok"`
	At       time.Time         `json:"at"`
	Maybe    *time.Time        `json:"maybe,omitempty"`
	Nullable *inner            `json:"nullable"`
	List     []inner           `json:"list"`
	Tags     []string          `json:"tags,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	Quoted   int               `json:"quoted,string"`
	Hidden   string            `json:"-"`
	//lint:ignore U1000 present to show unexported fields are not encoded
	private string
	Self    *sample `json:"self,omitempty"`
}

// TestSchemasFollowEncodingJSON: the derived schema says what encoding/json
// writes: names from tags, required unless omitempty, null where a nil is
// written, embedded fields flattened, named structs as components, recursion
// by reference; patches add what types cannot say.
func TestSchemasFollowEncodingJSON(t *testing.T) {
	t.Parallel()
	s := openapi.NewSchemas()
	s.Field(inner{}, "code", openapi.Schema{"enum": []any{"A", "B"}})
	s.Field(sample{}, "nullable", openapi.Schema{"description": "maybe absent"})
	ref := s.Of(sample{})
	if diff := cmp.Diff(openapi.Schema{"$ref": "#/components/schemas/Sample"}, ref); diff != "" {
		t.Fatalf("ref (-want +got):\n%s", diff)
	}
	got := s.Components()["Sample"]
	want := openapi.Schema{
		"type": "object",
		"properties": openapi.Schema{
			"shared":   openapi.Schema{"type": "string"},
			"name":     openapi.Schema{"type": "string"},
			"note":     openapi.Schema{"type": "string"},
			"count":    openapi.Schema{"type": "integer"},
			"ratio":    openapi.Schema{"type": "number"},
			"ok":       openapi.Schema{"type": "boolean"},
			"at":       openapi.Schema{"type": "string", "format": "date-time"},
			"maybe":    openapi.Schema{"type": "string", "format": "date-time"},
			"nullable": openapi.Schema{"anyOf": []any{openapi.Schema{"allOf": []any{openapi.Schema{"$ref": "#/components/schemas/Inner"}}, "description": "maybe absent"}, openapi.Schema{"type": "null"}}},
			"list":     openapi.Schema{"type": []any{"array", "null"}, "items": openapi.Schema{"$ref": "#/components/schemas/Inner"}},
			"tags":     openapi.Schema{"type": "array", "items": openapi.Schema{"type": "string"}},
			"labels":   openapi.Schema{"type": "object", "additionalProperties": openapi.Schema{"type": "string"}},
			"raw":      openapi.Schema{},
			"quoted":   openapi.Schema{"type": "string"},
			"self":     openapi.Schema{"$ref": "#/components/schemas/Sample"},
		},
		"required": []string{"shared", "name", "count", "ok", "at", "nullable", "list", "quoted"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sample (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(openapi.Schema{"type": "object", "properties": openapi.Schema{"code": openapi.Schema{"type": "string", "enum": []any{"A", "B"}}}, "required": []string{"code"}}, s.Components()["Inner"]); diff != "" {
		t.Errorf("Inner (-want +got):\n%s", diff)
	}
}

// TestSchemaNameClash: two types of the same name get distinct components.
func TestSchemaNameClash(t *testing.T) {
	t.Parallel()
	type Endpoint struct {
		A string `json:"a"`
	}
	s := openapi.NewSchemas()
	s.Define("Endpoint", openapi.Schema{"type": "string"})
	if got := s.Of(Endpoint{}); got["$ref"] != "#/components/schemas/Openapi_testEndpoint" {
		t.Errorf("clashing name: %v", got)
	}
}

func testDoc(t *testing.T) *openapi.Document {
	t.Helper()
	s := openapi.NewSchemas()
	d := openapi.New(openapi.Info{Title: "t", Version: "1"})
	data := s.Of(inner{})
	// A patch after first use still applies.
	s.Field(inner{}, "code", openapi.Schema{"enum": []any{"A", "B"}})
	d.Add("GET", "/things/{id}", &openapi.Operation{
		OperationID: "getThing",
		Security:    []map[string][]string{},
		Parameters:  []openapi.Parameter{{Name: "id", In: "path", Required: true, Schema: openapi.Schema{"type": "string"}}},
		Responses: map[string]*openapi.Response{
			"200": {Description: "ok", Content: map[string]openapi.MediaType{"application/json": {Schema: data}}},
			"204": {Description: "nothing"},
			"404": {Description: "not found", Content: map[string]openapi.MediaType{"text/plain": {Schema: openapi.Schema{"type": "string"}}}},
		},
	})
	d.Components.Schemas = s.Components()
	return d
}

// TestValidatorChecksExchanges: declared status, media type and body schema
// are each enforced; what the document does not describe is ErrUndocumented.
func TestValidatorChecksExchanges(t *testing.T) {
	t.Parallel()
	v, err := openapi.NewValidator(testDoc(t))
	if err != nil {
		t.Fatal(err)
	}
	jsonHdr := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	for _, tc := range []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		want         string
	}{
		{"valid", "GET", "/things/1", 200, jsonHdr, `{"code":"A"}`, ""},
		{"enum", "GET", "/things/1", 200, jsonHdr, `{"code":"C"}`, "/code"},
		{"missing", "GET", "/things/1", 200, jsonHdr, `{}`, "missing property 'code'"},
		{"not JSON", "GET", "/things/1", 200, jsonHdr, `<html>`, "not JSON"},
		{"status", "GET", "/things/1", 500, jsonHdr, `{}`, "HTTP 500 is not a declared response"},
		{"media type", "GET", "/things/1", 200, http.Header{"Content-Type": {"text/html"}}, `x`, "declared application/json"},
		{"no body declared", "GET", "/things/1", 204, http.Header{}, `{"x":1}`, "declares no body"},
		{"empty as declared", "GET", "/things/1", 204, http.Header{}, ``, ""},
		{"text body", "GET", "/things/1", 404, http.Header{"Content-Type": {"text/plain"}}, `gone`, ""},
		{"HEAD has no body", "HEAD", "/things/1", 200, jsonHdr, ``, ""},
		{"other method", "POST", "/things/1", 200, jsonHdr, `{}`, openapi.ErrUndocumented.Error()},
		{"other path", "GET", "/stuff", 200, jsonHdr, `{}`, openapi.ErrUndocumented.Error()},
	} {
		err := v.Check(tc.method, tc.path, tc.status, tc.header, []byte(tc.body))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
}

// TestValidatorRejectsBrokenDocuments: a dangling reference or an invalid
// schema fails at NewValidator, not at the first check.
func TestValidatorRejectsBrokenDocuments(t *testing.T) {
	t.Parallel()
	d := testDoc(t)
	op, _ := d.Operation("GET", "/things/{id}")
	op.Responses["200"].Content["application/json"] = openapi.MediaType{Schema: openapi.Ref("Nowhere")}
	if _, err := openapi.NewValidator(d); err == nil || !strings.Contains(err.Error(), "Nowhere") {
		t.Errorf("dangling $ref: %v", err)
	}
	d = testDoc(t)
	d.Components.Schemas["Bad"] = openapi.Schema{"type": "strnig"}
	if _, err := openapi.NewValidator(d); err == nil || !strings.Contains(err.Error(), "Bad") {
		t.Errorf("invalid schema: %v", err)
	}
}
