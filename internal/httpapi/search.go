package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// handleSearch is the driver search, a public read API (no token):
//
//	GET /api/locations?lat=12.97160&lon=77.59460&radius=3000
//	    &connector_type=IEC_62196_T2_COMBO&connector_type=CHADEMO
//	    &min_power=50&available=true&limit=20[&format=geojson]
//
// radius is in metres (default 5 000, at most 50 000), min_power in kW,
// connector_type repeatable (or comma-separated), limit at most 100. The
// answer is an OCPI envelope whose data lists Location objects nearest first;
// with format=geojson (or Accept: application/geo+json) it is a GeoJSON
// FeatureCollection of points whose properties are the Location objects plus
// distance_m. Only published locations with at least one EVSE not REMOVED
// are found.
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) error {
	q, err := parseSearch(r)
	if err != nil {
		return err
	}
	hits, err := s.cfg.Locations.Search(r.Context(), q)
	if err != nil {
		return err
	}
	if r.URL.Query().Get("format") == "geojson" || strings.Contains(r.Header.Get("Accept"), "application/geo+json") {
		return writeGeoJSON(w, hits)
	}
	out := make([]json.RawMessage, len(hits))
	for i, h := range hits {
		out[i] = h.Location
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(len(out)))
	return s.kit.OK(w, out)
}

func parseSearch(r *http.Request) (location.Query, error) {
	v := r.URL.Query()
	var q location.Query
	c := ocpi.NewCheck("")
	lat, lon := v.Get("lat"), v.Get("lon")
	if c.Required("lat", lat != "") && c.Required("lon", lon != "") {
		fl, err1 := strconv.ParseFloat(lat, 64)
		fo, err2 := strconv.ParseFloat(lon, 64)
		switch {
		case err1 != nil || fl < -90 || fl > 90:
			c.Fail("lat", "must be a latitude in decimal degrees (-90 to 90)")
		case err2 != nil || fo < -180 || fo > 180:
			c.Fail("lon", "must be a longitude in decimal degrees (-180 to 180)")
		}
		q.LatE7, q.LonE7 = location.E7(lat), location.E7(lon)
	}
	if s := v.Get("radius"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n > location.MaxRadius {
			c.Fail("radius", "must be a whole number of metres from 1 to %d", location.MaxRadius)
		}
		q.RadiusM = n
	}
	for _, t := range v["connector_type"] {
		for _, one := range strings.Split(t, ",") {
			if one = strings.TrimSpace(one); one != "" {
				c.Enum("connector_type", one, ocpi.ConnectorTypes, true)
				q.ConnectorTypes = append(q.ConnectorTypes, one)
			}
		}
	}
	if s := v.Get("min_power"); s != "" {
		n, err := ocpi.ParseNumber(s)
		if err != nil || n.IsNegative() {
			c.Fail("min_power", "must be a non-negative number of kW")
		} else {
			q.MinPowerW = n.Decimal().Shift(3).Ceil().IntPart()
		}
	}
	if s := v.Get("available"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			c.Fail("available", "must be true or false")
		}
		q.Available = b
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			c.Fail("limit", "must be a positive integer")
		}
		q.Limit = n
	}
	return q, c.Err()
}

// writeGeoJSON answers with a GeoJSON FeatureCollection (RFC 7946).
func writeGeoJSON(w http.ResponseWriter, hits []location.Hit) error {
	type geometry struct {
		Type        string     `json:"type"`
		Coordinates [2]float64 `json:"coordinates"`
	}
	type feature struct {
		Type       string         `json:"type"`
		ID         string         `json:"id"`
		Geometry   geometry       `json:"geometry"`
		Properties map[string]any `json:"properties"`
	}
	fc := struct {
		Type     string    `json:"type"`
		Features []feature `json:"features"`
	}{Type: "FeatureCollection", Features: []feature{}}
	for _, h := range hits {
		props, err := ocpi.ParseObject(h.Location)
		if err != nil {
			return err
		}
		props["distance_m"] = int64(h.DistanceM + 0.5)
		cc, _ := props["country_code"].(string)
		pid, _ := props["party_id"].(string)
		id, _ := props["id"].(string)
		fc.Features = append(fc.Features, feature{Type: "Feature", ID: cc + "/" + pid + "/" + id,
			Geometry: geometry{Type: "Point", Coordinates: [2]float64{h.Longitude, h.Latitude}}, Properties: props})
	}
	b, err := ocpi.MarshalObject(fc)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/geo+json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, err = w.Write(b)
	return err
}
