package tracing

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/capture"
	"github.com/ocpihub/ocpihub/internal/ids"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

// Handler wraps the hub's HTTP handler with a server span per request. The
// span continues the request's traceparent; without one its trace is the
// one the hub derives from the X-Correlation-ID (ocpiclient.TraceIDFor), so
// the calls the request causes, now or later from jobs, share it. A nil
// Tracer returns next itself.
func (t *Tracer) Handler(next http.Handler) http.Handler {
	if t == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		trace, parent, ok := parseTraceParent(r.Header.Get("traceparent"))
		if !ok {
			trace, parent = t.correlationTrace(r), SpanID{}
		}
		ctx, span := t.root(r.Context(), trace, parent, r.Method, Server)
		if span == nil {
			next.ServeHTTP(w, r)
			return
		}
		span.SetString("http.request.method", r.Method)
		span.SetString("url.path", r.URL.Path)
		var last tail
		sw := &capture.Writer{ResponseWriter: w, Tee: last.keep}
		defer func() {
			status := sw.Status()
			span.SetInt("http.response.status_code", int64(status))
			if code, ok := last.ocpiStatus(); ok {
				span.SetInt("ocpi.status_code", code)
			}
			span.SetString("ocpi.correlation_id", w.Header().Get("X-Correlation-ID"))
			span.SetString("ocpi.request_id", w.Header().Get("X-Request-ID"))
			if status >= 500 {
				span.Fail(http.StatusText(status))
			}
			span.End()
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// correlationTrace returns the trace of a request without a traceparent:
// its X-Correlation-ID's. A request without a usable one is given one
// here, which the hub then echoes, as it would have generated its own.
func (t *Tracer) correlationTrace(r *http.Request) TraceID {
	cid := strings.TrimSpace(r.Header.Get("X-Correlation-ID"))
	if !usableID(cid) {
		cid = ids.New()
		r.Header.Set("X-Correlation-ID", cid)
	}
	id, _ := parseTraceID(ocpiclient.TraceIDFor(cid))
	return id
}

// usableID mirrors the HTTP layer's rule for ids it keeps: printable
// ASCII, 1 to 255 bytes.
func usableID(v string) bool {
	if v == "" || len(v) > 255 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// NoteRoute names the request's server span by its route pattern, once the
// router has matched it ("PATCH /ocpi/2.2.1/receiver/locations/…").
func NoteRoute(ctx context.Context, route string) {
	s := FromContext(ctx)
	if s == nil || s.kind != Server || route == "" {
		return
	}
	s.SetString("http.route", route)
	if _, pattern, ok := strings.Cut(route, " "); ok {
		route = pattern
	}
	s.SetName(s.attrValue("http.request.method") + " " + route)
}

// NotePartner names the platform that made the request, once it is
// authenticated.
func NotePartner(ctx context.Context, partner string) {
	if s := FromContext(ctx); s != nil && s.kind == Server {
		s.SetString("ocpi.partner", partner)
	}
}

func (s *Span) attrValue(key string) string {
	for _, a := range s.attrs {
		if a.key == key {
			return a.str
		}
	}
	return ""
}

// tail keeps the answer's last bytes, where an OCPI envelope's
// status_code is (after the data).
type tail []byte

const tailBytes = 512

// keep appends b, keeping the last tailBytes.
func (t *tail) keep(b []byte) {
	if len(b) >= tailBytes {
		*t = append((*t)[:0], b[len(b)-tailBytes:]...)
	} else {
		*t = append(*t, b...)
		if len(*t) > tailBytes {
			*t = append((*t)[:0], (*t)[len(*t)-tailBytes:]...)
		}
	}
}

// ocpiStatus finds the envelope's status_code in the answer's last bytes.
func (t tail) ocpiStatus() (int64, bool) {
	const key = `"status_code":`
	i := bytes.LastIndex(t, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := bytes.TrimLeft(t[i+len(key):], " ")
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	code, err := strconv.ParseInt(string(rest[:n]), 10, 64)
	return code, err == nil
}

// Transport wraps base with a client span per request made under a span:
// the request carries the new span as its traceparent, in the trace its
// caller (ocpiclient) chose. Requests made outside any span pass through
// untouched. A nil Tracer returns base
// itself.
func (t *Tracer) Transport(base http.RoundTripper) http.RoundTripper {
	if t == nil {
		return base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base}
}

type transport struct{ base http.RoundTripper }

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	_, span := Start(req.Context(), req.Method, Client)
	if span == nil {
		return tr.base.RoundTrip(req)
	}
	if trace, _, ok := parseTraceParent(req.Header.Get("traceparent")); ok && trace != span.trace {
		// The call belongs to another chain than the work making it (a
		// job delivering the pushes of several requests, each with its
		// correlation id's trace): the span goes in the call's trace, as
		// the partner and the traffic inspector see it, linked to the
		// work that made it.
		span.linkTrace, span.linkSpan = span.trace, span.parent
		span.trace, span.parent = trace, SpanID{}
	}
	// A RoundTripper must not change the caller's request.
	r2 := new(http.Request)
	*r2 = *req
	r2.Header = req.Header.Clone()
	r2.Header.Set("traceparent", span.TraceParent())
	span.SetString("http.request.method", req.Method)
	u := *req.URL
	u.RawQuery, u.User = "", nil
	span.SetString("url.full", u.String())
	span.SetString("server.address", req.URL.Hostname())
	span.SetString("ocpi.correlation_id", req.Header.Get("X-Correlation-ID"))
	span.SetString("ocpi.request_id", req.Header.Get("X-Request-ID"))
	if cc, pid := req.Header.Get("OCPI-to-country-code"), req.Header.Get("OCPI-to-party-id"); cc != "" || pid != "" {
		span.SetString("ocpi.to_party", cc+"/"+pid)
	}
	resp, err := tr.base.RoundTrip(r2)
	if err != nil {
		span.Fail(err.Error())
	} else {
		span.SetInt("http.response.status_code", int64(resp.StatusCode))
		if resp.StatusCode >= 500 {
			span.Fail(http.StatusText(resp.StatusCode))
		}
	}
	span.End()
	return resp, err
}
