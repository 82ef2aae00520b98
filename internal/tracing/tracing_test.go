package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

// collector is an OTLP/HTTP endpoint on loopback that decodes what it is
// sent; status, when set, answers each export instead of 200.
type collector struct {
	srv    *httptest.Server
	mu     sync.Mutex
	spans  []SpanJSON
	header []http.Header
	status func(n int) int
	posts  atomic.Int64
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(c.posts.Add(1))
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("export: %s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		if c.status != nil {
			if st := c.status(n); st != http.StatusOK {
				w.WriteHeader(st)
				return
			}
		}
		var req ExportRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("decode export: %v", err)
		}
		c.mu.Lock()
		c.header = append(c.header, r.Header.Clone())
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		c.mu.Unlock()
		w.Write([]byte("{}"))
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) Spans() []SpanJSON {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]SpanJSON(nil), c.spans...)
}

// TestHooksOffAllocateNothing: with tracing off the hooks placed in the
// store, the HTTP layer and the job queue cost a context lookup, and no
// span (nor anything else) is allocated. (Not parallel: AllocsPerRun
// counts the whole process's allocations.)
func TestHooksOffAllocateNothing(t *testing.T) {
	ctx := context.WithValue(context.Background(), struct{ k int }{1}, "request values")
	var err error
	allocs := testing.AllocsPerRun(1000, func() {
		// store.InTx
		c, span := Start(ctx, "transaction", Client)
		span.SetDBSystem("sqlite")
		// httpapi's observe and authentication
		NoteRoute(c, "PATCH /ocpi/2.2.1/receiver/locations/{cc}/{pid}/{id}")
		NotePartner(c, "CPO One")
		span.EndErr(&err)
	})
	if allocs != 0 {
		t.Errorf("the hooks allocate %v times per call with tracing off", allocs)
	}
	var off *Tracer
	h := http.NotFoundHandler()
	if got := off.Handler(h); got == nil || http.Handler(got) == nil {
		t.Error("Handler")
	}
	base := http.DefaultTransport
	if off.Transport(base) != base || off.JobMiddleware() != nil || off.Dropped() != 0 || off.Close(ctx) != nil {
		t.Error("a nil Tracer must hand back what it is given")
	}
	rec := httptest.NewRecorder()
	off.Handler(h).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("status %d", rec.Code)
	}
}

func newTestTracer(t *testing.T, url string, cfg Config) (*Tracer, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	cfg.Endpoint = url
	tr := New(cfg, nil, nil, reg)
	tr.Start()
	t.Cleanup(func() { tr.Close(context.Background()) })
	return tr, reg
}

// TestExportEncoding: spans reach the collector in the OTLP/HTTP JSON
// encoding, with the configured headers, parents and attributes.
func TestExportEncoding(t *testing.T) {
	t.Parallel()
	col := newCollector(t)
	h := http.Header{}
	h.Set("Api-Key", "k3y")
	tr, reg := newTestTracer(t, col.srv.URL+"/", Config{Header: h, ServiceName: "hub-test"})
	trace, _ := parseTraceID("4bf92f3577b34da6a3ce929d0e0e4736")
	ctx, root := tr.root(context.Background(), trace, SpanID{}, "GET /x", Server)
	_, child := Start(ctx, "transaction", Client)
	child.SetDBSystem("postgres")
	child.SetInt("n", 42)
	child.EndErr(ptr(errors.New("boom")))
	root.End()
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := col.Spans()
	if len(spans) != 2 {
		t.Fatalf("got %d spans", len(spans))
	}
	c, r := spans[0], spans[1]
	want := SpanJSON{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: r.SpanID, Name: "GET /x", Kind: Server,
		StartTimeUnixNano: r.StartTimeUnixNano, EndTimeUnixNano: r.EndTimeUnixNano}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("root span (-want +got):\n%s", diff)
	}
	if c.TraceID != r.TraceID || c.ParentSpanID != r.SpanID || c.Kind != Client || len(c.SpanID) != 16 ||
		c.Attr("db.system.name") != "postgresql" || c.Attr("n") != "42" || c.Status != (Status{Code: 2, Message: "boom"}) {
		t.Errorf("child span: %+v", c)
	}
	if r.StartTimeUnixNano > r.EndTimeUnixNano || len(r.StartTimeUnixNano) < 19 {
		t.Errorf("times %s..%s", r.StartTimeUnixNano, r.EndTimeUnixNano)
	}
	if got := col.header[0].Get("Api-Key"); got != "k3y" {
		t.Errorf("Api-Key %q", got)
	}
	if got := testutil.ToFloat64(tr.exp.mExported); got != 2 || tr.Exported() != 2 {
		t.Errorf("exported %v", got)
	}
	_ = reg
}

func ptr[T any](v T) *T { return &v }

