package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// The directory at a million EVSEs (see README.md): 500 000 locations of two
// EVSEs each, seeded straight into the tables, and the directory page at
// offset 450 000 asked for by the Link cursor (keyset), by the cursor with a
// date_from, and by offset alone, each while a CPO streams EVSE status
// PATCHes through the API at a fixed rate. Opt-in: OCPIHUB_BENCH_1M=1.
//
//	OCPIHUB_BENCH_1M=1 go test -run '^$' -bench Directory1M -benchtime 2000x -timeout 30m ./bench/
//
// dirLocations is the directory's size (OCPIHUB_BENCH_DIR_LOCATIONS for a
// quick run of the harness at a smaller scale); pages are asked for at 90 %
// of it.
var dirLocations = func() int {
	if n, err := strconv.Atoi(os.Getenv("OCPIHUB_BENCH_DIR_LOCATIONS")); err == nil && n >= 10_000 {
		return n / 1000 * 1000
	}
	return 500_000
}()

const (
	// Targets of the scenarios (issue 17), reported as ratios.
	dirKeysetTargetP99 = 10 * time.Millisecond
	dirOffsetTargetP99 = 50 * time.Millisecond
)

// dirBase is the last_updated of the first seeded location; the others
// follow a second apart.
var dirBase = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// patchRate is the PATCH stream's rate (OCPIHUB_BENCH_PATCH_RATE, default
// 200 per second).
func patchRate() int {
	if n, err := strconv.Atoi(os.Getenv("OCPIHUB_BENCH_PATCH_RATE")); err == nil && n >= 0 {
		return n
	}
	return 200
}

func BenchmarkDirectory1M(b *testing.B) {
	if os.Getenv("OCPIHUB_BENCH_1M") == "" {
		b.Skip("set OCPIHUB_BENCH_1M=1 to run the directory at a million EVSEs")
	}
	engines(b, func(b *testing.B, engine store.Engine) {
		h := startHub(b, engine)
		t0 := time.Now()
		seedMillion(b, h)
		seeded := time.Since(t0)
		// The first list cuts the position index: once per process.
		t0 = time.Now()
		dirOffset := dirLocations / 10 * 9
		keyset := h.linkAt(b, fmt.Sprintf("offset=%d&limit=100", dirOffset-100))
		indexed := time.Since(t0)
		from := ocpi.NewDateTime(dirBase.Add(time.Duration(dirLocations/5) * time.Second)).String()
		keysetDate := h.linkAt(b, fmt.Sprintf("offset=%d&limit=100&date_from=%s", dirOffset-dirLocations/5-100, from))
		b.Logf("%s: seeded %d locations (%d EVSEs) in %v; first page (index cut) %v", engine, dirLocations, 2*dirLocations, seeded.Round(time.Millisecond), indexed.Round(time.Millisecond))
		for _, s := range []struct {
			name, path string
			target     time.Duration
		}{
			{"keyset", keyset, dirKeysetTargetP99},
			{"keyset-date-from", keysetDate, dirKeysetTargetP99},
			{"offset", fmt.Sprintf("/ocpi/2.2.1/emsp/locations?offset=%d&limit=100", dirOffset), dirOffsetTargetP99},
			{"offset-date-from", fmt.Sprintf("/ocpi/2.2.1/emsp/locations?offset=%d&limit=100&date_from=%s", dirOffset-100_000, from), dirOffsetTargetP99},
		} {
			b.Run(s.name, func(b *testing.B) {
				stream := h.patchStream(b, patchRate())
				cfg := Config{Workers: workers(), Requests: b.N, Client: h.client}
				page := h.get(s.path, h.cpoToken)
				profiled := profileTarget(b, &cfg, page)
				b.ResetTimer()
				base, res, err := Compare(context.Background(), cfg, h.noop(), page, 4)
				b.StopTimer()
				sent, failed, elapsed := stream.stop()
				if err != nil {
					b.Fatal(err)
				}
				profiled(res)
				reportVsNoop(b, base, res)
				// Below 1 the target holds.
				b.ReportMetric(float64(res.P99)/float64(s.target), "p99/target")
				b.ReportMetric(float64(sent)/elapsed.Seconds(), "patch/s")
				b.ReportMetric(float64(failed), "patch-failed")
				rss, hwm := memory()
				b.ReportMetric(rss, "rss-MB")
				b.ReportMetric(hwm, "peak-rss-MB")
			})
		}
	})
}

// linkAt returns the Link path of the page after the one query asks for, as
// a client paging through the directory holds it.
func (h *benchHub) linkAt(b testing.TB, query string) string {
	b.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, h.PublicURL()+"/ocpi/2.2.1/emsp/locations?"+query, nil)
	req.Header.Set("Authorization", ocpi.EncodeToken(h.cpoToken, true))
	resp, err := h.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	next := ocpi.NextLink(resp.Header)
	if resp.StatusCode != http.StatusOK || !strings.Contains(next, "cursor=") {
		b.Fatalf("HTTP %d, no Link with a cursor: %q", resp.StatusCode, next)
	}
	return strings.TrimPrefix(next, h.PublicURL())
}

// stream is a running PATCH stream.
type stream struct {
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	sent, failed atomic.Int64
	start        time.Time
}

func (s *stream) stop() (sent, failed int64, elapsed time.Duration) {
	s.cancel()
	s.wg.Wait()
	return s.sent.Load(), s.failed.Load(), time.Since(s.start)
}

