package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/ocpihub/ocpihub/internal/sim/webhooksim"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// TestDeliveryReachesWhoMayKnowSignedByStandardWebhooks: the operator gets
// every event, a partner its own parties' events and public ones, never
// another partner's; every delivery verifies with the Standard Webhooks
// algorithm and the subscription's secret.
func TestDeliveryReachesWhoMayKnowSignedByStandardWebhooks(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo, emsp := pair(t, h)
		opR, cpoR, emspR := hubtest.StartWebhookReceiver(t), hubtest.StartWebhookReceiver(t), hubtest.StartWebhookReceiver(t)
		all := []string{"session.started", "location.updated", "cdr.created"}
		opSub := subscribe(t, h, hubtest.AdminTokenB64, opR.URL(), all...)
		cpoSub := subscribe(t, h, hubtest.TokenOf(cpo), cpoR.URL(), all...)
		emspSub := subscribe(t, h, hubtest.TokenOf(emsp), emspR.URL(), all...)

		session := map[string]string{"session_id": "S1", "location_id": "L1", "evse_id": "E1", "timestamp": "2025-03-01T10:00:00Z"}
		emit(t, h, event.Event{Name: event.SessionStarted, Data: session, Parties: []event.Party{
			{Role: "CPO", CountryCode: "NL", PartyID: "CP1"}, {Role: "EMSP", CountryCode: "DE", PartyID: "EM1"}}})
		emit(t, h, event.Event{Name: event.LocationUpdated, Data: map[string]string{"location_id": "L1"}, Public: true,
			Parties: []event.Party{{Role: "CPO", CountryCode: "NL", PartyID: "CP1"}}})
		// Another CPO's CDR, and one naming CP1 under another role.
		emit(t, h, event.Event{Name: event.CDRCreated, Data: map[string]string{"cdr_id": "C1"}, Parties: []event.Party{{Role: "CPO", CountryCode: "FR", PartyID: "ZZZ"}}})
		emit(t, h, event.Event{Name: event.CDRCreated, Data: map[string]string{"cdr_id": "C2"}, Parties: []event.Party{{Role: "EMSP", CountryCode: "NL", PartyID: "CP1"}}})
		// A public sentinel last: deliveries to one subscription are in
		// order, so a partner that gets it without a CDR before never gets
		// a CDR.
		emit(t, h, event.Event{Name: event.LocationUpdated, Data: map[string]string{"location_id": "L2"}, Public: true})

		op := hubtest.WaitWebhooks(t, opR, 5)
		cp := hubtest.WaitWebhooks(t, cpoR, 3)
		em := hubtest.WaitWebhooks(t, emspR, 3)
		if got := eventNames(op); got != "session.started,location.updated,cdr.created,cdr.created,location.updated" {
			t.Fatalf("operator got %s", got)
		}
		for name, ds := range map[string][]webhooksim.Delivery{"cpo": cp, "emsp": em} {
			if got := eventNames(ds); got != "session.started,location.updated,location.updated" {
				t.Fatalf("%s got %s", name, got)
			}
		}
		if !jsonEq(op[0].Payload.Data, mustJSON(session)) || op[0].Payload.Signature == "" {
			t.Fatalf("payload %s", op[0].Body)
		}
		secrets := map[*webhooksim.Receiver]string{opR: opSub.Secret, cpoR: cpoSub.Secret, emspR: emspSub.Secret}
		for r, secret := range secrets {
			for _, d := range r.Deliveries() {
				if !standardVerify(t, secret, d.Header, d.Body) {
					t.Errorf("delivery %s fails Standard Webhooks verification: %s", d.Header.Get("webhook-id"), d.Body)
				}
				if err := webhook.Verify(secret, d.Header, d.Body); err != nil {
					t.Errorf("webhook.Verify: %v", err)
				}
				if d.Header.Get("Content-Type") != "application/json" {
					t.Errorf("content type %q", d.Header.Get("Content-Type"))
				}
			}
		}
		// One event, one webhook-id for every subscriber.
		if op[0].Header.Get("webhook-id") != cp[0].Header.Get("webhook-id") || op[0].Header.Get("webhook-id") == op[1].Header.Get("webhook-id") {
			t.Fatal("webhook-id is not the event's id")
		}
		eventually(t, 10*time.Second, "the delivery log to show a delivery", func() bool {
			ds := deliveries(t, h, cpoSub.ID)
			return len(ds) == 3 && ds[0].Status == webhook.StatusDelivered
		})
		d := deliveries(t, h, cpoSub.ID)[0]
		if d.Attempts != 1 || d.ResponseCode != 204 || d.DeliveredAt == nil || d.LastError != "" || d.Event != "session.started" {
			t.Fatalf("log line %+v", d)
		}
	})
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// eachFake runs fn on both engines with a fake-clock hub (hubtest.EachFake)
// whose deliveries time out after timeout (0: the default).
func eachFake(t *testing.T, timeout time.Duration, fn func(t *testing.T, h *hubtest.Hub, clk *clock.Fake)) {
	hubtest.EachFake(t, fn, func(o *hubtest.Options) {
		o.Config = func(c *app.Config) {
			if timeout > 0 {
				c.WebhookTimeout = timeout
			}
		}
	})
}

