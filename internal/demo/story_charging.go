package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// chargingStory is a driver's session end to end: the eMSP pushes the
// driver's token (the hub forwards it to the CPOs), starts a session
// remotely on a charger of the directory, stops it, and receives the
// session and its CDR, every step relayed by the hub.
func chargingStory() Story {
	return Story{Name: "Remote start/stop and CDR", Needs: []string{"Directory broadcast"}, Run: func(ctx context.Context, env *Env, tl *Timeline) error {
		emsp, cpo := env.EMSPs[0], env.CPOs[0]
		cc, pid := cpo.Party()
		tok := emsp.NewToken("CEV-DRIVER-0001", "APP_USER", "ALLOWED")
		tokens := len(cpo.Requests(sim.PathHas(http.MethodPut, "/cpo/tokens/")))
		if _, err := emsp.PutToken(ctx, tok); err != nil {
			return fmt.Errorf("%s pushes a token: %w", emsp.Name(), err)
		}
		if _, err := cpo.WaitFor(ctx, tokens+1, sim.PathHas(http.MethodPut, "/cpo/tokens/")); err != nil {
			return fmt.Errorf("the token did not reach %s: %w", cpo.Name(), err)
		}
		tl.Step("%s pushes the driver's token %s; the hub forwards it to %s", emsp.Name(), tok["uid"], cpo.Name())

		start := map[string]any{"token": tok, "location_id": "BLR01", "evse_uid": "BLR01-E2", "connector_id": "1", "authorization_reference": "DEMO-AUTH-1"}
		uid, resp, err := emsp.SendCommand(ctx, "START_SESSION", start, nil)
		if err := commandAccepted(resp, err); err != nil {
			return fmt.Errorf("START_SESSION: %w", err)
		}
		tl.Step("%s sends START_SESSION at BLR01-E2; %s answers ACCEPTED through the hub", emsp.Name(), cpo.Name())
		if res, err := emsp.WaitResult(ctx, uid); err != nil || res != "ACCEPTED" {
			return fmt.Errorf("START_SESSION result: %q %v", res, err)
		}
		got, err := emsp.WaitFor(ctx, 1, func(r sim.Request) bool {
			return r.Method == http.MethodPut && strings.Contains(r.Path, "/emsp/sessions/"+cc+"/"+pid+"/") && strings.Contains(string(r.Body), `"DEMO-AUTH-1"`)
		})
		if err != nil {
			return fmt.Errorf("no session reached %s: %w", emsp.Name(), err)
		}
		var session struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(got[0].Body, &session); err != nil || session.ID == "" {
			return fmt.Errorf("the session pushed to %s: %s", emsp.Name(), got[0].Body)
		}
		sid := session.ID
		tl.Step("the result ACCEPTED is relayed to %s's response_url; session %s is ACTIVE at the eMSP", emsp.Name(), sid)

		uid, resp, err = emsp.SendCommand(ctx, "STOP_SESSION", map[string]any{"session_id": sid}, nil)
		if err := commandAccepted(resp, err); err != nil {
			return fmt.Errorf("STOP_SESSION: %w", err)
		}
		if res, err := emsp.WaitResult(ctx, uid); err != nil || res != "ACCEPTED" {
			return fmt.Errorf("STOP_SESSION result: %q %v", res, err)
		}
		tl.Step("%s sends STOP_SESSION; result ACCEPTED", emsp.Name())
		// The matcher runs under the simulator's request lock: it reads the
		// eMSP's sessions and CDRs only (never its request log).
		if _, err := emsp.WaitFor(ctx, 1, func(sim.Request) bool {
			return emsp.Session(cc, pid, sid)["status"] == "COMPLETED" && cdrOf(emsp, sid) != nil
		}); err != nil {
			return fmt.Errorf("session %s did not complete with a CDR at %s: %w", sid, emsp.Name(), err)
		}
		cdr := cdrOf(emsp, sid)
		cost, _ := json.Marshal(cdr["total_cost"])
		tl.Step("session %s COMPLETED; its CDR reaches %s: %v kWh, cost %s", sid, emsp.Name(), cdr["total_energy"], cost)
		tl.Link("commands", env.ConsoleURL("/commands"))
		return nil
	}}
}

// commandAccepted checks the hub's synchronous answer to a command: HTTP
// 200, status 1000, CommandResponse ACCEPTED.
func commandAccepted(resp *ocpiclient.Response, err error) error {
	if err != nil {
		return err
	}
	if resp.HTTPStatus != http.StatusOK || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
		return fmt.Errorf("HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
	var cr struct {
		Result string `json:"result"`
	}
	if err := json.Unmarshal(resp.Envelope.Data, &cr); err != nil || cr.Result != "ACCEPTED" {
		return fmt.Errorf("CommandResponse %s", resp.Envelope.Data)
	}
	return nil
}

func cdrOf(e *sim.EMSP, sessionID string) map[string]any {
	for _, c := range e.CDRs() {
		if c["session_id"] == sessionID {
			return c
		}
	}
	return nil
}
