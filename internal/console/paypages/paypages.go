// Package paypages is the console's payments area: UPI payments and refunds with each payment's chain, and
// Direct Payment's flagged advice and terminals.
package paypages

import (
	"log/slog"
	"net/http"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/payment"
	"github.com/ocpihub/ocpihub/internal/upi"
)

// Config is what the payments pages need from the console.
type Config struct {
	// UPI is QR charging paid by UPI (nil: no payments pages).
	UPI *upi.Service
	// Payments is Direct Payment through terminals (nil: no such page).
	Payments *payment.Service
	// LinkDirectory and LinkCommands link a payment's chain to the
	// directory and commands pages (when the console has them).
	LinkDirectory, LinkCommands bool
	// PartyOptions lists the parties of the given roles for a filter's
	// choices ("IN/ACM").
	PartyOptions func(r *http.Request, roles ...party.Role) ([]string, error)
	Clock        clock.Clock
	Logger       *slog.Logger
}

type pages struct {
	cfg    Config
	clock  clock.Clock
	logger *slog.Logger
}

// Pages returns the area's pages and actions, in navigation order.
func Pages(cfg Config) ([]ui.Page, []ui.Action) {
	c := &pages{cfg: cfg, clock: cfg.Clock, logger: cfg.Logger}
	pp, pa := c.paymentPages()
	dp, da := c.directPages()
	return append(pp, dp...), append(pa, da...)
}
