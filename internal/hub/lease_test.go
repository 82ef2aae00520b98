package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/instance"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
)

// TestClaimWritesNoPush: a push row is written when it is queued and when
// its outcome is recorded, and not in between. A claim by the process that
// holds the receiver writes no push, and writes the receiver's lease only
// to take it or once a third of it has gone; Stop hands the lease back.
// Before, every claim leased each push it took (a row write with its index
// entries, 64 per claim), and each renewal rewrote them again.
func TestClaimWritesNoPush(t *testing.T) {
	eachFake(t, func(t *testing.T, b *bundle, clk *clock.Fake) {
		seedL1(t, b)
		platformID := b.em1(t)
		b.h.Hub.Stop() // this test claims by hand
		if token, until := leaseOf(t, b.h, b.ctx, platformID); until != 0 {
			t.Errorf("after Stop the receiver's lease is %s's until %d: not handed back", token, until)
		}
		err := b.h.DB.InTx(b.ctx, func(ctx context.Context, tx *store.Tx) error {
			for i := range 3 {
				id := fmt.Sprintf("L%d", 10+i)
				body, _ := json.Marshal(location(id, "AVAILABLE", hubtest.Stamp(1)))
				if err := b.h.Hub.Enqueue(ctx, tx, platformID, hub.Push{Module: "locations", ObjectKey: hub.ObjectKey("NL", "CP1", id),
					Method: http.MethodPut, Path: "/NL/CP1/" + id, Body: body, Full: true}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		pushes := func() string {
			rows, err := store.QueryAll(b.ctx, b.h.DB.Read(), func(r store.Row) (string, error) {
				var id, attempts, retryAt, updatedAt int64
				var state string
				err := r.Scan(&id, &state, &attempts, &retryAt, &updatedAt)
				return fmt.Sprint(id, state, attempts, retryAt, updatedAt), err
			}, "SELECT id, state, attempts, retry_at, updated_at FROM hub_push WHERE platform_id = $1 ORDER BY id", platformID)
			if err != nil {
				t.Fatal(err)
			}
			return strings.Join(rows, "; ")
		}
		claim := func(step string) {
			t.Helper()
			before := pushes()
			c, err := b.h.Hub.Claim(b.ctx, platformID, 64)
			if err != nil || len(c.Items) != 3 {
				t.Fatalf("%s: claimed %d pushes (%v), want the 3 queued", step, len(c.Items), err)
			}
			if after := pushes(); after != before {
				t.Fatalf("%s: the claim wrote pushes:\n before %s\n after  %s", step, before, after)
			}
		}
		me := string(b.h.App.Instance)
		lease := func(step string, want time.Time) {
			t.Helper()
			token, until := leaseOf(t, b.h, b.ctx, platformID)
			if string(instance.Holder(token)) != me || until != want.UnixMicro() {
				t.Fatalf("%s: the lease is %s's until %v, want this process' until %v", step, token, time.UnixMicro(until), want)
			}
		}
		taken := clk.Now()
		claim("first claim")
		lease("first claim", taken.Add(hub.DefaultLease))
		// Nothing was settled, so the same pushes are claimed again; within
		// the lease's first third the lease is not written either.
		clk.Add(hub.DefaultLease / 4)
		claim("a claim in the lease's first third")
		lease("a claim in the lease's first third", taken.Add(hub.DefaultLease))
		clk.Add(hub.DefaultLease / 4)
		claim("a claim past the lease's first third")
		lease("a claim past the lease's first third", clk.Now().Add(hub.DefaultLease))
	})
}

// TestTwoReplicasDeliverInOrder: two hubs on one PostgreSQL database (the
// deployment with several replicas; a SQLite hub is one process) take a
// CPO's PATCHes of one EVSE alternately, each change expanded and woken on
// the replica that took it. One process at a time holds the receiver, so
// the eMSP gets every state once, in commit order, one at a time, and ends
// with the last; a replica that finds the other holding the receiver leaves
// the pushes to it.
func TestTwoReplicasDeliverInOrder(t *testing.T) {
	t.Parallel()
	noCollapse := fastWith(func(c *app.Config) { c.PushCollapseAfter = -1 })
	h1 := hubtest.Start(t, store.Postgres, noCollapse)
	b := setup(t, h1)
	h2 := hubtest.Start(t, store.Postgres, noCollapse, func(o *hubtest.Options) { o.DBURL = h1.DBURL })
	seedL1(t, b)
	b.emsp.SetDelay(2 * time.Millisecond)
	const n = 40
	var want []string
	for i := 1; i <= n; i++ {
		st := []string{"CHARGING", "AVAILABLE", "BLOCKED", "RESERVED"}[i%4]
		body, _ := json.Marshal(map[string]any{"status": st, "last_updated": hubtest.Stamp(i)})
		via := h1
		if i%2 == 0 {
			via = h2
		}
		if resp := via.Do(t, http.MethodPatch, "/ocpi/2.2.1/cpo/locations/NL/CP1/L1/E1", b.cpo.Token(), body, nil); resp.HTTPStatus != http.StatusOK {
			t.Fatalf("PATCH %d: HTTP %d %s", i, resp.HTTPStatus, resp.Body)
		}
		want = append(want, st+"@"+hubtest.Stamp(i))
	}
	patch := sim.PathHas(http.MethodPatch, "/L1/E1")
	if err := b.emsp.Until(b.ctx, func() bool { return len(b.emsp.Requests(patch)) >= n }); err != nil {
		t.Fatalf("the eMSP got %d of %d PATCHes: %v", len(b.emsp.Requests(patch)), n, err)
	}
	if got := stampedPatches(b.emsp); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the eMSP got, in this order:\n %v\nwant\n %v", got, want)
	}
	if m := b.emsp.MaxInFlight(); m != 1 {
		t.Errorf("%d pushes of one object were in flight at once, want 1", m)
	}
	last := strings.Split(want[n-1], "@")[0]
	if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L1") == last }); err != nil {
		t.Errorf("the eMSP ends with %s, want %s", evseStatus(b.emsp, "L1"), last)
	}
}

// TestIdleHolderHandsTheReceiverBack: once a receiver's worker has had
// nothing to do for ReleaseAfter, its process hands the receiver back
// (another replica need not wait for the lease to run out), and the next
// change takes it again.
func TestIdleHolderHandsTheReceiverBack(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		seedL1(t, b)
		platformID := b.em1(t)
		released := func() bool {
			_, until := leaseOf(t, b.h, b.ctx, platformID)
			return until == 0
		}
		hubtest.Eventually(t, b.ctx, "the idle receiver handed back", released)
		if err := b.cpo.PatchEVSE(b.ctx, "L1", "E1", map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(1)}); err != nil {
			t.Fatal(err)
		}
		if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L1") == "CHARGING" }); err != nil {
			t.Fatal(err)
		}
		if token, _ := leaseOf(t, b.h, b.ctx, platformID); string(instance.Holder(token)) != string(b.h.App.Instance) {
			t.Errorf("the receiver was delivered to under %q's lease, want this process'", token)
		}
		hubtest.Eventually(t, b.ctx, "the receiver handed back again", released)
	})
}
