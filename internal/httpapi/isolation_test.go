package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/httpapi"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
	"github.com/ocpihub/ocpihub/internal/traffic"
)

// accessClass says who may reach a route and what another partner gets.
type accessClass string

const (
	// classPublic needs no token: operations, the public search, the
	// payment gateway's webhook and the envelope fallbacks.
	classPublic accessClass = "public"
	// classRegistering is versions and credentials: token A reaches them.
	classRegistering accessClass = "registering"
	// classParty carries the owning party's {country_code}/{party_id}: a
	// partner naming another party's gets 404 and changes nothing.
	classParty accessClass = "party"
	// classByID reaches one object by its id: another partner's id answers
	// 404 and changes nothing.
	classByID accessClass = "by-id"
	// classScoped names no owner and no object id (lists, creates, the
	// short URL forms that take the caller's own party): what another
	// partner sends must not change the owner's objects, and its lists must
	// not show them.
	classScoped accessClass = "scoped"
	// classShared is what every partner of the role sees by design: the
	// directory of published locations and tariffs, the tokens CPOs pull and
	// authorize against, the hub's client info.
	classShared accessClass = "shared"
	// classAdmin needs the admin token: a partner token gets 401.
	classAdmin accessClass = "admin"
	// classOwn lists a partner's records of its own exchanges (the traffic
	// inspector): another partner's list holds its own exchanges only,
	// even those in which it named A's objects.
	classOwn accessClass = "own"
)

// accessFits reports whether a row's access is the one its class implies:
// the partner classes are platform or subscriber routes.
func accessFits(c accessClass, access string) bool {
	switch c {
	case classPublic, classRegistering, classAdmin:
		return access == string(c)
	}
	return access == "platform" || access == "subscriber"
}

// The objects partner A owns during TestRouteIsolation.
const (
	objLocation = "location"
	objTariff   = "tariff"
	objSession  = "session"
	objCDR      = "cdr"
	objToken    = "token"
	objWebhook  = "webhook"
	objTerminal = "terminal"
	objCommand  = "command"
	objDelivery = "delivery"
	objAdvice   = "advice"
	objTraffic  = "traffic"
)

// routeRule is the access class of one route, the role of the second
// partner that calls it, and the object of partner A it reaches.
type routeRule struct {
	class accessClass
	as    string // "cpo", "emsp" or "ptp": the role of partner B that calls (several: each calls)
	obj   string
}

