package v211

import (
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Credentials is the 2.1.1 and 2.0 Credentials object: one party per
// connection, without a role (credentials.md, 2.1.1 / 2.0).
type Credentials struct {
	Token           string               `json:"token"`
	URL             string               `json:"url"`
	BusinessDetails ocpi.BusinessDetails `json:"business_details"`
	PartyID         string               `json:"party_id"`
	CountryCode     string               `json:"country_code"`
}

// To221 returns the 2.2.1 form: the single party in role, which the legacy
// object cannot say; it comes from where the credentials were exchanged.
func (c Credentials) To221(role string) ocpi.Credentials {
	return ocpi.Credentials{Token: c.Token, URL: c.URL, Roles: []ocpi.CredentialsRole{{
		Role: role, BusinessDetails: c.BusinessDetails, PartyID: c.PartyID, CountryCode: c.CountryCode,
	}}}
}

// FromCredentials returns the legacy form of 2.2.1 credentials, presenting
// the party of role (the first party when none has it). Only one party fits:
// the others are reported lost.
func FromCredentials(c ocpi.Credentials, role string) (Credentials, Loss) {
	var loss Loss
	out := Credentials{Token: c.Token, URL: c.URL}
	pick := -1
	for i, r := range c.Roles {
		if r.Role == role {
			pick = i
			break
		}
	}
	if pick < 0 && len(c.Roles) > 0 {
		pick = 0
	}
	for i, r := range c.Roles {
		if i == pick {
			out.BusinessDetails, out.PartyID, out.CountryCode = r.BusinessDetails, r.PartyID, r.CountryCode
			continue
		}
		loss.Add(index("roles", i), "%s %s/%s has no place in single-party legacy credentials", r.Role, r.CountryCode, r.PartyID)
	}
	return out, loss
}

// Check validates credentials a legacy partner sends (2.0 tokens have no
// length limit, but ours are stored in the same column, so 64 applies).
func (c *Credentials) Check() error {
	chk := ocpi.NewCheck("")
	if !ocpi.ValidToken(c.Token) {
		if c.Token == "" {
			chk.Fail("token", "is required")
		} else {
			chk.Fail("token", "must be 1 to 64 printable ASCII characters without spaces")
		}
	}
	chk.URL("url", c.URL, true)
	chk.CountryCode("country_code", c.CountryCode, true)
	chk.PartyID("party_id", c.PartyID, true)
	bd := chk.Sub("business_details")
	c.BusinessDetails.Check(bd)
	chk.Merge(bd)
	return chk.Err()
}
