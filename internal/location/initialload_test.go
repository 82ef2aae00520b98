package location_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/tariff"
)

// loadConfig sets the initial load's pace for a test hub.
func loadConfig(batch int, pace, delay time.Duration, off bool) func(*hubtest.Options) {
	return func(o *hubtest.Options) {
		o.Config = func(c *app.Config) {
			c.InitialLoadBatch, c.InitialLoadPace, c.InitialLoadDelay, c.NoInitialLoad = batch, pace, delay, off
			c.SyncInterval = 0
		}
	}
}

// publish stores n locations of the CPO NL/CP1 (and tariff T1) through the
// location service, as the CPO's pushes would.
func publish(t *testing.T, ctx context.Context, h *hubtest.Hub, n int) {
	t.Helper()
	cpo, err := h.Parties.FindByParty(ctx, party.RoleCPO, "NL", "CP1")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(hubtest.Tariff("NL", "CP1", "T1", hubtest.Stamp(0)))
	if _, _, err := h.Tariffs.Put(ctx, tariff.Change{PlatformID: cpo.ID}, tariff.Ref{CountryCode: "NL", PartyID: "CP1", ID: "T1"}, raw); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("L%04d", i)
		raw, _ := json.Marshal(locationJSON("NL", "CP1", id, "12.97160", "77.59460", hubtest.Stamp(i), "E1:AVAILABLE"))
		if _, err := h.Locations.Put(ctx, location.Change{PlatformID: cpo.ID}, location.Ref{CountryCode: "NL", PartyID: "CP1", LocationID: id}, raw); err != nil {
			t.Fatalf("location %s: %v", id, err)
		}
	}
}

// cpoOnly starts the CPO NL/CP1 and registers it.
func cpoOnly(t *testing.T, h *hubtest.Hub) {
	t.Helper()
	hubtest.Add(t, h, sim.StartCPO, "CPO One", "NL", "CP1")
}

// lateEMSP starts an eMSP and registers it with the hub.
func lateEMSP(t *testing.T, h *hubtest.Hub) (*sim.EMSP, int64) {
	t.Helper()
	e := hubtest.Add(t, h, sim.StartEMSP, "eMSP Late", "FR", "LAT")
	p, err := h.Parties.FindByParty(context.Background(), party.RoleEMSP, "FR", "LAT")
	if err != nil {
		t.Fatal(err)
	}
	return e, p.ID
}

// TestInitialLoadLateEMSP: an eMSP that registers after 1 000 locations, a
// tariff and other parties exist receives every one of them (observation 2),
// once each, in steps of at most one batch with the pace between them.
func TestInitialLoadLateEMSP(t *testing.T) {
	// Not parallel with the package's other tests: a thousand locations
	// published and loaded on each engine starve them on a busy machine
	// under the race detector (as TestStatusStorm).
	const n, batch, pace = 1000, 100, 150 * time.Millisecond
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		// Only the CPO is registered while it publishes (no broadcast work
		// competes), then the late eMSP.
		cpoOnly(t, h)
		publish(t, hubtest.Ctx(t, 10*time.Minute), h, n)
		ctx := hubtest.Ctx(t, 4*time.Minute)
		// Every change is expanded before the eMSP registers: a change
		// still waiting for its expansion when the eMSP is connected goes
		// to it as well (a second PUT of the same state), which is not
		// what this test counts.
		if _, err := h.Hub.Expand(ctx); err != nil {
			t.Fatal(err)
		}
		registered := time.Now()
		late, id := lateEMSP(t, h)
		waitState(t, ctx, late.Platform, "the initial load", func() bool {
			return late.LocationCount() == n && late.Tariff("NL", "CP1", "T1") != nil
		})
		t.Logf("%d locations loaded %v after the registration began", n, time.Since(registered).Round(10*time.Millisecond))
		for _, who := range [][3]string{{"CPO", "NL", "CP1"}, {"EMSP", "IN", "OHE"}} {
			if _, ok := late.ClientInfo(who[0], who[1], who[2]); !ok {
				t.Errorf("the late eMSP got no ClientInfo of %s %s/%s", who[0], who[1], who[2])
			}
		}
		if _, ok := late.ClientInfo("EMSP", "FR", "LAT"); ok {
			t.Error("the late eMSP got its own ClientInfo")
		}
		puts := late.Requests(sim.PathHas(http.MethodPut, "/emsp/locations/NL/CP1/"))
		seen := map[string]int{}
		for _, r := range puts {
			seen[r.Path]++
		}
		for p, c := range seen {
			if c != 1 {
				t.Errorf("%s was sent %d times", p, c)
			}
		}
		// Paced: the load's pushes were queued in steps of at most one
		// batch, each step at least the pace after the one before.
		var created []int64
		rows, err := h.DB.Read().Query(ctx, "SELECT created_at FROM hub_push WHERE platform_id = $1 AND module = 'locations' ORDER BY created_at", id)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var c int64
			if err := rows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			created = append(created, c)
		}
		rows.Close()
		if len(created) != n {
			t.Fatalf("%d location pushes queued for the late eMSP, want %d", len(created), n)
		}
		window := (pace / 2).Microseconds()
		for i := range created {
			j, _ := slices.BinarySearch(created, created[i]+window)
			if j-i > batch {
				t.Fatalf("%d pushes queued within %v: not paced (batch %d)", j-i, pace/2, batch)
			}
		}
		loads, err := h.Hub.InitialLoads(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		// ClientInfo: the CPO and the hub's own eMSP.
		want := []hub.LoadProgress{{Module: "hubclientinfo", Sent: 2, Done: true}, {Module: "locations", Sent: n, Done: true}, {Module: "tariffs", Sent: 1, Done: true}}
		if fmt.Sprint(loads) != fmt.Sprint(want) {
			t.Errorf("initial loads %+v, want %+v", loads, want)
		}
	}, loadConfig(batch, pace, 10*time.Millisecond, false))
}

