package party_test

import (
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

func TestCheckOwner(t *testing.T) {
	t.Parallel()
	platform := &party.Caller{Kind: party.CallerPlatform, PlatformID: 7, Status: party.StatusConnected, Roles: []party.PartyRef{
		{Role: party.RoleCPO, CountryCode: "NL", PartyID: "ACM"},
		{Role: party.RoleEMSP, CountryCode: "NL", PartyID: "ACM"},
		{Role: party.RoleCPO, CountryCode: "BE", PartyID: "ACB"},
	}}
	for _, tc := range []struct {
		name    string
		caller  *party.Caller
		role    party.Role
		cc, pid string
		want    *party.PartyRef
	}{
		{"own CPO party", platform, party.RoleCPO, "NL", "ACM", &party.PartyRef{Role: party.RoleCPO, CountryCode: "NL", PartyID: "ACM"}},
		{"CiString: case does not matter", platform, party.RoleCPO, "be", "acb", &party.PartyRef{Role: party.RoleCPO, CountryCode: "BE", PartyID: "ACB"}},
		{"any role", platform, "", "NL", "ACM", &party.PartyRef{Role: party.RoleCPO, CountryCode: "NL", PartyID: "ACM"}},
		{"own party in another role", platform, party.RoleEMSP, "BE", "ACB", nil},
		{"another platform's party", platform, party.RoleCPO, "DE", "XYZ", nil},
		{"the hub's own party", platform, party.RoleEMSP, "IN", "OHE", nil},
		{"empty segments", platform, party.RoleCPO, "", "", nil},
		{"malformed segments", platform, party.RoleCPO, "NL\n", "ACM\x00", nil},
		{"prefix of an own party", platform, party.RoleCPO, "N", "AC", nil},
		{"token A holder", &party.Caller{Kind: party.CallerRegistering, Roles: platform.Roles}, party.RoleCPO, "NL", "ACM", nil},
		{"admin", &party.Caller{Kind: party.CallerAdmin}, party.RoleCPO, "NL", "ACM", nil},
		{"no caller", nil, party.RoleCPO, "NL", "ACM", nil},
	} {
		got, err := tc.caller.CheckOwner(tc.role, tc.cc, tc.pid)
		if tc.want != nil {
			if err != nil || got != *tc.want {
				t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, *tc.want)
			}
			continue
		}
		var e *ocpi.Error
		if !errorsAs(err, &e) || e.Code != ocpi.ENOTFOUND || got != (party.PartyRef{}) {
			t.Errorf("%s: %+v, %v; want ENOTFOUND", tc.name, got, err)
			continue
		}
		// The answer names only what the caller sent, and nothing of others.
		if strings.Contains(e.Message, "\n") || strings.Contains(e.Message, "platform") || strings.Contains(e.Message, "\x00") {
			t.Errorf("%s: message %q discloses too much", tc.name, e.Message)
		}
	}
}
