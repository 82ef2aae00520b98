package app

import (
	"log/slog"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/sms"
)

// Simulators start the simulated payment and SMS gateways that dev mode
// (--dev without --pg-base-url or --sms-provider) and the sandbox instance
// use. They live outside the production binary: cmd/ocpihub passes none, so
// the simulators are not in its dependency graph and its hub never starts
// one; cmd/ocpihub-dev, the demo and the tests pass devgw.Simulators().
// A nil field starts nothing: that gateway is off, as it is without
// settings outside dev mode.
type Simulators struct {
	PG  func(PGSimOptions) (*SimulatedPG, error)
	SMS func(SMSSimOptions) (*SimulatedSMS, error)
}

// Closer is a running simulator.
type Closer interface{ Close() }

// PGSimOptions are what the hub tells its payment gateway simulator: the
// configured credentials (empty: the simulator's defaults), where to send
// its signed webhooks, and the hub's clock and logger.
type PGSimOptions struct {
	KeyID, KeySecret, WebhookSecret string
	WebhookURL                      string
	Clock                           clock.Clock
	Logger                          *slog.Logger
}

// SimulatedPG is a started payment gateway simulator and what the hub's PG
// client needs to reach it.
type SimulatedPG struct {
	// Server is the simulator (devgw.PG gives it back with its type).
	Server                               Closer
	URL, KeyID, KeySecret, WebhookSecret string
}

// SMSSimOptions are what the hub tells its SMS simulator: where to post
// delivery reports (the simulator adds its token), the hub's clock and
// logger.
type SMSSimOptions struct {
	ReportURL string
	Clock     clock.Clock
	Logger    *slog.Logger
}

// SimulatedSMS is a started SMS simulator and the client that sends to it
// (its Guard is set by the hub).
type SimulatedSMS struct {
	Server Closer
	URL    string
	Client *sms.MSG91
}