// TestExportRetries: a collector answering 503 or 429 gets the batch again
// after a backoff; one that refuses it otherwise, or is down, costs the
// batch, counted.
func TestExportRetries(t *testing.T) {
	t.Parallel()
	col := newCollector(t)
	col.status = func(n int) int {
		switch n {
		case 1:
			return http.StatusServiceUnavailable
		case 2:
			return http.StatusTooManyRequests
		}
		return http.StatusOK
	}
	tr, _ := newTestTracer(t, col.srv.URL, Config{RetryBackoff: time.Millisecond})
	_, s := tr.root(context.Background(), newTraceID(), SpanID{}, "x", Internal)
	s.End()
	tr.Flush(context.Background())
	if len(col.Spans()) != 1 || col.posts.Load() != 3 || tr.Dropped() != 0 {
		t.Errorf("spans %d after %d posts, %d dropped", len(col.Spans()), col.posts.Load(), tr.Dropped())
	}

	bad := newCollector(t)
	bad.status = func(int) int { return http.StatusBadRequest }
	tr2, reg := newTestTracer(t, bad.srv.URL, Config{RetryBackoff: time.Millisecond})
	_, s = tr2.root(context.Background(), newTraceID(), SpanID{}, "x", Internal)
	s.End()
	tr2.Flush(context.Background())
	if bad.posts.Load() != 1 || tr2.Dropped() != 1 {
		t.Errorf("a refused batch: %d posts, %d dropped", bad.posts.Load(), tr2.Dropped())
	}
	if n := testutil.ToFloat64(tr2.exp.mDropped.WithLabelValues("export_failed")); n != 1 {
		t.Errorf("dropped metric: %v", n)
	}
	if n, _ := testutil.GatherAndCount(reg, "ocpihub_otel_spans_dropped_total"); n != 2 {
		t.Errorf("dropped metric series: %d, want both reasons", n)
	}

	down := newCollector(t)
	down.srv.Close()
	tr3, _ := newTestTracer(t, down.srv.URL, Config{RetryBackoff: time.Millisecond, MaxRetries: 2})
	_, s = tr3.root(context.Background(), newTraceID(), SpanID{}, "x", Internal)
	s.End()
	tr3.Flush(context.Background())
	if tr3.Dropped() != 1 {
		t.Errorf("collector down: %d dropped", tr3.Dropped())
	}
}

// TestFullQueueDrops: ending a span never waits for the exporter.
func TestFullQueueDrops(t *testing.T) {
	t.Parallel()
	tr := New(Config{Endpoint: "http://127.0.0.1:9", QueueSize: 2}, nil, nil, nil)
	for range 5 {
		_, s := tr.root(context.Background(), newTraceID(), SpanID{}, "x", Internal)
		s.End()
	}
	if tr.Dropped() != 3 {
		t.Errorf("dropped %d", tr.Dropped())
	}
}

// TestSampling: a ratio records about that share of new traces, decided by
// the trace id; a continued trace is always recorded.
func TestSampling(t *testing.T) {
	t.Parallel()
	tr := New(Config{Endpoint: "http://127.0.0.1:9", SampleRatio: 0.25, QueueSize: 1}, nil, nil, nil)
	n := 0
	for range 4000 {
		if _, s := tr.root(context.Background(), newTraceID(), SpanID{}, "x", Internal); s != nil {
			n++
		}
	}
	if n < 800 || n > 1200 {
		t.Errorf("%d of 4000 sampled at 0.25", n)
	}
	if _, s := tr.root(context.Background(), newTraceID(), newSpanID(), "x", Internal); s == nil {
		t.Error("a continued trace was not recorded")
	}
}