// within reports whether got is d ± 10 %.
func within(got, d time.Duration) bool {
	return got >= d-d/10-time.Millisecond && got <= d+d/10+time.Millisecond
}

func TestRetriesOnServerErrorAndTimeoutWithBackoff(t *testing.T) {
	t.Parallel()
	eachFake(t, 300*time.Millisecond, func(t *testing.T, h *hubtest.Hub, clk *clock.Fake) {
		rcv := hubtest.StartWebhookReceiver(t)
		rcv.Respond(func(n int) int {
			switch n {
			case 1:
				return http.StatusInternalServerError
			case 2:
				return 0 // no answer: the attempt times out
			}
			return http.StatusOK
		})
		sub := subscribe(t, h, hubtest.AdminTokenB64, rcv.URL(), "session.stopped")
		emit(t, h, event.Event{Name: event.SessionStopped, Data: map[string]string{"session_id": "S9"}})

		logged := func(attempts int) *webhook.Delivery {
			var d *webhook.Delivery
			eventually(t, 15*time.Second, fmt.Sprintf("attempt %d in the log", attempts), func() bool {
				d = deliveries(t, h, sub.ID)[0]
				return d.Attempts == attempts
			})
			return d
		}
		hubtest.WaitWebhooks(t, rcv, 1)
		d := logged(1)
		t0 := clk.Now()
		if d.Status != webhook.StatusPending || d.ResponseCode != 500 || !strings.Contains(d.LastError, "HTTP 500") || d.NextAttemptAt == nil {
			t.Fatalf("after a 500: %+v", d)
		}
		if wait := d.NextAttemptAt.Sub(t0); !within(wait, 5*time.Second) {
			t.Fatalf("second attempt scheduled %s after the first, want 5s ± 10%%", wait)
		}

		clk.Add(6 * time.Second)
		hubtest.WaitWebhooks(t, rcv, 2)
		d = logged(2)
		if d.Status != webhook.StatusPending || d.ResponseCode != 0 || !strings.Contains(d.LastError, "no answer within 300ms") {
			t.Fatalf("after a timeout: %+v", d)
		}
		if wait := d.NextAttemptAt.Sub(clk.Now()); !within(wait, 5*time.Minute) {
			t.Fatalf("third attempt scheduled %s after the second, want 5m ± 10%%", wait)
		}
		if n := len(rcv.Deliveries()); n != 2 {
			t.Fatalf("%d requests before the clock reached the retry", n)
		}

		clk.Add(6 * time.Minute)
		hubtest.WaitWebhooks(t, rcv, 3)
		d = logged(3)
		if d.Status != webhook.StatusDelivered || d.ResponseCode != 200 || d.LastError != "" {
			t.Fatalf("after a success: %+v", d)
		}
		ds := rcv.Deliveries()
		for i, x := range ds {
			if x.Header.Get("webhook-id") != ds[0].Header.Get("webhook-id") {
				t.Fatal("the webhook-id changed between attempts")
			}
			if !standardVerify(t, sub.Secret, x.Header, x.Body) {
				t.Fatalf("attempt %d does not verify", i+1)
			}
		}
		if ds[0].Header.Get("webhook-timestamp") == ds[2].Header.Get("webhook-timestamp") {
			t.Fatal("a retry is signed with the first attempt's timestamp")
		}
		var failures int
		if err := h.DB.Read().QueryRow(t.Context(), "SELECT failures FROM webhook_subscriptions WHERE id = $1", sub.ID).Scan(&failures); err != nil || failures != 0 {
			t.Fatalf("failures after a success: %d %v", failures, err)
		}
	})
}

