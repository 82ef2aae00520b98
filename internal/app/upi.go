package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/sealbox"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/charger"
	"github.com/ocpihub/ocpihub/internal/upi/printer"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
)

// UPIWebhookPath is where the payment gateway sends its webhooks.
const UPIWebhookPath = "/ocpi/2.2.1/payments/upi/webhook"

// upiHook names the command hook that receives the results of the
// START_SESSIONs UPI payments send (stored with each command: keep it).
const upiHook = "upi"

// buildUPI assembles QR charging: the payment gateway the --pg-* settings
// describe (the built-in simulator in dev mode), the notifier, and the UPI
// service over the directory, the token, command, session and CDR
// services. Without a gateway, QR mappings still work and the landing page
// says payments are off. CLI commands (insertOnly) never start a simulator:
// the running hub works the payment jobs.
func (a *App) buildUPI(insertOnly bool, box *sealbox.Box) error {
	cfg := a.Config
	var gw pg.Gateway
	if !insertOnly {
		p, err := NewPaymentGateway(cfg, a.PublicURL()+UPIWebhookPath, a.Logger, a.Clock, a.sims)
		switch {
		case errors.Is(err, pg.ErrNotConfigured):
			a.Logger.Info("no payment gateway configured: UPI payments are off (set --pg-base-url, or run ocpihub-dev with --dev for the simulator)")
		case err != nil:
			return err
		default:
			a.PG, gw = p, p
			if c, ok := p.Gateway.(*pg.Client); ok && a.Tracer != nil {
				c.WrapTransport(a.Tracer.Transport)
			}
		}
	}
	var notifier receipt.Notifier = receipt.LogNotifier{Logger: a.Logger}
	if cfg.SMTPAddr != "" {
		notifier = receipt.SMTPNotifier{Logger: a.Logger, Config: receipt.SMTPConfig{Addr: cfg.SMTPAddr, From: cfg.SMTPFrom,
			Username: cfg.SMTPUsername, Password: cfg.SMTPPassword, TLS: cfg.SMTPTLS},
			DialFunc: a.Guard.Dial(&net.Dialer{Timeout: 30 * time.Second})}
	}
	smsGW, err := a.buildSMS(insertOnly)
	if err != nil {
		return err
	}
	d := upi.Deps{
		SMS: smsGW, Box: box, PhoneKey: phoneKey(cfg.SecretKey),
		DB: a.DB, Jobs: a.Jobs, Gateway: gw, Dir: charger.LocationDirectory{Locations: a.Locations, Tariffs: a.Tariffs},
		Events: a.Events, Notifier: notifier, Renderer: printer.Printout{Issuer: cfg.EMSPName}, Clock: a.Clock, Logger: a.Logger, Registry: a.Registry,
	}
	if a.Tokens != nil {
		d.Tokens = a.Tokens
	}
	if a.Commands != nil {
		d.Commands = upiCommands{a.Commands}
	}
	a.UPI = upi.New(upi.Config{
		PublicURL: a.PublicURL(), EMSPCountryCode: cfg.CountryCode, EMSPPartyID: cfg.EMSPPartyID, EMSPName: cfg.EMSPName, Presets: cfg.UPIPresets, MinPaise: cfg.UPIMinPaise, MaxPaise: cfg.UPIMaxPaise,
		PaymentWindow: cfg.UPIPaymentWindow, SessionDeadline: cfg.UPISessionDeadline, CDRDeadline: cfg.UPICDRDeadline,
		OtherTokenCPOs: cfg.UPIOtherTokenCPOs, StartDelay: cfg.UPIStartDelay, PollInterval: cfg.UPIPollInterval, RetryBase: cfg.UPIRetryBase,
		CostMismatch: cfg.UPICostMismatch,
		GST:          cfg.GST, SMSDailyCap: cfg.SMSDailyCap, PhoneRetention: cfg.PhoneRetention,
	}, d)
	if !insertOnly {
		a.UPI.Schedule()
	}
	if a.Commands != nil {
		a.Commands.RegisterHook(upiHook, func(ctx context.Context, r command.HookResult) error {
			return a.UPI.CommandResult(ctx, r.CommandID, r.AuthorizationReference, r.Result.Result)
		})
	}
	if a.Sessions != nil {
		a.Sessions.Observe(func(ctx context.Context, tx *store.Tx, u session.Update) error {
			return a.UPI.SessionChanged(ctx, tx, &u.Session.Session)
		})
	}
	if a.CDRs != nil {
		a.CDRs.Observe(func(ctx context.Context, tx *store.Tx, c *cdr.Stored) error {
			return a.UPI.CDRPriced(ctx, tx, &c.CDR, upi.CDRPrice{Mismatch: c.Price.Status == cdr.PriceMismatch, Hub: c.Price.Hub})
		})
	}
	return nil
}

// upiCommands sends the START_SESSIONs of UPI payments through the command
// service as ocpihub's own eMSP, results to the upi hook.
type upiCommands struct{ c *command.Service }

// StartSession implements upi.Commands.
func (u upiCommands) StartSession(ctx context.Context, req upi.StartRequest) (string, *ocpi.CommandResponse, error) {
	sent, err := u.c.Send(ctx, command.SendRequest{Command: ocpi.CommandStartSession, Body: req.Start, Hook: upiHook,
		CPO: ocpiclient.Party{CountryCode: req.CountryCode, PartyID: req.PartyID}, CorrelationID: req.PaymentID})
	id := ""
	if sent != nil {
		id = sent.ID
	}
	switch {
	case ocpi.ErrorCode(err) == ocpi.ETIMEOUT:
		return id, nil, upi.ErrStartPending
	case err != nil:
		return id, nil, err
	case sent.Response == nil:
		// An error envelope without a CommandResponse is a refusal.
		return id, &ocpi.CommandResponse{Result: ocpi.CommandRejected, Message: []ocpi.DisplayText{{Language: "en",
			Text: fmt.Sprintf("status_code %d without a CommandResponse", sent.StatusCode)}}}, nil
	}
	return id, sent.Response, nil
}
