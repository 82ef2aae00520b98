package sandbox_test

import (
	"context"
	"encoding/json"
	"github.com/ocpihub/ocpihub/internal/sim/webhooksim"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sandbox"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

func TestDailyAt(t *testing.T) {
	t.Parallel()
	d := sandbox.DailyAt{Hour: 3}
	day := func(h, m int) time.Time { return time.Date(2025, 3, 1, h, m, 0, 0, time.UTC) }
	cases := []struct{ now, next, last time.Time }{
		{day(2, 59), day(3, 0), day(3, 0).AddDate(0, 0, -1)},
		{day(3, 0), day(3, 0).AddDate(0, 0, 1), day(3, 0)},
		{day(23, 0), day(3, 0).AddDate(0, 0, 1), day(3, 0)},
	}
	for _, c := range cases {
		if got := d.Next(c.now); !got.Equal(c.next) {
			t.Errorf("Next(%s) = %s, want %s", c.now, got, c.next)
		}
		if got := d.Last(c.now); !got.Equal(c.last) {
			t.Errorf("Last(%s) = %s, want %s", c.now, got, c.last)
		}
	}
}

func count(t *testing.T, db *store.DB, table string) int {
	t.Helper()
	return storetest.Count(t, db, "SELECT COUNT(*) FROM "+table)
}

func TestRunIfDue(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC))
		r := sandbox.NewResetter(db, nil, clk, nil, 4)
		insert := func() {
			err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
				_, err := tx.Exec(ctx, "INSERT INTO webhook_events (id, name, data, created_at) VALUES ($1, 'cdr.created', '{}', 0)", clk.Now().String())
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		insert()
		// First run: no marker yet, only one is recorded.
		if did, err := r.RunIfDue(ctx); err != nil || did {
			t.Fatalf("first run reset: %v %v", did, err)
		}
		clk.Set(time.Date(2025, 3, 2, 3, 59, 0, 0, time.UTC))
		if did, _ := r.RunIfDue(ctx); did || count(t, db, "webhook_events") != 1 {
			t.Fatal("reset before the hour")
		}
		clk.Set(time.Date(2025, 3, 2, 4, 0, 30, 0, time.UTC))
		if did, err := r.RunIfDue(ctx); err != nil || !did || count(t, db, "webhook_events") != 0 {
			t.Fatalf("at the hour: %v %v, %d events", did, err, count(t, db, "webhook_events"))
		}
		insert()
		clk.Add(time.Hour)
		if did, _ := r.RunIfDue(ctx); did || count(t, db, "webhook_events") != 1 {
			t.Fatal("reset twice in a day")
		}
		// A reset missed while the hub was down happens when it is back.
		clk.Add(3 * 24 * time.Hour)
		if did, _ := r.RunIfDue(ctx); !did {
			t.Fatal("missed reset not caught up")
		}
	})
}

type answer struct {
	status int
	header http.Header
	env    struct {
		StatusCode int             `json:"status_code"`
		Data       json.RawMessage `json:"data"`
		Error      *struct {
			Details *struct {
				Field string `json:"field"`
			} `json:"details"`
		} `json:"error"`
	}
}

func do(t *testing.T, base, token, method, path, body string, header http.Header) answer {
	t.Helper()
	var raw []byte
	if body != "" {
		raw = []byte(body)
	}
	resp := hubtest.DoAt(t, base, method, path, token, raw, header)
	a := answer{status: resp.HTTPStatus, header: resp.Header}
	if err := json.Unmarshal(resp.Body, &a.env); err != nil {
		t.Fatalf("%s %s: %s", method, path, resp.Body)
	}
	return a
}

func cpo(t *testing.T, pid string) *sim.CPO {
	t.Helper()
	return hubtest.StartSim(t, sim.StartCPO, "CPO "+pid, "NL", pid)
}

