package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
)

// bundle is a hub with a CPO (NL/CP1) and an eMSP (DE/EM1) registered.
type bundle struct {
	h    *hubtest.Hub
	cpo  *sim.CPO
	emsp *sim.EMSP
	ctx  context.Context
}

// each runs fn in parallel on each engine, on a bundle of a hub started
// with fast and then opts.
func each(t *testing.T, fn func(*testing.T, *bundle), opts ...func(*hubtest.Options)) {
	t.Parallel()
	hubtest.EachWith(t, setup, fn, append([]func(*hubtest.Options){fast}, opts...)...)
}

// eachFake is each with a fake clock driving the hub (hubtest.EachFake).
func eachFake(t *testing.T, fn func(*testing.T, *bundle, *clock.Fake)) {
	t.Parallel()
	hubtest.EachFake(t, func(t *testing.T, h *hubtest.Hub, clk *clock.Fake) { fn(t, setup(t, h), clk) }, fast)
}

func setup(t *testing.T, h *hubtest.Hub) *bundle {
	t.Helper()
	b := &bundle{h: h, ctx: hubtest.Ctx(t, 60*time.Second)}
	b.cpo = hubtest.Add(t, h, sim.StartCPO, "CPO", "NL", "CP1")
	b.emsp = hubtest.Add(t, h, sim.StartEMSP, "eMSP", "DE", "EM1")
	return b
}

func location(id, status, lu string) map[string]any {
	return hubtest.Location("NL", "CP1", id, status, lu)
}

func evseStatus(e *sim.EMSP, id string) string { return e.EVSEStatus("NL", "CP1", id, "E1") }

var fast = fastWith(nil)

// fastWith is fast, then edit.
func fastWith(edit func(*app.Config)) func(*hubtest.Options) {
	return hubtest.Configure(false, func(c *app.Config) {
		c.PushMaxAttempts = 3
		c.ForwardTimeout = 400 * time.Millisecond
		if edit != nil {
			edit(c)
		}
	})
}

// TestOneObjectIsDeliveredSerially: every PATCH of one location inserts a
// job, and many workers run them, yet a slow receiver sees the object's
// pushes one at a time and in commit order. With the collapse off, it
// gets every one of them however far behind it falls.
func TestOneObjectIsDeliveredSerially(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		if err := b.cpo.PutLocation(b.ctx, "L1", location("L1", "AVAILABLE", hubtest.Stamp(0))); err != nil {
			t.Fatal(err)
		}
		b.emsp.SetDelay(5 * time.Millisecond)
		statuses := []string{"CHARGING", "AVAILABLE", "BLOCKED", "RESERVED", "OUTOFORDER", "INOPERATIVE", "UNKNOWN", "PLANNED"}
		var want []string
		for i := 0; i < 24; i++ {
			st := statuses[i%len(statuses)]
			if err := b.cpo.PatchEVSE(b.ctx, "L1", "E1", map[string]any{"status": st, "last_updated": hubtest.Stamp(i + 1)}); err != nil {
				t.Fatal(err)
			}
			want = append(want, st+"@"+hubtest.Stamp(i+1))
		}
		if err := b.emsp.Until(b.ctx, func() bool { return len(b.emsp.Requests(sim.PathHas(http.MethodPatch, "/L1/E1"))) == len(want) }); err != nil {
			t.Fatal(err)
		}
		if got := stampedPatches(b.emsp); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("order:\n got %v\nwant %v", got, want)
		}
		if n := b.emsp.MaxInFlight(); n != 1 {
			t.Errorf("%d pushes of one object were in flight at once, want 1", n)
		}
	}, fastWith(func(c *app.Config) { c.PushCollapseAfter = -1 }))
}

// TestOneChangeTravelsOnWakes: with every poll and the recovery an hour
// apart, a PUT and then a PATCH still reach the eMSP: the commit wakes the
// expansion, the expansion wakes the receiver's delivery, and nothing waits
// for a timer.
func TestOneChangeTravelsOnWakes(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		if err := b.cpo.PutLocation(b.ctx, "L1", location("L1", "AVAILABLE", hubtest.Stamp(0))); err != nil {
			t.Fatal(err)
		}
		if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L1") == "AVAILABLE" }); err != nil {
			t.Fatal("the PUT did not arrive:", err)
		}
		start := time.Now()
		if err := b.cpo.PatchEVSE(b.ctx, "L1", "E1", map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(1)}); err != nil {
			t.Fatal(err)
		}
		if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L1") == "CHARGING" }); err != nil {
			t.Fatal("the PATCH did not arrive:", err)
		}
		t.Logf("one change, PATCH sent to the eMSP's 200: %v", time.Since(start))
	}, hubtest.Configure(false, func(c *app.Config) {
		c.PushPoll = time.Hour
		c.RecoverEvery = time.Hour
	}))
}

