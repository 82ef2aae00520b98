package admin

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/traffic"
)

// ownPlatform returns the platform a partner's traffic view is scoped to.
func ownPlatform(r *http.Request) (int64, error) {
	c := party.CallerFrom(r.Context())
	if c == nil || c.PlatformID == 0 {
		return 0, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "this endpoint needs a partner's credentials token"}
	}
	return c.PlatformID, nil
}

// TrafficFilter reads the filters of a traffic search from a query:
// partner (a name, or platform_id), module, direction, status (a class:
// 2xx, 4xx, 5xx, 1xxx…4xxx, failed), correlation_id, object_id, from and to
// (RFC 3339), before (the keyset cursor), order (oldest) and limit.
func TrafficFilter(q url.Values) (traffic.Filter, error) {
	f := traffic.Filter{Partner: q.Get("partner"), Module: q.Get("module"), CorrelationID: q.Get("correlation_id"),
		ObjectID: q.Get("object_id"), StatusClass: q.Get("status")}
	switch d := traffic.Direction(q.Get("direction")); d {
	case "", traffic.In, traffic.Out:
		f.Direction = d
	default:
		return f, ocpi.Invalid("direction", "must be in or out")
	}
	if !traffic.CheckStatusClass(f.StatusClass) {
		return f, ocpi.Invalid("status", "must be an HTTP class (2xx, 4xx, 5xx), an OCPI class (1xxx, 2xxx, 3xxx, 4xxx) or failed")
	}
	for name, dst := range map[string]*int64{"platform_id": &f.PlatformID, "before": &f.Before, "after": &f.After} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return f, ocpi.Invalid(name, "must be a non-negative integer")
			}
			*dst = n
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > traffic.MaxLimit {
			return f, ocpi.Invalid("limit", "must be a whole number from 1 to "+strconv.Itoa(traffic.MaxLimit))
		}
		f.Limit = n
	}
	for name, dst := range map[string]*time.Time{"from": &f.From, "to": &f.To} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return f, ocpi.Invalid(name, "must be an RFC 3339 time such as 2026-01-02T15:04:05Z")
			}
			*dst = t
		}
	}
	switch q.Get("order") {
	case "", "newest":
	case "oldest":
		f.Oldest = true
	default:
		return f, ocpi.Invalid("order", "must be newest or oldest")
	}
	return f, nil
}

// handleTrafficList serves GET /admin/traffic and, scoped to the caller's
// platform, GET /ocpi/2.2.1/traffic: a page of exchanges (format=json, the
// default, in an envelope with a Link to the next page), or the page with
// its bodies as a HAR file (format=har) or JSON lines (format=jsonl).
func (s *handlers) handleTrafficList(own bool) route.Func {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		f, err := TrafficFilter(q)
		if err != nil {
			return err
		}
		if own {
			if f.PlatformID, err = ownPlatform(r); err != nil {
				return err
			}
			f.Partner = ""
		}
		format := q.Get("format")
		switch format {
		case "", "json":
		case "har", "jsonl":
			f.Bodies = true
		default:
			return ocpi.Invalid("format", "must be json, har or jsonl")
		}
		list, next, err := traffic.List(r.Context(), s.cfg.DB.Read(), f)
		if err != nil {
			return err
		}
		if next != 0 {
			u := s.SelfURL(r)
			nq := u.Query()
			if f.Oldest {
				nq.Set("after", strconv.FormatInt(next, 10))
			} else {
				nq.Set("before", strconv.FormatInt(next, 10))
			}
			u.RawQuery = nq.Encode()
			w.Header().Set("Link", "<"+u.String()+`>; rel="next"`)
		}
		return s.writeTraffic(w, format, list)
	}
}

// handleTrafficGet serves one whole exchange; a partner reaches only its
// own (another's answers 404, as an unknown id does).
func (s *handlers) handleTrafficGet(own bool) route.Func {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil || id <= 0 {
			return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "no exchange " + r.PathValue("id")}
		}
		var platformID int64
		if own {
			if platformID, err = ownPlatform(r); err != nil {
				return err
			}
		}
		x, err := traffic.Find(r.Context(), s.cfg.DB.Read(), id, platformID)
		if err != nil {
			return err
		}
		format := r.URL.Query().Get("format")
		switch format {
		case "", "json":
			return s.OK(w, x)
		case "har", "jsonl":
			return s.writeTraffic(w, format, []traffic.Exchange{*x})
		}
		return ocpi.Invalid("format", "must be json, har or jsonl")
	}
}

func (s *handlers) writeTraffic(w http.ResponseWriter, format string, list []traffic.Exchange) error {
	switch format {
	case "har":
		// A file to open in developer tools, not an envelope.
		w.Header().Set("Content-Type", "application/har+json")
		w.Header().Set("Content-Disposition", `attachment; filename="ocpihub-traffic.har"`)
		return traffic.WriteHAR(w, list, s.cfg.Version)
	case "jsonl":
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set("Content-Disposition", `attachment; filename="ocpihub-traffic.jsonl"`)
		return traffic.WriteJSONLines(w, list)
	}
	if list == nil {
		list = []traffic.Exchange{}
	}
	return s.OK(w, list)
}
