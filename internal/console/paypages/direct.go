package paypages

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/payment"
)

type directView struct {
	Flagged []*payment.Advice
	Pager   ui.Pager
}

// directTerminalsView is the operator's list of every PTP's terminals.
type directTerminalsView struct {
	Terminals []*payment.TerminalSummary
	Pager     ui.Pager
	PTPs      []string
	CPOs      []string
}

// directTerminalsPageSize is the rows of a terminals page.
const directTerminalsPageSize = 50

type directChainView struct {
	*payment.Chain
	TerminalIDs []string
	Session     string
	CDR         string
}

// PageTitle names the page after the payment's reference.
func (v directChainView) PageTitle() string { return "Direct payment " + v.AuthorizationReference }

// directPages are Direct Payment's (payment terminals): the financial
// advice confirmations that need the operator, every PTP's terminals with
// what they serve, and one payment's chain by authorization_reference.
func (c *pages) directPages() ([]ui.Page, []ui.Action) {
	if c.cfg.Payments == nil {
		return nil, nil
	}
	return []ui.Page{
			{
				Path: "/direct-payments", Title: "Direct Payment", Section: "Payments", Nav: "Direct Payment", Template: "direct", Refresh: 30,
				Load: func(r *http.Request) (any, error) {
					list, pager, err := ui.CountedPage(r, 50, func() (int, error) {
						_, total, err := c.cfg.Payments.Flagged(r.Context(), 1, 0)
						return int(total), err
					}, func(offset, limit int) ([]*payment.Advice, error) {
						list, _, err := c.cfg.Payments.Flagged(r.Context(), limit, offset)
						return list, err
					})
					if err != nil {
						return nil, err
					}
					return directView{Flagged: list, Pager: pager}, nil
				},
			},
			{
				Path: "/direct-payments/terminals", Title: "Payment terminals", Template: "direct_terminals", Refresh: 30,
				Load: c.loadDirectTerminals,
			},
			{
				Path: "/direct-payments/chain", Title: "Direct payment", Template: "direct_chain",
				Load: func(r *http.Request) (any, error) {
					ref := strings.TrimSpace(r.URL.Query().Get("reference"))
					if ref == "" {
						return nil, ocpi.Invalid("reference", "is required: the payment's authorization_reference")
					}
					ch, err := c.cfg.Payments.Chain(r.Context(), ref)
					if err != nil {
						return nil, err
					}
					v := directChainView{Chain: ch}
					for _, t := range ch.Terminals {
						var term struct {
							ID string `json:"terminal_id"`
						}
						if json.Unmarshal(t, &term) == nil {
							v.TerminalIDs = append(v.TerminalIDs, term.ID)
						}
					}
					if len(ch.Session) > 0 {
						v.Session = ui.PrettyJSON(ch.Session)
					}
					if len(ch.CDR) > 0 {
						v.CDR = ui.PrettyJSON(ch.CDR)
					}
					return v, nil
				},
			},
		}, []ui.Action{{
			Path: "/direct-payments/advice/{record}/resolve",
			Do: func(r *http.Request) (ui.Result, error) {
				id, err := ui.PathInt(r, "record")
				if err != nil {
					return ui.Result{Redirect: "/direct-payments"}, err
				}
				a, err := c.cfg.Payments.Resolve(r.Context(), id, r.PostFormValue("note"))
				if err != nil {
					return ui.Result{Redirect: "/direct-payments"}, err
				}
				c.logger.InfoContext(r.Context(), "console: financial advice resolved", "record_id", id)
				return ui.Result{Redirect: "/direct-payments", Flash: fmt.Sprintf("Confirmation %s (%s) is resolved.", a.ID, a.AuthorizationReference)}, nil
			},
		}}
}

// loadDirectTerminals lists the terminals of every PTP, newest first,
// filtered by PTP and CPO party ("NL-PAY"), paged forward by keyset.
func (c *pages) loadDirectTerminals(r *http.Request) (any, error) {
	q := r.URL.Query()
	ptp, err := ui.PartyParam(q.Get("ptp"), "ptp")
	if err != nil {
		return nil, err
	}
	cpo, err := ui.PartyParam(q.Get("cpo"), "cpo")
	if err != nil {
		return nil, err
	}
	f := payment.TerminalFilter{PTP: ptp, CPO: cpo, Limit: directTerminalsPageSize}
	if a := q.Get("after"); a != "" {
		if f.After, err = strconv.ParseInt(a, 10, 64); err != nil || f.After <= 0 {
			return nil, ocpi.Invalid("after", "must be a positive record id")
		}
	}
	list, more, err := c.cfg.Payments.Terminals(r.Context(), f)
	if err != nil {
		return nil, err
	}
	var last int64
	if len(list) > 0 {
		last = list[len(list)-1].RecordID
	}
	v := directTerminalsView{Terminals: list, Pager: ui.KeysetPager(r, len(list), last, more)}
	if v.PTPs, err = c.cfg.PartyOptions(r, party.RolePTP); err != nil {
		return nil, err
	}
	if v.CPOs, err = c.cfg.PartyOptions(r, party.RoleCPO); err != nil {
		return nil, err
	}
	return v, nil
}
