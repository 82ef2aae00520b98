package bench

import (
	"context"
	"net/http"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
)

// BenchmarkTrafficRecording measures what recording every OCPI exchange
// costs the ingest, on one hub in the evse-status-patch world (a CPO and 10
// eMSPs receiving the broadcast, so every PATCH is recorded once inbound and
// its 10 pushes once each outbound as they are delivered). The PATCHes
// alternate, in rounds, between recording off and on (the recorder's
// switch, flipped by each round's first request: background deliveries are
// recorded while a round with recording runs), and the benchmark reports
// both throughputs and the loss (1 − on ÷ off), in percent. Two hubs, one
// recording and one not, differ by ±20 % between themselves with recording
// off on both: one hub is the only fair comparison.
//
//	go test -run '^$' -bench TrafficRecording -benchtime 3000x ./bench/
func BenchmarkTrafficRecording(b *testing.B) {
	engines(b, func(b *testing.B, engine store.Engine) {
		h := startHub(b, engine)
		seedStatusPatch(b, h)
		switched := func(t Target, on bool) Target {
			newReq := t.NewRequest
			t.NewRequest = func(ctx context.Context) (*http.Request, error) {
				h.Traffic.SetRecording(on)
				return newReq(ctx)
			}
			return t
		}
		patch := statusPatchTarget(h)
		cfg := Config{Workers: workers(), Requests: b.N, Client: h.client}
		b.ResetTimer()
		base, res, err := Compare(context.Background(), cfg, switched(patch, false), switched(patch, true), 6)
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
		b.ReportMetric(float64(h.Traffic.Dropped()), "dropped")
		b.ReportMetric(float64(h.Traffic.Recorded()), "recorded")
	})
}
