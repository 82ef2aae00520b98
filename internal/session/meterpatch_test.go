package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

// TestMeterPatchAsTheGeneralPath applies generated PATCHes to generated
// stored sessions both ways, the stored bytes (applyMeter) and the general
// path (applyPatch), and requires the same outcome: the same error, or the
// same stored body byte for byte, the same session, the same PATCH pushed
// and the same verdict on whether anything changed. The generator sends
// what CPOs send: numbers as strings and with trailing zeros, timestamps
// with fractions, offsets and lower-case letters, periods that are not
// valid, nulls, fields outside a meter PATCH, stale and repeated PATCHes.
// It counts which ways the cases went, so a generator that stops reaching
// one of them fails.
func TestMeterPatchAsTheGeneralPath(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(17, 38))
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	r := Ref{CountryCode: "in", PartyID: "cp1", ID: "s-1"}
	pick := func(xs ...any) any { return xs[rng.IntN(len(xs))] }
	at := func(min int) string {
		ts := t0.Add(time.Duration(min) * time.Minute)
		return pick(ts.Format(time.RFC3339), ts.Format("2006-01-02T15:04:05.000Z"), ts.Format("2006-01-02t15:04:05z"),
			ts.In(time.FixedZone("", 5*3600+1800)).Format(time.RFC3339), ts.Format("2006-01-02T15:04:05")).(string)
	}
	valid := func() any { return pick(0, 1.5, "2.50", json.Number("3.10"), 12, "7") }
	number := func() any { return pick(valid(), valid(), -1, "x", true) }
	period := func(min int) any {
		switch rng.IntN(10) {
		case 0:
			return "not a period"
		case 1:
			return map[string]any{"start_date_time": at(min), "dimensions": []any{}}
		case 2:
			return map[string]any{"start_date_time": at(min), "dimensions": []any{map[string]any{"type": "WATTS", "volume": 1}}}
		}
		p := map[string]any{"start_date_time": at(min), "dimensions": []any{
			map[string]any{"type": pick("ENERGY", "TIME", "MAX_CURRENT").(string), "volume": pick(1, "2.50", 0.125, json.Number("4.0"))}}}
		if rng.IntN(3) == 0 {
			p["tariff_id"] = pick("T<1>&", "tariff-1").(string)
		}
		if rng.IntN(5) == 0 {
			p["x_vendor"] = map[string]any{"b": 1, "a": "<&>"}
		}
		return p
	}
	price := func(bad bool) any {
		switch rng.IntN(5) {
		case 0:
			if bad {
				return map[string]any{"excl_vat": "x"}
			}
		case 1:
			return map[string]any{"excl_vat": 10, "incl_vat": "11.80"}
		case 2:
			return map[string]any{"incl_vat": valid()}
		}
		return map[string]any{"excl_vat": valid()}
	}
	ways := map[string]int{}
	for i := range 3000 {
		lu := rng.IntN(20)
		base := map[string]any{"country_code": "IN", "party_id": "CP1", "id": "S-1", "start_date_time": at(0), "kwh": valid(),
			"auth_method": "WHITELIST", "location_id": "LOC1", "evse_uid": "E1", "connector_id": "1", "currency": "INR",
			"cdr_token": map[string]any{"country_code": "DE", "party_id": "EM1", "uid": "T1", "type": "RFID", "contract_id": "C1"},
			"status":    pick("ACTIVE", "COMPLETED", "PENDING").(string), "last_updated": at(lu), "x_note": "a<b>"}
		switch rng.IntN(4) {
		case 0:
		case 1:
			base["charging_periods"] = []any{}
		default:
			var ps []any
			for m := range rng.IntN(4) + 1 {
				ps = append(ps, period(m))
			}
			base["charging_periods"] = ps
		}
		if rng.IntN(2) == 0 {
			base["total_cost"] = price(false)
		}
		raw, _ := json.Marshal(base)
		var sess ocpi.Session
		body, err := ocpi.DecodeChecked(raw, &sess, func() error { return checkSession(&sess, r) })
		if err != nil {
			ways["base refused"]++
			continue
		}
		patch := map[string]any{"last_updated": at(lu + rng.IntN(5) - 1)}
		// One in two, two, three and twelve: fields outside a meter PATCH
		// are rare, as they are in the traffic.
		for k, oneIn := range map[string]int{"kwh": 2, "charging_periods": 2, "total_cost": 3, "status": 12, "KWH": 12, "meter_id": 12} {
			if rng.IntN(oneIn) != 0 {
				continue
			}
			switch k {
			case "kwh":
				patch[k] = number()
			case "charging_periods":
				var ps []any
				for m := range rng.IntN(3) {
					ps = append(ps, period(20+m))
				}
				patch[k] = pick(ps, nil, "x")
			case "total_cost":
				patch[k] = pick(price(true), nil)
			case "status":
				patch[k] = "ACTIVE"
			default:
				patch[k] = 5
			}
		}
		rawPatch, _ := json.Marshal(patch)
		var partial struct {
			LastUpdated ocpi.DateTime `json:"last_updated"`
		}
		p1, err1 := ocpi.ParsePatch(rawPatch, &partial, &partial.LastUpdated)
		p2, err2 := ocpi.ParsePatch(rawPatch, &partial, &partial.LastUpdated)
		if err1 != nil || err2 != nil {
			ways["patch refused"]++
			continue
		}
		owner := tokenOwner(&sess)
		general := &stored{pk: 1, body: body, owner: owner}
		fast := &stored{pk: 1, body: body, owner: owner}
		if err := general.parse(); err != nil {
			t.Fatal(err)
		}
		want, wantErr := applyPatch(r, general, p1)
		got, ok, gotErr := applyMeter(r, fast, p2)
		if !ok {
			ways["general path"]++
			continue
		}
		name := fmt.Sprintf("case %d: %s onto %s", i, rawPatch, body)
		switch {
		case (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()):
			t.Fatalf("%s: error %v; the general path's %v", name, gotErr, wantErr)
		case wantErr != nil:
			ways["refused alike"]++
			continue
		case got.unchanged != want.unchanged:
			t.Fatalf("%s: unchanged %v; the general path's %v", name, got.unchanged, want.unchanged)
		case !bytes.Equal(got.body, want.body):
			t.Fatalf("%s: body\n%s\nthe general path's\n%s", name, got.body, want.body)
		case !sameSession(got.sess, want.sess):
			t.Fatalf("%s: session %+v; the general path's %+v", name, got.sess, want.sess)
		case !bytes.Equal(got.patchBody, want.patchBody):
			t.Fatalf("%s: push %s; the general path's %s", name, got.patchBody, want.patchBody)
		case fast.id != general.id:
			t.Fatalf("%s: id %q; the general path's %q", name, fast.id, general.id)
		case got.unchanged:
			ways["unchanged alike"]++
		default:
			ways["changed alike"]++
		}
	}
	t.Logf("ways: %v", ways)
	for _, w := range []string{"general path", "refused alike", "unchanged alike", "changed alike"} {
		if ways[w] < 30 {
			t.Errorf("only %d cases went %q: the generator no longer reaches it (%v)", ways[w], w, ways)
		}
	}
}

