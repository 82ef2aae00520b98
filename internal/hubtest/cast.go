package hubtest

import (
	"log/slog"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// Cast is the set of partners most tests of a hub need, registered in this
// order: CPO One (CPO's country/CP1), CPO Two (IN/CP2, only in Cast), eMSP One
// (DE/EM1) and eMSP Two (FR/EM2). Packages embed it in their own bundle of
// fixtures, so every package starts the same partners the same way.
type Cast struct {
	CPO   *sim.CPO
	CPO2  *sim.CPO // nil in a Trio
	EMSP  *sim.EMSP
	EMSP2 *sim.EMSP
}

// Cast registers two CPOs (IN/CP1, IN/CP2) and two eMSPs (DE/EM1, FR/EM2).
func (h *Hub) Cast(t testing.TB) Cast {
	t.Helper()
	return Cast{
		CPO:   Add(t, h, sim.StartCPO, "CPO One", "IN", "CP1"),
		CPO2:  Add(t, h, sim.StartCPO, "CPO Two", "IN", "CP2"),
		EMSP:  Add(t, h, sim.StartEMSP, "eMSP One", "DE", "EM1"),
		EMSP2: Add(t, h, sim.StartEMSP, "eMSP Two", "FR", "EM2"),
	}
}

// Trio registers one CPO (cpoCountry/CP1) and two eMSPs (DE/EM1, FR/EM2).
func (h *Hub) Trio(t testing.TB, cpoCountry string) Cast {
	t.Helper()
	return Cast{
		CPO:   Add(t, h, sim.StartCPO, "CPO One", cpoCountry, "CP1"),
		EMSP:  Add(t, h, sim.StartEMSP, "eMSP One", "DE", "EM1"),
		EMSP2: Add(t, h, sim.StartEMSP, "eMSP Two", "FR", "EM2"),
	}
}

// StartSim starts a simulated partner with one of sim's constructors
// (sim.StartCPO, sim.StartEMSP, ptpsim.Start…), logging like the test
// hubs; it is closed when the test ends, and not registered with any hub.
func StartSim[P interface{ Close() }](t testing.TB, start func(string, string, string, *slog.Logger, ...func(*sim.Options)) (P, error), name, cc, pid string, tweak ...func(*sim.Options)) P {
	t.Helper()
	p, err := start(name, cc, pid, Logger(), tweak...)
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(p.Close)
	return p
}

// Add is StartSim, and then registers the partner with h.
func Add[P interface {
	partner
	Close()
}](t testing.TB, h *Hub, start func(string, string, string, *slog.Logger, ...func(*sim.Options)) (P, error), name, cc, pid string, tweak ...func(*sim.Options)) P {
	t.Helper()
	return AddTo(t, h.App, start, name, cc, pid, tweak...)
}

// AddTo is Add for a hub this package did not start (the benchmarks' own).
func AddTo[P interface {
	partner
	Close()
}](t testing.TB, a *app.App, start func(string, string, string, *slog.Logger, ...func(*sim.Options)) (P, error), name, cc, pid string, tweak ...func(*sim.Options)) P {
	t.Helper()
	p := StartSim(t, start, name, cc, pid, tweak...)
	register(t, a, p, false)
	return p
}

// FastPush is the configuration most module tests start from: the outbox
// retries after 20 ms, and no periodic sync runs behind the test's back.
func FastPush(c *app.Config) {
	c.PushBackoff = 20 * time.Millisecond
	c.SyncInterval = 0
}

// Configure returns an option that edits the configuration with FastPush
// and then edit (nil: FastPush alone), recording events when record is set.
func Configure(record bool, edit func(*app.Config)) func(*Options) {
	return func(o *Options) {
		if record {
			o.Events = NewRecorder()
		}
		o.Config = func(c *app.Config) {
			FastPush(c)
			if edit != nil {
				edit(c)
			}
		}
	}
}

// Tariff is the tariff tests put and price with: 18.50 INR per kWh, 18 %
// VAT, last updated at lastUpdated.
func Tariff(cc, pid, id, lastUpdated string) map[string]any {
	return map[string]any{"country_code": cc, "party_id": pid, "id": id, "currency": "INR", "last_updated": lastUpdated,
		"elements": []any{map[string]any{"price_components": []any{
			map[string]any{"type": "ENERGY", "price": "18.50", "vat": 18, "step_size": 1}}}}}
}

// Location is sim.LocationObject with one EVSE, E1, in status, and every
// last_updated set to lastUpdated: the object the tests of broadcasts and
// their recovery put and patch.
func Location(cc, pid, id, status, lastUpdated string) map[string]any {
	loc := sim.LocationObject(cc, pid, id, "E1")
	loc["last_updated"] = lastUpdated
	evse := loc["evses"].([]any)[0].(map[string]any)
	evse["status"], evse["last_updated"] = status, lastUpdated
	evse["connectors"].([]any)[0].(map[string]any)["last_updated"] = lastUpdated
	return loc
}
