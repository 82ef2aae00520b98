package console

import (
	"net/http"
	"slices"

	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/token"
)

type tokensView struct {
	Tokens     []ocpi.Token
	Pager      ui.Pager
	EMSPs      []string
	Whitelists []string
}

func (c *Console) tokenPages() ([]ui.Page, []ui.Action) {
	if c.cfg.Tokens == nil {
		return nil, nil
	}
	return []ui.Page{{
		Path: "/tokens", Title: "Tokens", Section: "Charging", Nav: "Tokens", Template: "tokens",
		Load: func(r *http.Request) (any, error) {
			q := r.URL.Query()
			p, err := ui.PartyParam(q.Get("party"), "party")
			if err != nil {
				return nil, err
			}
			f := token.BrowseFilter{CountryCode: p.CountryCode, PartyID: p.PartyID, Valid: q.Get("valid"), Whitelist: q.Get("whitelist"), UID: q.Get("uid"), Limit: 50}
			if f.Whitelist != "" && !slices.Contains(ocpi.WhitelistTypes, f.Whitelist) {
				return nil, ocpi.Invalid("whitelist", "must be a whitelist type")
			}
			f.Offset = pageOffset(q, f.Limit)
			list, total, err := c.cfg.Tokens.Browse(r.Context(), f)
			if err != nil {
				return nil, err
			}
			v := tokensView{Tokens: list, Whitelists: ocpi.WhitelistTypes}
			_, _, v.Pager = ui.OffsetPager(r, int(total), f.Limit)
			if v.EMSPs, err = c.partyOptions(r, party.RoleEMSP); err != nil {
				return nil, err
			}
			return v, nil
		},
	}}, nil
}
