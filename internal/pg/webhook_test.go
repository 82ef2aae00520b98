package pg_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/pg"
)

// The signatures in these tests are computed here with crypto/hmac, never
// through the code under test.

const secret = "whsec-current-0001"

func mac(key string, parts ...string) []byte {
	m := hmac.New(sha256.New, []byte(key))
	for _, p := range parts {
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

func razorpayHeader(key, body, eventID string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Razorpay-Signature", hex.EncodeToString(mac(key, body)))
	if eventID != "" {
		h.Set("x-razorpay-event-id", eventID)
	}
	return h
}

func cashfreeHeader(key, ts, body, idem string) http.Header {
	h := http.Header{}
	h.Set("x-webhook-timestamp", ts)
	h.Set("x-webhook-signature", base64.StdEncoding.EncodeToString(mac(key, ts, body)))
	h.Set("x-idempotency-key", idem)
	h.Set("x-webhook-version", "2023-08-01")
	return h
}

func flatBody(key, pid, oid, status, amount string) string {
	sig := hex.EncodeToString(mac(key, oid+"|"+pid))
	return `{"pg_payment_id":"` + pid + `","order_id":"` + oid + `","status":"` + status + `","amount":` + amount +
		`,"payer_vpa":"ravi@okicici","signature":"` + sig + `"}`
}

const rzpCaptured = `{"entity":"event","account_id":"acc_T3st","event":"payment.captured","contains":["payment"],` +
	`"payload":{"payment":{"entity":{"id":"pay_Q1w2E3r4T5y6U7","entity":"payment","amount":15050,"currency":"INR",` +
	`"status":"captured","order_id":"order_A1s2D3f4G5h6J7","method":"upi","amount_refunded":0,"refund_status":null,` +
	`"captured":true,"vpa":"ravi@okicici","notes":{"qr_ref":"QR-BLR-001","attempt":2},"error_code":null,` +
	`"acquirer_data":{"rrn":"412345678901"},"created_at":1767225600}}},"created_at":1767225601}`

// cfNow is the hub's time in the verifier tests: the x-webhook-timestamp
// (cfTS) of the Cashfree samples, which must be fresh.
var cfNow = time.UnixMilli(1767241802000).UTC()

const cfTS = "1767241802000"

func verifier(secrets ...string) *pg.Verifier {
	return pg.NewVerifier(pg.WebhookConfig{Secrets: secrets}, clock.NewFake(cfNow))
}

func TestRazorpayWebhook(t *testing.T) {
	t.Parallel()
	v := verifier(secret)
	ev, err := v.Verify(razorpayHeader(secret, rzpCaptured, "evt_Z9x8C7v6B5n4M3"), []byte(rzpCaptured))
	if err != nil {
		t.Fatal(err)
	}
	want := pg.Event{
		ID: "evt_Z9x8C7v6B5n4M3", Form: pg.FormRazorpay, Type: "payment.captured", Kind: pg.EventPayment,
		PaymentID: "pay_Q1w2E3r4T5y6U7", OrderID: "order_A1s2D3f4G5h6J7", Status: pg.PaymentCaptured,
		Amount: pg.INR(15050), PayerVPA: "ravi@okicici", At: time.Unix(1767225601, 0).UTC(), PayloadSigned: true,
	}
	if ev.ID != want.ID || ev.Form != want.Form || ev.Type != want.Type || ev.Kind != want.Kind || ev.PaymentID != want.PaymentID ||
		ev.OrderID != want.OrderID || ev.Status != want.Status || ev.Amount != want.Amount || ev.PayerVPA != want.PayerVPA ||
		!ev.At.Equal(want.At) || !ev.PayloadSigned || ev.Refund != nil || string(ev.Raw) != rzpCaptured {
		t.Errorf("event = %+v", ev)
	}
	if ev.Notes["qr_ref"] != "QR-BLR-001" || ev.Notes["attempt"] != "2" {
		t.Errorf("notes = %v", ev.Notes)
	}

	// Uppercase hex is the same signature.
	h := razorpayHeader(secret, rzpCaptured, "evt_1")
	h.Set("X-Razorpay-Signature", strings.ToUpper(h.Get("X-Razorpay-Signature")))
	if _, err := v.Verify(h, []byte(rzpCaptured)); err != nil {
		t.Errorf("uppercase hex: %v", err)
	}
	// Without an event id the dedupe key comes from the body: stable.
	a, _ := v.Verify(razorpayHeader(secret, rzpCaptured, ""), []byte(rzpCaptured))
	b, _ := v.Verify(razorpayHeader(secret, rzpCaptured, ""), []byte(rzpCaptured))
	if a == nil || a.ID == "" || a.ID != b.ID {
		t.Errorf("derived ids %v, %v", a, b)
	}
}

func TestRazorpayEvents(t *testing.T) {
	t.Parallel()
	v := verifier(secret)
	tests := []struct {
		name, body string
		check      func(*pg.Event) bool
	}{
		{"failed", `{"entity":"event","event":"payment.failed","payload":{"payment":{"entity":{"id":"pay_F","amount":500,"currency":"INR","status":"failed","order_id":"order_F","method":"upi","notes":[],"error_code":"BAD_REQUEST_ERROR","error_description":"Wrong UPI PIN"}}},"created_at":1}`,
			func(e *pg.Event) bool {
				return e.Kind == pg.EventPayment && e.Status == pg.PaymentFailed && e.ErrorCode == "BAD_REQUEST_ERROR" && e.ErrorDescription == "Wrong UPI PIN" && e.Notes == nil
			}},
		{"authorized", `{"entity":"event","event":"payment.authorized","payload":{"payment":{"entity":{"id":"pay_A","amount":500,"currency":"INR","status":"authorized","order_id":"order_A","upi":{"vpa":"x@ybl"}}}}}`,
			func(e *pg.Event) bool { return e.Status == pg.PaymentAuthorized && e.PayerVPA == "x@ybl" }},
		{"qr credited, order from the notes", `{"entity":"event","event":"qr_code.credited","payload":{"payment":{"entity":{"id":"pay_Q","amount":500,"currency":"INR","status":"captured","order_id":null,"notes":[]}},"qr_code":{"entity":{"id":"qr_1","notes":{"order_id":"order_Q"}}}}}`,
			func(e *pg.Event) bool {
				return e.Kind == pg.EventPayment && e.OrderID == "order_Q" && e.Status == pg.PaymentCaptured
			}},
		{"refund processed", `{"entity":"event","event":"refund.processed","contains":["refund","payment"],"payload":{"refund":{"entity":{"id":"rfnd_R","entity":"refund","amount":2500,"currency":"INR","payment_id":"pay_P","notes":{"refund_id":"refund-0007"},"receipt":null,"acquirer_data":{"arn":"ARN123"},"status":"processed","created_at":5}},"payment":{"entity":{"id":"pay_P","amount":10000,"currency":"INR","status":"captured","order_id":"order_P","amount_refunded":2500}}}}`,
			func(e *pg.Event) bool {
				r := e.Refund
				return e.Kind == pg.EventRefund && e.PaymentID == "pay_P" && e.OrderID == "order_P" && e.Amount == pg.INR(10000) && r != nil &&
					r.ID == "rfnd_R" && r.Amount == pg.INR(2500) && r.Status == pg.RefundProcessed && r.RefundID == "refund-0007" && r.ARN == "ARN123"
			}},
		{"refund failed, id from the receipt", `{"entity":"event","event":"refund.failed","payload":{"refund":{"entity":{"id":"rfnd_S","amount":100,"currency":"INR","payment_id":"pay_S","notes":[],"receipt":"refund-0008","status":"failed"}}}}`,
			func(e *pg.Event) bool {
				return e.Kind == pg.EventRefund && e.PaymentID == "pay_S" && e.Refund.Status == pg.RefundFailed && e.Refund.RefundID == "refund-0008"
			}},
		{"other", `{"entity":"event","event":"settlement.processed","payload":{"settlement":{"entity":{"id":"setl_1"}}}}`,
			func(e *pg.Event) bool {
				return e.Kind == pg.EventOther && e.Type == "settlement.processed" && e.PaymentID == ""
			}},
	}
	for _, tt := range tests {
		ev, err := v.Verify(razorpayHeader(secret, tt.body, "evt_"+tt.name), []byte(tt.body))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !tt.check(ev) {
			t.Errorf("%s: event = %+v, refund %+v", tt.name, ev, ev.Refund)
		}
	}
}

func TestCashfreeWebhook(t *testing.T) {
	t.Parallel()
	v := verifier(secret)
	success := `{"data":{"order":{"order_id":"order_C1","order_amount":150.50,"order_currency":"INR","order_tags":null},` +
		`"payment":{"cf_payment_id":5114917039291,"payment_status":"SUCCESS","payment_amount":150.50,"payment_currency":"INR",` +
		`"payment_message":"00::Transaction success","payment_time":"2026-01-01T10:00:00+05:30","bank_reference":"412345678901",` +
		`"auth_id":null,"payment_method":{"upi":{"channel":"collect","upi_id":"meera@ybl"}},"payment_group":"upi"},` +
		`"customer_details":{"customer_id":"c1"}},"event_time":"2026-01-01T10:00:02+05:30","type":"PAYMENT_SUCCESS_WEBHOOK"}`
	ev, err := v.Verify(cashfreeHeader(secret, "1767241802000", success, "idem-key-1"), []byte(success))
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != "idem-key-1" || ev.Form != pg.FormCashfree || ev.Kind != pg.EventPayment || ev.Type != "PAYMENT_SUCCESS_WEBHOOK" ||
		ev.PaymentID != "5114917039291" || ev.OrderID != "order_C1" || ev.Status != pg.PaymentCaptured ||
		ev.Amount != pg.INR(15050) || ev.PayerVPA != "meera@ybl" || !ev.At.Equal(time.Date(2026, 1, 1, 4, 30, 2, 0, time.UTC)) || !ev.PayloadSigned {
		t.Errorf("event = %+v", ev)
	}

	tests := []struct {
		name, body string
		check      func(*pg.Event) bool
	}{
		{"integer amount, string id", `{"data":{"order":{"order_id":"o2"},"payment":{"cf_payment_id":"77","payment_status":"SUCCESS","payment_amount":2,"payment_currency":"INR"}},"type":"PAYMENT_SUCCESS_WEBHOOK"}`,
			func(e *pg.Event) bool { return e.Amount == pg.INR(200) && e.PaymentID == "77" }},
		{"failed", `{"data":{"order":{"order_id":"o3","order_currency":"INR"},"payment":{"cf_payment_id":78,"payment_status":"FAILED","payment_amount":1.5,"payment_message":"PIN wrong"},"error_details":{"error_code":"TRANSACTION_DECLINED","error_description":"wrong pin"}},"type":"PAYMENT_FAILED_WEBHOOK"}`,
			func(e *pg.Event) bool {
				return e.Status == pg.PaymentFailed && e.Amount == pg.INR(150) && e.ErrorCode == "TRANSACTION_DECLINED" && e.ErrorDescription == "wrong pin"
			}},
		{"user dropped", `{"data":{"order":{"order_id":"o4"},"payment":{"cf_payment_id":79,"payment_status":"USER_DROPPED","payment_amount":"10.00","payment_currency":"INR"}},"type":"PAYMENT_USER_DROPPED_WEBHOOK"}`,
			func(e *pg.Event) bool { return e.Status == pg.PaymentFailed && e.Amount == pg.INR(1000) }},
		{"refund", `{"data":{"refund":{"cf_refund_id":11325632,"cf_payment_id":789727431,"refund_id":"refund-0009","order_id":"o5","refund_amount":2.00,"refund_currency":"INR","entity":"Refund","refund_arn":"205907014017","refund_status":"SUCCESS","created_at":"2026-01-01T12:54:25+05:30"}},"event_time":"2026-01-01T13:04:28+05:30","type":"REFUND_STATUS_WEBHOOK"}`,
			func(e *pg.Event) bool {
				r := e.Refund
				return e.Kind == pg.EventRefund && e.PaymentID == "789727431" && e.OrderID == "o5" && r != nil && r.ID == "11325632" &&
					r.Amount == pg.INR(200) && r.Status == pg.RefundProcessed && r.RefundID == "refund-0009" && r.ARN == "205907014017"
			}},
		{"refund cancelled", `{"data":{"refund":{"cf_refund_id":1,"cf_payment_id":2,"refund_id":"r","refund_amount":1,"refund_currency":"INR","refund_status":"CANCELLED"}},"type":"REFUND_STATUS_WEBHOOK"}`,
			func(e *pg.Event) bool { return e.Refund.Status == pg.RefundFailed }},
		{"other", `{"data":{},"type":"DISPUTE_CREATED_WEBHOOK"}`,
			func(e *pg.Event) bool { return e.Kind == pg.EventOther }},
	}
	for _, tt := range tests {
		ev, err := v.Verify(cashfreeHeader(secret, "1767241802000", tt.body, "k-"+tt.name), []byte(tt.body))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !tt.check(ev) {
			t.Errorf("%s: event = %+v", tt.name, ev)
		}
	}
}

// TestCashfreeTimestampWindow: a correctly signed Cashfree webhook is
// taken only when its x-webhook-timestamp is within five minutes of the
// hub's clock, either way; otherwise it is ErrStale, which is also
// ErrSignature (HTTP 401).
func TestCashfreeTimestampWindow(t *testing.T) {
	t.Parallel()
	v := verifier(secret)
	body := `{"data":{},"type":"SOMETHING_WEBHOOK"}`
	ms := func(d time.Duration) string { return strconv.FormatInt(cfNow.Add(d).UnixMilli(), 10) }
	for _, tt := range []struct {
		name, ts string
		fresh    bool
	}{
		{"now", ms(0), true},
		{"five minutes old", ms(-pg.CashfreeTimestampWindow), true},
		{"five minutes ahead", ms(pg.CashfreeTimestampWindow), true},
		{"a millisecond too old", ms(-pg.CashfreeTimestampWindow - time.Millisecond), false},
		{"a millisecond too far ahead", ms(pg.CashfreeTimestampWindow + time.Millisecond), false},
		{"a day old", ms(-24 * time.Hour), false},
		{"in seconds", strconv.FormatInt(cfNow.Add(-time.Minute).Unix(), 10), true},
		{"in seconds, an hour old", strconv.FormatInt(cfNow.Add(-time.Hour).Unix(), 10), false},
		{"not a number", "2026-01-01T04:30:02Z", false},
		{"negative", "-1767241802000", false},
		{"zero", "0", false},
	} {
		ev, err := v.Verify(cashfreeHeader(secret, tt.ts, body, "k"), []byte(body))
		switch {
		case tt.fresh && err != nil:
			t.Errorf("%s (%s): %v", tt.name, tt.ts, err)
		case !tt.fresh && (!errors.Is(err, pg.ErrStale) || !errors.Is(err, pg.ErrSignature) || ev != nil):
			t.Errorf("%s (%s): %v, %v; want ErrStale", tt.name, tt.ts, ev, err)
		}
	}
	// A stale timestamp under a wrong signature is a bad signature, not
	// stale: the timestamp is looked at only once the signature holds.
	if _, err := v.Verify(cashfreeHeader("another-secret", ms(-time.Hour), body, "k"), []byte(body)); !errors.Is(err, pg.ErrSignature) || errors.Is(err, pg.ErrStale) {
		t.Errorf("forged and stale: %v", err)
	}
}

func TestFlatWebhook(t *testing.T) {
	t.Parallel()
	v := verifier(secret)
	tests := []struct {
		status, amount string
		want           pg.PaymentStatus
		paise          int64
	}{
		{"captured", `"150.00"`, pg.PaymentCaptured, 15000},
		{"SUCCESS", `150.5`, pg.PaymentCaptured, 15050},
		{"failed", `"0.99"`, pg.PaymentFailed, 99},
		{"pending", `100`, pg.PaymentCreated, 10000},
		{"authorized", `"1"`, pg.PaymentAuthorized, 100},
	}
	for _, tt := range tests {
		body := flatBody(secret, "pay_FLAT01", "order_FLAT01", tt.status, tt.amount)
		ev, err := v.Verify(http.Header{"Content-Type": {"application/json"}}, []byte(body))
		if err != nil {
			t.Errorf("%s: %v", tt.status, err)
			continue
		}
		if ev.Form != pg.FormFlat || ev.Kind != pg.EventPayment || ev.PaymentID != "pay_FLAT01" || ev.OrderID != "order_FLAT01" ||
			ev.Status != tt.want || ev.Amount != pg.INR(tt.paise) || ev.PayerVPA != "ravi@okicici" || ev.PayloadSigned ||
			ev.ID != "flat:pay_FLAT01:"+string(tt.want) || ev.Type != tt.status {
			t.Errorf("%s: event = %+v", tt.status, ev)
		}
	}
}

// TestSignatureErrors: every forged, tampered or unsigned webhook is
// ErrSignature (HTTP 401), and nothing of it is returned.
func TestSignatureErrors(t *testing.T) {
	t.Parallel()
	v := verifier(secret)
	cf := `{"data":{"order":{"order_id":"o"},"payment":{"cf_payment_id":1,"payment_status":"SUCCESS","payment_amount":1,"payment_currency":"INR"}},"type":"PAYMENT_SUCCESS_WEBHOOK"}`
	flat := flatBody(secret, "pay_1", "order_1", "captured", `"1.00"`)
	tampered := func(h http.Header, body string) (http.Header, string) {
		return h, strings.Replace(body, "15050", "15051", 1)
	}
	tests := []struct {
		name   string
		header http.Header
		body   string
	}{
		{"razorpay tampered body", nil, ""},
		{"razorpay wrong secret", razorpayHeader("another-secret", rzpCaptured, "e"), rzpCaptured},
		{"razorpay signature not hex", http.Header{"X-Razorpay-Signature": {"zz-not-hex"}}, rzpCaptured},
		{"razorpay truncated signature", http.Header{"X-Razorpay-Signature": {hex.EncodeToString(mac(secret, rzpCaptured))[:62]}}, rzpCaptured},
		{"razorpay body, no header", http.Header{}, rzpCaptured},
		{"empty body, no header", http.Header{}, ""},
		{"cashfree wrong secret", cashfreeHeader("another-secret", "1", cf, "k"), cf},
		{"cashfree tampered timestamp", func() http.Header {
			h := cashfreeHeader(secret, "1", cf, "k")
			h.Set("x-webhook-timestamp", "2")
			return h
		}(), cf},
		{"cashfree missing timestamp", func() http.Header { h := cashfreeHeader(secret, "1", cf, "k"); h.Del("x-webhook-timestamp"); return h }(), cf},
		{"cashfree hex instead of base64", func() http.Header {
			h := cashfreeHeader(secret, "1", cf, "k")
			h.Set("x-webhook-signature", hex.EncodeToString(mac(secret, "1", cf)))
			return h
		}(), cf},
		{"flat wrong secret", http.Header{}, flatBody("another-secret", "pay_1", "order_1", "captured", `"1.00"`)},
		{"flat ids swapped", http.Header{}, strings.Replace(flat, `"pay_1"`, `"pay_2"`, 1)},
		{"flat no signature", http.Header{}, `{"pg_payment_id":"pay_1","order_id":"order_1","status":"captured","amount":"1.00"}`},
		{"flat bad amount and forged", http.Header{}, `{"pg_payment_id":"p","order_id":"o","status":"captured","amount":"1.005","signature":"00"}`},
	}
	tests[0].header, tests[0].body = tampered(razorpayHeader(secret, rzpCaptured, "e"), rzpCaptured)
	for _, tt := range tests {
		ev, err := v.Verify(tt.header, []byte(tt.body))
		if !errors.Is(err, pg.ErrSignature) || ev != nil {
			t.Errorf("%s: %v, %v; want ErrSignature", tt.name, ev, err)
		}
		if errors.Is(err, pg.ErrMalformed) {
			t.Errorf("%s: also ErrMalformed", tt.name)
		}
	}
	// No secret configured: nothing verifies.
	if _, err := verifier().Verify(razorpayHeader(secret, rzpCaptured, "e"), []byte(rzpCaptured)); !errors.Is(err, pg.ErrSignature) {
		t.Errorf("no secrets: %v", err)
	}
}

// TestMalformed: a correctly signed body we cannot understand is
// ErrMalformed (HTTP 400), not a signature error.
func TestMalformed(t *testing.T) {
	t.Parallel()
	v := verifier(secret)
	rzp := []string{
		`not json`,
		`{"entity":"payment","event":"payment.captured"}`,
		`{"entity":"event","event":"payment.captured","payload":{}}`,
		`{"entity":"event","event":"payment.captured","payload":{"payment":{"entity":{"id":"p","amount":1,"currency":"INR","status":"exploded"}}}}`,
		`{"entity":"event","event":"payment.captured","payload":{"payment":{"entity":{"id":"p","amount":1,"currency":"rupees","status":"captured"}}}}`,
		`{"entity":"event","event":"payment.captured","payload":{"payment":{"entity":{"id":"p","amount":1.5,"currency":"INR","status":"captured"}}}}`,
		`{"entity":"event","event":"payment.captured","payload":{"payment":{"entity":{"id":"p","amount":1,"currency":"INR","status":"captured","notes":{"k":{"nested":1}}}}}}`,
		`{"entity":"event","event":"refund.processed","payload":{"payment":{"entity":{"id":"p","amount":1,"currency":"INR","status":"captured"}}}}`,
	}
	for _, body := range rzp {
		if _, err := v.Verify(razorpayHeader(secret, body, "e"), []byte(body)); !errors.Is(err, pg.ErrMalformed) {
			t.Errorf("razorpay %s: %v, want ErrMalformed", body, err)
		}
	}
	cf := []string{
		`{"type":"PAYMENT_SUCCESS_WEBHOOK","data":{"order":{"order_id":"o"},"payment":{"cf_payment_id":1,"payment_status":"SUCCESS","payment_amount":1.005,"payment_currency":"INR"}}}`,
		`{"type":"PAYMENT_SUCCESS_WEBHOOK","data":{"order":{"order_id":"o"},"payment":{"cf_payment_id":1,"payment_status":"SUCCESS","payment_amount":1e2,"payment_currency":"INR"}}}`,
		`{"type":"PAYMENT_SUCCESS_WEBHOOK","data":{"order":{"order_id":"o"},"payment":{"cf_payment_id":1,"payment_status":"SUCCESS","payment_amount":-1,"payment_currency":"INR"}}}`,
		`{"type":"PAYMENT_SUCCESS_WEBHOOK","data":{"order":{"order_id":"o"},"payment":{"cf_payment_id":1.5,"payment_status":"SUCCESS","payment_amount":1,"payment_currency":"INR"}}}`,
		`{"type":"PAYMENT_SUCCESS_WEBHOOK","data":{"order":{"order_id":"o"},"payment":{"cf_payment_id":1,"payment_status":"SUCCESS","payment_currency":"INR"}}}`,
		`{"type":"PAYMENT_SUCCESS_WEBHOOK","data":{"order":{"order_id":"o"},"payment":{"cf_payment_id":1,"payment_status":"WEIRD","payment_amount":1,"payment_currency":"INR"}}}`,
		`{"type":"PAYMENT_SUCCESS_WEBHOOK","data":{}}`,
		`{"type":"REFUND_STATUS_WEBHOOK","data":{"refund":{"cf_refund_id":1,"cf_payment_id":2,"refund_amount":1,"refund_currency":"INR","refund_status":"SUCCESS"}}}`[:60],
		`{"data":{}}`,
	}
	for _, body := range cf {
		if _, err := v.Verify(cashfreeHeader(secret, cfTS, body, "k"), []byte(body)); !errors.Is(err, pg.ErrMalformed) {
			t.Errorf("cashfree %s: %v, want ErrMalformed", body, err)
		}
	}
	flat := []string{
		flatBody(secret, "pay_1", "order_1", "captured", `"1.005"`),
		flatBody(secret, "pay_1", "order_1", "captured", `1e2`),
		flatBody(secret, "pay_1", "order_1", "exploded", `"1.00"`),
		flatBody(secret, "pay_1", "order_1", "captured", `null`),
		flatBody(secret, "", "order_1", "captured", `"1.00"`),
	}
	for _, body := range flat {
		if _, err := v.Verify(http.Header{}, []byte(body)); !errors.Is(err, pg.ErrMalformed) {
			t.Errorf("flat %s: %v, want ErrMalformed", body, err)
		}
	}
}

// TestSecretRotation: during a rotation the previous secret verifies too,
// until the window ends.
func TestSecretRotation(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	v := pg.NewVerifier(pg.WebhookConfig{Secrets: pg.SplitSecrets(" whsec-new , whsec-old ,"), PreviousUntil: clk.Now().Add(24 * time.Hour)}, clk)
	cf := `{"data":{},"type":"SOMETHING_WEBHOOK"}`
	for _, key := range []string{"whsec-new", "whsec-old"} {
		if _, err := v.Verify(razorpayHeader(key, rzpCaptured, "e"), []byte(rzpCaptured)); err != nil {
			t.Errorf("razorpay signed with %s during the rotation: %v", key, err)
		}
		if _, err := v.Verify(cashfreeHeader(key, strconv.FormatInt(clk.Now().UnixMilli(), 10), cf, "k"), []byte(cf)); err != nil {
			t.Errorf("cashfree signed with %s during the rotation: %v", key, err)
		}
		if _, err := v.Verify(http.Header{}, []byte(flatBody(key, "p", "o", "captured", `"1"`))); err != nil {
			t.Errorf("flat signed with %s during the rotation: %v", key, err)
		}
	}
	if _, err := v.Verify(razorpayHeader("whsec-older", rzpCaptured, "e"), []byte(rzpCaptured)); !errors.Is(err, pg.ErrSignature) {
		t.Errorf("a secret never configured: %v", err)
	}
	clk.Add(24 * time.Hour)
	if _, err := v.Verify(razorpayHeader("whsec-old", rzpCaptured, "e"), []byte(rzpCaptured)); !errors.Is(err, pg.ErrSignature) {
		t.Errorf("the previous secret after the window: %v", err)
	}
	if _, err := v.Verify(razorpayHeader("whsec-new", rzpCaptured, "e"), []byte(rzpCaptured)); err != nil {
		t.Errorf("the current secret after the window: %v", err)
	}
	// Without an end, the previous secret works until removed.
	open := verifier("whsec-new", "whsec-old")
	if _, err := open.Verify(razorpayHeader("whsec-old", rzpCaptured, "e"), []byte(rzpCaptured)); err != nil {
		t.Errorf("open-ended rotation: %v", err)
	}
}

// BenchmarkVerifyRazorpay measures verifying and parsing one payment
// webhook, the work the webhook handler does before answering.
func BenchmarkVerifyRazorpay(b *testing.B) {
	v := verifier(secret, "whsec-old")
	h := razorpayHeader(secret, rzpCaptured, "evt_1")
	body := []byte(rzpCaptured)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(h, body); err != nil {
			b.Fatal(err)
		}
	}
}