// TestSandboxResetLeavesProductionIntact: the sandbox serves the same API
// on its own base URL and database; its daily reset wipes its data and
// keeps its credentials and subscriptions, and production is untouched.
func TestSandboxResetLeavesProductionIntact(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		sb := h.App.Sandbox
		if sb == nil || sb.PublicURL() == h.PublicURL() || sb.DB == h.DB {
			t.Fatal("no separate sandbox")
		}
		prodCPO, sbCPO := cpo(t, "PR1"), cpo(t, "SB1")
		h.Register(t, prodCPO.Platform)
		h.RegisterSandbox(t, sbCPO.Platform)
		prodR, sbR := hubtest.StartWebhookReceiver(t), hubtest.StartWebhookReceiver(t)

		// The same API on both, each with its own data.
		for _, x := range []struct {
			base, token, url string
		}{{h.PublicURL(), hubtest.TokenOf(prodCPO.Platform), prodR.URL()}, {sb.PublicURL(), hubtest.TokenOf(sbCPO.Platform), sbR.URL()}} {
			a := do(t, x.base, x.token, http.MethodPost, "/ocpi/2.2.1/webhooks",
				`{"url":"`+x.url+`","events":["session.started"]}`, http.Header{"X-Request-Id": {"create-1"}})
			if a.status != http.StatusCreated {
				t.Fatalf("subscribe at %s: HTTP %d", x.base, a.status)
			}
		}
		if a := do(t, h.PublicURL(), hubtest.TokenOf(sbCPO.Platform), http.MethodGet, "/ocpi/2.2.1/webhooks", "", nil); a.status != http.StatusUnauthorized {
			t.Fatalf("sandbox credentials on production: HTTP %d", a.status)
		}
		emitIn(t, h.App, "PR1")
		emitIn(t, sb, "SB1")
		waitOne(t, prodR)
		waitOne(t, sbR)

		// The banner is the sandbox's only.
		var details struct {
			Banner string `json:"banner"`
		}
		a := do(t, sb.PublicURL(), hubtest.TokenOf(sbCPO.Platform), http.MethodGet, "/ocpi/2.2.1", "", nil)
		_ = json.Unmarshal(a.env.Data, &details)
		if !strings.Contains(details.Banner, "SANDBOX") {
			t.Fatalf("sandbox details: %s", a.env.Data)
		}
		a = do(t, h.PublicURL(), hubtest.TokenOf(prodCPO.Platform), http.MethodGet, "/ocpi/2.2.1", "", nil)
		if strings.Contains(string(a.env.Data), "banner") {
			t.Fatalf("production details carry a banner: %s", a.env.Data)
		}

		before := map[string]int{}
		for _, table := range []string{"webhook_events", "webhook_deliveries", "idempotency_keys", "webhook_subscriptions", "platforms"} {
			before[table] = count(t, h.DB, table)
			if count(t, sb.DB, table) == 0 {
				t.Fatalf("sandbox %s empty before the reset", table)
			}
		}
		if a := do(t, h.PublicURL(), hubtest.AdminTokenB64, http.MethodPost, "/admin/sandbox/reset", "", nil); a.status != http.StatusNotFound {
			t.Fatalf("reset on production: HTTP %d", a.status)
		}
		if a := do(t, sb.PublicURL(), hubtest.AdminTokenB64, http.MethodPost, "/admin/sandbox/reset", "", nil); a.status != http.StatusOK {
			t.Fatalf("reset: HTTP %d", a.status)
		}
		for _, table := range []string{"webhook_events", "webhook_deliveries", "idempotency_keys"} {
			if n := count(t, sb.DB, table); n != 0 {
				t.Errorf("sandbox %s has %d rows after the reset", table, n)
			}
		}
		for _, table := range []string{"webhook_subscriptions", "platforms", "platform_roles"} {
			if count(t, sb.DB, table) == 0 {
				t.Errorf("the reset removed sandbox %s", table)
			}
		}
		for table, n := range before {
			if got := count(t, h.DB, table); got != n {
				t.Errorf("production %s: %d rows, %d before the sandbox reset", table, got, n)
			}
		}
		// The sandbox partner carries on: same credentials, same
		// subscription.
		emitIn(t, sb, "SB1")
		if got := hubtest.WaitWebhooks(t, sbR, 2); len(got) != 2 {
			t.Fatal("no delivery after the reset")
		}
	}, func(o *hubtest.Options) { o.Sandbox = true })
}

