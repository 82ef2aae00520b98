package location_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

var storm = []string{"CHARGING", "AVAILABLE", "BLOCKED", "RESERVED", "CHARGING", "OUTOFORDER", "INOPERATIVE", "AVAILABLE"}

// patchSeq returns the (evse, status, last_updated) of every PATCH of
// location LOC1 a platform answered (not while down), in arrival order.
func patchSeq(p *sim.Platform) []string {
	var out []string
	for _, r := range p.Requests(sim.PathHas(http.MethodPatch, "/emsp/locations/NL/CP1/LOC1/")) {
		if r.Down {
			continue
		}
		var b map[string]any
		_ = json.Unmarshal(r.Body, &b)
		out = append(out, fmt.Sprintf("%s:%v@%v", r.Path[strings.LastIndex(r.Path, "/")+1:], b["status"], b["last_updated"]))
	}
	return out
}

// subsequence reports whether got is all, or some, of sent, in sent's order.
func subsequence(got, sent []string) bool {
	i := 0
	for _, s := range sent {
		if i < len(got) && got[i] == s {
			i++
		}
	}
	return i == len(got)
}

// TestStatusStorm: a CPO sends a storm of EVSE status PATCHes; eMSP One
// receives them in order (every one, or the latest where it fell behind);
// eMSP Two is down during the storm, its pushes fail for good, and once it answers again (the next delivery to
// it succeeds) it gets the whole location in its final state, not a replay
// of stale PATCHes.
func TestStatusStorm(t *testing.T) {
	// Not parallel with the package's other tests: it times a stream of
	// deliveries end to end, and on two cores under the race detector the
	// dozens of hubs the other tests start at once starved it past its
	// deadline (CI). Delivery throughput under load is the write-path work.
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		b := setup(t, h)
		uids := []string{"E1", "E2", "E3"}
		loc := locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(0), "E1:AVAILABLE", "E2:AVAILABLE", "E3:AVAILABLE")
		if err := b.CPO.PutLocation(b.ctx, "LOC1", loc); err != nil {
			t.Fatal(err)
		}
		for _, e := range []*sim.EMSP{b.EMSP, b.EMSP2} {
			waitState(t, b.ctx, e.Platform, "initial location", func() bool { return e.Location("NL", "CP1", "LOC1") != nil })
		}
		b.EMSP2.SetDown(true)

		var sent []string
		final := map[string]string{}
		for i := 0; i < 48; i++ {
			uid, status := uids[i%3], storm[(i/3+i)%len(storm)]
			if err := b.CPO.PatchEVSE(b.ctx, "LOC1", uid, map[string]any{"status": status, "last_updated": hubtest.Stamp(10 + i)}); err != nil {
				t.Fatal(err)
			}
			sent = append(sent, fmt.Sprintf("%s:%s@%s", uid, status, hubtest.Stamp(10+i)))
			final[uid] = status
		}
		done := func(e *sim.EMSP) func() bool {
			return func() bool {
				for uid, st := range final {
					if e.EVSEStatus("NL", "CP1", "LOC1", uid) != st {
						return false
					}
				}
				return true
			}
		}
		// eMSP One gets every PATCH, in order, but those that waited for it
		// longer than the collapse age while a later PATCH of the same EVSE
		// was queued behind them (superseded: on a loaded machine it may
		// fall that far behind).
		var one int64
		if err := h.DB.Read().QueryRow(b.ctx, "SELECT platform_id FROM platform_roles WHERE party_id = 'EM1'").Scan(&one); err != nil {
			t.Fatal(err)
		}
		superseded := func() int {
			rows, err := h.Hub.Outbox(b.ctx, one, "superseded")
			if err != nil {
				t.Fatal(err)
			}
			return len(rows)
		}
		waitState(t, b.ctx, b.EMSP.Platform, "every PATCH at eMSP One, or superseded", func() bool {
			return len(patchSeq(b.EMSP.Platform))+superseded() >= len(sent)
		})
		got, dropped := patchSeq(b.EMSP.Platform), superseded()
		if !subsequence(got, sent) || len(got)+dropped != len(sent) || !done(b.EMSP)() {
			t.Errorf("eMSP One received the PATCHes out of order, not all of them, or not the last ones (%d superseded):\n got %v\nsent %v", dropped, got, sent)
		}

		// eMSP Two: every push of LOC1 gave up; the location is marked.
		hubtest.Eventually(t, b.ctx, "eMSP Two's pushes to give up", func() bool {
			open, _ := h.Hub.Outbox(b.ctx, 0, "pending", "leased")
			return len(open) == 0
		})
		b.EMSP2.SetDown(false)
		// The next change anything sends it succeeds, and triggers the
		// resync of what it missed.
		if err := b.CPO.PutLocation(b.ctx, "LOC2", locationJSON("NL", "CP1", "LOC2", "12.98000", "77.60000", hubtest.Stamp(100), "E1:AVAILABLE")); err != nil {
			t.Fatal(err)
		}
		waitState(t, b.ctx, b.EMSP2.Platform, "final statuses at eMSP Two", done(b.EMSP2))
		var afterUp []sim.Request
		for _, r := range b.EMSP2.Requests(sim.PathHas("", "/emsp/locations/NL/CP1/LOC1")) {
			if !r.Down {
				afterUp = append(afterUp, r)
			}
		}
		// The initial PUT, then the resync PUT; no stale PATCH.
		if len(afterUp) != 2 || afterUp[1].Method != http.MethodPut {
			t.Errorf("eMSP Two got %d requests for LOC1 once up, want the initial PUT and one full PUT", len(afterUp))
		}
		if got := patchSeq(b.EMSP2.Platform); len(got) != 0 {
			t.Errorf("eMSP Two received stale PATCHes: %v", got)
		}

		// The outcomes are counted per receiver.
		resp := h.Do(t, http.MethodGet, "/metrics", "", nil, nil)
		metrics := string(resp.Body)
		for _, want := range []string{
			`ocpihub_hub_pushes_total{module="locations",outcome="delivered",receiver="DE/EM1"}`,
			`ocpihub_hub_pushes_total{module="locations",outcome="gave_up",receiver="FR/EM2"}`,
			`ocpihub_hub_push_delivery_seconds_count{module="locations"}`,
		} {
			if !strings.Contains(metrics, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
	}, fastPush(2))
}

