package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/httpapi/legacyapi"
	"github.com/ocpihub/ocpihub/internal/legacy"
	"github.com/ocpihub/ocpihub/internal/party"
)

// The legacy surface, OCPI 2.1.1 and 2.0, is served by package legacyapi;
// the hub's transport announces its deprecation and counts its traffic.

// LegacyConfig is how the hub announces the deprecation of 2.1.1 and 2.0.
type LegacyConfig struct {
	// Deprecated is the Deprecation date (default: October 2021, when OCPI
	// 2.2.1 superseded them).
	Deprecated time.Time
	// Sunset, when set, is the date legacy versions stop working.
	Sunset time.Time
	// PolicyURL, when set, is linked as rel="deprecation" (and "sunset").
	PolicyURL string
}

// DefaultLegacyDeprecated is the default Deprecation date.
var DefaultLegacyDeprecated = time.Date(2021, 10, 1, 0, 0, 0, 0, time.UTC)

// deprecation adds the deprecation headers to every answer on a legacy
// path, errors included.
func (s *Server) deprecation(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if legacyVersion(r.URL.Path) != "" {
			h := w.Header()
			h.Set("Deprecation", "@"+strconv.FormatInt(s.cfg.Legacy.Deprecated.Unix(), 10))
			links := []string{"<" + s.kit.PublicURL("/ocpi/"+DefaultVersion) + `>; rel="successor-version"`}
			if !s.cfg.Legacy.Sunset.IsZero() {
				h.Set("Sunset", s.cfg.Legacy.Sunset.UTC().Format(http.TimeFormat))
			}
			if u := s.cfg.Legacy.PolicyURL; u != "" {
				links = append(links, "<"+u+`>; rel="deprecation"`)
				if !s.cfg.Legacy.Sunset.IsZero() {
					links = append(links, "<"+u+`>; rel="sunset"`)
				}
			}
			h.Set("Link", strings.Join(links, ", "))
		}
		next.ServeHTTP(w, r)
	})
}

// countLegacy counts a request on a legacy path for the caller's party.
func (s *Server) countLegacy(r *http.Request, c *party.Caller) {
	v := legacyVersion(r.URL.Path)
	if v == "" {
		return
	}
	label := ""
	if c != nil && c.Kind == party.CallerPlatform && len(c.Roles) > 0 {
		label = c.Roles[0].String()
	}
	s.cfg.LegacyRecorder.Traffic(v, label, legacy.In)
}

// The legacy helpers the transport and the versions list use.
var (
	legacyVersion  = legacyapi.Version
	legacyRoleOf   = legacyapi.RoleOf
	roleSegment    = legacyapi.RoleSegment
	legacyEnvelope = legacyapi.Envelope
)

// legacyOK writes a 1000 envelope with a whole-second timestamp.
func (s *Server) legacyOK(w http.ResponseWriter, data any) error { return legacyapi.OK(s.kit, w, data) }
