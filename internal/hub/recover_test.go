package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// crashed seeds the receiver with location L1 and then leaves it as a
// process killed in the middle of a push leaves it: the receiver's lease
// held by holder until leaseFor from now, and a PATCH of E1 to CHARGING
// queued (the one it was sending). This process forgets that it delivered
// the seed: the lease in the database is all it goes by.
func crashed(t *testing.T, h *hubtest.Hub, b *bundle, now time.Time, holder string, leaseFor time.Duration) int64 {
	t.Helper()
	return enqueueCharging(t, h, b, func(ctx context.Context, tx *store.Tx, platformID int64) error {
		h.Hub.ForgetLeases()
		return holdReceiver(ctx, tx, platformID, holder, now.Add(leaseFor))
	})
}

// holdReceiver writes platformID's lease as held by holder until until.
func holdReceiver(ctx context.Context, tx *store.Tx, platformID int64, holder string, until time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO hub_receiver_lease (platform_id, lease_token, lease_until) VALUES ($1, $2, $3)
		ON CONFLICT (platform_id) DO UPDATE SET lease_token = excluded.lease_token, lease_until = excluded.lease_until`,
		platformID, holder, until.UnixMicro())
	return err
}

// leaseOf reads a receiver's lease.
func leaseOf(t *testing.T, h *hubtest.Hub, ctx context.Context, platformID int64) (token string, until int64) {
	t.Helper()
	if err := h.DB.Read().QueryRow(ctx, "SELECT lease_token, lease_until FROM hub_receiver_lease WHERE platform_id = $1", platformID).
		Scan(&token, &until); err != nil {
		t.Fatal(err)
	}
	return token, until
}

// seedL1 puts location L1 (E1 AVAILABLE) and waits until the eMSP has it.
func seedL1(t *testing.T, b *bundle) {
	t.Helper()
	if err := b.cpo.PutLocation(b.ctx, "L1", location("L1", "AVAILABLE", hubtest.Stamp(0))); err != nil {
		t.Fatal(err)
	}
	if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L1") == "AVAILABLE" }); err != nil {
		t.Fatal(err)
	}
	// The eMSP has the location before the hub has read its answer and
	// closed the push: wait for that too, so that what a test does next
	// starts from an empty outbox.
	hubtest.Eventually(t, b.ctx, "the seed push closed", func() bool {
		open, err := b.h.Hub.Outbox(b.ctx, 0, "pending", "leased")
		return err == nil && len(open) == 0
	})
}

// enqueueCharging seeds the receiver with L1 and queues, for EM1, a PATCH
// of E1 to CHARGING in a transaction that then runs after: the state a
// crash left behind. It returns the receiver's platform id.
func enqueueCharging(t *testing.T, h *hubtest.Hub, b *bundle, after func(ctx context.Context, tx *store.Tx, platformID int64) error) int64 {
	t.Helper()
	seedL1(t, b)
	platformID := b.em1(t)
	// The seed's worker lingers for ReleaseAfter in case more comes, and a
	// claim it starts meanwhile goes by the lease it holds in memory, which
	// the state written below cannot take from it. A killed process runs no
	// worker: wait until this one has ended and handed the receiver back.
	hubtest.Eventually(t, b.ctx, "the seed's worker ended", func() bool {
		_, until := leaseOf(t, h, b.ctx, platformID)
		return until == 0
	})
	body, _ := json.Marshal(map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(1)})
	err := h.DB.InTx(b.ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := h.Hub.Enqueue(ctx, tx, platformID, hub.Push{Module: "locations", ObjectKey: hub.ObjectKey("NL", "CP1", "L1"),
			Method: http.MethodPatch, Path: "/NL/CP1/L1/E1", Body: body}); err != nil {
			return err
		}
		return after(ctx, tx, platformID)
	})
	if err != nil {
		t.Fatal(err)
	}
	return platformID
}

// idle waits until no push job is waiting or running: the jobs that saw
// the dead lease have exited.
func idle(t *testing.T, h *hubtest.Hub, ctx context.Context) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var n int
		if err := h.DB.Read().QueryRow(ctx, `SELECT COUNT(*) FROM river_job WHERE kind IN ('hub_push', 'hub_dispatch')
			AND CAST(state AS TEXT) IN ('available', 'running', 'scheduled', 'retryable', 'pending')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%d push jobs never finished", n)
		}
	}
}

