package location

import (
	"sort"

	"github.com/tidwall/gjson"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// matchOwner checks that the body's owner and id are the URL's.
func matchOwner(r Ref, cc, pid, id string) error {
	switch {
	case !ocpi.EqualCI(cc, r.CountryCode):
		return ocpi.Invalid("country_code", "must equal the country_code of the URL ("+r.CountryCode+")")
	case !ocpi.EqualCI(pid, r.PartyID):
		return ocpi.Invalid("party_id", "must equal the party_id of the URL ("+r.PartyID+")")
	case !ocpi.EqualCI(id, r.LocationID):
		return ocpi.Invalid("id", "must equal the location_id of the URL ("+r.LocationID+")")
	}
	return nil
}

// patchKeepsIdentity rejects a PATCH that would change an id or the owner.
func patchKeepsIdentity(r Ref, patch ocpi.Object) error {
	str := func(k string) (string, bool) {
		v, ok := patch[k]
		if !ok {
			return "", false
		}
		s, _ := v.(string)
		return s, true
	}
	switch r.Level() {
	case "location":
		for _, f := range []struct{ field, want string }{{"country_code", r.CountryCode}, {"party_id", r.PartyID}, {"id", r.LocationID}} {
			if v, ok := str(f.field); ok && !ocpi.EqualCI(v, f.want) {
				return ocpi.Invalid(f.field, "must equal the URL's ("+f.want+"); a PATCH cannot change it")
			}
		}
	case "evse":
		if v, ok := str("uid"); ok && !ocpi.EqualCI(v, r.EVSEUID) {
			return ocpi.Invalid("uid", "must equal the evse_uid of the URL ("+r.EVSEUID+"); a PATCH cannot change it")
		}
	case "connector":
		if v, ok := str("id"); ok && !ocpi.EqualCI(v, r.ConnectorID) {
			return ocpi.Invalid("id", "must equal the connector_id of the URL ("+r.ConnectorID+"); a PATCH cannot change it")
		}
	}
	return nil
}

// listKeys are the lists a PATCH merges item by item, and their item keys.
var listKeys = map[string]string{"evses": "uid", "connectors": "id"}

// merge applies a PATCH to an object: JSON Merge Patch for objects and
// values (null removes an optional field; the validation that follows
// rejects removing a required one), item-by-item merge for the evses and
// connectors lists, which must keep every stored item.
func merge(dst, patch ocpi.Object, path string) error {
	keys := make([]string, 0, len(patch))
	for k := range patch {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := patch[k]
		p := k
		if path != "" {
			p = path + "." + k
		}
		if v == nil {
			delete(dst, k)
			continue
		}
		if idKey, ok := listKeys[k]; ok {
			merged, err := mergeList(dst[k], v, idKey, p)
			if err != nil {
				return err
			}
			dst[k] = merged
			continue
		}
		if vm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				if err := merge(dm, vm, p); err != nil {
					return err
				}
				continue
			}
		}
		dst[k] = v
	}
	return nil
}

func mergeList(existing, patch any, idKey, path string) ([]any, error) {
	items, ok := patch.([]any)
	if !ok {
		return nil, ocpi.Invalid(path, "must be a list")
	}
	old, _ := existing.([]any)
	out := make([]any, 0, len(items))
	seen := map[string]bool{}
	for i, it := range items {
		m, ok := it.(map[string]any)
		id, _ := m[idKey].(string)
		if !ok || id == "" {
			return nil, ocpi.Invalid(path+"["+itoa(i)+"]."+idKey, "is required to merge the item")
		}
		seen[ocpi.Key(id)] = true
		if cur := findItem(old, idKey, id); cur != nil {
			if err := merge(cur, m, path+"["+itoa(i)+"]"); err != nil {
				return nil, err
			}
			out = append(out, cur)
		} else {
			out = append(out, m)
		}
	}
	for _, it := range old {
		m, _ := it.(map[string]any)
		id, _ := m[idKey].(string)
		if !seen[ocpi.Key(id)] {
			return nil, removalError(path, idKey, id)
		}
	}
	return out, nil
}

// keepsEVSEs rejects a replacement location that drops a stored EVSE.
func keepsEVSEs(old, next ocpi.Object, path string) error {
	nextItems, _ := next["evses"].([]any)
	oldItems, _ := old["evses"].([]any)
	for _, it := range oldItems {
		m, _ := it.(map[string]any)
		id, _ := m["uid"].(string)
		if findItem(nextItems, "uid", id) == nil {
			return removalError(path, "uid", id)
		}
	}
	return nil
}

// keepsEVSEsIn is keepsEVSEs over the documents' bytes: the stored
// location as it lies and the replacement in canonical form.
func keepsEVSEsIn(old, next []byte, path string) error {
	nextItems, oldItems := gjson.GetBytes(next, "evses"), gjson.GetBytes(old, "evses")
	if !oldItems.IsArray() {
		return nil
	}
	var err error
	oldItems.ForEach(func(_, it gjson.Result) bool {
		id := ""
		if uid := it.Get("uid"); it.IsObject() && uid.Type == gjson.String {
			id = uid.Str
		}
		if !findIn(nextItems, "uid", id).Exists() {
			err = removalError(path, "uid", id)
			return false
		}
		return true
	})
	return err
}

func removalError(path, idKey, id string) error {
	if idKey == "uid" {
		return &ocpi.Error{Code: ocpi.EINVALID, Field: path,
			Issue:   "lacks EVSE " + id + ": EVSEs are never deleted; send it with status REMOVED",
			Message: "EVSE " + id + " is missing from " + path + ": EVSEs are never deleted (OCPI); send the EVSE with status REMOVED instead"}
	}
	return &ocpi.Error{Code: ocpi.EINVALID, Field: path,
		Issue:   "lacks connector " + id + ": a PATCH cannot remove connectors; PUT the EVSE without it",
		Message: "connector " + id + " is missing from " + path + ": a PATCH cannot remove data; PUT the whole EVSE to remove a connector"}
}

// replaceItem swaps the item with key id in a list.
func replaceItem(list []any, key, id string, item ocpi.Object) {
	for i, it := range list {
		if m, ok := it.(map[string]any); ok {
			if v, _ := m[key].(string); ocpi.EqualCI(v, id) {
				list[i] = item
				return
			}
		}
	}
}

// raiseLastUpdated sets obj's last_updated to lu when lu is later.
func raiseLastUpdated(obj ocpi.Object, lu string) {
	next, err := ocpi.ParseDateTime(lu)
	if err != nil {
		return
	}
	cur, _ := obj["last_updated"].(string)
	if c, err := ocpi.ParseDateTime(cur); err == nil && !next.After(c.Time) {
		return
	}
	obj["last_updated"] = next.String()
}