// TestGoneDisablesAndTellsTheOwner: a 410 disables the subscription, fails
// what was pending and emits webhook.disabled to the operator and to the
// owner's other subscriptions, not to other partners.
func TestGoneDisablesAndTellsTheOwner(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo, emsp := pair(t, h)
		gone, opR, ownerR, otherR := hubtest.StartWebhookReceiver(t), hubtest.StartWebhookReceiver(t), hubtest.StartWebhookReceiver(t), hubtest.StartWebhookReceiver(t)
		gone.SetStatus(http.StatusGone)
		gone.SetHang(true) // the 410 waits until the second event's delivery is queued behind the first
		subscribe(t, h, hubtest.AdminTokenB64, opR.URL(), "webhook.disabled")
		subscribe(t, h, hubtest.TokenOf(cpo), ownerR.URL(), "webhook.disabled")
		subscribe(t, h, hubtest.TokenOf(emsp), otherR.URL(), "webhook.disabled", "location.updated")
		sub := subscribe(t, h, hubtest.TokenOf(cpo), gone.URL(), "session.started")

		cp1 := []event.Party{{Role: "CPO", CountryCode: "NL", PartyID: "CP1"}}
		emit(t, h, event.Event{Name: event.SessionStarted, Data: map[string]string{"session_id": "S1"}, Parties: cp1})
		hubtest.WaitWebhooks(t, gone, 1)
		emit(t, h, event.Event{Name: event.SessionStarted, Data: map[string]string{"session_id": "S2"}, Parties: cp1})
		eventually(t, 10*time.Second, "the second delivery queued", func() bool { return len(deliveries(t, h, sub.ID)) == 2 })
		gone.SetHang(false)

		for _, r := range []*webhooksim.Receiver{opR, ownerR} {
			d := hubtest.WaitWebhooks(t, r, 1)[0]
			var data webhook.DisabledData
			if err := json.Unmarshal(d.Payload.Data, &data); err != nil || d.Payload.Event != "webhook.disabled" ||
				data.SubscriptionID != sub.ID || !strings.Contains(data.Reason, "410") {
				t.Fatalf("notification %s", d.Body)
			}
		}
		emit(t, h, event.Event{Name: event.LocationUpdated, Public: true, Data: map[string]string{"location_id": "L1"}})
		if got := eventNames(hubtest.WaitWebhooks(t, otherR, 1)); got != "location.updated" {
			t.Fatalf("another partner got %s", got)
		}

		r := call(t, h.PublicURL(), hubtest.TokenOf(cpo), http.MethodGet, "/ocpi/2.2.1/webhooks/"+sub.ID, nil, nil)
		var got webhook.Subscription
		r.decodeData(t, &got)
		if got.Status != webhook.StatusDisabled || !strings.Contains(got.DisabledReason, "410") {
			t.Fatalf("subscription after 410: %s", r.raw)
		}
		eventually(t, 10*time.Second, "both deliveries failed", func() bool {
			ds := deliveries(t, h, sub.ID)
			return len(ds) == 2 && ds[0].Status == webhook.StatusFailed && ds[1].Status == webhook.StatusFailed
		})
		ds := deliveries(t, h, sub.ID)
		if ds[0].ResponseCode != 410 || ds[1].Attempts != 0 || !strings.Contains(ds[1].LastError, "disabled") {
			t.Fatalf("log after 410: %+v %+v", ds[0], ds[1])
		}
		if n := len(gone.Deliveries()); n != 1 {
			t.Fatalf("the gone receiver got %d requests", n)
		}
		// No new deliveries for a disabled subscription.
		emit(t, h, event.Event{Name: event.SessionStarted, Data: map[string]string{"session_id": "S3"}, Parties: cp1})
		if n := len(deliveries(t, h, sub.ID)); n != 2 {
			t.Fatalf("a disabled subscription got a delivery (%d)", n)
		}
	})
}

