package legacy_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// versions sets the OCPI versions a simulator speaks.
func versions(vs ...string) func(*sim.Options) {
	return func(o *sim.Options) { o.Versions = vs }
}

// member names a partner of the legacy tests' cast.
type member uint8

const (
	oldCPO  member = 1 << iota // Old CPO, IN/OLD, OCPI 2.1.1
	twoCPO                     // Two CPO, IN/TWO, OCPI 2.0
	newCPO                     // New CPO, IN/NEW, OCPI 2.2.1
	emsp221                    // eMSP 2.2.1, DE/E22
	emsp211                    // eMSP 2.1.1, NL/E21
	emsp20                     // eMSP 2.0, FR/E20
)

// cast holds the partners of the legacy tests: each is always started with
// the same name, codes and OCPI versions. A field is nil unless its member
// was asked for.
type cast struct {
	old, two, neu *sim.CPO
	e22, e21, e20 *sim.EMSP
}

// startCast starts the members of who and registers them with h, in the
// order of the constants.
func startCast(t *testing.T, h *hubtest.Hub, who member) cast {
	t.Helper()
	cpo := func(m member, name, pid string, vs ...string) *sim.CPO {
		if who&m == 0 {
			return nil
		}
		return hubtest.Add(t, h, sim.StartCPO, name, "IN", pid, versions(vs...))
	}
	emsp := func(m member, name, cc, pid string, vs ...string) *sim.EMSP {
		if who&m == 0 {
			return nil
		}
		return hubtest.Add(t, h, sim.StartEMSP, name, cc, pid, versions(vs...))
	}
	var c cast
	c.old = cpo(oldCPO, "Old CPO", "OLD", "2.1.1")
	c.two = cpo(twoCPO, "Two CPO", "TWO", "2.0")
	c.neu = cpo(newCPO, "New CPO", "NEW")
	c.e22 = emsp(emsp221, "eMSP 2.2.1", "DE", "E22")
	c.e21 = emsp(emsp211, "eMSP 2.1.1", "NL", "E21", "2.1.1")
	c.e20 = emsp(emsp20, "eMSP 2.0", "FR", "E20", "2.0")
	return c
}

// putTariff211 has the 2.1.1 CPO put tariff T1 (INR, 18.5 per kWh), last
// updated at lastUpdated.
func putTariff211(t *testing.T, old *sim.CPO, lastUpdated string) {
	t.Helper()
	mustOK(t, "2.1.1 tariff PUT", old.PutTariff(ctx(t), "T1", map[string]any{"id": "T1", "currency": "INR",
		"elements":     []any{map[string]any{"price_components": []any{map[string]any{"type": "ENERGY", "price": 18.5, "step_size": 1}}}},
		"last_updated": lastUpdated}))
}

func ctx(t *testing.T) context.Context { return hubtest.Ctx(t, 60*time.Second) }

// platformOf returns the platform hosting a party.
func platformOf(t *testing.T, h *hubtest.Hub, cc, pid string) *party.Platform {
	t.Helper()
	p, err := h.Parties.FindByParty(context.Background(), "", cc, pid)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lastBody returns the body of the last request matching, decoded.
func lastBody(t *testing.T, p *sim.Platform, match func(sim.Request) bool) map[string]any {
	t.Helper()
	rs := p.Requests(match)
	if len(rs) == 0 {
		t.Fatalf("%s received no matching request", p.Name())
	}
	var m map[string]any
	if err := json.Unmarshal(rs[len(rs)-1].Body, &m); err != nil {
		t.Fatalf("%s: %v: %s", p.Name(), err, rs[len(rs)-1].Body)
	}
	return m
}

func waitFor(t *testing.T, p *sim.Platform, n int, method, part string) {
	t.Helper()
	if _, err := p.WaitFor(ctx(t), n, sim.PathHas(method, part)); err != nil {
		t.Fatal(err)
	}
}

// location211 is a 2.1.1 location of an Indian CPO.
func location211(id, lastUpdated string) map[string]any {
	return map[string]any{
		"id": id, "type": "ON_STREET", "name": "Old Town " + id, "address": "Main Street 1", "city": "Pune",
		"postal_code": "411001", "country": "IND",
		"coordinates": map[string]any{"latitude": "18.520400", "longitude": "73.856700"},
		"evses": []any{map[string]any{
			"uid": "E1", "evse_id": "IN*OLD*E1", "status": "AVAILABLE", "capabilities": []any{"REMOTE_START_STOP_CAPABLE", "RFID_READER"},
			"connectors": []any{map[string]any{"id": "1", "standard": "IEC_62196_T2", "format": "SOCKET", "power_type": "AC_3_PHASE",
				"voltage": 400, "amperage": 32, "tariff_id": "T1", "last_updated": lastUpdated}},
			"last_updated": lastUpdated,
		}},
		"last_updated": lastUpdated,
	}
}

// location221 is a 2.2.1 location with a GB/T connector next to a CCS one.
func location221(cc, pid, id, lastUpdated string) map[string]any {
	return map[string]any{
		"country_code": cc, "party_id": pid, "id": id, "publish": true, "name": "New Town " + id,
		"address": "Ring Road 2", "city": "Delhi", "postal_code": "110001", "country": "IND",
		"coordinates":  map[string]any{"latitude": "28.613900", "longitude": "77.209000"},
		"parking_type": "ALONG_MOTORWAY", "time_zone": "Asia/Kolkata",
		"evses": []any{map[string]any{
			"uid": "E1", "status": "AVAILABLE", "capabilities": []any{"REMOTE_START_STOP_CAPABLE", "PED_TERMINAL"},
			"connectors": []any{
				map[string]any{"id": "1", "standard": "IEC_62196_T2_COMBO", "format": "CABLE", "power_type": "DC",
					"max_voltage": 920, "max_amperage": 200, "max_electric_power": 150000, "tariff_ids": []any{"FAST", "NIGHT"}, "last_updated": lastUpdated},
				map[string]any{"id": "2", "standard": "GBT_DC", "format": "CABLE", "power_type": "DC",
					"max_voltage": 750, "max_amperage": 250, "last_updated": lastUpdated},
			},
			"last_updated": lastUpdated,
		}},
		"last_updated": lastUpdated,
	}
}

func mustOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func bodyOf(r *ocpiclient.Response) string {
	if r == nil {
		return "no response"
	}
	return string(r.Body)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
