// Package devgw plugs the payment gateway and SMS simulators into a hub:
// dev mode and the sandbox of ocpihub-dev, the demo and the tests use it.
// The production binary (cmd/ocpihub) never imports it, so no simulator is
// in its dependency graph (a test in cmd/ocpihub checks).
package devgw

import (
	"net/url"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/sim/smssim"
	"github.com/ocpihub/ocpihub/internal/sms"
)

// Simulators starts pgsim and smssim for a hub (app.Options.Simulators).
func Simulators() app.Simulators {
	return app.Simulators{PG: startPG, SMS: startSMS}
}

func startPG(o app.PGSimOptions) (*app.SimulatedPG, error) {
	sim, err := pgsim.Start(pgsim.Options{KeyID: o.KeyID, KeySecret: o.KeySecret, WebhookSecret: o.WebhookSecret,
		WebhookURL: o.WebhookURL, Clock: o.Clock, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	secret := o.WebhookSecret
	if secret == "" {
		secret = pgsim.DefaultWebhookSecret
	}
	return &app.SimulatedPG{Server: sim, URL: sim.URL(), KeyID: sim.KeyID(), KeySecret: sim.KeySecret(), WebhookSecret: secret}, nil
}

func startSMS(o app.SMSSimOptions) (*app.SimulatedSMS, error) {
	sim, err := smssim.Start(smssim.Options{Clock: o.Clock, Logger: o.Logger,
		ReportURL: o.ReportURL + "?token=" + url.QueryEscape(smssim.DefaultSecret)})
	if err != nil {
		return nil, err
	}
	so := sim.Options()
	return &app.SimulatedSMS{Server: sim, URL: sim.URL(), Client: &sms.MSG91{BaseURL: sim.URL(), AuthKey: so.AuthKey,
		TemplateID: smssim.DefaultFlowID, DLT: so.DLT, ReportToken: smssim.DefaultSecret}}, nil
}

// PG is the payment gateway simulator a hub started, or nil.
func PG(a *app.App) *pgsim.Server {
	if a == nil || a.PG == nil {
		return nil
	}
	s, _ := a.PG.Sim.(*pgsim.Server)
	return s
}

// SMS is the SMS simulator a hub started, or nil.
func SMS(a *app.App) *smssim.Server {
	if a == nil {
		return nil
	}
	s, _ := a.SMSSim.(*smssim.Server)
	return s
}
