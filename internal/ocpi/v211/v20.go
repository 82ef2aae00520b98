package v211

import (
	"encoding/json"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// decimals20 are the fields OCPI 2.0 types as "decimal": JSON strings on the
// wire ("0.68"), where 2.1 made them JSON numbers.
var decimals20 = map[string]bool{
	"price": true, "min_kwh": true, "max_kwh": true, "min_power": true, "max_power": true,
	"kwh": true, "total_cost": true, "volume": true, "total_energy": true, "total_time": true,
	"total_parking_time": true, "percentage": true, "amount": true,
}

// To20 rewrites the 2.1.1 JSON form of an object of module (at level, for
// locations) into 2.0: decimals as strings; for locations no last_updated
// and a status on each connector (the status of its EVSE: 2.2 moved it
// there); for tokens allow_whitelist (whitelist is not NEVER) and no
// language; for CDRs total_usage instead of the totals. obj is changed in
// place.
func To20(module, level string, obj ocpi.Object) {
	switch module {
	case "tokens":
		// 2.0 says whether whitelisting is allowed at all.
		if w, ok := obj["whitelist"].(string); ok {
			obj["allow_whitelist"] = w != "NEVER"
			delete(obj, "whitelist")
		}
		delete(obj, "language")
	case "cdrs":
		var usage []any
		for _, f := range []struct{ field, typ string }{{"total_energy", "ENERGY"}, {"total_time", "TIME"}, {"total_parking_time", "PARKING_TIME"}} {
			if v, ok := obj[f.field]; ok {
				usage = append(usage, map[string]any{"type": f.typ, "volume": v})
				delete(obj, f.field)
			}
		}
		if usage != nil {
			obj["total_usage"] = usage
		}
	}
	stringify(obj)
	if module != "locations" {
		return
	}
	switch level {
	case LevelLocation:
		delete(obj, "last_updated")
		evses, _ := obj["evses"].([]any)
		for _, e := range evses {
			if m, ok := e.(map[string]any); ok {
				evseTo20(m)
			}
		}
	case LevelEVSE:
		evseTo20(obj)
	default:
		delete(obj, "last_updated")
	}
}

func evseTo20(e map[string]any) {
	delete(e, "last_updated")
	status, _ := e["status"].(string)
	conns, _ := e["connectors"].([]any)
	for _, c := range conns {
		if m, ok := c.(map[string]any); ok {
			delete(m, "last_updated")
			if status != "" {
				m["status"] = status
			}
		}
	}
}

// From20 rewrites a 2.0 object of module (at level, for locations) into the
// 2.1.1 JSON form: a missing last_updated becomes now (2.0 locations carry
// none: the hub stamps the time it received them), a connector's status is
// dropped (the EVSE's status is the one 2.2.1 keeps), allow_whitelist
// becomes whitelist ALLOWED or NEVER, total_usage the CDR totals. Decimal
// strings need no rewriting: ocpi.Number reads them. obj is changed in
// place.
func From20(module, level string, obj ocpi.Object, now time.Time) {
	stamp := NewDateTime(ocpi.NewDateTime(now)).String()
	if _, ok := obj["last_updated"]; !ok {
		obj["last_updated"] = stamp
	}
	switch module {
	case "tokens":
		if b, ok := obj["allow_whitelist"].(bool); ok {
			obj["whitelist"] = "NEVER"
			if b {
				obj["whitelist"] = "ALLOWED"
			}
			delete(obj, "allow_whitelist")
		}
	case "cdrs":
		totalsFrom20(obj)
	}
	if module != "locations" {
		return
	}
	var evses []any
	switch level {
	case LevelLocation:
		evses, _ = obj["evses"].([]any)
	case LevelEVSE:
		evses = []any{obj}
	default:
		delete(obj, "status")
		return
	}
	for _, e := range evses {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := m["last_updated"]; !ok {
			m["last_updated"] = stamp
		}
		conns, _ := m["connectors"].([]any)
		for _, c := range conns {
			if cm, ok := c.(map[string]any); ok {
				delete(cm, "status")
				if _, ok := cm["last_updated"]; !ok {
					cm["last_updated"] = stamp
				}
			}
		}
	}
}

// stringify turns the numbers of decimal fields into strings, everywhere in
// v.
func stringify(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if decimals20[k] {
				if n, ok := val.(json.Number); ok {
					x[k] = n.String()
					continue
				}
			}
			stringify(val)
		}
	case []any:
		for _, it := range x {
			stringify(it)
		}
	}
}

// totalsFrom20 sums a 2.0 CDR's total_usage into the 2.1.1 totals it
// replaced (energy, time, parking time).
func totalsFrom20(obj ocpi.Object) {
	usage, ok := obj["total_usage"].([]any)
	if !ok {
		return
	}
	delete(obj, "total_usage")
	sums := map[string]ocpi.Number{}
	for _, u := range usage {
		m, _ := u.(map[string]any)
		typ, _ := m["type"].(string)
		var n ocpi.Number
		if b, err := json.Marshal(m["volume"]); err != nil || json.Unmarshal(b, &n) != nil || !n.Valid() {
			continue
		}
		if cur, ok := sums[typ]; ok {
			n = cur.Add(n)
		}
		sums[typ] = n
	}
	for typ, field := range map[string]string{"ENERGY": "total_energy", "TIME": "total_time", "PARKING_TIME": "total_parking_time"} {
		if _, set := obj[field]; !set {
			if n, ok := sums[typ]; ok {
				obj[field] = json.Number(n.String())
			}
		}
	}
}
