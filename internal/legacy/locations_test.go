package legacy_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestLegacyLocations: a 2.1.1 CPO's location reaches a 2.2.1 eMSP in
// 2.2.1 (owner from its credentials, renamed fields), a 2.1.1 eMSP in
// 2.1.1 and a 2.0 eMSP in 2.0; a 2.2.1 CPO's location reaches the legacy
// eMSPs without what they cannot express (logged and counted); EVSE PATCHes
// and tariffs follow; legacy eMSPs pull the directory in their version.
func TestLegacyLocations(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		partners := startCast(t, h, oldCPO|newCPO|emsp221|emsp211|emsp20)
		old, neu, e221, e211, e20 := partners.old, partners.neu, partners.e22, partners.e21, partners.e20
		for _, tc := range []struct {
			cc, pid, version string
			base64           bool
		}{{"IN", "OLD", "2.1.1", false}, {"NL", "E21", "2.1.1", false}, {"FR", "E20", "2.0", false}, {"DE", "E22", "2.2.1", true}} {
			p := platformOf(t, h, tc.cc, tc.pid)
			if p.Version != tc.version || p.TokenBase64 != tc.base64 || len(p.Roles) != 1 {
				t.Errorf("%s/%s: version %s, token_base64 %v, roles %v", tc.cc, tc.pid, p.Version, p.TokenBase64, p.Roles)
			}
		}

		// The 2.1.1 CPO pushes a location.
		mustOK(t, "2.1.1 PUT", old.PutLocation(ctx(t), "LOC1", location211("LOC1", "2026-01-01T10:00:00Z")))
		waitFor(t, e221.Platform, 1, http.MethodPut, "/emsp/locations/IN/OLD/LOC1")
		waitFor(t, e211.Platform, 1, http.MethodPut, "/emsp/locations/IN/OLD/LOC1")
		waitFor(t, e20.Platform, 1, http.MethodPut, "/emsp/locations/IN/OLD/LOC1")
		got := e221.Location("IN", "OLD", "LOC1")
		conn := got["evses"].([]any)[0].(map[string]any)["connectors"].([]any)[0].(map[string]any)
		if got["country_code"] != "IN" || got["party_id"] != "OLD" || got["publish"] != true || got["parking_type"] != "ON_STREET" ||
			got["time_zone"] != "Asia/Kolkata" || conn["max_voltage"] != float64(400) || conn["tariff_ids"].([]any)[0] != "T1" {
			t.Errorf("2.2.1 eMSP got %v", got)
		}
		got = e211.Location("IN", "OLD", "LOC1")
		if got["type"] != "ON_STREET" || got["country_code"] != nil || got["publish"] != nil || got["last_updated"] != "2026-01-01T10:00:00Z" {
			t.Errorf("2.1.1 eMSP got %v", got)
		}
		got = e20.Location("IN", "OLD", "LOC1")
		conn = got["evses"].([]any)[0].(map[string]any)["connectors"].([]any)[0].(map[string]any)
		if got["last_updated"] != nil || conn["status"] != "AVAILABLE" || conn["voltage"] != float64(400) {
			t.Errorf("2.0 eMSP got %v", got)
		}

		// A status change: a PATCH in each version, a 2.1.1 PATCH without
		// last_updated included.
		mustOK(t, "2.1.1 PATCH", old.PatchEVSE(ctx(t), "LOC1", "E1", map[string]any{"status": "CHARGING"}))
		waitFor(t, e221.Platform, 1, http.MethodPatch, "/emsp/locations/IN/OLD/LOC1/E1")
		waitFor(t, e211.Platform, 1, http.MethodPatch, "/emsp/locations/IN/OLD/LOC1/E1")
		waitFor(t, e20.Platform, 1, http.MethodPatch, "/emsp/locations/IN/OLD/LOC1/E1")
		if p := lastBody(t, e221.Platform, sim.PathHas(http.MethodPatch, "/LOC1/E1")); p["status"] != "CHARGING" || p["last_updated"] == nil {
			t.Errorf("2.2.1 PATCH %v", p)
		}
		if p := lastBody(t, e20.Platform, sim.PathHas(http.MethodPatch, "/LOC1/E1")); p["status"] != "CHARGING" {
			t.Errorf("2.0 PATCH %v", p)
		}

		// A 2.2.1 CPO's location: the GB/T connector, the second tariff,
		// max_electric_power and PED_TERMINAL do not reach legacy eMSPs.
		mustOK(t, "2.2.1 PUT", neu.PutLocation(ctx(t), "LOC9", location221("IN", "NEW", "LOC9", "2026-01-02T10:00:00.500Z")))
		waitFor(t, e211.Platform, 1, http.MethodPut, "/emsp/locations/IN/NEW/LOC9")
		waitFor(t, e20.Platform, 1, http.MethodPut, "/emsp/locations/IN/NEW/LOC9")
		got = e211.Location("IN", "NEW", "LOC9")
		evse := got["evses"].([]any)[0].(map[string]any)
		conns := evse["connectors"].([]any)
		if got["type"] != "OTHER" || len(conns) != 1 || conns[0].(map[string]any)["tariff_id"] != "FAST" ||
			conns[0].(map[string]any)["max_electric_power"] != nil || strings.Contains(toJSON(evse["capabilities"]), "PED_TERMINAL") ||
			got["last_updated"] != "2026-01-02T10:00:00Z" {
			t.Errorf("2.1.1 eMSP got %v", got)
		}
		metrics := scrape(t, h)
		for _, want := range []string{
			`ocpihub_legacy_fields_dropped_total{field="evses[].connectors[].standard",module="locations",version="2.1.1"}`,
			`ocpihub_legacy_fields_dropped_total{field="evses[].connectors[].tariff_ids",module="locations",version="2.0"}`,
			`ocpihub_legacy_requests_total{direction="in",party="IN/OLD",version="2.1.1"}`,
			`ocpihub_legacy_requests_total{direction="out",party="NL/E21",version="2.1.1"}`,
		} {
			if !strings.Contains(metrics, want) {
				t.Errorf("metrics lack %s", want)
			}
		}

		// An unpublished location does not reach legacy eMSPs (they cannot
		// restrict it), nor do changes of its EVSEs.
		hidden := location221("IN", "NEW", "LOC8", "2026-01-02T10:00:00Z")
		hidden["publish"] = false
		mustOK(t, "unpublished PUT", neu.PutLocation(ctx(t), "LOC8", hidden))
		mustOK(t, "unpublished PATCH", neu.PatchEVSE(ctx(t), "LOC8", "E1", map[string]any{"status": "CHARGING", "last_updated": "2026-01-02T11:00:00Z"}))
		waitFor(t, e221.Platform, 1, http.MethodPatch, "/emsp/locations/IN/NEW/LOC8/E1")
		e211ID := platformOf(t, h, "NL", "E21").ID
		waitOutbox(t, h, e211ID, "IN/NEW/LOC8", 2, "skipped")
		if n := len(e211.Requests(sim.PathHas("", "/LOC8"))); n != 0 {
			t.Errorf("the 2.1.1 eMSP got %d requests about an unpublished location", n)
		}

		// Tariffs: a 2.1.1 tariff reaches the 2.2.1 eMSP owned by the CPO;
		// a 2.1.1 PATCH (2.2.1 has none) is applied and sent on whole.
		tariff := map[string]any{"id": "T1", "currency": "INR", "elements": []any{map[string]any{
			"price_components": []any{map[string]any{"type": "ENERGY", "price": 18.5, "step_size": 1}}}},
			"last_updated": "2026-01-01T10:00:00Z"}
		mustOK(t, "2.1.1 tariff PUT", old.PutTariff(ctx(t), "T1", tariff))
		waitFor(t, e221.Platform, 1, http.MethodPut, "/emsp/tariffs/IN/OLD/T1")
		if got := e221.Tariff("IN", "OLD", "T1"); got["country_code"] != "IN" || got["currency"] != "INR" {
			t.Errorf("2.2.1 eMSP tariff %v", got)
		}
		resp, err := old.Push(ctx(t), "tariffs", http.MethodPatch, map[string]any{"tariff_alt_url": "https://old.example/t1"}, nil, "T1")
		if err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
			t.Fatalf("2.1.1 tariff PATCH: %v %s", err, bodyOf(resp))
		}
		// Pushes of one object may be coalesced: wait for the last state.
		for _, e := range []*sim.EMSP{e221, e20} {
			if err := e.Until(ctx(t), func() bool { return e.Tariff("IN", "OLD", "T1")["tariff_alt_url"] != nil }); err != nil {
				t.Fatal(err)
			}
		}
		if got := e221.Tariff("IN", "OLD", "T1"); got["tariff_alt_url"] != "https://old.example/t1" || got["currency"] != "INR" {
			t.Errorf("patched tariff %v", got)
		}
		if b := lastBody(t, e20.Platform, sim.PathHas(http.MethodPut, "/emsp/tariffs/IN/OLD/T1")); !strings.Contains(toJSON(b), `"price":"18.5"`) {
			t.Errorf("2.0 tariff %v", b)
		}

		// The legacy eMSPs pull the directory in their version.
		var list []map[string]any
		base, _ := e211.HubEndpoint("locations", "")
		if _, err := e211.Do(ctx(t), http.MethodGet, base, nil, &list); err != nil || len(list) != 2 {
			t.Fatalf("2.1.1 directory: %v %v", err, list)
		}
		for _, l := range list {
			if l["type"] == nil || l["country_code"] != nil {
				t.Errorf("2.1.1 directory item %v", l)
			}
		}
		var one map[string]any
		if _, err := e20.Do(ctx(t), http.MethodGet, base2(t, e20.Platform, "locations")+"/LOC1/E1", nil, &one); err != nil || one["uid"] != "E1" || one["last_updated"] != nil {
			t.Errorf("2.0 EVSE: %v %v", err, one)
		}

		// The hub's copy, for the 2.1.1 CPO to check, in 2.1.1.
		var mine map[string]any
		recv, _ := old.HubEndpoint("locations", "")
		if _, err := old.Do(ctx(t), http.MethodGet, recv+"/IN/OLD/LOC1", nil, &mine); err != nil || mine["type"] != "ON_STREET" {
			t.Errorf("2.1.1 CPO GET: %v %v", err, mine)
		}
		// Another party's URL is not the CPO's to touch.
		if resp, _ := old.Raw(ctx(t), http.MethodPut, recv+"/IN/NEW/LOC9", location211("LOC9", "2026-01-03T00:00:00Z"), nil); resp == nil || resp.HTTPStatus != http.StatusNotFound {
			t.Errorf("PUT on another CPO's location: %s", bodyOf(resp))
		}

		// The hub pulls the 2.1.1 CPO's locations sender (the recovery
		// path): its objects are read as 2.1.1 and owned by its party.
		mustOK(t, "own directory", old.SetLocation(location211("LOC5", "2026-01-05T10:00:00Z")))
		res, err := h.Syncer.Sync(ctx(t), "locations", platformOf(t, h, "IN", "OLD").ID, time.Time{})
		// (LOC1 may count as changed too: the hub stamped the 2.1.1 PATCH
		// that came without last_updated, the CPO's copy is not stamped.)
		if err != nil || res.Invalid != 0 || res.Received != 2 || res.Changed < 1 {
			t.Fatalf("pull from the 2.1.1 CPO: %+v %v", res, err)
		}
		waitFor(t, e221.Platform, 1, http.MethodPut, "/emsp/locations/IN/OLD/LOC5")

		for _, p := range []*sim.Platform{e211.Platform, old.Platform} {
			hubtest.CheckLegacyRequests(t, p)
		}
	})
}

func base2(t *testing.T, p *sim.Platform, module string) string {
	t.Helper()
	u, ok := p.HubEndpoint(module, "")
	if !ok {
		t.Fatalf("%s: no %s endpoint at the hub", p.Name(), module)
	}
	return u
}

func scrape(t *testing.T, h *hubtest.Hub) string {
	t.Helper()
	resp, err := http.Get(h.PublicURL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// waitOutbox waits until a platform's outbox holds n pushes of an object,
// all in state.
func waitOutbox(t *testing.T, h *hubtest.Hub, platformID int64, key string, n int, state string) {
	t.Helper()
	c := ctx(t)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		rows, err := h.Hub.Outbox(c, platformID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			if r.ObjectKey == key {
				got = append(got, r.State)
			}
		}
		if len(got) == n && !slices.ContainsFunc(got, func(s string) bool { return s != state }) {
			return
		}
		select {
		case <-c.Done():
			t.Fatalf("outbox of platform %d for %s: %v, want %d %s", platformID, key, got, n, state)
		case <-tick.C:
		}
	}
}
