package app

import (
	"errors"

	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/upi"
)

// UPIWebhookPath is where the payment gateway sends its webhooks.
const UPIWebhookPath = "/ocpi/2.2.1/payments/upi/webhook"

// buildUPI assembles QR charging: the payment gateway the --pg-* settings
// describe (the built-in simulator in dev mode), the notifier, and the UPI
// service over the directory. Without a gateway, QR mappings still work and
// the landing page says payments are off. CLI commands (insertOnly) never
// start a simulator: the running hub works the payment jobs.
func (a *App) buildUPI(insertOnly bool) error {
	cfg := a.Config
	var gw pg.Gateway
	if !insertOnly {
		p, err := NewPaymentGateway(cfg, a.PublicURL()+UPIWebhookPath, a.Logger, a.Clock)
		switch {
		case errors.Is(err, pg.ErrNotConfigured):
			a.Logger.Info("no payment gateway configured: UPI payments are off (set --pg-base-url, or --dev for the simulator)")
		case err != nil:
			return err
		default:
			a.PG, gw = p, p
		}
	}
	var notifier upi.Notifier = upi.LogNotifier{Logger: a.Logger}
	if cfg.SMTPAddr != "" {
		notifier = upi.SMTPNotifier{Logger: a.Logger, Config: upi.SMTPConfig{Addr: cfg.SMTPAddr, From: cfg.SMTPFrom,
			Username: cfg.SMTPUsername, Password: cfg.SMTPPassword, TLS: cfg.SMTPTLS}}
	}
	a.UPI = upi.New(upi.Config{
		PublicURL: a.PublicURL(), Presets: cfg.UPIPresets, MinPaise: cfg.UPIMinPaise, MaxPaise: cfg.UPIMaxPaise,
		PaymentWindow: cfg.UPIPaymentWindow, SessionDeadline: cfg.UPISessionDeadline, CDRDeadline: cfg.UPICDRDeadline,
		OtherTokenCPOs: cfg.UPIOtherTokenCPOs, PollInterval: cfg.UPIPollInterval, RetryBase: cfg.UPIRetryBase,
	}, upi.Deps{
		DB: a.DB, Jobs: a.Jobs, Gateway: gw, Dir: upi.LocationDirectory{Locations: a.Locations, Tariffs: a.Tariffs},
		Events: a.Events, Notifier: notifier, Clock: a.Clock, Logger: a.Logger, Registry: a.Registry,
	})
	return nil
}
