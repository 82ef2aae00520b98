package payment

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// GetAdvice returns a confirmation the actor may see, in the Price shape of
// the actor's version: the PTP's own, or one of the CPO's payments. A CPO
// naming an id two PTPs use names the PTP with OCPI-to-*.
func (s *Service) GetAdvice(ctx context.Context, a Actor, id string) (json.RawMessage, error) {
	if !a.has(party.RolePTP) && !a.has(party.RoleCPO) {
		return nil, errNotPayments()
	}
	var args []any
	args = append(args, ocpi.Key(id))
	where := "id = $1 AND (" + visibleAdvice(a, &args) + ")"
	if !a.To.IsZero() {
		args = append(args, ocpi.Key(a.To.CountryCode), ocpi.Key(a.To.PartyID))
		where += " AND ptp_country_code = $" + itoa(len(args)-1) + " AND ptp_party_id = $" + itoa(len(args))
	}
	found, err := store.QueryAll(ctx, s.db.Read(), func(row store.Row) ([]byte, error) {
		var b []byte
		return b, row.Scan(&b)
	}, "SELECT body FROM financial_advice WHERE "+where+" ORDER BY pk LIMIT 2", args...)
	if err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "unknown financial advice confirmation " + printable(id)}
	case 1:
		return adviceFor(found[0], a.Version)
	}
	return nil, &ocpi.Error{Code: ocpi.EINVALID, Field: "financial_advice_confirmation_id", Issue: "is used by several PTPs: name one with OCPI-to-*",
		Message: "confirmation " + printable(id) + " exists for several PTPs; send OCPI-to-country-code and OCPI-to-party-id"}
}

// ListAdvice returns a page of the confirmations the actor may see.
func (s *Service) ListAdvice(ctx context.Context, a Actor, p ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
	if !a.has(party.RolePTP) && !a.has(party.RoleCPO) {
		return nil, ocpi.Page{}, errNotPayments()
	}
	var args []any
	where := visibleAdvice(a, &args)
	l := store.List{Table: "financial_advice", Columns: "pk, last_updated, body", Where: []string{"(" + where + ")"}, Args: args}.WithPage(p)
	items, page, err := store.Documents(ctx, s.db.Read(), l)
	if err != nil {
		return nil, page, err
	}
	for i, it := range items {
		if items[i], err = adviceFor(it, a.Version); err != nil {
			return nil, page, err
		}
	}
	return items, page, nil
}

// visibleAdvice is the condition of the confirmations an actor sees: its
// PTP parties' own, and those of its CPO parties' payments.
func visibleAdvice(a Actor, args *[]any) string {
	var conds []string
	if ptps := a.parties(party.RolePTP); len(ptps) > 0 {
		conds = append(conds, partyCond("ptp", ptps, args))
	}
	if cpos := a.parties(party.RoleCPO); len(cpos) > 0 {
		conds = append(conds, partyCond("cpo", cpos, args))
	}
	return strings.Join(conds, " OR ")
}

// adviceFor writes a stored confirmation in the Price shape of version.
func adviceFor(body []byte, version string) (json.RawMessage, error) {
	doc, err := ocpi.ParseObject(body)
	if err != nil {
		return nil, err
	}
	return ocpi.MarshalObject(ocpi.AdviceFor(doc, version))
}
