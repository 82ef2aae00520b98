package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/ocpihub/ocpihub/internal/authguard"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// unknownToken marks an authentication that failed because no token of
// the request is known (as opposed to a known token on the wrong route):
// the failures the guard counts.
type unknownToken struct{ err error }

func (u unknownToken) Error() string { return u.err.Error() }
func (u unknownToken) Unwrap() error { return u.err }

// guardedAuthenticate is authenticate behind the failed-authentication
// guard: a client that sent too many unknown tokens gets 429 (Retry-After)
// before its token is looked at, and each unknown token counts. A request
// without an Authorization header guesses nothing and is not counted. A
// failing guard store lets the request through, as the rate limiter does.
func (s *Server) guardedAuthenticate(w http.ResponseWriter, r *http.Request, a route.Access) (*party.Caller, error) {
	g := s.cfg.AuthGuard
	if g == nil || r.Header.Get("Authorization") == "" {
		return s.authenticate(r, a)
	}
	ctx := r.Context()
	client := authguard.Key(authguard.ClientAddr(r, s.cfg.TrustedProxies))
	wait, blocked, err := g.Blocked(ctx, client)
	if err != nil {
		s.logger.WarnContext(ctx, "authentication guard unavailable; request let through", "error", err)
	}
	if blocked {
		secs := int(wait.Seconds()) + 1
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		return nil, &ocpi.Error{Code: ocpi.ERATELIMIT, Message: fmt.Sprintf(
			"too many failed authentications from this client; retry after %d s", secs)}
	}
	c, err := s.authenticate(r, a)
	var unknown unknownToken
	if errors.As(err, &unknown) {
		s.logger.WarnContext(ctx, "request with an unknown token", "client", client, "path", r.URL.Path)
		if ferr := g.Fail(ctx, client); ferr != nil {
			s.logger.WarnContext(ctx, "authentication guard could not count a failure", "error", ferr)
		}
	}
	return c, err
}
