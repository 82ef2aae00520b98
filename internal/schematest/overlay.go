package schematest

import (
	"encoding/json"
	"fmt"
	"slices"
)

// DateTimePattern is what an OCPI DateTime may look like on the wire
// (transport.md §2): RFC 3339 in UTC, Z optional, fractions allowed, no
// offset. It replaces `format: date-time`, which rejects timestamps without
// Z that OCPI allows (gaps.md §14 l).
const DateTimePattern = `^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?Z?$`

// customModulePattern is a custom module identifier as transport.md §4
// describes it: prefixed with the country code and party id of its owner.
const customModulePattern = `^[a-z]{2}[a-z0-9]{3}-[a-z0-9_-]+$`

// overlay221 corrects the 2.2.1 schemas, file by file. The defects are those
// listed in the schemas' SOURCE.md (the `+` lists, three integers, the
// DateTime format) and the 2026 length errata of gaps.md §6.
var overlay221 = map[string]func(doc map[string]any) error{
	// 1. `+` lists modelled as one optional object: a required array of at
	// least one item. The partial (PATCH) form keeps it optional.
	"EVSE":           requiredList("connectors"),
	"EVSEPartial":    optionalList("connectors"),
	"CDR":            requiredList("charging_periods"),
	"ChargingPeriod": requiredList("dimensions"),
	"Credentials":    requiredList("roles"),
	"Tariff":         requiredList("elements"),
	"TariffElement":  requiredList("price_components"),
	"SignedData":     requiredList("signed_values"),

	// 2. Integers typed as strings.
	"RegularHours": integer("weekday", 1, 7),
	"Image":        all(integer("width", 0, 99999), integer("height", 0, 99999)),

	// 3. Length errata (CdrLocation keeps 45 and 20).
	"Location":        all(maxLength("address", 255), maxLength("state", 45)),
	"LocationPartial": all(maxLength("address", 255), maxLength("state", 45)),
	"SignedValue":     maxLength("plain_data", 5000),

	// 4. DateTime: no format assertion; a pattern for OCPI timestamps.
	"DateTime": func(doc map[string]any) error {
		if doc["format"] != "date-time" {
			return fmt.Errorf("DateTime has format %v, want date-time", doc["format"])
		}
		delete(doc, "format")
		doc["pattern"] = DateTimePattern
		return nil
	},

	// Not a defect: ocpihub lists 2.3.0 (the Payments module) in its
	// versions (transport.md §3: 2.3.0 adds the value).
	"VersionNumber": func(doc map[string]any) error {
		enum, ok := doc["enum"].([]any)
		if !ok {
			return fmt.Errorf("VersionNumber has no enum")
		}
		doc["enum"] = append(slices.Clone(enum), "2.3.0")
		return nil
	},

	// Not a defect: ModuleID is closed in the schema, but OCPI allows custom
	// modules with an owner prefix, and ocpihub advertises the 2.3.0
	// `payments` module for Direct Payment in 2.2.1 (gaps.md §14 c).
	"ModuleID": func(doc map[string]any) error {
		enum, ok := doc["enum"].([]any)
		if !ok {
			return fmt.Errorf("ModuleID has no enum")
		}
		delete(doc, "enum")
		doc["anyOf"] = []any{
			map[string]any{"enum": append(slices.Clone(enum), "payments")},
			map[string]any{"pattern": customModulePattern},
		}
		return nil
	},
}

func property(doc map[string]any, name string) (map[string]any, error) {
	props, _ := doc["properties"].(map[string]any)
	p, ok := props[name].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no property %s", name)
	}
	return p, nil
}

// list replaces a property that is a $ref to the item schema with an array of
// at least one such item.
func list(name string, required bool) func(map[string]any) error {
	return func(doc map[string]any) error {
		p, err := property(doc, name)
		if err != nil {
			return err
		}
		ref, ok := p["$ref"].(string)
		if !ok || p["type"] != nil {
			return fmt.Errorf("%s is not a single $ref (already fixed upstream?)", name)
		}
		props := doc["properties"].(map[string]any)
		props[name] = map[string]any{"type": "array", "minItems": json.Number("1"), "items": map[string]any{"$ref": ref}}
		if required {
			req, _ := doc["required"].([]any)
			if !slices.Contains(req, any(name)) {
				doc["required"] = append(req, name)
			}
		}
		return nil
	}
}

func requiredList(name string) func(map[string]any) error { return list(name, true) }
func optionalList(name string) func(map[string]any) error { return list(name, false) }

// integer types a property as an integer in [min, max].
func integer(name string, min, max int) func(map[string]any) error {
	return func(doc map[string]any) error {
		p, err := property(doc, name)
		if err != nil {
			return err
		}
		if p["type"] != "string" {
			return fmt.Errorf("%s has type %v, want the defective string", name, p["type"])
		}
		props := doc["properties"].(map[string]any)
		props[name] = map[string]any{"type": "integer", "minimum": json.Number(fmt.Sprint(min)), "maximum": json.Number(fmt.Sprint(max))}
		return nil
	}
}

// maxLength sets the maximum length of a string property.
func maxLength(name string, n int) func(map[string]any) error {
	return func(doc map[string]any) error {
		p, err := property(doc, name)
		if err != nil {
			return err
		}
		if p["type"] != "string" {
			return fmt.Errorf("%s is not a string", name)
		}
		p["maxLength"] = json.Number(fmt.Sprint(n))
		return nil
	}
}

func all(fixes ...func(map[string]any) error) func(map[string]any) error {
	return func(doc map[string]any) error {
		for _, f := range fixes {
			if err := f(doc); err != nil {
				return err
			}
		}
		return nil
	}
}
