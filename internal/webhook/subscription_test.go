package webhook_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

func TestSubscriptionLifecycleAndIsolation(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo, emsp := pair(t, h)
		rcv := hubtest.StartWebhookReceiver(t)
		base := h.PublicURL()

		r := call(t, base, hubtest.TokenOf(cpo), http.MethodPost, "/ocpi/2.2.1/webhooks",
			map[string]any{"url": rcv.URL(), "events": []string{"session.started", "location.updated", "session.started"}}, nil)
		if r.status != http.StatusCreated || r.env.StatusCode != 1000 {
			t.Fatalf("create: HTTP %d %s", r.status, r.raw)
		}
		var sub webhook.Subscription
		r.decodeData(t, &sub)
		if !strings.HasPrefix(sub.Secret, "whsec_") || sub.Status != webhook.StatusActive || sub.ID == "" ||
			!slices.Equal(sub.Events, []string{"location.updated", "session.started"}) {
			t.Fatalf("created %+v", sub)
		}
		if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/ocpi/2.2.1/webhooks/"+sub.ID) {
			t.Fatalf("Location %q", loc)
		}
		path := "/ocpi/2.2.1/webhooks/" + sub.ID

		// The secret is shown once.
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodGet, path, nil, nil)
		if r.env.StatusCode != 1000 || strings.Contains(string(r.raw), "whsec_") {
			t.Fatalf("get shows the secret or fails: %s", r.raw)
		}
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodGet, "/ocpi/2.2.1/webhooks", nil, nil)
		var list []webhook.Subscription
		r.decodeData(t, &list)
		if len(list) != 1 || list[0].ID != sub.ID || list[0].Secret != "" || r.header.Get("X-Total-Count") != "1" {
			t.Fatalf("list %s", r.raw)
		}

		// Another partner sees nothing and touches nothing.
		r = call(t, base, hubtest.TokenOf(emsp), http.MethodGet, "/ocpi/2.2.1/webhooks", nil, nil)
		r.decodeData(t, &list)
		if len(list) != 0 {
			t.Fatalf("another partner lists %s", r.raw)
		}
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{http.MethodGet, path, nil},
			{http.MethodPut, path, map[string]any{"url": rcv.URL(), "events": []string{"cdr.created"}}},
			{http.MethodPatch, path, map[string]any{"status": "DISABLED"}},
			{http.MethodDelete, path, nil},
			{http.MethodGet, path + "/deliveries", nil},
			{http.MethodGet, path + "/deliveries/1", nil},
			{http.MethodPost, path + "/deliveries/1/replay", nil},
		} {
			r = call(t, base, hubtest.TokenOf(emsp), c.method, c.path, c.body, nil)
			if r.status != http.StatusNotFound || r.env.StatusCode != 2000 {
				t.Errorf("%s %s by another partner: HTTP %d %s", c.method, c.path, r.status, r.raw)
			}
		}
		// The operator's own list is separate; the admin API sees everyone's.
		r = call(t, base, hubtest.AdminTokenB64, http.MethodGet, "/ocpi/2.2.1/webhooks", nil, nil)
		r.decodeData(t, &list)
		if len(list) != 0 {
			t.Fatalf("operator's own list %s", r.raw)
		}
		r = call(t, base, hubtest.AdminTokenB64, http.MethodGet, "/admin/webhooks", nil, nil)
		r.decodeData(t, &list)
		if len(list) != 1 || list[0].PlatformID == 0 {
			t.Fatalf("admin list %s", r.raw)
		}

		// PATCH changes what it names; PUT replaces url and events and keeps
		// the secret.
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodPatch, path, map[string]any{"events": []string{"cdr.created"}}, nil)
		var got webhook.Subscription
		r.decodeData(t, &got)
		if r.env.StatusCode != 1000 || got.URL != rcv.URL() || !slices.Equal(got.Events, []string{"cdr.created"}) {
			t.Fatalf("patch: %s", r.raw)
		}
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodPut, path, map[string]any{"url": rcv.URL() + "/v2", "events": []string{"session.stopped"}}, nil)
		r.decodeData(t, &got)
		if r.env.StatusCode != 1000 || got.URL != rcv.URL()+"/v2" || !slices.Equal(got.Events, []string{"session.stopped"}) {
			t.Fatalf("put: %s", r.raw)
		}
		var secret string
		if err := h.DB.Read().QueryRow(t.Context(), "SELECT secret FROM webhook_subscriptions WHERE id = $1", sub.ID).Scan(&secret); err != nil || secret != "plain:"+sub.Secret {
			t.Fatalf("secret after PUT without one (stored marked plain: this hub has no secret key): %q %v", secret, err)
		}
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodPatch, path, map[string]any{"status": "DISABLED"}, nil)
		r.decodeData(t, &got)
		if got.Status != webhook.StatusDisabled || got.DisabledReason == "" {
			t.Fatalf("disable: %s", r.raw)
		}
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodPatch, path, map[string]any{"status": "ACTIVE"}, nil)
		got = webhook.Subscription{}
		r.decodeData(t, &got)
		if got.Status != webhook.StatusActive || got.DisabledReason != "" {
			t.Fatalf("enable: %s", r.raw)
		}

		r = call(t, base, hubtest.TokenOf(cpo), http.MethodDelete, path, nil, nil)
		if r.status != http.StatusOK || r.env.StatusCode != 1000 {
			t.Fatalf("delete: %s", r.raw)
		}
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodGet, path, nil, nil)
		if r.status != http.StatusNotFound {
			t.Fatalf("get after delete: %s", r.raw)
		}
	})
}

