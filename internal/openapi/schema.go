package openapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"reflect"
	"strings"
	"time"
	"unicode"
)

// Schemas derives JSON Schemas from Go types the way encoding/json encodes
// them: a named struct becomes a component schema (referenced by $ref), its
// fields properties named by their json tags; fields without omitempty are
// required; nil-able values (pointers, slices, maps) without omitempty may be
// null, because that is what encoding/json writes for nil.
//
// Types with their own JSON encoding are described by Type (a time is a
// date-time string, a decimal a number); any other json.Marshaler is left
// open ({}), a TextMarshaler is a string. Field patches (Field) add what Go
// types cannot say: enums, lengths, formats, descriptions.
type Schemas struct {
	defs   map[string]Schema
	names  map[reflect.Type]string
	types  map[reflect.Type]Schema
	fields map[fieldKey]Schema
}

type fieldKey struct {
	t    reflect.Type
	name string
}

// NewSchemas returns a set that knows time.Time and json.RawMessage.
func NewSchemas() *Schemas {
	s := &Schemas{defs: map[string]Schema{}, names: map[reflect.Type]string{}, types: map[reflect.Type]Schema{}, fields: map[fieldKey]Schema{}}
	s.Type(time.Time{}, Schema{"type": "string", "format": "date-time"})
	s.Type(json.RawMessage{}, Schema{})
	return s
}

// Type sets the schema of a Go type (given as a value of it), used wherever
// the type appears, inline.
func (s *Schemas) Type(v any, schema Schema) {
	s.types[reflect.TypeOf(v)] = schema
}

// Field patches the schema of one property of a struct type (given as a value
// of it), named by its JSON name: keys of patch are set on the property's
// schema (enum, maxLength, format, description, …).
func (s *Schemas) Field(v any, jsonName string, patch Schema) {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	k := fieldKey{t, jsonName}
	if s.fields[k] == nil {
		s.fields[k] = Schema{}
	}
	maps.Copy(s.fields[k], patch)
	if name, ok := s.names[t]; ok {
		s.defs[name] = s.object(t) // already described: describe it again
	}
}

// Define adds a hand-written component schema.
func (s *Schemas) Define(name string, schema Schema) { s.defs[name] = schema }

// Components returns the component schemas defined so far.
func (s *Schemas) Components() map[string]Schema { return s.defs }

// Of returns the schema of the type of v: a $ref for named structs (defining
// the component on first use), inline otherwise.
func (s *Schemas) Of(v any) Schema { return s.of(reflect.TypeOf(v)) }

func (s *Schemas) of(t reflect.Type) Schema {
	if t == nil {
		return Schema{}
	}
	if sch, ok := s.types[t]; ok {
		return maps.Clone(sch)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(s.of(t.Elem()))
	case reflect.Interface:
		return Schema{}
	}
	if t.Implements(reflect.TypeFor[json.Marshaler]()) || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Marshaler]()) {
		return Schema{"description": "encoded by " + t.String()}
	}
	if t.Implements(reflect.TypeFor[encoding.TextMarshaler]()) {
		return Schema{"type": "string"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Schema{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return Schema{"type": "number"}
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return Schema{"type": "string", "contentEncoding": "base64"}
		}
		// Lists hold values, never nil pointers.
		return nullable(Schema{"type": "array", "items": NotNull(s.of(t.Elem()))})
	case reflect.Array:
		return Schema{"type": "array", "items": s.of(t.Elem()), "minItems": t.Len(), "maxItems": t.Len()}
	case reflect.Map:
		return nullable(Schema{"type": "object", "additionalProperties": s.of(t.Elem())})
	case reflect.Struct:
		if t.Name() == "" {
			return s.object(t)
		}
		name, ok := s.names[t]
		if !ok {
			name = s.nameFor(t)
			s.names[t] = name
			s.defs[name] = Schema{} // placeholder: recursive types refer to it
			s.defs[name] = s.object(t)
		}
		return Ref(name)
	}
	return Schema{}
}

// nameFor picks the component name of a named type: its Go name, or its
// package and name when another type took the name.
func (s *Schemas) nameFor(t reflect.Type) string {
	name := cleanName(t.Name())
	if _, taken := s.defs[name]; !taken {
		return name
	}
	pkg := []rune(path.Base(t.PkgPath()))
	if len(pkg) > 0 {
		pkg[0] = unicode.ToUpper(pkg[0])
	}
	name = string(pkg) + name
	for i := 2; ; i++ {
		if _, taken := s.defs[name]; !taken {
			return name
		}
		name = fmt.Sprintf("%s%d", strings.TrimRight(name, "0123456789"), i)
	}
}

// cleanName makes a type's name a valid, capitalised component name.
func cleanName(n string) string {
	if n != "" {
		r := []rune(n)
		r[0] = unicode.ToUpper(r[0])
		n = string(r)
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '-' {
			return r
		}
		return -1
	}, n)
}

// object describes a struct's fields, embedded structs flattened as
// encoding/json does.
func (s *Schemas) object(t reflect.Type) Schema {
	props := Schema{}
	var required []string
	s.fieldsOf(t, props, &required, false)
	out := Schema{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

func (s *Schemas) fieldsOf(t reflect.Type, props Schema, required *[]string, optional bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				s.fieldsOf(et, props, required, optional || ft.Kind() == reflect.Pointer)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		var sch Schema
		switch {
		case strings.Contains(opts, "string"):
			sch = Schema{"type": "string"}
		case omit:
			// Omitted when empty: present values are never null.
			sch = NotNull(s.of(ft))
		default:
			sch = s.of(ft)
		}
		if patch, ok := s.fields[fieldKey{t, name}]; ok {
			sch = applyPatch(sch, patch)
		}
		props[name] = sch
		if !omit && !optional {
			*required = append(*required, name)
		}
	}
}

// applyPatch sets patch's keys on sch; on a nullable schema they go on the
// non-null branch.
func applyPatch(sch, patch Schema) Schema {
	if alts, ok := sch["anyOf"].([]any); ok && len(alts) == 2 {
		if inner, ok := alts[0].(Schema); ok {
			inner = maps.Clone(inner)
			if _, isRef := inner["$ref"]; isRef {
				inner = Schema{"allOf": []any{inner}}
			}
			maps.Copy(inner, patch)
			return Schema{"anyOf": []any{inner, alts[1]}}
		}
	}
	out := maps.Clone(sch)
	if _, isRef := out["$ref"]; isRef {
		out = Schema{"allOf": []any{out}}
	}
	maps.Copy(out, patch)
	return out
}

// nullable returns a schema that also accepts null.
func nullable(sch Schema) Schema {
	if typ, ok := sch["type"].(string); ok && len(sch) > 0 {
		out := maps.Clone(sch)
		out["type"] = []any{typ, "null"}
		return out
	}
	return Schema{"anyOf": []any{sch, Schema{"type": "null"}}}
}

// NotNull returns the schema of a value that is never null (a slice a handler
// always allocates, say).
func NotNull(sch Schema) Schema {
	out := maps.Clone(sch)
	if types, ok := out["type"].([]any); ok && len(types) == 2 && types[1] == "null" {
		out["type"] = types[0]
		return out
	}
	if alts, ok := out["anyOf"].([]any); ok && len(alts) == 2 {
		if n, ok := alts[1].(Schema); ok && n["type"] == "null" {
			if inner, ok := alts[0].(Schema); ok {
				return inner
			}
		}
	}
	return out
}