// sameSession compares two sessions by what they hold: the general path
// decodes the merged document before its canonical form, so its numbers
// may keep the trailing zeros and its times the offset they were sent
// with (3.10 and 3.1, 15:30+05:30 and 10:00Z are the same values).
func sameSession(a, b ocpi.Session) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// TestMeterPatchNeedsACanonicalBody: a stored body not in the form the hub
// writes (PostgreSQL's JSONB rendering, keys out of order) or lacking a
// field the PATCH sets goes the general way.
func TestMeterPatchNeedsACanonicalBody(t *testing.T) {
	t.Parallel()
	r := Ref{CountryCode: "IN", PartyID: "CP1", ID: "S1"}
	patch := func() ocpi.Object {
		return ocpi.Object{"kwh": json.Number("2"), "last_updated": "2026-03-01T10:05:00Z",
			"charging_periods": []any{map[string]any{"start_date_time": "2026-03-01T10:01:00Z",
				"dimensions": []any{map[string]any{"type": "ENERGY", "volume": json.Number("2")}}}}}
	}
	canonical := `{"auth_method":"WHITELIST","cdr_token":{"contract_id":"C1","country_code":"DE","party_id":"EM1","type":"RFID","uid":"T1"},` +
		`"charging_periods":[],"connector_id":"1","country_code":"IN","currency":"INR","evse_uid":"E1","id":"S1","kwh":0,` +
		`"last_updated":"2026-03-01T10:00:00Z","location_id":"LOC1","party_id":"CP1","start_date_time":"2026-03-01T10:00:00Z","status":"ACTIVE"}`
	owner := ocpiclient.Party{CountryCode: "DE", PartyID: "EM1"}
	p, ok, err := applyMeter(r, &stored{body: []byte(canonical), owner: owner}, patch())
	if !ok || err != nil || p.unchanged {
		t.Fatalf("the canonical body: ok %v, %v", ok, err)
	}
	if want := `"charging_periods":[{"dimensions":[{"type":"ENERGY","volume":2}],"start_date_time":"2026-03-01T10:01:00Z"}]`; !bytes.Contains(p.body, []byte(want)) {
		t.Fatalf("the period was not appended: %s", p.body)
	}
	for name, body := range map[string]string{
		"JSONB's spacing":       `{"id": "S1", "kwh": 0}`,
		"keys out of order":     `{"kwh":0,"id":"S1","charging_periods":[],"last_updated":"2026-03-01T10:00:00Z"}`,
		"no charging_periods":   `{"id":"S1","kwh":0,"last_updated":"2026-03-01T10:00:00Z"}`,
		"a space before a key":  `{"charging_periods":[], "id":"S1","kwh":0,"last_updated":"2026-03-01T10:00:00Z"}`,
		"charging_periods null": `{"charging_periods":null,"id":"S1","kwh":0,"last_updated":"2026-03-01T10:00:00Z"}`,
		"a key twice":           `{"charging_periods":[],"id":"S1","kwh":0,"kwh":1,"last_updated":"2026-03-01T10:00:00Z"}`,
		"trailing bytes":        `{"charging_periods":[],"id":"S1","kwh":0,"last_updated":"2026-03-01T10:00:00Z"} `,
	} {
		if _, ok, _ := applyMeter(r, &stored{body: []byte(body), owner: owner}, patch()); ok {
			t.Errorf("%s: the meter path took %s", name, body)
		}
	}
}
