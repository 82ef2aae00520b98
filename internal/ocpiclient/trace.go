package ocpiclient

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// W3C Trace Context (traceparent) propagation: a call made while serving a
// request carries that request's trace id, so a partner's and an operator's
// tracing tools put the hops of one exchange in one trace. With an OTLP
// endpoint configured the hub exports its own spans of that trace
// (internal/tracing, whose transport names the call's span as the parent).

type traceKey struct{}

// WithTraceID returns ctx carrying a trace id (32 lower-case hex digits)
// for the calls made under it.
func WithTraceID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, traceKey{}, id)
}

// TraceID returns the trace id ctx carries, or "".
func TraceID(ctx context.Context) string {
	s, _ := ctx.Value(traceKey{}).(string)
	return s
}

// ParseTraceParent returns the trace id of a traceparent header value
// ("00-<trace id>-<parent id>-<flags>"), or "" when it is not a valid one.
func ParseTraceParent(v string) string {
	parts := strings.Split(strings.TrimSpace(v), "-")
	if len(parts) < 4 || len(parts[0]) != 2 || parts[0] == "ff" || len(parts[1]) != 32 || len(parts[2]) != 16 || len(parts[3]) != 2 {
		return ""
	}
	if parts[0] == "00" && len(parts) != 4 {
		return ""
	}
	for _, p := range parts[:4] {
		if !isLowerHex(p) {
			return ""
		}
	}
	if allZero(parts[1]) || allZero(parts[2]) {
		return ""
	}
	return parts[1]
}

// TraceIDFor returns the trace id of a correlation id: a request that
// came without a traceparent, and the pushes and relays it causes later
// from jobs (which keep only the correlation id), share one trace.
func TraceIDFor(correlationID string) string {
	sum := sha256.Sum256([]byte(correlationID))
	return hex.EncodeToString(sum[:16])
}

// traceParent returns the traceparent of a call: the trace id ctx carries,
// or the correlation id's, and a new span id, sampled.
func traceParent(ctx context.Context, correlationID string) string {
	id := TraceID(ctx)
	if id == "" {
		id = TraceIDFor(correlationID)
	}
	return "00-" + id + "-" + randomHex(8) + "-01"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }
