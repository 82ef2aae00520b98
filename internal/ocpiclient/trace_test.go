package ocpiclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

func TestParseTraceParent(t *testing.T) {
	t.Parallel()
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, tc := range []struct{ in, want string }{
		{"00-" + id + "-00f067aa0ba902b7-01", id},
		{"00-" + id + "-00f067aa0ba902b7-00", id},
		{"01-" + id + "-00f067aa0ba902b7-01-extra", id},
		{"00-" + id + "-00f067aa0ba902b7-01-extra", ""},
		{"ff-" + id + "-00f067aa0ba902b7-01", ""},
		{"00-" + strings.ToUpper(id) + "-00f067aa0ba902b7-01", ""},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", ""},
		{"00-" + id + "-0000000000000000-01", ""},
		{"garbage", ""},
		{"", ""},
	} {
		if got := ocpiclient.ParseTraceParent(tc.in); got != tc.want {
			t.Errorf("ParseTraceParent(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestTraceParentPropagated: a call carries the trace id of its context
// with a new span id; without one, the trace id of its correlation id, so
// that calls of one chain made later from jobs share the trace.
func TestTraceParentPropagated(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("traceparent"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status_code":1000,"timestamp":"2026-01-01T00:00:00Z"}`))
	}))
	defer srv.Close()
	c := ocpiclient.New(nil)
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := ocpiclient.WithTraceID(context.Background(), id)
	for _, cx := range []context.Context{ctx, ctx, context.Background()} {
		if _, err := c.Do(cx, ocpiclient.Request{Method: http.MethodGet, URL: srv.URL, CorrelationID: "chain-1", MaxAttempts: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 3 {
		t.Fatalf("%d calls", len(got))
	}
	for i, tp := range got[:2] {
		if ocpiclient.ParseTraceParent(tp) != id {
			t.Errorf("call %d: traceparent %q", i, tp)
		}
	}
	if got[0] == got[1] {
		t.Errorf("two calls share a span id: %q", got[0])
	}
	if ocpiclient.ParseTraceParent(got[2]) != ocpiclient.TraceIDFor("chain-1") {
		t.Errorf("a call without a trace: %q, want the correlation id's trace %s", got[2], ocpiclient.TraceIDFor("chain-1"))
	}
}
