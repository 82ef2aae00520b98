package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
)

// convergeWithin is issue 15's bound: after a SIGKILL mid-broadcast, every
// receiver has the latest state within this long after the restart.
const convergeWithin = 15 * time.Second

func location(id, status, lu string) map[string]any {
	return hubtest.Location("IN", "CPX", id, status, lu)
}

// TestBroadcastSurvivesSIGKILL kills the hub while an EVSE status change
// is in flight to three eMSPs (each holds the push unanswered, so the
// dead process dies holding the lease of every receiver's queue). The
// hub is started again on the same database; the CPO sends the latest
// status; every eMSP must show it, having got the pushes in order, within
// convergeWithin of the restart.
func TestBroadcastSurvivesSIGKILL(t *testing.T) {
	engines(t, func(t *testing.T, engine store.Engine) {
		binary(t) // built before the clock starts: a cold build takes minutes on a busy machine
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		cpo := hubtest.StartSim(t, sim.StartCPO, "Crash CPO", "IN", "CPX")
		var emsps []*sim.EMSP
		for i := range 3 {
			e := hubtest.StartSim(t, sim.StartEMSP, fmt.Sprintf("Crash eMSP %d", i+1), "IN", fmt.Sprintf("EM%d", i+1))
			emsps = append(emsps, e)
		}
		h := startHub(t, engine)
		h.register(ctx, cpo.Platform)
		for _, e := range emsps {
			h.register(ctx, e.Platform)
		}
		status := func(e *sim.EMSP) string { return e.EVSEStatus("IN", "CPX", "L1", "E1") }
		all := func(want string) func() bool {
			return func() bool {
				for _, e := range emsps {
					if status(e) != want {
						return false
					}
				}
				return true
			}
		}
		if err := cpo.PutLocation(ctx, "L1", location("L1", "AVAILABLE", hubtest.Stamp(0))); err != nil {
			t.Fatal(err)
		}
		if err := until(ctx, all("AVAILABLE")); err != nil {
			t.Fatalf("the first broadcast never arrived: %v", err)
		}

		// Mid-broadcast: every eMSP holds the PATCH unanswered.
		patch := sim.PathHas(http.MethodPatch, "/L1/E1")
		var releases []func()
		for _, e := range emsps {
			release := e.Hold(patch)
			t.Cleanup(release)
			releases = append(releases, release)
		}
		if err := cpo.PatchEVSE(ctx, "L1", "E1", map[string]any{"status": "CHARGING", "last_updated": hubtest.Stamp(1)}); err != nil {
			t.Fatal(err)
		}
		for _, e := range emsps {
			if _, err := e.WaitArrived(ctx, 1, patch); err != nil {
				t.Fatalf("the broadcast never got in flight: %v", err)
			}
		}
		h.kill()
		// Released only once each eMSP has seen the dead hub's connection
		// close: released earlier, a held PATCH could still be handled,
		// as if the killed process had delivered it.
		for _, e := range emsps {
			if _, err := e.WaitArrived(ctx, 1, func(r sim.Request) bool { return patch(r) && r.Abandoned }); err != nil {
				t.Fatalf("%s never saw the killed hub's PATCH abandoned: %v", e.Name(), err)
			}
		}
		for _, release := range releases {
			release()
		}

		restart := time.Now()
		h.start()
		// The CPO's latest state, sent once the hub answers again.
		if err := cpo.PatchEVSE(ctx, "L1", "E1", map[string]any{"status": "BLOCKED", "last_updated": hubtest.Stamp(2)}); err != nil {
			t.Fatal(err)
		}
		wait, cancelWait := context.WithTimeout(ctx, 2*convergeWithin)
		defer cancelWait()
		err := until(wait, all("BLOCKED"))
		took := time.Since(restart)
		if _, ok := converged(t, engine, took, err, "every receiver has the latest state", "receivers still lacked the latest state"); !ok {
			var got []string
			for _, e := range emsps {
				got = append(got, status(e))
			}
			t.Fatalf("receivers show %v %.2fs after the restart, want BLOCKED everywhere within %v", got, took.Seconds(), convergeWithin)
		}
		// Nothing older overwrote the latest state, and each eMSP got the
		// changes in order (the killed CHARGING again, then BLOCKED).
		for _, e := range emsps {
			var seq []string
			for _, r := range e.Requests(patch) {
				if !r.Handled {
					continue
				}
				var body map[string]any
				_ = json.Unmarshal(r.Body, &body)
				seq = append(seq, fmt.Sprint(body["status"]))
			}
			if got := strings.Join(seq, ","); got != "CHARGING,BLOCKED" {
				t.Errorf("%s: PATCHes handled %s, want CHARGING,BLOCKED", e.Name(), got)
			}
		}
	})
}

// until polls cond every 20 ms until it holds or ctx ends.
// converged logs and prints how long after the restart the receivers had
// what they should (has), or, when err is set, that they still lacked it
// (lacks), and reports whether they had it within convergeWithin.
func converged(t *testing.T, engine store.Engine, took time.Duration, err error, has, lacks string) (verdict string, ok bool) {
	t.Helper()
	verdict = fmt.Sprintf("%s within %.2fs of the restart (bound %v)", has, took.Seconds(), convergeWithin)
	if err != nil {
		verdict = fmt.Sprintf("%s %.2fs after the restart (bound %v)", lacks, took.Seconds(), convergeWithin)
	}
	t.Logf("%s: %s", engine, verdict)
	fmt.Printf("crashtest %s: %s\n", engine, verdict)
	return verdict, err == nil && took <= convergeWithin
}

func until(ctx context.Context, cond func() bool) error {
	return hubtest.Until(ctx, 20*time.Millisecond, cond)
}
