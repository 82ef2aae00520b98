package console_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestDirectPaymentPages: a PTP's confirmation for a payment the hub does
// not know is flagged; the operator sees it, opens its chain by reference
// and resolves it with a note (the CSRF token required).
func TestDirectPaymentPages(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, time.Minute)
		ptp, err := sim.StartPTP("Terminals Inc", "NL", "PAY", hubtest.Logger())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ptp.Close)
		h.Register(t, ptp.Platform)
		advice := map[string]any{"id": "FAC-1", "authorization_reference": "ref-unknown-1", "currency": "INR",
			"total_costs": map[string]any{"excl_vat": 10, "incl_vat": 11.8}, "eft_data": []any{"RuPay", "Nr: **** 1234"},
			"capture_status_code": "SUCCESS", "last_updated": ocpi.NewDateTime(time.Now())}
		if resp, err := ptp.Confirm(ctx, advice); err != nil || resp.HTTPStatus >= 300 {
			t.Fatalf("confirmation: %v %+v", err, resp)
		}
		flagged, _, err := h.Payments.Flagged(ctx, 10, 0)
		if err != nil || len(flagged) != 1 {
			t.Fatalf("flagged: %v %v", flagged, err)
		}
		rec := strconv.FormatInt(flagged[0].RecordID, 10)

		c := newClient(t, h)
		c.signIn()
		list := c.get("/console/direct-payments")
		for _, want := range []string{`href="/console/direct-payments"`, "FAC-1", "ref-unknown-1", "NL-PAY", "unmatched", `id="resolve-` + rec + `"`} {
			if !strings.Contains(list.body, want) {
				t.Errorf("direct payment page lacks %q", want)
			}
		}
		chain := c.get("/console/direct-payments/chain?reference=ref-unknown-1")
		if chain.status != http.StatusOK || !strings.Contains(chain.body, "FAC-1") || !strings.Contains(chain.body, "known only from confirmations") {
			t.Errorf("chain page: HTTP %d\n%s", chain.status, chain.body)
		}
		if p := c.get("/console/direct-payments/chain?reference=nothing-here"); p.status != http.StatusNotFound {
			t.Errorf("unknown reference: HTTP %d", p.status)
		}
		if p := c.get("/console/direct-payments/chain"); p.status != http.StatusBadRequest {
			t.Errorf("no reference: HTTP %d", p.status)
		}
		path := "/console/direct-payments/advice/" + rec + "/resolve"
		if p := c.do(http.MethodPost, path, url.Values{"note": {"asked the PTP"}}); p.status != http.StatusForbidden {
			t.Errorf("resolve without CSRF: HTTP %d", p.status)
		}
		p := c.do(http.MethodPost, path, url.Values{"csrf": {csrf(t, list)}, "note": {"asked the PTP"}})
		if p.status != http.StatusSeeOther || p.location != "/console/direct-payments" {
			t.Fatalf("resolve: HTTP %d → %q", p.status, p.location)
		}
		after := c.get(p.location)
		if !strings.Contains(after.body, "is resolved") || strings.Contains(after.body, `id="resolve-`+rec+`"`) {
			t.Errorf("after resolving:\n%s", after.body)
		}
		if chain := c.get("/console/direct-payments/chain?reference=ref-unknown-1"); !strings.Contains(chain.body, "resolved: asked the PTP") {
			t.Errorf("the chain does not show the resolution")
		}
	})
}
