package session

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// meterFields are the fields of a meter PATCH: what a CPO sends again and
// again while a session charges (sessions.md §3: the charging periods as
// they close, the energy so far, the cost so far).
var meterFields = []string{"charging_periods", "kwh", "last_updated", "total_cost"}

// applyMeter applies a meter PATCH to the stored document's bytes: the new
// values, each in canonical form, are set where the old ones lie and the
// new periods appended to the stored list. The general path (applyPatch)
// parses the whole document, merges, encodes it, decodes it again and
// puts it in canonical form, about eight passes over a document that grows
// with every period; this makes one pass over the top level of the
// document and one typed decode of the result.
//
// It gives the same outcome as applyPatch, bytes included
// (TestMeterPatchAsTheGeneralPath). ok is false, nothing decided, when the
// general path must run: a field outside meterFields, a null, a value its
// type does not take, a field the stored document lacks (a new key would
// need its place in the sorted order), or a stored body not in canonical
// form at its top level (PostgreSQL's JSONB rendering, before migration
// 1140).
func applyMeter(r Ref, cur *stored, patch ocpi.Object) (p *patched, ok bool, err error) {
	values := make(map[string][]byte, len(patch))
	for k, v := range patch {
		if !slices.Contains(meterFields, k) || v == nil {
			return nil, false, nil
		}
		var c []byte
		switch k {
		case "charging_periods":
			c, ok = canonicalPeriods(v)
		case "kwh":
			c, ok = canonicalValue(v, new(ocpi.Number))
		case "last_updated":
			c, ok = canonicalValue(v, new(ocpi.DateTime))
		case "total_cost":
			c, ok = mergedPrice(cur.body, v)
		}
		if !ok {
			return nil, false, nil
		}
		values[k] = c
	}
	edits, id, ok := meterEdits(cur.body, values)
	if !ok {
		return nil, false, nil
	}
	body := splice(cur.body, edits)
	p = &patched{}
	if err := ocpi.Decode(body, &p.sess); err != nil {
		return nil, false, nil
	}
	cur.id = id
	if err := checkPatched(r, cur, &p.sess); err != nil {
		return nil, true, err
	}
	p.body = body
	if bytes.Equal(body, cur.body) {
		p.unchanged = true
		return p, true, nil
	}
	if p.patchBody, err = ocpi.CanonicalPatch(patch); err != nil {
		return nil, true, err
	}
	return p, true, nil
}

// canonicalValue is v as the general path stores it: decoded into typed,
// in the canonical form of the two. ok is false when typed does not take v.
func canonicalValue(v any, typed any) ([]byte, bool) {
	raw, err := ocpi.MarshalObject(v)
	if err != nil || json.Unmarshal(raw, typed) != nil {
		return nil, false
	}
	c, err := ocpi.Canonical(raw, typed)
	return c, err == nil
}

// mergedPrice is a PATCH's total_cost merged into the stored one, as a
// JSON merge patch merges objects (a PATCH of excl_vat alone keeps the
// stored incl_vat), in canonical form. ok is false when the stored session
// has none (the new key would need its place in the sorted order) or the
// result is not a Price.
func mergedPrice(body []byte, v any) ([]byte, bool) {
	patch, isObject := v.(map[string]any)
	old := gjson.GetBytes(body, "total_cost")
	if !isObject || !old.IsObject() {
		return nil, false
	}
	merged, err := ocpi.ParseObject([]byte(old.Raw))
	if err != nil {
		return nil, false
	}
	ocpi.MergePatch(merged, patch)
	return canonicalValue(map[string]any(merged), new(ocpi.Price))
}

// canonicalPeriods is a PATCH's charging_periods as the items to append,
// each in canonical form and joined by commas ("" for none).
func canonicalPeriods(v any) ([]byte, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	var out []byte
	for i, item := range list {
		if _, isObject := item.(map[string]any); !isObject {
			return nil, false
		}
		c, ok := canonicalValue(item, new(ocpi.ChargingPeriod))
		if !ok {
			return nil, false
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, c...)
	}
	return out, true
}

// edit replaces body[from:to] with value.
type edit struct {
	from, to int
	value    []byte
}

// meterEdits finds where values go in body, a stored session: the value of
// each top-level field replaced, the new charging periods inserted before
// the list's closing bracket. It also returns the id as the body spells it.
// ok is false when body is not a compact object with its keys in order,
// or lacks a field values sets.
func meterEdits(body []byte, values map[string][]byte) (edits []edit, id string, ok bool) {
	doc := gjson.ParseBytes(body)
	if !doc.IsObject() || body[0] != '{' {
		return nil, "", false
	}
	ok = true
	next, prevKey, found := 1, "", 0
	doc.ForEach(func(key, value gjson.Result) bool {
		// Compact and sorted, as MarshalObject writes it: each key right
		// after the previous value's comma, each value right after its
		// colon.
		if key.Index != next || value.Index != key.Index+len(key.Raw)+1 || (prevKey != "" && key.Str <= prevKey) {
			ok = false
			return false
		}
		prevKey, next = key.Str, value.Index+len(value.Raw)+1
		if key.Str == "id" {
			id = value.Str
		}
		c, set := values[key.Str]
		if !set {
			return true
		}
		found++
		if key.Str != "charging_periods" {
			edits = append(edits, edit{from: value.Index, to: value.Index + len(value.Raw), value: c})
			return true
		}
		if !value.IsArray() {
			ok = false
			return false
		}
		if len(c) == 0 {
			return true
		}
		end := value.Index + len(value.Raw) - 1 // the closing bracket
		if len(bytes.TrimSpace(body[value.Index+1:end])) > 0 {
			c = append([]byte{','}, c...)
		}
		edits = append(edits, edit{from: end, to: end, value: c})
		return true
	})
	if !ok || next != len(body) || found != len(values) {
		return nil, "", false
	}
	return edits, id, true
}

// splice applies edits (in the order of the body, not overlapping).
func splice(body []byte, edits []edit) []byte {
	n := len(body)
	for _, e := range edits {
		n += len(e.value) - (e.to - e.from)
	}
	out := make([]byte, 0, n)
	at := 0
	for _, e := range edits {
		out = append(out, body[at:e.from]...)
		out = append(out, e.value...)
		at = e.to
	}
	return append(out, body[at:]...)
}
