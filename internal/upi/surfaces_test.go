package upi_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestInvalidOrdersDoNotSpendTheLimit: requests that fail validation (an
// amount out of bounds, no amount) have their own budget; past it they are
// refused, and a driver's valid order on the same QR code still goes
// through.
func TestInvalidOrdersDoNotSpendTheLimit(t *testing.T) {
	t.Parallel()
	eachOnTheHour(t, func(t *testing.T, b *bundle, clk *clock.Fake) {
		b.qr(t)
		for i := 0; i < 30; i++ {
			form := url.Values{"amount": {"1"}}
			if i%2 == 1 {
				form = url.Values{"amount": {""}}
			}
			r, _ := b.postForm(t, qrRef, form)
			if r.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("invalid request %d: HTTP %d, want 422", i, r.StatusCode)
			}
		}
		r, body := b.postForm(t, qrRef, url.Values{"amount": {"1"}})
		wantPage(t, "the 31st invalid request in a minute", r, body, http.StatusTooManyRequests, "Too many unusable requests")
		if n := b.rows(t, "upi_orders"); n != 0 {
			t.Fatalf("%d orders stored", n)
		}
		// The valid orders' budget is untouched.
		for i := 0; i < 10; i++ {
			b.order(t, "100")
		}
		r, body = b.postForm(t, qrRef, url.Values{"amount": {"100"}})
		wantPage(t, "the eleventh valid order", r, body, http.StatusTooManyRequests, "Too many payments")
	})
}

// TestDriverPagesRunOnlyTheirOwnScripts: the driver pages' CSP allows
// scripts by a fresh nonce per page, never 'unsafe-inline', and every
// script of the page carries it.
func TestDriverPagesRunOnlyTheirOwnScripts(t *testing.T) {
	t.Parallel()
	b := setupAt(t, storetest.Engines()[0], nil)
	b.qr(t)
	nonces := map[string]bool{}
	for i := 0; i < 2; i++ {
		resp, err := http.Get(b.h.PublicURL() + "/qr/" + qrRef)
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		buf := make([]byte, 1<<16)
		for {
			n, err := resp.Body.Read(buf)
			sb.Write(buf[:n])
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		m := regexp.MustCompile(`script-src [^;]*'nonce-([^']+)'`).FindStringSubmatch(csp)
		if m == nil || strings.Contains(csp, "script-src 'unsafe-inline'") || strings.Contains(strings.SplitN(csp, "script-src", 2)[1], "unsafe-inline") {
			t.Fatalf("CSP %q: want a script nonce and no 'unsafe-inline' scripts", csp)
		}
		nonces[m[1]] = true
		scripts := regexp.MustCompile(`<script[^>]*>`).FindAllString(sb.String(), -1)
		if len(scripts) == 0 {
			t.Fatal("the landing page has no script")
		}
		for _, s := range scripts {
			if !strings.Contains(s, `nonce="`+m[1]+`"`) {
				t.Errorf("script %s lacks the page's nonce", s)
			}
		}
	}
	if len(nonces) != 2 {
		t.Error("two pages got the same nonce")
	}
}
