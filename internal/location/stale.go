package location

import (
	"github.com/tidwall/gjson"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// checkFresh applies the staleness rule (ocpi.StaleError) to a write of the
// object r names: sent is the update's last_updated, stored the stored
// object (a location, an EVSE or a connector document).
//
// The stored side is the object's cascaded last_updated, the newest of its
// own and its children's (locations.md §1: a connector change bumps its EVSE
// and location). A whole object is compared by its newest timestamp too, so
// a delayed PUT of a location is stale once any part of the stored location
// is newer. Decided here: a PATCH of a location's own fields that is older
// than a later change of one of its EVSEs is stale too (OCPI has one
// last_updated per object, and the hub keeps no separate one per field).
func checkFresh(r Ref, stored ocpi.Object, sent ocpi.DateTime) error {
	return ocpi.CheckFresh(Module, r.Level()+" "+r.String(), newestOf(stored), sent)
}

// newestOf returns the newest last_updated of obj and of the EVSEs and
// connectors inside it (zero when none parses).
func newestOf(obj ocpi.Object) ocpi.DateTime {
	var newest ocpi.DateTime
	var walk func(o map[string]any)
	walk = func(o map[string]any) {
		if s, ok := o["last_updated"].(string); ok {
			if d, err := ocpi.ParseDateTime(s); err == nil && d.After(newest.Time) {
				newest = d
			}
		}
		for _, k := range []string{"evses", "connectors"} {
			items, _ := o[k].([]any)
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					walk(m)
				}
			}
		}
	}
	if obj != nil {
		walk(obj)
	}
	return newest
}

// newestIn is newestOf over a document's bytes: the stored location as it
// lies, or a new one in canonical form, read where the timestamps are
// instead of decoded whole.
func newestIn(body []byte) ocpi.DateTime {
	var newest ocpi.DateTime
	var walk func(o gjson.Result)
	walk = func(o gjson.Result) {
		if lu := o.Get("last_updated"); lu.Type == gjson.String {
			if d, err := ocpi.ParseDateTime(lu.Str); err == nil && d.After(newest.Time) {
				newest = d
			}
		}
		for _, k := range []string{"evses", "connectors"} {
			if items := o.Get(k); items.IsArray() {
				items.ForEach(func(_, it gjson.Result) bool {
					if it.IsObject() {
						walk(it)
					}
					return true
				})
			}
		}
	}
	if doc := gjson.ParseBytes(body); doc.IsObject() {
		walk(doc)
	}
	return newest
}
