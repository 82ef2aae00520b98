package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// webhooksStory is the operator's own systems listening: the operator
// subscribes a local receiver to token and location events through the
// webhook API; an eMSP issues a card and a CPO reports a repaired charger;
// the receiver gets both events, each signed (Standard Webhooks v1), and
// checks the signatures with the secret the subscription answered with; the
// hub's delivery log shows them delivered.
func webhooksStory() Story {
	return Story{Name: "Webhooks", Needs: []string{"Directory broadcast"}, Run: func(ctx context.Context, env *Env, tl *Timeline) error {
		recv, emsp, cpo := env.Webhooks, env.EMSPs[len(env.EMSPs)-1], env.CPOs[len(env.CPOs)-1]
		events := []string{event.TokenUpdated, event.LocationUpdated}
		resp, err := env.Admin(ctx, http.MethodPost, "/ocpi/2.2.1/webhooks", map[string]any{"url": recv.URL(), "events": events})
		if err != nil {
			return err
		}
		var sub webhook.Subscription
		if resp.HTTPStatus != http.StatusCreated || resp.Envelope == nil || json.Unmarshal(resp.Envelope.Data, &sub) != nil || sub.Secret == "" {
			return fmt.Errorf("subscribe: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		tl.Step("operator subscribes %s to %s (POST /ocpi/2.2.1/webhooks): subscription %s, its secret shown once",
			recv.URL(), strings.Join(events, ", "), sub.ID)

		before := len(recv.Deliveries())
		if _, err := emsp.PutToken(ctx, emsp.NewToken("RMI-RFID-0003", "RFID", "ALLOWED")); err != nil {
			return fmt.Errorf("%s issues a card: %w", emsp.Name(), err)
		}
		tl.Step("%s issues RFID card RMI-RFID-0003", emsp.Name())
		if err := cpo.PatchEVSE(ctx, "HYD01", "HYD01-E1", map[string]any{"status": "AVAILABLE", "last_updated": ocpi.NewDateTime(env.Hub.Clock.Now())}); err != nil {
			return fmt.Errorf("%s patches HYD01-E1: %w", cpo.Name(), err)
		}
		tl.Step("%s reports HYD01-E1 repaired: INOPERATIVE → AVAILABLE", cpo.Name())

		got, err := recv.WaitFor(ctx, before+len(events))
		if err != nil {
			return fmt.Errorf("the receiver: %w", err)
		}
		for _, d := range got[before:] {
			if !slices.Contains(events, d.Payload.Event) {
				return fmt.Errorf("the receiver got %q, not subscribed", d.Payload.Event)
			}
			if err := webhook.Verify(sub.Secret, d.Header, d.Body); err != nil {
				return fmt.Errorf("%s delivery %s: %w", d.Payload.Event, d.Header.Get(webhook.HeaderID), err)
			}
			// A body changed on the way must not pass.
			forged := bytes.Replace(d.Body, []byte(`"data":{`), []byte(`"data":{"forged":true,`), 1)
			if bytes.Equal(forged, d.Body) {
				return fmt.Errorf("%s delivery without a data object: %s", d.Payload.Event, d.Body)
			}
			if err := webhook.Verify(sub.Secret, d.Header, forged); !errors.Is(err, webhook.ErrInvalidSignature) {
				return fmt.Errorf("a forged %s body was not refused: %v", d.Payload.Event, err)
			}
			tl.Step("the receiver gets %s (webhook-id %s): HMAC-SHA256 signature verified with the secret; a forged copy is refused",
				d.Payload.Event, d.Header.Get(webhook.HeaderID))
		}

		var log []webhook.Delivery
		if err := until(ctx, "the delivery log", func() (bool, error) {
			resp, err := env.Admin(ctx, http.MethodGet, "/admin/webhooks/"+sub.ID+"/deliveries", nil)
			if err := answered(resp, err); err != nil {
				return false, err
			}
			if err := json.Unmarshal(resp.Envelope.Data, &log); err != nil {
				return false, err
			}
			done := 0
			for _, d := range log {
				if d.Status == webhook.StatusDelivered {
					done++
				}
			}
			return done == len(events), nil
		}); err != nil {
			return err
		}
		if len(log) != len(events) {
			return fmt.Errorf("the delivery log holds %d deliveries, want %d", len(log), len(events))
		}
		tl.Step("the hub's delivery log (GET /admin/webhooks/%s/deliveries): %d DELIVERED, answered %d", sub.ID, len(log), log[0].ResponseCode)
		return nil
	}}
}
