package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/payment"
)

type directView struct {
	Flagged []*payment.Advice
	Pager   Pager
}

type directChainView struct {
	*payment.Chain
	TerminalIDs []string
	Session     string
	CDR         string
}

// PageTitle names the page after the payment's reference.
func (v directChainView) PageTitle() string { return "Direct payment " + v.AuthorizationReference }

// directPages are Direct Payment's (payment terminals): the financial
// advice confirmations that need the operator, and one payment's chain by
// authorization_reference.
func (c *Console) directPages() ([]Page, []Action) {
	if c.cfg.Payments == nil {
		return nil, nil
	}
	return []Page{
			{
				Path: "/direct-payments", Title: "Direct Payment", Section: "Payments", Nav: "Direct Payment", Template: "direct", Refresh: 30,
				Load: func(r *http.Request) (any, error) {
					_, total, err := c.cfg.Payments.Flagged(r.Context(), 1, 0)
					if err != nil {
						return nil, err
					}
					lo, hi, pager := OffsetPager(r, int(total), 50)
					var list []*payment.Advice
					if hi > lo {
						if list, _, err = c.cfg.Payments.Flagged(r.Context(), hi-lo, lo); err != nil {
							return nil, err
						}
					}
					return directView{Flagged: list, Pager: pager}, nil
				},
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
						v.Session = prettyJSON(ch.Session)
					}
					if len(ch.CDR) > 0 {
						v.CDR = prettyJSON(ch.CDR)
					}
					return v, nil
				},
			},
		}, []Action{{
			Path: "/direct-payments/advice/{record}/resolve",
			Do: func(r *http.Request) (Result, error) {
				id, err := pathInt(r, "record")
				if err != nil {
					return Result{Redirect: "/direct-payments"}, err
				}
				a, err := c.cfg.Payments.Resolve(r.Context(), id, r.PostFormValue("note"))
				if err != nil {
					return Result{Redirect: "/direct-payments"}, err
				}
				c.logger.InfoContext(r.Context(), "console: financial advice resolved", "record_id", id)
				return Result{Redirect: "/direct-payments", Flash: fmt.Sprintf("Confirmation %s (%s) is resolved.", a.ID, a.AuthorizationReference)}, nil
			},
		}}
}