func TestFailingForFiveDaysDisables(t *testing.T) {
	t.Parallel()
	eachFake(t, 0, func(t *testing.T, h *hubtest.Hub, clk *clock.Fake) {
		bad, opR := hubtest.StartWebhookReceiver(t), hubtest.StartWebhookReceiver(t)
		bad.SetStatus(http.StatusServiceUnavailable)
		subscribe(t, h, hubtest.AdminTokenB64, opR.URL(), "webhook.disabled")
		sub := subscribe(t, h, hubtest.AdminTokenB64, bad.URL(), "cdr.missing")
		emit(t, h, event.Event{Name: event.CDRMissing, Data: map[string]string{"session_id": "S1"}})
		hubtest.WaitWebhooks(t, bad, 1)
		eventually(t, 10*time.Second, "the first failure recorded", func() bool { return deliveries(t, h, sub.ID)[0].Attempts == 1 })

		clk.Add(4*24*time.Hour + 23*time.Hour) // not yet five days: a failure keeps it on
		hubtest.WaitWebhooks(t, bad, 2)
		eventually(t, 10*time.Second, "the second failure recorded", func() bool { return deliveries(t, h, sub.ID)[0].Attempts == 2 })
		r := call(t, h.PublicURL(), hubtest.AdminTokenB64, http.MethodGet, "/admin/webhooks/"+sub.ID, nil, nil)
		var got webhook.Subscription
		r.decodeData(t, &got)
		if got.Status != webhook.StatusActive || got.FailingSince == nil {
			t.Fatalf("after 4 days 23 hours: %s", r.raw)
		}

		clk.Add(2 * time.Hour)
		hubtest.WaitWebhooks(t, bad, 3)
		d := hubtest.WaitWebhooks(t, opR, 1)[0]
		var data webhook.DisabledData
		if err := json.Unmarshal(d.Payload.Data, &data); err != nil || data.SubscriptionID != sub.ID || !strings.Contains(data.Reason, "failed for 120h0m0s") {
			t.Fatalf("notification %s", d.Body)
		}
		r = call(t, h.PublicURL(), hubtest.AdminTokenB64, http.MethodGet, "/admin/webhooks/"+sub.ID, nil, nil)
		got = webhook.Subscription{}
		r.decodeData(t, &got)
		if got.Status != webhook.StatusDisabled {
			t.Fatalf("after five days: %s", r.raw)
		}
	})
}

// TestOrderPerSubscription: one subscription's deliveries arrive in the
// order of their events, a failure holding the later ones back until its
// retry succeeds, while another subscription of the same events is served
// at once.
func TestOrderPerSubscription(t *testing.T) {
	t.Parallel()
	eachFake(t, 0, func(t *testing.T, h *hubtest.Hub, clk *clock.Fake) {
		flaky, healthy := hubtest.StartWebhookReceiver(t), hubtest.StartWebhookReceiver(t)
		flaky.Respond(func(n int) int {
			if n == 3 {
				return http.StatusServiceUnavailable
			}
			return http.StatusNoContent
		})
		subF := subscribe(t, h, hubtest.AdminTokenB64, flaky.URL(), "location.updated")
		subscribe(t, h, hubtest.AdminTokenB64, healthy.URL(), "location.updated")
		const n = 20
		for i := 1; i <= n; i++ {
			emit(t, h, event.Event{Name: event.LocationUpdated, Public: true, Data: map[string]int{"seq": i}})
		}
		seqs := func(ds []webhooksim.Delivery) []int {
			out := make([]int, len(ds))
			for i, d := range ds {
				var v struct{ Seq int }
				_ = json.Unmarshal(d.Payload.Data, &v)
				out[i] = v.Seq
			}
			return out
		}
		want := make([]int, 0, n+1)
		for i := 1; i <= n; i++ {
			want = append(want, i)
		}
		if got := seqs(hubtest.WaitWebhooks(t, healthy, n)); !slices.Equal(got, want) {
			t.Fatalf("healthy subscriber got %v", got)
		}
		hubtest.WaitWebhooks(t, flaky, 3)
		// The failure is recorded: only its retry waits, and the engine
		// has had a look (its poll) past it.
		eventually(t, 10*time.Second, "the failure recorded", func() bool {
			d := deliveries(t, h, subF.ID)[2]
			return d.Attempts == 1 && d.NextAttemptAt != nil
		})
		time.Sleep(1500 * time.Millisecond)
		if got := seqs(flaky.Deliveries()); !slices.Equal(got, []int{1, 2, 3}) {
			t.Fatalf("deliveries went past a failed one: %v", got)
		}
		for _, d := range deliveries(t, h, subF.ID)[3:] {
			if d.Attempts != 0 || d.Status != webhook.StatusPending {
				t.Fatalf("a later delivery was attempted: %+v", d)
			}
		}
		clk.Add(6 * time.Second)
		want = append([]int{1, 2, 3}, want[2:]...)
		if got := seqs(hubtest.WaitWebhooks(t, flaky, n+1)); !slices.Equal(got, want) {
			t.Fatalf("flaky subscriber got %v, want %v", got, want)
		}
	})
}

