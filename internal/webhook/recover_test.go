package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/instance"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// queueHeld stores n due deliveries (events e-held-1…n) for a subscription
// as a sender left them when it was killed: the first three, its run (the
// first in flight), leased by token until leaseEnd.
func queueHeld(t *testing.T, h *hubtest.Hub, subID string, n int, token string, leaseEnd time.Time) {
	t.Helper()
	now := time.Now().UnixMicro()
	err := h.DB.InTx(t.Context(), func(ctx context.Context, q *store.Tx) error {
		for i := 1; i <= n; i++ {
			id := fmt.Sprintf("e-held-%d", i)
			if _, err := q.Exec(ctx, "INSERT INTO webhook_events (id, name, data, created_at) VALUES ($1, 'cdr.created', $2, $3)",
				id, fmt.Sprintf(`{"seq":%d}`, i), now); err != nil {
				return err
			}
			// The killed sender's run: the first three.
			token, until := token, leaseEnd.UnixMicro()
			if i > 3 {
				token, until = "", 0
			}
			if _, err := q.Exec(ctx, `INSERT INTO webhook_deliveries (subscription_id, event_id, event, status, next_attempt_at, created_at, updated_at,
				lease_token, lease_until) VALUES ($1, $2, 'cdr.created', 'PENDING', $3, $3, $3, $4, $5)`, subID, id, now, token, until); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestKilledSendersQueueMovesWithinSeconds: a subscription's sender was
// killed holding the lease of its delivery in flight, on another machine
// (its holder cannot be checked from here). The lease is respected while
// it lasts (the holder might be alive), and within seconds after it runs
// out the delivery goes out.
func TestKilledSendersQueueMovesWithinSeconds(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		rcv := hubtest.StartWebhookReceiver(t)
		sub := subscribe(t, h, hubtest.AdminTokenB64, rcv.URL(), "cdr.created")
		leaseEnd := time.Now().Add(3 * time.Second)
		queueHeld(t, h, sub.ID, 1, "otherhost.4026531836.4242.abcdefghij~lease", leaseEnd)
		if n, err := h.Webhooks.Recover(t.Context()); err != nil || n != 0 {
			t.Fatalf("Recover took a live lease: %d (%v)", n, err)
		}
		d := hubtest.WaitWebhooks(t, rcv, 1)[0]
		got := time.Now()
		t.Logf("delivered %v after the lease ran out", got.Sub(leaseEnd))
		if d.Header.Get("webhook-id") != "e-held-1" {
			t.Fatalf("delivered %s", d.Body)
		}
		if got.Before(leaseEnd) {
			t.Errorf("delivered %v before the lease ran out", leaseEnd.Sub(got))
		}
		// Seconds: the bound leaves room for a loaded CI machine.
		if late := got.Sub(leaseEnd); late > 15*time.Second {
			t.Errorf("delivered %v after the lease ran out", late)
		}
		eventually(t, 10*time.Second, "the held delivery delivered", func() bool {
			return deliveries(t, h, sub.ID)[0].Status == webhook.StatusDelivered
		})
	})
}

// TestDeadSendersQueueIsTakenAtOnceInOrder: a sender on this machine was
// killed holding a long lease on the head of a subscription's queue, with
// more deliveries behind it. Its holder is known to be gone, so Recover has
// the queue taken at once, without waiting for the lease: the head is sent
// again (its outcome died with the sender) and the rest follow, in order,
// each once.
func TestDeadSendersQueueIsTakenAtOnceInOrder(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		rcv := hubtest.StartWebhookReceiver(t)
		sub := subscribe(t, h, hubtest.AdminTokenB64, rcv.URL(), "cdr.created")
		dead := instance.New()
		dead.Release()
		start := time.Now()
		queueHeld(t, h, sub.ID, 5, dead.Token("lease"), start.Add(time.Hour))
		if n, err := h.Webhooks.Recover(t.Context()); err != nil || n != 1 {
			t.Fatalf("Recover woke %d queues (%v), want 1", n, err)
		}
		ds := hubtest.WaitWebhooks(t, rcv, 5)
		t.Logf("moved after %v", time.Since(start))
		if took := time.Since(start); took > 15*time.Second {
			t.Errorf("the dead sender's queue took %v to move", took)
		}
		var got []string
		for _, d := range ds {
			got = append(got, d.Header.Get("webhook-id"))
		}
		if want := []string{"e-held-1", "e-held-2", "e-held-3", "e-held-4", "e-held-5"}; !slices.Equal(got, want) {
			t.Fatalf("delivered %v, want %v", got, want)
		}
		eventually(t, 10*time.Second, "every delivery recorded", func() bool {
			log := deliveries(t, h, sub.ID)
			return len(log) == 5 && log[4].Status == webhook.StatusDelivered
		})
		for _, d := range deliveries(t, h, sub.ID) {
			if d.Status != webhook.StatusDelivered || d.Attempts != 1 {
				t.Fatalf("log line %+v", d)
			}
		}
		if n := len(rcv.Deliveries()); n != 5 {
			t.Fatalf("%d requests, want 5", n)
		}
	})
}

// TestDownSubscriptionDoesNotDelayAnother: a subscriber that does not
// answer holds up its own queue only; another subscription of the same
// events gets every delivery meanwhile, and the silent one gets them all,
// in order, once it answers again.
func TestDownSubscriptionDoesNotDelayAnother(t *testing.T) {
	t.Parallel()
	eachFake(t, 30*time.Second, func(t *testing.T, h *hubtest.Hub, _ *clock.Fake) {
		down, up := hubtest.StartWebhookReceiver(t), hubtest.StartWebhookReceiver(t)
		down.SetHang(true)
		t.Cleanup(func() { down.SetHang(false) })
		subscribe(t, h, hubtest.AdminTokenB64, down.URL(), "location.updated")
		subscribe(t, h, hubtest.AdminTokenB64, up.URL(), "location.updated")
		const n = 10
		start := time.Now()
		for i := 1; i <= n; i++ {
			emit(t, h, event.Event{Name: event.LocationUpdated, Public: true, Data: map[string]int{"seq": i}})
		}
		hubtest.WaitWebhooks(t, up, n)
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("the healthy subscriber waited %v", took)
		}
		// Its first request may still be on its way (the two subscriptions
		// are delivered independently); once there, it is the only one.
		hubtest.Eventually(t, hubtest.Ctx(t, 30*time.Second), "the silent subscriber's first request", func() bool { return len(down.Deliveries()) >= 1 })
		if got := len(down.Deliveries()); got != 1 {
			t.Fatalf("the silent subscriber got %d requests, want its first only", got)
		}
		down.SetHang(false)
		var got []int
		for _, d := range hubtest.WaitWebhooks(t, down, n) {
			var v struct{ Seq int }
			_ = json.Unmarshal(d.Payload.Data, &v)
			got = append(got, v.Seq)
		}
		if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(got, want) {
			t.Fatalf("the silent subscriber got %v, want %v", got, want)
		}
	})
}