func TestParseTraceParent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true},
		{" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00 ", true},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", false},
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", false},
		{"", false},
	} {
		trace, parent, ok := parseTraceParent(tc.in)
		if ok != tc.ok {
			t.Errorf("%q: ok %v", tc.in, ok)
		}
		if ok && (trace.String() != "4bf92f3577b34da6a3ce929d0e0e4736" || parent.String() != "00f067aa0ba902b7") {
			t.Errorf("%q: %s %s", tc.in, trace, parent)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	t.Parallel()
	h, err := ParseHeaders(" api-key = abc%3D1 ,x-team=ops,")
	if err != nil || h.Get("Api-Key") != "abc=1" || h.Get("X-Team") != "ops" {
		t.Errorf("%v %v", h, err)
	}
	if _, err := ParseHeaders("novalue"); err == nil {
		t.Error("a pair without = was accepted")
	}
}

// TestJobMetadata: a job inserted under a span carries it, and its worked
// attempt is that span's child, whose calls carry the trace.
func TestJobMetadata(t *testing.T) {
	t.Parallel()
	col := newCollector(t)
	tr, _ := newTestTracer(t, col.srv.URL, Config{})
	m := tr.JobMiddleware()[0].(*jobMiddleware)
	ctx, cause := tr.root(context.Background(), newTraceID(), SpanID{}, "cause", Server)
	params := []*rivertype.JobInsertParams{{Kind: "push", Metadata: []byte(`{"keep":1}`)}, {Kind: "push"}}
	m.InsertMany(ctx, params, func(context.Context) ([]*rivertype.JobInsertResult, error) { return nil, nil })
	for _, p := range params {
		var meta map[string]any
		if err := json.Unmarshal(p.Metadata, &meta); err != nil || meta["traceparent"] != cause.TraceParent() {
			t.Errorf("metadata %s", p.Metadata)
		}
	}
	if !strings.Contains(string(params[0].Metadata), `"keep":1`) {
		t.Errorf("metadata lost: %s", params[0].Metadata)
	}
	cause.End()
	var seen string
	err := m.Work(context.Background(), &rivertype.JobRow{ID: 7, Kind: "push", Attempt: 2, Metadata: params[1].Metadata}, func(ctx context.Context) error {
		seen = FromContext(ctx).TraceID()
		return errors.New("partner down")
	})
	if err == nil || seen != cause.TraceID() {
		t.Errorf("work: %v, trace %s", err, seen)
	}
	tr.Flush(context.Background())
	spans := col.Spans()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	job := spans[1]
	if job.Name != "job push" || job.Kind != Consumer || job.ParentSpanID != spans[0].SpanID || job.Attr("job.attempt") != "2" ||
		job.Attr("job.id") != "7" || job.Status.Code != 2 {
		t.Errorf("job span %+v", job)
	}
}

// TestTransport: a request made under a span is a client span and carries
// it as its traceparent, in the trace the request names when it names
// another (linked to the work that made it); one made outside any span
// passes untouched.
func TestTransport(t *testing.T) {
	t.Parallel()
	col := newCollector(t)
	tr, _ := newTestTracer(t, col.srv.URL, Config{})
	var got []string
	partner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("traceparent"))
	}))
	defer partner.Close()
	hc := &http.Client{Transport: tr.Transport(nil)}
	ctx, root := tr.root(context.Background(), newTraceID(), SpanID{}, "job", Consumer)
	do := func(ctx context.Context, url, tp string) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, url, nil)
		if tp != "" {
			req.Header.Set("traceparent", tp)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return req
	}
	do(ctx, partner.URL+"/ocpi/x?token=secret", "")
	const chain = "00-11111111111111111111111111111111-2222222222222222-01"
	if req := do(ctx, partner.URL+"/ocpi/y", chain); req.Header.Get("traceparent") != chain {
		t.Error("the caller's request was changed")
	}
	do(context.Background(), partner.URL, chain)
	root.End()
	tr.Flush(context.Background())
	var own, other SpanJSON
	for _, s := range col.Spans() {
		if s.Kind == Client && s.TraceID == root.TraceID() {
			own = s
		} else if s.Kind == Client {
			other = s
		}
	}
	want := []string{"00-" + root.TraceID() + "-" + own.SpanID + "-01", "00-11111111111111111111111111111111-" + other.SpanID + "-01", chain}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("traceparents (-want +got):\n%s", diff)
	}
	if own.ParentSpanID != root.id.String() || strings.Contains(own.Attr("url.full"), "secret") || own.Attr("http.response.status_code") != "200" {
		t.Errorf("client span %+v", own)
	}
	if other.ParentSpanID != "" || len(other.Links) != 1 || other.Links[0] != (Link{TraceID: root.TraceID(), SpanID: root.id.String()}) {
		t.Errorf("client span of another chain %+v", other)
	}
}

// TestHandler: a request's server span continues its traceparent, or takes
// its correlation id's trace, and records the OCPI status_code it answered.
func TestHandler(t *testing.T) {
	t.Parallel()
	col := newCollector(t)
	tr, _ := newTestTracer(t, col.srv.URL, Config{})
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /ocpi/{id}", func(w http.ResponseWriter, r *http.Request) {
		NoteRoute(r.Context(), r.Pattern)
		NotePartner(r.Context(), "CPO One")
		w.Header().Set("X-Correlation-ID", r.Header.Get("X-Correlation-ID"))
		w.Write([]byte(`{"data":{"x":"` + strings.Repeat("y", 2000) + `"},"status_code":2001,"timestamp":"2026-01-01T00:00:00Z"}`))
	})
	h := tr.Handler(mux)
	req := httptest.NewRequest(http.MethodPut, "/ocpi/1", nil)
	req.Header.Set("X-Correlation-ID", "chain-1")
	h.ServeHTTP(httptest.NewRecorder(), req)
	req = httptest.NewRequest(http.MethodPut, "/ocpi/2", nil)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.ServeHTTP(httptest.NewRecorder(), req)
	tr.Flush(context.Background())
	spans := col.Spans()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	a, b := spans[0], spans[1]
	if a.Name != "PUT /ocpi/{id}" || a.Kind != Server || a.TraceID != ocpiclient.TraceIDFor("chain-1") ||
		a.Attr("ocpi.status_code") != "2001" || a.Attr("ocpi.partner") != "CPO One" || a.Attr("ocpi.correlation_id") != "chain-1" || a.ParentSpanID != "" {
		t.Errorf("span %+v", a)
	}
	if b.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || b.ParentSpanID != "00f067aa0ba902b7" {
		t.Errorf("continued span %+v", b)
	}
}
