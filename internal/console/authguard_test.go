package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
)

// TestFailedAuthenticationIsThrottled: unknown tokens on the admin API and
// OCPI and wrong console sign-ins share one budget per client (10 per 5
// minutes); the client is taken from X-Forwarded-For because the hub is
// told its load balancer (127.0.0.1) is trusted, so a guesser behind the
// balancer locks out only itself: the operator at another address signs in
// and calls the API with the right token.
func TestFailedAuthenticationIsThrottled(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		from := func(addr string) http.Header { return http.Header{"X-Forwarded-For": {addr}} }
		attacker, operator := from("203.0.113.9"), from("198.51.100.1")
		for i := 0; i < 6; i++ {
			if r := h.Do(t, "GET", "/admin/parties", fmt.Sprintf("guess-%d-0123456789abcdef", i), nil, attacker); r.HTTPStatus != http.StatusUnauthorized {
				t.Fatalf("guess %d on the admin API: HTTP %d, want 401", i, r.HTTPStatus)
			}
		}
		for i := 6; i < 9; i++ {
			if r := h.Do(t, "GET", "/ocpi/versions", fmt.Sprintf("guess-%d-0123456789abcdef", i), nil, attacker); r.HTTPStatus != http.StatusUnauthorized {
				t.Fatalf("guess %d on OCPI: HTTP %d, want 401", i, r.HTTPStatus)
			}
		}
		c := newClient(t, h)
		form := c.get("/console/login")
		p := c.do(http.MethodPost, "/console/login", url.Values{"csrf": {csrf(t, form)}, "token": {"guess-9-0123456789abcdef"}}, "X-Forwarded-For", "203.0.113.9")
		if p.status != http.StatusUnauthorized {
			t.Fatalf("tenth guess, on the console: HTTP %d, want 401", p.status)
		}
		// The budget is spent on every surface.
		r := h.Do(t, "GET", "/admin/parties", "guess-10-0123456789abcdef", nil, attacker)
		if r.HTTPStatus != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
			t.Errorf("eleventh guess on the admin API: HTTP %d, Retry-After %q; want 429 with Retry-After", r.HTTPStatus, r.Header.Get("Retry-After"))
		}
		if r := h.Do(t, "GET", "/ocpi/versions", "guess-11-0123456789abcdef", nil, attacker); r.HTTPStatus != http.StatusTooManyRequests {
			t.Errorf("guess on OCPI after the budget: HTTP %d, want 429", r.HTTPStatus)
		}
		p = c.do(http.MethodPost, "/console/login", url.Values{"csrf": {csrf(t, c.get("/console/login"))}, "token": {"guess-12-0123456789abcdef"}}, "X-Forwarded-For", "203.0.113.9")
		if p.status != http.StatusTooManyRequests {
			t.Errorf("console guess after the budget: HTTP %d, want 429", p.status)
		}
		// A forged X-Forwarded-For hop to the left does not escape.
		if r := h.Do(t, "GET", "/admin/parties", "guess-13-0123456789abcdef", nil, from("192.0.2.1, 203.0.113.9")); r.HTTPStatus != http.StatusTooManyRequests {
			t.Errorf("guess with a client-written hop: HTTP %d, want 429", r.HTTPStatus)
		}
		// The operator, behind the same balancer, is not kept out.
		if r := h.Do(t, "GET", "/admin/parties", hubtest.AdminToken, nil, operator); r.HTTPStatus != http.StatusOK {
			t.Errorf("the admin token from another client: HTTP %d, want 200", r.HTTPStatus)
		}
		op := newClient(t, h)
		p = op.do(http.MethodPost, "/console/login", url.Values{"csrf": {csrf(t, op.get("/console/login"))}, "token": {hubtest.AdminToken}, "next": {"/"}}, "X-Forwarded-For", "198.51.100.1")
		if p.status != http.StatusSeeOther {
			t.Errorf("the operator's sign-in from another client: HTTP %d, want 303", p.status)
		}
		// Requests without a token guess nothing and are not counted.
		for i := 0; i < 12; i++ {
			if r := h.Do(t, "GET", "/ocpi/versions", "", nil, from("198.51.100.2")); r.HTTPStatus != http.StatusUnauthorized {
				t.Fatalf("tokenless request %d: HTTP %d, want 401", i, r.HTTPStatus)
			}
		}
	}, func(o *hubtest.Options) {
		o.Config = func(c *app.Config) {
			c.AuthFailures = 10
			c.TrustedProxies = "127.0.0.1"
		}
	})
}
