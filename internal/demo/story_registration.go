package demo

import (
	"context"
	"fmt"
	"strconv"

	"github.com/ocpihub/ocpihub/internal/party"
)

// registrationStory onboards every partner the way a real one is onboarded:
// the operator creates a token A bound to the partner's party, the partner
// discovers the hub with it and POSTs its credentials, the hub reads the
// partner's endpoints with token B and answers with token C.
func registrationStory() Story {
	return Story{Name: "Registration", Run: func(ctx context.Context, env *Env, tl *Timeline) error {
		ps := env.Hub.Parties
		for _, p := range env.Parties {
			ref := party.PartyRef{Role: party.Role(p.Role), CountryCode: p.CountryCode, PartyID: p.PartyID}
			inv, err := ps.Invite(ctx, p.Name(), 0, false, ref)
			if err != nil {
				return fmt.Errorf("invite %s: %w", p.Name(), err)
			}
			tl.Step("operator invites %s: a one-time token A bound to %s %s-%s", p.Name(), p.Role, p.CountryCode, p.PartyID)
			if err := p.Register(ctx, inv.VersionsURL, inv.Token); err != nil {
				return fmt.Errorf("%s registers: %w", p.Name(), err)
			}
			pl, err := ps.FindByParty(ctx, ref.Role, ref.CountryCode, ref.PartyID)
			if err != nil {
				return err
			}
			if pl.Status != party.StatusConnected {
				return fmt.Errorf("%s is %s after registering, want CONNECTED", p.Name(), pl.Status)
			}
			tl.Step("%s registered: credentials exchanged (token A → B → C), OCPI %s, %d endpoints, %s",
				p.Name(), pl.Version, len(pl.Endpoints), pl.Status)
			tl.Link(p.Name(), env.ConsoleURL("/parties/"+strconv.FormatInt(pl.ID, 10)))
		}
		// Token A is single-use: the partner now calls with token C only.
		for _, p := range env.Parties {
			if _, err := p.CallHub(ctx, "GET", "credentials", "", "", nil, nil); err != nil {
				return fmt.Errorf("%s calls the hub with token C: %w", p.Name(), err)
			}
		}
		tl.Step("all %d partners call the hub with their token C", len(env.Parties))
		return nil
	}}
}
