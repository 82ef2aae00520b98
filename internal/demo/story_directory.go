package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// directoryStory publishes locations: the CPOs push them once, the hub
// stores them and broadcasts them to every eMSP; an EVSE status change
// follows the same way; a driver finds the nearest charger through the
// public search.
func directoryStory() Story {
	return Story{Name: "Directory broadcast", Needs: []string{"Registration"}, Run: func(ctx context.Context, env *Env, tl *Timeline) error {
		if len(env.CPOs) < 2 {
			return fmt.Errorf("the directory story needs two CPOs")
		}
		now := env.Hub.Clock.Now()
		type site struct {
			cpo            *sim.CPO
			id, name, city string
			lat, lon       string
			statuses       []string
		}
		sites := []site{
			{env.CPOs[0], "BLR01", "Koramangala Hub", "Bengaluru", "12.935242", "77.624480", []string{"AVAILABLE", "AVAILABLE", "CHARGING"}},
			{env.CPOs[0], "BOM01", "Bandra Kurla Complex", "Mumbai", "19.066245", "72.868393", []string{"CHARGING", "CHARGING"}},
			{env.CPOs[0], "DEL01", "Aerocity", "New Delhi", "28.548764", "77.121262", []string{"AVAILABLE", "OUTOFORDER"}},
			{env.CPOs[1], "MAA01", "T. Nagar", "Chennai", "13.041800", "80.233900", []string{"AVAILABLE"}},
			{env.CPOs[1], "HYD01", "HITEC City", "Hyderabad", "17.447340", "78.376230", []string{"INOPERATIVE", "AVAILABLE"}},
		}
		for _, s := range sites {
			cc, pid := s.cpo.Party()
			loc := sim.SampleLocation(cc, pid, s.id, s.name, s.city, s.lat, s.lon, now, s.statuses...)
			if err := s.cpo.PutLocation(ctx, s.id, loc); err != nil {
				return fmt.Errorf("%s pushes %s: %w", s.cpo.Name(), s.id, err)
			}
			tl.Step("%s pushes location %s (%s, %s) with %s", s.cpo.Name(), s.id, s.name, s.city, plural(len(s.statuses), "EVSE"))
		}
		for _, e := range env.EMSPs {
			// Wait for each location, not for a number of PUTs: an eMSP
			// that joined moments ago may also get some of them from its
			// initial load.
			for _, s := range sites {
				cc, pid := s.cpo.Party()
				if _, err := e.WaitFor(ctx, 1, sim.PathHas(http.MethodPut, "/"+cc+"/"+pid+"/"+s.id)); err != nil {
					return fmt.Errorf("%s did not receive location %s: %w", e.Name(), s.id, err)
				}
				if e.Location(cc, pid, s.id) == nil {
					return fmt.Errorf("%s lacks %s-%s %s", e.Name(), cc, pid, s.id)
				}
			}
			tl.Step("%s received all %d locations (PUT to its locations receiver)", e.Name(), len(sites))
		}

		// A status change travels as a PATCH of one EVSE.
		cpo := env.CPOs[0]
		cc, pid := cpo.Party()
		evse := "BLR01-E1"
		patches := map[*sim.EMSP]int{}
		for _, e := range env.EMSPs {
			patches[e] = len(e.Requests(sim.PathHas(http.MethodPatch, "/"+evse)))
		}
		if err := cpo.PatchEVSE(ctx, "BLR01", evse, map[string]any{"status": "CHARGING", "last_updated": ocpi.NewDateTime(env.Hub.Clock.Now())}); err != nil {
			return fmt.Errorf("%s patches %s: %w", cpo.Name(), evse, err)
		}
		tl.Step("%s reports EVSE %s CHARGING (PATCH)", cpo.Name(), evse)
		// Each eMSP ends up holding the new status. It usually comes as the
		// PATCH; for an eMSP whose initial load was still queuing the
		// location, the load's PUT of the whole location (read when it is
		// sent, so it carries CHARGING) supersedes the PATCH: the latest
		// state either way, never an older one.
		var byPut []string
		for _, e := range env.EMSPs {
			if err := e.Until(ctx, func() bool { return e.EVSEStatus(cc, pid, "BLR01", evse) == "CHARGING" }); err != nil {
				return fmt.Errorf("%s was not told of %s (holds it as %q): %w", e.Name(), evse, e.EVSEStatus(cc, pid, "BLR01", evse), err)
			}
			if len(e.Requests(sim.PathHas(http.MethodPatch, "/"+evse))) == patches[e] {
				byPut = append(byPut, e.Name())
			}
		}
		if len(byPut) > 0 {
			tl.Step("every eMSP shows %s CHARGING (%s by the PUT of its initial load)", evse, strings.Join(byPut, ", "))
		} else {
			tl.Step("every eMSP shows %s CHARGING", evse)
		}

		// A driver near Koramangala searches without a token.
		resp, err := http.Get(env.Hub.PublicURL() + "/api/locations?lat=12.97160&lon=77.59460&radius=10000&available=true")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var found struct {
			Data []ocpi.Location `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&found); err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("driver search: HTTP %d %v", resp.StatusCode, err)
		}
		if len(found.Data) != 1 || found.Data[0].ID != "BLR01" {
			var ids []string
			for _, l := range found.Data {
				ids = append(ids, l.ID)
			}
			return fmt.Errorf("driver search near Bengaluru found %v, want BLR01", ids)
		}
		tl.Step("a driver near MG Road searches (GET /api/locations, no token): %s, %s", found.Data[0].Name, found.Data[0].City)
		tl.Link("directory map", env.ConsoleURL("/directory"))
		tl.Link(found.Data[0].Name, env.ConsoleURL("/directory/"+cc+"/"+pid+"/BLR01"))
		return nil
	}}
}

// plural writes "1 EVSE", "3 EVSEs".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
