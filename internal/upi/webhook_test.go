package upi_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
)

// rows counts the rows of a table.
func (b *bundle) rows(t *testing.T, table string) int {
	t.Helper()
	return storetest.Count(t, b.h.DB, "SELECT COUNT(*) FROM "+table)
}

func hexMAC(secret string, msg []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(msg)
	return hex.EncodeToString(m.Sum(nil))
}

// TestWebhookForgery: a webhook whose signature is missing or wrong, in
// any form, is answered 401 and stores nothing; a signed body that cannot
// be read is 400 and stores nothing.
func TestWebhookForgery(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.qr(t)
		po := b.pgOrder(t, b.order(t, "200"))
		body, _ := json.Marshal(map[string]any{"entity": "event", "event": "payment.captured", "created_at": time.Now().Unix(),
			"payload": map[string]any{"payment": map[string]any{"entity": map[string]any{"id": "pay_forged000001", "entity": "payment",
				"amount": 20000, "currency": "INR", "status": "captured", "order_id": po.ID, "method": "upi", "captured": true}}}})
		flat := func(secret string) []byte {
			b, _ := json.Marshal(map[string]any{"pg_payment_id": "pay_forged000002", "order_id": po.ID, "status": "captured",
				"amount": "200.00", "payer_vpa": "x@y", "signature": hexMAC(secret, []byte(po.ID+"|pay_forged000002"))})
			return b
		}
		ts := "1767225600000"
		cf := base64.StdEncoding.EncodeToString(hmacRaw("wrong-secret", []byte(ts+string(body))))
		cases := []struct {
			what   string
			header http.Header
			body   []byte
			status int
		}{
			{"razorpay, wrong secret", http.Header{"X-Razorpay-Signature": {hexMAC("wrong-secret", body)}, "X-Razorpay-Event-Id": {"evt_f1"}}, body, http.StatusUnauthorized},
			{"razorpay, signature of another body", http.Header{"X-Razorpay-Signature": {hexMAC(pgsim.DefaultWebhookSecret, []byte("{}"))}}, body, http.StatusUnauthorized},
			{"razorpay, not hex", http.Header{"X-Razorpay-Signature": {"zz"}}, body, http.StatusUnauthorized},
			{"cashfree, wrong secret", http.Header{"X-Webhook-Signature": {cf}, "X-Webhook-Timestamp": {ts}}, body, http.StatusUnauthorized},
			{"flat, wrong secret", nil, flat("wrong-secret"), http.StatusUnauthorized},
			{"no signature at all", nil, body, http.StatusUnauthorized},
			{"signed but unreadable", http.Header{"X-Razorpay-Signature": {hexMAC(pgsim.DefaultWebhookSecret, []byte(`{"entity":"event"}`))}},
				[]byte(`{"entity":"event"}`), http.StatusBadRequest},
		}
		for _, c := range cases {
			resp := b.h.Do(t, http.MethodPost, upiBase+"/webhook", "", c.body, c.header)
			var env struct {
				StatusCode int `json:"status_code"`
			}
			if resp.HTTPStatus != c.status || json.Unmarshal(resp.Body, &env) != nil || ocpi.IsSuccess(env.StatusCode) {
				t.Errorf("%s: HTTP %d %s, want %d", c.what, resp.HTTPStatus, resp.Body, c.status)
			}
		}
		if n, p := b.rows(t, "upi_webhook_events"), b.rows(t, "upi_payments"); n != 0 || p != 0 {
			t.Errorf("forged webhooks stored %d events and %d payments", n, p)
		}
		// The same body signed with the right secret is taken.
		resp := b.h.Do(t, http.MethodPost, upiBase+"/webhook", "", body, http.Header{"X-Razorpay-Signature": {hexMAC(pgsim.DefaultWebhookSecret, body)},
			"X-Razorpay-Event-Id": {"evt_genuine"}})
		if resp.HTTPStatus != http.StatusOK {
			t.Errorf("genuine webhook: HTTP %d %s", resp.HTTPStatus, resp.Body)
		}
		if n := b.rows(t, "upi_webhook_events"); n != 1 {
			t.Errorf("%d events after a genuine webhook", n)
		}
	})
}

