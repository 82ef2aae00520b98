package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/legacy"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/party"
)

// The legacy surface: OCPI 2.1.1 and 2.0 at /ocpi/{version}/….
//
// 2.1.1 endpoints carry no role, so one set of endpoints cannot serve a CPO
// and an eMSP (the hub receives a CPO's locations and sends an eMSP its
// own). Each legacy version therefore has one version details per partner
// role, as the 2.2.1 paths already name the caller's role:
// /ocpi/2.1.1/cpo lists what a CPO calls (the receivers it pushes to, the
// tokens it pulls, the command results it posts), /ocpi/2.1.1/emsp what an
// eMSP calls. A partner finds its own through the versions URL of its role,
// /ocpi/cpo/versions or /ocpi/emsp/versions (the one to give it), or through
// /ocpi/versions when the hub already knows its role (a registered partner,
// or a token A issued for its party). The generic /ocpi/2.1.1 answers the
// same way and, when the role is unknown, says which URL to use. The role a
// partner registers through is the role of its single party.
//
// Every legacy answer carries Deprecation (RFC 9745), Sunset (RFC 8594) when
// a date is configured, and a Link to the successor version; envelopes and
// objects use whole-second timestamps and the 2.1.1 status codes (2004 is
// answered as 2000, the hub errors 4000-4003 as 3000).

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

// legacyVersion returns the legacy version a path is under ("" for none).
func legacyVersion(path string) string {
	rest, ok := strings.CutPrefix(path, "/ocpi/")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, "/")
	if v211.IsLegacy(v) {
		return v
	}
	return ""
}

// roleSegment is the path segment of a role: cpo, emsp.
func roleSegment(r party.Role) string { return strings.ToLower(string(r)) }

// legacyRoleOf returns the role a caller plays toward the legacy surface
// when it is known: the one CPO or EMSP role of a registered platform, or
// of the parties a token A was issued for.
func legacyRoleOf(c *party.Caller) party.Role {
	if c == nil {
		return ""
	}
	refs := c.Roles
	if c.Kind == party.CallerRegistering {
		refs = c.Invited
	}
	var found party.Role
	for _, p := range refs {
		if p.Role != party.RoleCPO && p.Role != party.RoleEMSP {
			continue
		}
		if found != "" && found != p.Role {
			return ""
		}
		found = p.Role
	}
	return found
}

// urlRole reads the role segment of a legacy path (/ocpi/2.1.1/cpo/…), or
// the caller's role for the generic paths; "" when neither says.
func urlRole(r *http.Request) party.Role {
	rest, _ := strings.CutPrefix(r.URL.Path, "/ocpi/")
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) >= 2 {
		switch parts[1] {
		case "cpo":
			return party.RoleCPO
		case "emsp":
			return party.RoleEMSP
		}
	}
	return legacyRoleOf(party.CallerFrom(r.Context()))
}

// errLegacyRole explains how a legacy partner finds the endpoints of its
// role.
func (s *Server) errLegacyRole(version string) error {
	return &ocpi.Error{Code: ocpi.EINVALID, Field: "role", Issue: "unknown: use the URL of your role",
		Message: "OCPI " + version + " has one set of endpoints per role and the hub does not know yours yet: a CPO uses " +
			s.kit.PublicURL("/ocpi/cpo/versions") + " (or " + s.kit.PublicURL("/ocpi/"+version+"/cpo") + "), an eMSP " +
			s.kit.PublicURL("/ocpi/emsp/versions") + " (or " + s.kit.PublicURL("/ocpi/"+version+"/emsp") + ")"}
}

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

// legacyOK writes a 1000 envelope with a whole-second timestamp.
func (s *Server) legacyOK(w http.ResponseWriter, data any) error {
	writeJSON(w, http.StatusOK, ocpi.Success(data, s.clock.Now().Truncate(time.Second)))
	return nil
}

// legacyStored answers a legacy PUT or PATCH: 201 when the object is new.
func (s *Server) legacyStored(w http.ResponseWriter, created bool) error {
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, ocpi.Success(nil, s.clock.Now().Truncate(time.Second)))
	return nil
}

// decodeLegacy reads the body of a legacy PUT or POST as an object of the
// caller's version (also returned) and checks it.
func decodeLegacy[T any, P interface {
	*T
	Check(*ocpi.Check)
}](s *Server, r *http.Request, module string) (T, string, error) {
	var obj T
	raw, err := readBody(r)
	if err != nil {
		return obj, "", err
	}
	v := legacyVersion(r.URL.Path)
	if err := v211.Decode(v, module, "", raw, s.clock.Now(), &obj); err != nil {
		return obj, v, err
	}
	c := ocpi.NewCheck("")
	if P(&obj).Check(c); c.Err() != nil {
		return obj, v, c.Err()
	}
	return obj, v, nil
}

// legacyPatch decodes a legacy PATCH of the caller's version (also
// returned), stamped with the time it arrived when it has no last_updated.
func (s *Server) legacyPatch(r *http.Request, module string, raw []byte) (ocpi.Object, string, error) {
	v := legacyVersion(r.URL.Path)
	var patch ocpi.Object
	if err := v211.Decode(v, module, "", raw, s.clock.Now(), &patch); err != nil {
		return nil, v, err
	}
	stampPatch(patch, s.clock.Now())
	return patch, v, nil
}

// stampPatch gives a legacy PATCH without last_updated (2.1.1 does not
// require one; 2.2.1 does) the time the hub received it.
func stampPatch(patch ocpi.Object, now time.Time) {
	if _, ok := patch["last_updated"]; !ok {
		patch["last_updated"] = ocpi.NewDateTime(now).String()
	}
}

// legacyEnvelope adapts an error envelope to 2.1.1: its status codes and a
// whole-second timestamp.
func legacyEnvelope(resp ocpi.Response) ocpi.Response {
	switch c := resp.StatusCode; {
	case c == ocpi.StatusUnknownToken:
		resp.StatusCode = ocpi.StatusClientError
	case c >= 4000 && c < 5000:
		resp.StatusCode = ocpi.StatusServerError
	}
	resp.Timestamp = v211.Timestamp(resp.Timestamp.Time)
	return resp
}

// handleLegacyDetails serves the version details of a legacy version for a
// partner of role ("" : the caller's role, when known).
func (s *Server) handleLegacyDetails(version string, role party.Role) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		rl := role
		if rl == "" {
			if rl = legacyRoleOf(party.CallerFrom(r.Context())); rl == "" {
				return s.errLegacyRole(version)
			}
		}
		d := ocpi.VersionDetails{Version: version}
		for _, e := range s.legacyEndpoints(version, rl) {
			d.Endpoints = append(d.Endpoints, ocpi.Endpoint{Identifier: e.Identifier, URL: s.kit.PublicURL(e.Path)})
		}
		return s.legacyOK(w, d)
	}
}

// legacyEndpoints lists the legacy endpoints a partner of role calls: the
// entries of the rows served under /ocpi/{version}/{role}/.
func (s *Server) legacyEndpoints(version string, role party.Role) []Listing {
	base := "/ocpi/" + version + "/" + roleSegment(role) + "/"
	var out []Listing
	for _, l := range s.listings(version) {
		if strings.HasPrefix(l.Path, base) {
			out = append(out, l)
		}
	}
	return out
}
