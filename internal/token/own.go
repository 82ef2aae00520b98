package token

import (
	"context"
	"encoding/json"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Issue creates or replaces one of ocpihub's own eMSP tokens (the EMSP role,
// party.Service.OwnParty(party.RoleEMSP)) and forwards it to the CPOs, except
// AD_HOC_USER tokens, which are used in commands only. Missing fields get
// defaults: country_code and party_id ours, contract_id the uid, issuer our
// eMSP's business name, valid true, whitelist NEVER (tokens.md §6: app and
// ad-hoc tokens are authorized in real time), last_updated now.
func (s *Service) Issue(ctx context.Context, t ocpi.Token) (*ocpi.Token, error) {
	var out *ocpi.Token
	err := s.db.InSharedRetryUnique(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		out, err = s.IssueTx(ctx, tx, t)
		return err
	})
	return out, err
}

// IssueTx is Issue inside the caller's transaction (a payment flow creates
// its token with the payment).
func (s *Service) IssueTx(ctx context.Context, tx *store.Tx, t ocpi.Token) (*ocpi.Token, error) {
	own, ok := s.parties.OwnParty(party.RoleEMSP)
	if !ok {
		return nil, ocpi.Errorf(ocpi.EINTERNAL, "ocpihub has no eMSP party configured")
	}
	t.CountryCode, t.PartyID = own.CountryCode, own.PartyID
	if t.ContractID == "" {
		t.ContractID = t.UID
	}
	if t.Issuer == "" {
		t.Issuer = s.ownName()
	}
	if t.Valid == nil {
		valid := true
		t.Valid = &valid
	}
	if t.Whitelist == "" {
		t.Whitelist = ocpi.WhitelistNever
	}
	if t.Type == "" {
		t.Type = ocpi.DefaultTokenType
	}
	if t.LastUpdated.IsZero() {
		t.LastUpdated = ocpi.NewDateTime(s.now())
	}
	r := Ref{CountryCode: t.CountryCode, PartyID: t.PartyID, UID: t.UID, Type: t.Type}
	if err := checkToken(&t, r); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(&t)
	if err != nil {
		return nil, err
	}
	body, err := ocpi.Canonical(raw, &t)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.put(ctx, tx, Change{}, r, &t, body); err != nil {
		return nil, err
	}
	return &t, nil
}

// ownName is the business name of our eMSP party.
func (s *Service) ownName() string {
	for _, r := range s.parties.Own() {
		if party.Role(r.Role) == party.RoleEMSP && r.BusinessDetails.Name != "" {
			return r.BusinessDetails.Name
		}
	}
	return "ocpihub"
}