func hmacRaw(secret string, msg []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(msg)
	return m.Sum(nil)
}

// TestConcurrentWebhooks: 50 copies of one capture webhook at once start
// one session; every copy is acknowledged.
func TestConcurrentWebhooks(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.pg.DuplicateWebhooks(50, true)
		orderID := b.paid(t, "250")
		b.pg.DuplicateWebhooks(1, false)
		b.waitStatus(t, orderID, paymentrow.StatusCharging)
		ds := b.pg.Deliveries()
		if len(ds) < 50 {
			t.Fatalf("%d deliveries", len(ds))
		}
		for _, d := range ds[:50] {
			if d.Status != http.StatusOK {
				t.Errorf("copy %d: HTTP %d %s", d.Copy, d.Status, d.Err)
			}
		}
		if n := b.starts(); n != 1 {
			t.Errorf("%d START_SESSION, want 1", n)
		}
		if n, p := b.rows(t, "upi_webhook_events"), b.rows(t, "upi_payments"); n != 1 || p != 1 {
			t.Errorf("%d events and %d payments stored, want 1 and 1", n, p)
		}
		if evs, err := b.events.Wait(b.ctx, event.PaymentCaptured, 1); err != nil || len(evs) != 1 {
			t.Errorf("%d payment.captured events (%v)", len(evs), err)
		}
	})
}

// TestPaymentOrdering: the payment only moves forward whatever order the
// PG's webhooks come in: a failed payment starts nothing; failed then
// captured (a PIN retry) starts one session; pending then captured;
// captured before authorized; a pending payment whose capture webhook is
// lost is found by polling; a payment never captured expires.
func TestPaymentOrdering(t *testing.T) {
	t.Parallel()
	// order runs fn as a parallel subtest on both engines, on an order of
	// 200 at the mapped QR code.
	order := func(name string, fn func(t *testing.T, b *bundle, orderID string), tweak ...func(*app.Config)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			each(t, func(t *testing.T, b *bundle) {
				b.qr(t)
				fn(t, b, b.order(t, "200"))
			}, tweak...)
		})
	}
	order("failed", func(t *testing.T, b *bundle, orderID string) {
		if _, err := b.pg.Pay(b.ctx, b.pgOrder(t, orderID).ID, pgsim.Failed); err != nil {
			t.Fatal(err)
		}
		p := b.waitStatus(t, orderID, paymentrow.StatusFailed)
		if p.Captured != "0.00" || p.ErrorDescription == "" || len(p.Refunds) != 0 {
			t.Errorf("failed payment %+v", p)
		}
		if _, err := b.events.Wait(b.ctx, event.PaymentFailed, 1); err != nil {
			t.Error(err)
		}
		st, _ := b.h.UPI.OrderStatus(b.ctx, mustOrder(t, b, p))
		if st.Stage != upi.StageFailed {
			t.Errorf("status page stage %s", st.Stage)
		}
		if n := b.starts(); n != 0 {
			t.Errorf("%d START_SESSION for a failed payment", n)
		}
	})
	for _, sc := range []pgsim.Scenario{pgsim.FailedThenCaptured, pgsim.PendingThenCaptured} {
		order(string(sc), func(t *testing.T, b *bundle, orderID string) {
			if _, err := b.pg.Pay(b.ctx, b.pgOrder(t, orderID).ID, sc); err != nil {
				t.Fatal(err)
			}
			b.waitStatus(t, orderID, paymentrow.StatusCharging)
			if n := b.starts(); n != 1 {
				t.Errorf("%d START_SESSION, want 1", n)
			}
		})
	}
	order("captured before authorized", func(t *testing.T, b *bundle, orderID string) {
		b.pg.HoldWebhooks()
		if _, err := b.pg.Pay(b.ctx, b.pgOrder(t, orderID).ID, pgsim.AuthorizedThenCaptured); err != nil {
			t.Fatal(err)
		}
		held := b.pg.HeldWebhooks()
		if len(held) != 2 || held[1].Type != "payment.captured" {
			t.Fatalf("held %+v", held)
		}
		// The capture arrives (and is worked) first, the authorization
		// after it.
		b.pg.ReleaseWebhooks(b.ctx, func(ws []pgsim.Webhook) []pgsim.Webhook { return ws[1:] })
		p := b.waitStatus(t, orderID, paymentrow.StatusCharging)
		b.pg.Redeliver(b.ctx, held[0])
		eventually(t, "both events worked", func() bool {
			var n int
			_ = b.h.DB.Read().QueryRow(b.ctx, "SELECT COUNT(*) FROM upi_webhook_events WHERE processed_at <> 0").Scan(&n)
			return n == 2
		})
		var outcome string
		if err := b.h.DB.Read().QueryRow(b.ctx, "SELECT outcome FROM upi_webhook_events WHERE type = 'payment.authorized'").Scan(&outcome); err != nil ||
			outcome == "" || outcome[:9] != "no change" {
			t.Errorf("the late authorized event: %q %v", outcome, err)
		}
		if n := b.starts(); n != 1 || p.PGStatus != "captured" {
			t.Errorf("%d START_SESSION, PG status %s", n, p.PGStatus)
		}
	})
	order("pending, polled", func(t *testing.T, b *bundle, orderID string) {
		pay := b.pending(t, orderID)
		b.waitStatus(t, orderID, paymentrow.StatusPending)
		b.pg.HoldWebhooks() // the capture webhook is lost
		if _, err := b.pg.Capture(b.ctx, pay.ID); err != nil {
			t.Fatal(err)
		}
		b.waitStatus(t, orderID, paymentrow.StatusCharging)
		if b.pg.Calls(pgsim.APIFetchPayment)+b.pg.Calls(pgsim.APIOrderPayments) == 0 {
			t.Error("the payment was not polled")
		}
		b.pg.ReleaseWebhooks(b.ctx, nil) // and comes late: nothing changes
		if n := b.starts(); n != 1 {
			t.Errorf("%d START_SESSION, want 1", n)
		}
	})
	order("every webhook lost", func(t *testing.T, b *bundle, orderID string) {
		b.pg.HoldWebhooks() // never released
		if _, err := b.pg.Pay(b.ctx, b.pgOrder(t, orderID).ID, pgsim.Captured); err != nil {
			t.Fatal(err)
		}
		b.waitStatus(t, orderID, paymentrow.StatusCharging)
		if b.pg.Calls(pgsim.APIOrderPayments) == 0 || b.starts() != 1 || b.rows(t, "upi_webhook_events") != 0 {
			t.Errorf("found without webhooks: %d order checks, %d START_SESSION", b.pg.Calls(pgsim.APIOrderPayments), b.starts())
		}
	})
	order("pending, expired", func(t *testing.T, b *bundle, orderID string) {
		b.pending(t, orderID)
		p := b.waitStatus(t, orderID, paymentrow.StatusExpired)
		if p.Captured != "0.00" || b.starts() != 0 {
			t.Errorf("expired payment %+v", p)
		}
	}, func(c *app.Config) { c.UPIPaymentWindow = 1500 * time.Millisecond })
}

