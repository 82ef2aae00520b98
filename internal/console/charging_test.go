package console_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestEVSEPages: every EVSE of the directory with its status and CPO,
// counted per status, filtered by status and CPO, fifty a page; location
// names are escaped.
func TestEVSEPages(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60*time.Second)
		acme := startCPO(t, h, "Acme Charging", "ACM")
		other := startCPO(t, h, "Other Power", "OTH")
		statuses := []string{"CHARGING", "CHARGING", "CHARGING"}
		for len(statuses) < 55 {
			statuses = append(statuses, "AVAILABLE")
		}
		now := time.Now()
		putBLR01(t, ctx, acme, "Koramangala <b>Hub</b>", now, statuses...)
		if err := other.PutLocation(ctx, "DEL01", sim.SampleLocation("IN", "OTH", "DEL01", "Aerocity", "New Delhi", "28.548764", "77.121262", now, "OUTOFORDER")); err != nil {
			t.Fatal(err)
		}
		c := signedIn(t, h)
		p := c.get("/console/evses")
		if p.status != http.StatusOK {
			t.Fatalf("EVSEs: HTTP %d\n%s", p.status, p.body)
		}
		for _, want := range []string{`data-status="AVAILABLE">AVAILABLE 52<`, `data-status="CHARGING">CHARGING 3<`, `data-status="OUTOFORDER">OUTOFORDER 1<`,
			"56 EVSEs", "1–50 of 56", "Koramangala &lt;b&gt;Hub&lt;/b&gt;", `href="/console/evses?page=2"`} {
			if !strings.Contains(p.body, want) {
				t.Errorf("EVSEs page lacks %q", want)
			}
		}
		if strings.Contains(p.body, "<b>Hub</b>") {
			t.Error("a location name is not escaped")
		}
		if n := strings.Count(p.body, "<tr><td class=\"mono\">"); n != 50 {
			t.Errorf("%d rows on the first page, want 50", n)
		}
		if p2 := c.get("/console/evses?page=2"); !strings.Contains(p2.body, "51–56 of 56") || strings.Count(p2.body, "<tr><td class=\"mono\">") != 6 {
			t.Errorf("second page:\n%s", p2.body)
		}
		oo := c.get("/console/evses?status=OUTOFORDER")
		if !strings.Contains(oo.body, "DEL01-E1") || strings.Contains(oo.body, "BLR01-E") || !strings.Contains(oo.body, `href="/console/directory/IN/OTH/DEL01"`) {
			t.Errorf("status filter:\n%s", oo.body)
		}
		byCPO := c.get("/console/evses?cpo=IN-OTH")
		if !strings.Contains(byCPO.body, "DEL01-E1") || strings.Contains(byCPO.body, "BLR01-E") || strings.Contains(byCPO.body, "AVAILABLE 52") || !strings.Contains(byCPO.body, "1 EVSEs") {
			t.Errorf("CPO filter:\n%s", byCPO.body)
		}
		if p := c.get("/console/evses?cpo=nonsense"); p.status != http.StatusBadRequest {
			t.Errorf("malformed CPO filter: HTTP %d", p.status)
		}
	})
}

func startCPO(t *testing.T, h *hubtest.Hub, name, pid string) *sim.CPO {
	t.Helper()
	cpo := registeredCPO(t, h, name, pid)
	t.Cleanup(cpo.Wait)
	return cpo
}

