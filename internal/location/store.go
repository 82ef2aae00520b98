package location

import (
	"context"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// writeLocation inserts or updates a location row and returns its pk.
func writeLocation(ctx context.Context, tx *store.Tx, cur *stored, loc *ocpi.Location, body []byte) (int64, error) {
	active := 0
	for _, e := range loc.EVSEs {
		if e.Status != "REMOVED" {
			active++
		}
	}
	lat, lon := E7(loc.Coordinates.Latitude), E7(loc.Coordinates.Longitude)
	publish := loc.Publish != nil && *loc.Publish
	if cur == nil {
		var pk int64
		err := tx.QueryRow(ctx, `INSERT INTO locations (country_code, party_id, id, publish, lat_e7, lon_e7, evses_active, last_updated, body)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING pk`,
			ocpi.Key(loc.CountryCode), ocpi.Key(loc.PartyID), ocpi.Key(loc.ID), publish, lat, lon, active,
			loc.LastUpdated.Micros(), string(body)).Scan(&pk)
		return pk, err
	}
	// Queued (ExecLater): on PostgreSQL it travels with the EVSE rows, the
	// change and the webhook lookup, as a status PATCH's writes do.
	err := tx.ExecLater(ctx, `UPDATE locations SET publish = $1, lat_e7 = $2, lon_e7 = $3, evses_active = $4, last_updated = $5, body = $6
		WHERE pk = $7`, publish, lat, lon, active, loc.LastUpdated.Micros(), string(body), cur.pk)
	return cur.pk, err
}

// evseRow is the indexed part of an EVSE.
type evseRow struct {
	evseID, status string
	maxPowerW      int64
	types          string
	lastUpdated    int64
}

func evseRows(loc *ocpi.Location) map[string]evseRow {
	out := map[string]evseRow{}
	if loc == nil {
		return out
	}
	for _, e := range loc.EVSEs {
		r := evseRow{evseID: e.EVSEID, status: e.Status, lastUpdated: e.LastUpdated.Micros()}
		var types []string
		for _, k := range e.Connectors {
			r.maxPowerW = max(r.maxPowerW, k.PowerW())
			types = append(types, k.Standard)
		}
		r.types = "," + strings.Join(types, ",") + ","
		out[ocpi.Key(e.UID)] = r
	}
	return out
}

type tariffRef struct{ tariff, evse, connector string }

func tariffRefs(loc *ocpi.Location) map[tariffRef]bool {
	out := map[tariffRef]bool{}
	if loc == nil {
		return out
	}
	for _, e := range loc.EVSEs {
		for _, k := range e.Connectors {
			for _, t := range k.TariffIDs {
				out[tariffRef{ocpi.Key(t), e.UID, k.ID}] = true
			}
		}
	}
	return out
}

// indexIn returns evseRows and tariffRefs of a stored location document,
// read where the values lie in its bytes (gjson) instead of decoding the
// document: what the rows held before a write, which index compares the
// new document's with. A stored document was valid when it was written
// (integers where the rows take them); an EVSE or connector that is not an
// object is passed over (decoding would have failed the whole document, and
// every row been written again).
func indexIn(body []byte) (map[string]evseRow, map[tariffRef]bool) {
	rows, refs := map[string]evseRow{}, map[tariffRef]bool{}
	str := func(v gjson.Result, key string) string {
		if f := v.Get(key); f.Type == gjson.String {
			return f.Str
		}
		return ""
	}
	num := func(v gjson.Result, key string) (int64, bool) {
		f := v.Get(key)
		return f.Int(), f.Type == gjson.Number
	}
	// each calls fn with the objects of the list v[key].
	each := func(v gjson.Result, key string, fn func(gjson.Result)) {
		if list := v.Get(key); list.IsArray() {
			list.ForEach(func(_, it gjson.Result) bool {
				if it.IsObject() {
					fn(it)
				}
				return true
			})
		}
	}
	each(gjson.ParseBytes(body), "evses", func(e gjson.Result) {
		uid := str(e, "uid")
		r := evseRow{evseID: str(e, "evse_id"), status: str(e, "status")}
		if lu, err := ocpi.ParseDateTime(str(e, "last_updated")); err == nil {
			r.lastUpdated = lu.Micros()
		}
		var types []string
		each(e, "connectors", func(k gjson.Result) {
			var power int64
			if w, ok := num(k, "max_electric_power"); ok {
				power = w
			} else {
				v, okV := num(k, "max_voltage")
				a, okA := num(k, "max_amperage")
				if okV && okA {
					c := ocpi.Connector{MaxVoltage: &v, MaxAmperage: &a, PowerType: str(k, "power_type")}
					power = c.PowerW()
				}
			}
			r.maxPowerW = max(r.maxPowerW, power)
			types = append(types, str(k, "standard"))
			id := str(k, "id")
			if ids := k.Get("tariff_ids"); ids.IsArray() {
				ids.ForEach(func(_, t gjson.Result) bool {
					if t.Type == gjson.String {
						refs[tariffRef{ocpi.Key(t.Str), uid, id}] = true
					}
					return true
				})
			}
		})
		r.types = "," + strings.Join(types, ",") + ","
		rows[ocpi.Key(uid)] = r
	})
	return rows, refs
}

// index brings the evses and tariff_refs rows of a location in line with its
// new body, writing only what changed (a status PATCH touches one row). The
// rows before are read from the stored document (indexIn; none for a new
// location). The writes are queued (ExecLater): nothing here reads what
// they return.
func index(ctx context.Context, tx *store.Tx, pk int64, old []byte, next *ocpi.Location) error {
	before, refsBefore := map[string]evseRow{}, map[tariffRef]bool{}
	if old != nil {
		before, refsBefore = indexIn(old)
	}
	after := evseRows(next)
	for uid, r := range after {
		if b, ok := before[uid]; ok && b == r {
			continue
		}
		if err := tx.ExecLater(ctx, `INSERT INTO evses (location_pk, uid, evse_id, status, max_power_w, connector_types, last_updated)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (location_pk, uid) DO UPDATE SET evse_id = excluded.evse_id, status = excluded.status,
			max_power_w = excluded.max_power_w, connector_types = excluded.connector_types, last_updated = excluded.last_updated`,
			pk, uid, r.evseID, r.status, r.maxPowerW, r.types, r.lastUpdated); err != nil {
			return err
		}
	}
	refsAfter := tariffRefs(next)
	for ref := range refsBefore {
		if refsAfter[ref] {
			continue
		}
		if err := tx.ExecLater(ctx, "DELETE FROM tariff_refs WHERE location_pk = $1 AND evse_uid = $2 AND connector_id = $3 AND tariff_id = $4",
			pk, ref.evse, ref.connector, ref.tariff); err != nil {
			return err
		}
	}
	for ref := range refsAfter {
		if refsBefore[ref] {
			continue
		}
		if err := tx.ExecLater(ctx, `INSERT INTO tariff_refs (country_code, party_id, tariff_id, location_pk, evse_uid, connector_id)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			ocpi.Key(next.CountryCode), ocpi.Key(next.PartyID), ref.tariff, pk, ref.evse, ref.connector); err != nil {
			return err
		}
	}
	return nil
}

// E7 converts a coordinate string ("52.3789012") to integer units of 1e-7
// degree, exactly (no floating point). Malformed input gives 0; coordinates
// are validated before.
func E7(s string) int64 {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 7 {
		frac = frac[:7]
	}
	frac += strings.Repeat("0", 7-len(frac))
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	v := w*10_000_000 + f
	if neg {
		v = -v
	}
	return v
}

func itoa(i int) string { return strconv.Itoa(i) }
