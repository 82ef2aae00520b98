package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// client is a browser without JavaScript: cookies, no automatic redirects.
type client struct {
	t    *testing.T
	h    *hubtest.Hub
	http *http.Client
}

func newClient(t *testing.T, h *hubtest.Hub) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, h: h, http: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// signedIn is a client of h's console signed in with the admin token.
func signedIn(t *testing.T, h *hubtest.Hub) *client {
	t.Helper()
	c := newClient(t, h)
	c.signIn()
	return c
}

type page struct {
	status   int
	location string
	body     string
	header   http.Header
}

func (c *client) do(method, path string, form url.Values, hdr ...string) page {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.h.PublicURL()+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, location: resp.Header.Get("Location"), body: string(b), header: resp.Header}
}

func (c *client) get(path string) page { c.t.Helper(); return c.do(http.MethodGet, path, nil) }

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token of the forms on a page.
func csrf(t *testing.T, p page) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token on the page:\n%s", p.body)
	}
	return m[1]
}

// signIn signs in with the admin token through the form.
func (c *client) signIn() {
	c.t.Helper()
	form := c.get("/console/login")
	p := c.do(http.MethodPost, "/console/login", url.Values{"csrf": {csrf(c.t, form)}, "token": {hubtest.AdminToken}, "next": {"/"}})
	if p.status != http.StatusSeeOther || p.location != "/console/" {
		c.t.Fatalf("sign in: HTTP %d → %q\n%s", p.status, p.location, p.body)
	}
}