// TestSessionAndCDRPages: a session an eMSP starts with a command and the
// CPO completes is listed with its energy and cost, links to its command
// and its CDR; live sessions come first; filters by status and party keep
// other CPOs' sessions out; the charts count the sessions and energy of
// each day on the hub's clock; CDRs list and show their costs and link
// back to their session.
func TestSessionAndCDRPages(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 90*time.Second)
		fake := h.Clock.(*clock.Fake)
		acme := startCPO(t, h, "Acme Charging", "ACM")
		other := startCPO(t, h, "Other Power", "OTH")
		volt := addVolt(t, h)
		putBLR01(t, ctx, acme, "Koramangala Hub", time.Now(), "AVAILABLE")
		token := volt.NewToken("TOK1", "APP_USER", "NEVER")
		if _, err := volt.PutToken(ctx, token); err != nil {
			t.Fatal(err)
		}

		// Started by a command, then completed with a CDR that carries its
		// tariff: 12.5 kWh at 18.50 (18 % VAT) = 231.25 (272.875).
		acme.SetPlan(sim.SessionPlan{Tariffs: []map[string]any{hubtest.Tariff("IN", "ACM", "T-ENERGY", "2025-01-01T00:00:00Z")}})
		uid, resp, err := volt.SendCommand(ctx, "START_SESSION", map[string]any{"token": token, "location_id": "BLR01", "evse_uid": "BLR01-E1",
			"connector_id": "1", "authorization_reference": "AUTH-CONSOLE-1"}, nil)
		if err != nil || resp.HTTPStatus != http.StatusOK {
			t.Fatalf("START_SESSION: %v %v", resp, err)
		}
		if res, err := volt.WaitResult(ctx, uid); err != nil || res != "ACCEPTED" {
			t.Fatalf("result: %q %v", res, err)
		}
		acme.Wait()
		started, err := h.Sessions.FindByAuthorizationReference(ctx, "AUTH-CONSOLE-1")
		if err != nil || len(started) != 1 {
			t.Fatalf("the started session: %v %v", started, err)
		}
		sid := started[0].ID
		if err := acme.StopSession(ctx, sid); err != nil {
			t.Fatal(err)
		}

		// Two sessions two days ago on the hub's clock, one still live, at
		// another CPO; one 40 days ago (outside the charts). The clock is
		// taken to the last half minute of its day (UTC, the charts' days):
		// sessions a minute apart from the time of day fell on two days
		// when the test ran then. They start at noon.
		now := fake.Now().UTC()
		fake.Add(now.Truncate(24 * time.Hour).Add(24*time.Hour - 30*time.Second).Sub(now))
		day := fake.Now().UTC().Add(-48 * time.Hour).Truncate(24 * time.Hour).Add(12 * time.Hour)
		sess := func(cc, pid, id, status, kwh string, start time.Time) map[string]any {
			ts := start.UTC().Format(time.RFC3339)
			return map[string]any{"country_code": cc, "party_id": pid, "id": id, "start_date_time": ts, "kwh": kwh,
				"cdr_token":   map[string]any{"country_code": "IN", "party_id": "VLT", "uid": "TOK1", "type": "APP_USER", "contract_id": "C-TOK1"},
				"auth_method": "WHITELIST", "location_id": "DEL01", "evse_uid": "DEL01-E1", "connector_id": "1", "currency": "INR",
				"status": status, "last_updated": start.Add(time.Hour).UTC().Format(time.RFC3339), "meter_id": "<script>alert(1)</script>",
				"total_cost": map[string]any{"excl_vat": "100.00", "incl_vat": "118.00"}}
		}
		if err := other.PutSession(ctx, sess("IN", "OTH", "OTH-LIVE", "ACTIVE", "7.25", day)); err != nil {
			t.Fatal(err)
		}
		if err := other.PutSession(ctx, sess("IN", "OTH", "OTH-DONE", "COMPLETED", "12.5", day.Add(time.Minute))); err != nil {
			t.Fatal(err)
		}
		if err := other.PutSession(ctx, sess("IN", "OTH", "OTH-OLD", "COMPLETED", "3", fake.Now().AddDate(0, 0, -40))); err != nil {
			t.Fatal(err)
		}

		c := signedIn(t, h)
		p := c.get("/console/sessions")
		if p.status != http.StatusOK {
			t.Fatalf("sessions: HTTP %d\n%s", p.status, p.body)
		}
		link := `href="/console/sessions/IN/ACM/` + sid + `"`
		for _, want := range []string{link, "1–4 of 4", "12.5 kWh", "231.25 INR"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("sessions page lacks %q", want)
			}
		}
		// The live session first, though updated before the completed ones.
		if live, done := strings.Index(p.body, "OTH-LIVE"), strings.Index(p.body, sid); live < 0 || done < 0 || live > done {
			t.Errorf("the ACTIVE session is not listed first")
		}
		label := day.UTC().Format("Jan 2")
		for _, want := range []string{"Sessions · " + label + ": 2<", "Energy · " + label + ": 19.8 kWh<"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("charts lack %q", want)
			}
		}
		if strings.Contains(p.body, "<script>alert(1)") {
			t.Error("a meter id is not escaped")
		}
		if o := c.get("/console/"); !regexp.MustCompile(`href="/console/sessions\?status=ACTIVE"[^>]*>\s*<span class="card-label">Active sessions</span>\s*<span class="card-value">1<`).MatchString(o.body) {
			t.Errorf("the overview does not count one active session")
		}
		if f := c.get("/console/sessions?status=ACTIVE"); !strings.Contains(f.body, "OTH-LIVE") || strings.Contains(f.body, "OTH-DONE") || strings.Contains(f.body, link) {
			t.Errorf("status filter:\n%s", f.body)
		}
		if f := c.get("/console/sessions?party=IN-ACM"); !strings.Contains(f.body, link) || strings.Contains(f.body, "OTH-") {
			t.Errorf("party filter (CPO):\n%s", f.body)
		}
		if f := c.get("/console/sessions?party=IN-VLT"); !strings.Contains(f.body, link) || !strings.Contains(f.body, "OTH-LIVE") {
			t.Errorf("party filter (eMSP)")
		}
		if f := c.get("/console/sessions?status=NOPE"); f.status != http.StatusBadRequest {
			t.Errorf("unknown status: HTTP %d", f.status)
		}

		// The charts follow the hub's clock: 29 days later, that day is
		// out of the window.
		fake.Add(29 * 24 * time.Hour)
		c.signIn() // the console session ended meanwhile
		if later := c.get("/console/sessions"); strings.Contains(later.body, "Sessions · "+label+":") {
			t.Error("the charts do not follow the hub's clock")
		}

		detail := c.get("/console/sessions/IN/ACM/" + sid)
		m := regexp.MustCompile(`href="/console/commands/([^"]+)">Start Session<`).FindStringSubmatch(detail.body)
		if detail.status != http.StatusOK || m == nil {
			t.Fatalf("session page: HTTP %d, no link to its command\n%s", detail.status, detail.body)
		}
		for _, want := range []string{"COMPLETED", "AUTH-CONSOLE-1", "231.25 INR excl. VAT", "272.88 INR incl. VAT", "ENERGY 12.5",
			`href="/console/cdrs/IN/ACM/CDR-` + sid + `"`, `href="/console/directory/IN/ACM/BLR01"`, "IN/VLT"} {
			if !strings.Contains(detail.body, want) {
				t.Errorf("session page lacks %q", want)
			}
		}
		if cmd := c.get("/console/commands/" + m[1]); !strings.Contains(cmd.body, "AUTH-CONSOLE-1") {
			t.Errorf("the linked command is another one")
		}
		live := c.get("/console/sessions/IN/OTH/OTH-LIVE")
		if !strings.Contains(live.body, "&lt;script&gt;alert(1)&lt;/script&gt;") || strings.Contains(live.body, "<script>alert(1)") ||
			!strings.Contains(live.body, "No CDR yet") || !strings.Contains(live.body, "No command through the hub") {
			t.Errorf("live session page:\n%s", live.body)
		}
		if p := c.get("/console/sessions/IN/OTH/NOPE"); p.status != http.StatusNotFound {
			t.Errorf("unknown session: HTTP %d", p.status)
		}

		// CDRs.
		cdrs := c.get("/console/cdrs")
		cdrLink := `href="/console/cdrs/IN/ACM/CDR-` + sid + `"`
		if cdrs.status != http.StatusOK || !strings.Contains(cdrs.body, cdrLink) || !strings.Contains(cdrs.body, "272.88 INR") || !strings.Contains(cdrs.body, "1–1 of 1") {
			t.Fatalf("CDRs page: HTTP %d\n%s", cdrs.status, cdrs.body)
		}
		if f := c.get("/console/cdrs?party=IN-OTH"); strings.Contains(f.body, cdrLink) || !strings.Contains(f.body, "No CDRs") {
			t.Errorf("party filter keeps another party's CDR")
		}
		if f := c.get("/console/cdrs?party=IN-VLT"); !strings.Contains(f.body, cdrLink) {
			t.Errorf("party filter (eMSP) drops the CDR")
		}
		// The ranges around the day of the CDR's last_updated, which the
		// filter reads (the day the test began may be over).
		stored, err := h.CDRs.Find(ctx, cdr.Ref{CountryCode: "IN", PartyID: "ACM", ID: "CDR-" + sid})
		if err != nil {
			t.Fatal(err)
		}
		today := stored.CDR.LastUpdated.UTC()
		if f := c.get("/console/cdrs?from=" + today.AddDate(0, 0, -1).Format(time.DateOnly) + "&to=" + today.Format(time.DateOnly)); !strings.Contains(f.body, cdrLink) {
			t.Errorf("date range that holds the CDR drops it")
		}
		if f := c.get("/console/cdrs?from=" + today.AddDate(0, 0, 1).Format(time.DateOnly)); strings.Contains(f.body, cdrLink) {
			t.Errorf("date range after the CDR keeps it")
		}
		if f := c.get("/console/cdrs?to=" + today.AddDate(0, 0, -1).Format(time.DateOnly)); strings.Contains(f.body, cdrLink) {
			t.Errorf("date range before the CDR keeps it")
		}
		if f := c.get("/console/cdrs?from=yesterday"); f.status != http.StatusBadRequest {
			t.Errorf("malformed date: HTTP %d", f.status)
		}
		cd := c.get("/console/cdrs/IN/ACM/CDR-" + sid)
		for _, want := range []string{"<th>Total</th><td>231.25 INR</td><td>272.88 INR</td>", "12.5 kWh", link, ">match<", "ENERGY 12.5 · TIME"} {
			if !strings.Contains(cd.body, want) {
				t.Errorf("CDR page lacks %q", want)
			}
		}
		// The hub priced the CDR from its connector's tariff: it matches,
		// and the page says how.
		for _, want := range []string{`id="hub-price"`, "<th>Hub&#39;s price</th><td>231.25 INR</td>", ">matches<", `id="price-steps"`} {
			if !strings.Contains(cd.body, want) {
				t.Errorf("CDR page lacks %q", want)
			}
		}
		if f := c.get("/console/cdrs?price=ok"); !strings.Contains(f.body, cdrLink) {
			t.Errorf("price filter ok drops the CDR")
		}
		if f := c.get("/console/cdrs?price=mismatch"); strings.Contains(f.body, cdrLink) {
			t.Errorf("price filter mismatch keeps a matching CDR")
		}
		if f := c.get("/console/cdrs?price=cheap"); f.status != http.StatusBadRequest {
			t.Errorf("unknown price filter: HTTP %d", f.status)
		}
		if p := c.get("/console/cdrs/IN/ACM/NOPE"); p.status != http.StatusNotFound {
			t.Errorf("unknown CDR: HTTP %d", p.status)
		}
	}, func(o *hubtest.Options) { o.Clock = clock.NewFake(time.Now()) })
}

