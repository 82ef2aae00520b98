package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/party"
)

// TestFailingReceiverIsReported: an eMSP whose receiver answers 503 while
// it keeps calling us (so it stays CONNECTED) is DEGRADED in the admin API
// and the console within seconds, with one partner.degraded event; when it
// answers again the next push recovers it (one partner.recovered) and what
// it missed is sent again.
func TestFailingReceiverIsReported(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		rec := b.h.Events.(*hubtest.Recorder)
		emspID := b.em1(t)
		b.emsp.SetDown(true)
		if err := b.cpo.PutLocation(b.ctx, "L1", location("L1", "AVAILABLE", hubtest.Stamp(0))); err != nil {
			t.Fatal(err)
		}
		if _, err := rec.Wait(b.ctx, event.PartnerDegraded, 1); err != nil {
			t.Fatalf("no partner.degraded: %v", err)
		}
		var p party.Platform
		b.h.Admin(t, "GET", fmt.Sprintf("/admin/parties/%d", emspID), nil, &p)
		if p.Status != party.StatusConnected || p.Health == nil || p.Health.State != party.HealthDegraded || p.Health.ConsecutiveFailures < 3 {
			t.Fatalf("admin API shows status %s, health %+v; want CONNECTED and DEGRADED after 3 failures", p.Status, p.Health)
		}
		if p.Health.LastError == "" || p.Health.LastFailureAt == nil {
			t.Errorf("health does not say what failed: %+v", p.Health)
		}
		var list []party.Platform
		b.h.Admin(t, "GET", "/admin/parties", nil, &list)
		for _, q := range list {
			if q.ID != emspID && q.Health.Degraded() {
				t.Errorf("platform %s is DEGRADED too", q.Name)
			}
		}

		b.emsp.SetDown(false)
		if err := b.cpo.PutLocation(b.ctx, "L2", location("L2", "AVAILABLE", hubtest.Stamp(1))); err != nil {
			t.Fatal(err)
		}
		if _, err := rec.Wait(b.ctx, event.PartnerRecovered, 1); err != nil {
			t.Fatalf("no partner.recovered: %v", err)
		}
		if err := b.emsp.Until(b.ctx, func() bool {
			return b.emsp.Location("NL", "CP1", "L1") != nil && b.emsp.Location("NL", "CP1", "L2") != nil
		}); err != nil {
			t.Fatalf("the recovered receiver did not catch up: %v", err)
		}
		b.h.Admin(t, "GET", fmt.Sprintf("/admin/parties/%d", emspID), nil, &p)
		if p.Health == nil || p.Health.State != party.HealthOK || p.Health.ConsecutiveFailures != 0 || p.Health.LastSuccessAt == nil {
			t.Errorf("after recovery the health is %+v, want OK", p.Health)
		}
		// An event is kept once its transaction commits, just after the
		// health the admin API read: waited for, then counted.
		for _, name := range []string{event.PartnerDegraded, event.PartnerRecovered} {
			if evs, err := rec.Wait(b.ctx, name, 1); err != nil || len(evs) != 1 {
				t.Errorf("%d %s events (%v), want 1", len(evs), name, err)
			}
		}
	}, func(o *hubtest.Options) { o.Events = hubtest.NewRecorder() })
}

// TestHealthChangesOnceUnderRace: replicas recording failures of one
// receiver at the same moment report the change once.
func TestHealthChangesOnceUnderRace(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		b := setup(t, h)
		rec := h.Events.(*hubtest.Recorder)
		emspID := b.em1(t)
		errs := make(chan error, 12)
		for i := 0; i < 12; i++ {
			go func() {
				errs <- h.Parties.RecordDelivery(context.WithoutCancel(b.ctx), party.DeliveryOutcome{PlatformID: emspID, Error: "connection refused", Lag: time.Second})
			}()
		}
		for i := 0; i < 12; i++ {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		hl, found, err := h.Parties.HealthOf(b.ctx, emspID)
		if err != nil || !found {
			t.Fatal(found, err)
		}
		if hl.State != party.HealthDegraded || hl.ConsecutiveFailures != 12 {
			t.Errorf("health %+v, want DEGRADED with 12 failures", hl)
		}
		if n := len(rec.Events(event.PartnerDegraded)); n != 1 {
			t.Errorf("%d partner.degraded events, want 1", n)
		}
		// A push older than the lag limit degrades on its first failure.
		if err := h.Parties.RecordDelivery(b.ctx, party.DeliveryOutcome{PlatformID: emspID, Answered: true}); err != nil {
			t.Fatal(err)
		}
		if err := h.Parties.RecordDelivery(b.ctx, party.DeliveryOutcome{PlatformID: emspID, Error: "timeout", Lag: 2 * time.Minute}); err != nil {
			t.Fatal(err)
		}
		if hl, _, _ = h.Parties.HealthOf(b.ctx, emspID); hl.State != party.HealthDegraded || hl.ConsecutiveFailures != 1 {
			t.Errorf("after one failure of a 2-minute-old push: %+v, want DEGRADED", hl)
		}
		if n := len(rec.Events(event.PartnerRecovered)); n != 1 {
			t.Errorf("%d partner.recovered events, want 1", n)
		}
	}, func(o *hubtest.Options) {
		o.Events = hubtest.NewRecorder()
		o.Config = func(c *app.Config) { c.SyncInterval = 0 }
	})
}