// routeRules is the access table: every route of the hub, classified. A
// route added without an entry here fails TestRouteIsolation.
func routeRules() map[string]routeRule {
	m := map[string]routeRule{}
	add := func(r routeRule, methods string, paths ...string) {
		for _, p := range paths {
			for _, meth := range strings.Fields(methods) {
				m[meth+" "+p] = r
			}
		}
	}
	rule := func(c accessClass, as, obj string) routeRule { return routeRule{class: c, as: as, obj: obj} }

	pub := rule(classPublic, "", "")
	add(pub, "GET", "/healthz", "/readyz", "/metrics", "/openapi.json", "/api/locations")
	add(pub, "POST", "/ocpi/2.2.1/payments/upi/webhook", "/ocpi/2.2.1/payments/upi/sms/reports")
	m["/ocpi/"], m["/admin/"], m["/api/"] = pub, pub, pub

	reg := rule(classRegistering, "", "")
	add(reg, "GET", "/ocpi/versions", "/ocpi/2.2.1", "/ocpi/2.2", "/ocpi/2.3.0", "/ocpi/cpo/versions", "/ocpi/emsp/versions")
	add(reg, "GET POST PUT DELETE", "/ocpi/2.2.1/credentials", "/ocpi/2.2/credentials", "/ocpi/2.3.0/credentials")
	add(reg, "POST PUT", "/ocpi/{version}/credentials")

	// OCPI 2.2.1: locations and tariffs.
	const v = "/ocpi/2.2.1"
	add(rule(classShared, "emsp", ""), "GET", v+"/hubclientinfo")
	// Only peer hubs list parties; anyone else naming a party gets 404.
	add(rule(classParty, "cpo emsp", ""), "GET PUT", v+"/clientinfo/{country_code}/{party_id}")
	add(rule(classParty, "cpo", objLocation), "GET PUT PATCH DELETE",
		v+"/cpo/locations/{cc}/{pid}/{location_id}",
		v+"/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}",
		v+"/cpo/locations/{cc}/{pid}/{location_id}/{evse_uid}/{connector_id}")
	add(rule(classScoped, "cpo", objLocation), "GET PUT PATCH DELETE", v+"/cpo/locations/{location_id}")
	add(rule(classShared, "emsp", objLocation), "GET", v+"/emsp/locations", v+"/emsp/locations/{location_id}",
		v+"/emsp/locations/{location_id}/{evse_uid}", v+"/emsp/locations/{location_id}/{evse_uid}/{connector_id}")
	add(rule(classParty, "cpo", objTariff), "GET PUT PATCH DELETE", v+"/cpo/tariffs/{cc}/{pid}/{tariff_id}")
	add(rule(classScoped, "cpo", objTariff), "GET PUT PATCH DELETE", v+"/cpo/tariffs/{tariff_id}")
	add(rule(classShared, "emsp", objTariff), "GET", v+"/emsp/tariffs", v+"/emsp/tariffs/{tariff_id}")

	// Tokens, sessions, CDRs.
	add(rule(classParty, "emsp", objToken), "GET PUT PATCH", v+"/emsp/tokens/{cc}/{pid}/{uid}")
	add(rule(classShared, "cpo", objToken), "GET", v+"/cpo/tokens")
	add(rule(classShared, "cpo", objToken), "POST", v+"/cpo/tokens/{uid}/authorize")
	add(rule(classParty, "cpo", objSession), "GET PUT PATCH", v+"/cpo/sessions/{cc}/{pid}/{id}")
	add(rule(classScoped, "emsp", objSession), "GET", v+"/emsp/sessions")
	add(rule(classByID, "emsp", objSession), "PUT", v+"/emsp/sessions/{session_id}/charging_preferences")
	add(rule(classScoped, "cpo", objCDR), "POST", v+"/cpo/cdrs")
	add(rule(classParty, "cpo", objCDR), "GET", v+"/cpo/cdrs/{cc}/{pid}/{id}")
	add(rule(classScoped, "emsp", objCDR), "GET", v+"/emsp/cdrs")

	// Commands and charging profiles.
	add(rule(classScoped, "emsp", objToken), "POST", v+"/emsp/commands/{command}")
	add(rule(classScoped, "ptp", objToken), "POST", "/ocpi/2.3.0/ptp/commands/{command}")
	add(rule(classByID, "cpo", objCommand), "POST", v+"/cpo/commands/{command}/{id}", v+"/cpo/chargingprofiles/{command}/{id}")
	add(rule(classByID, "emsp", objSession), "GET PUT DELETE", v+"/emsp/chargingprofiles/{session_id}")
	add(rule(classByID, "cpo", objSession), "PUT", v+"/cpo/chargingprofiles/{session_id}")

	// Direct Payment, under both versions.
	for _, pv := range []string{"2.2.1", "2.3.0"} {
		base := "/ocpi/" + pv + "/payments"
		add(rule(classScoped, "ptp cpo", objTerminal), "GET", base+"/terminals")
		add(rule(classScoped, "ptp", objTerminal), "POST", base+"/terminals")
		add(rule(classScoped, "cpo", objTerminal), "POST", base+"/terminals/activate")
		add(rule(classByID, "ptp", objTerminal), "POST", base+"/terminals/{terminal_id}")
		add(rule(classByID, "ptp cpo", objTerminal), "GET PUT PATCH", base+"/terminals/{terminal_id}")
		add(rule(classByID, "cpo", objTerminal), "POST", base+"/terminals/{terminal_id}/deactivate")
		add(rule(classScoped, "ptp cpo", objAdvice), "GET", base+"/financial-advice-confirmations")
		add(rule(classScoped, "ptp", objAdvice), "POST", base+"/financial-advice-confirmations")
		add(rule(classByID, "ptp", objAdvice), "GET", base+"/financial-advice-confirmations/{financial_advice_confirmation_id}")
	}

	// Webhook subscriptions (ours).
	add(rule(classScoped, "emsp", objWebhook), "GET POST", v+"/webhooks")
	add(rule(classByID, "emsp", objWebhook), "GET PUT PATCH DELETE", v+"/webhooks/{id}")
	add(rule(classByID, "emsp", objDelivery), "GET", v+"/webhooks/{id}/deliveries", v+"/webhooks/{id}/deliveries/{delivery_id}")
	add(rule(classByID, "emsp", objDelivery), "POST", v+"/webhooks/{id}/deliveries/{delivery_id}/replay")

	// The traffic inspector: each partner reads its own exchanges.
	add(rule(classOwn, "cpo emsp", objTraffic), "GET", v+"/traffic")
	add(rule(classByID, "cpo emsp", objTraffic), "GET", v+"/traffic/{id}")

	// Legacy 2.1.1 and 2.0 (one set of endpoints per role).
	for _, lv := range []string{"2.1.1", "2.0"} {
		b := "/ocpi/" + lv
		add(reg, "GET", b, b+"/cpo", b+"/emsp")
		add(reg, "GET POST PUT DELETE", b+"/credentials", b+"/cpo/credentials", b+"/emsp/credentials")
		add(rule(classParty, "cpo", objLocation), "GET PUT PATCH",
			b+"/cpo/locations/{country_code}/{party_id}/{location_id}",
			b+"/cpo/locations/{country_code}/{party_id}/{location_id}/{evse_uid}",
			b+"/cpo/locations/{country_code}/{party_id}/{location_id}/{evse_uid}/{connector_id}")
		add(rule(classShared, "emsp", objLocation), "GET", b+"/emsp/locations", b+"/emsp/locations/{location_id}",
			b+"/emsp/locations/{location_id}/{evse_uid}", b+"/emsp/locations/{location_id}/{evse_uid}/{connector_id}")
		add(rule(classParty, "cpo", objTariff), "GET PUT PATCH DELETE", b+"/cpo/tariffs/{country_code}/{party_id}/{tariff_id}")
		add(rule(classShared, "emsp", objTariff), "GET", b+"/emsp/tariffs")
		add(rule(classParty, "cpo", objSession), "GET PUT PATCH", b+"/cpo/sessions/{country_code}/{party_id}/{session_id}")
		add(rule(classScoped, "emsp", objSession), "GET", b+"/emsp/sessions")
		add(rule(classScoped, "cpo", objCDR), "POST", b+"/cpo/cdrs")
		add(rule(classParty, "cpo", objCDR), "GET", b+"/cpo/cdrs/{country_code}/{party_id}/{cdr_id}")
		add(rule(classScoped, "emsp", objCDR), "GET", b+"/emsp/cdrs")
		add(rule(classParty, "emsp", objToken), "GET PUT PATCH", b+"/emsp/tokens/{country_code}/{party_id}/{token_uid}")
		add(rule(classShared, "cpo", objToken), "GET", b+"/cpo/tokens")
	}
	add(rule(classParty, "cpo", objSession), "DELETE", "/ocpi/2.0/cpo/sessions/{country_code}/{party_id}/{session_id}")
	add(rule(classShared, "cpo", objToken), "POST", "/ocpi/2.1.1/cpo/tokens/{token_uid}/authorize")
	add(rule(classScoped, "emsp", objToken), "POST", "/ocpi/2.1.1/emsp/commands/{command}")
	add(rule(classByID, "cpo", objCommand), "POST", "/ocpi/2.1.1/cpo/commands/{command}/{id}")

	// The operator's API, and UPI QR charging (all the operator's but the
	// gateway's webhook).
	adm := rule(classAdmin, "cpo", "")
	add(adm, "GET", "/admin/commands", "/admin/commands/{id}", "/admin/payments/{authorization_reference}",
		"/admin/financial-advice/flagged", "/admin/parties", "/admin/parties/{id}", "/admin/parties/{id}/rate_limits", "/admin/invitations", "/admin/peers",
		"/admin/webhooks", "/admin/webhooks/{id}", "/admin/webhooks/{id}/deliveries", "/admin/webhooks/{id}/deliveries/{delivery_id}",
		"/admin/traffic", "/admin/traffic/{id}", "/admin/delivery")
	add(adm, "POST", "/admin/financial-advice/{record_id}/resolve", "/admin/parties/{id}/suspend",
		"/admin/parties/{id}/resume", "/admin/parties/{id}/rotate", "/admin/parties/connect", "/admin/invitations", "/admin/invitations/{id}/revoke",
		"/admin/webhooks/{id}/deliveries/{delivery_id}/replay", "/admin/sandbox/reset", "/admin/tariffs/price")
	add(adm, "DELETE", "/admin/parties/{id}")
	add(adm, "PUT", "/admin/parties/{id}/rate_limits")
	const upi = "/ocpi/2.2.1/payments/upi"
	add(adm, "GET", upi+"/qr", upi+"/qr/{qr_ref}", upi+"/qr/{qr_ref}/sticker/{format}", upi+"/refunds",
		upi+"/refunds/{refund_id}", upi+"/payments", upi+"/payments/attention", upi+"/payments/{payment_id}",
		upi+"/receipts/{receipt_id}", upi+"/payments/{payment_id}/receipts")
	add(adm, "POST", upi+"/qr", upi+"/qr/{qr_ref}/disable", upi+"/refunds", upi+"/payments/{payment_id}/resolve",
		upi+"/receipts/{receipt_id}/resend")
	return m
}

