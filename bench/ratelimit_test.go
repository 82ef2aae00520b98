package bench

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ratelimit"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// BenchmarkRateLimit measures one rate-limit check (the three windows of a
// token) from 8 goroutines over 100 tokens: in process on SQLite, the shared
// upsert on PostgreSQL.
//
//	go test -run '^$' -bench RateLimit ./bench/
func BenchmarkRateLimit(b *testing.B) {
	engines(b, func(b *testing.B, engine store.Engine) {
		db := storetest.Open(b, engine)
		l := ratelimit.New(db, clock.Real{}, ratelimit.Defaults())
		limits := ratelimit.Limits{PerSecond: 1_000_000, PerMinute: 1_000_000, PerHour: 1_000_000}
		var next atomic.Int64
		b.SetParallelism(4) // 8 goroutines on 2 cores
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				key := "platform:" + strconv.FormatInt(next.Add(1)%100, 10)
				d, err := l.Allow(context.Background(), key, limits)
				if err != nil || !d.Allowed {
					b.Errorf("check: %+v %v", d, err)
					return
				}
			}
		})
	})
}
