package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/capture"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/traffic"
)

// trafficNote is filled in while a request is served: who called (known
// after authentication) and whether the exchange is recorded at all.
type trafficNote struct {
	platformID int64
	partner    string
	skip       bool
}

type trafficNoteKey struct{}

// noteCaller tells the traffic recorder who made the request; the
// operator's own calls (the admin token) are not partner traffic.
func noteCaller(ctx context.Context, c *party.Caller) {
	n, _ := ctx.Value(trafficNoteKey{}).(*trafficNote)
	if n == nil || c == nil {
		return
	}
	if c.Kind == party.CallerAdmin {
		n.skip = true
		return
	}
	n.platformID, n.partner = c.PlatformID, c.Name
}

// recordTraffic hands every OCPI exchange to the traffic recorder: the
// request and the answer as they passed, copied up to the capture limit.
// Recording never delays the answer (Record does not block).
func (s *Server) recordTraffic(next http.Handler) http.Handler {
	rec := s.cfg.Traffic
	if rec == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !rec.Recording() {
			next.ServeHTTP(w, r)
			return
		}
		p := CanonicalPath(r.URL.Path)
		if !strings.HasPrefix(p, "/ocpi/") || strings.HasPrefix(p, "/ocpi/2.2.1/traffic") {
			next.ServeHTTP(w, r)
			return
		}
		note := &trafficNote{}
		start := rec.Now()
		// The bodies are copied into the recorder's pooled buffers, which it
		// recycles once the exchange is prepared.
		bufs := []*bytes.Buffer{traffic.Buffer()}
		var body *captureBody
		if r.Body != nil && r.Body != http.NoBody {
			body = &captureBody{ReadCloser: r.Body, buf: traffic.Buffer()}
			bufs = append(bufs, body.buf)
			r.Body = body
		}
		cw := &capture.Writer{ResponseWriter: w, Keep: traffic.CaptureLimit, Buf: bufs[0]}
		next.ServeHTTP(cw, r.WithContext(context.WithValue(r.Context(), trafficNoteKey{}, note)))
		if note.skip {
			traffic.Return(bufs)
			return
		}
		c := &traffic.Capture{At: start, Direction: traffic.In, PlatformID: note.platformID, Partner: note.partner,
			Method: r.Method, URL: s.kit.SelfURL(r).String(), HTTPStatus: cw.Status(), Duration: rec.Now().Sub(start),
			RequestID: RequestID(r.Context()), CorrelationID: CorrelationID(r.Context()),
			FromParty: headerParty(r.Header, "OCPI-from"), ToParty: headerParty(r.Header, "OCPI-to"),
			RequestHeader: r.Header.Clone(), ResponseHeader: w.Header().Clone(), ResponseBody: cw.Body(), Buffers: bufs}
		if body != nil {
			c.RequestBody = body.buf.Bytes()
		}
		rec.Record(c)
	})
}

func headerParty(h http.Header, prefix string) string {
	cc, pid := h.Get(prefix+"-country-code"), h.Get(prefix+"-party-id")
	if cc == "" && pid == "" {
		return ""
	}
	return party.Notation(cc, pid)
}

// captureBody copies what the handler reads of a request body.
type captureBody struct {
	io.ReadCloser
	buf *bytes.Buffer
}

func (b *captureBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if room := traffic.CaptureLimit - b.buf.Len(); room > 0 && n > 0 {
		b.buf.Write(p[:min(n, room)])
	}
	return n, err
}