// partyIDs are the parties of TestRouteIsolation: A owns the objects, B
// (same role, another country and party) tries to reach them.
var partyIDs = map[string][2]string{"cpo": {"CPA", "CPB"}, "emsp": {"EMA", "EMB"}, "ptp": {"PTA", "PTB"}}

// TestRouteIsolation walks the whole route table and holds every route a
// partner token can reach to the rule that a partner never touches another
// partner's objects (DESIGN §6: another party's object answers 404, as an
// unknown one does). Partner A (a CPO, an eMSP and a PTP in NL) owns a
// location with an EVSE and connector, a tariff, a token, a completed
// session and its CDR, an active session, a command in flight, a webhook
// subscription with one delivery, a payment terminal its CPO has taken and
// a financial advice confirmation;
// partner B of the same role (in DE) then calls every route with A's
// country_code, party_id and object ids, once as itself and once claiming
// A's party in the OCPI-from headers:
//
//   - party and by-id routes answer B with HTTP 404 and an OCPI envelope
//     (or the module's own not-found answer, listed in refusedAs);
//   - after every write B attempts (whatever the class), A's objects read
//     back by A (the command and the parties through the admin API) are
//     exactly as they were;
//   - B's lists (scoped routes) show none of A's private objects while A's
//     same lists do, and a CDR or a command B sends in A's name is refused;
//   - admin routes answer a partner token with 401 (authentication refuses
//     it before any handler runs: the token is not the admin's);
//   - token A reaches versions and credentials and nothing else (401).
//
// A route not in routeRules, or an entry of routeRules that is no route,
// fails the test, so a new route must be classified to land. A 2.1.1 or 2.0 CDR names no
// owner: the hub stores it under the caller's party, so B cannot post one
// in A's name.
//
// It runs on both engines (a walk takes a few seconds each): the owner
// checks of some modules are in their SQL (sessions and CDRs of an eMSP's
// tokens, terminals, commands, webhook subscriptions).
func TestRouteIsolation(t *testing.T) {
	t.Parallel()
	// The walk takes minutes under the race detector: A's command in flight
	// must not time out meanwhile (the hub's own TIMEOUT would read as a
	// change).
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) { walkRoutes(t, h) }, func(o *hubtest.Options) {
		prev := o.Config
		o.Config = func(c *app.Config) {
			if prev != nil {
				prev(c)
			}
			c.CommandTimeoutMargin = time.Hour
		}
	})
}

