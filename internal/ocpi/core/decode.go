package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
)

// Decode reads a JSON object into v (a pointer to a wire struct). A body
// that is not JSON is EINVALIDJSON; JSON of the wrong shape is EINVALID naming
// the JSON path of the first offending field (in the declaration order of
// v's fields, the order Check validates in), e.g.
// "evses[1].connectors[0].max_voltage". Unknown fields are accepted.
func Decode(raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return &Error{Code: EINVALIDJSON, Message: "the body is empty; a JSON object is required"}
	}
	if raw[0] != '{' {
		if !json.Valid(raw) {
			return errNotJSON()
		}
		return &Error{Code: EINVALID, Message: "the body must be a JSON object", Field: "body", Issue: "must be a JSON object"}
	}
	// Unmarshal checks the whole of raw before it decodes anything (a
	// pass of its own: checking it here first made three).
	if err := json.Unmarshal(raw, v); err != nil {
		if _, isSyntax := errors.AsType[*json.SyntaxError](err); isSyntax {
			return errNotJSON()
		}
		return locate(raw, reflect.TypeOf(v).Elem(), "", err)
	}
	return nil
}

func errNotJSON() error { return &Error{Code: EINVALIDJSON, Message: "the body is not valid JSON"} }

// locate finds the JSON path of a decoding failure by decoding the parts of
// raw one by one into the parts of t.
func locate(raw json.RawMessage, t reflect.Type, path string, cause error) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	trimmed := bytes.TrimSpace(raw)
	switch {
	case t.Kind() == reflect.Struct && len(trimmed) > 0 && trimmed[0] == '{' && !hasUnmarshaler(t):
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) == nil {
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				name := jsonName(f)
				if name == "" {
					continue
				}
				sub, ok := lookupCI(fields, name)
				if !ok {
					continue
				}
				if err := json.Unmarshal(sub, reflect.New(f.Type).Interface()); err != nil {
					return locate(sub, f.Type, joinPath(path, name), err)
				}
			}
		}
	case t.Kind() == reflect.Slice && len(trimmed) > 0 && trimmed[0] == '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) == nil {
			for i, item := range items {
				if err := json.Unmarshal(item, reflect.New(t.Elem()).Interface()); err != nil {
					return locate(item, t.Elem(), path+"["+strconv.Itoa(i)+"]", err)
				}
			}
		}
	}
	if path == "" {
		path = "body"
	}
	return Invalid(path, issueOf(t, trimmed, cause))
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func hasUnmarshaler(t reflect.Type) bool {
	return t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
}

// issueOf says what is wrong with a value that does not decode into t.
func issueOf(t reflect.Type, raw []byte, cause error) string {
	if hasUnmarshaler(t) {
		msg := strings.TrimPrefix(cause.Error(), "json: ")
		return msg
	}
	got := "a JSON value of another type"
	if len(raw) > 0 {
		switch raw[0] {
		case '"':
			got = "a string"
		case '{':
			got = "an object"
		case '[':
			got = "a list"
		case 't', 'f':
			got = "a boolean"
		case 'n':
			got = "null"
		default:
			got = "a number"
		}
	}
	switch t.Kind() {
	case reflect.String:
		return "must be a string, not " + got
	case reflect.Bool:
		return "must be a boolean, not " + got
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if got == "a number" {
			return "must be an integer in range"
		}
		return "must be an integer, not " + got
	case reflect.Slice, reflect.Array:
		return "must be a list, not " + got
	case reflect.Struct, reflect.Map:
		return "must be an object, not " + got
	}
	return strings.TrimPrefix(cause.Error(), "json: ")
}

func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name
}

