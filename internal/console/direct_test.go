package console_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
)

// TestDirectPaymentPages: a PTP's confirmation for a payment the hub does
// not know is flagged; the operator sees it, opens its chain by reference
// and resolves it with a note (the CSRF token required).
func TestDirectPaymentPages(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, time.Minute)
		ptp := hubtest.Add(t, h, ptpsim.Start, "Terminals Inc", "NL", "PAY")
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

		c := signedIn(t, h)
		if got := attentionCard(t, c); got != "1/0 UPI/1 Direct Payment" {
			t.Errorf("overview card before resolving: %q", got)
		}
		list := c.get("/console/direct-payments")
		for _, want := range []string{`href="/console/direct-payments"`, "FAC-1", "ref-unknown-1", "NL/PAY", "unmatched", `id="resolve-` + rec + `"`} {
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
		if got := attentionCard(t, c); got != "0/0 UPI/0 Direct Payment" {
			t.Errorf("overview card after resolving: %q", got)
		}
	})
}

// TestDirectPaymentTerminalsPage: the operator lists every PTP's terminals
// with the CPO and EVSEs each serves, filters by PTP and CPO, and pages
// forward by keyset.
func TestDirectPaymentTerminalsPage(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, time.Minute)
		cpo := hubtest.Add(t, h, sim.StartCPO, "CPO One", "IN", "CP1")
		if err := cpo.PublishLocation(ctx, "LOC1", "EVSE-A", "EVSE-B"); err != nil {
			t.Fatal(err)
		}
		ptp := hubtest.Add(t, h, ptpsim.Start, "Terminals Inc", "NL", "PAY")
		other := hubtest.Add(t, h, ptpsim.Start, "Other PTP", "NL", "OPT")
		create := func(p *ptpsim.PTP, term map[string]any) {
			t.Helper()
			if resp, err := p.CreateTerminal(ctx, term); err != nil || resp.HTTPStatus != http.StatusCreated {
				t.Fatalf("terminal: %v %+v", err, resp)
			}
		}
		create(ptp, ptpsim.NewTerminal("TERM-EVSE", map[string]any{"country_code": "IN", "party_id": "CP1", "evse_uids": []string{"EVSE-B"}}))
		create(other, ptpsim.NewTerminal("TERM-LOOSE", nil))

		c := signedIn(t, h)
		list := c.get("/console/direct-payments/terminals")
		if list.status != http.StatusOK {
			t.Fatalf("terminals page: HTTP %d\n%s", list.status, list.body)
		}
		for _, want := range []string{`data-terminal="TERM-EVSE"`, `data-terminal="TERM-LOOSE"`, `<span class="evse">EVSE-B</span>`,
			"IN/CP1", "NL/PAY", "NL/OPT", "unclaimed", `id="tab-terminals"`, `aria-current="page">Direct Payment`} {
			if !strings.Contains(list.body, want) {
				t.Errorf("terminals page lacks %q", want)
			}
		}
		if strings.Contains(list.body, `<span class="evse">EVSE-A</span>`) {
			t.Error("the page shows an EVSE the terminal is not assigned to")
		}
		if strings.Index(list.body, "TERM-LOOSE") > strings.Index(list.body, "TERM-EVSE") {
			t.Error("the newest terminal is not first")
		}
		if !strings.Contains(c.get("/console/direct-payments").body, `href="/console/direct-payments/terminals"`) {
			t.Error("the Direct Payment page does not link to its terminals")
		}
		for q, want := range map[string]string{"ptp=NL-OPT": "TERM-LOOSE", "cpo=IN-CP1": "TERM-EVSE"} {
			p := c.get("/console/direct-payments/terminals?" + q)
			gone := "TERM-EVSE"
			if want == gone {
				gone = "TERM-LOOSE"
			}
			if !strings.Contains(p.body, `data-terminal="`+want+`"`) || strings.Contains(p.body, `data-terminal="`+gone+`"`) {
				t.Errorf("%s: want %s only\n%s", q, want, p.body)
			}
		}
		if p := c.get("/console/direct-payments/terminals?ptp=NL/PA"); p.status != http.StatusBadRequest {
			t.Errorf("malformed party: HTTP %d", p.status)
		}
		if p := c.get("/console/direct-payments/terminals?after=x"); p.status != http.StatusBadRequest {
			t.Errorf("malformed cursor: HTTP %d", p.status)
		}

		// A second page: 50 more terminals push the first two onto it.
		for i := range 50 {
			create(ptp, ptpsim.NewTerminal("TERM-"+strconv.Itoa(100+i), nil))
		}
		first := c.get("/console/direct-payments/terminals")
		if strings.Count(first.body, "data-terminal=") != 50 || strings.Contains(first.body, `data-terminal="TERM-EVSE"`) {
			t.Fatalf("first page: %d rows", strings.Count(first.body, "data-terminal="))
		}
		next := nextRE.FindStringSubmatch(first.body)
		if next == nil {
			t.Fatalf("no next link:\n%s", first.body)
		}
		second := c.get(html.UnescapeString(next[1]))
		if strings.Count(second.body, "data-terminal=") != 2 || !strings.Contains(second.body, `data-terminal="TERM-EVSE"`) ||
			!strings.Contains(second.body, `data-terminal="TERM-LOOSE"`) || nextRE.MatchString(second.body) {
			t.Errorf("second page:\n%s", second.body)
		}
	})
}

var nextRE = regexp.MustCompile(`href="(/console/direct-payments/terminals\?after=\d+)" rel="next"`)