// patches returns the EVSE statuses the receiver got by PATCH, in order.
func patches(e *sim.EMSP) []string {
	var out []string
	for _, r := range e.Requests(sim.PathHas(http.MethodPatch, "/L1/E1")) {
		var body map[string]any
		_ = json.Unmarshal(r.Body, &body)
		out = append(out, body["status"].(string))
	}
	return out
}

// stampedPatches returns the EVSE states the receiver got by PATCH, in
// order, each as status@last_updated.
func stampedPatches(e *sim.EMSP) []string {
	var out []string
	for _, r := range e.Requests(sim.PathHas(http.MethodPatch, "/L1/E1")) {
		var body map[string]any
		_ = json.Unmarshal(r.Body, &body)
		out = append(out, fmt.Sprintf("%v@%v", body["status"], body["last_updated"]))
	}
	return out
}

// TestKilledWorkersQueueMovesWithinSeconds is issue 15's crash: a
// receiver's lease is held by a process that was killed mid-push, and the
// pushes queued after it wait for the lease. Once the lease has run out,
// the receiver gets the latest state (in order) within seconds, with no new
// push to wake the queue up; before, the queue waited for the job queue's
// rescue of the dead job, minutes later.
func TestKilledWorkersQueueMovesWithinSeconds(t *testing.T) {
	eachFake(t, func(t *testing.T, b *bundle, clk *clock.Fake) {
		crashed(t, b.h, b, clk.Now(), "killed-process", 10*time.Second)
		// After the restart the CPO sends the latest state.
		if err := b.cpo.PatchEVSE(b.ctx, "L1", "E1", map[string]any{"status": "BLOCKED", "last_updated": hubtest.Stamp(2)}); err != nil {
			t.Fatal(err)
		}
		idle(t, b.h, b.ctx)
		if got := evseStatus(b.emsp, "L1"); got != "AVAILABLE" {
			t.Fatalf("the receiver got %s past a live lease", got)
		}
		clk.Add(11 * time.Second)
		start := time.Now()
		ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second) // seconds, not minutes; room for a loaded CI machine
		defer cancel()
		if err := b.emsp.Until(ctx, func() bool { return evseStatus(b.emsp, "L1") == "BLOCKED" }); err != nil {
			t.Fatalf("the receiver still shows %s %v after the dead lease ran out (pushes: %v)", evseStatus(b.emsp, "L1"), time.Since(start), patches(b.emsp))
		}
		t.Logf("receiver converged %.2fs after the lease ran out", time.Since(start).Seconds())
		// The CHARGING PATCH, never attempted as far as the database
		// knows and waiting for longer than CollapseAfter, may be passed
		// over: BLOCKED covers it. Never an older state after a newer.
		if got := strings.Join(patches(b.emsp), ","); got != "CHARGING,BLOCKED" && got != "BLOCKED" {
			t.Errorf("PATCHes received: %s, want CHARGING,BLOCKED (in order) or BLOCKED alone", got)
		}
	})
}

// TestDeadHoldersLeaseIsTakenAtOnce: a lease whose holder is known to be
// gone (an earlier run of this very process: a restart) is taken without
// waiting for it to run out, by the next push and by the periodic
// recovery alike.
func TestDeadHoldersLeaseIsTakenAtOnce(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		me := strings.Split(string(b.h.App.Instance), ".")
		if me[0] == "" || me[1] == "" {
			t.Skip("no /proc: a dead holder cannot be recognised here")
		}
		earlier := strings.Join(append(me[:3:3], "earlier"), ".") + "~lease"
		crashed(t, b.h, b, time.Now(), earlier, 2*time.Minute)
		start := time.Now()
		if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L1") == "CHARGING" }); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("the dead holder's row was taken after %v", d)
		}
		if err := b.cpo.PatchEVSE(b.ctx, "L1", "E1", map[string]any{"status": "BLOCKED", "last_updated": hubtest.Stamp(2)}); err != nil {
			t.Fatal(err)
		}
		if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L1") == "BLOCKED" }); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLiveHoldersLeaseIsNotTaken: several replicas share one PostgreSQL;
