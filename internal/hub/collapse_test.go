package hub_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

func TestCollapseFields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		push hub.Push
		want string
	}{
		{"a PUT rewrites everything at its path", hub.Push{Module: "sessions", Method: http.MethodPut, Body: []byte(`{"id":"S1"}`)}, "*"},
		{"an EVSE status PATCH", hub.Push{Module: "locations", Method: http.MethodPatch, Body: []byte(`{"status":"CHARGING","last_updated":"2026-01-01T00:00:00Z"}`)}, "last_updated,status"},
		{"a token PATCH", hub.Push{Module: "tokens", Method: http.MethodPatch, Body: []byte(`{"valid":false,"last_updated":"2026-01-01T00:00:00Z"}`)}, "last_updated,valid"},
		{"a Session PATCH appends charging_periods", hub.Push{Module: "sessions", Method: http.MethodPatch, Body: []byte(`{"kwh":1,"last_updated":"2026-01-01T00:00:00Z"}`)}, ""},
		{"a CDR POST", hub.Push{Module: "cdrs", Method: http.MethodPost, Body: []byte(`{"id":"C1"}`)}, ""},
		{"a tariff DELETE", hub.Push{Module: "tariffs", Method: http.MethodDelete}, ""},
		{"a PATCH that is not an object", hub.Push{Module: "locations", Method: http.MethodPatch, Body: []byte(`[1]`)}, ""},
		{"an empty PATCH", hub.Push{Module: "locations", Method: http.MethodPatch, Body: []byte(`{}`)}, ""},
		{"a key that would read as two", hub.Push{Module: "locations", Method: http.MethodPatch, Body: []byte(`{"a,b":1}`)}, ""},
	} {
		if got := hub.CollapseFields(tc.push); got != tc.want {
			t.Errorf("%s: fields %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCovers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		later, earlier string
		want           bool
	}{
		{"last_updated,status", "last_updated,status", true},
		{"last_updated,status,tariff_ids", "last_updated,status", true},
		{"last_updated,status", "last_updated,status,tariff_ids", false},
		{"last_updated,status", "floor_level,last_updated", false},
		{"*", "last_updated,status", true},
		{"*", "*", true},
		{"last_updated,status", "*", false},
		{"*", "", false},
		{"", "last_updated,status", false},
		{"last_updated,statuses", "last_updated,status", false},
	} {
		if got := hub.Covers(tc.later, tc.earlier); got != tc.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tc.later, tc.earlier, got, tc.want)
		}
	}
}

// TestBehindReceiverGetsTheLatestState: while a PATCH of an EVSE is in
// flight to a slow receiver, more PATCHes of it queue; once they have
// waited longer than the collapse age, the receiver is sent only those no
// later one covers, in order, and ends in the latest state. Pushes that
// have not waited that long are all sent.
func TestBehindReceiverGetsTheLatestState(t *testing.T) {
	eachFake(t, func(t *testing.T, b *bundle, clk *clock.Fake) {
		if err := b.cpo.PutLocation(b.ctx, "L1", location("L1", "AVAILABLE", hubtest.Stamp(0))); err != nil {
			t.Fatal(err)
		}
		if err := b.emsp.Until(b.ctx, func() bool { return evseStatus(b.emsp, "L1") == "AVAILABLE" }); err != nil {
			t.Fatal(err)
		}
		patch := sim.PathHas(http.MethodPatch, "/L1/E1")
		send := func(i int, fields map[string]any) {
			t.Helper()
			fields["last_updated"] = hubtest.Stamp(i)
			if err := b.cpo.PatchEVSE(b.ctx, "L1", "E1", fields); err != nil {
				t.Fatal(err)
			}
		}
		handled := func() []string {
			var out []string
			for _, r := range b.emsp.Requests(patch) {
				if !r.Handled {
					continue
				}
				var body map[string]any
				_ = json.Unmarshal(r.Body, &body)
				switch {
				case body["status"] != nil:
					out = append(out, fmt.Sprintf("%v@%v", body["status"], body["last_updated"]))
				default:
					out = append(out, fmt.Sprintf("floor %v@%v", body["floor_level"], body["last_updated"]))
				}
			}
			return out
		}

		release := b.emsp.Hold(patch)
		send(1, map[string]any{"status": "CHARGING"})
		if _, err := b.emsp.WaitArrived(b.ctx, 1, patch); err != nil {
			t.Fatal(err)
		}
		send(2, map[string]any{"status": "BLOCKED"})
		send(3, map[string]any{"status": "AVAILABLE"})
		send(4, map[string]any{"status": "RESERVED"})
		send(5, map[string]any{"floor_level": "2"}) // covered by no later PATCH: sent
		send(6, map[string]any{"status": "OUTOFORDER"})
		expand := func() {
			t.Helper()
			// Every queued PATCH is a push row before the receiver answers
			// (the expansion runs after each commit, but on its own time).
			if _, err := b.h.Hub.Expand(b.ctx); err != nil {
				t.Fatal(err)
			}
		}
		expand()
		clk.Add(2 * hub.DefaultCollapseAfter)
		release()
		want := []string{"CHARGING@" + hubtest.Stamp(1), "floor 2@" + hubtest.Stamp(5), "OUTOFORDER@" + hubtest.Stamp(6)}
		hubtest.Eventually(t, b.ctx, "the latest state at the receiver", func() bool {
			return len(handled()) >= len(want) && evseStatus(b.emsp, "L1") == "OUTOFORDER"
		})
		if got := handled(); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("the receiver that was behind got\n %v\nwant\n %v", got, want)
		}
		superseded, err := b.h.Hub.Outbox(b.ctx, b.em1(t), "superseded")
		if err != nil {
			t.Fatal(err)
		}
		if len(superseded) != 3 {
			t.Errorf("%d pushes superseded, want the 3 covered status PATCHes: %+v", len(superseded), superseded)
		}
		metrics := string(b.h.Do(t, http.MethodGet, "/metrics", "", nil, nil).Body)
		if m := `ocpihub_hub_pushes_total{module="locations",outcome="superseded",receiver="DE/EM1"} 3`; !strings.Contains(metrics, m) {
			t.Errorf("metrics lack %s", m)
		}

		// A queue that has not waited the collapse age is sent whole.
		release = b.emsp.Hold(patch)
		send(7, map[string]any{"status": "CHARGING"})
		if _, err := b.emsp.WaitArrived(b.ctx, len(want)+1, patch); err != nil {
			t.Fatal(err)
		}
		send(8, map[string]any{"status": "BLOCKED"})
		send(9, map[string]any{"status": "AVAILABLE"})
		expand()
		release()
		want = append(want, "CHARGING@"+hubtest.Stamp(7), "BLOCKED@"+hubtest.Stamp(8), "AVAILABLE@"+hubtest.Stamp(9))
		hubtest.Eventually(t, b.ctx, "every fresh PATCH at the receiver", func() bool { return len(handled()) >= len(want) })
		if got := handled(); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("fresh PATCHes: the receiver got\n %v\nwant\n %v", got, want)
		}
	})
}