func emitIn(t *testing.T, a *app.App, pid string) {
	t.Helper()
	err := a.DB.InTx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
		return a.Events.Emit(ctx, tx, event.Event{Name: event.SessionStarted, Data: map[string]string{"session_id": "S"},
			Parties: []event.Party{{Role: "CPO", CountryCode: "NL", PartyID: pid}}})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func waitOne(t *testing.T, r *webhooksim.Receiver) { hubtest.WaitWebhooks(t, r, 1) }

func TestSandboxCredentialsAreUnlimited(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Now().Truncate(time.Second))
	h := hubtest.Start(t, store.SQLite, func(o *hubtest.Options) {
		o.Clock = clk
		o.Sandbox = true
		o.RateLimits = true
	})
	prodCPO, sbCPO := cpo(t, "PR2"), cpo(t, "SB2")
	h.Register(t, prodCPO.Platform)
	h.RegisterSandbox(t, sbCPO.Platform)
	limited := 0
	for range 30 {
		a := do(t, h.App.Sandbox.PublicURL(), hubtest.TokenOf(sbCPO.Platform), http.MethodGet, "/ocpi/2.2.1/webhooks", "", nil)
		if a.status != http.StatusOK || a.header.Get("X-RateLimit-Limit") != "" {
			t.Fatalf("sandbox request: HTTP %d %v", a.status, a.header)
		}
		if do(t, h.PublicURL(), hubtest.TokenOf(prodCPO.Platform), http.MethodGet, "/ocpi/2.2.1/webhooks", "", nil).status == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited != 10 {
		t.Fatalf("production refused %d of 30 requests in a second, want 10", limited)
	}
	var platforms []struct {
		Name    string `json:"name"`
		Sandbox bool   `json:"sandbox"`
	}
	a := do(t, h.App.Sandbox.PublicURL(), hubtest.AdminTokenB64, http.MethodGet, "/admin/parties", "", nil)
	_ = json.Unmarshal(a.env.Data, &platforms)
	if len(platforms) != 1 || !platforms[0].Sandbox {
		t.Fatalf("sandbox platforms: %s", a.env.Data)
	}
}

func TestSandboxInvitations(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, store.SQLite, func(o *hubtest.Options) { o.Sandbox = true })
	a := do(t, h.PublicURL(), hubtest.AdminTokenB64, http.MethodPost, "/admin/invitations", `{"name":"tester","sandbox":true}`, nil)
	var inv struct {
		VersionsURL string `json:"versions_url"`
		Sandbox     bool   `json:"sandbox"`
	}
	_ = json.Unmarshal(a.env.Data, &inv)
	if a.status != http.StatusCreated || !inv.Sandbox || inv.VersionsURL != h.App.Sandbox.VersionsURL() {
		t.Fatalf("sandbox invitation from production: HTTP %d %s", a.status, a.env.Data)
	}
	if count(t, h.App.Sandbox.DB, "invitations") != 1 || count(t, h.DB, "invitations") != 0 {
		t.Fatal("the invitation is not in the sandbox's database alone")
	}
	plain := hubtest.Start(t, store.SQLite)
	a = do(t, plain.PublicURL(), hubtest.AdminTokenB64, http.MethodPost, "/admin/invitations", `{"name":"tester","sandbox":true}`, nil)
	if a.env.StatusCode != 2001 || a.env.Error.Details.Field != "sandbox" {
		t.Fatalf("sandbox invitation without a sandbox: %+v", a.env)
	}
}
