package schematest

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ocpihub/ocpihub/internal/httpapi"
)

// The OCPI 2.1.1 checks. The vendored 2.1.1 object schemas leave their
// required fields to the request and response wrappers; the data schemas
// below (names without a path, e.g. "location", "[]session") pair each
// object with the required fields of its wrapper (or, where the set has no
// wrapper, of legacy.md), and "envelope" checks the 2.1.1 envelope without
// forbidding the error object ocpihub adds.

// composites211 are our small schemas over the vendored ones, by name.
var composites211 = map[string]map[string]any{
	"envelope": {"type": "object", "required": []any{"status_code", "timestamp"}, "properties": map[string]any{
		"status_code":    map[string]any{"type": "integer"},
		"status_message": map[string]any{"type": []any{"string", "null"}},
		"timestamp":      map[string]any{"$ref": "../V2_1_1/Common/common.schema.json#/definitions/timestamp"},
	}},
	"location":            required("location", "id", "type", "address", "city", "postal_code", "country", "coordinates", "last_updated"),
	"evse":                required("evse", "uid", "status", "connectors", "last_updated"),
	"connector":           required("connector", "id", "standard", "format", "power_type", "voltage", "amperage", "last_updated"),
	"tariff":              required("tariff"),
	"session":             required("session", "id", "start_datetime", "kwh", "auth_id", "auth_method", "location", "currency", "status", "last_updated"),
	"cdr":                 required("cdr"),
	"token":               required("token", "uid", "type", "auth_id", "issuer", "valid", "whitelist", "last_updated"),
	"credentials":         required("credentials", "token", "url", "business_details", "party_id", "country_code"),
	"version":             required("version", "version", "endpoints"),
	"location_references": {"$ref": "../V2_1_1/Common/common.schema.json#/definitions/location_references"},
	"authorization_info": {"type": "object", "required": []any{"allowed"}, "additionalProperties": false, "properties": map[string]any{
		"allowed":  map[string]any{"type": "string", "enum": []any{"ALLOWED", "BLOCKED", "EXPIRED", "NO_CREDIT", "NOT_ALLOWED"}},
		"location": map[string]any{"$ref": "../V2_1_1/Common/common.schema.json#/definitions/location_references"},
		"info":     map[string]any{"$ref": "../V2_1_1/Common/common.schema.json#/definitions/display_text"},
	}},
}

// required is an object schema with required fields. The vendored wrappers
// put "required" beside "$ref", which draft-07 ignores; allOf applies both.
func required(object string, fields ...string) map[string]any {
	s := map[string]any{"allOf": []any{map[string]any{"$ref": "../V2_1_1/Common/" + object + ".schema.json"}}}
	if len(fields) > 0 {
		req := make([]any, len(fields))
		for i, f := range fields {
			req[i] = f
		}
		s["required"] = req
	}
	return s
}

// addComposites211 registers the composites and their list forms.
func addComposites211(c *jsonschema.Compiler) error {
	for name, s := range composites211 {
		v, err := jsonValue(s)
		if err != nil {
			return err
		}
		if err := c.AddResource(base211+"ocpihub/"+name, v); err != nil {
			return err
		}
		list := map[string]any{"type": "array", "items": map[string]any{"$ref": name}}
		if v, err = jsonValue(list); err != nil {
			return err
		}
		if err := c.AddResource(base211+"ocpihub/list-"+name, v); err != nil {
			return err
		}
	}
	return nil
}

// composite211 returns the URL of a composite name ("location",
// "[]location"), if it is one.
func composite211(name string) (string, bool) {
	item, list := strings.CutPrefix(name, "[]")
	if _, ok := composites211[item]; !ok {
		return "", false
	}
	if list {
		return base211 + "ocpihub/list-" + item, true
	}
	return base211 + "ocpihub/" + item, true
}

// Routes211 are the OCPI 2.1.1 routes of the hub with known schemas (of
// the 2.1.1 set, see OCPI211). A module that adds 2.1.1 routes adds its rows
// here. The 2.0 routes are checked for the 2.1.1 envelope only: their
// decimals are strings and their locations lack last_updated, which the
// 2.1.1 schemas refuse.
var Routes211 = []Route{
	{Method: "GET", Pattern: "/ocpi/2.1.1", Success: "version"},
	{Method: "GET", Pattern: "/ocpi/2.1.1/cpo", Success: "version"},
	{Method: "GET", Pattern: "/ocpi/2.1.1/emsp", Success: "version"},
	{Method: "GET", Pattern: "/ocpi/2.1.1/credentials", Success: "credentials"},
	{Method: "POST", Pattern: "/ocpi/2.1.1/credentials", Success: "credentials"},
	{Method: "PUT", Pattern: "/ocpi/2.1.1/credentials", Success: "credentials"},
	{Method: "DELETE", Pattern: "/ocpi/2.1.1/credentials"},
	{Method: "GET", Pattern: "/ocpi/2.1.1/{role}/credentials", Success: "credentials"},
	{Method: "POST", Pattern: "/ocpi/2.1.1/{role}/credentials", Success: "credentials"},
	{Method: "PUT", Pattern: "/ocpi/2.1.1/{role}/credentials", Success: "credentials"},
	{Method: "DELETE", Pattern: "/ocpi/2.1.1/{role}/credentials"},

	{Method: "GET", Pattern: "/ocpi/2.1.1/cpo/locations/{country_code}/{party_id}/{location_id}", Success: "location"},
	{Method: "GET", Pattern: "/ocpi/2.1.1/cpo/locations/{country_code}/{party_id}/{location_id}/{evse_uid}", Success: "evse"},
	{Method: "GET", Pattern: "/ocpi/2.1.1/cpo/locations/{country_code}/{party_id}/{location_id}/{evse_uid}/{connector_id}", Success: "connector"},
	{Method: "PUT", Pattern: "/ocpi/2.1.1/cpo/locations/{path...}"},
	{Method: "PATCH", Pattern: "/ocpi/2.1.1/cpo/locations/{path...}"},
	{Method: "GET", Pattern: "/ocpi/2.1.1/emsp/locations", Success: "[]location"},
	{Method: "GET", Pattern: "/ocpi/2.1.1/emsp/locations/{location_id}", Success: "location"},
	{Method: "GET", Pattern: "/ocpi/2.1.1/emsp/locations/{location_id}/{evse_uid}", Success: "evse"},
	{Method: "GET", Pattern: "/ocpi/2.1.1/emsp/locations/{location_id}/{evse_uid}/{connector_id}", Success: "connector"},
	{Method: "GET", Pattern: "/ocpi/2.1.1/cpo/tariffs/{country_code}/{party_id}/{tariff_id}", Success: "tariff"},
	{Method: "PUT", Pattern: "/ocpi/2.1.1/cpo/tariffs/{country_code}/{party_id}/{tariff_id}"},
	{Method: "PATCH", Pattern: "/ocpi/2.1.1/cpo/tariffs/{country_code}/{party_id}/{tariff_id}"},
	{Method: "DELETE", Pattern: "/ocpi/2.1.1/cpo/tariffs/{country_code}/{party_id}/{tariff_id}"},
	{Method: "GET", Pattern: "/ocpi/2.1.1/emsp/tariffs", Success: "[]tariff"},
}