// recovery never takes a lease before its deadline when its holder may be
// alive (this process, or a process it cannot see), and takes it after.
func TestLiveHoldersLeaseIsNotTaken(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		for _, holder := range []string{"", "other-machine.4026531836.1.nonce~lease"} {
			clk := clock.NewFake(time.Now())
			h := hubtest.Start(t, engine, fast, func(o *hubtest.Options) { o.Clock = clk })
			b := setup(t, h)
			if holder == "" {
				holder = h.App.Instance.Token("mine")
			}
			platformID := crashed(t, h, b, clk.Now(), holder, 10*time.Second)
			idle(t, h, b.ctx)
			clk.Add(9 * time.Second)
			if n, err := h.Hub.Recover(b.ctx); err != nil || n != 0 {
				t.Fatalf("holder %s: Recover re-armed %d queues (%v) before the lease ran out", holder, n, err)
			}
			if token, _ := leaseOf(t, h, b.ctx, platformID); token != holder {
				t.Fatalf("holder %s: the receiver's lease is %q's", holder, token)
			}
			if got := patches(b.emsp); len(got) != 0 {
				t.Fatalf("holder %s: the receiver got %v past a live lease", holder, got)
			}
			clk.Add(2 * time.Second)
			if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L1") == "CHARGING" }); err != nil {
				t.Fatalf("holder %s: %v", holder, err)
			}
			if got := patches(b.emsp); len(got) != 1 {
				t.Errorf("holder %s: PATCHes %v, want one", holder, got)
			}
		}
	})
}

// TestLostFanOutIsRestarted: a broadcast's rows were committed but the job
// that fans them out died with its process (here: deleted). Recovery
// starts the queue once its head has waited StallAfter.
func TestLostFanOutIsRestarted(t *testing.T) {
	eachFake(t, func(t *testing.T, b *bundle, clk *clock.Fake) {
		enqueueCharging(t, b.h, b, func(ctx context.Context, tx *store.Tx, _ int64) error {
			_, err := tx.Exec(ctx, "DELETE FROM river_job WHERE kind = 'hub_push' AND CAST(state AS TEXT) = 'available'")
			return err
		})
		if n, err := b.h.Hub.Recover(b.ctx); err != nil || n != 0 {
			t.Fatalf("Recover re-armed %d queues (%v) before StallAfter", n, err)
		}
		clk.Add(hub.StallAfter + time.Second)
		if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L1") == "CHARGING" }); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSlowDeliveryKeepsItsLease: a delivery slower than the lease renews
// it, so recovery does not hand the row to a second worker and the
// receiver gets the push once.
func TestSlowDeliveryKeepsItsLease(t *testing.T) {
	eachFake(t, func(t *testing.T, b *bundle, clk *clock.Fake) {
		seedL1(t, b)
		patch := sim.PathHas(http.MethodPatch, "/L1/E1")
		release := b.emsp.Hold(patch)
		defer release()
		if err := b.cpo.PatchEVSE(b.ctx, "L1", "E1", map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(1)}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.emsp.WaitArrived(b.ctx, 1, patch); err != nil {
			t.Fatal(err)
		}
		leaseUntil := func() int64 {
			_, until := leaseOf(t, b.h, b.ctx, b.em1(t))
			return until
		}
		first := leaseUntil()
		// More than the lease passes while the receiver sits on the
		// push, in half-lease steps; after each step the holder renews
		// (at the clock's new time) and recovery leaves the row alone.
		for range 3 {
			clk.Add(hub.DefaultLease / 2)
			want := clk.Now().Add(hub.DefaultLease).UnixMicro()
			moved := time.Now()
			for leaseUntil() < want {
				if time.Since(moved) > 10*time.Second {
					t.Fatal("the holder never renewed its lease")
				}
				time.Sleep(20 * time.Millisecond) // the renewal runs on its own ticker; nothing to wait on
			}
			if n, err := b.h.Hub.Recover(b.ctx); err != nil || n != 0 {
				t.Fatalf("Recover took a renewed lease: %d (%v)", n, err)
			}
		}
		if leaseUntil() <= first {
			t.Fatal("the lease was not renewed")
		}
		release()
		if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L1") == "CHARGING" }); err != nil {
			t.Fatal(err)
		}
		if got := patches(b.emsp); len(got) != 1 {
			t.Errorf("the slow push was sent %d times: %v", len(got), got)
		}
	})
}
