package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/capture"
	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/ids"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/tracing"
)

// The request's ids live in the kit, which module packages read them from.
var (
	RequestID         = kit.RequestID
	CorrelationID     = kit.CorrelationID
	WithCorrelationID = kit.WithCorrelationID
)

// idHeader returns a usable id from a header: printable, at most 255 bytes;
// otherwise a new UUID.
func idHeader(v string) string {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > 255 {
		return ids.New()
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return ids.New()
		}
	}
	return v
}

// withIDs echoes X-Request-ID and X-Correlation-ID, generating them when
// missing (transport.md §9.2).
func withIDs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rid := idHeader(r.Header.Get("X-Request-ID"))
		cid := idHeader(r.Header.Get("X-Correlation-ID"))
		w.Header().Set("X-Request-ID", rid)
		w.Header().Set("X-Correlation-ID", cid)
		ctx := kit.WithIDs(r.Context(), rid, cid)
		// Calls made while serving the request continue its W3C trace.
		tid := ocpiclient.ParseTraceParent(r.Header.Get("traceparent"))
		if tid == "" {
			tid = ocpiclient.TraceIDFor(cid)
		}
		ctx = ocpiclient.WithTraceID(ctx, tid)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// observe logs every request and records its metrics, by route pattern (the
// mux sets r.Pattern on the request it is given, so nothing between here and
// the mux may clone the request). Panics are recovered inside it, so a crash
// is logged and counted as the 500 it is answered with.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &capture.Writer{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		elapsed := time.Since(start)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		status := sw.Status()
		s.metrics.observe(route, r.Method, status, elapsed)
		tracing.NoteRoute(r.Context(), r.Pattern)
		if s.quietRoute(route) && status < 400 {
			return
		}
		attrs := []any{
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("route", route),
			slog.Int("status", status), slog.Duration("duration", elapsed), slog.Int("bytes", sw.Written()),
			slog.String("request_id", RequestID(r.Context())),
		}
		if c := party.CallerFrom(r.Context()); c != nil && c.Name != "" {
			attrs = append(attrs, slog.String("caller", c.Name))
		}
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		s.logger.Log(r.Context(), level, "request", attrs...)
	})
}

// quietRoute reports routes that are polled and not worth a log line.
func (s *Server) quietRoute(route string) bool {
	return strings.Contains(route, "/healthz") || strings.Contains(route, "/readyz") || strings.Contains(route, "/metrics")
}

// recoverPanics answers a panicking handler with HTTP 500 and status 3000,
// and logs the panic with the request id.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.logger.ErrorContext(r.Context(), "panic serving request", "panic", fmt.Sprint(v),
					"request_id", RequestID(r.Context()), "path", r.URL.Path, "stack", string(debug.Stack()))
				s.writeError(w, r, &ocpi.Error{Code: ocpi.EINTERNAL, Message: "internal error", Err: fmt.Errorf("panic: %v", v)})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// limitBody caps request bodies (DESIGN §6: over the cap → 413).
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.cfg.MaxBodyBytes {
			s.writeError(w, r, &ocpi.Error{Code: ocpi.ETOOLARGE, Message: "the body is larger than " + strconv.FormatInt(s.cfg.MaxBodyBytes, 10) + " bytes"})
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// aliases serves the URL forms of CanonicalPath from the routes of their
// canonical paths.
func aliases(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := CanonicalPath(r.URL.Path); p != r.URL.Path {
			r2 := r.Clone(r.Context())
			r2.URL.Path = p
			r2.URL.RawPath = ""
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}

// CanonicalPath maps the URL forms the seed also uses onto the paths of the
// route table: the role before the version (/ocpi/cpo/2.2.1/… →
// /ocpi/2.2.1/cpo/…, /ocpi/cpo/2.2.1 → the version details /ocpi/2.2.1, and
// /ocpi/cpo/2.1.1 → the legacy details of the role, /ocpi/2.1.1/cpo),
// credentials without a version (/ocpi/credentials →
// /ocpi/2.2.1/credentials), the payments module under a role
// (/ocpi/2.2.1/cpo/payments/… → /ocpi/2.2.1/payments/…), and trailing
// slashes. Other paths are returned as they are.
func CanonicalPath(p string) string {
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		p = strings.TrimRight(p, "/")
		if p == "" {
			p = "/"
		}
	}
	rest, ok := strings.CutPrefix(p, "/ocpi/")
	if !ok {
		return p
	}
	parts := strings.SplitN(rest, "/", 3)
	switch {
	case len(parts) >= 2 && (parts[0] == "cpo" || parts[0] == "emsp" || parts[0] == "ptp") && isVersion(parts[1]):
		p = "/ocpi/" + parts[1]
		switch {
		case len(parts) == 3:
			p += "/" + parts[0] + "/" + parts[2]
		case parts[1] == "2.1.1" || parts[1] == "2.0":
			// Legacy versions have details per role (legacy.go).
			p += "/" + parts[0]
		}
	case rest == "credentials":
		p = "/ocpi/" + DefaultVersion + "/credentials"
	}
	// The Payments examples put the module under a role
	// (/ocpi/cpo/2.2.1/payments/terminals, gaps.md §14f): one URL serves
	// both roles here.
	if rest, ok := strings.CutPrefix(p, "/ocpi/"); ok {
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) == 3 && isVersion(parts[0]) && (parts[1] == "cpo" || parts[1] == "ptp") &&
			(parts[2] == "payments" || strings.HasPrefix(parts[2], "payments/")) {
			p = "/ocpi/" + parts[0] + "/" + parts[2]
		}
	}
	if q := v22Alias(p); q != p {
		// 2.2 modules are served by the 2.2.1 routes (v22.go).
		return CanonicalPath(q)
	}
	return p
}

func isVersion(s string) bool {
	for _, v := range []string{"2.3.0", "2.2.1", Version22, "2.1.1", "2.0"} {
		if s == v {
			return true
		}
	}
	return false
}
