package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Delivery scenarios: the hub with 10 simulated eMSPs on loopback, delivery
// running as in production (see README.md).
//
//   - delivery-lag: the CPO PATCHes EVSE statuses at a fixed offered rate
//     (DELIVERY_RATE per second, default 300, for DELIVERY_SECONDS, default
//     10) over 100 locations × 2 EVSEs; for each PATCH, the time from its
//     answer to the moment the last eMSP has its state (that PATCH, or a
//     later state of the EVSE that replaced it): p50/p99, and how many
//     PATCHes some eMSP still lacked after a bounded drain (30 s).
//
//   - delivery-backlog: DELIVERY_BACKLOG PATCHes (default 3000) as fast as 8
//     clients can send them, then the time until every eMSP has every
//     EVSE's final state: changes fully delivered to all 10 per second.
//
//   - delivery-lag-slow-receiver: delivery-lag with one eMSP that answers
//     slower than the changes come, with the collapse on and off.
//
//     go test -run '^$' -bench Delivery -benchtime 1x ./bench/
func BenchmarkDelivery(b *testing.B) {
	engines(b, func(b *testing.B, engine store.Engine) {
		b.Run("lag", func(b *testing.B) {
			h := startHub(b, engine)
			emsps := seedDelivery(b, h)
			deliveryLag(b, h, emsps, envInt("DELIVERY_RATE", 300), envInt("DELIVERY_SECONDS", 10))
		})
		b.Run("backlog", func(b *testing.B) {
			h := startHub(b, engine)
			emsps := seedDelivery(b, h)
			deliveryBacklog(b, h, emsps, envInt("DELIVERY_BACKLOG", 3000))
		})
		// One of the 10 eMSPs answers each push after DELIVERY_SLOW_MS
		// (default 50): with 8 pushes in flight it takes at most 160 a
		// second of the 300 offered, so it falls behind. "collapse" is the
		// default configuration (a push that waited a second is passed
		// over for a later one that covers it); "every-state" sends it
		// every state (--push-collapse-after=0).
		for _, mode := range []struct {
			name  string
			after time.Duration
		}{{"lag-slow-receiver/collapse", 0}, {"lag-slow-receiver/every-state", -1}} {
			b.Run(mode.name, func(b *testing.B) {
				h := startHubWith(b, engine, func(c *app.Config) { c.PushCollapseAfter = mode.after })
				emsps := seedDelivery(b, h)
				emsps[0].SetDelay(time.Duration(envInt("DELIVERY_SLOW_MS", 50)) * time.Millisecond)
				deliveryLag(b, h, emsps, envInt("DELIVERY_RATE", 300), envInt("DELIVERY_SECONDS", 10))
			})
		}
	})
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// seedDelivery registers 10 eMSPs, publishes the 100 locations and waits
// until every eMSP has them.
func seedDelivery(b testing.TB, h *benchHub) []*sim.EMSP {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	emsps := addReceivers(b, h)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range patchLocations {
		id := fmt.Sprintf("P%03d", i)
		status, err := h.do(ctx, http.MethodPut, "/ocpi/2.2.1/cpo/locations/NL/BCP/"+id, benchLocation("BCP", id, base, i))
		if err != nil || status != http.StatusCreated {
			b.Fatalf("seed location %s: HTTP %d %v", id, status, err)
		}
	}
	for _, e := range emsps {
		for e.LocationCount() < patchLocations {
			if ctx.Err() != nil {
				b.Fatalf("%s has %d of %d locations", e.Name(), e.LocationCount(), patchLocations)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return emsps
}

// patchAt is the i-th PATCH of a run: its EVSE and its last_updated.
func patchAt(i int) (loc, evse string, lu time.Time) {
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	return fmt.Sprintf("P%03d", i%patchLocations), fmt.Sprintf("E%d", 1+(i/patchLocations)%2), base.Add(time.Duration(i) * time.Millisecond)
}

func (h *benchHub) patch(ctx context.Context, i int) error {
	loc, evse, lu := patchAt(i)
	statuses := []string{"CHARGING", "AVAILABLE", "BLOCKED", "RESERVED"}
	body := fmt.Sprintf(`{"status":%q,"last_updated":%q}`, statuses[i%4], ocpi.NewDateTime(lu))
	status, err := h.do(ctx, http.MethodPatch, "/ocpi/2.2.1/cpo/locations/NL/BCP/"+loc+"/"+evse, []byte(body))
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("PATCH %s/%s: HTTP %d", loc, evse, status)
	}
	return err
}

// arrival is when an eMSP got a state of an EVSE.
type arrival struct {
	lu time.Time
	at time.Time
}

// arrivals lists, per "loc/evse", the EVSE states an eMSP received (by
// PATCH of the EVSE or PUT of its location), in arrival order.
func arrivals(e *sim.EMSP) map[string][]arrival {
	out := map[string][]arrival{}
	for _, r := range e.Requests(sim.PathHas("", "/locations/NL/BCP/")) {
		if r.Down || (r.Method != http.MethodPatch && r.Method != http.MethodPut) {
			continue
		}
		parts := strings.Split(r.Path[strings.Index(r.Path, "/NL/BCP/")+len("/NL/BCP/"):], "/")
		switch {
		case len(parts) == 2 && r.Method == http.MethodPatch:
			var body struct {
				LastUpdated time.Time `json:"last_updated"`
			}
			if json.Unmarshal(r.Body, &body) == nil {
				out[parts[0]+"/"+parts[1]] = append(out[parts[0]+"/"+parts[1]], arrival{body.LastUpdated, r.At})
			}
		case len(parts) == 1 && r.Method == http.MethodPut:
			var body struct {
				EVSEs []struct {
					UID         string    `json:"uid"`
					LastUpdated time.Time `json:"last_updated"`
				} `json:"evses"`
			}
			if json.Unmarshal(r.Body, &body) == nil {
				for _, ev := range body.EVSEs {
					out[parts[0]+"/"+ev.UID] = append(out[parts[0]+"/"+ev.UID], arrival{ev.LastUpdated, r.At})
				}
			}
		}
	}
	return out
}

// has returns when the eMSP first had a state of the EVSE at least as new
// as lu.
func has(as []arrival, lu time.Time) (time.Time, bool) {
	for _, a := range as {
		if !a.lu.Before(lu) {
			return a.at, true
		}
	}
	return time.Time{}, false
}

func deliveryLag(b *testing.B, h *benchHub, emsps []*sim.EMSP, rate, seconds int) {
	ctx := context.Background()
	n := rate * seconds
	answered := make([]time.Time, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	start := time.Now()
	late := 0
	for i := range n {
		due := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		select {
		case sem <- struct{}{}:
		default:
			late++ // the hub answers slower than the offered rate: wait for a slot
			sem <- struct{}{}
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := h.patch(ctx, i); err != nil {
				errs <- err
				return
			}
			answered[i] = time.Now()
		}()
	}
	wg.Wait()
	sent := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	// Bounded drain: until every eMSP has the last state of every EVSE.
	drain := time.Now()
	final := map[string]time.Time{}
	for i := range n {
		loc, evse, lu := patchAt(i)
		final[loc+"/"+evse] = lu
	}
	for time.Since(drain) < 30*time.Second && !allHave(emsps, final) {
		time.Sleep(50 * time.Millisecond)
	}
	var lags []time.Duration
	left := 0
	per := make([]map[string][]arrival, len(emsps))
	for j, e := range emsps {
		per[j] = arrivals(e)
	}
	for i := range n {
		loc, evse, lu := patchAt(i)
		var last time.Time
		ok := true
		for j := range emsps {
			at, got := has(per[j][loc+"/"+evse], lu)
			if !got {
				ok = false
				break
			}
			last = maxTime(last, at)
		}
		if !ok {
			left++
			continue
		}
		lags = append(lags, max(0, last.Sub(answered[i])))
	}
	slices.Sort(lags)
	p50, p99 := pct(lags, 0.50), pct(lags, 0.99)
	b.ReportMetric(float64(rate), "offered/s")
	b.ReportMetric(float64(n)/sent.Seconds(), "sent/s")
	b.ReportMetric(p50.Seconds(), "lag-p50-s")
	b.ReportMetric(p99.Seconds(), "lag-p99-s")
	b.ReportMetric(float64(left), "left-behind")
	b.Logf("delivery-lag: %d PATCHes offered at %d/s (sent in %.1fs, %d waited for a slot): lag p50 %v p99 %v max %v; %d left behind after a 30 s drain",
		n, rate, sent.Seconds(), late, p50, p99, pct(lags, 1), left)
}

func deliveryBacklog(b *testing.B, h *benchHub, emsps []*sim.EMSP, n int) {
	ctx := context.Background()
	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := h.patch(ctx, i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	ingested := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	final := map[string]time.Time{}
	for i := range n {
		loc, evse, lu := patchAt(i)
		final[loc+"/"+evse] = lu
	}
	for !allHave(emsps, final) {
		if time.Since(start) > 10*time.Minute {
			b.Fatal("the backlog was not delivered in 10 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	total := time.Since(start)
	b.ReportMetric(float64(n)/ingested.Seconds(), "ingest/s")
	b.ReportMetric(float64(n)/total.Seconds(), "delivered-to-all/s")
	b.Logf("delivery-backlog: %d PATCHes ingested in %.1fs (%.0f/s); every eMSP had every final state after %.1fs: %.0f changes/s fully delivered to %d eMSPs",
		n, ingested.Seconds(), float64(n)/ingested.Seconds(), total.Seconds(), float64(n)/total.Seconds(), len(emsps))
}

// allHave reports whether every eMSP holds each EVSE's final last_updated.
func allHave(emsps []*sim.EMSP, final map[string]time.Time) bool {
	for _, e := range emsps {
		for k, lu := range final {
			loc, uid, _ := strings.Cut(k, "/")
			l := e.Location("NL", "BCP", loc)
			if !evseAt(l, uid, lu) {
				return false
			}
		}
	}
	return true
}

func evseAt(l map[string]any, uid string, lu time.Time) bool {
	evses, _ := l["evses"].([]any)
	for _, x := range evses {
		ev, _ := x.(map[string]any)
		if ev["uid"] != uid {
			continue
		}
		s, _ := ev["last_updated"].(string)
		t, err := time.Parse(time.RFC3339Nano, s)
		return err == nil && !t.Before(lu)
	}
	return false
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func pct(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(float64(len(ds))*q))]
}
