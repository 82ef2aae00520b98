package payment_test

import (
	"github.com/ocpihub/ocpihub/internal/sim/ptpsim"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/payment"
)

// TestOperatorTerminalList: the operator's list spans every PTP and CPO,
// newest first, pages by keyset without losing or repeating a terminal,
// filters by PTP and by CPO, and names what each terminal serves.
func TestOperatorTerminalList(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		ctx := b.ctx
		other := b.otherPTP(t)

		// T-A: CPO One's, serving LOC2 whole and EVSE E1 of LOC1; T-B: CPO
		// Two's by its body; T-C: unclaimed, of the other PTP.
		resp, err := b.ptp.CreateTerminal(ctx, ptpsim.NewTerminal("T-A", nil))
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		resp, err = b.cpo.Payments(ctx, http.MethodPatch, "/terminals/T-A", map[string]any{"location_ids": []string{"LOC2"}, "evse_uids": []string{"E1"}}, nil)
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		resp, err = b.ptp.CreateTerminal(ctx, ptpsim.NewTerminal("T-B", map[string]any{"country_code": "IN", "party_id": "CP2", "evse_uids": []string{"E9"}}))
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)
		resp, err = other.CreateTerminal(ctx, ptpsim.NewTerminal("T-C", map[string]any{"city": "Pune"}))
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)

		ids := func(list []*payment.TerminalSummary) []string {
			var out []string
			for _, s := range list {
				out = append(out, s.TerminalID)
			}
			return out
		}
		all, more, err := b.h.Payments.Terminals(ctx, payment.TerminalFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"T-C", "T-B", "T-A"}, ids(all)); diff != "" || more {
			t.Fatalf("all terminals (-want +got), more %v:\n%s", more, diff)
		}
		a, bb, c := all[2], all[1], all[0]
		if a.CPO == nil || a.CPO.PartyID != "CP1" || a.PTP.PartyID != "PAY" {
			t.Errorf("T-A parties: PTP %v CPO %v", a.PTP, a.CPO)
		}
		if diff := cmp.Diff([]string{"LOC2"}, a.Locations); diff != "" {
			t.Errorf("T-A locations (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]payment.TerminalTarget{{LocationID: "LOC1", EVSEUID: "E1"}}, a.EVSEs); diff != "" {
			t.Errorf("T-A EVSEs (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]payment.TerminalTarget{{LocationID: "LOC9", EVSEUID: "E9"}}, bb.EVSEs); diff != "" || bb.CPO == nil || bb.CPO.PartyID != "CP2" {
			t.Errorf("T-B: CPO %v EVSEs (-want +got):\n%s", bb.CPO, diff)
		}
		if c.CPO != nil || c.City != "Pune" || len(c.EVSEs) != 0 || len(c.Locations) != 0 || c.PTP.PartyID != "OPT" {
			t.Errorf("T-C: %+v", c)
		}

		// Keyset pages of one: each terminal once, in order, then no more.
		var paged []*payment.TerminalSummary
		f := payment.TerminalFilter{Limit: 1}
		for i := 0; ; i++ {
			page, more, err := b.h.Payments.Terminals(ctx, f)
			if err != nil || len(page) != 1 || i > 3 {
				t.Fatalf("page %d: %v %v", i, page, err)
			}
			paged = append(paged, page...)
			if !more {
				break
			}
			f.After = page[0].RecordID
		}
		if diff := cmp.Diff(all, paged); diff != "" {
			t.Errorf("pages of one (-whole +paged):\n%s", diff)
		}

		for _, tc := range []struct {
			name string
			f    payment.TerminalFilter
			want []string
		}{
			{"PTP", payment.TerminalFilter{PTP: payment.Party{CountryCode: "NL", PartyID: "PAY"}}, []string{"T-B", "T-A"}},
			{"PTP lower case", payment.TerminalFilter{PTP: payment.Party{CountryCode: "nl", PartyID: "opt"}}, []string{"T-C"}},
			{"CPO", payment.TerminalFilter{CPO: payment.Party{CountryCode: "IN", PartyID: "CP2"}}, []string{"T-B"}},
			{"PTP and CPO", payment.TerminalFilter{PTP: payment.Party{CountryCode: "NL", PartyID: "OPT"}, CPO: payment.Party{CountryCode: "IN", PartyID: "CP1"}}, nil},
			{"after the newest", payment.TerminalFilter{After: c.RecordID}, []string{"T-B", "T-A"}},
		} {
			got, _, err := b.h.Payments.Terminals(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.name, diff)
			}
		}
	})
}
