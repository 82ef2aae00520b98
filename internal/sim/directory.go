package sim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// directory is an in-memory set of OCPI objects (locations or tariffs) keyed
// by "CC/PID/ID", applying PUT, PATCH and DELETE the way a receiver does:
// EVSE- and connector-level PUTs and PATCHes land inside their location.
type directory struct {
	mu      sync.Mutex
	objects map[string]map[string]any
}

func newDirectory() *directory { return &directory{objects: map[string]map[string]any{}} }

func dirKey(cc, pid, id string) string { return strings.ToUpper(cc + "/" + pid + "/" + id) }

// apply performs method on the object at path segments [cc pid id evse conn].
// It reports false when the target does not exist (a PATCH or an EVSE PUT on
// an unknown location).
func (d *directory) apply(method string, seg []string, body []byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(seg) < 3 {
		return false
	}
	key := dirKey(seg[0], seg[1], seg[2])
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
	target := loc
	if len(seg) >= 4 {
		evses, _ := loc["evses"].([]any)
		evse := findObj(evses, "uid", seg[3])
		if len(seg) == 4 && method == http.MethodPut {
			if evse == nil {
				loc["evses"] = append(evses, obj)
			} else {
				replaceObj(evses, "uid", seg[3], obj)
			}
			return true
		}
		if evse == nil {
			return false
		}
		target = evse
		if len(seg) == 5 {
			conns, _ := evse["connectors"].([]any)
			conn := findObj(conns, "id", seg[4])
			if method == http.MethodPut {
				if conn == nil {
					evse["connectors"] = append(conns, obj)
				} else {
					replaceObj(conns, "id", seg[4], obj)
				}
				return true
			}
			if conn == nil {
				return false
			}
			target = conn
		}
	}
	for k, v := range obj {
		target[k] = v
	}
	return true
}

func (d *directory) get(cc, pid, id string) map[string]any {
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.objects[dirKey(cc, pid, id)]
	if !ok {
		return nil
	}
	b, _ := json.Marshal(o)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

func (d *directory) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.objects)
}

// list returns the objects changed at or after from (zero: all), ordered by
// last_updated then key.
func (d *directory) list(from ocpi.DateTime) []map[string]any {
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

// serveList answers a paged sender GET from the directory (offset, limit,
// date_from; Link to the next page).
func (p *Platform) serveList(w http.ResponseWriter, r *http.Request, d *directory) {
	q := r.URL.Query()
	from, _ := ocpi.ParseDateTime(q.Get("date_from"))
	all := d.list(from)
	offset, _ := strconv.Atoi(q.Get("offset"))
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit <= 0 || limit > 50 {
		limit = 50
	}
	end := min(offset+limit, len(all))
	page := []map[string]any{}
	if offset < len(all) {
		page = all[offset:end]
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(len(all)))
	w.Header().Set("X-Limit", "50")
	if end < len(all) {
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path}
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("offset", strconv.Itoa(end))
		nq.Set("limit", strconv.Itoa(limit))
		u.RawQuery = nq.Encode()
		w.Header().Set("Link", "<"+u.String()+">; rel=\"next\"")
	}
	p.OK(w, page)
}

// segments returns the path segments after marker ("/emsp/locations").
func segments(path, marker string) []string {
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

func findObj(list []any, key, id string) map[string]any {
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			if v, _ := m[key].(string); strings.EqualFold(v, id) {
				return m
			}
		}
	}
	return nil
}

func replaceObj(list []any, key, id string, obj map[string]any) {
	for i, it := range list {
		if m, ok := it.(map[string]any); ok {
			if v, _ := m[key].(string); strings.EqualFold(v, id) {
				list[i] = obj
			}
		}
	}
}
