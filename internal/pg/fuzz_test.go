package pg_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/ocpihub/ocpihub/internal/pg"
)

// checkEvent holds for every event a parser returns: no error and no
// event together, amounts never negative, the raw body kept, an id for
// dedupe, and the ids a state machine needs.
func checkEvent(t *testing.T, body []byte, ev *pg.Event, err error) {
	t.Helper()
	if err != nil {
		if ev != nil {
			t.Fatalf("an event and an error: %+v, %v", ev, err)
		}
		if !errors.Is(err, pg.ErrSignature) && !errors.Is(err, pg.ErrMalformed) {
			t.Fatalf("error %v is neither ErrSignature nor ErrMalformed", err)
		}
		return
	}
	if ev.ID == "" || string(ev.Raw) != string(body) {
		t.Fatalf("event without id or raw body: %+v", ev)
	}
	switch ev.Kind {
	case pg.EventPayment:
		if ev.PaymentID == "" || ev.Status.Rank() == 0 || ev.Amount.Paise < 0 || len(ev.Amount.Currency) != 3 {
			t.Fatalf("payment event %+v", ev)
		}
	case pg.EventRefund:
		if ev.Refund == nil || ev.Refund.Amount.Paise <= 0 && ev.Form != pg.FormCashfree || ev.Refund.Amount.Paise < 0 || ev.Refund.Status == "" {
			t.Fatalf("refund event %+v / %+v", ev, ev.Refund)
		}
	case pg.EventOther:
	default:
		t.Fatalf("kind %q", ev.Kind)
	}
}

func FuzzRazorpayWebhook(f *testing.F) {
	f.Add([]byte(rzpCaptured))
	f.Add([]byte(`{"entity":"event","event":"refund.processed","payload":{"refund":{"entity":{"id":"rfnd_R","amount":2500,"currency":"INR","payment_id":"pay_P","notes":[],"status":"processed"}}}}`))
	f.Add([]byte(`{"entity":"event","event":"qr_code.credited","payload":{"payment":{"entity":{"id":"p","amount":5,"currency":"INR","status":"captured","notes":{"n":1}}}}}`))
	f.Add([]byte(`{"entity":"event","event":"x"}`))
	v := verifier(secret)
	f.Fuzz(func(t *testing.T, body []byte) {
		// Correctly signed, so the parser sees the input.
		h := http.Header{"X-Razorpay-Signature": {hex.EncodeToString(mac(secret, string(body)))}}
		ev, err := v.Verify(h, body)
		checkEvent(t, body, ev, err)
		if errors.Is(err, pg.ErrSignature) {
			t.Fatalf("a correct signature was refused: %v", err)
		}
		// Signed with another secret: always refused.
		h.Set("X-Razorpay-Signature", hex.EncodeToString(mac("other", string(body))))
		if _, err := v.Verify(h, body); !errors.Is(err, pg.ErrSignature) {
			t.Fatalf("a wrong signature was accepted: %v", err)
		}
	})
}

func FuzzCashfreeWebhook(f *testing.F) {
	f.Add("1767241802000", []byte(`{"data":{"order":{"order_id":"o"},"payment":{"cf_payment_id":1,"payment_status":"SUCCESS","payment_amount":150.50,"payment_currency":"INR"}},"type":"PAYMENT_SUCCESS_WEBHOOK"}`))
	f.Add("1", []byte(`{"data":{"refund":{"cf_refund_id":1,"cf_payment_id":"2","refund_amount":"2.00","refund_currency":"INR","refund_status":"SUCCESS"}},"type":"REFUND_STATUS_WEBHOOK"}`))
	f.Add("", []byte(`{}`))
	v := verifier(secret)
	f.Fuzz(func(t *testing.T, ts string, body []byte) {
		h := cashfreeHeader(secret, ts, string(body), "k")
		ev, err := v.Verify(h, body)
		checkEvent(t, body, ev, err)
		if ts != "" && errors.Is(err, pg.ErrSignature) && !errors.Is(err, pg.ErrStale) {
			t.Fatalf("a correct signature was refused: %v", err)
		}
	})
}

func FuzzFlatWebhook(f *testing.F) {
	f.Add("pay_1", "order_1", "captured", `"150.00"`)
	f.Add("pay_1", "order_1", "failed", `150.5`)
	f.Add("", "", "", `1e2`)
	v := verifier(secret)
	f.Fuzz(func(t *testing.T, pid, oid, status, amount string) {
		idsJSON, _ := json.Marshal([]string{pid, oid, status})
		var ids []string
		_ = json.Unmarshal(idsJSON, &ids) // invalid UTF-8 is replaced, as the parser will see it
		body := []byte(`{"pg_payment_id":` + q(ids[0]) + `,"order_id":` + q(ids[1]) + `,"status":` + q(ids[2]) +
			`,"amount":` + amount + `,"signature":"` + hex.EncodeToString(mac(secret, ids[1]+"|"+ids[0])) + `"}`)
		ev, err := v.Verify(http.Header{}, body)
		checkEvent(t, body, ev, err)
		if err == nil && (ev.PaymentID != ids[0] || ev.OrderID != ids[1] || ev.PayloadSigned) {
			t.Fatalf("flat event %+v from %s", ev, body)
		}
		// Any unsigned body is refused or not understood, never accepted.
		ev, err = v.Verify(http.Header{}, []byte(amount))
		if err == nil {
			t.Fatalf("accepted an unsigned body %q: %+v", amount, ev)
		}
	})
}

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
