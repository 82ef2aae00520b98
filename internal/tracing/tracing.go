// Package tracing exports OpenTelemetry traces of the hub's work: a span for
// every inbound HTTP request (server), every outbound one (client: pushes,
// forwards, command relays, payment gateway calls), every write transaction
// and every job, sent over OTLP/HTTP to a collector when an endpoint is
// configured.
//
// It speaks the OTLP/HTTP JSON encoding itself (POST {endpoint}/v1/traces)
// instead of using the OpenTelemetry Go SDK: the SDK's OTLP exporters pull in
// gRPC and protobuf (the HTTP exporter too, for its protobuf encoding), some
// twenty modules for what is here a few hundred lines of stdlib, and the
// hub needs none of the SDK's flexibility (one exporter, one sampler, no
// metrics or logs through it). Every collector and tracing backend that
// speaks OTLP/HTTP accepts JSON.
//
// Off means free: with no endpoint there is no Tracer (a nil *Tracer), no
// span is ever started, and every hook is a context lookup that finds
// nothing (TestHooksOffAllocateNothing). On, spans end into a bounded queue
// that a background exporter drains in batches; a full queue drops the span
// and counts it rather than making a request wait, and a collector that is
// down costs retries in the background, then dropped batches, never an
// error anywhere else.
//
// Traces join the hub's W3C trace context (ocpiclient): an inbound span
// continues the request's traceparent or, without one, takes the trace id
// the hub derives from its X-Correlation-ID, so the trace of a chain is the
// one the traffic inspector's exchanges of that correlation id carry in
// their traceparent headers. Jobs carry their cause's span in their
// metadata, so a push made by a job is in the trace of the request that
// caused it.
package tracing

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

// Defaults of Config.
const (
	DefaultServiceName   = "ocpihub"
	DefaultQueueSize     = 4096
	DefaultBatchSize     = 512
	DefaultFlushInterval = 2 * time.Second
	DefaultTimeout       = 10 * time.Second
	DefaultMaxRetries    = 4
	DefaultRetryBackoff  = 500 * time.Millisecond
)

// Config configures a Tracer. Zero values take the defaults.
type Config struct {
	// Endpoint is the collector's base URL (http://collector:4318); spans
	// go to Endpoint + "/v1/traces". A URL already ending in /v1/traces is
	// used as it is.
	Endpoint string
	// Header is sent with every export (an API key of a hosted backend).
	Header http.Header
	// ServiceName is the resource's service.name.
	ServiceName string
	// SampleRatio is the share of new traces recorded, from 0 to 1 (0: the
	// default, every trace). A trace continued from a partner's or a job's
	// traceparent is recorded whenever its cause was.
	SampleRatio float64
	// QueueSize bounds the ended spans waiting for export; BatchSize is the
	// most spans one export carries; FlushInterval the longest a span waits
	// for a batch to fill.
	QueueSize     int
	BatchSize     int
	FlushInterval time.Duration
	// Timeout bounds one export request. A 429, 502, 503 or 504 answer, or
	// no answer, is retried up to MaxRetries times, waiting RetryBackoff,
	// doubled each time (or the collector's Retry-After).
	Timeout      time.Duration
	MaxRetries   int
	RetryBackoff time.Duration
	// HTTP sends the exports (default: a client of its own).
	HTTP *http.Client
}

func (c Config) withDefaults() Config {
	c.ServiceName = cmp.Or(c.ServiceName, DefaultServiceName)
	c.QueueSize = cmp.Or(c.QueueSize, DefaultQueueSize)
	c.BatchSize = cmp.Or(c.BatchSize, DefaultBatchSize)
	c.FlushInterval = cmp.Or(c.FlushInterval, DefaultFlushInterval)
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.MaxRetries = cmp.Or(c.MaxRetries, DefaultMaxRetries)
	c.RetryBackoff = cmp.Or(c.RetryBackoff, DefaultRetryBackoff)
	if c.SampleRatio <= 0 || c.SampleRatio > 1 {
		c.SampleRatio = 1
	}
	if c.HTTP == nil {
		c.HTTP = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	return c
}

// ParseHeaders reads headers written as OTEL_EXPORTER_OTLP_HEADERS writes
// them: comma-separated key=value pairs, values URL-encoded
// ("api-key=abc,x-team=ops").
func ParseHeaders(s string) (http.Header, error) {
	h := http.Header{}
	for _, pair := range strings.Split(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, errBadHeader(pair)
		}
		h.Add(k, unescape(strings.TrimSpace(v)))
	}
	return h, nil
}

