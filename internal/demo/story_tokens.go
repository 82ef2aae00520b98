package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// tokensStory is real-time authorization: an eMSP pushes two RFID cards
// (whitelist NEVER: every use is asked of the eMSP), the hub forwards them
// to every CPO; a driver holds each card to a charger of the other CPO,
// which asks the hub to authorize it; the hub asks the eMSP and passes its
// answer back. A card nobody issued is unknown to the hub.
func tokensStory() Story {
	return Story{Name: "Token authorization", Needs: []string{"Directory broadcast"}, Run: func(ctx context.Context, env *Env, tl *Timeline) error {
		emsp := env.EMSPs[len(env.EMSPs)-1]
		cpo := env.CPOs[len(env.CPOs)-1]
		good := emsp.NewToken("RMI-RFID-0001", "RFID", "NEVER")
		lost := emsp.NewToken("RMI-RFID-0002", "RFID", "NEVER")
		lost["valid"] = false
		before := map[*sim.CPO]int{}
		for _, c := range env.CPOs {
			before[c] = len(c.Requests(sim.PathHas(http.MethodPut, "/cpo/tokens/")))
		}
		for _, tok := range []map[string]any{good, lost} {
			if _, err := emsp.PutToken(ctx, tok); err != nil {
				return fmt.Errorf("%s pushes %s: %w", emsp.Name(), tok["uid"], err)
			}
		}
		tl.Step("%s pushes RFID cards %s (valid) and %s (reported lost: valid false), whitelist NEVER", emsp.Name(), good["uid"], lost["uid"])
		ecc, epid := emsp.Party()
		for _, c := range env.CPOs {
			if _, err := c.WaitFor(ctx, before[c]+2, sim.PathHas(http.MethodPut, "/cpo/tokens/")); err != nil {
				return fmt.Errorf("the cards did not reach %s: %w", c.Name(), err)
			}
			for _, tok := range []map[string]any{good, lost} {
				if c.ReceivedToken(ecc, epid, tok["uid"].(string), "RFID") == nil {
					return fmt.Errorf("%s lacks %s", c.Name(), tok["uid"])
				}
			}
		}
		tl.Step("the hub forwards both cards to every CPO (PUT to their tokens receivers)")

		at := map[string]any{"location_id": "MAA01", "evse_uids": []any{"MAA01-E1"}}
		asked := len(emsp.Requests(sim.PathHas(http.MethodPost, "/authorize")))
		info, err := authorize(ctx, cpo, "RMI-RFID-0001", at)
		if err != nil {
			return err
		}
		if info.Allowed != "ALLOWED" || info.Reference == "" {
			return fmt.Errorf("%s: allowed %q, reference %q, want ALLOWED with a reference", good["uid"], info.Allowed, info.Reference)
		}
		if n := len(emsp.Requests(sim.PathHas(http.MethodPost, "/emsp/tokens/RMI-RFID-0001/authorize"))); n != 1 {
			return fmt.Errorf("%s was asked %d times about %s, want once", emsp.Name(), n, good["uid"])
		}
		tl.Step("a driver taps %s at %s MAA01-E1: %s asks the hub (POST tokens/%s/authorize), the hub asks %s: ALLOWED, reference %s",
			good["uid"], cpo.Name(), cpo.Name(), good["uid"], emsp.Name(), info.Reference)

		info, err = authorize(ctx, cpo, "RMI-RFID-0002", at)
		if err != nil {
			return err
		}
		if info.Allowed != "BLOCKED" || info.Reference != "" {
			return fmt.Errorf("%s: allowed %q, reference %q, want BLOCKED without a reference", lost["uid"], info.Allowed, info.Reference)
		}
		tl.Step("the lost card %s at the same charger: %s answers BLOCKED; the charger stays locked", lost["uid"], emsp.Name())
		if n := len(emsp.Requests(sim.PathHas(http.MethodPost, "/authorize"))); n != asked+2 {
			return fmt.Errorf("%s was asked %d times, want 2", emsp.Name(), n-asked)
		}

		resp, err := cpo.Raw(ctx, http.MethodPost, tokensSender(cpo)+"/"+url.PathEscape("STRANGER-9999")+"/authorize?type=RFID", at, nil)
		if resp == nil {
			return fmt.Errorf("authorize an unknown card: %w", err)
		}
		if resp.HTTPStatus != http.StatusNotFound || resp.Envelope == nil || resp.Envelope.StatusCode != 2004 {
			return fmt.Errorf("an unknown card: HTTP %d %s, want 404 with status_code 2004", resp.HTTPStatus, resp.Body)
		}
		tl.Step("a card nobody issued (STRANGER-9999): the hub answers 404, status_code 2004 (unknown token)")
		return nil
	}}
}

// authorization is the part of an AuthorizationInfo the story checks.
type authorization struct {
	Allowed   string `json:"allowed"`
	Reference string `json:"authorization_reference"`
}

// authorize asks the hub, as cpo, to authorize an RFID card at a location.
func authorize(ctx context.Context, cpo *sim.CPO, uid string, at map[string]any) (authorization, error) {
	var info authorization
	resp, err := cpo.Raw(ctx, http.MethodPost, tokensSender(cpo)+"/"+url.PathEscape(uid)+"/authorize?type=RFID", at, nil)
	if err := answered(resp, err); err != nil {
		return info, fmt.Errorf("%s authorizes %s: %w", cpo.Name(), uid, err)
	}
	if err := json.Unmarshal(resp.Envelope.Data, &info); err != nil {
		return info, fmt.Errorf("%s authorizes %s: %s", cpo.Name(), uid, resp.Body)
	}
	return info, nil
}

// tokensSender is the hub's tokens SENDER endpoint as cpo knows it.
func tokensSender(cpo *sim.CPO) string {
	base, _ := cpo.HubEndpoint("tokens", "SENDER")
	return base
}

// answered checks an OCPI answer is HTTP 200 with status_code 1000.
func answered(resp *ocpiclient.Response, err error) error {
	if resp == nil {
		return err
	}
	if resp.HTTPStatus != http.StatusOK || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
		return fmt.Errorf("HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
	return nil
}
