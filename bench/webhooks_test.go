package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ratelimit"
	"github.com/ocpihub/ocpihub/internal/sim/webhooksim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// BenchmarkWebhookFanout emits 1,000 events, each to 20 subscriptions, on a
// hub with the production settings (the delivery engine's defaults), and measures
// the delivery latency (event committed → request at the receiver) at the
// healthy receivers. "all-healthy" has 20 healthy receivers; "one-dead" has
// 19 and one that never answers (every attempt runs into the 15 s timeout).
// The dead one must not slow the others: compare the two.
//
//	go test -run '^$' -bench WebhookFanout -benchtime 1x ./bench/
func BenchmarkWebhookFanout(b *testing.B) {
	for _, engine := range storetest.Engines() {
		for _, dead := range []int{0, 1} {
			name := "all-healthy"
			if dead > 0 {
				name = "one-dead"
			}
			b.Run(string(engine)+"/"+name, func(b *testing.B) {
				var last fanout
				for range b.N {
					last = runFanout(b, engine, fanoutEvents(), 20, dead)
				}
				b.ReportMetric(0, "ns/op")
				b.ReportMetric(last.deliveriesPerSec, "deliveries/s")
				b.ReportMetric(ms(last.p50), "p50-ms")
				b.ReportMetric(ms(last.p99), "p99-ms")
				b.ReportMetric(ms(last.max), "max-ms")
				b.ReportMetric(ms(last.emitP50), "emit-p50-ms")
				b.ReportMetric(last.total.Seconds(), "total-s")
			})
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type fanout struct {
	p50, p99, max, emitP50, total time.Duration
	deliveriesPerSec              float64
}

func runFanout(b *testing.B, engine store.Engine, events, subscribers, dead int) fanout {
	b.Helper()
	b.StopTimer()
	ctx := context.Background()
	cfg := app.Defaults()
	cfg.DB = storetest.URL(b, engine)
	if engine == store.Postgres && os.Getenv("OCPIHUB_BENCH_PG_CONNS") != "" {
		cfg.DB += "&pool_max_conns=" + os.Getenv("OCPIHUB_BENCH_PG_CONNS")
	}
	cfg.Addr = "127.0.0.1:0"
	cfg.AdminToken = hubtest.AdminToken
	cfg.DevMode = true // receivers on loopback
	cfg.RateLimit = ratelimit.Limits{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	a, err := app.New(ctx, cfg, app.Options{Logger: hubtest.Logger(), Listener: l})
	if err != nil {
		b.Fatal(err)
	}
	if err := a.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		a.Close(cctx)
	}()

	var healthy []*webhooksim.Receiver
	for i := range subscribers {
		r, err := webhooksim.Start()
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		if i < dead {
			r.SetStatus(0) // never answers
		} else {
			healthy = append(healthy, r)
		}
		if _, err := a.Webhooks.Create(ctx, webhook.Owner{}, webhook.Input{URL: ptr(r.URL()), Events: []string{event.LocationUpdated}}); err != nil {
			b.Fatal(err)
		}
	}

	// Emit from 4 goroutines, like concurrent requests of CPOs would.
	emitted := make([]time.Time, events)
	emitTook := make([]time.Duration, events)
	b.StartTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := w; seq < events; seq += 4 {
				t0 := time.Now()
				err := a.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
					return a.Events.Emit(ctx, tx, event.Event{Name: event.LocationUpdated, Public: true,
						Data: map[string]any{"location_id": fmt.Sprintf("LOC-%04d", seq), "seq": seq}})
				})
				emitted[seq] = time.Now()
				emitTook[seq] = emitted[seq].Sub(t0)
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for _, r := range healthy {
		if _, err := r.WaitFor(wctx, events); err != nil {
			b.Fatal(err)
		}
	}
	total := time.Since(start)
	b.StopTimer()

	var lat []time.Duration
	for _, r := range healthy {
		ds := r.Deliveries()
		prev := -1
		for _, d := range ds[:events] {
			var v struct{ Seq int }
			if err := json.Unmarshal(d.Payload.Data, &v); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, d.At.Sub(emitted[v.Seq]))
			_ = prev
			prev = v.Seq
		}
	}
	slices.Sort(lat)
	slices.Sort(emitTook)
	return fanout{
		p50: lat[len(lat)/2], p99: lat[len(lat)*99/100], max: lat[len(lat)-1], emitP50: emitTook[len(emitTook)/2],
		total: total, deliveriesPerSec: float64(len(lat)) / total.Seconds(),
	}
}

func ptr[T any](v T) *T { return &v }

// fanoutEvents is the number of events: OCPIHUB_BENCH_EVENTS, default 1000.
func fanoutEvents() int {
	if n, err := strconv.Atoi(os.Getenv("OCPIHUB_BENCH_EVENTS")); err == nil && n > 0 {
		return n
	}
	return 1000
}