// TestWebhookForms: the Cashfree form and the seed's flat form start a
// session like the Razorpay form; the flat form, whose signature covers only
// the ids, is confirmed with the PG before it is acted on.
func TestWebhookForms(t *testing.T) {
	t.Parallel()
	for _, form := range []pgsim.Form{pgsim.FormCashfree, pgsim.FormFlat} {
		t.Run(string(form), func(t *testing.T) {
			t.Parallel()
			each(t, func(t *testing.T, b *bundle) {
				b.pg.SetWebhook(b.h.PublicURL()+app.UPIWebhookPath, form)
				orderID := b.paid(t, "300")
				p := b.waitStatus(t, orderID, paymentrow.StatusCharging)
				if p.Captured != "300.00" || b.starts() != 1 {
					t.Errorf("payment %+v, %d START_SESSION", p, b.starts())
				}
				fetched := b.pg.Calls(pgsim.APIFetchPayment)
				if form == pgsim.FormFlat && fetched == 0 {
					t.Error("the flat form was acted on without asking the PG")
				}
				if form == pgsim.FormCashfree && fetched != 0 {
					t.Errorf("a signed Cashfree payload was confirmed %d times", fetched)
				}
			})
		})
	}
}

// TestTokenTypeOther: a CPO configured as rejecting AD_HOC_USER tokens gets
// START_SESSION with a token of type OTHER, issued like the others.
func TestTokenTypeOther(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		orderID := b.paid(t, "300")
		p := b.waitStatus(t, orderID, paymentrow.StatusCharging)
		tok, _ := b.cpo.Commands()[0].Body["token"].(map[string]any)
		if tok["type"] != "OTHER" || p.Command.TokenTyp != "OTHER" {
			t.Errorf("token %v", tok)
		}
		var typ string
		if err := b.h.DB.Read().QueryRow(b.ctx, "SELECT type FROM tokens WHERE uid = $1", p.ID).Scan(&typ); err != nil || typ != "OTHER" {
			t.Errorf("issued token type %q (%v)", typ, err)
		}
	}, func(c *app.Config) { c.UPIOtherTokenCPOs = []string{"in*cpo"} })
}

