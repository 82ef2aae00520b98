package bench

import (
	"context"
	"testing"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// BenchmarkTrafficRecording measures what recording every OCPI exchange
// costs the ingest: two hubs, one recording (the default) and one with
// --traffic=false, each with the evse-status-patch world (a CPO and 10
// eMSPs receiving the broadcast, so every PATCH is recorded once inbound and
// its 10 pushes once each outbound as they are delivered). The PATCHes go
// to both alternately, in rounds, and the benchmark reports both
// throughputs and the loss (1 − on ÷ off), in percent.
//
//	go test -run '^$' -bench TrafficRecording -benchtime 3000x ./bench/
func BenchmarkTrafficRecording(b *testing.B) {
	for _, engine := range storetest.Engines() {
		b.Run(string(engine), func(b *testing.B) {
			on := startHub(b, engine)
			off := startHubWith(b, engine, func(c *app.Config) { c.TrafficOff = true })
			seedStatusPatch(b, on)
			seedStatusPatch(b, off)
			cfg := Config{Workers: workers(), Requests: b.N, Client: on.client}
			b.ResetTimer()
			base, res, err := Compare(context.Background(), cfg, statusPatchTarget(off), statusPatchTarget(on), 4)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(res.RPS, "on-req/s")
			b.ReportMetric(base.RPS, "off-req/s")
			b.ReportMetric(float64(res.P50.Microseconds()), "on-p50-µs")
			b.ReportMetric(float64(base.P50.Microseconds()), "off-p50-µs")
			b.ReportMetric(100*(1-res.RPS/base.RPS), "loss-%")
			b.ReportMetric(float64(on.Traffic.Dropped()), "dropped")
			b.ReportMetric(float64(on.Traffic.Recorded()), "recorded")
		})
	}
}
