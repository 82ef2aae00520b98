package httpapi

import (
	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// TestOwnerOf runs ownerOf behind a real route pattern: the path values are
// what ServeMux extracts, escapes included.
func TestOwnerOf(t *testing.T) {
	t.Parallel()
	cpo := &party.Caller{Kind: party.CallerPlatform, Status: party.StatusConnected, Roles: []party.PartyRef{
		{Role: party.RoleCPO, CountryCode: "NL", PartyID: "ACM"},
	}}
	s := New(Config{})
	var stored []party.PartyRef
	mux := http.NewServeMux()
	mux.Handle("PUT /ocpi/2.2.1/cpo/locations/{country_code}/{party_id}/{id}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		owner, err := kit.OwnerOf(r, party.RoleCPO)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		stored = append(stored, owner)
		_ = s.kit.OK(w, nil)
	}))
	for _, tc := range []struct {
		name   string
		caller *party.Caller
		path   string
		want   int
	}{
		{"own party", cpo, "/ocpi/2.2.1/cpo/locations/NL/ACM/LOC1", http.StatusOK},
		{"own party, lower case", cpo, "/ocpi/2.2.1/cpo/locations/nl/acm/LOC1", http.StatusOK},
		{"another party", cpo, "/ocpi/2.2.1/cpo/locations/DE/XYZ/LOC1", http.StatusNotFound},
		{"escaped segment", cpo, "/ocpi/2.2.1/cpo/locations/NL/AC%4D%00/LOC1", http.StatusNotFound},
		{"same party id, other country", cpo, "/ocpi/2.2.1/cpo/locations/BE/ACM/LOC1", http.StatusNotFound},
		{"the right party in the wrong role", &party.Caller{Kind: party.CallerPlatform, Roles: []party.PartyRef{{Role: party.RoleEMSP, CountryCode: "NL", PartyID: "ACM"}}},
			"/ocpi/2.2.1/cpo/locations/NL/ACM/LOC1", http.StatusNotFound},
		{"admin", &party.Caller{Kind: party.CallerAdmin}, "/ocpi/2.2.1/cpo/locations/NL/ACM/LOC1", http.StatusNotFound},
		{"no caller", nil, "/ocpi/2.2.1/cpo/locations/NL/ACM/LOC1", http.StatusNotFound},
	} {
		stored = nil
		req := httptest.NewRequest(http.MethodPut, tc.path, nil)
		if tc.caller != nil {
			req = req.WithContext(party.WithCaller(req.Context(), tc.caller))
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s: HTTP %d, want %d: %s", tc.name, rec.Code, tc.want, rec.Body)
			continue
		}
		env, err := ocpi.DecodeEnvelope(rec.Body.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.want == http.StatusOK {
			if len(stored) != 1 || stored[0] != (party.PartyRef{Role: party.RoleCPO, CountryCode: "NL", PartyID: "ACM"}) {
				t.Errorf("%s: owner %+v", tc.name, stored)
			}
			continue
		}
		if len(stored) != 0 || env.StatusCode != ocpi.StatusClientError {
			t.Errorf("%s: stored %+v, status_code %d", tc.name, stored, env.StatusCode)
		}
	}
}
