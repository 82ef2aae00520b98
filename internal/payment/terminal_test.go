package payment_test

import (
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestTerminalRules: only a PTP creates terminals; a CPO changes only the
// assignment, only with its own locations and EVSEs in the directory, only
// of terminals it may see; every refusal names the field and changes
// nothing (neither at the hub nor at the PTP).
func TestTerminalRules(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx, ptp, cpo, cpo2 := b.ctx, b.ptp, b.cpo, b.cpo2
		resp, err := ptp.CreateTerminal(ctx, ptpsim.NewTerminal("TERM-1", map[string]any{"customer_reference": "Acme"}))
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)

		// A CPO creating a terminal: 2001 with HTTP 405 and a clear message.
		resp, err = cpo.Payments(ctx, http.MethodPost, "/terminals", ptpsim.NewTerminal("CPO-TERM", nil), nil)
		hubtest.MustStatus(t, resp, err, http.StatusMethodNotAllowed, 2001)
		if !strings.Contains(resp.Envelope.StatusMessage, "only a PTP creates terminals") {
			t.Errorf("message: %s", resp.Envelope.StatusMessage)
		}
		resp, err = cpo.Payments(ctx, http.MethodPost, "/terminals/CPO-TERM", ptpsim.NewTerminal("CPO-TERM", nil), nil)
		hubtest.MustStatus(t, resp, err, http.StatusMethodNotAllowed, 2001)
		if terminalAt(t, ctx, cpo, "CPO-TERM") != nil {
			t.Fatal("a CPO's POST created a terminal")
		}

		before := terminalAt(t, ctx, cpo, "TERM-1")
		assign := func(c *sim.CPO, method string, body map[string]any) (resp2 any, f func(int, int, string)) {
			r, e := c.Payments(ctx, method, "/terminals/TERM-1", body, nil)
			return r, func(httpStatus, code int, field string) { t.Helper(); refused(t, r, e, httpStatus, code, field) }
		}
		for _, tc := range []struct {
			name  string
			body  map[string]any
			field string
		}{
			{"location not in the directory", map[string]any{"location_ids": []string{"LOC1", "NOPE"}}, "location_ids[1]"},
			{"another CPO's location", map[string]any{"location_ids": []string{"LOC9"}}, "location_ids[0]"},
			{"another CPO's EVSE", map[string]any{"evse_uids": []string{"E1", "E9"}}, "evse_uids[1]"},
			{"unknown EVSE", map[string]any{"evse_uids": []string{"E7"}}, "evse_uids[0]"},
			{"a PTP field", map[string]any{"location_ids": []string{"LOC1"}, "customer_reference": "Other"}, "customer_reference"},
			{"another terminal id", map[string]any{"terminal_id": "TERM-2", "location_ids": []string{"LOC1"}}, "terminal_id"},
			{"a listed twice", map[string]any{"location_ids": []string{"LOC1", "loc1"}}, "location_ids[1]"},
			{"an id too long", map[string]any{"evse_uids": []string{strings.Repeat("E", 37)}}, "evse_uids[0]"},
			{"not a list", map[string]any{"location_ids": "LOC1"}, "location_ids"},
		} {
			for _, method := range []string{http.MethodPatch, http.MethodPut} {
				_, check := assign(cpo, method, tc.body)
				t.Run(tc.name+" "+method, func(t *testing.T) { check(http.StatusOK, 2001, tc.field) })
			}
		}
		if after := terminalAt(t, ctx, cpo, "TERM-1"); jsonNum(after) != jsonNum(before) {
			t.Fatalf("refused assignments changed the terminal:\n%v\n%v", before, after)
		}

		// A CPO may PUT back what it read, with new lists.
		back := terminalAt(t, ctx, cpo, "TERM-1")
		back["location_ids"] = []string{"LOC2"}
		resp, err = cpo.Payments(ctx, http.MethodPut, "/terminals/TERM-1", back, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		resp, err = cpo.Payments(ctx, http.MethodPatch, "/terminals/TERM-1", map[string]any{"evse_uids": []string{"E1"}}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		// Both relayed, in order.
		wait(t, ctx, ptp.Platform, "the assignments at the PTP", func() bool { return len(ptp.Assignments()) == 2 })
		if got := ptp.Assignments(); join(got[0]["location_ids"]) != "LOC2" || join(got[0]["evse_uids"]) != "" ||
			join(got[1]["location_ids"]) != "LOC2" || join(got[1]["evse_uids"]) != "E1" {
			t.Fatalf("assignments at the PTP: %v", got)
		}
		if term := ptp.Terminal("TERM-1"); join(term["location_ids"]) != "LOC2" || join(term["evse_uids"]) != "E1" {
			t.Errorf("the PTP's terminal: %v", term)
		}

		// The list pages by last_updated (date_from).
		future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		if n := len(list(t, ctx, cpo.Platform, "SENDER", "/terminals?date_from="+future)); n != 0 {
			t.Errorf("%d terminals changed after %s", n, future)
		}
		if n := len(list(t, ctx, cpo.Platform, "SENDER", "/terminals?date_from=2020-01-01T00:00:00Z")); n != 1 {
			t.Errorf("%d terminals since 2020", n)
		}

		// Now the terminal is CPO One's: CPO Two gets 404 for everything.
		_, check := assign(cpo2, http.MethodPatch, map[string]any{"location_ids": []string{"LOC9"}})
		check(http.StatusNotFound, 2000, "")
		_, check = assign(cpo2, http.MethodPut, map[string]any{"evse_uids": []string{"E9"}})
		check(http.StatusNotFound, 2000, "")
		if terminalAt(t, ctx, cpo2, "TERM-1") != nil {
			t.Error("CPO Two reads CPO One's terminal")
		}
		for _, term := range list(t, ctx, cpo2.Platform, "SENDER", "/terminals") {
			if term["terminal_id"] == "TERM-1" {
				t.Error("CPO Two lists CPO One's terminal")
			}
		}
		resp, err = cpo2.Payments(ctx, http.MethodPost, "/terminals/TERM-1/deactivate", nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
		if got := terminalAt(t, ctx, cpo, "TERM-1"); join(got["location_ids"]) != "LOC2" || join(got["evse_uids"]) != "E1" {
			t.Errorf("CPO Two changed the terminal: %v", got)
		}

		// A PTP creating an id another PTP holds; an eMSP in the module.
		other := b.otherPTP(t)
		// Its creates (POST, PUT) are checked as creates and refused with
		// 2001 that does not say who holds the id; its PATCH is an unknown
		// terminal's 404.
		resp, err = other.CreateTerminal(ctx, ptpsim.NewTerminal("term-1", nil))
		refused(t, resp, err, http.StatusOK, 2001, "terminal_id")
		if strings.Contains(strings.ToLower(string(resp.Body)), "ptp") {
			t.Errorf("the refusal names the holder: %s", resp.Body)
		}
		resp, err = other.UpdateTerminal(ctx, http.MethodPut, "TERM-1", map[string]any{"city": "Pune"})
		refused(t, resp, err, http.StatusOK, 2001, "terminal_id")
		taken := resp.Envelope.StatusMessage
		resp, err = other.UpdateTerminal(ctx, http.MethodPut, "TERM-1", map[string]any{"country": "IN"})
		refused(t, resp, err, http.StatusOK, 2001, "country")
		resp, err = other.UpdateTerminal(ctx, http.MethodPatch, "TERM-1", map[string]any{"city": "Pune"})
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
		unknown, err := other.UpdateTerminal(ctx, http.MethodPatch, "TERM-404", map[string]any{"city": "Pune"})
		hubtest.MustStatus(t, unknown, err, http.StatusNotFound, 2000)
		if strings.ReplaceAll(unknown.Envelope.StatusMessage, "TERM-404", "TERM-1") != resp.Envelope.StatusMessage {
			t.Errorf("PATCH of another PTP's terminal says %q, of an unknown one %q", resp.Envelope.StatusMessage, unknown.Envelope.StatusMessage)
		}
		resp, err = other.UpdateTerminal(ctx, http.MethodPut, "TERM-405", map[string]any{"city": "Pune"})
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000) // the same PUT of a free id creates
		if taken == "" || strings.Contains(taken, "TERM-1") {
			t.Errorf("the refusal of a taken id says %q", taken)
		}
		base, _ := b.emsp.HubEndpoint("payments", "SENDER")
		resp, err = b.emsp.Raw(ctx, http.MethodGet, base+"/terminals", nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
		if got := terminalAt(t, ctx, cpo, "TERM-1"); got["city"] != "Bengaluru" || got["customer_reference"] != "Acme" {
			t.Errorf("another PTP changed the terminal: %v", got)
		}
		if n := len(ptp.Assignments()); n != 2 {
			t.Errorf("the PTP got %d assignments, want the two accepted", n)
		}
	})
}

// TestTerminalValidation: a PTP's terminals are checked field by field
// (payments.md §3); a refused one is not stored.
func TestTerminalValidation(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx, ptp := b.ctx, b.ptp
		long := strings.Repeat("x", 37)
		for _, tc := range []struct {
			name  string
			extra map[string]any
			field string
		}{
			{"customer_reference", map[string]any{"customer_reference": long}, "customer_reference"},
			{"address", map[string]any{"address": strings.Repeat("a", 46)}, "address"},
			{"city", map[string]any{"city": "Münster"}, "city"},
			{"postal_code", map[string]any{"postal_code": "12345678901"}, "postal_code"},
			{"state", map[string]any{"state": strings.Repeat("s", 21)}, "state"},
			{"country", map[string]any{"country": "IN"}, "country"},
			{"coordinates", map[string]any{"coordinates": map[string]any{"latitude": "12.9", "longitude": "77.59460"}}, "coordinates.latitude"},
			{"invoice_base_url", map[string]any{"invoice_base_url": "not a url"}, "invoice_base_url"},
			{"invoice_creator", map[string]any{"invoice_creator": "EMSP"}, "invoice_creator"},
			{"reference", map[string]any{"reference": long}, "reference"},
			{"party without country", map[string]any{"party_id": "CP1"}, "country_code"},
			{"location_ids type", map[string]any{"location_ids": []int{1}}, "location_ids[0]"},
			{"unknown location", map[string]any{"location_ids": []string{"NOPE"}}, "location_ids[0]"},
			{"location of another CPO", map[string]any{"country_code": "IN", "party_id": "CP1", "location_ids": []string{"LOC9"}}, "location_ids[0]"},
			{"EVSE without a CPO", map[string]any{"evse_uids": []string{"E1"}}, "evse_uids[0]"},
			{"last_updated", map[string]any{"last_updated": "yesterday"}, "last_updated"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp, err := ptp.CreateTerminal(ctx, ptpsim.NewTerminal("BAD-"+strings.ReplaceAll(tc.name, " ", "-"), tc.extra))
				refused(t, resp, err, http.StatusOK, 2001, tc.field)
			})
		}
		resp, err := ptp.CreateTerminal(ctx, map[string]any{"terminal_id": long})
		refused(t, resp, err, http.StatusOK, 2001, "terminal_id")
		resp, err = ptp.CreateTerminal(ctx, map[string]any{"city": "Pune"})
		refused(t, resp, err, http.StatusOK, 2001, "terminal_id")
		if n := len(list(t, ctx, ptp.Platform, "RECEIVER", "/terminals")); n != 0 {
			t.Fatalf("%d terminals stored after refusals", n)
		}

		// The minimal body is accepted (last_updated set by the hub); PUT
		// merges into it; PATCH of an unknown one is 404; the URL id must
		// match the body's.
		base, _ := ptp.HubEndpoint("payments", "RECEIVER")
		resp, err = ptp.Raw(ctx, http.MethodPost, base+"/terminals/MIN-1", map[string]any{"terminal_id": "MIN-1"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		resp, err = ptp.Raw(ctx, http.MethodPut, base+"/terminals/MIN-1", map[string]any{"customer_reference": "Acme", "country_code": "IN", "party_id": "CP1"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		resp, err = ptp.Raw(ctx, http.MethodPatch, base+"/terminals/MIN-1", map[string]any{"location_ids": []string{"LOC1"}}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		resp, err = ptp.Raw(ctx, http.MethodPatch, base+"/terminals/MIN-2", map[string]any{"city": "Pune"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusNotFound, 2000)
		resp, err = ptp.Raw(ctx, http.MethodPut, base+"/terminals/MIN-1", map[string]any{"terminal_id": "MIN-9"}, nil)
		refused(t, resp, err, http.StatusOK, 2001, "terminal_id")
		var term map[string]any
		resp, err = ptp.Raw(ctx, http.MethodGet, base+"/terminals/MIN-1", nil, nil)
		data(t, hubtest.MustStatus(t, resp, err, http.StatusOK, 1000), &term)
		schema(t, "Terminal", term)
		if term["customer_reference"] != "Acme" || join(term["location_ids"]) != "LOC1" || term["last_updated"] == nil {
			t.Errorf("merged terminal: %v", term)
		}
		// It names CPO One: CPO One received it in full, CPO Two cannot see it.
		wait(t, ctx, b.cpo.Platform, "the terminal at CPO One", func() bool {
			got := b.cpo.ReceivedTerminal("MIN-1")
			return got != nil && join(got["location_ids"]) == "LOC1"
		})
		schema(t, "Terminal", b.cpo.ReceivedTerminal("MIN-1"))
		if terminalAt(t, ctx, b.cpo2, "MIN-1") != nil {
			t.Error("CPO Two sees CPO One's terminal")
		}
	})
}

// TestTerminalActivation: a CPO asks a PTP to activate a terminal built
// into a charger (forwarded, the PTP's answer passed back) and to
// deactivate one (queued to the terminal's PTP).
func TestTerminalActivation(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx, ptp, cpo := b.ctx, b.ptp, b.cpo
		resp, err := cpo.Payments(ctx, http.MethodPost, "/terminals/activate", map[string]any{"reference": "SN-0042", "location_ids": []string{"LOC1"}}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		if got := ptp.Activations(); len(got) != 1 || got[0]["reference"] != "SN-0042" {
			t.Fatalf("activations at the PTP: %v", got)
		}
		resp, err = cpo.Payments(ctx, http.MethodPost, "/terminals/activate", map[string]any{"location_ids": []string{"LOC1"}}, nil)
		refused(t, resp, err, http.StatusOK, 2001, "reference")
		resp, err = cpo.Payments(ctx, http.MethodPost, "/terminals/activate", map[string]any{"reference": "SN-1", "location_ids": []string{"LOC9"}}, nil)
		refused(t, resp, err, http.StatusOK, 2001, "location_ids[0]")
		if n := len(ptp.Activations()); n != 1 {
			t.Errorf("refused activations reached the PTP: %d", n)
		}

		// The PTP creates the activated terminal for the CPO; the CPO asks
		// for its deactivation.
		resp, err = ptp.CreateTerminal(ctx, ptpsim.NewTerminal("ACT-1", map[string]any{"reference": "SN-0042", "country_code": "IN",
			"party_id": "CP1", "location_ids": []string{"LOC1"}}))
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		resp, err = cpo.Payments(ctx, http.MethodPost, "/terminals/ACT-1/deactivate", nil, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		wait(t, ctx, ptp.Platform, "the deactivation at the PTP", func() bool { return len(ptp.Deactivations()) == 1 })
		if got := ptp.Deactivations(); got[0] != "ACT-1" {
			t.Errorf("deactivations: %v", got)
		}
		resp, err = ptp.Raw(ctx, http.MethodPost, mustEndpoint(t, ptp.Platform, "RECEIVER")+"/terminals/activate", map[string]any{"reference": "X"}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusMethodNotAllowed, 2001)
	})
}

func mustEndpoint(t *testing.T, p *sim.Platform, role string) string {
	t.Helper()
	u, ok := p.HubEndpoint("payments", role)
	if !ok {
		t.Fatal("no payments endpoint")
	}
	return u
}
