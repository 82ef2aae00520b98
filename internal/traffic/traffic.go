// Package traffic records every OCPI exchange the hub takes part in — the
// requests partners send us and the requests we send them — so an engineer
// can see what was sent and what was answered, and follow one change through
// the hub by its X-Correlation-ID.
//
// Recording stays off the request's critical path: the HTTP edges hand a
// Capture to Record, which never blocks (a full buffer drops the capture and
// counts it); a background writer redacts, compresses and stores captures in
// batches. A periodic job removes what is older than the retention or above
// the size cap, in batches.
package traffic

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Direction says who sent the request of an exchange.
type Direction string

// Directions.
const (
	// In is a request a partner sent the hub.
	In Direction = "in"
	// Out is a request the hub sent a partner.
	Out Direction = "out"
)

// Defaults of Config. A batch is one write transaction: 128 captures hold
// SQLite's writer about 2 ms, so a request waits behind at most that (1 024
// held it 18 ms and set the p99 of status PATCHes and CDR posts).
const (
	DefaultBufferSize    = 4096
	DefaultBatchSize     = 128
	DefaultFlushInterval = time.Second
	DefaultMaxBodyBytes  = 64 << 10
	DefaultRetention     = 7 * 24 * time.Hour
	DefaultMaxBytes      = 1 << 30
	// CaptureLimit is how much of a body the edges copy: enough to redact a
	// whole request under the hub's body cap; more is recorded as cut.
	CaptureLimit = 1 << 20
)

// Config tunes a Recorder. Zero values take the defaults.
type Config struct {
	// BufferSize is how many captures may wait for the writer; beyond it
	// captures are dropped (and counted), never waited for.
	BufferSize int
	// BatchSize is how many captures one write transaction stores;
	// FlushInterval is the longest a capture waits for a batch to fill.
	BatchSize     int
	FlushInterval time.Duration
	// MaxBodyBytes caps each stored body after redaction (before
	// compression).
	MaxBodyBytes int
	// Retention is how long exchanges are kept; MaxBytes caps the stored
	// size (the oldest go first).
	Retention time.Duration
	MaxBytes  int64
}

