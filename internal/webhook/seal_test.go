package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// storedSecret is the secret column of a subscription as the database holds
// it.
func storedSecret(t *testing.T, h *hubtest.Hub, id string) string {
	t.Helper()
	var s string
	if err := h.DB.Read().QueryRow(context.Background(), "SELECT secret FROM webhook_subscriptions WHERE id = $1", id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSigningSecretsAtRest: without a secret key a subscription's signing
// secret is stored marked plain; a key set later seals it at the next start,
// deliveries still verify with the secret the subscriber holds, a secret
// replaced through the API is stored sealed, and a hub started with another
// key refuses to start rather than sign with nothing.
func TestSigningSecretsAtRest(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		r := hubtest.StartWebhookReceiver(t)
		const secret = "a-shared-secret-of-the-subscriber"
		res := call(t, h.PublicURL(), hubtest.AdminTokenB64, http.MethodPost, "/ocpi/2.2.1/webhooks",
			map[string]any{"url": r.URL(), "events": []string{"location.updated"}, "secret": secret}, nil)
		if res.status != http.StatusCreated {
			t.Fatalf("subscribe: HTTP %d %s", res.status, res.raw)
		}
		var sub webhook.Subscription
		res.decodeData(t, &sub)
		if got := storedSecret(t, h, sub.ID); got != "plain:"+secret {
			t.Fatalf("stored without a key: %q", got)
		}

		// The operator sets a key: the next start seals the secret.
		h.Close()
		sealed := hubtest.Start(t, h.Engine, func(o *hubtest.Options) {
			o.DBURL = h.DBURL
			o.Config = func(c *app.Config) { c.SecretKey = "the operator's key, at least 32 bytes long" }
		})
		stored := storedSecret(t, sealed, sub.ID)
		if !strings.HasPrefix(stored, "v1:") || strings.Contains(stored, secret) {
			t.Fatalf("stored after a start with a key: %q", stored)
		}
		emit(t, sealed, event.Event{Name: event.LocationUpdated, Data: map[string]string{"location_id": "L1"}, Public: true})
		d := hubtest.WaitWebhooks(t, r, 1)[0]
		if err := webhook.Verify(secret, d.Header, d.Body); err != nil {
			t.Fatalf("a delivery signed with the sealed secret does not verify: %v", err)
		}

		// A new secret through the API is stored sealed and signs the next
		// delivery.
		const next = "the-subscribers-next-secret"
		res = call(t, sealed.PublicURL(), hubtest.AdminTokenB64, http.MethodPatch, "/ocpi/2.2.1/webhooks/"+sub.ID, map[string]any{"secret": next}, nil)
		if res.env.StatusCode != 1000 {
			t.Fatalf("patch: %s", res.raw)
		}
		if got := storedSecret(t, sealed, sub.ID); !strings.HasPrefix(got, "v1:") || strings.Contains(got, next) {
			t.Fatalf("replaced secret stored as %q", got)
		}
		if strings.Contains(string(res.raw), next) {
			t.Fatalf("the answer to a patch shows the secret: %s", res.raw)
		}
		emit(t, sealed, event.Event{Name: event.LocationUpdated, Data: map[string]string{"location_id": "L2"}, Public: true})
		d = hubtest.WaitWebhooks(t, r, 2)[1]
		if err := webhook.Verify(next, d.Header, d.Body); err != nil {
			t.Fatalf("a delivery after the secret changed does not verify with the new one: %v", err)
		}
		sealed.Close()

		// Another key cannot open the secret: the hub does not start.
		cfg := app.Defaults()
		cfg.DB, cfg.Addr, cfg.AdminToken, cfg.SecretKey = h.DBURL, "127.0.0.1:0", hubtest.AdminToken, "the wrong key, though 32 bytes or longer"
		a, err := app.New(context.Background(), cfg, app.Options{Logger: hubtest.Logger()})
		if err == nil {
			a.Close(context.Background())
			t.Fatal("a hub started with a key that does not open the stored signing secrets")
		}
		if !strings.Contains(err.Error(), "webhook subscription") {
			t.Errorf("start with the wrong key: %v", err)
		}
	})
}
