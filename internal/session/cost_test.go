package session_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/session"
)

// TestCostAsTheWholeSession: what a CDR reads of its session (CostWith:
// total_cost alone, found where it lies in the stored body) is what
// decoding the whole stored session gives, for sessions without a cost,
// with one with and without incl_vat, in exact digits, and long ones,
// whose periods and other members hold numbers and a member named
// total_cost of their own; a session the hub does not hold is not known.
func TestCostAsTheWholeSession(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		t0 := time.Now().Add(-3 * time.Hour).Truncate(time.Second)
		costs := []any{
			nil,
			map[string]any{"excl_vat": 150, "incl_vat": 177},
			map[string]any{"excl_vat": "12.30"},
			map[string]any{"excl_vat": 0, "incl_vat": 0},
			map[string]any{"excl_vat": "123456789.1234", "incl_vat": "145679011.1456"},
		}
		var refs []session.Ref
		for i, c := range costs {
			for _, periods := range []int{0, 1, 24} {
				id := fmt.Sprintf("COST-%d-%d", i, periods)
				s := sessionJSON(id, "DE", "EM1", "COMPLETED", t0)
				s["end_date_time"] = t0.Add(2 * time.Hour).UTC().Format(time.RFC3339)
				if c != nil {
					s["total_cost"] = c
				}
				// A member the hub does not know, with a total_cost inside:
				// kept in the stored body, and not the session's.
				s["x_breakdown"] = map[string]any{"total_cost": map[string]any{"excl_vat": 999}}
				var ps []any
				for p := range periods {
					ps = append(ps, period(t0.Add(time.Duration(p)*5*time.Minute), 0.5))
				}
				if ps != nil {
					s["charging_periods"] = ps
				}
				hubtest.MustStatus(t, b.put(t, b.CPO.Platform, http.MethodPut, "/IN/CP1/"+id, s), nil, http.StatusCreated, 1000)
				refs = append(refs, session.Ref{CountryCode: "IN", PartyID: "CP1", ID: id})
			}
		}
		refs = append(refs, session.Ref{CountryCode: "IN", PartyID: "CP1", ID: "NOT-HELD"},
			session.Ref{CountryCode: "IN", PartyID: "CP2", ID: "COST-1-1"})

		got := make([]session.Cost, len(refs))
		rs := b.H.DB.Reads()
		for i, r := range refs {
			b.H.Sessions.CostWith(rs, r, &got[i])
		}
		if err := rs.Run(b.Ctx); err != nil {
			t.Fatal(err)
		}
		withCost := 0
		for i, r := range refs {
			whole, err := b.H.Sessions.Find(b.Ctx, r)
			if ocpi.IsNotFound(err) {
				if got[i].Known || got[i].TotalCost != nil {
					t.Errorf("%s: the hub does not hold it, read as %+v", r, got[i])
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got[i].Known {
				t.Errorf("%s: held, read as not known", r)
				continue
			}
			want, have := whole.Session.TotalCost, got[i].TotalCost
			switch {
			case want == nil || have == nil:
				if want != have {
					t.Errorf("%s: total_cost %v, the whole session's %v", r, have, want)
				}
			case want.ExclVAT.Cmp(have.ExclVAT) != 0 || want.ExclVAT.String() != have.ExclVAT.String() ||
				(want.InclVAT == nil) != (have.InclVAT == nil) ||
				(want.InclVAT != nil && want.InclVAT.String() != have.InclVAT.String()):
				t.Errorf("%s: total_cost %+v, the whole session's %+v", r, have, want)
			default:
				withCost++
			}
		}
		if withCost != 12 {
			t.Errorf("%d sessions compared with a cost, want 12", withCost)
		}
	})
}