func (c Config) withDefaults() Config {
	if c.BufferSize <= 0 {
		c.BufferSize = DefaultBufferSize
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Retention <= 0 {
		c.Retention = DefaultRetention
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	return c
}

// Capture is one exchange as an HTTP edge saw it: raw, not yet redacted.
// The recorder owns it once handed to Record.
type Capture struct {
	At        time.Time
	Direction Direction
	// PlatformID is the partner's platform (0 when unknown: a request
	// without a valid token); Partner its name.
	PlatformID int64
	Partner    string
	// Module is the OCPI module; empty means "derive it from the URL".
	Module     string
	Method     string
	URL        string
	HTTPStatus int
	Duration   time.Duration
	// RequestID and CorrelationID are the X-Request-ID and
	// X-Correlation-ID of the request.
	RequestID     string
	CorrelationID string
	// FromParty and ToParty are the OCPI-from and OCPI-to parties
	// ("NL/TNM").
	FromParty, ToParty string
	RequestHeader      http.Header
	ResponseHeader     http.Header
	RequestBody        []byte
	ResponseBody       []byte
	// Error says why there is no answer (unreachable, timed out).
	Error string
	// Buffers hold the bodies when an edge copied them into buffers of
	// Buffer's pool: the recorder returns them once it has prepared the
	// capture (or dropped it), and nothing may read the bodies after
	// Record.
	Buffers []*bytes.Buffer
}

// bodies are the buffers the inbound edge copies request and response
// bodies into. A directory page is about 120 KB; with a new buffer per
// request, a copy of the whole page for the facts and another of its stored
// part, recording left four large allocations a page behind, and a page's
// p99 was three times what it is with recording off.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Buffer returns an empty buffer from the recorder's pool, for a body that
// a Capture will hold in Buffers.
func Buffer() *bytes.Buffer {
	b := bodies.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

// Return gives buffers taken with Buffer back to the pool (an edge's
// buffers for an exchange it does not record); nothing may read them after.
func Return(bufs []*bytes.Buffer) {
	for _, b := range bufs {
		if b.Cap() <= CaptureLimit+bytes.MinRead {
			bodies.Put(b)
		}
	}
}

// Recycle returns the capture's buffers to the pool; its bodies must not be
// read after it.
func (c *Capture) Recycle() {
	Return(c.Buffers)
	c.Buffers, c.RequestBody, c.ResponseBody = nil, nil, nil
}

// Recorder buffers captures and stores them in batches.
type Recorder struct {
	db     *store.DB
	clock  clock.Clock
	logger *slog.Logger
	cfg    Config

	ch      chan *Capture
	flushCh chan chan struct{}
	quit    chan struct{}
	done    chan struct{}
	start   sync.Once
	stop    sync.Once

	// zw compresses bodies; only the writer goroutine uses it.
	zw *gzip.Writer
	// yield lets the requests waiting for a CPU run before the next
	// capture (runtime.Gosched; tests count it).
	yield func()

	// on says whether exchanges are recorded (SetRecording).
	on atomic.Bool

	metrics  *metrics
	recorded atomic.Int64
	dropped  atomic.Int64
}

// New returns a Recorder storing into db. Call Start to run its writer and
// Close to stop it. reg may be nil.
func New(db *store.DB, clk clock.Clock, logger *slog.Logger, reg prometheus.Registerer, cfg Config) *Recorder {
	clk = clock.OrReal(clk)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	r := &Recorder{db: db, clock: clk, logger: logger, cfg: cfg,
		ch: make(chan *Capture, cfg.BufferSize), flushCh: make(chan chan struct{}),
		quit: make(chan struct{}), done: make(chan struct{}), metrics: newMetrics(reg), yield: runtime.Gosched}
	r.on.Store(true)
	return r
}

// SetRecording turns recording on or off (--traffic); what is stored stays
// readable either way.
func (r *Recorder) SetRecording(on bool) { r.on.Store(on) }

// Recording reports whether exchanges are recorded. A nil Recorder records
// nothing.
func (r *Recorder) Recording() bool { return r != nil && r.on.Load() }

// Config returns the recorder's settings, defaults filled in.
func (r *Recorder) Config() Config { return r.cfg }

// Now returns the recorder's time (the edges stamp captures with it).
func (r *Recorder) Now() time.Time { return r.clock.Now() }

// Record hands a capture to the writer. It never blocks: when the buffer is
// full the capture is dropped and counted. A nil Recorder records nothing.
func (r *Recorder) Record(c *Capture) {
	if !r.Recording() {
		c.Recycle()
		return
	}
	select {
	case r.ch <- c:
	default:
		c.Recycle()
		r.dropped.Add(1)
		r.metrics.dropped.Inc()
	}
}

// Dropped returns how many captures were dropped since start.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

// Recorded returns how many exchanges were stored since start.
func (r *Recorder) Recorded() int64 { return r.recorded.Load() }

// Start runs the background writer.
func (r *Recorder) Start() {
	r.start.Do(func() { go r.run() })
}

// Flush waits until every capture handed over before the call is stored
// (tests and exports read after it).
func (r *Recorder) Flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case r.flushCh <- done:
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	return wait(ctx, done)
}

// Close stores what is buffered and stops the writer.
func (r *Recorder) Close(ctx context.Context) error {
	if r == nil {
		return nil
	}
	r.start.Do(func() { close(r.done) })
	r.stop.Do(func() { close(r.quit) })
	return wait(ctx, r.done)
}

// wait waits until done is closed or ctx ends.
func wait(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Recorder) run() {
	defer close(r.done)
	tick := time.NewTicker(r.cfg.FlushInterval)
	defer tick.Stop()
	// Each capture is prepared as it arrives, not when its batch is full:
	// the batch holds rows (redacted, cut, compressed: a 120 KB directory
	// page becomes about 10 KB) instead of up to 128 whole bodies, and the
	// buffers go back to the pool at once.
	batch := make([]row, 0, r.cfg.BatchSize)
	write := func() {
		if len(batch) > 0 {
			r.write(batch)
			batch = batch[:0]
		}
	}
	add := func(c *Capture) {
		batch = append(batch, r.prepare(c))
		c.Recycle() // a row holds none of the capture's bytes
		if len(batch) >= r.cfg.BatchSize {
			write()
		}
		if len(r.ch) < cap(r.ch)/yieldBelow {
			r.yield()
		}
	}
	drain := func() {
		for {
			select {
			case c := <-r.ch:
				add(c)
			default:
				write()
				return
			}
		}
	}
	for {
		select {
		case c := <-r.ch:
			add(c)
		case <-tick.C:
			write()
		case done := <-r.flushCh:
			drain()
			close(done)
		case <-r.quit:
			drain()
			return
		}
	}
}

// yieldBelow sets when the writer yields its CPU after preparing a
// capture: while fewer than 1/yieldBelow of the buffer's captures wait.
// Preparing a capture is CPU work with nothing to wait for (a directory
// page's exchange: its scan, gzip and the copy, about 200 µs), and the
// request that handed it over woke the writer ahead of the requests already
// waiting for that CPU: on two cores, recording pages one after another
// held a core from the requests that produced them (at a million EVSEs
// the keyset page's p99 went from 10.0–11.0 to 8.1 ms with the yield,
// bench/README.md). A writer that falls behind stops yielding, so a busy
// machine fills the buffer no sooner than without it.
const yieldBelow = 8

// write stores one batch; a failure loses the batch (counted), never the
// requests it describes.
func (r *Recorder) write(rows []row) {
	ctx := store.Background(context.Background())
	err := r.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error { return insertRows(ctx, tx, rows) })
	if err != nil {
		r.logger.Error("recording traffic failed", "exchanges", len(rows), "error", err)
		r.dropped.Add(int64(len(rows)))
		r.metrics.dropped.Add(float64(len(rows)))
		return
	}
	r.recorded.Add(int64(len(rows)))
	r.metrics.recorded.Add(float64(len(rows)))
}

type metrics struct {
	recorded, dropped, pruned prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		recorded: prometheus.NewCounter(prometheus.CounterOpts{Name: "ocpihub_traffic_recorded_total",
			Help: "OCPI exchanges stored by the traffic inspector."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "ocpihub_traffic_dropped_total",
			Help: "OCPI exchanges the traffic inspector did not store (buffer full or write failed)."}),
		pruned: prometheus.NewCounter(prometheus.CounterOpts{Name: "ocpihub_traffic_pruned_total",
			Help: "Recorded exchanges removed by retention or the size cap."}),
	}
	if reg != nil {
		reg.MustRegister(m.recorded, m.dropped, m.pruned)
	}
	return m
}
