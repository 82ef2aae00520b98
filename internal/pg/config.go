package pg

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/netguard"
)

// Config is how ocpihub reaches its payment gateway. internal/app fills it
// from the --pg-* settings.
type Config struct {
	// BaseURL is the PG API's base URL (--pg-base-url), e.g.
	// https://api.razorpay.com. Empty: no PG (ErrNotConfigured); in dev mode
	// the app starts the built-in simulator and points BaseURL at it.
	BaseURL string
	// KeyID and KeySecret authenticate our calls (HTTP basic auth).
	KeyID     string
	KeySecret string
	// WebhookSecrets verify incoming webhooks: the current secret first,
	// then previous ones still accepted during a rotation. For Cashfree the
	// secret is the client secret. --pg-webhook-secret takes them as a
	// comma-separated list (SplitSecrets).
	WebhookSecrets []string
	// PreviousSecretsUntil ends the rotation window: after it, only the
	// first secret verifies. Zero: previous secrets are accepted until
	// removed from the list.
	PreviousSecretsUntil time.Time
	// Timeout bounds each call (default DefaultTimeout).
	Timeout    time.Duration
	HTTPClient *http.Client
	Logger     *slog.Logger
	Clock      clock.Clock
	// Guard, when HTTPClient is nil, is the outbound address guard the
	// client dials through (the hub always sets it; nil: no guard, for
	// tests of this package against a loopback simulator).
	Guard *netguard.Guard
}

// Webhook returns the webhook part of the configuration.
func (c Config) Webhook() WebhookConfig {
	return WebhookConfig{Secrets: c.WebhookSecrets, PreviousUntil: c.PreviousSecretsUntil}
}

// New returns the Gateway the configuration describes: a Razorpay-compatible
// Client at BaseURL. With no BaseURL it returns ErrNotConfigured; the app
// then either starts the built-in simulator (dev mode) or runs without UPI
// payments.
func New(cfg Config) (Gateway, error) {
	c, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// SplitSecrets reads a comma-separated list of webhook secrets (current
// first), dropping blanks and surrounding spaces.
func SplitSecrets(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
