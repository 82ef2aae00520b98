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
	writeJSON(w, status, resp)
}

// The answer and body helpers are the kit's (handlers in module packages
// use the same).
var (
	writeJSON     = kit.WriteJSON
	decode        = kit.Decode
	readBody      = kit.ReadBody
	decodeBytes   = kit.DecodeBytes
	logAttrs      = kit.LogAttrs
	pathID        = kit.PathID
	ownerOf       = kit.OwnerOf
	callerParties = kit.CallerParties
	asParty       = kit.AsParty
	callerParty   = kit.CallerParty
	owners        = kit.Owners
	locationRef   = kit.LocationRef
	tokenChange   = kit.TokenChange
	ownsParty     = kit.OwnsParty
	routingTo     = kit.RoutingTo
	senderOf      = kit.SenderOf
	versionOf     = kit.VersionOf
)
