package httpapi

import (
	"net/http"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// writeError answers err with its envelope and logs what the caller does not
// see.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if st := ocpi.AsStale(err); st != nil {
		s.noteStale(r, st)
	}
	status, resp := ocpi.ErrorResponse(err, s.clock.Now())
	if legacyVersion(r.URL.Path) != "" {
		resp = legacyEnvelope(resp)
	}
	if status >= 500 {
		s.logger.ErrorContext(r.Context(), "request failed", "error", err, "method", r.Method, "path", r.URL.Path, "request_id", RequestID(r.Context()))
	} else if ocpi.ErrorCode(err) == ocpi.EINTERNAL {
		s.logger.ErrorContext(r.Context(), "request failed", "error", err)
	} else {
		s.logger.DebugContext(r.Context(), "request rejected", "error", err, "path", r.URL.Path)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Token realm="ocpihub"`)
	}
	s.setErrorRouting(w, r)
	kit.WriteJSON(w, status, resp)
}