// TestInitialLoadResumes: the load's progress is in the database; a hub
// restarted half-way carries on after the last committed step, sending
// nothing twice and skipping nothing.
func TestInitialLoadResumes(t *testing.T) {
	t.Parallel()
	const n, batch = 250, 100
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpoOnly(t, h)
		publish(t, hubtest.Ctx(t, 5*time.Minute), h, n)
		ctx := hubtest.Ctx(t, 3*time.Minute)
		// Every change is expanded before the eMSP registers, as in
		// TestInitialLoadPaced: one still waiting for its expansion would go
		// to the eMSP as well, a second PUT this test would count (CI
		// counted 252 for 250 on a loaded machine).
		if _, err := h.Hub.Expand(ctx); err != nil {
			t.Fatal(err)
		}
		// The job waits an hour: the test drives the steps itself.
		late, id := lateEMSP(t, h)
		step := func() {
			t.Helper()
			if _, _, err := h.Hub.LoadStep(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		sent := func(module string) int64 {
			t.Helper()
			loads, err := h.Hub.InitialLoads(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range loads {
				if l.Module == module {
					return l.Sent
				}
			}
			t.Fatalf("no initial load of %s in %+v", module, loads)
			return 0
		}
		step() // ClientInfo
		step() // tariffs
		step() // the first batch of locations
		if got := sent("locations"); got != batch {
			t.Fatalf("after one step %d locations sent, want %d", got, batch)
		}
		h.Restart(t)
		for sent("locations") < n {
			if err := ctx.Err(); err != nil {
				t.Fatalf("the load stopped at %d of %d", sent("locations"), n)
			}
			step()
		}
		waitState(t, ctx, late.Platform, "every location", func() bool { return late.LocationCount() == n })
		if got := len(late.Requests(sim.PathHas(http.MethodPut, "/emsp/locations/NL/CP1/"))); got != n {
			t.Errorf("%d location PUTs for %d locations", got, n)
		}
		if more, _, err := h.Hub.LoadStep(ctx, id); err != nil || more {
			t.Errorf("a finished load has more to do (%v, %v)", more, err)
		}
	}, loadConfig(batch, 10*time.Millisecond, time.Hour, false))
}

// TestInitialLoadOff: with the initial load turned off, a new receiver gets
// no load planned (the operator's choice; it pulls instead).
func TestInitialLoadOff(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		setup(t, h)
		ctx := hubtest.Ctx(t, time.Minute)
		publish(t, ctx, h, 3)
		_, id := lateEMSP(t, h)
		loads, err := h.Hub.InitialLoads(ctx, id)
		if err != nil || len(loads) != 0 {
			t.Errorf("initial loads %+v (%v), want none", loads, err)
		}
		if more, _, err := h.Hub.LoadStep(ctx, id); err != nil || more {
			t.Errorf("a load step with the load off: more %v, %v", more, err)
		}
	}, loadConfig(0, 0, 0, true))
}

// TestInitialLoadOnGainedReceiver: an eMSP registered without a locations
// receiver gets the tariffs that exist but no locations; when a credentials
// update adds the receiver, it gets the locations that exist; a later update
// that changes nothing loads nothing again.
func TestInitialLoadOnGainedReceiver(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		setup(t, h)
		ctx := hubtest.Ctx(t, 2*time.Minute)
		publish(t, ctx, h, 5)
		e := hubtest.Add(t, h, sim.StartEMSP, "eMSP Later", "FR", "LAT", func(o *sim.Options) { o.OmitEndpoints = []string{"locations"} })
		p, err := h.Parties.FindByParty(ctx, party.RoleEMSP, "FR", "LAT")
		if err != nil {
			t.Fatal(err)
		}
		waitState(t, ctx, e.Platform, "the tariff", func() bool { return e.Tariff("NL", "CP1", "T1") != nil })
		hubtest.Eventually(t, ctx, "the first load to finish", func() bool {
			loads, err := h.Hub.InitialLoads(ctx, p.ID)
			return err == nil && len(loads) == 2 && loads[0].Done && loads[1].Done
		})
		if n := e.LocationCount(); n != 0 {
			t.Fatalf("an eMSP without a locations receiver got %d locations", n)
		}
		e.SetOmitEndpoints()
		if _, err := e.UpdateCredentials(ctx); err != nil {
			t.Fatal(err)
		}
		waitState(t, ctx, e.Platform, "the locations", func() bool { return e.LocationCount() == 5 })
		hubtest.Eventually(t, ctx, "the second load to finish", func() bool {
			loads, err := h.Hub.InitialLoads(ctx, p.ID)
			return err == nil && len(loads) == 3 && loads[0].Done && loads[1].Done && loads[2].Done
		})
		if _, err := e.UpdateCredentials(ctx); err != nil {
			t.Fatal(err)
		}
		loads, err := h.Hub.InitialLoads(ctx, p.ID)
		if err != nil || len(loads) != 3 || !loads[0].Done || !loads[1].Done || !loads[2].Done {
			t.Errorf("an update that adds nothing restarted a load: %+v %v", loads, err)
		}
		if n := len(e.Requests(sim.PathHas(http.MethodPut, "/emsp/tariffs/NL/CP1/T1"))); n != 1 {
			t.Errorf("the tariff was sent %d times, want once", n)
		}
	}, loadConfig(100, 20*time.Millisecond, 10*time.Millisecond, false))
}
