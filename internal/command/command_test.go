package command_test

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
)

// TestStartStopSessionThroughTheHub is the whole path: START_SESSION
// accepted, its result relayed, the session pushed to the eMSP and
// session.started; STOP_SESSION, the session COMPLETED, session.stopped,
// the CDR routed to the eMSP; every step visible in the admin API.
func TestStartStopSessionThroughTheHub(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		uid, resp, err := b.EMSP.SendCommand(b.Ctx, "START_SESSION", b.startBody("AUTH-1"), nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if result(t, resp) != "ACCEPTED" || resp.Header.Get("OCPI-from-party-id") != "CP1" {
			t.Fatalf("START_SESSION answer: %s (from %s)", resp.Body, resp.Header.Get("OCPI-from-party-id"))
		}
		id, ours := b.commandID(t, 0)
		if !strings.HasPrefix(ours, b.H.PublicURL()+"/ocpi/2.2.1/cpo/commands/START_SESSION/") {
			t.Errorf("the CPO got response_url %q, not the hub's", ours)
		}
		if hd := b.CPO.Commands()[0].Header; hd.Get("OCPI-from-party-id") != "EM1" || hd.Get("OCPI-to-party-id") != "CP1" {
			t.Errorf("command routing headers: from %s to %s", hd.Get("OCPI-from-party-id"), hd.Get("OCPI-to-party-id"))
		}
		if res, err := b.EMSP.WaitResult(b.Ctx, uid); err != nil || res != "ACCEPTED" {
			t.Fatalf("START_SESSION result at the eMSP: %q %v", res, err)
		}
		if hd := b.EMSP.Results(uid)[0].Header; hd.Get("OCPI-from-party-id") != "CP1" || hd.Get("OCPI-to-party-id") != "EM1" {
			t.Errorf("relayed result from %s to %s", hd.Get("OCPI-from-party-id"), hd.Get("OCPI-to-party-id"))
		}

		// The CPO starts the session; the eMSP gets it; session.started.
		started, err := b.Events.Wait(b.Ctx, event.SessionStarted, 1)
		if err != nil {
			t.Fatal(err)
		}
		d := started[0].Data.(map[string]any)
		sid, _ := d["session_id"].(string)
		if d["authorization_reference"] != "AUTH-1" || d["evse_id"] != "IN*CP1*EE1" {
			t.Errorf("session.started: %v", d)
		}
		if _, err := b.EMSP.WaitFor(b.Ctx, 1, func(sim.Request) bool { return b.EMSP.Session("IN", "CP1", sid) != nil }); err != nil {
			t.Fatal(err)
		}
		if s := b.EMSP.Session("IN", "CP1", sid); s["authorization_reference"] != "AUTH-1" || s["status"] != "ACTIVE" {
			t.Errorf("eMSP's session: %v", s)
		}

		// STOP_SESSION: the session completes and its CDR reaches the eMSP.
		uid2, resp, err := b.EMSP.SendCommand(b.Ctx, "STOP_SESSION", map[string]any{"session_id": sid}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if result(t, resp) != "ACCEPTED" {
			t.Fatalf("STOP_SESSION answer: %s", resp.Body)
		}
		// The hub's command ids are time-ordered: each new row lands on
		// the rightmost page of the commands' key (internal/ids).
		id2, _ := b.commandID(t, 1)
		hubtest.TimeOrdered(t, "command ids, START_SESSION then STOP_SESSION", id, id2)
		if res, err := b.EMSP.WaitResult(b.Ctx, uid2); err != nil || res != "ACCEPTED" {
			t.Fatalf("STOP_SESSION result: %q %v", res, err)
		}
		// The session PATCH and the CDR are separate queues: either may
		// arrive first.
		if _, err := b.EMSP.WaitFor(b.Ctx, 1, func(sim.Request) bool {
			return len(b.EMSP.CDRs()) == 1 && b.EMSP.Session("IN", "CP1", sid)["status"] == "COMPLETED"
		}); err != nil {
			t.Fatalf("session %v, CDRs %v: %v", b.EMSP.Session("IN", "CP1", sid), b.EMSP.CDRs(), err)
		}
		if c := b.EMSP.CDRs()[0]; c["session_id"] != sid || c["authorization_reference"] != "AUTH-1" {
			t.Errorf("CDR at the eMSP: %v", c)
		}
		if _, err := b.Events.Wait(b.Ctx, event.SessionStopped, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Events.Wait(b.Ctx, event.CDRCreated, 1); err != nil {
			t.Fatal(err)
		}
		if errs := b.CPO.Errors(); len(errs) > 0 {
			t.Errorf("CPO simulator: %v", errs)
		}

		// The admin API shows the lifecycle.
		hubtest.Eventually(t, b.Ctx, "the result relayed", func() bool {
			rec := b.record(t, id)
			return len(rec.Results) == 1 && rec.Results[0].Relay == command.RelayDelivered
		})
		rec := b.record(t, id)
		if rec.State != command.StateCompleted || rec.Result != "ACCEPTED" || rec.Response == nil || rec.Response.Result != "ACCEPTED" ||
			rec.Response.TimeoutSeconds != 30 || rec.CPO.PartyID != "CP1" || rec.Requester.PartyID != "EM1" ||
			!strings.Contains(rec.Requester.ResponseURL, uid) || !strings.Contains(string(rec.Forwarded), id) ||
			rec.AuthorizationReference != "AUTH-1" {
			t.Errorf("admin record: %+v", rec)
		}
		var list []command.Record
		resp = b.H.Admin(t, http.MethodGet, "/admin/commands?command=STOP_SESSION", nil, &list)
		if len(list) != 1 || list[0].SessionID != sid || resp.Header.Get("X-Total-Count") != "1" {
			t.Errorf("admin list: %s", resp.Body)
		}
		evs := b.Events.Events(event.CommandResult)
		if len(evs) != 2 {
			t.Errorf("%d command.result events, want 2", len(evs))
		}
	})
}

// TestCommandTimeout: a CPO that accepts and never reports leaves the eMSP
// with TIMEOUT at its timeout plus the margin; the late result is recorded
// and not relayed. A CPO that does not answer at all is 4002 and also ends
// in TIMEOUT.
func TestCommandTimeout(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		b.CPO.OnCommand(func(cmd string, body map[string]any) sim.CommandBehavior {
			return sim.CommandBehavior{Timeout: 10, NoResult: true}
		})
		uid, resp, err := b.EMSP.SendCommand(b.Ctx, "START_SESSION", b.startBody("AUTH-T"), nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		id, ours := b.commandID(t, 0)
		if rec := b.record(t, id); rec.State != command.StateAccepted || rec.Deadline == nil {
			t.Fatalf("after ACCEPTED: %+v", rec)
		}

		// Not yet: 10 s timeout + 5 s margin have not passed.
		b.clock.Add(14 * time.Second)
		if rec := b.record(t, id); rec.State != command.StateAccepted {
			t.Fatalf("timed out early: %+v", rec)
		}
		b.clock.Add(2 * time.Second)
		if res, err := b.EMSP.WaitResult(b.Ctx, uid); err != nil || res != "TIMEOUT" {
			t.Fatalf("eMSP result %q %v, want TIMEOUT", res, err)
		}

		// The CPO's late result: accepted from the CPO, recorded, not relayed.
		resp, err = b.CPO.Raw(b.Ctx, http.MethodPost, ours, map[string]any{"result": "ACCEPTED"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		rec := b.record(t, id)
		if rec.State != command.StateTimeout || rec.Result != "TIMEOUT" || len(rec.Results) != 2 ||
			rec.Results[0].Source != "hub" || rec.Results[1].Relay != command.RelaySkipped || rec.Results[1].Result != "ACCEPTED" {
			t.Fatalf("after the late result: %+v", rec)
		}
		hubtest.Eventually(t, b.Ctx, "TIMEOUT relayed", func() bool { return b.record(t, id).Results[0].Relay == command.RelayDelivered })
		if n := len(b.EMSP.Results(uid)); n != 1 {
			t.Errorf("eMSP got %d results, want only TIMEOUT", n)
		}

		// Silence: no answer at all is 4002; the command stays open and
		// ends in TIMEOUT after the default wait (20 s) + margin.
		b.CPO.OnCommand(func(cmd string, body map[string]any) sim.CommandBehavior { return sim.CommandBehavior{Silent: true} })
		uid2, resp, err := b.EMSP.SendCommand(b.Ctx, "START_SESSION", b.startBody("AUTH-S"), nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 4002)
		id2, _ := b.commandID(t, 1)
		if rec := b.record(t, id2); rec.State != command.StateUnconfirmed {
			t.Fatalf("silent CPO: %+v", rec)
		}
		b.clock.Add(26 * time.Second)
		if res, err := b.EMSP.WaitResult(b.Ctx, uid2); err != nil || res != "TIMEOUT" {
			t.Fatalf("silent CPO result %q %v, want TIMEOUT", res, err)
		}
	}, options(true))
}

// TestRelaySurvivesRestart: a result stored while the eMSP is down is
// relayed once after the hub restarts and the eMSP is back.
func TestRelaySurvivesRestart(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		b.CPO.OnCommand(func(cmd string, body map[string]any) sim.CommandBehavior { return sim.CommandBehavior{NoResult: true} })
		uid, resp, err := b.EMSP.SendCommand(b.Ctx, "START_SESSION", b.startBody("AUTH-R"), nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		id, ours := b.commandID(t, 0)

		b.EMSP.SetDown(true)
		resp, err = b.CPO.Raw(b.Ctx, http.MethodPost, ours, map[string]any{"result": "ACCEPTED"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		// The first relay attempt fails on the 503; the retry waits for the
		// (fake) clock.
		if _, err := b.EMSP.WaitFor(b.Ctx, 1, sim.PathHas(http.MethodPost, "/emsp/commands/START_SESSION/"+uid)); err != nil {
			t.Fatal(err)
		}
		hubtest.Eventually(t, b.Ctx, "the failed attempt recorded", func() bool {
			rec := b.record(t, id)
			return len(rec.Results) == 1 && rec.Results[0].RelayAttempts == 1 && rec.Results[0].Relay == command.RelayPending
		})

		b.H.Restart(t)
		b.EMSP.SetDown(false)
		b.clock.Add(time.Minute)
		if res, err := b.EMSP.WaitResult(b.Ctx, uid); err != nil || res != "ACCEPTED" {
			t.Fatalf("after restart: %q %v", res, err)
		}
		hubtest.Eventually(t, b.Ctx, "the relay recorded", func() bool { return b.record(t, id).Results[0].Relay == command.RelayDelivered })
		b.clock.Add(time.Minute)
		if n := len(b.EMSP.Results(uid)); n != 1 {
			t.Errorf("the result was delivered %d times", n)
		}
		if rec := b.record(t, id); rec.Results[0].RelayAttempts != 2 || len(rec.Results) != 1 {
			t.Errorf("relay record: %+v", rec.Results)
		}
	}, options(true))
}

// TestCommandTargets: commands for what the directory does not know are
// answered by the hub (2003 REJECTED, UNKNOWN_SESSION) and never reach a
// CPO; bad bodies and other parties' objects are refused.
func TestCommandTargets(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		for _, c := range []struct {
			name  string
			edit  func(m map[string]any)
			field string
		}{
			{"unknown location", func(m map[string]any) { m["location_id"] = "LOC9" }, "location_id"},
			{"unknown EVSE", func(m map[string]any) { m["evse_uid"] = "E9" }, "evse_uid"},
			{"unknown connector", func(m map[string]any) { m["connector_id"] = "9" }, "connector_id"},
		} {
			body := b.startBody("X")
			c.edit(body)
			_, resp, err := b.EMSP.SendCommand(b.Ctx, "START_SESSION", body, nil)
			hubtest.MustStatus(t, resp, err, http.StatusOK, 2003)
			if result(t, resp) != "REJECTED" || hubtest.ErrorField(resp) != c.field {
				t.Errorf("%s: %s", c.name, resp.Body)
			}
		}
		_, resp, err := b.EMSP.SendCommand(b.Ctx, "UNLOCK_CONNECTOR", map[string]any{"location_id": "LOC1", "evse_uid": "E2", "connector_id": "7"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 2003)

		// STOP_SESSION: unknown, and another eMSP's session.
		_, resp, err = b.EMSP.SendCommand(b.Ctx, "STOP_SESSION", map[string]any{"session_id": "NOPE"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if result(t, resp) != "UNKNOWN_SESSION" {
			t.Errorf("unknown session: %s", resp.Body)
		}
		s := map[string]any{"country_code": "IN", "party_id": "CP1", "id": "S-EM1", "start_date_time": "2026-01-01T10:00:00Z", "kwh": 1,
			"cdr_token":   map[string]any{"country_code": "DE", "party_id": "EM1", "uid": "TOK1", "type": "APP_USER", "contract_id": "C"},
			"auth_method": "COMMAND", "location_id": "LOC1", "evse_uid": "E1", "connector_id": "1", "currency": "INR", "status": "ACTIVE",
			"last_updated": "2026-01-01T10:00:00Z"}
		if err := b.CPO.PutSession(b.Ctx, s); err != nil {
			t.Fatal(err)
		}
		_, resp, err = b.EMSP2.SendCommand(b.Ctx, "STOP_SESSION", map[string]any{"session_id": "S-EM1"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if result(t, resp) != "UNKNOWN_SESSION" {
			t.Errorf("another eMSP's session: %s", resp.Body)
		}
		_, resp, err = b.EMSP.SendCommand(b.Ctx, "CANCEL_RESERVATION", map[string]any{"reservation_id": "R404"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if result(t, resp) != "REJECTED" {
			t.Errorf("unknown reservation: %s", resp.Body)
		}

		// Bad requests.
		other := b.startBody("X")
		other["token"] = b.EMSP2.NewToken("T2", "RFID", "NEVER")
		for _, c := range []struct {
			name, command string
			body          map[string]any
			http, code    int
			field         string
		}{
			{"another eMSP's token", "START_SESSION", other, 200, 2001, "token.party_id"},
			{"no token", "START_SESSION", map[string]any{"location_id": "LOC1"}, 200, 2001, "token"},
			{"connector without EVSE", "START_SESSION", map[string]any{"token": b.token, "location_id": "LOC1", "connector_id": "1"}, 200, 2001, "evse_uid"},
			{"reserve without expiry", "RESERVE_NOW", map[string]any{"token": b.token, "location_id": "LOC1", "reservation_id": "R1"}, 200, 2001, "expiry_date"},
			{"stop without session", "STOP_SESSION", map[string]any{}, 200, 2001, "session_id"},
			{"unknown command", "START_CHARGING", map[string]any{}, 404, 2000, ""},
		} {
			_, resp, err := b.EMSP.SendCommand(b.Ctx, c.command, c.body, nil)
			hubtest.MustError(t, c.name, resp, err, c.http, c.code, c.field)
		}
		if n := len(b.CPO.Commands()); n != 0 {
			t.Errorf("the CPO received %d commands", n)
		}
		// The hub's own answers are on record too.
		var list []command.Record
		b.H.Admin(t, http.MethodGet, "/admin/commands?state=rejected", nil, &list)
		if len(list) != 7 {
			t.Errorf("%d rejected commands on record, want 7", len(list))
		}

		// Results: only the CPO of the command, only valid ones.
		uid, resp, err := b.EMSP.SendCommand(b.Ctx, "UNLOCK_CONNECTOR", map[string]any{"location_id": "LOC1", "evse_uid": "E2", "connector_id": "1"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		id, ours := b.commandID(t, 0)
		resp, err = b.CPO2.Raw(b.Ctx, http.MethodPost, ours, map[string]any{"result": "ACCEPTED"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
		resp, err = b.CPO.Raw(b.Ctx, http.MethodPost, strings.Replace(ours, "UNLOCK_CONNECTOR", "START_SESSION", 1), map[string]any{"result": "ACCEPTED"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
		resp, err = b.CPO.Raw(b.Ctx, http.MethodPost, ours, map[string]any{"result": "DONE"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 2001)
		if hubtest.ErrorField(resp) != "result" {
			t.Errorf("bad result: %s", resp.Body)
		}
		if res, err := b.EMSP.WaitResult(b.Ctx, uid); err != nil || res != "ACCEPTED" {
			t.Fatalf("UNLOCK_CONNECTOR result %q %v", res, err)
		}
		if rec := b.record(t, id); len(rec.Results) != 1 {
			t.Errorf("refused results were recorded: %+v", rec.Results)
		}

		// The admin API checks its parameters.
		for _, q := range []string{"limit=many", "offset=-1", "platform_id=x"} {
			resp := enveloped(b.H.Do(t, http.MethodGet, "/admin/commands?"+q, hubtest.AdminToken, nil, nil))
			hubtest.MustStatus(t, resp, nil, http.StatusOK, 2001)
		}
		hubtest.MustStatus(t, enveloped(b.H.Do(t, http.MethodGet, "/admin/commands/nope", hubtest.AdminToken, nil, nil)), nil, http.StatusNotFound, 2000)
		hubtest.MustStatus(t, enveloped(b.H.Do(t, http.MethodGet, "/admin/commands", b.EMSP.Token(), nil, nil)), nil, http.StatusUnauthorized, 2000)

		// An unreachable CPO: 4003, the command failed.
		b.CPO.Close()
		_, resp, err = b.EMSP.SendCommand(b.Ctx, "START_SESSION", b.startBody("X"), nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 4003)
		b.H.Admin(t, http.MethodGet, "/admin/commands?state=failed", nil, &list)
		if len(list) != 1 || list[0].Error == "" {
			t.Errorf("failed commands: %+v", list)
		}
	})
}

// TestOwnCommands: ocpihub sends START_SESSION as its own eMSP; the result
// comes to the in-process hook and the session, of our own token, is kept.
func TestOwnCommands(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		got := make(chan command.HookResult, 4)
		b.H.Commands.RegisterHook("test", func(ctx context.Context, r command.HookResult) error {
			got <- r
			return nil
		})
		tok, err := b.H.Tokens.Issue(b.Ctx, ocpi.Token{UID: "PAY-1", Type: "AD_HOC_USER"})
		if err != nil {
			t.Fatal(err)
		}
		sent, err := b.H.Commands.Send(b.Ctx, command.SendRequest{Command: ocpi.CommandStartSession, Hook: "test",
			Body: ocpi.StartSession{Token: tok, LocationID: "LOC1", EVSEUID: "E2", ConnectorID: "1", AuthorizationReference: "PAY-1"}})
		if err != nil || sent.StatusCode != 1000 || sent.Response == nil || sent.Response.Result != "ACCEPTED" {
			t.Fatalf("Send: %+v %v", sent, err)
		}
		select {
		case r := <-got:
			if r.CommandID != sent.ID || r.Result.Result != "ACCEPTED" || r.AuthorizationReference != "PAY-1" || r.LocationID != "LOC1" {
				t.Errorf("hook result: %+v", r)
			}
		case <-b.Ctx.Done():
			t.Fatal("no result at the hook")
		}
		cmd := b.CPO.Commands()[0]
		if cmd.Header.Get("OCPI-from-party-id") != "OHE" || cmd.Body["token"].(map[string]any)["party_id"] != "OHE" {
			t.Errorf("command from %s: %v", cmd.Header.Get("OCPI-from-party-id"), cmd.Body)
		}
		if _, err := b.Events.Wait(b.Ctx, event.SessionStarted, 1); err != nil {
			t.Fatal(err)
		}
		found, err := b.H.Sessions.FindByAuthorizationReference(b.Ctx, "PAY-1")
		if err != nil || len(found) != 1 || found[0].Owner.PartyID != "OHE" || found[0].Session.EVSEUID != "E2" {
			t.Fatalf("own session: %v %v", found, err)
		}
		if n := b.EMSP.Sessions() + b.EMSP2.Sessions(); n != 0 {
			t.Errorf("our own session went to an eMSP")
		}
		// AD_HOC_USER tokens of our own are not pushed to CPOs.
		if b.CPO.ReceivedToken("IN", "OHE", "PAY-1", "AD_HOC_USER") != nil {
			t.Errorf("an ad-hoc token was pushed")
		}
		// A rejected location is an answer, not an error.
		sent, err = b.H.Commands.Send(b.Ctx, command.SendRequest{Command: ocpi.CommandStartSession, Hook: "test",
			Body: ocpi.StartSession{Token: tok, LocationID: "NOPE"}})
		if err != nil || sent.StatusCode != 2003 || sent.Response.Result != "REJECTED" {
			t.Errorf("unknown location: %+v %v", sent, err)
		}
		if _, err := b.H.Commands.Send(b.Ctx, command.SendRequest{Command: ocpi.CommandStartSession, Hook: "nobody",
			Body: ocpi.StartSession{Token: tok, LocationID: "LOC1"}}); err == nil {
			t.Error("Send with an unregistered hook succeeded")
		}
	})
}

// TestReservation: RESERVE_NOW is relayed; CANCEL_RESERVATION finds the CPO
// from the stored reservation; the CPO's later CANCELED_RESERVATION for the
// reservation is relayed after its first result, a repeat is not.
func TestReservation(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		b.CPO.OnCommand(func(cmd string, body map[string]any) sim.CommandBehavior { return sim.CommandBehavior{Manual: true} })
		reserve := map[string]any{"token": b.token, "location_id": "LOC1", "evse_uid": "E2", "reservation_id": "R-1",
			"expiry_date": ocpi.NewDateTime(time.Now().Add(30 * time.Minute))}
		uid, resp, err := b.EMSP.SendCommand(b.Ctx, "RESERVE_NOW", reserve, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if res, err := b.EMSP.WaitResult(b.Ctx, uid); err != nil || res != "ACCEPTED" {
			t.Fatalf("RESERVE_NOW result %q %v", res, err)
		}
		_, ours := b.commandID(t, 0)

		// The CPO cancels the reservation on its own later: relayed once.
		for range 2 {
			resp, err = b.CPO.Raw(b.Ctx, http.MethodPost, ours, map[string]any{"result": "CANCELED_RESERVATION"}, nil)
			hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		}
		if _, err := b.EMSP.WaitFor(b.Ctx, 1, func(sim.Request) bool { return len(b.EMSP.Results(uid)) >= 2 }); err != nil {
			t.Fatal(err)
		}
		id, _ := b.commandID(t, 0)
		hubtest.Eventually(t, b.Ctx, "the results settled", func() bool {
			rec := b.record(t, id)
			return len(rec.Results) == 3 && rec.Results[1].Relay == command.RelayDelivered
		})
		if rec := b.record(t, id); rec.Results[2].Relay != command.RelaySkipped {
			t.Errorf("repeated CANCELED_RESERVATION: %+v", rec.Results)
		}

		// The eMSP cancels: the hub finds the CPO from the reservation.
		uid2, resp, err := b.EMSP.SendCommand(b.Ctx, "CANCEL_RESERVATION", map[string]any{"reservation_id": "R-1"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if result(t, resp) != "ACCEPTED" {
			t.Fatalf("CANCEL_RESERVATION: %s", resp.Body)
		}
		if cmds := b.CPO.Commands(); len(cmds) != 2 || cmds[1].Command != "CANCEL_RESERVATION" || cmds[1].Body["reservation_id"] != "R-1" {
			t.Fatalf("CPO got %+v", cmds)
		}
		if res, err := b.EMSP.WaitResult(b.Ctx, uid2); err != nil || res != "ACCEPTED" {
			t.Fatalf("CANCEL_RESERVATION result %q %v", res, err)
		}
		// Another eMSP's CANCEL_RESERVATION of the same id does not reach the
		// CPO: the reservation is not its.
		_, resp, err = b.EMSP2.SendCommand(b.Ctx, "CANCEL_RESERVATION", map[string]any{"reservation_id": "R-1"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if result(t, resp) != "REJECTED" || len(b.CPO.Commands()) != 2 {
			t.Errorf("another eMSP's cancel: %s", resp.Body)
		}
	})
}

// TestTimeoutSweep: storing a command writes no job; the periodic sweep of
// deadlines times out every open command past its own, more than one of
// its pages, after a restart as well, and leaves the others open.
func TestTimeoutSweep(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		timeout := map[string]int{"AUTH-LONG": 600}
		b.CPO.OnCommand(func(cmd string, body map[string]any) sim.CommandBehavior {
			ref, _ := body["authorization_reference"].(string)
			return sim.CommandBehavior{Timeout: cmp.Or(timeout[ref], 10), NoResult: true}
		})
		const n = 130 // more than one page of the sweep (100)
		uids := make([]string, n)
		for i := range n {
			uid, resp, err := b.EMSP.SendCommand(b.Ctx, "START_SESSION", b.startBody(fmt.Sprintf("AUTH-%d", i)), nil)
			hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
			uids[i] = uid
		}
		_, resp, err := b.EMSP.SendCommand(b.Ctx, "START_SESSION", b.startBody("AUTH-LONG"), nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		long, _ := b.commandID(t, n)
		var jobs int
		if err := b.H.DB.Read().QueryRow(b.Ctx, "SELECT COUNT(*) FROM river_job WHERE kind = 'command_timeout'").Scan(&jobs); err != nil || jobs != 0 {
			t.Fatalf("%d command jobs stored with %d commands (%v), want none", jobs, n+1, err)
		}

		// The hub is down past the deadlines (10 s + the 5 s margin).
		b.H.Restart(t)
		if b.H.Engine == store.Postgres {
			// A second replica on the same database sweeps as well: each
			// command still times out once.
			hubtest.Start(t, store.Postgres, options(true), func(o *hubtest.Options) { o.DBURL, o.Clock = b.H.DBURL, b.clock })
		}
		b.clock.Add(16 * time.Second)
		for i, uid := range uids {
			if res, err := b.EMSP.WaitResult(b.Ctx, uid); err != nil || res != "TIMEOUT" {
				t.Fatalf("command %d: result %q %v, want TIMEOUT", i, res, err)
			}
		}
		for i := range n {
			id, _ := b.commandID(t, i)
			if rec := b.record(t, id); rec.State != command.StateTimeout || len(rec.Results) != 1 {
				t.Fatalf("command %d: %+v", i, rec)
			}
		}
		b.clock.Add(time.Minute) // relay retries, if any were queued twice, come due
		hubtest.Eventually(t, b.Ctx, "every TIMEOUT relayed", func() bool {
			for i := range n {
				id, _ := b.commandID(t, i)
				if b.record(t, id).Results[0].Relay != command.RelayDelivered {
					return false
				}
			}
			return true
		})
		for i, uid := range uids {
			if got := len(b.EMSP.Results(uid)); got != 1 {
				t.Errorf("command %d: the eMSP got %d results, want one TIMEOUT", i, got)
			}
		}
		if rec := b.record(t, long); rec.State != command.StateAccepted {
			t.Errorf("the command with a 600 s timeout: %+v", rec)
		}
	}, options(true))
}
