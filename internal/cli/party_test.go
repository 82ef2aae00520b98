package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

const testSecretKey = "cli test secret key of 32 bytes or more"

// cli runs ocpihub with args against the hub's database, the way an operator
// runs it next to a serving hub; the secret key comes from the environment.
func cli(t *testing.T, h *hubtest.Hub, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	env := map[string]string{"OCPIHUB_DB": h.DBURL, "OCPIHUB_PUBLIC_URL": h.PublicURL(), "OCPIHUB_SECRET_KEY": testSecretKey, "OCPIHUB_LOG_LEVEL": "error",
		// The simulated partners listen on loopback.
		"OCPIHUB_OUTBOUND_ALLOW": "127.0.0.0/8,::1"}
	code = run(ctx, args, &out, &errOut, func(k string) string { return env[k] })
	return out.String(), errOut.String(), code
}

// mustCLI runs a command that must succeed.
func mustCLI(t *testing.T, h *hubtest.Hub, args ...string) string {
	t.Helper()
	out, errOut, code := cli(t, h, args...)
	if code != 0 {
		t.Fatalf("ocpihub %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// TestPartyCommands drives ocpihub party … against the database of a
// serving hub: the CLI changes the data, the hub serves the partners and
// works the jobs the CLI enqueued.
func TestPartyCommands(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		watcher, err := sim.StartEMSP("Watcher", "DE", "WAT", hubtest.Logger())
		if err != nil {
			t.Fatal(err)
		}
		defer watcher.Close()
		h.Register(t, watcher.Platform)

		// invite --json prints exactly token, versions_url and expires_at.
		out := mustCLI(t, h, "party", "invite", "--name", "Acme", "--expires", "48h", "--json")
		var inv map[string]string
		if err := json.Unmarshal([]byte(out), &inv); err != nil || len(inv) != 3 || inv["token"] == "" || inv["versions_url"] != h.VersionsURL() {
			t.Fatalf("invite --json printed %q", out)
		}
		exp, err := time.Parse(time.RFC3339, inv["expires_at"])
		if d := time.Until(exp); err != nil || d < 47*time.Hour || d > 48*time.Hour {
			t.Errorf("expires_at %q, want in 48h", inv["expires_at"])
		}
		if strings.Count(out, "\n") != 1 {
			t.Errorf("invite --json printed more than one line: %q", out)
		}
		cpo, err := sim.StartCPO("Acme Charging", "NL", "ACM", hubtest.Logger())
		if err != nil {
			t.Fatal(err)
		}
		defer cpo.Close()
		if err := cpo.Register(ctx, inv["versions_url"], inv["token"]); err != nil {
			t.Fatalf("register with the CLI's token: %v", err)
		}
		pl, err := h.Parties.FindByParty(ctx, "", "NL", "ACM")
		if err != nil {
			t.Fatal(err)
		}
		id := strconv.FormatInt(pl.ID, 10)

		// Text invitations say what to do with the token; --party binds it.
		out = mustCLI(t, h, "party", "invite", "--name", "Later", "--party", "cpo/nl/new")
		for _, want := range []string{"token:", "versions URL: " + h.VersionsURL(), "CPO NL/NEW", "Authorization: Token"} {
			if !strings.Contains(out, want) {
				t.Errorf("invite text lacks %q:\n%s", want, out)
			}
		}

		// invitations lists them (no tokens); revoke closes the open one:
		// its token A is refused, its party withdrawn.
		var laterToken string
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "token:"); ok {
				laterToken = strings.TrimSpace(v)
			}
		}
		out = mustCLI(t, h, "party", "invitations")
		for _, want := range []string{"ID ", "Later", "OPEN", "CPO NL/NEW", "Acme", "USED"} {
			if !strings.Contains(out, want) {
				t.Errorf("party invitations lacks %q:\n%s", want, out)
			}
		}
		if laterToken == "" || strings.Contains(out, laterToken) || strings.Contains(out, inv["token"]) {
			t.Errorf("party invitations shows a token (or invite printed none: %q):\n%s", laterToken, out)
		}
		var open struct{ Invitations []party.InvitationInfo }
		if err := json.Unmarshal([]byte(mustCLI(t, h, "party", "invitations", "--state", "open", "--json")), &open); err != nil ||
			len(open.Invitations) != 1 || open.Invitations[0].Name != "Later" {
			t.Fatalf("party invitations --state open --json: %+v %v", open, err)
		}
		invID := strconv.FormatInt(open.Invitations[0].ID, 10)
		if out := mustCLI(t, h, "party", "revoke", invID); !strings.Contains(out, "Invitation "+invID+" (Later) is revoked") {
			t.Errorf("party revoke:\n%s", out)
		}
		if _, err := watcher.WaitFor(ctx, 1, func(r sim.Request) bool {
			return r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/clientinfo/NL/NEW") && strings.Contains(string(r.Body), `"SUSPENDED"`)
		}); err != nil {
			t.Errorf("the revoked invitation's party was not withdrawn: %v", err)
		}
		late, err := sim.StartCPO("Late", "NL", "NEW", hubtest.Logger())
		if err != nil {
			t.Fatal(err)
		}
		defer late.Close()
		if err := late.Register(ctx, h.VersionsURL(), laterToken); sim.HTTPStatus(err) != http.StatusUnauthorized {
			t.Errorf("registering with a revoked token A: %v", err)
		}
		if _, errOut, code := cli(t, h, "party", "revoke", invID); code != 1 || !strings.Contains(errOut, "no open invitation") {
			t.Errorf("revoke twice: exit %d %s", code, errOut)
		}
		var expired struct{ Invitations []party.InvitationInfo }
		if err := json.Unmarshal([]byte(mustCLI(t, h, "party", "invitations", "--json", "--state", "REVOKED")), &expired); err != nil ||
			len(expired.Invitations) != 1 || expired.Invitations[0].Name != "Later" || expired.Invitations[0].RevokedAt == nil {
			t.Errorf("party invitations --state REVOKED: %+v %v", expired, err)
		}

		// list and show, as text and JSON.
		out = mustCLI(t, h, "party", "list")
		if !strings.HasPrefix(out, "ID ") || !strings.Contains(out, "Acme ") || !strings.Contains(out, "CPO NL/ACM") || !strings.Contains(out, "CONNECTED") {
			t.Errorf("party list:\n%s", out)
		}
		if !strings.Contains(out, "just now") && !strings.Contains(out, "s ago") {
			t.Errorf("party list shows no last-seen time:\n%s", out)
		}
		var listed struct{ Platforms []party.Platform }
		if err := json.Unmarshal([]byte(mustCLI(t, h, "party", "list", "--json")), &listed); err != nil || len(listed.Platforms) != 2 {
			t.Errorf("party list --json: %+v %v", listed, err)
		}
		out = mustCLI(t, h, "party", "show", id)
		for _, want := range []string{"Platform " + id + ": Acme\n", "status:     CONNECTED (CONNECTED)", "versions:   " + cpo.VersionsURL(), "locations"} {
			if !strings.Contains(out, want) {
				t.Errorf("party show lacks %q:\n%s", want, out)
			}
		}
		var shown party.Platform
		if err := json.Unmarshal([]byte(mustCLI(t, h, "party", "show", id, "--json")), &shown); err != nil || shown.ID != pl.ID || shown.Name != "Acme" {
			t.Errorf("party show --json: %+v %v", shown, err)
		}
		for _, tok := range []string{cpo.Token(), cpo.TokenIn()} {
			if strings.Contains(mustCLI(t, h, "party", "show", "--json", id), tok) {
				t.Errorf("party show discloses token %q", tok)
			}
		}

		// suspend / resume: the partner is refused, the watcher is told.
		if out := mustCLI(t, h, "party", "suspend", id); !strings.Contains(out, "SUSPENDED") {
			t.Errorf("party suspend:\n%s", out)
		}
		// The CLI writes to the database: the serving hub, which remembers
		// a token's platform for a second, refuses the partner within it.
		for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			_, err := cpo.CallHub(ctx, http.MethodGet, "credentials", "", "", nil, nil)
			if sim.HTTPStatus(err) == http.StatusUnauthorized {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("suspended partner's call, 2 s after the CLI suspended it: %v", err)
			}
		}
		if _, err := watcher.WaitFor(ctx, 1, func(r sim.Request) bool {
			return r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/clientinfo/NL/ACM") && strings.Contains(string(r.Body), `"SUSPENDED"`)
		}); err != nil {
			t.Errorf("the hub did not push the CLI's suspension: %v", err)
		}
		if _, errOut, code := cli(t, h, "party", "suspend", id); code != 1 || !strings.Contains(errOut, "SUSPENDED") {
			t.Errorf("suspend twice: exit %d %s", code, errOut)
		}
		var resumed party.Platform
		if err := json.Unmarshal([]byte(mustCLI(t, h, "party", "resume", id, "--json")), &resumed); err != nil || resumed.Status != party.StatusConnected {
			t.Errorf("party resume --json: %+v %v", resumed, err)
		}

		// rotate: the CLI calls the partner, which calls the serving hub back.
		oldC := cpo.Token()
		mustCLI(t, h, "party", "rotate", id)
		if cpo.Token() == oldC {
			t.Error("party rotate changed nothing")
		}
		if _, err := cpo.CallHub(ctx, http.MethodGet, "credentials", "", "", nil, nil); err != nil {
			t.Errorf("after rotate: %v", err)
		}

		// connect: hub-initiated registration from the CLI.
		emsp, err := sim.StartEMSP("Volt", "FR", "VLT", hubtest.Logger())
		if err != nil {
			t.Fatal(err)
		}
		defer emsp.Close()
		var connected party.Platform
		out = mustCLI(t, h, "party", "connect", "--versions-url", emsp.VersionsURL(), "--token", emsp.Invite(), "--json")
		if err := json.Unmarshal([]byte(out), &connected); err != nil || connected.Status != party.StatusConnected || connected.Name != "Volt" {
			t.Fatalf("party connect --json: %s", out)
		}
		if _, err := emsp.CallHub(ctx, http.MethodGet, "hubclientinfo", "", "", nil, nil); err != nil {
			t.Errorf("the connected eMSP calls the hub: %v", err)
		}
		if n, err := h.Parties.FindByParty(ctx, "", "FR", "VLT"); err != nil || n.ID != connected.ID {
			t.Errorf("the serving hub does not see the connected eMSP: %v", err)
		}

		// disconnect.
		if out := mustCLI(t, h, "party", "disconnect", id); !strings.Contains(out, "UNREGISTERED") {
			t.Errorf("party disconnect:\n%s", out)
		}
		if len(cpo.Requests(sim.PathHas(http.MethodDelete, "/credentials"))) != 1 {
			t.Error("disconnect sent no credentials DELETE")
		}

		// Mistakes.
		for _, tc := range []struct {
			args []string
			code int
			msg  string
		}{
			{[]string{"party", "invite"}, 2, "--name"},
			{[]string{"party", "invite", "--name", "x", "--expires", "soon"}, 2, "--expires"},
			{[]string{"party", "invite", "--name", "x", "--party", "CPO-NL-ACM"}, 2, "ROLE/COUNTRY_CODE/PARTY_ID"},
			{[]string{"party", "invite", "--name", "x", "--party", "EMSP/DE/WAT"}, 1, "already registered"},
			{[]string{"party", "show"}, 2, "needs a platform ID"},
			{[]string{"party", "show", "acme"}, 2, "not a number"},
			{[]string{"party", "show", "999"}, 1, "not found"},
			{[]string{"party", "connect", "--token", "x"}, 2, "--versions-url"},
			{[]string{"party", "revoke"}, 2, "needs an invitation ID"},
			{[]string{"party", "revoke", "later"}, 2, "invitation ID \"later\" is not a number"},
			{[]string{"party", "revoke", "999"}, 1, "no open invitation 999"},
			{[]string{"party", "invitations", "--state", "gone"}, 2, "--state"},
			{[]string{"party", "frobnicate"}, 2, "unknown party command"},
		} {
			_, errOut, code := cli(t, h, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.msg) {
				t.Errorf("ocpihub %s: exit %d, stderr %q; want exit %d mentioning %q", strings.Join(tc.args, " "), code, errOut, tc.code, tc.msg)
			}
		}
	}, func(o *hubtest.Options) {
		o.Config = func(c *app.Config) { c.SecretKey = testSecretKey }
	})
}

func TestAgo(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Time{}, "never"},
		{now.Add(-100 * time.Millisecond), "just now"},
		{now.Add(-10 * time.Second), "10s ago"},
		{now.Add(-90 * time.Second), "1m ago"},
		{now.Add(-3 * time.Hour), "3h ago"},
		{now.Add(-50 * time.Hour), "2d ago"},
	} {
		if got := ago(tc.at, now); got != tc.want {
			t.Errorf("ago(now-%s) = %q, want %q", now.Sub(tc.at), got, tc.want)
		}
	}
}