// TestSignIn: pages need a session; the form refuses a wrong token and a
// forged form, accepts the admin token with a hardened cookie, and signing
// out ends the session on the server.
func TestSignIn(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		c := newClient(t, h)
		if p := c.get("/console/parties?status=CONNECTED"); p.status != http.StatusSeeOther || p.location != "/console/login?next=%2Fparties%3Fstatus%3DCONNECTED" {
			t.Fatalf("unsigned page: HTTP %d → %q", p.status, p.location)
		}
		if p := c.get("/console"); p.status != http.StatusSeeOther || p.location != "/console/login?next=%2F" {
			t.Errorf("/console: HTTP %d → %q", p.status, p.location)
		}
		form := c.get("/console/login")
		if form.status != http.StatusOK || !strings.Contains(form.body, `name="token"`) {
			t.Fatalf("sign-in form: HTTP %d", form.status)
		}
		if csp := form.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("CSP %q", csp)
		}
		tok := csrf(t, form)

		// Wrong token: 401, no session.
		p := c.do(http.MethodPost, "/console/login", url.Values{"csrf": {tok}, "token": {"not-the-admin-token"}})
		if p.status != http.StatusUnauthorized || !strings.Contains(p.body, "not the admin token") {
			t.Errorf("wrong token: HTTP %d", p.status)
		}
		// A partner's token is no admin token either.
		cpo := registeredCPO(t, h, "Acme", "ACM")
		tok = csrf(t, c.get("/console/login"))
		if p := c.do(http.MethodPost, "/console/login", url.Values{"csrf": {tok}, "token": {cpo.Token()}}); p.status != http.StatusUnauthorized {
			t.Errorf("partner token: HTTP %d", p.status)
		}
		// A forged form (no CSRF cookie match, another origin).
		if p := c.do(http.MethodPost, "/console/login", url.Values{"csrf": {"forged"}, "token": {hubtest.AdminToken}}); p.status != http.StatusForbidden {
			t.Errorf("forged CSRF: HTTP %d", p.status)
		}
		tok = csrf(t, c.get("/console/login"))
		if p := c.do(http.MethodPost, "/console/login", url.Values{"csrf": {tok}, "token": {hubtest.AdminToken}}, "Origin", "https://evil.example"); p.status != http.StatusForbidden {
			t.Errorf("cross-origin sign-in: HTTP %d", p.status)
		}

		// The admin token signs in, back to the page asked for.
		tok = csrf(t, c.get("/console/login?next=%2Fparties"))
		p = c.do(http.MethodPost, "/console/login", url.Values{"csrf": {tok}, "token": {hubtest.AdminToken}, "next": {"/parties"}})
		if p.status != http.StatusSeeOther || p.location != "/console/parties" {
			t.Fatalf("sign in: HTTP %d → %q", p.status, p.location)
		}
		var cookie string
		for _, sc := range p.header.Values("Set-Cookie") {
			if strings.HasPrefix(sc, "ocpihub_console=") {
				cookie = sc
			}
		}
		for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/console", "Max-Age="} {
			if !strings.Contains(cookie, want) {
				t.Errorf("session cookie %q lacks %s", cookie, want)
			}
		}
		if strings.Contains(cookie, "Secure") {
			t.Errorf("session cookie %q is Secure on an http hub (the browser would drop it)", cookie)
		}
		// An open redirect is not followed.
		other := newClient(t, h)
		tok = csrf(t, other.get("/console/login"))
		if p := other.do(http.MethodPost, "/console/login", url.Values{"csrf": {tok}, "token": {hubtest.AdminToken}, "next": {"//evil.example/x"}}); p.location != "/console/" {
			t.Errorf("next=//evil.example: → %q", p.location)
		}

		pg := c.get("/console/parties")
		if pg.status != http.StatusOK || !strings.Contains(pg.body, "Acme") || !strings.Contains(pg.body, "CPO IN/ACM") {
			t.Fatalf("parties page: HTTP %d\n%s", pg.status, pg.body)
		}

		// Sign out: the same cookie no longer works.
		jarCookies := c.http.Jar.Cookies(mustURL(t, h.PublicURL()+"/console/"))
		if p := c.do(http.MethodPost, "/console/logout", url.Values{"csrf": {"wrong"}}); p.status != http.StatusForbidden {
			t.Errorf("logout without CSRF: HTTP %d", p.status)
		}
		if p := c.do(http.MethodPost, "/console/logout", url.Values{"csrf": {csrf(t, pg)}}); p.status != http.StatusSeeOther {
			t.Errorf("logout: HTTP %d", p.status)
		}
		replay := newClient(t, h)
		replay.http.Jar.SetCookies(mustURL(t, h.PublicURL()+"/console/"), jarCookies)
		if p := replay.get("/console/parties"); p.status != http.StatusSeeOther {
			t.Errorf("the signed-out session still works: HTTP %d", p.status)
		}
	})
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSessionLifetime: a session ends after the idle timeout, and when the
// admin token changes; a one-time link signs in once.
func TestSessionLifetime(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		fake := h.Clock.(*clock.Fake)
		c := signedIn(t, h)
		if p := c.get("/console/"); p.status != http.StatusOK {
			t.Fatalf("overview: HTTP %d", p.status)
		}
		fake.Add(90 * time.Minute) // used within the idle timeout: still signed in
		if p := c.get("/console/"); p.status != http.StatusOK {
			t.Fatalf("after 90 min: HTTP %d", p.status)
		}
		fake.Add(2*time.Hour + time.Minute) // idle for longer than 2 h
		if p := c.get("/console/"); p.status != http.StatusSeeOther {
			t.Fatalf("idle session: HTTP %d, want a redirect to sign in", p.status)
		}

		// One-time link.
		link, err := h.Console.LoginLink(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		u := mustURL(t, link)
		c2 := newClient(t, h)
		if p := c2.get(u.RequestURI()); p.status != http.StatusSeeOther || p.location != "/console/" {
			t.Fatalf("login link: HTTP %d → %q", p.status, p.location)
		}
		if p := c2.get("/console/"); p.status != http.StatusOK {
			t.Errorf("after the login link: HTTP %d", p.status)
		}
		if p := newClient(t, h).get(u.RequestURI()); p.status != http.StatusUnauthorized {
			t.Errorf("login link used twice: HTTP %d", p.status)
		}
		late, _ := h.Console.LoginLink(context.Background())
		fake.Add(11 * time.Minute)
		if p := newClient(t, h).get(mustURL(t, late).RequestURI()); p.status != http.StatusUnauthorized {
			t.Errorf("expired login link: HTTP %d", p.status)
		}

		// A new admin token ends every session.
		if _, err := h.Parties.ResetAdminToken(context.Background()); err != nil {
			t.Fatal(err)
		}
		if p := c2.get("/console/"); p.status != http.StatusSeeOther {
			t.Errorf("after a new admin token: HTTP %d", p.status)
		}
	}, func(o *hubtest.Options) { o.Clock = clock.NewFake(time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)) })
}

