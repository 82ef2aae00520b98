package crashtest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/webhooksim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// TestWebhooksSurviveSIGKILL kills the hub while a webhook delivery is in
// flight (the receiver holds it unanswered) with two more queued behind it
// for the same subscription. The hub is started again on the same
// database; the receiver must get the three events in order within
// convergeWithin of the restart: the one in flight again (its outcome died
// with the process), then the two others, each once.
func TestWebhooksSurviveSIGKILL(t *testing.T) {
	engines(t, func(t *testing.T, engine store.Engine) {
		binary(t) // built before the clock starts
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		cpo := hubtest.StartSim(t, sim.StartCPO, "Crash CPO", "IN", "CPX")
		rcv := hubtest.StartWebhookReceiver(t)
		h := startHub(t, engine)
		h.register(ctx, cpo.Platform)
		c := ocpiclient.New(hubtest.Logger())
		var sub webhook.Subscription
		if _, err := c.Call(ctx, ocpiclient.Request{Method: http.MethodPost, URL: h.URL() + "/ocpi/2.2.1/webhooks", Token: adminToken, Base64: true,
			Body: map[string]any{"url": rcv.URL(), "events": []string{"location.updated"}}, MaxAttempts: 1}, &sub); err != nil {
			t.Fatalf("subscribe: %v", err)
		}

		rcv.SetHang(true)
		t.Cleanup(func() { rcv.SetHang(false) })
		put := func(id string, n int) {
			if err := cpo.PutLocation(ctx, id, location(id, "AVAILABLE", hubtest.Stamp(n))); err != nil {
				t.Fatal(err)
			}
		}
		put("L1", 0)
		if _, err := rcv.WaitFor(ctx, 1); err != nil {
			t.Fatalf("the first delivery never got in flight: %v", err)
		}
		put("L2", 1)
		put("L3", 2)
		h.kill()
		rcv.SetHang(false)

		restart := time.Now()
		h.start()
		wait, cancelWait := context.WithTimeout(ctx, 2*convergeWithin)
		defer cancelWait()
		_, err := rcv.WaitFor(wait, 4)
		took := time.Since(restart)
		if verdict, ok := converged(t, engine, took, err, "the webhook receiver has every event", "the webhook receiver still lacked events"); !ok {
			t.Fatalf("%s", verdict)
		}
		// Once the log shows every delivery done, nothing more comes.
		if err := until(wait, func() bool {
			var log []webhook.Delivery
			_, err := c.Call(wait, ocpiclient.Request{Method: http.MethodGet, URL: h.URL() + "/admin/webhooks/" + sub.ID + "/deliveries?status=DELIVERED",
				Token: adminToken, Base64: true, MaxAttempts: 1}, &log)
			return err == nil && len(log) == 3
		}); err != nil {
			t.Fatalf("the delivery log never showed three deliveries: %v", err)
		}
		got := locations(rcv.Deliveries())
		if want := []string{"L1", "L1", "L2", "L3"}; !slices.Equal(got, want) {
			t.Fatalf("the receiver got %s, want %s (the killed attempt, then each event once, in order)", strings.Join(got, ","), strings.Join(want, ","))
		}
	})
}

// locations lists the location_id of each webhook delivery.
func locations(ds []webhooksim.Delivery) []string {
	var out []string
	for _, d := range ds {
		var v struct {
			LocationID string `json:"location_id"`
		}
		_ = json.Unmarshal(d.Payload.Data, &v)
		out = append(out, v.LocationID)
	}
	return out
}
