package ratelimit_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
)

type answer struct {
	status int
	header http.Header
	env    ocpi.Envelope
}

func get(t *testing.T, base, token, path string) answer {
	t.Helper()
	return send(t, base, token, http.MethodGet, path, nil)
}

func send(t *testing.T, base, token, method, path string, body []byte) answer {
	t.Helper()
	resp := hubtest.DoAt(t, base, method, path, token, body, nil)
	a := answer{status: resp.HTTPStatus, header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(resp.Body, &a.env)
	}
	return a
}

func token(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func cpo(t *testing.T, h *hubtest.Hub, pid string) *sim.CPO {
	t.Helper()
	c := hubtest.Add(t, h, sim.StartCPO, "CPO "+pid, "NL", pid)
	return c
}

func limitedHub(t *testing.T, engine store.Engine, clk *clock.Fake, dbURL string) *hubtest.Hub {
	return hubtest.Start(t, engine, func(o *hubtest.Options) {
		o.Clock = clk
		o.RateLimits = true
		o.DBURL = dbURL
	})
}

func TestHeadersAnd429(t *testing.T) {
	t.Parallel()
	for _, engine := range []store.Engine{store.SQLite, store.Postgres} {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			// The next top of the hour: windows start together, and the job
			// queue (which follows the fake clock) stays near real time.
			start := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
			clk := clock.NewFake(start)
			h := limitedHub(t, engine, clk, "")
			c := cpo(t, h, "RL1")
			tok := token(c.Token())
			base := h.PublicURL()

			a := get(t, base, tok, "/ocpi/2.2.1/webhooks")
			if a.status != 200 || a.header.Get("X-RateLimit-Limit") != "20" || a.header.Get("X-RateLimit-Remaining") != "19" ||
				a.header.Get("X-RateLimit-Reset") != strconv.FormatInt(start.Add(time.Second).Unix(), 10) {
				t.Fatalf("first request: HTTP %d %v", a.status, a.header)
			}
			for i := 2; i <= 20; i++ {
				if a = get(t, base, tok, "/ocpi/2.2.1/webhooks"); a.status != 200 {
					t.Fatalf("request %d: HTTP %d", i, a.status)
				}
			}
			if a.header.Get("X-RateLimit-Remaining") != "0" {
				t.Fatalf("20th request: %v", a.header)
			}
			a = get(t, base, tok, "/ocpi/2.2.1/webhooks")
			if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") != "1" || a.env.StatusCode != 2000 ||
				a.env.Error == nil || !strings.Contains(a.env.Error.Description, "20 requests per second") {
				t.Fatalf("21st request: HTTP %d %v %+v", a.status, a.header, a.env)
			}
			// Exempt endpoints: no limit, no headers.
			for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
				if a = get(t, base, "", p); a.status != 200 || a.header.Get("X-RateLimit-Limit") != "" {
					t.Fatalf("%s: HTTP %d %v", p, a.status, a.header)
				}
			}
			// Another token has its own counters.
			if a = get(t, base, token(hubtest.AdminToken), "/admin/parties"); a.status != 200 || a.header.Get("X-RateLimit-Remaining") != "19" {
				t.Fatalf("admin: HTTP %d %v", a.status, a.header)
			}
			clk.Add(time.Second)
			if a = get(t, base, tok, "/ocpi/2.2.1/webhooks"); a.status != 200 {
				t.Fatalf("next second: HTTP %d", a.status)
			}

			// A party's own limits, through the admin API.
			var pid int64
			if err := h.DB.Read().QueryRow(t.Context(), "SELECT id FROM platforms WHERE name = 'CPO RL1'").Scan(&pid); err != nil {
				t.Fatal(err)
			}
			path := "/admin/parties/" + strconv.FormatInt(pid, 10) + "/rate_limits"
			admin := token(hubtest.AdminToken)
			if a = send(t, base, admin, http.MethodPut, path, []byte(`{"per_minute": -1}`)); a.env.StatusCode != 2001 || a.env.Error.Details.Field != "per_minute" {
				t.Fatalf("bad override: %+v", a.env)
			}
			if a = send(t, base, admin, http.MethodPut, path, []byte(`{"per_minute": 23}`)); a.env.StatusCode != 1000 {
				t.Fatalf("override: %+v", a.env)
			}
			clk.Add(time.Second)
			get(t, base, tok, "/ocpi/2.2.1/webhooks")     // 22nd of the minute (the refused one did not count)
			a = get(t, base, tok, "/ocpi/2.2.1/webhooks") // 23rd
			if a.status != 200 || a.header.Get("X-RateLimit-Limit") != "23" || a.header.Get("X-RateLimit-Remaining") != "0" {
				t.Fatalf("with 23 per minute: HTTP %d %v", a.status, a.header)
			}
			a = get(t, base, tok, "/ocpi/2.2.1/webhooks")
			if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") != "58" || !strings.Contains(a.env.Error.Description, "23 requests per minute") {
				t.Fatalf("over 23 per minute: HTTP %d %v %+v", a.status, a.header, a.env)
			}
		})
	}
}

// TestTwoServersOnOnePostgreSQLShareTheLimit: a token's requests count
// against one limit whichever replica serves them.
func TestTwoServersOnOnePostgreSQLShareTheLimit(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Now().UTC().Truncate(time.Hour).Add(time.Hour))
	a := limitedHub(t, store.Postgres, clk, "")
	b := limitedHub(t, store.Postgres, clk, a.DBURL)
	c := cpo(t, a, "RL2")
	tok := token(c.Token())
	for i := range 10 {
		if r := get(t, a.PublicURL(), tok, "/ocpi/2.2.1/webhooks"); r.status != 200 {
			t.Fatalf("replica A request %d: HTTP %d", i+1, r.status)
		}
		if r := get(t, b.PublicURL(), tok, "/ocpi/2.2.1/webhooks"); r.status != 200 {
			t.Fatalf("replica B request %d: HTTP %d", i+1, r.status)
		}
	}
	for _, h := range []*hubtest.Hub{a, b} {
		if r := get(t, h.PublicURL(), tok, "/ocpi/2.2.1/webhooks"); r.status != http.StatusTooManyRequests {
			t.Fatalf("21st request in the second on %s: HTTP %d", h.PublicURL(), r.status)
		}
	}
}
