package traffic

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestWriterYieldsOnlyWhileKeepingUp: the writer gives its CPU away after a
// capture only while fewer than 1/yieldBelow of the buffer wait; behind, it
// prepares one capture after another, and every capture is stored.
func TestWriterYieldsOnlyWhileKeepingUp(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		r := New(db, clock.NewFake(at), nil, nil, Config{BufferSize: 64})
		var yields atomic.Int64
		r.yield = func() { yields.Add(1) }
		record := func(n int) {
			for range n {
				r.Record(&Capture{At: at, Direction: In, Method: http.MethodGet, URL: "https://hub/ocpi/2.2.1/emsp/locations", HTTPStatus: 200,
					ResponseHeader: http.Header{"Content-Type": {"application/json"}}, ResponseBody: []byte(`{"status_code":1000}`)})
			}
		}
		flush := func() {
			t.Helper()
			if err := r.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		record(64) // the buffer full before the writer runs
		r.Start()
		t.Cleanup(func() { _ = r.Close(context.Background()) })
		flush()
		// The writer yields after the captures that leave fewer than 8 of
		// the 64 waiting: the last 8.
		if got := yields.Load(); got != 64/yieldBelow || r.Recorded() != 64 || r.Dropped() != 0 {
			t.Fatalf("behind by a full buffer: %d yields, %d recorded, %d dropped; want %d, 64, 0", got, r.Recorded(), r.Dropped(), 64/yieldBelow)
		}
		record(1)
		flush()
		if got := yields.Load(); got != 64/yieldBelow+1 || r.Recorded() != 65 {
			t.Fatalf("keeping up: %d yields, %d recorded; want a yield after the capture", got, r.Recorded())
		}
	})
}