// TestCrashedLeaseIsTakenAgain: a receiver whose lease a worker that died
// left behind (run out long ago) gets its push from the next claim. The
// attempt the dead worker may have made was never recorded: the push is
// sent again and its one recorded attempt is the one that delivered it.
func TestCrashedLeaseIsTakenAgain(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		platformID := b.em1(t)
		body, _ := json.Marshal(location("L9", "CHARGING", hubtest.Stamp(1)))
		err := b.h.DB.InTx(b.ctx, func(ctx context.Context, tx *store.Tx) error {
			b.h.Hub.ForgetLeases()
			if err := holdReceiver(ctx, tx, platformID, "dead-worker", time.UnixMicro(1)); err != nil {
				return err
			}
			return b.h.Hub.Enqueue(ctx, tx, platformID, hub.Push{Module: "locations", ObjectKey: hub.ObjectKey("NL", "CP1", "L9"),
				Method: http.MethodPut, Path: "/NL/CP1/L9", Body: body, Full: true})
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L9") == "CHARGING" }); err != nil {
			t.Fatal(err)
		}
		var rows []hub.OutboxEntry
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for len(rows) == 0 {
			if rows, err = b.h.Hub.Outbox(b.ctx, platformID, "delivered"); err != nil {
				t.Fatal(err)
			}
			select {
			case <-tick.C:
			case <-b.ctx.Done():
				t.Fatal("the rescued row is never marked delivered")
			}
		}
		if len(rows) != 1 || rows[0].Attempts != 1 {
			t.Errorf("outbox after the rescue: %+v", rows)
		}
		if token, _ := leaseOf(t, b.h, b.ctx, platformID); token == "dead-worker" {
			t.Error("the dead worker still holds the receiver")
		}
	})
}

// TestOfflineReceiverIsSkippedAndResynced: the liveness job marks a silent,
// unreachable eMSP OFFLINE; changes made meanwhile are not queued for it
// (hubclientinfo: do not send, do not queue); when it answers again it gets
// every changed object in full, in its current state.
func TestOfflineReceiverIsSkippedAndResynced(t *testing.T) {
	t.Parallel()
	hubtest.EachFake(t, offlineResync, fast)
}

func offlineResync(t *testing.T, h *hubtest.Hub, clk *clock.Fake) {
	{
		b := setup(t, h)
		seedL1(t, b)
		b.emsp.SetDown(true)
		clk.Add(10 * time.Minute)
		if err := h.Parties.CheckLiveness(b.ctx); err != nil {
			t.Fatal(err)
		}
		before := len(b.emsp.Requests(nil))
		for i, st := range []string{"CHARGING", "BLOCKED"} {
			if err := b.cpo.PatchEVSE(b.ctx, "L1", "E1", map[string]any{"status": st, "last_updated": hubtest.Stamp(i + 1)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.cpo.PutLocation(b.ctx, "L2", location("L2", "RESERVED", hubtest.Stamp(3))); err != nil {
			t.Fatal(err)
		}
		open, err := h.Hub.Outbox(b.ctx, 0, "pending", "leased")
		if err != nil || len(open) != 0 {
			t.Fatalf("pushes queued for an OFFLINE receiver: %+v %v", open, err)
		}
		b.emsp.SetDown(false)
		clk.Add(time.Minute)
		if err := h.Parties.CheckLiveness(b.ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L1") == "BLOCKED" && evseStatus(b.emsp, "L2") == "RESERVED" }); err != nil {
			t.Fatal(err)
		}
		for _, r := range b.emsp.Requests(nil)[before:] {
			if r.Method == http.MethodPatch {
				t.Errorf("an OFFLINE receiver got a replayed PATCH: %s %s", r.Path, r.Body)
			}
		}
	}
}

// em1 returns the platform id of the eMSP (EM1).
func (b *bundle) em1(t *testing.T) int64 {
	t.Helper()
	var id int64
	if err := b.h.DB.Read().QueryRow(b.ctx, "SELECT platform_id FROM platform_roles WHERE party_id = 'EM1'").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