var routeMux211 = sync.OnceValue(func() *http.ServeMux {
	mux := http.NewServeMux()
	for i, r := range Routes211 {
		mux.Handle(r.Method+" "+r.Pattern, routeIndex(i))
	}
	return mux
})

// checkLegacy validates an answer on a legacy path: the 2.1.1 envelope
// always (2.0 too: it is the same), and on the 2.1.1 routes Routes211 lists,
// the data against its schema.
func checkLegacy(method, path string, header http.Header, body []byte) error {
	if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt != "application/json" {
		return nil
	}
	set := OCPI211()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s: the body is not JSON: %w", method, path, err)
	}
	if err := set.ValidateValue("envelope", v); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	req, err := http.NewRequest(method, "http://hub.invalid"+httpapi.CanonicalPath(path), nil)
	if err != nil {
		return nil
	}
	h, pattern := routeMux211().Handler(req)
	i, ok := h.(routeIndex)
	if pattern == "" || !ok {
		return nil
	}
	route := Routes211[i]
	env := v.(map[string]any)
	schema := route.Error
	if code, _ := env["status_code"].(interface{ String() string }); code != nil && strings.HasPrefix(code.String(), "1") && len(code.String()) == 4 {
		schema = route.Success
	}
	data, present := env["data"]
	switch {
	case schema == "" && present:
		return fmt.Errorf("%s %s (route %s %s): data must be absent, got %s", method, path, route.Method, route.Pattern, truncate(body))
	case schema == "":
		return nil
	case !present:
		return fmt.Errorf("%s %s (route %s %s): data is missing, want %s", method, path, route.Method, route.Pattern, schema)
	}
	if err := set.validateAt(schema, data, "data"); err != nil {
		return fmt.Errorf("%s %s (route %s %s): %w", method, path, route.Method, route.Pattern, err)
	}
	return nil
}

// requests211 are the schemas of the bodies a 2.1.1 partner receives, by
// module, method and (for locations) level: the wrappers of the vendored set
// where it has one.
var requests211 = map[string]string{
	"credentials POST":          "V2_1_1/eMSP/Server/Credentials/credentialsPostRequest",
	"credentials PUT":           "V2_1_1/eMSP/Server/Credentials/credentialsPutRequest",
	"locations PUT location":    "V2_1_1/eMSP/Server/Locations/locationPutRequest",
	"locations PUT evse":        "V2_1_1/eMSP/Server/Locations/Evses/evsePutRequest",
	"locations PUT connector":   "V2_1_1/eMSP/Server/Locations/Evses/Connectors/connectorPutRequest",
	"locations PATCH location":  "V2_1_1/eMSP/Server/Locations/locationPatchRequest",
	"locations PATCH evse":      "V2_1_1/eMSP/Server/Locations/Evses/evsePatchRequest",
	"locations PATCH connector": "V2_1_1/eMSP/Server/Locations/Evses/Connectors/connectorPatchRequest",
	"tariffs PUT":               "tariff",
	"sessions PUT":              "V2_1_1/eMSP/Server/Sessions/sessionPutRequest",
	"sessions PATCH":            "V2_1_1/eMSP/Server/Sessions/sessionPatchRequest",
	"cdrs POST":                 "V2_1_1/eMSP/Server/CDRs/cdrPostRequest",
	"tokens PUT":                "V2_1_1/eMSP/Client/Tokens/tokenPutRequest",
	"tokens PATCH":              "V2_1_1/eMSP/Client/Tokens/tokenPatchRequest",
	"tokens POST authorize":     "V2_1_1/eMSP/Server/Tokens/tokenPostRequest",
}

// CheckRequest211 validates the body of a request a 2.1.1 partner receives
// (or sends) on one of its module endpoints: module is the module
// identifier, level the locations level ("location", "evse", "connector")
// or "authorize" for a token authorization. Bodies without a schema pass.
func CheckRequest211(module, method, level string, body []byte) error {
	key := module + " " + method
	if level != "" {
		key += " " + level
	}
	schema, ok := requests211[key]
	if !ok || len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return OCPI211().Validate(schema, body)
}
