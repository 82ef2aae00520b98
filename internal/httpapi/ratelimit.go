package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// rateLimit counts the request against the limits of the caller's token
// (per platform, per invitation, or the admin token) and writes the
// X-RateLimit-* headers of the window nearest exhaustion. Over the limit it
// returns ERATELIMIT (HTTP 429, Retry-After). Sandbox credentials and the
// sandbox instance are unlimited. A failing counter store lets the request
// through: a limiter outage must not take the API down.
func (s *Server) rateLimit(w http.ResponseWriter, r *http.Request, c *party.Caller) error {
	l := s.cfg.RateLimiter
	if l == nil || s.cfg.Sandbox || c.Sandbox {
		return nil
	}
	ctx := r.Context()
	key, limits := "admin", l.Defaults()
	switch c.Kind {
	case party.CallerPlatform:
		key = "platform:" + strconv.FormatInt(c.PlatformID, 10)
		var err error
		if limits, err = l.LimitsFor(ctx, c.PlatformID); err != nil {
			s.logger.WarnContext(ctx, "rate limits unavailable; request let through", "error", err)
			return nil
		}
	case party.CallerRegistering:
		key = "invitation:" + strconv.FormatInt(c.InvitationID, 10)
	}
	d, err := l.Allow(ctx, key, limits)
	if err != nil {
		s.logger.WarnContext(ctx, "rate limit check failed; request let through", "error", err)
		return nil
	}
	win, ok := d.Report()
	if !ok {
		return nil
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(win.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(win.Remaining()))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(win.Reset.Unix(), 10))
	if d.Allowed {
		return nil
	}
	wait := d.RetryAfter(s.clock.Now())
	h.Set("Retry-After", strconv.Itoa(int(wait.Seconds())))
	return &ocpi.Error{Code: ocpi.ERATELIMIT, Message: fmt.Sprintf(
		"rate limit exceeded: %d requests per %s for this token; retry after %d s", win.Limit, win.Name, int(wait.Seconds()))}
}
