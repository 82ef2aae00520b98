package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// outageFor is how long the database is away in TestBroadcastSurvivesDatabaseOutage.
const outageFor = 10 * time.Second

// TestBroadcastSurvivesDatabaseOutage takes PostgreSQL away from a running
// hub for outageFor, in the middle of a stream of EVSE status PATCHes to
// three eMSPs: every connection the hub has is cut and new ones are
// refused, then the database is back. The hub must stay up, refuse what
// it cannot store (and acknowledge nothing it did not store), take PATCHes
// again once the database is back without a restart, and every eMSP must
// converge to the CPO's latest state, each having received the states in
// order. SQLite is embedded in the process: it cannot go away without it.
func TestBroadcastSurvivesDatabaseOutage(t *testing.T) {
	binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	proxy, relayed, _ := storetest.ProxiedURL(t)
	// The stream is 20 PATCHes a second for 18 s: more than the default
	// limits of a minute and an hour.
	h := startHubOn(t, relayed, "OCPIHUB_RATE_LIMIT_PER_MINUTE=0", "OCPIHUB_RATE_LIMIT_PER_HOUR=0", "OCPIHUB_RATE_LIMIT_PER_SECOND=0")

	cpo := hubtest.StartSim(t, sim.StartCPO, "Outage CPO", "IN", "CPX")
	var emsps []*sim.EMSP
	for i := range 3 {
		emsps = append(emsps, hubtest.StartSim(t, sim.StartEMSP, fmt.Sprintf("Outage eMSP %d", i+1), "IN", fmt.Sprintf("EM%d", i+1)))
	}
	h.register(ctx, cpo.Platform)
	for _, e := range emsps {
		h.register(ctx, e.Platform)
	}
	if err := cpo.PutLocation(ctx, "L1", location("L1", "AVAILABLE", hubtest.Stamp(0))); err != nil {
		t.Fatal(err)
	}
	statuses := []string{"CHARGING", "AVAILABLE", "BLOCKED", "OUTOFORDER"}
	// A refusal must tell the CPO to try again later: HTTP 500 with OCPI
	// 3000, never a 2xxx that blames its request.
	var wrongRefusal string
	patch := func(i int) error {
		resp, err := cpo.Push(ctx, "locations", http.MethodPatch,
			map[string]any{"status": statuses[i%len(statuses)], "last_updated": hubtest.Stamp(i)}, nil, "L1", "E1")
		if err != nil {
			return err
		}
		if resp.HTTPStatus == http.StatusOK && resp.Envelope != nil && resp.Envelope.StatusCode == 1000 {
			return nil
		}
		if (resp.HTTPStatus != http.StatusInternalServerError || resp.Envelope == nil || resp.Envelope.StatusCode != 3000) && wrongRefusal == "" {
			wrongRefusal = fmt.Sprintf("HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		return fmt.Errorf("HTTP %d: %s", resp.HTTPStatus, resp.Body)
	}

	// The stream: a PATCH every 50 ms; the database goes away after 3 s
	// and comes back outageFor later; the stream goes on 5 s more.
	var acked, refused, refusedDuring, ackedDuring int
	start := time.Now()
	var cut, back, firstAfter time.Time
	i := 1
	for ; time.Since(start) < 3*time.Second+outageFor+5*time.Second; i++ {
		if cut.IsZero() && time.Since(start) > 3*time.Second {
			cut = time.Now()
			proxy.Cut()
		}
		if !cut.IsZero() && back.IsZero() && time.Since(cut) > outageFor {
			proxy.Restore()
			back = time.Now()
		}
		sent := time.Now()
		away := !cut.IsZero() && back.IsZero() && sent.Sub(cut) > 100*time.Millisecond
		if err := patch(i); err != nil {
			refused++
			if away {
				if refusedDuring == 0 {
					t.Logf("the first refusal while the database was away: %v", err)
				}
				refusedDuring++
			}
		} else {
			acked++
			if away {
				ackedDuring++ // stored nowhere: a lie
			}
			if !back.IsZero() && firstAfter.IsZero() {
				firstAfter = time.Now()
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if refusedDuring == 0 {
		t.Fatalf("no PATCH was refused while the database was away (%d acknowledged): the outage was not felt", acked)
	}
	if wrongRefusal != "" {
		t.Errorf("a PATCH refused for the outage was answered as the CPO's fault: %s", wrongRefusal)
	}
	if ackedDuring > 0 {
		t.Errorf("%d PATCHes were acknowledged while the database was away", ackedDuring)
	}
	if firstAfter.IsZero() {
		t.Fatalf("no PATCH was acknowledged in the 5 s after the database came back")
	}
	select {
	case <-h.exited:
		t.Fatalf("the hub exited during the outage: %v", h.cmd.ProcessState)
	default:
	}

	// The CPO's latest state, sent until it is acknowledged.
	final := i
	var err2 error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err2 = patch(final); err2 == nil {
			break
		}
	}
	if err2 != nil {
		t.Fatalf("the hub did not take a PATCH again within 30 s of the database's return: %v", err2)
	}
	finalAt := time.Now()
	want := statuses[final%len(statuses)]
	wait, cancelWait := context.WithTimeout(ctx, 2*convergeWithin)
	defer cancelWait()
	err := until(wait, func() bool {
		for _, e := range emsps {
			if e.EVSEStatus("IN", "CPX", "L1", "E1") != want {
				return false
			}
		}
		return true
	})
	verdict := fmt.Sprintf("database away %v: %d PATCHes refused meanwhile, none acknowledged; PATCHes taken again %.2fs after its return "+
		"(%d acknowledged in all); every receiver has the CPO's latest state %.2fs after it was sent",
		outageFor, refusedDuring, firstAfter.Sub(back).Seconds(), acked, time.Since(finalAt).Seconds())
	t.Log(verdict)
	fmt.Printf("crashtest postgres: %s\n", verdict)
	if err != nil {
		var got []string
		for _, e := range emsps {
			got = append(got, e.EVSEStatus("IN", "CPX", "L1", "E1"))
		}
		t.Fatalf("receivers show %v, want %s everywhere: %v", got, want, err)
	}
	// Each eMSP got the states in order: no older one after a newer.
	for _, e := range emsps {
		last := ""
		for _, r := range e.Requests(sim.PathHas(http.MethodPatch, "/L1/E1")) {
			if !r.Handled {
				continue
			}
			var body struct {
				LastUpdated string `json:"last_updated"`
			}
			_ = json.Unmarshal(r.Body, &body)
			if body.LastUpdated < last {
				t.Errorf("%s got %s after %s", e.Name(), body.LastUpdated, last)
			}
			last = body.LastUpdated
		}
	}
}

// TestUPISurvivesDatabaseOutage takes PostgreSQL away from a running hub
// for outageFor as a driver's ₹500 is captured: the payment gateway's
// webhook is refused and the gateway retries it once the database is
// back. The capture must then be recorded, the session started and ended,
// the excess refunded, and every rupee accounted for (audit), with the
// hub never restarted.
func TestUPISurvivesDatabaseOutage(t *testing.T) {
	binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	proxy, relayed, direct := storetest.ProxiedURL(t)
	f := startUPIOn(t, ctx, relayed, direct)

	po := f.order("500")
	proxy.Cut()
	p1, err := f.pg.Pay(ctx, po.ID, pgsim.Captured)
	if err != nil {
		t.Fatal(err)
	}
	f.webhookRefused(p1.ID, "the capture's")
	for _, d := range f.pg.Deliveries() {
		if d.Webhook.PaymentID == p1.ID && d.Status == http.StatusOK {
			t.Fatalf("the hub acknowledged a webhook while its database was away: %+v", d)
		}
	}
	time.Sleep(outageFor)
	proxy.Restore()
	back := time.Now()
	n := f.redeliverFailed()
	_, took := f.waitPayment(p1.ID, "charging", back, resumeWithin, func(m money) bool { return m.status == "CHARGING" })
	reportAfter(t, store.Postgres, fmt.Sprintf("a capture refused while the database was away (the PG retried %d webhook) started its session", n),
		"the database came back", took)

	sid := f.session(p1.ID)
	if err := until(ctx, func() bool { return sid != "" && f.cpo.Session(sid) != nil }); err != nil {
		t.Fatalf("session of %s: %v", p1.ID, err)
	}
	if err := f.cpo.StopSession(ctx, sid); err != nil {
		t.Fatal(err)
	}
	f.waitPayment(p1.ID, "settled with its excess refunded", time.Now(), time.Minute, func(m money) bool {
		return m.status == "SETTLED" && m.reserved == m.refunded
	})
	f.audit(store.Postgres, po.ID, map[string]int64{p1.ID: 272_88})
	select {
	case <-f.h.exited:
		t.Fatalf("the hub exited: %v", f.h.cmd.ProcessState)
	default:
	}
}

// TestCommandsSurviveDatabaseOutage takes PostgreSQL away between a
// START_SESSION the hub relayed and the CPO's result. While it is away, a
// new command is refused and never reaches the CPO (a command is stored
// before it is forwarded), and the CPO's result is refused so that the CPO
// sends it again. Once the database is back the result is taken and the
// eMSP gets it exactly once, and commands are relayed again.
func TestCommandsSurviveDatabaseOutage(t *testing.T) {
	binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	proxy, relayed, _ := storetest.ProxiedURL(t)
	h := startHubOn(t, relayed)
	cpo := hubtest.StartSim(t, sim.StartCPO, "Outage CPO", "IN", "CPX")
	emsp := hubtest.StartSim(t, sim.StartEMSP, "Outage eMSP", "IN", "EM1")
	h.register(ctx, cpo.Platform)
	h.register(ctx, emsp.Platform)
	cpo.OnCommand(func(string, map[string]any) sim.CommandBehavior { return sim.CommandBehavior{NoResult: true} })
	if err := cpo.PutLocation(ctx, "L1", location("L1", "AVAILABLE", hubtest.Stamp(0))); err != nil {
		t.Fatal(err)
	}
	tok := emsp.NewToken("TOK-OUT", "RFID", "ALWAYS")
	if _, err := emsp.PutToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	start := func(ref string) (string, *ocpiclient.Response) {
		uid, resp, err := emsp.SendCommand(ctx, "START_SESSION", map[string]any{"token": tok, "location_id": "L1", "evse_uid": "E1",
			"connector_id": "1", "authorization_reference": ref}, nil)
		if resp == nil {
			t.Fatal(err)
		}
		return uid, resp
	}
	uid, resp := start("AUTH-1")
	if resp.HTTPStatus != http.StatusOK || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
		t.Fatalf("START_SESSION before the outage: HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
	cmds := cpo.Commands()
	if len(cmds) != 1 {
		t.Fatalf("the CPO got %d commands, want 1", len(cmds))
	}
	ours, _ := cmds[0].Body["response_url"].(string)

	proxy.Cut()
	_, resp = start("AUTH-2")
	if resp.HTTPStatus != http.StatusInternalServerError || resp.Envelope == nil || resp.Envelope.StatusCode != 3000 {
		t.Errorf("START_SESSION while the database is away: HTTP %d %s, want 500 with OCPI 3000", resp.HTTPStatus, resp.Body)
	}
	if n := len(cpo.Commands()); n != 1 {
		t.Errorf("a command the hub could not store reached the CPO (%d commands)", n)
	}
	resp, err := cpo.Raw(ctx, http.MethodPost, ours, map[string]any{"result": "ACCEPTED"}, nil)
	if resp == nil {
		t.Fatal(err)
	}
	if resp.HTTPStatus != http.StatusInternalServerError {
		t.Errorf("the CPO's result while the database is away: HTTP %d %s, want 500 so that it is sent again", resp.HTTPStatus, resp.Body)
	}
	time.Sleep(outageFor)
	proxy.Restore()
	back := time.Now()

	// The CPO sends its result again, as a CPO does after a 500.
	var again *ocpiclient.Response
	if err := until(ctx, func() bool {
		again, err = cpo.Raw(ctx, http.MethodPost, ours, map[string]any{"result": "ACCEPTED"}, nil)
		return err == nil && again.HTTPStatus == http.StatusOK
	}); err != nil {
		t.Fatalf("the CPO's result was not taken after the database came back: %v", err)
	}
	if res, err := emsp.WaitResult(ctx, uid); err != nil || res != "ACCEPTED" {
		t.Fatalf("the eMSP's result: %q %v", res, err)
	}
	reportAfter(t, store.Postgres, "the CPO's result, refused while the database was away, relayed", "the database came back", time.Since(back))
	if _, resp = start("AUTH-3"); resp.HTTPStatus != http.StatusOK || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
		t.Errorf("START_SESSION after the outage: HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
	time.Sleep(time.Second) // a second relay of the result, were there one, would have come by now
	if n := len(emsp.Results(uid)); n != 1 {
		t.Errorf("the eMSP got %d results, want 1", n)
	}
	if n := len(cpo.Commands()); n != 2 {
		t.Errorf("the CPO got %d commands, want 2 (before and after the outage)", n)
	}
}
