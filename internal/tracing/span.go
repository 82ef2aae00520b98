package tracing

import (
	"context"
	"time"
)

// Span is one timed operation of a trace. A nil *Span is a span not
// recorded (tracing off, or a trace not sampled): its methods do nothing,
// so hooks call them without checking.
type Span struct {
	t      *Tracer
	trace  TraceID
	id     SpanID
	parent SpanID
	name   string
	kind   Kind
	start  time.Time
	end    time.Time
	attrs  []attr
	// link is a span of another trace this one is related to (the job
	// that made a call of another chain); zero: none.
	linkTrace TraceID
	linkSpan  SpanID
	// failed and message are the span's status: an error, or unset.
	failed  bool
	message string
}

// attr is a span attribute: a string, or an integer when isInt.
type attr struct {
	key   string
	str   string
	num   int64
	isInt bool
}

type spanKey struct{}

// FromContext returns the span ctx carries, or nil.
func FromContext(ctx context.Context) *Span {
	s, _ := ctx.Value(spanKey{}).(*Span)
	return s
}

// Start starts a child of the span ctx carries. Without one (tracing off,
// or work outside any trace) it returns ctx and a nil span, allocating
// nothing.
func Start(ctx context.Context, name string, kind Kind) (context.Context, *Span) {
	parent := FromContext(ctx)
	if parent == nil {
		return ctx, nil
	}
	s := parent.t.newSpan(parent.trace, parent.id, name, kind)
	return context.WithValue(ctx, spanKey{}, s), s
}

// Continue starts a span that continues traceparent, stored where work was
// queued by the span that caused it (a job, a delivery); without a usable
// one, a trace of its own. A nil Tracer returns ctx and a nil span.
func (t *Tracer) Continue(ctx context.Context, traceparent, name string, kind Kind) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	trace, parent, ok := parseTraceParent(traceparent)
	if !ok {
		trace, parent = newTraceID(), SpanID{}
	}
	return t.root(ctx, trace, parent, name, kind)
}

// root starts a span of trace (continuing a remote parent when parent is
// set), or returns ctx and nil when the trace is not sampled.
func (t *Tracer) root(ctx context.Context, trace TraceID, parent SpanID, name string, kind Kind) (context.Context, *Span) {
	if parent == (SpanID{}) && !t.sampled(trace) {
		return ctx, nil
	}
	s := t.newSpan(trace, parent, name, kind)
	return context.WithValue(ctx, spanKey{}, s), s
}

func (t *Tracer) newSpan(trace TraceID, parent SpanID, name string, kind Kind) *Span {
	return &Span{t: t, trace: trace, id: newSpanID(), parent: parent, name: name, kind: kind, start: t.clock.Now()}
}

// TraceID returns the span's trace id ("" for a nil span).
func (s *Span) TraceID() string {
	if s == nil {
		return ""
	}
	return s.trace.String()
}

// TraceParent returns the W3C traceparent naming the span as the parent of
// a request it makes ("" for a nil span).
func (s *Span) TraceParent() string {
	if s == nil {
		return ""
	}
	return traceParent(s.trace, s.id)
}

// SetName renames the span (the inbound span learns its route late).
func (s *Span) SetName(name string) {
	if s != nil {
		s.name = name
	}
}

// SetString sets a string attribute; an empty value is left out.
func (s *Span) SetString(key, value string) {
	if s != nil && value != "" {
		s.attrs = append(s.attrs, attr{key: key, str: value})
	}
}

// SetInt sets an integer attribute.
func (s *Span) SetInt(key string, value int64) {
	if s != nil {
		s.attrs = append(s.attrs, attr{key: key, num: value, isInt: true})
	}
}

// Fail marks the span as failed with a message.
func (s *Span) Fail(message string) {
	if s != nil {
		s.failed, s.message = true, message
	}
}

// End ends the span and queues it for export. Call it once.
func (s *Span) End() {
	if s == nil {
		return
	}
	s.end = s.t.clock.Now()
	s.t.exp.enqueue(s)
}

// EndErr ends the span, failed when *err is not nil: a deferred
// span.EndErr(&err) records how a function with a named error result
// returned.
func (s *Span) EndErr(err *error) {
	if s == nil {
		return
	}
	if err != nil && *err != nil {
		s.Fail((*err).Error())
	}
	s.End()
}

// SetDBSystem names the database of a transaction span by its engine
// ("sqlite", "postgres"), in OpenTelemetry's words.
func (s *Span) SetDBSystem(engine string) {
	if engine == "postgres" {
		engine = "postgresql"
	}
	s.SetString("db.system.name", engine)
}
