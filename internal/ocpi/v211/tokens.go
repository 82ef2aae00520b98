package v211

import (
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Token is the 2.1.1 Token (legacy.md §8): auth_id where 2.2.1 has
// contract_id, two token types, no owner, group or profile fields.
type Token struct {
	UID          string   `json:"uid"`
	Type         string   `json:"type"`
	AuthID       string   `json:"auth_id"`
	VisualNumber string   `json:"visual_number,omitempty"`
	Issuer       string   `json:"issuer"`
	Valid        *bool    `json:"valid"`
	Whitelist    string   `json:"whitelist"`
	Language     string   `json:"language,omitempty"`
	LastUpdated  DateTime `json:"last_updated"`
}

// AuthorizationInfo is the 2.1.1 answer to a real-time authorization: no
// token, no authorization_reference.
type AuthorizationInfo struct {
	Allowed  string              `json:"allowed"`
	Location *LocationReferences `json:"location,omitempty"`
	Info     *ocpi.DisplayText   `json:"info,omitempty"`
}

// LocationReferences names where a token is to be used; 2.1.1 also lists
// connectors.
type LocationReferences struct {
	LocationID   string   `json:"location_id"`
	EVSEUIDs     []string `json:"evse_uids,omitempty"`
	ConnectorIDs []string `json:"connector_ids,omitempty"`
}

// TokenTypes are the 2.1.1 TokenType values.
var TokenTypes = []string{"OTHER", "RFID"}

// FromToken converts a 2.2.1 Token to 2.1.1. An app or ad-hoc user token
// is an OTHER token in 2.1.1.
func FromToken(t *ocpi.Token) (Token, Loss) {
	var loss Loss
	out := Token{UID: t.UID, Type: tokenType(t.Type, &loss), AuthID: t.ContractID, VisualNumber: t.VisualNumber, Issuer: t.Issuer,
		Valid: t.Valid, Whitelist: t.Whitelist, Language: t.Language, LastUpdated: NewDateTime(t.LastUpdated)}
	if t.GroupID != "" {
		loss.Add("group_id", "not in 2.1.1")
	}
	if t.DefaultProfileType != "" {
		loss.Add("default_profile_type", "not in 2.1.1")
	}
	if t.EnergyContract != nil {
		loss.Add("energy_contract", "not in 2.1.1")
	}
	return out, loss
}

func tokenType(t string, loss *Loss) string {
	switch t {
	case "RFID", "OTHER":
		return t
	}
	loss.Add("type", "%s is an OTHER token in 2.1.1", t)
	return "OTHER"
}

// To221 converts a 2.1.1 Token of the eMSP cc/pid to 2.2.1.
func (t *Token) To221(cc, pid string) ocpi.Token {
	return ocpi.Token{CountryCode: cc, PartyID: pid, UID: t.UID, Type: t.Type, ContractID: t.AuthID, VisualNumber: t.VisualNumber,
		Issuer: t.Issuer, Valid: t.Valid, Whitelist: t.Whitelist, Language: t.Language, LastUpdated: t.LastUpdated.Time()}
}

// Check validates what is particular to a 2.1.1 Token.
func (t *Token) Check(c *ocpi.Check) {
	c.String("uid", t.UID, 36, true)
	c.Enum("type", t.Type, TokenTypes, true)
	c.String("auth_id", t.AuthID, 36, true)
	c.String("visual_number", t.VisualNumber, 64, false)
	c.String("issuer", t.Issuer, 64, true)
	c.Required("valid", t.Valid != nil)
	c.Enum("whitelist", t.Whitelist, ocpi.WhitelistTypes, true)
	c.DateTime("last_updated", t.LastUpdated.Time(), true)
}

// TokenPatchFrom221 converts a 2.2.1 token PATCH to 2.1.1, field by field;
// ok is false when nothing a 2.1.1 receiver knows is left.
func TokenPatchFrom221(patch ocpi.Object) (ocpi.Object, Loss, bool) {
	var loss Loss
	out := ocpi.Object{}
	for k, v := range patch {
		switch k {
		case "country_code", "party_id":
		case "contract_id":
			out["auth_id"] = v
		case "type":
			s, _ := v.(string)
			out[k] = tokenType(s, &loss)
		case "group_id", "default_profile_type", "energy_contract":
			loss.Add(k, "not in 2.1.1")
		case "last_updated":
			out[k] = legacyTime(v)
		default:
			out[k] = v
		}
	}
	for k := range out {
		if k != "last_updated" {
			return out, loss, true
		}
	}
	return nil, loss, false
}

// TokenPatchTo221 converts a 2.1.1 token PATCH to 2.2.1.
func TokenPatchTo221(patch ocpi.Object) ocpi.Object {
	out := ocpi.Object{}
	for k, v := range patch {
		if k == "auth_id" {
			k = "contract_id"
		}
		out[k] = v
	}
	return out
}

// FromAuthorizationInfo converts a 2.2.1 AuthorizationInfo to 2.1.1 (the
// token and authorization_reference have no place there).
func FromAuthorizationInfo(a *ocpi.AuthorizationInfo) AuthorizationInfo {
	out := AuthorizationInfo{Allowed: a.Allowed, Info: a.Info}
	if a.Location != nil {
		out.Location = &LocationReferences{LocationID: a.Location.LocationID, EVSEUIDs: a.Location.EVSEUIDs}
	}
	return out
}

// To221 converts a 2.1.1 AuthorizationInfo to 2.2.1 with the token it is
// about (2.2.1 requires it; the hub has it).
func (a *AuthorizationInfo) To221(tok *ocpi.Token) (ocpi.AuthorizationInfo, Loss) {
	var loss Loss
	out := ocpi.AuthorizationInfo{Allowed: a.Allowed, Token: tok, Info: a.Info}
	if a.Location != nil {
		out.Location = a.Location.To221(&loss)
	}
	return out, loss
}

// To221 converts 2.1.1 LocationReferences to 2.2.1 (connector_ids dropped).
func (l *LocationReferences) To221(loss *Loss) *ocpi.LocationReferences {
	if len(l.ConnectorIDs) > 0 {
		loss.Add("location.connector_ids", "not in 2.2.1")
	}
	return &ocpi.LocationReferences{LocationID: l.LocationID, EVSEUIDs: l.EVSEUIDs}
}
