package location_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
)

// TestDriverSearch: the public search finds published locations within the
// radius, nearest first, filtered by connector type, power and availability,
// as OCPI objects or GeoJSON; unpublished and expired locations are hidden.
func TestDriverSearch(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		// Around MG Road, Bengaluru (12.97560, 77.60600).
		near := locationJSON("NL", "CP1", "NEAR", "12.97600", "77.60600", hubtest.Stamp(0), "E1:AVAILABLE")
		fast := locationJSON("NL", "CP1", "FAST", "12.98500", "77.60600", hubtest.Stamp(0), "E1:CHARGING", "E2:AVAILABLE")
		fast["evses"].([]any)[1].(map[string]any)["connectors"] = []any{connectorJSON("1", "IEC_62196_T2_COMBO", "DC", 920, 163, hubtest.Stamp(0))}
		far := locationJSON("NL", "CP1", "FAR", "13.10000", "77.60600", hubtest.Stamp(0), "E1:AVAILABLE")
		hidden := locationJSON("NL", "CP1", "HIDDEN", "12.97570", "77.60600", hubtest.Stamp(0), "E1:AVAILABLE")
		hidden["publish"] = false
		gone := locationJSON("NL", "CP1", "GONE", "12.97580", "77.60600", hubtest.Stamp(0), "E1:REMOVED")
		for _, l := range []map[string]any{near, fast, far, hidden, gone} {
			if err := b.CPO.PutLocation(b.ctx, l["id"].(string), l); err != nil {
				t.Fatal(err)
			}
		}
		search := func(query string) (int, []string) {
			t.Helper()
			resp := b.h.Do(t, http.MethodGet, "/api/locations?"+query, "", nil, nil)
			if resp.HTTPStatus != http.StatusOK {
				return resp.HTTPStatus, nil
			}
			var env struct {
				Data []map[string]any `json:"data"`
			}
			if err := json.Unmarshal(resp.Body, &env); err != nil {
				t.Fatalf("search answer: %s", resp.Body)
			}
			var ids []string
			for _, l := range env.Data {
				ids = append(ids, l["id"].(string))
			}
			return resp.HTTPStatus, ids
		}
		tests := []struct {
			query string
			want  []string
		}{
			{"lat=12.97560&lon=77.60600&radius=2000", []string{"NEAR", "FAST"}},
			{"lat=12.97560&lon=77.60600&radius=50000", []string{"NEAR", "FAST", "FAR"}},
			{"lat=12.97560&lon=77.60600&radius=2000&connector_type=IEC_62196_T2_COMBO", []string{"FAST"}},
			{"lat=12.97560&lon=77.60600&radius=2000&min_power=50", []string{"FAST"}},
			{"lat=12.97560&lon=77.60600&radius=2000&min_power=50&available=true", []string{"FAST"}},
			{"lat=12.97560&lon=77.60600&radius=2000&connector_type=IEC_62196_T2&available=true", []string{"NEAR"}},
			{"lat=12.97560&lon=77.60600&radius=2000&limit=1", []string{"NEAR"}},
			{"lat=0.00000&lon=0.00000", nil},
		}
		for _, tt := range tests {
			status, got := search(tt.query)
			if status != http.StatusOK || len(got) != len(tt.want) {
				t.Errorf("%s: HTTP %d %v, want %v", tt.query, status, got, tt.want)
				continue
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("%s: %v, want %v", tt.query, got, tt.want)
					break
				}
			}
		}
		for _, bad := range []string{"lon=77.6", "lat=95&lon=77.6", "lat=12.9&lon=77.6&radius=0", "lat=12.9&lon=77.6&connector_type=TYPE2", "lat=12.9&lon=77.6&min_power=-1"} {
			resp := b.h.Do(t, http.MethodGet, "/api/locations?"+bad, "", nil, nil)
			if resp.HTTPStatus != http.StatusOK || !json.Valid(resp.Body) || !strings.Contains(string(resp.Body), `"status_code":2001`) {
				t.Errorf("%s: HTTP %d %s, want 2001", bad, resp.HTTPStatus, resp.Body)
			}
		}
		resp := b.h.Do(t, http.MethodGet, "/api/locations?lat=12.97560&lon=77.60600&radius=2000&format=geojson", "", nil, nil)
		var fc struct {
			Type     string `json:"type"`
			Features []struct {
				ID       string `json:"id"`
				Geometry struct {
					Type        string     `json:"type"`
					Coordinates [2]float64 `json:"coordinates"`
				} `json:"geometry"`
				Properties map[string]any `json:"properties"`
			} `json:"features"`
		}
		if err := json.Unmarshal(resp.Body, &fc); err != nil || resp.Header.Get("Content-Type") != "application/geo+json" {
			t.Fatalf("GeoJSON: %s %s", resp.Header.Get("Content-Type"), resp.Body)
		}
		if fc.Type != "FeatureCollection" || len(fc.Features) != 2 || fc.Features[0].ID != "NL/CP1/NEAR" ||
			fc.Features[0].Geometry.Coordinates != [2]float64{77.606, 12.976} || fc.Features[0].Properties["distance_m"] != float64(44) {
			t.Errorf("GeoJSON features: %+v", fc.Features)
		}
	})
}