// walkRoutes is TestRouteIsolation on one hub.
func walkRoutes(t *testing.T, h *hubtest.Hub) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	cpoA := hubtest.Add(t, h, sim.StartCPO, "CPO A", "NL", "CPA")
	cpoB := hubtest.Add(t, h, sim.StartCPO, "CPO B", "DE", "CPB")
	emspA := hubtest.Add(t, h, sim.StartEMSP, "EMSP A", "NL", "EMA")
	emspB := hubtest.Add(t, h, sim.StartEMSP, "EMSP B", "DE", "EMB")
	ptpA := hubtest.Add(t, h, ptpsim.Start, "PTP A", "NL", "PTA")
	ptpB := hubtest.Add(t, h, ptpsim.Start, "PTP B", "DE", "PTB")
	tokenA := map[string]string{"cpo": cpoA.Token(), "emsp": emspA.Token(), "ptp": ptpA.Token()}
	tokenB := map[string]string{"cpo": cpoB.Token(), "emsp": emspB.Token(), "ptp": ptpB.Token()}

	// A's objects. The location has a postal_code: the 2.1.1 shape the
	// legacy routes serve requires one.
	loc := sim.LocationObject("NL", "CPA", "LOC1", "E1")
	loc["postal_code"] = "560001"
	must(cpoA.PutLocation(ctx, "LOC1", loc))
	must(cpoA.PutTariff(ctx, "T1", energyTariff("NL", "CPA", "T1")))
	tok, sid := chargeOnce(t, ctx, cpoA, emspA, "TOK1", "LOC1")
	cdrID := "CDR-" + sid
	// A second session of A's, still ACTIVE: the one B tries to stop.
	active, err := cpoA.StartSession(ctx, map[string]any{"token": tok, "location_id": "LOC1", "evse_uid": "E1", "connector_id": "1"})
	must(err)
	rcv := hubtest.StartWebhookReceiver(t)
	wh := send(t, h, http.MethodPost, "/ocpi/2.2.1/webhooks", emspA.Token(), map[string]any{"url": rcv.URL(), "events": []string{"location.updated"}})
	var sub struct {
		ID string `json:"id"`
	}
	if wh.status != http.StatusCreated || json.Unmarshal(wh.env.Data, &sub) != nil || sub.ID == "" {
		t.Fatalf("webhook create: HTTP %d %s", wh.status, wh.body)
	}
	// A command of eMSP A in flight at CPO A (the CPO never posts its
	// result): its response_url names the id CPO B tries.
	cpoA.OnCommand(func(string, map[string]any) sim.CommandBehavior { return sim.CommandBehavior{NoResult: true} })
	if _, resp, err := emspA.SendCommand(ctx, "UNLOCK_CONNECTOR", map[string]any{"location_id": "LOC1", "evse_uid": "E1", "connector_id": "1"}, nil); err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
		t.Fatalf("command: %v %s", err, bodyOf(resp))
	}
	cmds := cpoA.Commands()
	if len(cmds) != 1 {
		t.Fatalf("CPO A received %d commands", len(cmds))
	}
	responseURL, _ := cmds[0].Body["response_url"].(string)
	commandID := responseURL[strings.LastIndex(responseURL, "/")+1:]
	// A delivery of A's webhook: an EVSE status change.
	must(cpoA.PatchEVSE(ctx, "LOC1", "E1", map[string]any{"status": "CHARGING", "last_updated": ocpi.NewDateTime(time.Now())}))
	_, err = rcv.WaitFor(ctx, 1)
	must(err)
	dl := send(t, h, http.MethodGet, "/ocpi/2.2.1/webhooks/"+sub.ID+"/deliveries", emspA.Token(), nil)
	var deliveries []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(dl.env.Data, &deliveries); err != nil || len(deliveries) != 1 {
		t.Fatalf("deliveries of A's webhook: %v %s", err, dl.body)
	}
	deliveryID := strconv.FormatInt(deliveries[0].ID, 10)
	if resp, err := ptpA.CreateTerminal(ctx, ptpsim.NewTerminal("TERM1", nil)); err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
		t.Fatalf("terminal: %v %s", err, bodyOf(resp))
	}

	// A financial advice confirmation of PTP A's, for a payment the hub does
	// not know: accepted and flagged for the operator.
	if resp, err := ptpA.Confirm(ctx, map[string]any{"id": "FAC1", "authorization_reference": "pta-unknown-payment", "currency": "INR",
		"total_costs": map[string]any{"excl_vat": 10, "incl_vat": 11.8}, "eft_data": []string{"Nr: **** 1234"},
		"capture_status_code": "SUCCESS", "last_updated": ocpi.NewDateTime(time.Now())}); err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
		t.Fatalf("confirmation: %v %s", err, bodyOf(resp))
	}

	// CPO A takes the terminal for its location: another CPO may neither see
	// nor reassign it.
	if resp, err := cpoA.Payments(ctx, http.MethodPatch, "/terminals/TERM1", map[string]any{"location_ids": []string{"LOC1"},
		"last_updated": ocpi.NewDateTime(time.Now())}, nil); err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
		t.Fatalf("terminal assignment: %v %s", err, bodyOf(resp))
	}

	// readBack reads each object as its owner; nothing B does may change it.
	readBack := map[string]struct{ path, token string }{
		objLocation: {"/ocpi/2.2.1/cpo/locations/NL/CPA/LOC1", cpoA.Token()},
		objTariff:   {"/ocpi/2.2.1/cpo/tariffs/NL/CPA/T1", cpoA.Token()},
		objSession:  {"/ocpi/2.2.1/cpo/sessions/NL/CPA/" + sid, cpoA.Token()},
		objCDR:      {"/ocpi/2.2.1/cpo/cdrs/NL/CPA/" + cdrID, cpoA.Token()},
		objToken:    {"/ocpi/2.2.1/emsp/tokens/NL/EMA/TOK1?type=RFID", emspA.Token()},
		objWebhook:  {"/ocpi/2.2.1/webhooks/" + sub.ID, emspA.Token()},
		objTerminal: {"/ocpi/2.2.1/payments/terminals/TERM1", ptpA.Token()},
		objAdvice:   {"/ocpi/2.2.1/payments/financial-advice-confirmations/FAC1", ptpA.Token()},
		objCommand:  {"/admin/commands/" + commandID, hubtest.AdminToken},
		objDelivery: {"/ocpi/2.2.1/webhooks/" + sub.ID + "/deliveries", emspA.Token()},
		// What the operator's routes a partner might try would change.
		"parties":  {"/admin/parties", hubtest.AdminToken},
		"qr codes": {"/ocpi/2.2.1/payments/upi/qr", hubtest.AdminToken},
		"refunds":  {"/ocpi/2.2.1/payments/upi/refunds", hubtest.AdminToken},
	}
	snapshot := func(obj string) string {
		rb := readBack[obj]
		r := send(t, h, http.MethodGet, rb.path, rb.token, nil)
		if r.status != http.StatusOK || r.env.StatusCode != 1000 {
			t.Fatalf("%s read back by its owner: HTTP %d %s", obj, r.status, r.body)
		}
		if obj == objDelivery {
			// Attempts go on in the background: the deliveries are their ids
			// (a replay would add one).
			return strings.Join(deliveryIDs.FindAllString(string(r.env.Data), -1), ",")
		}
		// A partner's last call, and its receivers' health (deliveries go on
		// in the background), are not changes of its registration.
		return lastSeen.ReplaceAllString(string(r.env.Data), "")
	}
	before := map[string]string{}
	for obj := range readBack {
		before[obj] = snapshot(obj)
	}
	// unchanged compares obj with its snapshot; an object that is not in
	// readBack ("" too) compares all of them.
	unchanged := func(pattern, obj string) {
		t.Helper()
		objs := []string{obj}
		if _, seeded := readBack[obj]; !seeded {
			objs = nil
			for o := range readBack {
				objs = append(objs, o)
			}
		}
		for _, o := range objs {
			if got := snapshot(o); got != before[o] {
				t.Errorf("%s changed the %s: %s", pattern, o, firstDifference(before[o], got))
				before[o] = got
			}
		}
	}
	// objData is the body B writes: A's object as A reads it, changed.
	objData := func(obj string) map[string]any {
		var m map[string]any
		if s, ok := before[obj]; ok && strings.HasPrefix(s, "{") && obj != objCommand {
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				t.Fatal(err)
			}
			m["last_updated"] = ocpi.NewDateTime(time.Now().Add(time.Hour))
			m["name"] = "taken over"
			return m
		}
		return map[string]any{}
	}
	// Ids of A's private objects, which no list of B's may show, and which
	// the same lists of A's do show, by the role of the list's caller (a CPO
	// sees no confirmation of a payment the hub does not know).
	private := []string{sid, cdrID, sub.ID, "TERM1", `"TOK1"`, "FAC1"}
	listed := map[string]string{"emsp " + objSession: sid, "emsp " + objCDR: cdrID, "emsp " + objWebhook: sub.ID,
		"ptp " + objTerminal: "TERM1", "cpo " + objTerminal: "TERM1", "ptp " + objAdvice: "FAC1"}

	vals := map[string]string{
		"location_id": "LOC1", "evse_uid": "E1", "connector_id": "1", "tariff_id": "T1", "uid": "TOK1", "token_uid": "TOK1",
		"session_id": sid, "cdr_id": cdrID, "command": "START_SESSION", "terminal_id": "TERM1",
		"financial_advice_confirmation_id": "FAC1", "delivery_id": deliveryID,
		"version": "2.9", "format": "pdf",
	}
	idOf := map[string]string{objSession: sid, objCDR: cdrID, objWebhook: sub.ID, objCommand: commandID, objDelivery: sub.ID}
	// An exchange of A's CPO and one of A's eMSP, recorded by the traffic
	// inspector.
	must(h.App.Traffic.Flush(ctx))
	for _, name := range []string{"CPO A", "EMSP A"} {
		xs, _, err := traffic.List(ctx, h.App.DB.Read(), traffic.Filter{Partner: name, Limit: 1})
		must(err)
		if len(xs) != 1 {
			t.Fatalf("no exchange of %s recorded", name)
		}
		private = append(private, `"id":`+strconv.FormatInt(xs[0].ID, 10)+`,`)
		if name == "CPO A" {
			idOf[objTraffic] = strconv.FormatInt(xs[0].ID, 10)
		}
	}
	ownerName := map[string]string{"cpo": "CPO ", "emsp": "EMSP ", "ptp": "PTP "}
	inv, err := h.Parties.Invite(ctx, "registering", 0, false)
	must(err)

	// Valid requests where the body or the query is checked before the
	// object is looked up, so that only access can refuse them.
	profile := map[string]any{"charging_rate_unit": "W", "charging_profile_period": []any{map[string]any{"start_period": 0, "limit": 11000}}}
	const cb = "http://127.0.0.1:9/callback"
	valid := map[string]struct {
		query string
		body  any
	}{
		"PUT /ocpi/2.2.1/emsp/sessions/{session_id}/charging_preferences": {body: map[string]any{"profile_type": "REGULAR"}},
		"GET /ocpi/2.2.1/emsp/chargingprofiles/{session_id}":              {query: "?duration=60&response_url=" + cb},
		"PUT /ocpi/2.2.1/emsp/chargingprofiles/{session_id}":              {body: map[string]any{"charging_profile": profile, "response_url": cb}},
		"DELETE /ocpi/2.2.1/emsp/chargingprofiles/{session_id}":           {query: "?response_url=" + cb},
		"PUT /ocpi/2.2.1/cpo/chargingprofiles/{session_id}": {body: map[string]any{
			"start_date_time": ocpi.NewDateTime(time.Now()), "charging_profile": profile}},
		"POST /ocpi/2.2.1/cpo/commands/{command}/{id}":         {body: map[string]any{"result": "ACCEPTED"}},
		"POST /ocpi/2.1.1/cpo/commands/{command}/{id}":         {body: map[string]any{"result": "ACCEPTED"}},
		"POST /ocpi/2.2.1/cpo/chargingprofiles/{command}/{id}": {body: map[string]any{"result": "ACCEPTED"}},
	}

	// Where a module answers "not found" otherwise than with HTTP 404, by
	// the role of the caller and the route. The charging profiles module
	// answers an unknown session with HTTP 200, result UNKNOWN_SESSION
	// (chargingprofiles.md): another eMSP's session gets exactly that answer. Terminal ids are unique across the hub
	// (the PTP chooses them, CPOs address terminals by id alone), so a PTP's
	// create (POST or PUT) of an id another PTP holds is refused with 2001
	// naming terminal_id, without saying who holds it; it changes nothing.
	// The terminal reads 404 for it, and its PATCH answers 404 as for an
	// unknown terminal (no exception).
	unknownSession := func(r reply) bool {
		var d struct {
			Result string `json:"result"`
		}
		return r.status == http.StatusOK && json.Unmarshal(r.env.Data, &d) == nil && d.Result == "UNKNOWN_SESSION"
	}
	takenTerminalID := func(r reply) bool {
		return r.status == http.StatusOK && r.env.StatusCode == ocpi.StatusInvalidParams && r.env.Error != nil && r.env.Error.Details != nil &&
			r.env.Error.Details.Field == "terminal_id"
	}
	refusedAs := map[string]func(reply) bool{
		"emsp GET /ocpi/2.2.1/emsp/chargingprofiles/{session_id}":    unknownSession,
		"emsp PUT /ocpi/2.2.1/emsp/chargingprofiles/{session_id}":    unknownSession,
		"emsp DELETE /ocpi/2.2.1/emsp/chargingprofiles/{session_id}": unknownSession,
	}
	for _, v := range []string{"2.2.1", "2.3.0"} {
		for _, m := range []string{"POST", "PUT"} {
			refusedAs["ptp "+m+" /ocpi/"+v+"/payments/terminals/{terminal_id}"] = takenTerminalID
		}
	}

	rules := routeRules()
	seen := map[string]bool{}
	counts := map[accessClass]int{}
	// Creates in the scoped class go last: B may create objects of its own
	// under ids A uses (confirmation ids are per PTP), after which B would
	// read its own object at A's id.
	routes := h.Server.Routes()
	late := func(r httpapi.Route) bool {
		return rules[r.Pattern].class == classScoped && !strings.HasPrefix(r.Pattern, "GET ")
	}
	sort.SliceStable(routes, func(i, j int) bool { return !late(routes[i]) && late(routes[j]) })
	for _, r := range routes {
		seen[r.Pattern] = true
		rule, ok := rules[r.Pattern]
		if !ok {
			t.Errorf("route %q is not classified: add it to routeRules (internal/httpapi/isolation_test.go)", r.Pattern)
			continue
		}
		counts[rule.class]++
		if !accessFits(rule.class, r.Access) {
			t.Errorf("route %q: its row says access %s, routeRules class %s", r.Pattern, r.Access, rule.class)
		}
		method, path, ok := strings.Cut(r.Pattern, " ")
		if !ok {
			continue // a fallback: public, answers 404 or 405
		}
		owner := partyIDs[strings.Fields(rule.as + " cpo")[0]][0]
		if rule.obj == objToken || rule.obj == objWebhook {
			owner = partyIDs["emsp"][0]
		}
		path = wildcard.ReplaceAllStringFunc(path, func(w string) string {
			switch name := wildcard.FindStringSubmatch(w)[1]; name {
			case "cc", "country_code":
				return "NL"
			case "pid", "party_id":
				if rule.class == classAdmin {
					return "X1"
				}
				return owner
			case "id":
				if id, ok := idOf[rule.obj]; ok {
					return id
				}
				return "X1"
			default:
				if v, ok := vals[name]; ok {
					return v
				}
				return "X1"
			}
		})
		if strings.HasPrefix(path, "/ocpi/2.2.1/emsp/tokens/") {
			path += "?type=RFID"
		}
		mutating := method != http.MethodGet
		// B calls again claiming to act for A's party (the OCPI-from headers
		// a hub honours only for a party of the caller's own).
		asA := []string{"OCPI-from-country-code", "NL", "OCPI-from-party-id", owner}
		override, hasOverride := valid[r.Pattern]
		path += override.query

		// Token A reaches versions and credentials only.
		if rule.class != classPublic {
			got := send(t, h, method, path, inv.Token, objData(rule.obj))
			if rule.class == classRegistering && method == http.MethodGet && got.status == http.StatusUnauthorized {
				t.Errorf("%s with token A: HTTP 401, want it reachable", r.Pattern)
			}
			if rule.class != classRegistering && got.status != http.StatusUnauthorized {
				t.Errorf("%s with token A: HTTP %d, want 401", r.Pattern, got.status)
			}
		}

		switch rule.class {
		case classPublic, classRegistering:
			continue
		case classAdmin:
			got := send(t, h, method, path, tokenB[rule.as], map[string]any{})
			if got.status != http.StatusUnauthorized || got.env.StatusCode != ocpi.StatusClientError {
				t.Errorf("%s with a partner token: HTTP %d status_code %d, want 401 and 2000", r.Pattern, got.status, got.env.StatusCode)
			}
			if mutating {
				unchanged(r.Pattern, "") // all of them
			}
		case classParty, classByID:
			for _, call := range calls(rule.as, asA) {
				by := call.as + claim(call.from)
				var body any
				switch {
				case hasOverride:
					body = override.body
				case call.as == "cpo" && rule.obj == objTerminal:
					// What a CPO may change of a terminal: its assignment.
					body = map[string]any{"location_ids": []string{"LOC1"}, "last_updated": ocpi.NewDateTime(time.Now())}
				case mutating:
					body = objData(rule.obj)
				}
				got := send(t, h, method, path, tokenB[call.as], body, call.from...)
				if refused, ok := refusedAs[call.as+" "+r.Pattern]; ok {
					if !refused(got) {
						t.Errorf("%s by another %s for A's object: HTTP %d %s, want the module's refusal", r.Pattern, by, got.status, got.body)
					}
				} else if got.status != http.StatusNotFound || got.env.StatusCode < 2000 || got.env.StatusCode > 2999 {
					t.Errorf("%s by another %s for A's object: HTTP %d %s, want 404 with a 2xxx envelope", r.Pattern, by, got.status, got.body)
				}
				if mutating {
					unchanged(r.Pattern, rule.obj)
				}
			}
		case classScoped:
			for _, call := range calls(rule.as, asA) {
				by := call.as + claim(call.from)
				var body any
				switch {
				case rule.obj == objWebhook && method == http.MethodPost:
					body = map[string]any{"url": rcv.URL(), "events": []string{"location.updated"}}
				case strings.Contains(path, "/commands/"):
					body = map[string]any{"response_url": "http://127.0.0.1:9/result", "token": tok, "location_id": "LOC1",
						"evse_uid": "E1", "connector_id": "1"}
				case mutating:
					body = objData(rule.obj)
				}
				got := send(t, h, method, path, tokenB[call.as], body, call.from...)
				if !mutating {
					if id, ok := listed[call.as+" "+rule.obj]; ok && call.from == nil {
						// The control: the same list of A's shows it.
						if own := send(t, h, method, path, tokenA[call.as], nil); !bytes.Contains(own.body, []byte(id)) {
							t.Errorf("%s by A's %s does not show its own %s: %s", r.Pattern, call.as, id, own.body)
						}
					}
					for _, id := range private {
						if bytes.Contains(got.body, []byte(id)) {
							t.Errorf("%s shows another %s A's %s: %s", r.Pattern, by, id, got.body)
						}
					}
					continue
				}
				if (rule.obj == objCDR || strings.Contains(path, "/commands/")) && got.env.StatusCode == 1000 {
					t.Errorf("%s by another %s in A's name: accepted: %s", r.Pattern, by, got.body)
				}
				unchanged(r.Pattern, rule.obj)
			}
		case classOwn:
			for _, call := range calls(rule.as, asA) {
				by := call.as + claim(call.from)
				for _, who := range []struct{ token, name string }{
					{tokenB[call.as], ownerName[call.as] + "B"},
					{tokenA[call.as], ownerName[call.as] + "A"},
				} {
					got := send(t, h, method, path, who.token, nil, call.from...)
					var env struct {
						Data []struct {
							Partner string `json:"partner"`
						} `json:"data"`
					}
					if err := json.Unmarshal(got.body, &env); err != nil || len(env.Data) == 0 {
						t.Errorf("%s by %s: no own records: %v %s", r.Pattern, who.name, err, got.body)
						continue
					}
					for _, x := range env.Data {
						if x.Partner != who.name {
							t.Errorf("%s by %s (%s) shows %s's record: %s", r.Pattern, who.name, by, x.Partner, got.body)
							break
						}
					}
				}
			}
		case classShared:
			got := send(t, h, method, path, tokenB[rule.as], nil)
			if got.status == http.StatusUnauthorized {
				t.Errorf("%s by a connected %s: HTTP 401", r.Pattern, rule.as)
			}
			if mutating {
				unchanged(r.Pattern, rule.obj)
			}
		}
	}
	// Commands of B's that name A's active session reach no CPO: they are
	// answered as for an unknown session (the commands module's not found),
	// and CPO A has received only A's own command.
	for _, c := range []struct{ path, as string }{
		{"/ocpi/2.2.1/emsp/commands/STOP_SESSION", "emsp"},
		{"/ocpi/2.1.1/emsp/commands/STOP_SESSION", "emsp"},
		{"/ocpi/2.3.0/ptp/commands/STOP_SESSION", "ptp"},
	} {
		for _, call := range calls(c.as, []string{"OCPI-from-country-code", "NL", "OCPI-from-party-id", partyIDs[c.as][0]}) {
			got := send(t, h, http.MethodPost, c.path, tokenB[call.as], map[string]any{"response_url": "http://127.0.0.1:9/result", "session_id": active}, call.from...)
			var d struct {
				Result string `json:"result"`
			}
			if got.env.StatusCode == 1000 && (json.Unmarshal(got.env.Data, &d) != nil || d.Result != "UNKNOWN_SESSION") {
				t.Errorf("POST %s of A's session by another %s: accepted: %s", c.path, call.as+claim(call.from), got.body)
			}
		}
	}
	if n := len(cpoA.Commands()); n != 1 {
		t.Errorf("CPO A received %d commands, want only A's own: %+v", n, cpoA.Commands())
	}
	// The control: A's own STOP_SESSION of it reaches CPO A.
	if _, resp, err := emspA.SendCommand(ctx, "STOP_SESSION", map[string]any{"session_id": active}, nil); err != nil || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
		t.Fatalf("A's STOP_SESSION: %v %s", err, bodyOf(resp))
	}
	if n := len(cpoA.Commands()); n != 2 {
		t.Errorf("after A's STOP_SESSION CPO A received %d commands, want 2", n)
	}

	for p := range rules {
		if !seen[p] {
			t.Errorf("routeRules classifies %q, which is not a route (a typo, or a route that was removed)", p)
		}
	}
	for obj := range readBack {
		unchanged("the walk", obj)
	}
	t.Logf("routes by access class: %v", counts)
}

