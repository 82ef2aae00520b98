package app

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/pg"
)

// PaymentGateway is the payment gateway a hub uses, with the built-in
// simulator behind it when the hub runs one.
type PaymentGateway struct {
	pg.Gateway
	// Sim is the simulator (dev mode without --pg-base-url, or the
	// sandbox), or nil when the hub talks to a real PG.
	Sim Closer
}

// Close stops the built-in simulator, if any.
func (p *PaymentGateway) Close() {
	if p.Sim != nil {
		p.Sim.Close()
	}
}

// NewPaymentGateway builds the gateway the --pg-* settings describe.
//
//   - --pg-base-url set: a Razorpay-compatible client at that URL, with
//     --pg-key-id and --pg-key-secret as credentials; webhooks verified with
//     --pg-webhook-secret (a comma-separated list: the current secret first,
//     then previous ones still accepted during a rotation).
//   - no base URL in dev mode (--dev) or in the sandbox instance (whose
//     configuration never carries PG settings), when sims can start a PG
//     simulator (ocpihub-dev, the demo, the tests): it is started on a
//     loopback port and used through the same client. It sends its
//     signed webhooks to webhookURL (the hub's
//     /ocpi/2.2.1/payments/upi/webhook), with the configured keys and
//     webhook secret or the simulator's defaults.
//   - no base URL otherwise: pg.ErrNotConfigured; UPI payments are off.
func NewPaymentGateway(cfg Config, webhookURL string, logger *slog.Logger, clk clock.Clock, sims Simulators) (*PaymentGateway, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pc := pg.Config{
		BaseURL:        cfg.PGBaseURL,
		KeyID:          cfg.PGKeyID,
		KeySecret:      cfg.PGKeySecret,
		WebhookSecrets: pg.SplitSecrets(cfg.PGWebhookSecret),
		Logger:         logger.With("component", "pg"),
		Clock:          clk,
		Guard:          cfg.OutboundGuard(),
	}
	if pc.BaseURL != "" {
		c, err := pg.NewClient(pc)
		if err != nil {
			return nil, err
		}
		return &PaymentGateway{Gateway: c}, nil
	}
	if (!cfg.DevMode && !cfg.Sandbox) || sims.PG == nil {
		return nil, pg.ErrNotConfigured
	}
	so := PGSimOptions{KeyID: pc.KeyID, KeySecret: pc.KeySecret, WebhookURL: webhookURL, Clock: clk, Logger: logger.With("component", "pgsim")}
	if len(pc.WebhookSecrets) > 0 {
		so.WebhookSecret = pc.WebhookSecrets[0]
	}
	sim, err := sims.PG(so)
	if err != nil {
		return nil, errors.Join(errors.New("start the built-in PG simulator"), err)
	}
	pc.BaseURL, pc.KeyID, pc.KeySecret = sim.URL, sim.KeyID, sim.KeySecret
	// The simulator is the hub's own, on a loopback port: that one
	// address is allowed whatever the operator's allow-list says.
	simRule, err := netguard.ParseRule(strings.TrimPrefix(sim.URL, "http://"))
	if err != nil {
		sim.Server.Close()
		return nil, fmt.Errorf("the built-in PG simulator's address: %w", err)
	}
	pc.Guard = pc.Guard.With(simRule)
	if len(pc.WebhookSecrets) == 0 {
		pc.WebhookSecrets = []string{sim.WebhookSecret}
	}
	c, err := pg.NewClient(pc)
	if err != nil {
		sim.Server.Close()
		return nil, err
	}
	logger.Warn("dev mode: using the built-in payment gateway simulator; set --pg-base-url for a real PG", "pg_url", sim.URL)
	return &PaymentGateway{Gateway: c, Sim: sim.Server}, nil
}