// TestOutboxSurvivesRestartAndCoalesces: pushes queued for a down receiver
// survive a hub restart (the crash between commit and delivery loses
// nothing); a full PUT queued behind them supersedes the stale PATCHes; once
// the receiver is back it gets the PUT and ends in the final state.
func TestOutboxSurvivesRestartAndCoalesces(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		b := setup(t, h)
		loc := locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(0), "E1:AVAILABLE")
		b.EMSP.SetDown(true)
		if err := b.CPO.PutLocation(b.ctx, "LOC1", loc); err != nil {
			t.Fatal(err)
		}
		for i, st := range []string{"CHARGING", "AVAILABLE", "BLOCKED"} {
			if err := b.CPO.PatchEVSE(b.ctx, "LOC1", "E1", map[string]any{"status": st, "last_updated": hubtest.Stamp(1 + i)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.EMSP.WaitFor(b.ctx, 1, func(r sim.Request) bool { return r.Down }); err != nil {
			t.Fatal(err)
		}
		waitState(t, b.ctx, b.EMSP2.Platform, "the PATCHes at eMSP Two", func() bool { return len(patchSeq(b.EMSP2.Platform)) == 3 })
		h.Restart(t)

		// After the restart, the CPO replaces the location: the PATCHes
		// still queued for eMSP One are superseded.
		loc = locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(10), "E1:OUTOFORDER")
		if err := b.CPO.PutLocation(b.ctx, "LOC1", loc); err != nil {
			t.Fatal(err)
		}
		superseded, err := h.Hub.Outbox(b.ctx, 0, "superseded")
		if err != nil {
			t.Fatal(err)
		}
		if len(superseded) < 3 {
			t.Errorf("%d pushes superseded by the full PUT, want at least 3 of the 4 queued", len(superseded))
		}
		b.EMSP.SetDown(false)
		waitState(t, b.ctx, b.EMSP.Platform, "final state at eMSP One", func() bool {
			return b.EMSP.EVSEStatus("NL", "CP1", "LOC1", "E1") == "OUTOFORDER"
		})
		var answered []string
		for _, r := range b.EMSP.Requests(sim.PathHas("", "/emsp/locations/NL/CP1/LOC1")) {
			if !r.Down {
				answered = append(answered, r.Method)
			}
		}
		if len(answered) > 2 || answered[len(answered)-1] != http.MethodPut {
			t.Errorf("eMSP One got %v once up; want at most the in-flight head and then the full PUT", answered)
		}
		// eMSP Two was up all along and got everything, in order.
		waitState(t, b.ctx, b.EMSP2.Platform, "final state at eMSP Two", func() bool {
			return b.EMSP2.EVSEStatus("NL", "CP1", "LOC1", "E1") == "OUTOFORDER"
		})
		if got := patchSeq(b.EMSP2.Platform); len(got) != 3 {
			t.Errorf("eMSP Two got PATCHes %v, want all 3", got)
		}
	}, func(o *hubtest.Options) {
		fastPush(1000)(o)
	})
}
