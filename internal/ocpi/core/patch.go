package core

// MergePatch applies an OCPI PATCH body to a stored object the way JSON
// Merge Patch (RFC 7396) does: objects are merged field by field, a null
// removes a field, anything else (lists included) replaces the stored value.
// Modules with other list rules (Session charging_periods, Location EVSEs)
// handle those fields before calling it.
func MergePatch(dst, patch Object) {
	for k, v := range patch {
		if v == nil {
			delete(dst, k)
			continue
		}
		if pv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				MergePatch(dv, pv)
				continue
			}
			// A new nested object: copy it without its nulls.
			fresh := Object{}
			MergePatch(fresh, pv)
			dst[k] = fresh
			continue
		}
		dst[k] = v
	}
}

// ParsePatch reads the body of a PATCH: the object to merge, and its typed
// fields decoded into partial, a pointer to a struct of the fields a
// module reads. lastUpdated points at partial's last_updated field, which
// a PATCH must carry.
func ParsePatch(raw []byte, partial any, lastUpdated *DateTime) (Object, error) {
	patch, err := ParseObject(raw)
	if err != nil {
		return nil, Invalid("body", "must be a JSON object")
	}
	if err := Decode(raw, partial); err != nil {
		return nil, err
	}
	if lastUpdated.IsZero() {
		return nil, Invalid("last_updated", "is required in a PATCH")
	}
	return patch, nil
}

// ApplyPatch merges patch into doc, a stored document, and decodes the
// result into v (field types checked): the merged JSON is returned, for
// Canonical.
func ApplyPatch(doc, patch Object, v any) ([]byte, error) {
	MergePatch(doc, patch)
	merged, err := MarshalObject(doc)
	if err != nil {
		return nil, err
	}
	return merged, Decode(merged, v)
}

// PatchIdentity checks that a PATCH body does not change an object's key
// fields: each present field must equal (as a CiString) the value the URL
// names.
func PatchIdentity(patch Object, key map[string]string) error {
	for field, want := range key {
		v, ok := patch[field]
		if !ok {
			continue
		}
		s, isString := v.(string)
		if !isString || !EqualCI(s, want) {
			return Invalid(field, "must equal the "+field+" in the URL ("+want+"); a PATCH cannot change an object's identity")
		}
	}
	return nil
}
