package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
)

// runWith runs ocpihub with args and exactly the environment env.
func runWith(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code = run(ctx, args, &out, &errOut, func(k string) string { return env[k] })
	return out.String(), errOut.String(), code
}

// TestInviteBesideServingHub: a hub serves on an address given to serve
// only (here a free port); party invite, run beside it with nothing but the
// database, prints the versions URL the hub really serves (observation 4).
func TestInviteBesideServingHub(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		out, errOut, code := runWith(t, map[string]string{"OCPIHUB_DB": h.DBURL}, "party", "invite", "--name", "Acme", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var inv map[string]string
		if err := json.Unmarshal([]byte(out), &inv); err != nil {
			t.Fatalf("invite printed %q", out)
		}
		if inv["versions_url"] != h.VersionsURL() {
			t.Errorf("versions URL %q, want the serving hub's %q", inv["versions_url"], h.VersionsURL())
		}
		// A command's own --public-url still wins.
		out, _, _ = runWith(t, map[string]string{"OCPIHUB_DB": h.DBURL, "OCPIHUB_PUBLIC_URL": "https://hub.example.com"}, "party", "invite", "--name", "Acme", "--json")
		if !strings.Contains(out, `"versions_url":"https://hub.example.com/ocpi/versions"`) {
			t.Errorf("with --public-url: %s", out)
		}
	})
}

// TestCommandLineHygiene covers observation 6: an unknown log level is a
// usage error; help goes to stdout with exit 0; every usage mistake exits
// 2, on stderr; flag help shows defaults; a command's output carries no log
// lines; an unknown location is named without an empty party.
func TestCommandLineHygiene(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, "sqlite")
	env := map[string]string{"OCPIHUB_DB": h.DBURL, "OCPIHUB_LOG_LEVEL": "info"}

	_, errOut, code := runWith(t, env, "serve", "--log-level", "verbose")
	if code != 2 || !strings.Contains(errOut, "log-level") {
		t.Errorf("serve --log-level verbose: exit %d, %q; want 2 naming --log-level", code, errOut)
	}
	_, errOut, code = runWith(t, map[string]string{"OCPIHUB_DB": h.DBURL, "OCPIHUB_LOG_LEVEL": "loud"}, "migrate")
	if code != 2 || !strings.Contains(errOut, "OCPIHUB_LOG_LEVEL") {
		t.Errorf("OCPIHUB_LOG_LEVEL=loud: exit %d, %q; want 2 naming the variable", code, errOut)
	}

	for _, args := range [][]string{{"serve", "--help"}, {"migrate", "-h"}, {"party", "invite", "--help"}, {"qr", "list", "--help"},
		{"payment", "list", "--help"}, {"sync", "locations", "--help"}, {"tariff", "price", "--help"}, {"party", "--help"}} {
		out, errOut, code := runWith(t, env, args...)
		if code != 0 || !strings.Contains(out, "Usage") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want help on stdout, exit 0", args, code, len(out), errOut)
		}
	}
	for _, args := range [][]string{{"serve", "--nope"}, {"migrate", "--nope"}, {"party", "list", "--nope"}, {"qr", "list", "--nope"},
		{"payment", "list", "--nope"}, {"sync", "locations", "--nope"}, {"tariff", "price", "--nope"}, {"demo"},
		{"admin-token", "--nope"}, {"party", "show", "x"}, {"nope"}, {"serve", "--auth-failures", "many"}} {
		out, errOut, code := runWith(t, env, args...)
		if code != 2 || errOut == "" || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with the mistake on stderr only", args, code, out, errOut)
		}
	}

	out, _, _ := runWith(t, env, "serve", "--help")
	for _, want := range []string{"(default 10)", "(default localhost:8080)", "(default info)", "(default 1h0m0s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help does not show %s", want)
		}
	}

	out, errOut, code = runWith(t, env, "party", "invite", "--name", "Acme", "--party", "CPO/NL/ACM")
	if code != 0 {
		t.Fatalf("party invite: exit %d: %s", code, errOut)
	}
	for _, s := range []string{out, errOut} {
		if strings.Contains(s, "level=") || strings.Contains(s, "msg=") {
			t.Errorf("a log line in the command's output: %q", s)
		}
	}

	_, errOut, code = runWith(t, env, "qr", "create", "--location", "NOPE", "--evse", "E1", "--connector", "1")
	if code == 0 || !strings.Contains(errOut, "NOPE") || strings.Contains(errOut, "of /") || strings.Contains(errOut, "of  ") {
		t.Errorf("qr create of an unknown location: exit %d, %q", code, errOut)
	}
}

