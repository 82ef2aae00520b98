package upi_test

import (
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
)

// TestOutcomes: payments driven through the flow are counted on their day
// by outcome — failed, refunded in full (the start was rejected), partly
// refunded (the CDR cost less than the capture) and captured (charging) —
// and pending ones are not counted.
func TestOutcomes(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, b *bundle) {
		b.qr(t)
		failed := b.order(t, "300")
		if _, err := b.pg.Pay(b.ctx, b.pgOrder(t, failed).ID, pgsim.Failed); err != nil {
			t.Fatal(err)
		}
		b.waitStatus(t, failed, paymentrow.StatusFailed)

		b.cpo.OnCommand(func(string, map[string]any) sim.CommandBehavior {
			return sim.CommandBehavior{Response: ocpi.CommandRejected}
		})
		rejected := b.capture(t, "400")
		b.waitStatus(t, rejected, paymentrow.StatusRefunded)
		b.cpo.OnCommand(nil)

		settled := b.capture(t, "500")
		p := b.waitStatus(t, settled, paymentrow.StatusCharging)
		b.stop(t, p.Session.ID)
		b.waitStatus(t, settled, paymentrow.StatusSettled, refundsDone)

		charging := b.capture(t, "200")
		b.waitStatus(t, charging, paymentrow.StatusCharging)
		// An order paid but not yet captured at the PG: pending, not counted.
		pending := b.order(t, "250")
		if _, err := b.pg.Attempt(b.ctx, b.pgOrder(t, pending).ID, ""); err != nil {
			t.Fatal(err)
		}

		for _, loc := range []*time.Location{time.UTC, time.FixedZone("IST", 5*3600+1800)} {
			days, err := b.h.UPI.Outcomes(b.ctx, time.Now(), 3, loc)
			if err != nil {
				t.Fatal(err)
			}
			if len(days) != 3 {
				t.Fatalf("%d days, want 3", len(days))
			}
			today := time.Now().In(loc)
			if d := days[2].Day; d.Year() != today.Year() || d.YearDay() != today.YearDay() || d.Hour() != 0 {
				t.Errorf("%s: last day %v, want today %v", loc, d, today)
			}
			got := days[2]
			if got.Failed != 1 || got.RefundedFull != 1 || got.RefundedPartly != 1 || got.Captured != 1 {
				t.Errorf("%s: today %+v, want one of each", loc, got)
			}
			for _, d := range days[:2] {
				if d.Failed+d.RefundedFull+d.RefundedPartly+d.Captured != 0 {
					t.Errorf("%s: %v has payments: %+v", loc, d.Day, d)
				}
			}
		}
	})
}

// capture orders on the mapped sticker and pays in full.
func (b *bundle) capture(t *testing.T, amount string) string {
	t.Helper()
	orderID := b.order(t, amount)
	if _, err := b.pg.Pay(b.ctx, b.pgOrder(t, orderID).ID, pgsim.Captured); err != nil {
		t.Fatal(err)
	}
	return orderID
}
