package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/tariff"
)

// priceRequest asks the cost engine to price a CDR or a session.
type priceRequest struct {
	// Tariffs to price with (2.2.1, or 2.1.1 without country_code); none:
	// a CDR's own tariffs.
	Tariffs []json.RawMessage `json:"tariffs,omitempty"`
	CDR     *ocpi.CDR         `json:"cdr,omitempty"`
	Session *ocpi.Session     `json:"session,omitempty"`
	// TimeZone is the location's (IANA name); default the time_zone of the
	// CDR's or session's location when the hub holds it, else UTC.
	TimeZone string `json:"time_zone,omitempty"`
	// Now ends a live session's last period; default the hub's clock.
	Now *ocpi.DateTime `json:"now,omitempty"`
	// Explain asks for the engine's reasons, step by step.
	Explain bool `json:"explain,omitempty"`
}

// handleAdminTariffPrice prices a CDR or a session with the hub's cost
// engine: what `ocpihub tariff price` does, for the console and scripts.
func (s *Server) handleAdminTariffPrice(w http.ResponseWriter, r *http.Request) error {
	var req priceRequest
	if err := kit.Decode(r, &req); err != nil {
		return err
	}
	if (req.CDR == nil) == (req.Session == nil) {
		return ocpi.Invalid("cdr", "give one of cdr and session")
	}
	cc, pid, locID := "", "", ""
	if req.CDR != nil {
		cc, pid = req.CDR.CountryCode, req.CDR.PartyID
		if req.CDR.CdrLocation != nil {
			locID = req.CDR.CdrLocation.ID
		}
	} else {
		cc, pid, locID = req.Session.CountryCode, req.Session.PartyID, req.Session.LocationID
	}
	tz, from := time.UTC, "default"
	if req.TimeZone != "" {
		z, err := tariff.LoadZone(req.TimeZone)
		if err != nil {
			return ocpi.Invalid("time_zone", "is not a time zone name")
		}
		tz, from = z, "request"
	} else if locID != "" {
		// The location's zone when the hub holds the location.
		loc, err := s.directoryLocation(r.Context(), ocpi.Key(cc), ocpi.Key(pid), locID)
		if err != nil {
			return err
		}
		if loc != nil && loc.TimeZone != "" {
			if z, err := tariff.LoadZone(loc.TimeZone); err == nil {
				tz, from = z, "location"
			}
		}
	}
	now := s.clock.Now()
	if req.Now != nil {
		now = req.Now.Time
	}
	var in tariff.Input
	var own *ocpi.Price
	if req.CDR != nil {
		in, own = tariff.ForCDR(req.CDR, nil, tz), req.CDR.TotalCost
	} else {
		in, own = tariff.ForSession(req.Session, nil, tz, now), req.Session.TotalCost
	}
	if len(req.Tariffs) > 0 {
		in.Tariffs = nil
		for _, raw := range req.Tariffs {
			t, err := tariff.DecodeTariff(raw, cc, pid)
			if err != nil {
				return err
			}
			in.Tariffs = append(in.Tariffs, t)
		}
	}
	in.Explain = req.Explain
	cost, err := tariff.Price(in)
	if err != nil {
		return err
	}
	rep := tariff.NewReport(cost, own)
	rep.TimeZone, rep.TimeZoneFrom = tz.String(), from
	return s.kit.OK(w, rep)
}

// directoryLocation returns a location of the hub's directory (nil when it
// has none).
func (s *Server) directoryLocation(ctx context.Context, cc, pid, id string) (*ocpi.Location, error) {
	if s.cfg.Locations == nil {
		return nil, nil
	}
	raw, err := s.cfg.Locations.Get(ctx, location.Ref{CountryCode: cc, PartyID: pid, LocationID: id})
	if ocpi.ErrorCode(err) == ocpi.EUNKNOWNLOCATION {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var l ocpi.Location
	return &l, json.Unmarshal(raw, &l)
}
