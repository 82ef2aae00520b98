package ocpi

// Token is the 2.2.1 Token (tokens.md §4): what a driver identifies with,
// owned by an eMSP. Its key is (country_code, party_id, uid, type).
type Token struct {
	CountryCode        string          `json:"country_code"`
	PartyID            string          `json:"party_id"`
	UID                string          `json:"uid"`
	Type               string          `json:"type"`
	ContractID         string          `json:"contract_id"`
	VisualNumber       string          `json:"visual_number,omitempty"`
	Issuer             string          `json:"issuer"`
	GroupID            string          `json:"group_id,omitempty"`
	Valid              *bool           `json:"valid"`
	Whitelist          string          `json:"whitelist"`
	Language           string          `json:"language,omitempty"`
	DefaultProfileType string          `json:"default_profile_type,omitempty"`
	EnergyContract     *EnergyContract `json:"energy_contract,omitempty"`
	LastUpdated        DateTime        `json:"last_updated"`
}

// EnergyContract names the driver's own energy supplier.
type EnergyContract struct {
	SupplierName string `json:"supplier_name"`
	ContractID   string `json:"contract_id,omitempty"`
}

// AuthorizationInfo is the answer to a real-time authorization (tokens.md §5).
type AuthorizationInfo struct {
	Allowed                string              `json:"allowed"`
	Token                  *Token              `json:"token"`
	Location               *LocationReferences `json:"location,omitempty"`
	AuthorizationReference string              `json:"authorization_reference,omitempty"`
	Info                   *DisplayText        `json:"info,omitempty"`
}

// LocationReferences names where a driver wants to charge: a location and,
// optionally, the EVSEs in it.
type LocationReferences struct {
	LocationID string   `json:"location_id"`
	EVSEUIDs   []string `json:"evse_uids,omitempty"`
}

// The Tokens enumerations (tokens.md §6; TokenTypes is with the locations).
var (
	AllowedTypes   = []string{"ALLOWED", "BLOCKED", "EXPIRED", "NO_CREDIT", "NOT_ALLOWED"}
	WhitelistTypes = []string{"ALWAYS", "ALLOWED", "ALLOWED_OFFLINE", "NEVER"}
	ProfileTypes   = []string{"CHEAP", "FAST", "GREEN", "REGULAR"}
)

// Whitelist values.
const (
	WhitelistAlways         = "ALWAYS"
	WhitelistAllowed        = "ALLOWED"
	WhitelistAllowedOffline = "ALLOWED_OFFLINE"
	WhitelistNever          = "NEVER"
)

// Allowed values.
const (
	AllowedAllowed    = "ALLOWED"
	AllowedBlocked    = "BLOCKED"
	AllowedExpired    = "EXPIRED"
	AllowedNoCredit   = "NO_CREDIT"
	AllowedNotAllowed = "NOT_ALLOWED"
)

// DefaultTokenType is the type of a token addressed without ?type=.
const DefaultTokenType = "RFID"

// IsValid reports whether the token is valid (false when valid is absent).
func (t *Token) IsValid() bool { return t.Valid != nil && *t.Valid }

// Check validates a Token.
func (t *Token) Check(c *Check) {
	c.CountryCode("country_code", t.CountryCode, true)
	c.PartyID("party_id", t.PartyID, true)
	c.CiString("uid", t.UID, 36, true)
	c.Enum("type", t.Type, TokenTypes, true)
	c.CiString("contract_id", t.ContractID, 36, true)
	c.String("visual_number", t.VisualNumber, 64, false)
	c.String("issuer", t.Issuer, 64, true)
	c.CiString("group_id", t.GroupID, 36, false)
	c.Required("valid", t.Valid != nil)
	c.Enum("whitelist", t.Whitelist, WhitelistTypes, true)
	c.Language("language", t.Language, false)
	c.Enum("default_profile_type", t.DefaultProfileType, ProfileTypes, false)
	if t.EnergyContract != nil {
		sub := c.Sub("energy_contract")
		sub.String("supplier_name", t.EnergyContract.SupplierName, 64, true)
		sub.String("contract_id", t.EnergyContract.ContractID, 64, false)
		c.Merge(sub)
	}
	c.DateTime("last_updated", t.LastUpdated, true)
}

// Check validates LocationReferences.
func (l *LocationReferences) Check(c *Check) {
	c.CiString("location_id", l.LocationID, 36, true)
	seen := map[string]bool{}
	for i, uid := range l.EVSEUIDs {
		sub := c.Index("evse_uids", i)
		sub.CiString("", uid, 36, true)
		if seen[Key(uid)] && !sub.Failed() {
			sub.Fail("", "%q is listed twice", uid)
		}
		seen[Key(uid)] = true
		c.Merge(sub)
	}
}

// Check validates an AuthorizationInfo (as an eMSP answers it).
func (a *AuthorizationInfo) Check(c *Check) {
	c.Enum("allowed", a.Allowed, AllowedTypes, true)
	if c.Required("token", a.Token != nil) {
		sub := c.Sub("token")
		a.Token.Check(sub)
		c.Merge(sub)
	}
	if a.Location != nil {
		sub := c.Sub("location")
		a.Location.Check(sub)
		c.Merge(sub)
	}
	c.CiString("authorization_reference", a.AuthorizationReference, 36, false)
	if a.Info != nil {
		sub := c.Sub("info")
		sub.Language("language", a.Info.Language, true)
		sub.String("text", a.Info.Text, 512, true)
		c.Merge(sub)
	}
}
