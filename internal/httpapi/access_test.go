package httpapi_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/httpapi"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
)

var wildcard = regexp.MustCompile(`\{([a-z_]+)(\.\.\.)?\}`)

// concrete turns a route pattern into a request: wildcards get values that
// name the caller's own party, so only access rules can refuse it.
func concrete(r httpapi.Route) (method, path string) {
	method, path, ok := strings.Cut(r.Pattern, " ")
	if !ok {
		return http.MethodGet, r.Pattern
	}
	path = wildcard.ReplaceAllStringFunc(path, func(w string) string {
		switch wildcard.FindStringSubmatch(w)[1] {
		case "country_code":
			return "NL"
		case "party_id":
			return "ACM"
		}
		return "X1"
	})
	return method, path
}

func status(t *testing.T, h *hubtest.Hub, method, path, token string) int {
	t.Helper()
	var body []byte
	if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		body = []byte(`{}`)
	}
	hdr := http.Header{}
	if token != "" {
		hdr.Set("Authorization", ocpi.EncodeToken(token, true))
	}
	return h.Do(t, method, path, "", body, hdr).HTTPStatus
}

// TestRouteAccess holds every authenticated route of the table — those of
// modules added later too — to the access rules: a suspended or
// unregistered platform gets 401 everywhere; token A reaches only versions
// and credentials; functional routes need a connected partner's token; admin
// routes need the admin token.
func TestRouteAccess(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		suspended := hubtest.Add(t, h, sim.StartCPO, "Suspended", "NL", "ACM")
		gone := hubtest.Add(t, h, sim.StartEMSP, "Gone", "DE", "GON")
		connected := hubtest.Add(t, h, sim.StartEMSP, "Connected", "FR", "CON")

		p, err := h.Parties.FindByParty(ctx, "", "NL", "ACM")
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Parties.Suspend(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		goneToken := gone.Token()
		if err := gone.Unregister(ctx); err != nil {
			t.Fatal(err)
		}
		inv, err := h.Parties.Invite(ctx, "someone", 0, false)
		if err != nil {
			t.Fatal(err)
		}

		counts := map[string]int{}
		for _, r := range h.Server.Routes() {
			counts[r.Access]++
			method, path := concrete(r)
			refused := map[string]string{
				"no token":              "",
				"unknown token":         "not-a-token",
				"suspended platform":    suspended.Token(),
				"unregistered platform": goneToken,
			}
			switch r.Access {
			case "public":
				continue
			case "platform":
				refused["token A"] = inv.Token
				refused["admin token"] = hubtest.AdminToken
			case "admin":
				refused["token A"] = inv.Token
				refused["partner token"] = connected.Token()
			case "subscriber":
				refused["token A"] = inv.Token
			}
			for who, tok := range refused {
				if got := status(t, h, method, path, tok); got != http.StatusUnauthorized {
					t.Errorf("%s (%s) with %s: HTTP %d, want 401", r.Pattern, r.Access, who, got)
				}
			}
		}
		if counts["registering"] < 5 || counts["platform"] < 1 || counts["admin"] < 5 {
			t.Errorf("route table by access: %v", counts)
		}

		// The same routes work for those allowed.
		for _, path := range []string{"/ocpi/versions", "/ocpi/2.2.1", "/ocpi/2.2.1/credentials", "/ocpi/2.2.1/hubclientinfo"} {
			if got := status(t, h, http.MethodGet, path, connected.Token()); got != http.StatusOK {
				t.Errorf("GET %s as a connected partner: HTTP %d", path, got)
			}
		}
		if got := status(t, h, http.MethodGet, "/admin/parties", hubtest.AdminToken); got != http.StatusOK {
			t.Errorf("GET /admin/parties as admin: HTTP %d", got)
		}
		// The walk above sends hundreds of requests; the resume gets its
		// own deadline rather than what the walk left of the first one.
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.Parties.Resume(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if got := status(t, h, http.MethodGet, "/ocpi/2.2.1/hubclientinfo", suspended.Token()); got != http.StatusOK {
			t.Errorf("hubclientinfo after resume: HTTP %d", got)
		}
	})
}
