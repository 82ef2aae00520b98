package schematest

import (
	"bytes"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
	"location":    required("location", "id", "type", "address", "city", "postal_code", "country", "coordinates", "last_updated"),
	"evse":        required("evse", "uid", "status", "connectors", "last_updated"),
	"connector":   required("connector", "id", "standard", "format", "power_type", "voltage", "amperage", "last_updated"),
	"tariff":      required("tariff"),
	"session":     required("session", "id", "start_datetime", "kwh", "auth_id", "auth_method", "location", "currency", "status", "last_updated"),
	"cdr":         required("cdr"),
	"token":       required("token", "uid", "type", "auth_id", "issuer", "valid", "whitelist", "last_updated"),
	"credentials": required("credentials", "token", "url", "business_details", "party_id", "country_code"),
	"version":     required("version", "version", "endpoints"),
	"command_response": {"type": "object", "required": []any{"result"}, "additionalProperties": false, "properties": map[string]any{
		"result": map[string]any{"type": "string", "enum": []any{"NOT_SUPPORTED", "REJECTED", "ACCEPTED", "TIMEOUT", "UNKNOWN_SESSION"}},
	}},
	// The commands module is not in the vendored set: its requests are
	// written here from legacy.md §9 (commands.md §7), the token by the
	// set's own schema.
	"start_session": command211(map[string]any{"token": map[string]any{"$ref": "token"}, "location_id": str(39), "evse_uid": str(39)},
		"token", "location_id"),
	"stop_session": command211(map[string]any{"session_id": str(36)}, "session_id"),
	"reserve_now": command211(map[string]any{"token": map[string]any{"$ref": "token"}, "expiry_date": map[string]any{"$ref": "../V2_1_1/Common/common.schema.json#/definitions/timestamp"},
		"reservation_id": map[string]any{"type": "integer"}, "location_id": str(39), "evse_uid": str(39)}, "token", "expiry_date", "reservation_id", "location_id"),
	"unlock_connector":    command211(map[string]any{"location_id": str(39), "evse_uid": str(39), "connector_id": str(36)}, "location_id", "evse_uid", "connector_id"),
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

// command211 is the schema of a 2.1.1 command request: response_url and
// the given properties, nothing else.
func command211(props map[string]any, req ...string) map[string]any {
	props["response_url"] = map[string]any{"type": "string", "minLength": 1, "maxLength": 255}
	r := []any{"response_url"}
	for _, f := range req {
		r = append(r, f)
	}
	return map[string]any{"type": "object", "required": r, "additionalProperties": false, "properties": props}
}

func str(n int) map[string]any {
	return map[string]any{"type": "string", "minLength": 1, "maxLength": n}
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

// requests211 are the schemas of the bodies a 2.1.1 partner receives, by
// module, method and level (for locations the level, for a command its
// name or "result", for tokens "authorize"): a full object with its required
// fields, or the bare object schema for a PATCH (draft-07 ignores the
// required lists of the vendored wrappers, so they would add nothing).
var requests211 = map[string]string{
	"credentials POST":               "credentials",
	"credentials PUT":                "credentials",
	"locations PUT location":         "location",
	"locations PUT evse":             "evse",
	"locations PUT connector":        "connector",
	"locations PATCH location":       "V2_1_1/Common/location",
	"locations PATCH evse":           "V2_1_1/Common/evse",
	"locations PATCH connector":      "V2_1_1/Common/connector",
	"tariffs PUT":                    "tariff",
	"sessions PUT":                   "session",
	"sessions PATCH":                 "V2_1_1/Common/session",
	"cdrs POST":                      "cdr",
	"tokens PUT":                     "token",
	"tokens PATCH":                   "V2_1_1/Common/token",
	"tokens POST authorize":          "location_references",
	"commands POST START_SESSION":    "start_session",
	"commands POST STOP_SESSION":     "stop_session",
	"commands POST RESERVE_NOW":      "reserve_now",
	"commands POST UNLOCK_CONNECTOR": "unlock_connector",
	"commands POST result":           "command_response",
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
