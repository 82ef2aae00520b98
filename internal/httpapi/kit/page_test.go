package kit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// TestPagesFromSharedBuffers: pages written at once, large and small, from
// the pooled buffers are each whole: their own documents, in order, in a
// valid envelope, nothing of another page's.
func TestPagesFromSharedBuffers(t *testing.T) {
	t.Parallel()
	k := &Kit{Clock: clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), Base: &url.URL{Scheme: "https", Host: "hub.example"}}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for round := range 50 {
				n := (w*7 + round*13) % 120
				items := make([]json.RawMessage, n)
				for i := range items {
					items[i] = json.RawMessage(fmt.Sprintf(`{"id":"W%d-R%d-%d","name":%q}`, w, round, i, strings.Repeat("x", (i*37)%900)))
				}
				r := httptest.NewRequest(http.MethodGet, "/ocpi/2.2.1/emsp/locations?limit=120", nil)
				rec := httptest.NewRecorder()
				if err := k.PageRaw(rec, r, ocpi.PageRequest{Limit: 120}, items, ocpi.Page{Total: int64(n)}); err != nil {
					t.Error(err)
					return
				}
				var env struct {
					Data []struct {
						ID string `json:"id"`
					} `json:"data"`
					StatusCode int `json:"status_code"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.StatusCode != 1000 || len(env.Data) != n {
					t.Errorf("worker %d round %d: %d documents, status %d, %v; want %d", w, round, len(env.Data), env.StatusCode, err, n)
					return
				}
				for i, d := range env.Data {
					if want := fmt.Sprintf("W%d-R%d-%d", w, round, i); d.ID != want {
						t.Errorf("worker %d round %d: document %d is %q, want %q", w, round, i, d.ID, want)
						return
					}
				}
				if cl := rec.Header().Get("Content-Length"); cl != fmt.Sprint(rec.Body.Len()) {
					t.Errorf("Content-Length %s for %d bytes", cl, rec.Body.Len())
				}
			}
		})
	}
	wg.Wait()
}