// patchSeq numbers the PATCHes of every stream, so last_updated only grows.
var patchSeq atomic.Int64

// patchStream PATCHes the status of a random seeded EVSE rate times a
// second through the API (each later than every seeded location, so it
// moves the location to the end of the directory's order), until stopped.
func (h *benchHub) patchStream(b *testing.B, rate int) *stream {
	ctx, cancel := context.WithCancel(context.Background())
	s := &stream{cancel: cancel, start: time.Now()}
	if rate == 0 {
		return s
	}
	client := NewClient(16)
	statuses := []string{"CHARGING", "AVAILABLE", "BLOCKED", "RESERVED"}
	after := dirBase.Add(time.Duration(dirLocations) * time.Second)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	sem := make(chan struct{}, 16) // PATCHes in flight at most; a slower hub drops ticks
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			select {
			case sem <- struct{}{}:
			default:
				continue
			}
			i := patchSeq.Add(1)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer func() { <-sem }()
				path := fmt.Sprintf("/ocpi/2.2.1/cpo/locations/NL/BCP/D%06d/E%d", rand.IntN(dirLocations), 1+i%2)
				body := fmt.Sprintf(`{"status":%q,"last_updated":%q}`, statuses[i%4], ocpi.NewDateTime(after.Add(time.Duration(i)*time.Millisecond)))
				req, err := http.NewRequestWithContext(context.Background(), http.MethodPatch, h.PublicURL()+path, strings.NewReader(body))
				if err != nil {
					s.failed.Add(1)
					return
				}
				req.Header.Set("Authorization", ocpi.EncodeToken(h.cpoToken, true))
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					s.failed.Add(1)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					s.failed.Add(1)
					return
				}
				s.sent.Add(1)
			}()
		}
	}()
	return s
}

// seedMillion puts 500 000 locations of the CPO (NL/BCP), two EVSEs each,
// straight into locations and evses: COPY on PostgreSQL, multi-row INSERTs
// in large transactions on SQLite.
func seedMillion(b *testing.B, h *benchHub) {
	ctx := context.Background()
	loc := func(i int) []any {
		id := fmt.Sprintf("D%06d", i)
		lu := dirBase.Add(time.Duration(i) * time.Second)
		return []any{int64(i + 1), "NL", "BCP", id, true, int64(180000000 + i%100000*100), int64(738567000), 2, lu.UnixMicro(), string(benchLocation("BCP", id, lu, i))}
	}
	evse := func(i, e int) []any {
		lu := dirBase.Add(time.Duration(i) * time.Second)
		return []any{int64(i + 1), fmt.Sprintf("E%d", e), "", "AVAILABLE", int64(22080), ",IEC_62196_T2,", lu.UnixMicro()}
	}
	locCols := []string{"pk", "country_code", "party_id", "id", "publish", "lat_e7", "lon_e7", "evses_active", "last_updated", "body"}
	evseCols := []string{"location_pk", "uid", "evse_id", "status", "max_power_w", "connector_types", "last_updated"}
	if h.DB.Engine() == store.Postgres {
		pool := h.DB.Pool()
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"locations"}, locCols, pgx.CopyFromSlice(dirLocations, func(i int) ([]any, error) { return loc(i), nil })); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"evses"}, evseCols, pgx.CopyFromSlice(2*dirLocations, func(j int) ([]any, error) { return evse(j/2, 1+j%2), nil })); err != nil {
			b.Fatal(err)
		}
		for _, q := range []string{
			"SELECT setval(pg_get_serial_sequence('locations', 'pk'), (SELECT MAX(pk) FROM locations))",
			"VACUUM ANALYZE locations", "VACUUM ANALYZE evses",
		} {
			if _, err := pool.Exec(ctx, q); err != nil {
				b.Fatal(q, err)
			}
		}
		return
	}
	insert := func(ctx context.Context, tx *store.Tx, table string, cols []string, rows [][]any) error {
		args := make([]any, 0, len(rows)*len(cols))
		for _, row := range rows {
			args = append(args, row...)
		}
		_, err := tx.Exec(ctx, "INSERT INTO "+table+" ("+strings.Join(cols, ", ")+") VALUES "+store.Values(len(rows), len(cols)), args...)
		return err
	}
	const perTx, perStmt = 10_000, 1_000
	for start := 0; start < dirLocations; start += perTx {
		err := h.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			for s := start; s < start+perTx; s += perStmt {
				locs := make([][]any, 0, perStmt)
				evses := make([][]any, 0, 2*perStmt)
				for i := s; i < s+perStmt; i++ {
					locs = append(locs, loc(i))
					evses = append(evses, evse(i, 1), evse(i, 2))
				}
				if err := insert(ctx, tx, "locations", locCols, locs); err != nil {
					return err
				}
				for k := 0; k < len(evses); k += perStmt {
					if err := insert(ctx, tx, "evses", evseCols, evses[k:k+perStmt]); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := h.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "ANALYZE")
		return err
	}); err != nil {
		b.Fatal(err)
	}
}

// memory returns the process's resident set and its peak, in MB
// (/proc/self/status; 0 where there is none).
func memory() (rss, peak float64) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			rss = kb / 1024
		case "VmHWM":
			peak = kb / 1024
		}
	}
	return rss, peak
}
