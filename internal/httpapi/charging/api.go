// Package charging serves the OCPI modules of a charging session: tokens,
// sessions, CDRs, commands and charging profiles (2.2.1), and Direct
// Payment (the 2.3.0 Payments module and the PTP's commands), with the
// operator's views of commands and payments. It declares their route
// rows; httpapi assembles them.
package charging

import (
	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/payment"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/token"
)

// Services are what the charging routes call (the fields of httpapi.Config
// of the same names).
type Services struct {
	Tokens   *token.Service
	Sessions *session.Service
	CDRs     *cdr.Service
	Commands *command.Service
	Payments *payment.Service
}

// handlers answer the charging routes through the kit.
type handlers struct {
	*kit.Kit
	cfg Services
}

// Modules returns the charging modules: tokens to charging profiles, then
// Direct Payment.
func Modules(k *kit.Kit, svc Services) []route.Module {
	s := &handlers{Kit: k, cfg: svc}
	return []route.Module{s.sessionRows(), s.paymentRows()}
}