// TestActions: a POST needs the session's CSRF token and the console's
// origin; an action changes the hub and says so; a refused transition is
// a message, not an error page.
func TestActions(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60*time.Second)
		addAcme(t, h)
		p, err := h.Parties.FindByParty(ctx, "", "IN", "ACM")
		if err != nil {
			t.Fatal(err)
		}
		c := signedIn(t, h)
		detail := c.get("/console/parties/" + itoa(p.ID))
		if detail.status != http.StatusOK || !strings.Contains(detail.body, "Acme Charging") || !strings.Contains(detail.body, "/cpo/locations") {
			t.Fatalf("party page: HTTP %d", detail.status)
		}
		tok := csrf(t, detail)
		suspend := "/console/parties/" + itoa(p.ID) + "/suspend"

		if r := c.do(http.MethodPost, suspend, url.Values{"csrf": {"nope"}}); r.status != http.StatusForbidden {
			t.Errorf("suspend without the CSRF token: HTTP %d", r.status)
		}
		if r := c.do(http.MethodPost, suspend, url.Values{"csrf": {tok}}, "Origin", "http://evil.example"); r.status != http.StatusForbidden {
			t.Errorf("suspend from another origin: HTTP %d", r.status)
		}
		if r := c.do(http.MethodPost, suspend, url.Values{"csrf": {tok}}, "Sec-Fetch-Site", "cross-site"); r.status != http.StatusForbidden {
			t.Errorf("suspend cross-site: HTTP %d", r.status)
		}
		if got, _ := h.Parties.Find(ctx, p.ID); got.Status != party.StatusConnected {
			t.Fatalf("a refused POST changed the platform: %s", got.Status)
		}

		r := c.do(http.MethodPost, suspend, url.Values{"csrf": {tok}}, "Origin", h.PublicURL())
		if r.status != http.StatusSeeOther || r.location != "/console/parties/"+itoa(p.ID) {
			t.Fatalf("suspend: HTTP %d → %q", r.status, r.location)
		}
		if got, _ := h.Parties.Find(ctx, p.ID); got.Status != party.StatusSuspended {
			t.Fatalf("after suspend: %s", got.Status)
		}
		shown := c.get(r.location)
		if !strings.Contains(shown.body, "is suspended") || !strings.Contains(shown.body, `id="resume"`) {
			t.Errorf("the page after suspend lacks the message or the resume button")
		}
		// Suspending twice is refused with a message.
		r = c.do(http.MethodPost, suspend, url.Values{"csrf": {tok}})
		if r.status != http.StatusSeeOther {
			t.Fatalf("suspend twice: HTTP %d", r.status)
		}
		if again := c.get(r.location); !strings.Contains(again.body, "flash-error") || !strings.Contains(again.body, "SUSPENDED") {
			t.Errorf("suspend twice: no error message")
		}
		if r := c.do(http.MethodPost, "/console/parties/"+itoa(p.ID)+"/resume", url.Values{"csrf": {tok}}); r.status != http.StatusSeeOther {
			t.Errorf("resume: HTTP %d", r.status)
		}
		if got, _ := h.Parties.Find(ctx, p.ID); got.Status != party.StatusConnected {
			t.Errorf("after resume: %s", got.Status)
		}
		if r := c.get("/console/parties/999999"); r.status != http.StatusNotFound {
			t.Errorf("unknown party: HTTP %d", r.status)
		}

		// An invitation: the token is on the answer once, and works.
		inv := c.do(http.MethodPost, "/console/invitations", url.Values{"csrf": {tok}, "name": {"Volt"}, "expires": {"72h"}, "parties": {"emsp/in/vlt"}})
		m := regexp.MustCompile(`id="token-a" class="secret-value">([^<]+)<`).FindStringSubmatch(inv.body)
		if inv.status != http.StatusOK || m == nil || inv.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("create invitation: HTTP %d, cache %q", inv.status, inv.header.Get("Cache-Control"))
		}
		list := c.get("/console/invitations")
		if strings.Contains(list.body, m[1]) || !strings.Contains(list.body, "EMSP IN/VLT") || !strings.Contains(list.body, "OPEN") {
			t.Errorf("invitations list: token shown again, or the invitation missing")
		}
		emsp := hubtest.StartSim(t, sim.StartEMSP, "Volt", "IN", "VLT")
		if err := emsp.Register(ctx, h.VersionsURL(), m[1]); err != nil {
			t.Fatalf("register with the console's token A: %v", err)
		}
		bad := c.do(http.MethodPost, "/console/invitations", url.Values{"csrf": {tok}, "name": {"X"}, "expires": {"72h"}, "parties": {"CPO-IN-XYZ"}})
		if bad.status != http.StatusSeeOther || !strings.Contains(c.get(bad.location).body, "ROLE/COUNTRY_CODE/PARTY_ID") {
			t.Errorf("malformed parties: HTTP %d", bad.status)
		}
	})
}

// registeredCPO starts a CPO simulator name of party IN/pid and registers it
// with the hub; it stops with the test.
func registeredCPO(t testing.TB, h *hubtest.Hub, name, pid string) *sim.CPO {
	t.Helper()
	return hubtest.Add(t, h, sim.StartCPO, name, "IN", pid)
}

// addAcme registers the console tests' usual CPO, Acme Charging (IN/ACM),
// whose location putBLR01 pushes.
func addAcme(t testing.TB, h *hubtest.Hub) *sim.CPO {
	t.Helper()
	return registeredCPO(t, h, "Acme Charging", "ACM")
}

