package demo

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// hubClientInfoStory shows HubClientInfo: every eMSP pulls the list of
// parties reachable through the hub, then the operator suspends a CPO and
// resumes it, and every connected platform is pushed the change.
func hubClientInfoStory() Story {
	return Story{Name: "Hub client info", Needs: []string{"Registration"}, Run: func(ctx context.Context, env *Env, tl *Timeline) error {
		for _, e := range env.EMSPs {
			var list []sim.ClientInfo
			if _, err := e.CallHub(ctx, http.MethodGet, "hubclientinfo", "", "?limit=100", nil, &list); err != nil {
				return fmt.Errorf("%s pulls hubclientinfo: %w", e.Name(), err)
			}
			for _, p := range env.Parties {
				// OCPI 2.2.1 has no PTP role: its partners see the PTP as OTHER.
				if !listed(list, string(party.RoleFor(e.HubVersion(), party.Role(p.Role))), p.CountryCode, p.PartyID, party.ClientConnected) {
					return fmt.Errorf("%s does not see %s %s-%s CONNECTED in hubclientinfo", e.Name(), p.Role, p.CountryCode, p.PartyID)
				}
			}
			tl.Step("%s pulls hubclientinfo: %d parties, all CONNECTED", e.Name(), len(list))
		}

		cpo := env.Parties[len(env.CPOs)-1] // the second CPO
		pl, err := env.Hub.Parties.FindByParty(ctx, party.RoleCPO, cpo.CountryCode, cpo.PartyID)
		if err != nil {
			return err
		}
		for _, step := range []struct {
			verb, status string
			do           func(context.Context, int64) error
		}{
			{"suspends", clientinfo.Suspended, env.Hub.Parties.Suspend},
			{"resumes", party.ClientConnected, env.Hub.Parties.Resume},
		} {
			before := map[*sim.Platform]int{}
			for _, p := range env.Parties {
				before[p.Platform] = len(p.Requests(pushed(cpo, step.status)))
			}
			if err := step.do(ctx, pl.ID); err != nil {
				return fmt.Errorf("operator %s %s: %w", step.verb, cpo.Name(), err)
			}
			tl.Step("operator %s %s", step.verb, cpo.Name())
			for _, p := range env.Parties {
				if p.Platform == cpo.Platform {
					continue
				}
				if _, err := p.WaitFor(ctx, before[p.Platform]+1, pushed(cpo, step.status)); err != nil {
					return fmt.Errorf("%s was not pushed %s %s: %w", p.Name(), cpo.Name(), step.status, err)
				}
			}
			tl.Step("every other partner is pushed %s-%s %s (PUT hubclientinfo)", cpo.CountryCode, cpo.PartyID, step.status)
		}
		tl.Link("parties", env.ConsoleURL("/parties"))
		return nil
	}}
}

func listed(list []sim.ClientInfo, role, cc, pid, status string) bool {
	for _, ci := range list {
		if ci.Role == role && strings.EqualFold(ci.CountryCode, cc) && strings.EqualFold(ci.PartyID, pid) && ci.Status == status {
			return true
		}
	}
	return false
}

// pushed matches a hubclientinfo PUT about p with status.
func pushed(p Partner, status string) func(sim.Request) bool {
	return func(r sim.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/clientinfo/"+p.CountryCode+"/"+p.PartyID) &&
			strings.Contains(string(r.Body), `"status":"`+status+`"`)
	}
}
