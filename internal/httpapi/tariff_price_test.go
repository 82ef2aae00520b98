package httpapi_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/tariff"
)

// TestAdminTariffPrice: the operator prices a session with the cost engine
// through the admin API (a 2.1.1 tariff converted on the way), and bad input
// is refused naming the field.
func TestAdminTariffPrice(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		// 2.1.1 shape (no country_code): a 2.00 start fee and 0.30 per kWh.
		legacy := json.RawMessage(`{"id":"T211","currency":"INR","last_updated":"2025-01-01T00:00:00Z","elements":[{"price_components":[` +
			`{"type":"FLAT","price":2.00,"step_size":1},{"type":"ENERGY","price":0.30,"step_size":1}]}]}`)
		session := map[string]any{"country_code": "IN", "party_id": "CP1", "id": "S1", "start_date_time": "2025-06-02T10:00:00Z",
			"kwh": 10, "cdr_token": map[string]any{"country_code": "IN", "party_id": "EM1", "uid": "U", "type": "RFID", "contract_id": "C"},
			"auth_method": "WHITELIST", "location_id": "L1", "evse_uid": "E1", "connector_id": "1", "currency": "INR",
			"charging_periods": []any{map[string]any{"start_date_time": "2025-06-02T10:00:00Z", "dimensions": []any{map[string]any{"type": "ENERGY", "volume": 10}}}},
			"total_cost":       map[string]any{"excl_vat": 5.00}, "status": "ACTIVE", "last_updated": "2025-06-02T10:30:00Z"}
		var rep tariff.Report
		resp := h.Admin(t, http.MethodPost, "/admin/tariffs/price", map[string]any{
			"tariffs": []json.RawMessage{legacy}, "session": session, "time_zone": "Asia/Kolkata", "now": "2025-06-02T10:30:00Z", "explain": true}, &rep)
		if resp.HTTPStatus != http.StatusOK || rep.TotalCost.ExclVAT.String() != "5" || rep.Difference == nil || rep.Difference.ExclVAT.String() != "0" || len(rep.Steps) == 0 {
			t.Fatalf("price: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}

		// Without time_zone, the zone of the session's location when the hub
		// holds it (Asia/Kolkata: 10:00 UTC is 15:30, after the noon change
		// from 0.10 to 0.30 per kWh), else UTC.
		cpo := hubtest.Add(t, h, sim.StartCPO, "CPO One", "IN", "CP1")
		if err := cpo.PutLocation(t.Context(), "L1", sim.LocationObject("IN", "CP1", "L1", "E1")); err != nil {
			t.Fatal(err)
		}
		tod := json.RawMessage(`{"country_code":"IN","party_id":"CP1","id":"T2","currency":"INR","last_updated":"2025-01-01T00:00:00Z","elements":[` +
			`{"price_components":[{"type":"ENERGY","price":0.10,"step_size":1}],"restrictions":{"start_time":"00:00","end_time":"12:00"}},` +
			`{"price_components":[{"type":"ENERGY","price":0.30,"step_size":1}]}]}`)
		for _, c := range []struct {
			loc, zone, from, total string
		}{{"L1", "Asia/Kolkata", "location", "3"}, {"ELSEWHERE", "UTC", "default", "1"}} {
			sess := maps.Clone(session)
			sess["location_id"] = c.loc
			var rep tariff.Report
			resp := h.Admin(t, http.MethodPost, "/admin/tariffs/price", map[string]any{"tariffs": []json.RawMessage{tod}, "session": sess,
				"now": "2025-06-02T10:30:00Z"}, &rep)
			if resp.HTTPStatus != http.StatusOK || rep.TimeZone != c.zone || rep.TimeZoneFrom != c.from || rep.TotalCost.ExclVAT.String() != c.total {
				t.Errorf("location %s: HTTP %d, %s in %s from %s, want %s in %s from %s", c.loc, resp.HTTPStatus, rep.TotalCost.ExclVAT, rep.TimeZone,
					rep.TimeZoneFrom, c.total, c.zone, c.from)
			}
		}

		bad := json.RawMessage(`{"country_code":"IN","party_id":"CP1","id":"T1","currency":"INR","last_updated":"2025-01-01T00:00:00Z",` +
			`"elements":[{"price_components":[{"type":"ENERGY","price":0.30,"step_size":1}],"restrictions":{"min_kwh":20,"max_kwh":10}}]}`)
		hubtest.WantError(t, "impossible restriction", h.AdminDo(t, http.MethodPost, "/admin/tariffs/price", map[string]any{"tariffs": []json.RawMessage{bad}, "session": session}),
			http.StatusOK, 2001, "elements[0].restrictions.max_kwh")
		hubtest.WantError(t, "neither cdr nor session", h.AdminDo(t, http.MethodPost, "/admin/tariffs/price", map[string]any{"tariffs": []json.RawMessage{legacy}}),
			http.StatusOK, 2001, "cdr")
		hubtest.WantError(t, "unknown time zone", h.AdminDo(t, http.MethodPost, "/admin/tariffs/price", map[string]any{"session": session, "tariffs": []json.RawMessage{legacy}, "time_zone": "Mars/Olympus"}),
			http.StatusOK, 2001, "time_zone")
	})
}
