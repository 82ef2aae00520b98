package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// exporter batches ended spans and posts them to the collector. Nothing it
// does blocks the code that ends a span: a full queue drops the span.
type exporter struct {
	t       *Tracer
	ch      chan *Span
	flushCh chan chan struct{}
	quit    chan struct{}
	done    chan struct{}
	start1  sync.Once
	stop1   sync.Once

	exported, dropped atomic.Int64
	*metrics
}

// metrics are the exporter's counters.
type metrics struct {
	mExported prometheus.Counter
	mDropped  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		mExported: prometheus.NewCounter(prometheus.CounterOpts{Name: "ocpihub_otel_spans_exported_total",
			Help: "Spans the OTLP collector accepted."}),
		mDropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ocpihub_otel_spans_dropped_total",
			Help: "Spans not exported: queue_full (the export queue was full when the span ended) or export_failed (the collector refused or never answered their batch)."}, []string{"reason"}),
	}
	// Both reasons are shown from the start, at zero.
	m.mDropped.WithLabelValues("queue_full")
	m.mDropped.WithLabelValues("export_failed")
	if reg != nil {
		reg.MustRegister(m.mExported, m.mDropped)
	}
	return m
}

// RegisterIdleMetrics registers the span export counters of a hub that
// exports nothing (no endpoint): dashboards and alerts see them at zero
// rather than missing.
func RegisterIdleMetrics(reg prometheus.Registerer) { newMetrics(reg) }

func newExporter(t *Tracer, reg prometheus.Registerer) *exporter {
	return &exporter{t: t, ch: make(chan *Span, t.cfg.QueueSize), flushCh: make(chan chan struct{}),
		quit: make(chan struct{}), done: make(chan struct{}), metrics: newMetrics(reg)}
}

func (e *exporter) enqueue(s *Span) {
	select {
	case e.ch <- s:
	default:
		e.drop("queue_full", 1)
	}
}

func (e *exporter) drop(reason string, n int) {
	e.dropped.Add(int64(n))
	e.mDropped.WithLabelValues(reason).Add(float64(n))
}

func (e *exporter) start() { e.start1.Do(func() { go e.run() }) }

// run collects batches: full ones go at once, others after FlushInterval.
func (e *exporter) run() {
	defer close(e.done)
	tick := time.NewTicker(e.t.cfg.FlushInterval)
	defer tick.Stop()
	batch := make([]*Span, 0, e.t.cfg.BatchSize)
	send := func() {
		if len(batch) > 0 {
			e.export(batch)
			batch = batch[:0]
		}
	}
	add := func(s *Span) {
		if batch = append(batch, s); len(batch) >= e.t.cfg.BatchSize {
			send()
		}
	}
	drain := func() {
		for {
			select {
			case s := <-e.ch:
				add(s)
			default:
				send()
				return
			}
		}
	}
	for {
		select {
		case s := <-e.ch:
			add(s)
		case <-tick.C:
			send()
		case ack := <-e.flushCh:
			drain()
			close(ack)
		case <-e.quit:
			drain()
			return
		}
	}
}

func (e *exporter) flush(ctx context.Context) error {
	e.start()
	ack := make(chan struct{})
	select {
	case e.flushCh <- ack:
	case <-e.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close exports what is queued and stops. When ctx ends first the
// exporter is left to finish in the background: shutdown does not wait
// for a collector that is down.
func (e *exporter) close(ctx context.Context) error {
	e.start()
	e.stop1.Do(func() { close(e.quit) })
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("export spans at shutdown: %w", ctx.Err())
	}
}

// export posts one batch, retrying what a collector says is worth
// retrying; a batch that cannot be delivered is dropped and counted.
func (e *exporter) export(batch []*Span) {
	body, err := json.Marshal(e.t.encode(batch))
	if err != nil {
		e.t.logger.Warn("encode spans", "error", err)
		e.drop("export_failed", len(batch))
		return
	}
	wait := e.t.cfg.RetryBackoff
	for attempt := 0; ; attempt++ {
		retry, after, err := e.post(body)
		if err == nil {
			e.exported.Add(int64(len(batch)))
			e.mExported.Add(float64(len(batch)))
			return
		}
		if !retry || attempt >= e.t.cfg.MaxRetries {
			e.t.logger.Warn("OTLP export failed; spans dropped", "spans", len(batch), "attempts", attempt+1, "error", err)
			e.drop("export_failed", len(batch))
			return
		}
		if after > 0 {
			wait = after
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-e.quit:
			// Shutting down: one last try, no more waiting.
			timer.Stop()
			if _, _, err := e.post(body); err == nil {
				e.exported.Add(int64(len(batch)))
				e.mExported.Add(float64(len(batch)))
			} else {
				e.drop("export_failed", len(batch))
			}
			return
		}
		wait *= 2
	}
}

// post sends one export request. retry says whether a failure is worth
// another attempt; after is the collector's Retry-After.
func (e *exporter) post(body []byte) (retry bool, after time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), e.t.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.t.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	for k, vs := range e.t.cfg.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.t.cfg.HTTP.Do(req)
	if err != nil {
		return true, 0, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, 0, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusBadGateway ||
		resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusGatewayTimeout:
		if n, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && n >= 0 {
			after = min(time.Duration(n)*time.Second, time.Minute)
		}
		return true, after, fmt.Errorf("collector answered HTTP %d", resp.StatusCode)
	default:
		return false, 0, fmt.Errorf("collector answered HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
}