func TestSubscriptionValidation(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo := partner(t, h, "CPO", "NL", "CP2")
		base := h.PublicURL()
		ok := "https://hooks.example.com/in"
		ev := []string{"session.started"}
		cases := []struct {
			name   string
			body   any
			field  string
			http   int
			inDesc []string
		}{
			{"no url", map[string]any{"events": ev}, "url", 200, nil},
			{"no events", map[string]any{"url": ok}, "events", 200, nil},
			{"empty events", map[string]any{"url": ok, "events": []string{}}, "events", 200, nil},
			{"unknown events", map[string]any{"url": ok, "events": []string{"session.started", "foo.bar", "nope"}}, "events[1]", 200, []string{`"foo.bar"`, `"nope"`}},
			{"ftp url", map[string]any{"url": "ftp://hooks.example.com/in", "events": ev}, "url", 200, nil},
			{"http url off loopback", map[string]any{"url": "http://hooks.example.com/in", "events": ev}, "url", 200, []string{"https"}},
			{"relative url", map[string]any{"url": "/in", "events": ev}, "url", 200, nil},
			{"url with fragment", map[string]any{"url": ok + "#x", "events": ev}, "url", 200, nil},
			{"short secret", map[string]any{"url": ok, "events": ev, "secret": "short"}, "secret", 200, nil},
			{"secret with space", map[string]any{"url": ok, "events": ev, "secret": "a secret with spaces in it"}, "secret", 200, nil},
			{"bad whsec secret", map[string]any{"url": ok, "events": ev, "secret": "whsec_not*base64*at*all"}, "secret", 200, nil},
			{"bad status", map[string]any{"url": ok, "events": ev, "status": "PAUSED"}, "status", 200, nil},
			{"events not a list", map[string]any{"url": ok, "events": "session.started"}, "events", 200, nil},
			{"url not a string", map[string]any{"url": 5, "events": ev}, "url", 200, nil},
			{"not JSON", "{url:", "", 400, nil},
		}
		for _, c := range cases {
			r := call(t, base, hubtest.TokenOf(cpo), http.MethodPost, "/ocpi/2.2.1/webhooks", c.body, nil)
			if r.status != c.http || r.env.StatusCode != 2001 || r.env.field() != c.field {
				t.Errorf("%s: HTTP %d, status %d, field %q; want HTTP %d, 2001, field %q: %s", c.name, r.status, r.env.StatusCode, r.env.field(), c.http, c.field, r.raw)
				continue
			}
			for _, s := range c.inDesc {
				if !strings.Contains(r.env.Error.Description, s) {
					t.Errorf("%s: description %q does not name %s", c.name, r.env.Error.Description, s)
				}
			}
		}
		var n int
		if err := h.DB.Read().QueryRow(t.Context(), "SELECT COUNT(*) FROM webhook_subscriptions").Scan(&n); err != nil || n != 0 {
			t.Fatalf("rejected requests stored %d subscriptions (%v)", n, err)
		}

		// Updates are validated the same way and change nothing when bad.
		sub := subscribe(t, h, hubtest.TokenOf(cpo), ok, "session.started")
		path := "/ocpi/2.2.1/webhooks/" + sub.ID
		for _, c := range []struct {
			method string
			body   any
			field  string
		}{
			{http.MethodPatch, map[string]any{}, "body"},
			{http.MethodPatch, map[string]any{"events": []string{"x.y"}}, "events[0]"},
			{http.MethodPatch, map[string]any{"url": "http://hooks.example.com"}, "url"},
			{http.MethodPut, map[string]any{"events": ev}, "url"},
			{http.MethodPut, map[string]any{"url": ok}, "events"},
		} {
			r := call(t, base, hubtest.TokenOf(cpo), c.method, path, c.body, nil)
			if r.env.StatusCode != 2001 || r.env.field() != c.field {
				t.Errorf("%s %v: status %d field %q, want 2001 %q", c.method, c.body, r.env.StatusCode, r.env.field(), c.field)
			}
		}
		r := call(t, base, hubtest.TokenOf(cpo), http.MethodGet, path, nil, nil)
		var got webhook.Subscription
		r.decodeData(t, &got)
		if got.URL != ok || !slices.Equal(got.Events, ev) {
			t.Fatalf("a rejected update changed the subscription: %s", r.raw)
		}
		// Loopback http is fine in dev mode (test hubs run in dev mode).
		if sub := subscribe(t, h, hubtest.TokenOf(cpo), "http://127.0.0.1:9/in", "cdr.created"); sub.ID == "" {
			t.Fatal("no id")
		}
		// A bad delivery id.
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodGet, path+"/deliveries/abc", nil, nil)
		if r.env.StatusCode != 2001 || r.env.field() != "delivery_id" {
			t.Fatalf("bad delivery id: %s", r.raw)
		}
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodGet, path+"/deliveries?status=LOST", nil, nil)
		if r.env.StatusCode != 2001 || r.env.field() != "status" {
			t.Fatalf("bad status filter: %s", r.raw)
		}
	})
}

func TestHTTPOnlyOnLoopbackInDevMode(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, store.SQLite, func(o *hubtest.Options) {
		o.Config = func(c *app.Config) { c.DevMode = false }
	})
	r := call(t, h.PublicURL(), hubtest.AdminTokenB64, http.MethodPost, "/ocpi/2.2.1/webhooks",
		map[string]any{"url": "http://127.0.0.1:8080/in", "events": []string{"cdr.created"}}, nil)
	if r.env.StatusCode != 2001 || r.env.field() != "url" {
		t.Fatalf("http loopback outside dev mode: %s", r.raw)
	}
	sub := subscribe(t, h, hubtest.AdminTokenB64, "https://hooks.example.com/in", "cdr.created")
	if sub.PlatformID != 0 {
		t.Fatalf("operator subscription owned by platform %d", sub.PlatformID)
	}
}