type errBadHeader string

func (e errBadHeader) Error() string { return "want key=value, got " + strconv.Quote(string(e)) }

// Kind is a span's kind (OTLP's SpanKind).
type Kind int

// Span kinds.
const (
	Internal Kind = 1
	Server   Kind = 2
	Client   Kind = 3
	Consumer Kind = 5
)

// Tracer starts spans and exports them. A nil *Tracer is tracing off: it
// starts nothing and its hooks return what they were given.
type Tracer struct {
	cfg    Config
	url    string
	clock  clock.Clock
	logger *slog.Logger
	exp    *exporter
	// sampleBelow is SampleRatio as a bound on a trace id's last 8 bytes.
	sampleBelow uint64
}

// New returns a Tracer exporting to cfg.Endpoint; call Start to run its
// exporter and Close to flush it. reg may be nil.
func New(cfg Config, clk clock.Clock, logger *slog.Logger, reg prometheus.Registerer) *Tracer {
	clk = clock.OrReal(clk)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	t := &Tracer{cfg: cfg, url: tracesURL(cfg.Endpoint), clock: clk, logger: logger}
	if cfg.SampleRatio >= 1 {
		t.sampleBelow = ^uint64(0)
	} else {
		t.sampleBelow = uint64(cfg.SampleRatio * (1 << 63) * 2)
	}
	t.exp = newExporter(t, reg)
	return t
}

func tracesURL(endpoint string) string {
	e := strings.TrimRight(endpoint, "/")
	if strings.HasSuffix(e, "/v1/traces") {
		return e
	}
	return e + "/v1/traces"
}

// Start runs the exporter. A nil Tracer does nothing.
func (t *Tracer) Start() {
	if t != nil {
		t.exp.start()
	}
}

// Close exports what is queued (until ctx ends) and stops the exporter.
func (t *Tracer) Close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.exp.close(ctx)
}

// Flush exports what is queued now and waits for it (tests).
func (t *Tracer) Flush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.exp.flush(ctx)
}

// Dropped returns how many spans were not exported: the queue was full,
// or the collector refused or never answered their batch.
func (t *Tracer) Dropped() int64 {
	if t == nil {
		return 0
	}
	return t.exp.dropped.Load()
}

// Exported returns how many spans the collector accepted.
func (t *Tracer) Exported() int64 {
	if t == nil {
		return 0
	}
	return t.exp.exported.Load()
}

// sampled decides whether a new trace is recorded, by its id: every
// process (and every backend sampling by the same rule) decides alike.
func (t *Tracer) sampled(id TraceID) bool {
	return t.sampleBelow == ^uint64(0) || binary.BigEndian.Uint64(id[8:]) < t.sampleBelow
}

// TraceID and SpanID are W3C trace context ids.
type (
	TraceID [16]byte
	SpanID  [8]byte
)

func (id TraceID) String() string { return hex.EncodeToString(id[:]) }
func (id SpanID) String() string  { return hex.EncodeToString(id[:]) }

func newSpanID() SpanID {
	var id SpanID
	for id == (SpanID{}) {
		binary.BigEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}

func newTraceID() TraceID {
	var id TraceID
	binary.BigEndian.PutUint64(id[:8], rand.Uint64())
	binary.BigEndian.PutUint64(id[8:], rand.Uint64()|1)
	return id
}

// parseTraceID reads 32 lower-case hex digits.
func parseTraceID(s string) (TraceID, bool) {
	var id TraceID
	if len(s) != 32 {
		return id, false
	}
	_, err := hex.Decode(id[:], []byte(s))
	return id, err == nil && id != TraceID{}
}

// parseTraceParent reads a W3C traceparent header value: its trace and
// parent span, valid by ocpiclient's rules (the ones the hub's propagation
// follows).
func parseTraceParent(v string) (TraceID, SpanID, bool) {
	var parent SpanID
	trace, ok := parseTraceID(ocpiclient.ParseTraceParent(v))
	if !ok {
		return trace, parent, false
	}
	// "vv-<32 hex>-<16 hex>-ff": the parent id is at 36.
	_, err := hex.Decode(parent[:], []byte(strings.TrimSpace(v)[36:52]))
	return trace, parent, err == nil
}

// traceParent is the traceparent header value naming span as the parent.
func traceParent(trace TraceID, span SpanID) string {
	return "00-" + trace.String() + "-" + span.String() + "-01"
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
