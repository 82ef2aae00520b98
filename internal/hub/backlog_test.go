package hub_test

import (
	"testing"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestDeliveryBacklog: GET /admin/delivery lists what waits for a receiver
// that is down, and only for it; once it answers again the backlog empties.
func TestDeliveryBacklog(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		emspID := b.em1(t)
		other := hubtest.Add(t, b.h, sim.StartEMSP, "eMSP 2", "DE", "EM2")
		backlog := func() hub.Backlog {
			var got hub.Backlog
			b.h.Admin(t, "GET", "/admin/delivery", nil, &got)
			return got
		}
		of := func(bl hub.Backlog, id int64) *hub.ReceiverBacklog {
			for i := range bl.Receivers {
				if bl.Receivers[i].PlatformID == id {
					return &bl.Receivers[i]
				}
			}
			return nil
		}
		if bl := backlog(); of(bl, emspID) != nil {
			t.Fatalf("a receiver with nothing waiting is listed: %+v", bl)
		}

		b.emsp.SetDown(true)
		for i, id := range []string{"L1", "L2"} {
			if err := b.cpo.PutLocation(b.ctx, id, location(id, "AVAILABLE", hubtest.Stamp(i))); err != nil {
				t.Fatal(err)
			}
		}
		// The other eMSP gets both; the one that is down keeps them open.
		hubtest.Eventually(t, b.ctx, "the second eMSP to get both locations", func() bool {
			return other.Location("NL", "CP1", "L1") != nil && other.Location("NL", "CP1", "L2") != nil
		})
		var down *hub.ReceiverBacklog
		// This hub is the one trying it: it holds the receiver's lease.
		hubtest.Eventually(t, b.ctx, "both pushes open for the receiver that is down, held by this hub", func() bool {
			down = of(backlog(), emspID)
			return down != nil && down.Open >= 2 && down.Holder == string(b.h.App.Instance)
		})
		if down.Name != "eMSP" || down.OldestOpen == nil || down.OldestAgeMS < 0 || down.Retrying > down.Open {
			t.Errorf("backlog of the receiver that is down: %+v", down)
		}
		var otherID int64
		if err := b.h.DB.Read().QueryRow(b.ctx, "SELECT platform_id FROM platform_roles WHERE party_id = 'EM2'").Scan(&otherID); err != nil {
			t.Fatal(err)
		}
		hubtest.Eventually(t, b.ctx, "the second eMSP to have nothing open", func() bool {
			r := of(backlog(), otherID)
			return r == nil || r.Open == 0
		})

		b.emsp.SetDown(false)
		hubtest.Eventually(t, b.ctx, "the recovered receiver's backlog to empty", func() bool {
			r := of(backlog(), emspID)
			return r == nil || (r.Open == 0 && r.ResyncMarked == 0)
		})
		if err := b.emsp.Until(b.ctx, func() bool {
			return b.emsp.Location("NL", "CP1", "L1") != nil && b.emsp.Location("NL", "CP1", "L2") != nil
		}); err != nil {
			t.Fatalf("the recovered receiver did not catch up: %v", err)
		}
	})
}
