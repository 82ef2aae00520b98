package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ocpihub/ocpihub/internal/ids"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// BenchmarkIDOrder measures what the order of the hub's own ids costs a
// table keyed by them once it is large: relayed commands' rows, keyed by the
// command's id, written into the real commands table (its key and five
// indexes) by 8 writers through group commit, as the relay writes them, until
// it holds OCPIHUB_BENCH_ID_ROWS rows (300 000 by default). It runs twice in
// one run, each time in a new database: with random (version 4) UUIDs, as
// the hub made them before, and with ids.New's time-ordered ones. It reports
// each one's rows a second over the last third of the rows (the table at
// its size) and the ratio of the two. The correlation id stays random in
// both: it is the eMSP's.
//
//	go test -run '^$' -bench 'IDOrder' -benchtime 1x -timeout 30m ./bench/
func BenchmarkIDOrder(b *testing.B) {
	rows := envInt("OCPIHUB_BENCH_ID_ROWS", 300_000)
	engines(b, func(b *testing.B, engine store.Engine) {
		for range b.N {
			random := insertCommands(b, engine, rows, uuid.NewString)
			ordered := insertCommands(b, engine, rows, ids.New)
			b.ReportMetric(random, "random-rows/s")
			b.ReportMetric(ordered, "ordered-rows/s")
			b.ReportMetric(ordered/random, "ordered÷random")
		}
	})
}

// insertCommands writes rows commands with ids from newID into a new
// database and returns the rate of the last third.
func insertCommands(b *testing.B, engine store.Engine, rows int, newID func() string) float64 {
	b.Helper()
	db := storetest.Open(b, engine)
	ctx := context.Background()
	request := `{"authorization_reference":"AUTH-1","connector_id":"1","evse_uid":"E1","location_id":"LOC1",` +
		`"response_url":"https://emsp.example.com/ocpi/2.2.1/emsp/commands/START_SESSION/%d","token":{"contract_id":"IN-EM1-C1",` +
		`"country_code":"IN","issuer":"EM1","last_updated":"2026-11-28T06:00:00Z","party_id":"EM1","type":"APP_USER",` +
		`"uid":"TOK1","valid":true,"whitelist":"NEVER"}}`
	var next atomic.Int64
	var tailFrom atomic.Int64 // UnixNano when the last third began
	tail := int64(rows - rows/3)
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				n := next.Add(1)
				if n > int64(rows) || failed.Load() != nil {
					return
				}
				if n == tail {
					tailFrom.Store(time.Now().UnixNano())
				}
				id, now := newID(), time.Now().UnixMicro()
				body := fmt.Sprintf(request, n)
				err := db.InShared(ctx, func(ctx context.Context, tx *store.Tx) error {
					_, err := tx.Exec(ctx, `INSERT INTO commands (id, module, command, state, requester_platform_id,
						requester_country_code, requester_party_id, response_url, cpo_country_code, cpo_party_id, location_id,
						evse_uid, connector_id, authorization_reference, request, forwarded, deadline, correlation_id,
						created_at, updated_at)
						VALUES ($1, 'commands', 'START_SESSION', 'forwarding', 7, 'IN', 'EM1', $2, 'IN', 'CP1', 'LOC1', 'E1', '1',
						'AUTH-1', $3, $3, $4, $5, $6, $6)`,
						id, "https://emsp.example.com/ocpi/2.2.1/emsp/commands/START_SESSION/"+id, body, now+30_000_000, uuid.NewString(), now)
					return err
				})
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	return float64(int64(rows)-tail+1) / time.Since(time.Unix(0, tailFrom.Load())).Seconds()
}