// addVolt registers the console tests' usual eMSP, Volt (IN/VLT).
func addVolt(t testing.TB, h *hubtest.Hub) *sim.EMSP {
	t.Helper()
	return hubtest.Add(t, h, sim.StartEMSP, "Volt", "IN", "VLT")
}

// putBLR01 has cpo (IN/ACM) push its location BLR01, named name, in
// Bengaluru, with one EVSE per status, last updated at.
func putBLR01(t testing.TB, ctx context.Context, cpo *sim.CPO, name string, at time.Time, statuses ...string) {
	t.Helper()
	if err := cpo.PutLocation(ctx, "BLR01", sim.SampleLocation("IN", "ACM", "BLR01", name, "Bengaluru", "12.935242", "77.624480", at, statuses...)); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestDirectoryPages: the directory lists what CPOs pushed, on the map and
// in the table, filters by CPO and EVSE status, and shows a location's
// EVSEs.
func TestDirectoryPages(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60*time.Second)
		cpo := addAcme(t, h)
		now := time.Now()
		putBLR01(t, ctx, cpo, "Koramangala Hub", now, "AVAILABLE", "CHARGING")
		if err := cpo.PutLocation(ctx, "DEL01", sim.SampleLocation("IN", "ACM", "DEL01", "Aerocity", "New Delhi", "28.548764", "-77.121262", now, "OUTOFORDER")); err != nil {
			t.Fatal(err)
		}
		c := signedIn(t, h)
		p := c.get("/console/directory")
		if p.status != http.StatusOK || strings.Count(p.body, "<circle") != 2 || !strings.Contains(p.body, "Koramangala Hub") || !strings.Contains(p.body, "1 of 2 EVSEs available") {
			t.Fatalf("directory: HTTP %d\n%s", p.status, p.body)
		}
		if p := c.get("/console/directory?status=OUTOFORDER"); !strings.Contains(p.body, "Aerocity") || strings.Contains(p.body, "Koramangala Hub") {
			t.Errorf("status filter")
		}
		if p := c.get("/console/directory?cpo=IN-XYZ"); strings.Contains(p.body, "Aerocity") || !strings.Contains(p.body, "No locations") {
			t.Errorf("CPO filter")
		}
		loc := c.get("/console/directory/IN/ACM/DEL01")
		if loc.status != http.StatusOK || !strings.Contains(loc.body, "DEL01-E1") || !strings.Contains(loc.body, "28.548764, -77.121262") {
			t.Errorf("location page: HTTP %d", loc.status)
		}
		if p := c.get("/console/directory/IN/ACM/NOPE"); p.status != http.StatusNotFound {
			t.Errorf("unknown location: HTTP %d", p.status)
		}
	})
}

// TestCommandPages: a command an eMSP sends through the hub is listed with
// its state and shows its lifecycle: forwarded, answered, result relayed.
func TestCommandPages(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60*time.Second)
		cpo := addAcme(t, h)
		emsp := addVolt(t, h)
		putBLR01(t, ctx, cpo, "Koramangala Hub", time.Now(), "AVAILABLE")
		cpo.OnCommand(func(string, map[string]any) sim.CommandBehavior { return sim.CommandBehavior{Manual: true} })
		uid, resp, err := emsp.SendCommand(ctx, "UNLOCK_CONNECTOR", map[string]any{"location_id": "BLR01", "evse_uid": "BLR01-E1", "connector_id": "1"}, nil)
		if err != nil || resp.HTTPStatus != http.StatusOK {
			t.Fatalf("UNLOCK_CONNECTOR: %v %v", resp, err)
		}
		if res, err := emsp.WaitResult(ctx, uid); err != nil || res != "ACCEPTED" {
			t.Fatalf("result: %q %v", res, err)
		}
		c := signedIn(t, h)
		list := c.get("/console/commands")
		m := regexp.MustCompile(`href="/console/commands/([^"]+)">Unlock Connector<`).FindStringSubmatch(list.body)
		if list.status != http.StatusOK || m == nil || !strings.Contains(list.body, "completed") || !strings.Contains(list.body, "BLR01 / BLR01-E1 / 1") {
			t.Fatalf("commands page: HTTP %d\n%s", list.status, list.body)
		}
		if p := c.get("/console/commands?state=timeout"); strings.Contains(p.body, `href="/console/commands/`+m[1]+`"`) {
			t.Error("the state filter keeps a completed command")
		}
		detail := c.get("/console/commands/" + m[1])
		for _, want := range []string{"Forwarded", "CPO answered", "Result ACCEPTED", "IN/VLT", "IN/ACM", "response_url"} {
			if !strings.Contains(detail.body, want) {
				t.Errorf("command page lacks %q", want)
			}
		}
		if p := c.get("/console/commands/nope"); p.status != http.StatusNotFound {
			t.Errorf("unknown command: HTTP %d", p.status)
		}
	})
}