// TestCashfreeWebhookFreshness: through the webhook endpoint, a correctly
// signed Cashfree webhook whose x-webhook-timestamp is more than five
// minutes from the hub's clock, in either direction, is answered 401 and
// stores nothing; within the window it is taken; replayed six minutes
// later (under a new idempotency key, so dedupe would not catch it) it is
// refused.
func TestCashfreeWebhookFreshness(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		clk := clock.NewFake(time.Now().UTC().Truncate(time.Second))
		b := setupAt(t, engine, clk)
		b.qr(t)
		po := b.pgOrder(t, b.order(t, "200"))
		body, _ := json.Marshal(map[string]any{"type": "PAYMENT_SUCCESS_WEBHOOK", "event_time": clk.Now().Format(time.RFC3339),
			"data": map[string]any{"order": map[string]any{"order_id": po.ID, "order_amount": 200, "order_currency": "INR"},
				"payment": map[string]any{"cf_payment_id": 5114917039291, "payment_status": "SUCCESS", "payment_amount": 200,
					"payment_currency": "INR", "payment_method": map[string]any{"upi": map[string]any{"upi_id": "meera@ybl"}}}}})
		send := func(at time.Time, key string) (status int, answer string) {
			t.Helper()
			ts := strconv.FormatInt(at.UnixMilli(), 10)
			sig := base64.StdEncoding.EncodeToString(hmacRaw(pgsim.DefaultWebhookSecret, []byte(ts+string(body))))
			resp := b.h.Do(t, http.MethodPost, upiBase+"/webhook", "", body, http.Header{"X-Webhook-Signature": {sig},
				"X-Webhook-Timestamp": {ts}, "X-Idempotency-Key": {key}, "X-Webhook-Version": {"2023-08-01"}})
			return resp.HTTPStatus, string(resp.Body)
		}
		for _, tc := range []struct {
			name string
			at   time.Time
		}{
			{"six minutes old", clk.Now().Add(-6 * time.Minute)},
			{"six minutes ahead", clk.Now().Add(6 * time.Minute)},
			{"a day old", clk.Now().Add(-24 * time.Hour)},
		} {
			if status, answer := send(tc.at, "idem-"+tc.name); status != http.StatusUnauthorized || !strings.Contains(answer, "from the hub's clock") {
				t.Errorf("%s: HTTP %d %s, want 401", tc.name, status, answer)
			}
		}
		if n, p := b.rows(t, "upi_webhook_events"), b.rows(t, "upi_payments"); n != 0 || p != 0 {
			t.Fatalf("stale webhooks stored %d events and %d payments", n, p)
		}
		signedAt := clk.Now().Add(-4 * time.Minute)
		if status, answer := send(signedAt, "idem-genuine"); status != http.StatusOK {
			t.Fatalf("a webhook four minutes old: HTTP %d %s", status, answer)
		}
		if n := b.rows(t, "upi_webhook_events"); n != 1 {
			t.Fatalf("%d events after the genuine webhook", n)
		}
		clk.Add(2*time.Minute + time.Second)
		if status, answer := send(signedAt, "idem-replayed"); status != http.StatusUnauthorized {
			t.Errorf("the replay: HTTP %d %s, want 401", status, answer)
		}
		if n := b.rows(t, "upi_webhook_events"); n != 1 {
			t.Errorf("%d events after the replay, want 1", n)
		}
	})
}
