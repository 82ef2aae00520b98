package admin

import (
	"net/http"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ratelimit"
)

// rateLimitsBody is the body of PUT /admin/parties/{id}/rate_limits and the
// answer of GET: the party's own limits and the limits in force.
type rateLimitsBody struct {
	Override  ratelimit.Override `json:"override"`
	Effective ratelimit.Limits   `json:"effective"`
	Defaults  ratelimit.Limits   `json:"defaults"`
}

// rateLimitsParty reads the party of a rate limits route: its platform id,
// or 404 when the hub runs without rate limits.
func (s *handlers) rateLimitsParty(r *http.Request) (int64, error) {
	id, err := kit.PathID(r)
	if err != nil {
		return 0, err
	}
	if s.cfg.RateLimiter == nil {
		return 0, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "rate limits are off"}
	}
	return id, nil
}

func (s *handlers) rateLimitsOf(r *http.Request, id int64) (rateLimitsBody, error) {
	l := s.cfg.RateLimiter
	o, err := l.Override(r.Context(), id)
	if err != nil {
		return rateLimitsBody{}, err
	}
	return rateLimitsBody{Override: o, Effective: o.Apply(l.Defaults()), Defaults: l.Defaults()}, nil
}

// handleAdminRateLimits shows a party's rate limits.
func (s *handlers) handleAdminRateLimits(w http.ResponseWriter, r *http.Request) error {
	id, err := s.rateLimitsParty(r)
	if err != nil {
		return err
	}
	out, err := s.rateLimitsOf(r, id)
	if err != nil {
		return err
	}
	return s.OK(w, out)
}

// handleAdminSetRateLimits sets a party's own limits: a body such as
// {"per_minute": 500}; fields left out take the hub's defaults, 0 lifts the
// limit of a window, {} returns to the defaults.
func (s *handlers) handleAdminSetRateLimits(w http.ResponseWriter, r *http.Request) error {
	id, err := s.rateLimitsParty(r)
	if err != nil {
		return err
	}
	var o ratelimit.Override
	if err := kit.Decode(r, &o); err != nil {
		return err
	}
	if err := s.cfg.RateLimiter.SetOverride(r.Context(), id, o); err != nil {
		return err
	}
	out, err := s.rateLimitsOf(r, id)
	if err != nil {
		return err
	}
	return s.OK(w, out)
}
