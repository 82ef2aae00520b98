package tracing

import "strconv"

// The OTLP/HTTP JSON encoding of an export request
// (opentelemetry-proto's ExportTraceServiceRequest in the protobuf JSON
// mapping, with OTLP's exceptions: trace and span ids in hex, enums as
// integers, 64-bit integers as decimal strings).

// ExportRequest is the body of POST /v1/traces.
type ExportRequest struct {
	ResourceSpans []ResourceSpans `json:"resourceSpans"`
}

// ResourceSpans are the spans of one resource (this process).
type ResourceSpans struct {
	Resource   Resource     `json:"resource"`
	ScopeSpans []ScopeSpans `json:"scopeSpans"`
}

// Resource describes the process the spans come from.
type Resource struct {
	Attributes []KeyValue `json:"attributes"`
}

// ScopeSpans are the spans of one instrumentation scope.
type ScopeSpans struct {
	Scope Scope      `json:"scope"`
	Spans []SpanJSON `json:"spans"`
}

// Scope names the instrumentation.
type Scope struct {
	Name string `json:"name"`
}

// SpanJSON is one span on the wire.
type SpanJSON struct {
	TraceID           string     `json:"traceId"`
	SpanID            string     `json:"spanId"`
	ParentSpanID      string     `json:"parentSpanId,omitempty"`
	Name              string     `json:"name"`
	Kind              Kind       `json:"kind"`
	StartTimeUnixNano string     `json:"startTimeUnixNano"`
	EndTimeUnixNano   string     `json:"endTimeUnixNano"`
	Attributes        []KeyValue `json:"attributes,omitempty"`
	Links             []Link     `json:"links,omitempty"`
	Status            Status     `json:"status"`
}

// Link relates a span to a span of another trace.
type Link struct {
	TraceID string `json:"traceId"`
	SpanID  string `json:"spanId"`
}

// Attr returns the value of the attribute named key ("" when absent;
// integers in decimal).
func (s SpanJSON) Attr(key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			if kv.Value.StringValue != nil {
				return *kv.Value.StringValue
			}
			if kv.Value.IntValue != nil {
				return *kv.Value.IntValue
			}
		}
	}
	return ""
}

// Status is a span's status: code 2 is an error, 0 unset.
type Status struct {
	Code    int    `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// KeyValue is one attribute.
type KeyValue struct {
	Key   string   `json:"key"`
	Value AnyValue `json:"value"`
}

// AnyValue holds a string or an integer (as a decimal string).
type AnyValue struct {
	StringValue *string `json:"stringValue,omitempty"`
	IntValue    *string `json:"intValue,omitempty"`
}

// scopeName names ocpihub's instrumentation.
const scopeName = "github.com/ocpihub/ocpihub/internal/tracing"

func (t *Tracer) encode(batch []*Span) ExportRequest {
	spans := make([]SpanJSON, len(batch))
	for i, s := range batch {
		j := SpanJSON{TraceID: s.trace.String(), SpanID: s.id.String(), Name: s.name, Kind: s.kind,
			StartTimeUnixNano: strconv.FormatInt(s.start.UnixNano(), 10), EndTimeUnixNano: strconv.FormatInt(s.end.UnixNano(), 10)}
		if s.parent != (SpanID{}) {
			j.ParentSpanID = s.parent.String()
		}
		for _, a := range s.attrs {
			if a.isInt {
				j.Attributes = append(j.Attributes, intKV(a.key, a.num))
			} else {
				j.Attributes = append(j.Attributes, stringKV(a.key, a.str))
			}
		}
		if s.linkSpan != (SpanID{}) {
			j.Links = []Link{{TraceID: s.linkTrace.String(), SpanID: s.linkSpan.String()}}
		}
		if s.failed {
			j.Status = Status{Code: 2, Message: s.message}
		}
		spans[i] = j
	}
	return ExportRequest{ResourceSpans: []ResourceSpans{{
		Resource:   Resource{Attributes: []KeyValue{stringKV("service.name", t.cfg.ServiceName)}},
		ScopeSpans: []ScopeSpans{{Scope: Scope{Name: scopeName}, Spans: spans}},
	}}}
}

func stringKV(k, v string) KeyValue { return KeyValue{Key: k, Value: AnyValue{StringValue: &v}} }

func intKV(k string, n int64) KeyValue {
	v := strconv.FormatInt(n, 10)
	return KeyValue{Key: k, Value: AnyValue{IntValue: &v}}
}
