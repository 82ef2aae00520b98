// Package simwire is the plumbing the simulators share: the in-memory directory of OCPI objects a simulated
// receiver or sender keeps, URL path segments, and deep copies of JSON objects.
package simwire

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Directory is an in-memory set of OCPI objects (locations or tariffs) keyed
// by "CC/PID/ID", applying PUT, PATCH and DELETE the way a receiver does:
// EVSE- and connector-level PUTs and PATCHes land inside their location.
type Directory struct {
	mu      sync.Mutex
	objects map[string]map[string]any
}

// NewDirectory returns an empty directory.
func NewDirectory() *Directory { return &Directory{objects: map[string]map[string]any{}} }

// Key is the directory key of an object: "CC/PID/ID", upper-cased.
func Key(cc, pid, id string) string { return strings.ToUpper(cc + "/" + pid + "/" + id) }

// Apply performs method on the object at path segments [cc pid id evse conn].
// It reports false when the target does not exist (a PATCH or an EVSE PUT on
// an unknown location).
func (d *Directory) Apply(method string, seg []string, body []byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(seg) < 3 {
		return false
	}
	key := Key(seg[0], seg[1], seg[2])
	if method == http.MethodDelete {
		delete(d.objects, key)
		return true
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		return false
	}
	if len(seg) == 3 && method == http.MethodPut {
		d.objects[key] = obj
		return true
	}
	loc, ok := d.objects[key]
	if !ok {
		return false
	}
	// The EVSE, then the connector, the path names: a PUT of the last level
	// named is done there; a level that does not exist fails the rest.
	target := loc
	if len(seg) >= 4 {
		put := len(seg) == 4 && method == http.MethodPut
		if target = member(loc, "evses", "uid", seg[3], obj, put); put || target == nil {
			return put
		}
		if len(seg) == 5 {
			put = method == http.MethodPut
			if target = member(target, "connectors", "id", seg[4], obj, put); put || target == nil {
				return put
			}
		}
	}
	for k, v := range obj {
		target[k] = v
	}
	return true
}

// member returns the element of parent's list field whose key is id (nil
// when there is none); with put, obj takes its place, or joins the list,
// and is returned.
func member(parent map[string]any, field, key, id string, obj map[string]any, put bool) map[string]any {
	list, _ := parent[field].([]any)
	found := FindObj(list, key, id)
	if !put {
		return found
	}
	if found == nil {
		parent[field] = append(list, obj)
	} else {
		ReplaceObj(list, key, id, obj)
	}
	return obj
}

// Get returns a copy of the object, nil when there is none.
func (d *Directory) Get(cc, pid, id string) map[string]any {
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.objects[Key(cc, pid, id)]
	if !ok {
		return nil
	}
	b, _ := json.Marshal(o)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// Len returns the number of objects.
func (d *Directory) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.objects)
}

// List returns the objects changed at or after from (zero: all), ordered by
// last_updated then key.
func (d *Directory) List(from ocpi.DateTime) []map[string]any {
	d.mu.Lock()
	defer d.mu.Unlock()
	type item struct {
		key string
		lu  ocpi.DateTime
		obj map[string]any
	}
	var items []item
	for k, o := range d.objects {
		s, _ := o["last_updated"].(string)
		lu, _ := ocpi.ParseDateTime(s)
		if !from.IsZero() && lu.Before(from.Time) {
			continue
		}
		items = append(items, item{k, lu, o})
	}
	sort.Slice(items, func(i, j int) bool {
		if !items[i].lu.Equal(items[j].lu.Time) {
			return items[i].lu.Before(items[j].lu.Time)
		}
		return items[i].key < items[j].key
	})
	out := make([]map[string]any, len(items))
	for i, it := range items {
		out[i] = it.obj
	}
	return out
}

// Segments returns the path segments after marker ("/emsp/locations").
func Segments(path, marker string) []string {
	i := strings.Index(path, marker)
	if i < 0 {
		return nil
	}
	rest := strings.Trim(path[i+len(marker):], "/")
	if rest == "" {
		return nil
	}
	parts := strings.Split(rest, "/")
	for i, s := range parts {
		if u, err := url.PathUnescape(s); err == nil {
			parts[i] = u
		}
	}
	return parts
}

// FindObj returns the element of list whose key equals id (case-insensitive), nil when none does.
func FindObj(list []any, key, id string) map[string]any {
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			if v, _ := m[key].(string); strings.EqualFold(v, id) {
				return m
			}
		}
	}
	return nil
}

// ReplaceObj replaces the elements of list whose key equals id (case-insensitive) with obj.
func ReplaceObj(list []any, key, id string, obj map[string]any) {
	for i, it := range list {
		if m, ok := it.(map[string]any); ok {
			if v, _ := m[key].(string); strings.EqualFold(v, id) {
				list[i] = obj
			}
		}
	}
}

// Clone returns a deep copy of a JSON object.
func Clone(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// CloneList returns deep copies of a list of objects, in its order: what a
// simulator's accessor of received objects returns.
func CloneList(list []map[string]any) []map[string]any {
	out := make([]map[string]any, len(list))
	for i, m := range list {
		out[i] = Clone(m)
	}
	return out
}

// Clones returns deep copies of m's objects, in no particular order: the
// list a simulator's sender answers with.
func Clones(m map[string]map[string]any) []any {
	list := make([]any, 0, len(m))
	for _, obj := range m {
		list = append(list, Clone(obj))
	}
	return list
}

// PatchSession applies a session PATCH to cur: the charging_periods it
// carries are appended to cur's, every other field replaces cur's.
func PatchSession(cur, patch map[string]any) {
	for k, v := range patch {
		if k == "charging_periods" {
			old, _ := cur[k].([]any)
			add, _ := v.([]any)
			cur[k] = append(old, add...)
			continue
		}
		cur[k] = v
	}
}
