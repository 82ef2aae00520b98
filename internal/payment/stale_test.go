package payment_test

import (
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

// TestStaleTerminalUpdates: a PTP's PUT or PATCH and a CPO's assignment
// older than the stored terminal change nothing, are answered 1000 as stale
// and are relayed to no one; an equal last_updated is applied.
func TestStaleTerminalUpdates(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx, ptp, cpo := b.ctx, b.ptp, b.cpo
		t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
		at := func(m int) ocpi.DateTime { return ocpi.NewDateTime(t0.Add(time.Duration(m) * time.Minute)) }
		resp, err := ptp.CreateTerminal(ctx, ptpsim.NewTerminal("TERM-1", map[string]any{"customer_reference": "Acme", "last_updated": at(10)}))
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)

		stale := func(what string, resp *ocpiclient.Response, err error) {
			t.Helper()
			hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
			if !strings.Contains(resp.Envelope.StatusMessage, "stale") {
				t.Errorf("%s: status_message %q does not say it was ignored as stale", what, resp.Envelope.StatusMessage)
			}
		}
		resp, err = ptp.UpdateTerminal(ctx, http.MethodPut, "TERM-1", ptpsim.NewTerminal("TERM-1", map[string]any{"customer_reference": "Old", "last_updated": at(5)}))
		stale("older PTP PUT", resp, err)
		resp, err = ptp.UpdateTerminal(ctx, http.MethodPatch, "TERM-1", map[string]any{"customer_reference": "Old", "last_updated": at(5)})
		stale("older PTP PATCH", resp, err)
		resp, err = cpo.Payments(ctx, http.MethodPatch, "/terminals/TERM-1", map[string]any{"location_ids": []string{"LOC1"}, "last_updated": at(5)}, nil)
		stale("older CPO assignment", resp, err)
		term := terminalAt(t, ctx, cpo, "TERM-1")
		if term["customer_reference"] != "Acme" || join(term["location_ids"]) != "" || term["last_updated"] != at(10).String() {
			t.Errorf("the terminal after stale updates: %v", term)
		}
		if n := b.h.StaleUpdates(t, "payments"); n != 3 {
			t.Errorf("ocpihub_stale_updates_total{module=payments} = %v, want 3", n)
		}

		// An assignment with the stored last_updated is applied and relayed;
		// the stale one never was.
		resp, err = cpo.Payments(ctx, http.MethodPatch, "/terminals/TERM-1", map[string]any{"location_ids": []string{"LOC2"}, "last_updated": at(10)}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		wait(t, ctx, ptp.Platform, "the assignment at the PTP", func() bool { return len(ptp.Assignments()) >= 1 })
		if got := ptp.Assignments(); len(got) != 1 || join(got[0]["location_ids"]) != "LOC2" {
			t.Errorf("assignments at the PTP: %v", got)
		}
	})
}
