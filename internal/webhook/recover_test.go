package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// TestKilledSendersQueueMovesWithinSeconds: a subscription's sender was
// killed holding its lease, with a delivery due. The lease is respected
// while it lasts (the holder might be alive), and within seconds after it
// runs out the delivery goes out, without waiting for the minute sweep or
// the job queue's rescue of the dead job.
func TestKilledSendersQueueMovesWithinSeconds(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		rcv := hubtest.StartWebhookReceiver(t)
		sub := subscribe(t, h, hubtest.AdminTokenB64, rcv.URL(), "cdr.created")
		now := time.Now()
		leaseEnd := now.Add(3 * time.Second)
		err := h.DB.InTx(t.Context(), func(ctx context.Context, q *store.Tx) error {
			if _, err := q.Exec(ctx, "INSERT INTO webhook_events (id, name, data, created_at) VALUES ('e-held', 'cdr.created', '{\"cdr_id\":\"X\"}', $1)", now.UnixMicro()); err != nil {
				return err
			}
			if _, err := q.Exec(ctx, `INSERT INTO webhook_deliveries (subscription_id, event_id, event, status, next_attempt_at, created_at, updated_at)
				VALUES ($1, 'e-held', 'cdr.created', 'PENDING', $2, $2, $2)`, sub.ID, now.UnixMicro()); err != nil {
				return err
			}
			_, err := q.Exec(ctx, "UPDATE webhook_subscriptions SET lease_owner = 987654321, lease_until = $1 WHERE id = $2", leaseEnd.UnixMicro(), sub.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := h.Webhooks.Recover(t.Context()); err != nil || n != 0 {
			t.Fatalf("Recover took a live lease: %d (%v)", n, err)
		}
		d := hubtest.WaitWebhooks(t, rcv, 1)[0]
		got := time.Now()
		if d.Header.Get("webhook-id") != "e-held" {
			t.Fatalf("delivered %s", d.Body)
		}
		if got.Before(leaseEnd) {
			t.Errorf("delivered %v before the lease ran out", leaseEnd.Sub(got))
		}
		// Seconds, not the minute sweep: the bound leaves room for a
		// loaded CI machine.
		if late := got.Sub(leaseEnd); late > 15*time.Second {
			t.Errorf("delivered %v after the lease ran out", late)
		}
		eventually(t, 10*time.Second, "the held delivery delivered", func() bool {
			return deliveries(t, h, sub.ID)[0].Status == webhook.StatusDelivered
		})
	})
}
