package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim/webhooksim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// webhookSecret is the signing secret of the test subscriptions: no page
// may show it.
const webhookSecret = "console-test-signing-secret-0123456789"

// failedDelivery subscribes the operator (its admin token on the webhooks API) to cdr.missing at a receiver that
// answers 410 Gone (it was taken down), emits one event, and waits until
// its delivery has failed and the subscription is disabled. It returns the
// subscription and the delivery.
func failedDelivery(t testing.TB, h *hubtest.Hub) (*webhooksim.Receiver, *webhook.Subscription, *webhook.Delivery) {
	t.Helper()
	ctx := hubtest.Ctx(t, time.Minute)
	rcv := hubtest.StartWebhookReceiver(t)
	rcv.SetStatus(http.StatusGone)
	var sub webhook.Subscription
	if resp := h.Admin(t, http.MethodPost, "/ocpi/2.2.1/webhooks", map[string]any{"url": rcv.URL(), "events": []string{event.CDRMissing}, "secret": webhookSecret}, &sub); resp.HTTPStatus != http.StatusCreated {
		t.Fatalf("subscribe: HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
	if err := h.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		return h.Events.Emit(ctx, tx, event.Event{Name: event.CDRMissing, Data: map[string]string{"session_id": "S-CONSOLE-1"}})
	}); err != nil {
		t.Fatal(err)
	}
	all := webhook.Owner{All: true}
	var d *webhook.Delivery
	hubtest.Eventually(t, ctx, "the delivery to fail", func() bool {
		list, _, err := h.Webhooks.Deliveries(ctx, all, sub.ID, webhook.DeliveryFilter{}, ocpi.PageRequest{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		s, err := h.Webhooks.Find(ctx, all, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 1 && list[0].Status == webhook.StatusFailed && s.Status == webhook.StatusDisabled {
			d = list[0]
			return true
		}
		return false
	})
	return rcv, &sub, d
}

// TestWebhookPages: the subscriptions list and a subscription's delivery
// log show what happened (never the signing secret); the operator enables
// the subscription again and replays the failed delivery, which arrives;
// both POSTs need the CSRF token.
func TestWebhookPages(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, time.Minute)
		rcv, sub, d := failedDelivery(t, h)
		did := strconv.FormatInt(d.ID, 10)
		c := signedIn(t, h)

		list := c.get("/console/webhooks")
		for _, want := range []string{`href="/console/webhooks"`, rcv.URL(), sub.ID, "cdr.missing", "DISABLED", "410", "operator"} {
			if !strings.Contains(list.body, want) {
				t.Errorf("webhooks page lacks %q", want)
			}
		}
		path := "/console/webhooks/" + sub.ID
		detail := c.get(path)
		for _, want := range []string{`data-delivery="` + did + `"`, "FAILED", "HTTP 410", `id="enable"`, d.EventID} {
			if !strings.Contains(detail.body, want) {
				t.Errorf("subscription page lacks %q", want)
			}
		}
		if strings.Contains(detail.body, `id="replay-`) {
			t.Error("a disabled subscription offers Replay")
		}
		for _, p := range []page{list, detail} {
			if strings.Contains(p.body, webhookSecret) {
				t.Error("a page shows the signing secret")
			}
		}

		// The receiver is back. Enabling needs the CSRF token.
		rcv.SetStatus(http.StatusNoContent)
		if p := c.do(http.MethodPost, path+"/enable", url.Values{}); p.status != http.StatusForbidden {
			t.Errorf("enable without CSRF: HTTP %d", p.status)
		}
		p := c.do(http.MethodPost, path+"/enable", url.Values{"csrf": {csrf(t, detail)}})
		if p.status != http.StatusSeeOther || p.location != path {
			t.Fatalf("enable: HTTP %d → %q", p.status, p.location)
		}
		detail = c.get(path)
		if !strings.Contains(detail.body, "is active again") || !strings.Contains(detail.body, `id="replay-`+did+`"`) {
			t.Fatalf("after enabling:\n%s", detail.body)
		}

		// Replay: refused without the CSRF token (nothing is sent), done
		// with it; the copy arrives with the same webhook-id.
		replay := path + "/deliveries/" + did + "/replay"
		if p := c.do(http.MethodPost, replay, url.Values{"csrf": {"forged"}}); p.status != http.StatusForbidden {
			t.Errorf("replay with a forged CSRF token: HTTP %d", p.status)
		}
		if list, _, _ := h.Webhooks.Deliveries(ctx, webhook.Owner{All: true}, sub.ID, webhook.DeliveryFilter{}, ocpi.PageRequest{Limit: 10}); len(list) != 1 {
			t.Fatalf("a forged replay made a delivery: %d deliveries", len(list))
		}
		p = c.do(http.MethodPost, replay, url.Values{"csrf": {csrf(t, detail)}})
		if p.status != http.StatusSeeOther || p.location != path {
			t.Fatalf("replay: HTTP %d → %q", p.status, p.location)
		}
		got, err := rcv.WaitFor(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got[1].Status != http.StatusNoContent || got[1].Header.Get("webhook-id") != d.EventID || !strings.Contains(string(got[1].Body), "S-CONSOLE-1") {
			t.Errorf("replayed delivery: %d %v %s", got[1].Status, got[1].Header, got[1].Body)
		}
		var after page
		hubtest.Eventually(t, ctx, "the replay delivered in the log", func() bool {
			after = c.get(path)
			return strings.Contains(after.body, `<span class="badge tone-ok">DELIVERED</span>`)
		})
		if !strings.Contains(after.body, "replay of #"+did) {
			t.Errorf("the log does not show the replay:\n%s", after.body)
		}
		if f := c.get(path + "?state=FAILED"); !strings.Contains(f.body, `data-delivery="`+did+`"`) || strings.Contains(f.body, "replay of #"+did) {
			t.Errorf("state=FAILED shows the wrong deliveries")
		}
		if f := c.get(path + "?state=LOST"); f.status != http.StatusBadRequest {
			t.Errorf("state=LOST: HTTP %d", f.status)
		}
		if f := c.get("/console/webhooks/no-such-subscription"); f.status != http.StatusNotFound {
			t.Errorf("unknown subscription: HTTP %d", f.status)
		}
		if p := c.do(http.MethodPost, path+"/deliveries/999999/replay", url.Values{"csrf": {csrf(t, after)}}); p.status != http.StatusSeeOther {
			t.Errorf("replay of an unknown delivery: HTTP %d", p.status)
		} else if back := c.get(p.location); !strings.Contains(back.body, "no delivery 999999") {
			t.Errorf("replay of an unknown delivery: no message")
		}
		if strings.Contains(after.body, webhookSecret) {
			t.Error("the page shows the signing secret")
		}
	})
}
