package ocpi

import "strconv"

// Credentials is the 2.2.1 Credentials object (credentials.md §1).
type Credentials struct {
	Token string            `json:"token"`
	URL   string            `json:"url"`
	Roles []CredentialsRole `json:"roles"`
	// HubPartyID is the 2.3.0 hub identity (country code + party id); only
	// sent to 2.3.0 peers.
	HubPartyID string `json:"hub_party_id,omitempty"`
}

// CredentialsRole is one party hosted by a platform.
type CredentialsRole struct {
	Role            string          `json:"role"`
	BusinessDetails BusinessDetails `json:"business_details"`
	PartyID         string          `json:"party_id"`
	CountryCode     string          `json:"country_code"`
}

// BusinessDetails names a business.
type BusinessDetails struct {
	Name    string `json:"name"`
	Website string `json:"website,omitempty"`
	Logo    *Image `json:"logo,omitempty"`
}

// Image is a picture with its category and type.
type Image struct {
	URL       string `json:"url"`
	Thumbnail string `json:"thumbnail,omitempty"`
	Category  string `json:"category"`
	Type      string `json:"type"`
	Width     *int   `json:"width,omitempty"`
	Height    *int   `json:"height,omitempty"`
}

// ImageCategories are the ImageCategory values.
var ImageCategories = []string{"CHARGER", "ENTRANCE", "LOCATION", "NETWORK", "OPERATOR", "OTHER", "OWNER"}

// Check validates Credentials as a partner sends them; roles lists the Role
// values accepted.
func (c *Credentials) Check(roles []string) error {
	chk := NewCheck("")
	if !ValidToken(c.Token) {
		if c.Token == "" {
			chk.Fail("token", "is required")
		} else {
			chk.Fail("token", "must be 1 to 64 printable ASCII characters without spaces")
		}
	}
	chk.URL("url", c.URL, true)
	if len(c.Roles) == 0 {
		chk.Fail("roles", "must list at least one role")
	}
	seen := map[string]bool{}
	for i, r := range c.Roles {
		sub := chk.Index("roles", i)
		sub.Enum("role", r.Role, roles, true)
		sub.CountryCode("country_code", r.CountryCode, true)
		sub.PartyID("party_id", r.PartyID, true)
		bd := sub.Sub("business_details")
		r.BusinessDetails.check(bd)
		sub.Merge(bd)
		key := r.Role + "/" + Key(r.CountryCode) + "/" + Key(r.PartyID)
		if seen[key] && !sub.Failed() {
			sub.Fail("", "role %s %s/%s is listed twice", r.Role, r.CountryCode, r.PartyID)
		}
		seen[key] = true
		chk.Merge(sub)
	}
	return chk.Err()
}

// Check validates BusinessDetails (the same object in every version).
func (b *BusinessDetails) Check(c *Check) { b.check(c) }

func (b *BusinessDetails) check(c *Check) {
	c.String("name", b.Name, 100, true)
	c.URL("website", b.Website, false)
	if b.Logo != nil {
		l := c.Sub("logo")
		l.URL("url", b.Logo.URL, true)
		l.URL("thumbnail", b.Logo.Thumbnail, false)
		l.Enum("category", b.Logo.Category, ImageCategories, true)
		l.CiString("type", b.Logo.Type, 4, true)
		for _, f := range []struct {
			name string
			v    *int
		}{{"width", b.Logo.Width}, {"height", b.Logo.Height}} {
			if f.v != nil && (*f.v < 0 || len(strconv.Itoa(*f.v)) > 5) {
				l.Fail(f.name, "must be a non-negative integer of at most 5 digits")
			}
		}
		c.Merge(l)
	}
}