func TestReplayAndDeliveryLog(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpo, emsp := pair(t, h)
		rcv := hubtest.StartWebhookReceiver(t)
		sub := subscribe(t, h, hubtest.TokenOf(cpo), rcv.URL(), "session.started", "session.stopped")
		cp1 := []event.Party{{Role: "CPO", CountryCode: "NL", PartyID: "CP1"}}
		for i := 1; i <= 5; i++ {
			emit(t, h, event.Event{Name: event.SessionStarted, Data: map[string]int{"seq": i}, Parties: cp1})
		}
		hubtest.WaitWebhooks(t, rcv, 5)
		eventually(t, 10*time.Second, "five delivered", func() bool {
			ds := deliveries(t, h, sub.ID)
			return len(ds) == 5 && ds[4].Status == webhook.StatusDelivered
		})
		// The events' ids (each one's webhook-id) are time-ordered, in the
		// order they were emitted (internal/ids).
		var eventIDs []string
		for _, d := range deliveries(t, h, sub.ID) {
			eventIDs = append(eventIDs, d.EventID)
		}
		hubtest.TimeOrdered(t, "the five events' ids", eventIDs...)
		base, path := h.PublicURL(), "/ocpi/2.2.1/webhooks/"+sub.ID

		// Paging, newest first, through our Link headers.
		var seen []int64
		next := path + "/deliveries?limit=2"
		for pages := 0; next != ""; pages++ {
			if pages > 5 {
				t.Fatal("paging does not end")
			}
			r := call(t, base, hubtest.TokenOf(cpo), http.MethodGet, next, nil, nil)
			var page []webhook.Delivery
			r.decodeData(t, &page)
			if r.header.Get("X-Total-Count") != "5" || len(page) == 0 || len(page) > 2 {
				t.Fatalf("page %s: %s", next, r.raw)
			}
			for _, d := range page {
				seen = append(seen, d.ID)
			}
			next = ""
			if link := r.header.Get("Link"); link != "" {
				u := link[strings.Index(link, "<")+1 : strings.Index(link, ">")]
				next = u[strings.Index(u, "/ocpi/"):]
			}
		}
		if len(seen) != 5 || !slices.IsSortedFunc(seen, func(a, b int64) int { return int(b - a) }) {
			t.Fatalf("pages gave %v", seen)
		}
		r := call(t, base, hubtest.TokenOf(cpo), http.MethodGet, path+"/deliveries?status=delivered", nil, nil)
		if r.header.Get("X-Total-Count") != "5" {
			t.Fatalf("status filter: %s", r.raw)
		}

		first := seen[len(seen)-1]
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodGet, path+"/deliveries/"+strconv.FormatInt(first, 10), nil, nil)
		var one webhook.Delivery
		r.decodeData(t, &one)
		if one.ID != first || one.Data == nil || !strings.Contains(string(r.raw), `"seq":1`) {
			t.Fatalf("one delivery: %s", r.raw)
		}

		// Replay: a new delivery, same webhook-id, at the end of the queue.
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodPost, path+"/deliveries/"+strconv.FormatInt(first, 10)+"/replay", nil, nil)
		var replay webhook.Delivery
		r.decodeData(t, &replay)
		if r.status != http.StatusCreated || replay.ReplayOf != first || replay.ID <= seen[0] || replay.EventID != one.EventID {
			t.Fatalf("replay: HTTP %d %s", r.status, r.raw)
		}
		ds := hubtest.WaitWebhooks(t, rcv, 6)
		if ds[5].Header.Get("webhook-id") != ds[0].Header.Get("webhook-id") || !strings.Contains(string(ds[5].Body), `"seq":1`) {
			t.Fatalf("replayed delivery %s", ds[5].Body)
		}
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodPost, path+"/deliveries/999999/replay", nil, nil)
		if r.status != http.StatusNotFound {
			t.Fatalf("replay of an unknown delivery: %s", r.raw)
		}
		r = call(t, base, hubtest.TokenOf(emsp), http.MethodPost, path+"/deliveries/"+strconv.FormatInt(first, 10)+"/replay", nil, nil)
		if r.status != http.StatusNotFound {
			t.Fatalf("replay by another partner: %s", r.raw)
		}
		// The operator replays through the admin API.
		r = call(t, base, hubtest.AdminTokenB64, http.MethodPost, "/admin/webhooks/"+sub.ID+"/deliveries/"+strconv.FormatInt(first, 10)+"/replay", nil, nil)
		if r.status != http.StatusCreated {
			t.Fatalf("admin replay: %s", r.raw)
		}
		hubtest.WaitWebhooks(t, rcv, 7)
		call(t, base, hubtest.TokenOf(cpo), http.MethodPatch, path, map[string]any{"status": "DISABLED"}, nil)
		r = call(t, base, hubtest.TokenOf(cpo), http.MethodPost, path+"/deliveries/"+strconv.FormatInt(first, 10)+"/replay", nil, nil)
		if r.env.StatusCode != 2001 || !strings.Contains(r.env.Error.Description, "disabled") {
			t.Fatalf("replay to a disabled subscription: %s", r.raw)
		}
	})
}