// TestTokenPage: the tokens eMSPs push are listed with their issuer,
// validity and whitelist, and filtered by each; issuers are escaped.
func TestTokenPage(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60*time.Second)
		volt := hubtest.Add(t, h, sim.StartEMSP, "Volt <i>Mobility</i>", "IN", "VLT")
		other := hubtest.Add(t, h, sim.StartEMSP, "Other", "IN", "OTM")
		bad := volt.NewToken("TOK_BAD", "RFID", "ALWAYS")
		bad["valid"] = false
		for _, tok := range []map[string]any{volt.NewToken("TOK-GOOD", "APP_USER", "NEVER"), bad, other.NewToken("OTHER-1", "RFID", "ALLOWED")} {
			e := volt
			if tok["party_id"] == "OTM" {
				e = other
			}
			if _, err := e.PutToken(ctx, tok); err != nil {
				t.Fatal(err)
			}
		}
		c := signedIn(t, h)
		p := c.get("/console/tokens")
		if p.status != http.StatusOK || !strings.Contains(p.body, "1–3 of 3") || !strings.Contains(p.body, "Volt &lt;i&gt;Mobility&lt;/i&gt;") ||
			strings.Contains(p.body, "<i>Mobility") {
			t.Fatalf("tokens: HTTP %d\n%s", p.status, p.body)
		}
		check := func(query string, want, not []string) {
			t.Helper()
			body := c.get("/console/tokens?" + query).body
			for _, w := range want {
				if !strings.Contains(body, ">"+w+"<") {
					t.Errorf("%s: %s missing", query, w)
				}
			}
			for _, n := range not {
				if strings.Contains(body, ">"+n+"<") {
					t.Errorf("%s: %s kept", query, n)
				}
			}
		}
		check("party=IN-VLT", []string{"TOK-GOOD", "TOK_BAD"}, []string{"OTHER-1"})
		check("valid=false", []string{"TOK_BAD"}, []string{"TOK-GOOD", "OTHER-1"})
		check("whitelist=ALLOWED", []string{"OTHER-1"}, []string{"TOK-GOOD", "TOK_BAD"})
		check("uid=tok-", []string{"TOK-GOOD"}, []string{"TOK_BAD", "OTHER-1"}) // '-' literal, case-insensitive
		check("uid=TOK_", []string{"TOK_BAD"}, []string{"TOK-GOOD"})            // '_' is no wildcard
		if p := c.get("/console/tokens?whitelist=SOMETIMES"); p.status != http.StatusBadRequest {
			t.Errorf("unknown whitelist: HTTP %d", p.status)
		}
	})
}
