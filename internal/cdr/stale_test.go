package cdr_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestStaleCDR: a different copy of a stored CDR with an older last_updated
// (a late copy of a CDR the CPO replaced) is answered 1000 as stale, changes
// nothing and is not routed; a newer different copy stays a 2001 conflict.
func TestStaleCDR(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		hubtest.MustStatus(t, b.post(t, b.CPO.Platform, cdrJSON("CDR1", "S1", "150")), nil, http.StatusCreated, 1000)
		late := cdrJSON("CDR1", "S1", "140")
		late["last_updated"] = ts(30 * time.Minute)
		resp := hubtest.MustStatus(t, b.post(t, b.CPO.Platform, late), nil, http.StatusOK, 1000)
		if !strings.Contains(resp.Envelope.StatusMessage, "stale") {
			t.Errorf("status_message %q does not say the CDR was ignored as stale", resp.Envelope.StatusMessage)
		}
		if n := b.H.StaleUpdates(t, "cdrs"); n != 1 {
			t.Errorf("ocpihub_stale_updates_total{module=cdrs} = %v, want 1", n)
		}
		newer := cdrJSON("CDR1", "S1", "160")
		newer["last_updated"] = ts(2 * time.Hour)
		hubtest.MustStatus(t, b.post(t, b.CPO.Platform, newer), nil, http.StatusOK, 2001)
		if c, err := b.H.CDRs.Find(b.Ctx, cdr.Ref{CountryCode: "IN", PartyID: "CP1", ID: "CDR1"}); err != nil || c.CDR.TotalCost.ExclVAT.String() != "150" {
			t.Errorf("stored CDR changed: %v %v", c, err)
		}
		hubtest.MustStatus(t, b.post(t, b.CPO.Platform, cdrJSON("CDR2", "S2", "10")), nil, http.StatusCreated, 1000)
		if _, err := b.EMSP.WaitFor(b.Ctx, 2, sim.PathHas(http.MethodPost, "/emsp/cdrs")); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range b.EMSP.Requests(sim.PathHas(http.MethodPost, "/emsp/cdrs")) {
			if strings.Contains(string(r.Body), `"CDR1"`) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("the eMSP received CDR1 %d times, want once (the stale copy is not routed)", n)
		}
	})
}