// TestPollingFindsAnUnannouncedDelivery: a due delivery nobody woke the
// engine for (queued by another process, or whose wake-up was lost) is
// found by the engine's polling.
func TestPollingFindsAnUnannouncedDelivery(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		rcv := hubtest.StartWebhookReceiver(t)
		sub := subscribe(t, h, hubtest.AdminTokenB64, rcv.URL(), "cdr.created")
		past := time.Now().Add(-2 * time.Minute).UnixMicro()
		err := h.DB.InTx(t.Context(), func(ctx context.Context, q *store.Tx) error {
			if _, err := q.Exec(ctx, "INSERT INTO webhook_events (id, name, data, created_at) VALUES ('e-lost', 'cdr.created', '{\"cdr_id\":\"X\"}', $1)", past); err != nil {
				return err
			}
			_, err := q.Exec(ctx, `INSERT INTO webhook_deliveries (subscription_id, event_id, event, status, next_attempt_at, created_at, updated_at)
				VALUES ($1, 'e-lost', 'cdr.created', 'PENDING', $2, $2, $2)`, sub.ID, past)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		d := hubtest.WaitWebhooks(t, rcv, 1)[0]
		if d.Header.Get("webhook-id") != "e-lost" {
			t.Fatalf("delivered %s", d.Body)
		}
		eventually(t, 10*time.Second, "the lost delivery delivered", func() bool {
			return deliveries(t, h, sub.ID)[0].Status == webhook.StatusDelivered
		})
	})
}

func TestPruneKeepsThirtyDays(t *testing.T) {
	t.Parallel()
	eachFake(t, 0, func(t *testing.T, h *hubtest.Hub, clk *clock.Fake) {
		rcv := hubtest.StartWebhookReceiver(t)
		sub := subscribe(t, h, hubtest.AdminTokenB64, rcv.URL(), "cdr.created")
		emit(t, h, event.Event{Name: event.CDRCreated, Data: map[string]string{"cdr_id": "C1"}})
		hubtest.WaitWebhooks(t, rcv, 1)
		eventually(t, 10*time.Second, "delivered", func() bool { return deliveries(t, h, sub.ID)[0].Status == webhook.StatusDelivered })
		clk.Add(29 * 24 * time.Hour)
		if n, err := h.Webhooks.Prune(t.Context()); err != nil || n != 0 {
			t.Fatalf("pruned %d at 29 days (%v)", n, err)
		}
		clk.Add(2 * 24 * time.Hour)
		if n, err := h.Webhooks.Prune(t.Context()); err != nil || n != 1 {
			t.Fatalf("pruned %d at 31 days (%v)", n, err)
		}
		var events int
		if err := h.DB.Read().QueryRow(t.Context(), "SELECT COUNT(*) FROM webhook_events").Scan(&events); err != nil || events != 0 {
			t.Fatalf("%d events left (%v)", events, err)
		}
	})
}

// TestHubEventsAreWired: the hub's own services emit through the webhook
// service (here the party registry's party.status_changed).
func TestHubEventsAreWired(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		rcv := hubtest.StartWebhookReceiver(t)
		subscribe(t, h, hubtest.AdminTokenB64, rcv.URL(), "party.status_changed")
		partner(t, h, "CPO", "NL", "WIR")
		var found bool
		for _, d := range hubtest.WaitWebhooks(t, rcv, 1) {
			found = found || (d.Payload.Event == "party.status_changed" && strings.Contains(string(d.Payload.Data), `"party_id":"WIR"`))
		}
		if !found {
			t.Fatalf("no party.status_changed for WIR: %s", rcv.Deliveries()[0].Body)
		}
	})
}