var (
	lastSeen    = regexp.MustCompile(`"last_seen_at":"[^"]*",?|,?"health":\{[^{}]*\}`)
	deliveryIDs = regexp.MustCompile(`"id":[0-9]+`)
)

// bCall is one call of partner B: its role, and the OCPI-from headers it
// sends (none, or A's party).
type bCall struct {
	as   string
	from []string
}

// calls lists B's calls of a route: each role in roles, without and with a
// claim of A's party.
func calls(roles string, asA []string) []bCall {
	var out []bCall
	for _, as := range strings.Fields(roles) {
		out = append(out, bCall{as: as}, bCall{as: as, from: asA})
	}
	return out
}

// claim describes a call of B's that names A's party in OCPI-from.
func claim(from []string) string {
	if from == nil {
		return ""
	}
	return " claiming A's party in OCPI-from"
}

// reply is a hub's answer as TestRouteIsolation reads it.
type reply struct {
	status int
	body   []byte
	env    *ocpi.Envelope
}

// send calls the hub with a partner's (or the admin's) token and a JSON
// body; every answer must be an OCPI envelope.
func send(t *testing.T, h *hubtest.Hub, method, path, token string, body any, header ...string) reply {
	t.Helper()
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	hdr := http.Header{"Authorization": {ocpi.EncodeToken(token, true)}}
	for i := 0; i+1 < len(header); i += 2 {
		hdr.Set(header[i], header[i+1])
	}
	resp := h.Do(t, method, path, "", raw, hdr)
	env, err := ocpi.DecodeEnvelope(resp.Body)
	if err != nil {
		t.Errorf("%s %s: HTTP %d, not an envelope: %v: %s", method, path, resp.HTTPStatus, err, resp.Body)
		env = &ocpi.Envelope{}
	}
	return reply{status: resp.HTTPStatus, body: resp.Body, env: env}
}

// bodyOf is a simulator's answer for a failure message.
func bodyOf(resp *ocpiclient.Response) string {
	if resp == nil {
		return ""
	}
	return string(resp.Body)
}

// firstDifference shows where two snapshots part: the text around the first
// differing byte of each.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	around := func(s string) string {
		lo, hi := max(0, i-160), min(len(s), i+160)
		return s[lo:hi]
	}
	return fmt.Sprintf("at byte %d\nbefore …%s…\nafter  …%s…", i, around(a), around(b))
}
