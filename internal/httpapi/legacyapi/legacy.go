// Package legacyapi serves the deprecated OCPI 2.1.1 and 2.0 surfaces,
// converted to and from the hub's 2.2.1 model, and declares their route
// rows; httpapi assembles them.
//
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
package legacyapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/party"
)

// Version returns the legacy version a path is under ("" for none).
func Version(path string) string {
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

// RoleSegment is the path segment of a role: cpo, emsp.
func RoleSegment(r party.Role) string { return strings.ToLower(string(r)) }

// RoleOf returns the role a caller plays toward the legacy surface
// when it is known: the one CPO or EMSP role of a registered platform, or
// of the parties a token A was issued for.
func RoleOf(c *party.Caller) party.Role {
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
	return RoleOf(party.CallerFrom(r.Context()))
}

// errLegacyRole explains how a legacy partner finds the endpoints of its
// role.
func (s *handlers) errLegacyRole(version string) error {
	return &ocpi.Error{Code: ocpi.EINVALID, Field: "role", Issue: "unknown: use the URL of your role",
		Message: "OCPI " + version + " has one set of endpoints per role and the hub does not know yours yet: a CPO uses " +
			s.PublicURL("/ocpi/cpo/versions") + " (or " + s.PublicURL("/ocpi/"+version+"/cpo") + "), an eMSP " +
			s.PublicURL("/ocpi/emsp/versions") + " (or " + s.PublicURL("/ocpi/"+version+"/emsp") + ")"}
}

// OK writes a 1000 envelope with a whole-second timestamp, the form every
// version accepts.
func OK(k *kit.Kit, w http.ResponseWriter, data any) error {
	kit.WriteJSON(w, http.StatusOK, ocpi.Success(data, k.Clock.Now().Truncate(time.Second)))
	return nil
}

// legacyOK writes a 1000 envelope with a whole-second timestamp.
func (s *handlers) legacyOK(w http.ResponseWriter, data any) error { return OK(s.Kit, w, data) }

// legacyStored answers a legacy PUT or PATCH: 201 when the object is new.
func (s *handlers) legacyStored(w http.ResponseWriter, created bool) error {
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	kit.WriteJSON(w, status, ocpi.Success(nil, s.Clock.Now().Truncate(time.Second)))
	return nil
}

// decodeLegacy reads the body of a legacy PUT or POST as an object of the
// caller's version (also returned) and checks it.
func decodeLegacy[T any, P interface {
	*T
	Check(*ocpi.Check)
}](s *handlers, r *http.Request, module string) (T, string, error) {
	var obj T
	raw, err := kit.ReadBody(r)
	if err != nil {
		return obj, "", err
	}
	v := Version(r.URL.Path)
	if err := v211.Decode(v, module, "", raw, s.Clock.Now(), &obj); err != nil {
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
func (s *handlers) legacyPatch(r *http.Request, module string, raw []byte) (ocpi.Object, string, error) {
	v := Version(r.URL.Path)
	var patch ocpi.Object
	if err := v211.Decode(v, module, "", raw, s.Clock.Now(), &patch); err != nil {
		return nil, v, err
	}
	stampPatch(patch, s.Clock.Now())
	return patch, v, nil
}

// stampPatch gives a legacy PATCH without last_updated (2.1.1 does not
// require one; 2.2.1 does) the time the hub received it.
func stampPatch(patch ocpi.Object, now time.Time) {
	if _, ok := patch["last_updated"]; !ok {
		patch["last_updated"] = ocpi.NewDateTime(now).String()
	}
}

// Envelope adapts an error envelope to 2.1.1: its status codes and a
// whole-second timestamp.
func Envelope(resp ocpi.Response) ocpi.Response {
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
func (s *handlers) handleLegacyDetails(version string, role party.Role) route.Func {
	return func(w http.ResponseWriter, r *http.Request) error {
		rl := role
		if rl == "" {
			if rl = RoleOf(party.CallerFrom(r.Context())); rl == "" {
				return s.errLegacyRole(version)
			}
		}
		d := ocpi.VersionDetails{Version: version}
		for _, e := range s.legacyEndpoints(version, rl) {
			d.Endpoints = append(d.Endpoints, ocpi.Endpoint{Identifier: e.Identifier, URL: s.PublicURL(e.Path)})
		}
		return s.legacyOK(w, d)
	}
}

// legacyEndpoints lists the legacy endpoints a partner of role calls: the
// entries of the rows served under /ocpi/{version}/{role}/.
func (s *handlers) legacyEndpoints(version string, role party.Role) []route.Listing {
	base := "/ocpi/" + version + "/" + RoleSegment(role) + "/"
	var out []route.Listing
	for _, l := range s.cfg.Listings(version) {
		if strings.HasPrefix(l.Path, base) {
			out = append(out, l)
		}
	}
	return out
}
