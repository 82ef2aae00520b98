package location

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Search limits.
const (
	DefaultRadius   = 5_000  // metres
	MaxRadius       = 50_000 // metres
	DefaultResults  = 20
	MaxResults      = 100
	searchCandidate = 5_000 // rows read from the bounding box at most
)

// Query is a driver's search: locations within RadiusM metres of a point,
// optionally with a connector of one of ConnectorTypes, of at least MinPowerW
// watts, on an EVSE that is AVAILABLE now.
type Query struct {
	LatE7, LonE7   int64
	RadiusM        int
	ConnectorTypes []string
	MinPowerW      int64
	Available      bool
	Limit          int
}

// Hit is a location found by Search.
type Hit struct {
	Location  json.RawMessage
	DistanceM float64
	Latitude  float64
	Longitude float64
}

// Search finds published, not expired locations near a point. A bounding box
// on the indexed coordinates (lat_e7, lon_e7) picks the candidates, an EXISTS
// on the evses index drops those without a matching EVSE, and the exact
// distance and connector filters run on what is left. Results are ordered by
// distance. The box does not wrap at ±180° longitude.
func (s *Service) Search(ctx context.Context, q Query) ([]Hit, error) {
	if q.RadiusM <= 0 {
		q.RadiusM = DefaultRadius
	}
	q.RadiusM = min(q.RadiusM, MaxRadius)
	if q.Limit <= 0 {
		q.Limit = DefaultResults
	}
	q.Limit = min(q.Limit, MaxResults)
	lat, lon := float64(q.LatE7)/1e7, float64(q.LonE7)/1e7
	dLat := float64(q.RadiusM) / 111_320.0
	cos := math.Cos(lat * math.Pi / 180)
	dLon := 180.0
	if cos > 1e-6 {
		dLon = math.Min(180, dLat/cos)
	}
	args := []any{
		int64(math.Floor((lat - dLat) * 1e7)), int64(math.Ceil((lat + dLat) * 1e7)),
		int64(math.Floor((lon - dLon) * 1e7)), int64(math.Ceil((lon + dLon) * 1e7)),
	}
	evseConds := []string{"e.status <> 'REMOVED'"}
	if q.Available {
		evseConds = append(evseConds, "e.status = 'AVAILABLE'")
	}
	if q.MinPowerW > 0 {
		args = append(args, q.MinPowerW)
		evseConds = append(evseConds, fmt.Sprintf("e.max_power_w >= $%d", len(args)))
	}
	if len(q.ConnectorTypes) > 0 {
		var ors []string
		for _, t := range q.ConnectorTypes {
			args = append(args, "%,"+t+",%")
			ors = append(ors, fmt.Sprintf("e.connector_types LIKE $%d", len(args)))
		}
		evseConds = append(evseConds, "("+strings.Join(ors, " OR ")+")")
	}
	query := `SELECT l.lat_e7, l.lon_e7, l.body FROM locations l
		WHERE l.publish = TRUE AND l.evses_active > 0
		AND l.lat_e7 BETWEEN $1 AND $2 AND l.lon_e7 BETWEEN $3 AND $4
		AND EXISTS (SELECT 1 FROM evses e WHERE e.location_pk = l.pk AND ` + strings.Join(evseConds, " AND ") + `)
		LIMIT ` + fmt.Sprint(searchCandidate)
	rows, err := s.db.Read().Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var la, lo int64
		var body []byte
		if err := rows.Scan(&la, &lo, &body); err != nil {
			return nil, err
		}
		h := Hit{Latitude: float64(la) / 1e7, Longitude: float64(lo) / 1e7}
		h.DistanceM = haversine(lat, lon, h.Latitude, h.Longitude)
		if h.DistanceM > float64(q.RadiusM) {
			continue
		}
		if !matches(body, q) {
			continue
		}
		h.Location = body
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].DistanceM < hits[j].DistanceM })
	if len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	return hits, nil
}

// matches applies the connector filters exactly: one connector of an EVSE
// (not REMOVED; AVAILABLE when asked) must satisfy type and power together.
func matches(body []byte, q Query) bool {
	if len(q.ConnectorTypes) == 0 && q.MinPowerW == 0 && !q.Available {
		return true
	}
	var loc ocpi.Location
	if json.Unmarshal(body, &loc) != nil {
		return false
	}
	for _, e := range loc.EVSEs {
		if e.Status == "REMOVED" || (q.Available && e.Status != "AVAILABLE") {
			continue
		}
		for _, k := range e.Connectors {
			if len(q.ConnectorTypes) > 0 && !slices.Contains(q.ConnectorTypes, k.Standard) {
				continue
			}
			if k.PowerW() < q.MinPowerW {
				continue
			}
			return true
		}
	}
	return false
}

// haversine returns the great-circle distance in metres.
func haversine(lat1, lon1, lat2, lon2 float64) float64 {
	const r = 6_371_008.8
	rad := math.Pi / 180
	dLat, dLon := (lat2-lat1)*rad, (lon2-lon1)*rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * r * math.Asin(math.Min(1, math.Sqrt(a)))
}