// TestPartyNotation covers observation 5: a party prints as CC/PID (after
// its role where the role matters) and every command reads the other forms.
func TestPartyNotation(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"NL/ACM", "nl-acm", "NL*ACM", "NL ACM", "NLACM"} {
		cc, pid, err := party.ParseParty(in)
		if err != nil || cc != "NL" || pid != "ACM" {
			t.Errorf("ParseParty(%q) = %q, %q, %v", in, cc, pid, err)
		}
	}
	for _, in := range []string{"", "NL", "N/ACM", "NL/AC", "NL/ACME", "12/ACM"} {
		if _, _, err := party.ParseParty(in); err == nil {
			t.Errorf("ParseParty(%q) accepted", in)
		}
	}
	for _, in := range []string{"CPO/NL/ACM", "cpo nl/acm", "CPO/NL-ACM", "CPO NL*ACM"} {
		ref, err := party.ParsePartyRef(in)
		if err != nil || ref != (party.PartyRef{Role: party.RoleCPO, CountryCode: "NL", PartyID: "ACM"}) {
			t.Errorf("ParsePartyRef(%q) = %+v, %v", in, ref, err)
		}
	}
	if _, err := party.ParsePartyRef("BOSS/NL/ACM"); err == nil {
		t.Error("an unknown role was accepted")
	}
	if got := (party.PartyRef{Role: party.RoleCPO, CountryCode: "nl", PartyID: "acm"}).String(); got != "NL/ACM" {
		t.Errorf("PartyRef.String() = %q, want NL/ACM", got)
	}

	h := hubtest.Start(t, "sqlite")
	env := map[string]string{"OCPIHUB_DB": h.DBURL}
	for _, form := range []string{"CPO/NL/ACM", "CPO NL-ACM", "CPO/NL*ACM"} {
		out, errOut, code := runWith(t, env, "party", "invite", "--name", "Acme", "--party", form)
		if code != 0 || !strings.Contains(out, "CPO NL/ACM") {
			t.Errorf("invite --party %q: exit %d, %q %q", form, code, out, errOut)
		}
	}
	out, _, _ := runWith(t, env, "party", "invitations")
	if !strings.Contains(out, "CPO NL/ACM") {
		t.Errorf("invitations print %q, want CPO NL/ACM", out)
	}
	for _, form := range []string{"NL/ACM", "NL-ACM", "NL*ACM"} {
		_, errOut, code := runWith(t, env, "sync", "locations", "--party", form)
		if code == 2 {
			t.Errorf("sync --party %q is a usage error: %s", form, errOut)
		}
	}
	_, errOut, code := runWith(t, env, "sync", "locations", "--party", "NLACME")
	if code != 2 || !strings.Contains(errOut, "COUNTRY_CODE/PARTY_ID") {
		t.Errorf("sync --party NLACME: exit %d, %q", code, errOut)
	}
}

// TestSecretKeyStrength: a short or repetitive secret key is refused before
// anything starts (observation 7: a 3-character key was accepted); a key of
// 32 random bytes is taken.
func TestSecretKeyStrength(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, "sqlite")
	for _, key := range []string{"abc", "cli test secret key", strings.Repeat("ab", 20)} {
		_, errOut, code := runWith(t, map[string]string{"OCPIHUB_DB": h.DBURL, "OCPIHUB_SECRET_KEY": key}, "party", "list")
		if code != 2 || !strings.Contains(errOut, "secret key") || !strings.Contains(errOut, "32") {
			t.Errorf("secret key %q: exit %d, %q; want 2 asking for 32 random bytes", key, code, errOut)
		}
	}
	_, errOut, code := runWith(t, map[string]string{"OCPIHUB_DB": h.DBURL, "OCPIHUB_SECRET_KEY": "Zm9yIGEgdGVzdCBvbmx5OiAzMiByYW5kb20gYnl0ZXMhIQ=="}, "party", "list")
	if code != 0 {
		t.Errorf("a 32-byte Base64 key: exit %d, %s", code, errOut)
	}
}
