package party_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
)

// TestFindReadsAPlatformInOneQuery: Find and FindByParty read a platform
// with the parties it hosts in one query (a claim, a relay and a forwarded
// request each read their partner's platform), and find what List, which
// reads the parties separately, finds: the same parties in the same order
// with their business details, for a platform of one party, one of two and
// a peer hub with the parties it represents.
func TestFindReadsAPlatformInOneQuery(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := context.Background()
		hubtest.Add(t, h, sim.StartCPO, "CPO One", "NL", "CP1")
		hubtest.Add(t, h, sim.StartEMSP, "eMSP One", "DE", "EM1")
		h.AddPeer(t, "Peer Hub", "FR/PHB", "FR/PC1", "FR/PE1")
		all, err := h.Parties.List(ctx, party.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) < 3 {
			t.Fatalf("%d platforms listed, want the three registered", len(all))
		}
		for _, want := range all {
			cctx, n := store.CountStmts(ctx)
			got, err := h.Parties.Find(cctx, want.ID)
			if err != nil {
				t.Fatal(err)
			}
			stmts := int64(1)
			if len(want.Roles) > 0 && want.Roles[0].Role == party.RoleHUB {
				stmts = 2 // and the parties a peer hub represents
			}
			if n.N() != stmts {
				t.Errorf("%s: Find ran %d statements, want %d", want.Name, n.N(), stmts)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Find gave\n %+v\nList gave\n %+v", want.Name, got, want)
			}
			if len(want.Roles) == 0 {
				continue
			}
			r := want.Roles[0]
			byParty, err := h.Parties.FindByParty(ctx, r.Role, r.CountryCode, r.PartyID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(byParty, want) {
				t.Errorf("%s: FindByParty gave\n %+v\nList gave\n %+v", want.Name, byParty, want)
			}
		}
	})
}