// lookupCI finds a key as encoding/json matches it: exactly, else ignoring
// case.
func lookupCI(m map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// Canonical returns the stored form of an object received as raw and decoded
// (and validated) as typed: every field typed knows is written strictly (the
// canonical timestamps, numbers as JSON numbers), every field it does not know
// is kept as the partner sent it, so unknown and future fields survive a round
// trip through ocpihub. Keys are sorted; numbers keep their exact digits.
func Canonical(raw []byte, typed any) ([]byte, error) {
	var in any
	if err := DecodeNumbers(raw, &in); err != nil {
		return nil, err
	}
	strict, err := json.Marshal(typed)
	if err != nil {
		return nil, err
	}
	if out, ok := canonicalOver(strict, in); ok {
		return out, nil
	}
	return canonicalTrees(in, strict)
}

// canonicalTrees is Canonical by trees: strict decoded, laid over the
// received tree, the result written. canonicalOver does the same walking
// strict's bytes, and leaves to it what it cannot decide the same way.
func canonicalTrees(in any, strict []byte) ([]byte, error) {
	var known any
	if err := DecodeNumbers(strict, &known); err != nil {
		return nil, err
	}
	return marshalNoEscape(overlay(in, known))
}

// overlay lays the strict form over the received one: objects key by key,
// lists of the same length item by item, anything else replaced.
func overlay(received, strict any) any {
	switch s := strict.(type) {
	case map[string]any:
		r, ok := received.(map[string]any)
		if !ok {
			return s
		}
		out := make(map[string]any, len(r)+len(s))
		for k, v := range r {
			out[k] = v
		}
		for k, v := range s {
			if rk, ok := matchKey(r, k); ok {
				delete(out, rk)
				out[k] = overlay(r[rk], v)
			} else {
				out[k] = v
			}
		}
		return out
	case []any:
		r, ok := received.([]any)
		if !ok || len(r) != len(s) {
			return s
		}
		out := make([]any, len(s))
		for i := range s {
			out[i] = overlay(r[i], s[i])
		}
		return out
	}
	return strict
}

func matchKey(m map[string]any, k string) (string, bool) {
	if _, ok := m[k]; ok {
		return k, true
	}
	for rk := range m {
		if strings.EqualFold(rk, k) {
			return rk, true
		}
	}
	return "", false
}

// DecodeNumbers decodes JSON keeping numbers as json.Number (no float64 on the way).
//
// A document parseTree decodes exactly (valid JSON, decoded into an empty
// *any, or into a nil *Object when it is an object) is decoded by it: the
// same tree, in a third of the time. Anything else goes to encoding/json,
// which decides and words the error (and merges into a map that is not
// empty).
func DecodeNumbers(b []byte, v any) error {
	switch out := v.(type) {
	case *any:
		if *out != nil {
			break
		}
		if t, ok := parseTree(b); ok {
			*out = t
			return nil
		}
	case *Object:
		if *out != nil {
			break
		}
		if t, ok := parseTree(b); ok {
			if m, isObject := t.(map[string]any); isObject {
				*out = m
				return nil
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// Object is a JSON object kept generic, for merging PATCH bodies into stored
// documents without losing fields the typed model does not know.
type Object = map[string]any

// ParseObject decodes a JSON object keeping numbers exact.
func ParseObject(b []byte) (Object, error) {
	var o Object
	if err := DecodeNumbers(b, &o); err != nil {
		return nil, err
	}
	if o == nil {
		return nil, Invalid("body", "must be a JSON object")
	}
	return o, nil
}

// MarshalObject writes a generic object (keys sorted, HTML not escaped).
func MarshalObject(o any) ([]byte, error) { return marshalNoEscape(o) }

// CanonicalPatch writes a PATCH body to pass on to the receiving party: the
// fields the sender sent, with last_updated in canonical DateTime form (a
// value that does not parse is left as it is; validation reports it).
func CanonicalPatch(patch Object) ([]byte, error) {
	if lu, ok := patch["last_updated"].(string); ok {
		if dt, err := ParseDateTime(lu); err == nil {
			patch["last_updated"] = dt.String()
		}
	}
	return MarshalObject(patch)
}
