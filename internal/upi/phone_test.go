package upi

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/sealbox"
	"github.com/ocpihub/ocpihub/internal/sms"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/upi/smsreceipt"
)

func TestNormalizePhone(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"9876543210": "+919876543210", "98765 43210": "+919876543210", "+91 98765-43210": "+919876543210",
		"09876543210": "+919876543210", "919876543210": "+919876543210", "+91 (600) 000-0000": "+916000000000",
		"+91 5876543210": "", "5876543210": "", "12345": "", "+44 7700 900123": "", "+1 415 555 0100": "",
		"98765abc10": "", "9876543210 ext 5": "", "+919876543210123": "", "": "", "++919876543210": "",
		"98765432101234567890123456789012345": "",
	} {
		got, err := NormalizePhone(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("NormalizePhone(%q) = %q, %v; want %q", in, got, err, want)
		}
		if err != nil && errField(err) != "phone" {
			t.Errorf("NormalizePhone(%q): error names %q", in, errField(err))
		}
	}
	if m := maskPhone("+919876543210"); m != "+91 98******10" {
		t.Errorf("maskPhone = %q", m)
	}
}

// fakeSMS is an SMS gateway that takes every message.
type fakeSMS struct {
	mu   sync.Mutex
	sent []sms.Message
}

func (f *fakeSMS) Send(_ context.Context, m sms.Message) (string, error) {
	if err := m.Check(); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, m)
	return "fake-" + m.Reference, nil
}

func (f *fakeSMS) Reports(http.Header, map[string][]string, []byte) ([]sms.Report, error) {
	return nil, sms.ErrForged
}

func (f *fakeSMS) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sent)
}

// smsHarness is a harness whose service sends receipt SMS to a fake
// gateway, sealing numbers under a key.
func smsHarness(t *testing.T, engine store.Engine) (*harness, *fakeSMS) {
	t.Helper()
	h := newHarness(t, engine)
	f := &fakeSMS{}
	box, err := sealbox.New("phone-test-secret-key-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	h.s.sms, h.s.box, h.s.phoneHashKey = f, box, []byte("k")
	h.s.texts = h.s.newSMSSender() // the sender takes the gateway and the box when made
	h.phone = "98765 43210"
	return h, f
}

// TestSMSDailyCap: one number's receipts of one day get five SMS; the
// sixth delivery fails with the cap named, and the next day's goes out.
// Each receipt gets one SMS, whatever its jobs' retries.
func TestSMSDailyCap(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		h, f := smsHarness(t, engine)
		h.rescue = 0.5 // jobs that succeeded run again
		reqs := h.chargingPayments(7, 300_00)
		at := h.clk.Now()
		for _, req := range reqs[:6] {
			if err := h.cdrStored(gstCDR(req, at, "")); err != nil {
				t.Fatal(err)
			}
		}
		h.settle()
		if f.count() != 5 {
			t.Fatalf("%d SMS sent for 6 receipts of one number in a day, want 5 (the cap)", f.count())
		}
		var failed int
		var why string
		if err := h.db.Read().QueryRow(h.ctx, "SELECT COUNT(*), MAX(last_error) FROM upi_receipt_deliveries WHERE status = $1",
			smsreceipt.DeliveryFailed).Scan(&failed, &why); err != nil {
			t.Fatal(err)
		}
		if failed != 1 || why != "the number has had its 5 receipt SMS today" {
			t.Errorf("%d failed deliveries (%q), want 1 naming the cap", failed, why)
		}
		h.clk.Add(24 * time.Hour)
		if err := h.cdrStored(gstCDR(reqs[6], h.clk.Now(), "")); err != nil {
			t.Fatal(err)
		}
		h.settle()
		if f.count() != 6 {
			t.Errorf("the next day's receipt: %d SMS in all, want 6", f.count())
		}
	})
}

// TestPhonesErasedAfterRetention: numbers are kept sealed and erased,
// with their consent and hash, once the retention has passed; younger ones
// stay.
func TestPhonesErasedAfterRetention(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		h, _ := smsHarness(t, engine)
		h.order(300_00)
		var sealed string
		if err := h.db.Read().QueryRow(h.ctx, "SELECT phone FROM upi_orders").Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if !sealbox.IsSealed(sealed) {
			t.Fatalf("the number is stored as %q, not sealed", sealed)
		}
		h.clk.Add(89 * 24 * time.Hour)
		h.order(300_00)
		if n, err := h.s.ErasePhones(h.ctx); err != nil || n != 0 {
			t.Fatalf("at 89 days: erased %d (%v)", n, err)
		}
		h.clk.Add(2 * 24 * time.Hour)
		if n, err := h.s.ErasePhones(h.ctx); err != nil || n != 1 {
			t.Fatalf("at 91 days: erased %d (%v), want the first order's", n, err)
		}
		var left, keys, consents int
		if err := h.db.Read().QueryRow(h.ctx, `SELECT COUNT(*), SUM(CASE WHEN phone_key <> '' THEN 1 ELSE 0 END),
			SUM(CASE WHEN phone_consent_at <> 0 THEN 1 ELSE 0 END) FROM upi_orders WHERE phone <> ''`).Scan(&left, &keys, &consents); err != nil {
			t.Fatal(err)
		}
		if left != 1 || keys != 1 || consents != 1 {
			t.Errorf("after erasure: %d numbers, %d keys, %d consents left; want the younger order's", left, keys, consents)
		}
	})
}
