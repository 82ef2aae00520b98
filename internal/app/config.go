package app

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/ratelimit"
)

// Config is every setting of a hub. The CLI fills it from flags, the
// environment (OCPIHUB_*) and a config file, in that order of precedence;
// tests fill it directly.
type Config struct {
	Addr        string // listen address
	DB          string // database URL
	PublicURL   string // base URL partners reach us at
	AdminToken  string
	SecretKey   string
	CountryCode string
	HubPartyID  string
	EMSPPartyID string
	HubName     string // business name of the HUB role
	EMSPName    string // business name of the EMSP role

	// SandboxAddr, when set, starts the sandbox: a second hub on its own
	// address and database (SandboxDB, default: see SandboxDBURL), with
	// SandboxPublicURL as its base URL (default http://SandboxAddr), reset
	// daily at SandboxResetHour:00 UTC.
	SandboxAddr      string
	SandboxDB        string
	SandboxPublicURL string
	SandboxResetHour int
	// Sandbox marks the configuration of the sandbox instance itself.
	Sandbox bool

	// WebhookTimeout bounds one webhook delivery attempt (15 s).
	WebhookTimeout time.Duration

	// RateLimit are the default limits of every token (per-party overrides
	// in the admin API); zero values lift a window's limit.
	RateLimit ratelimit.Limits

	PGBaseURL       string
	PGKeyID         string
	PGKeySecret     string
	PGWebhookSecret string

	LogLevel  string // debug, info, warn, error
	LogFormat string // text or json

	MaxBodyBytes    int64
	ShutdownTimeout time.Duration
	// DevMode relaxes checks meant for production (http webhook URLs on
	// loopback, the built-in PG simulator).
	DevMode bool

	// adminTokenHash hands production's admin token to the sandbox.
	adminTokenHash string
}

// Defaults returns the configuration of a hub started with no settings.
func Defaults() Config {
	return Config{
		Addr:            "localhost:8080",
		DB:              "sqlite:ocpihub.db",
		CountryCode:     "IN",
		HubPartyID:      "HUB",
		EMSPPartyID:     "OHE",
		HubName:         "ocpihub",
		EMSPName:        "ocpihub eMSP",
		LogLevel:        "info",
		LogFormat:       "text",
		MaxBodyBytes:    1 << 20,
		ShutdownTimeout: 30 * time.Second,
		RateLimit:       ratelimit.Defaults(),
		WebhookTimeout:  15 * time.Second,
	}
}

// publicURL returns the advertised base URL: the configured one, or http://
// plus the address the server listens on.
func (c Config) publicURL(listen net.Addr) (*url.URL, error) {
	raw := c.PublicURL
	if raw == "" {
		host := c.Addr
		if listen != nil {
			host = listen.String()
		}
		if strings.HasPrefix(host, ":") {
			host = "localhost" + host
		}
		raw = "http://" + host
	}
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("public URL %q must be an absolute http(s) URL", raw)
	}
	return u, nil
}

// Validate checks the settings that can be checked without side effects.
func (c Config) Validate() error {
	if len(c.CountryCode) != 2 {
		return fmt.Errorf("country code %q must have two letters", c.CountryCode)
	}
	if len(c.HubPartyID) != 3 || len(c.EMSPPartyID) != 3 {
		return fmt.Errorf("party ids (%q, %q) must have three characters", c.HubPartyID, c.EMSPPartyID)
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		return fmt.Errorf("the admin token must have at least 16 characters")
	}
	if c.SandboxResetHour < 0 || c.SandboxResetHour > 23 {
		return fmt.Errorf("sandbox reset hour %d: want 0 to 23 (UTC)", c.SandboxResetHour)
	}
	if c.RateLimit.PerSecond < 0 || c.RateLimit.PerMinute < 0 || c.RateLimit.PerHour < 0 {
		return fmt.Errorf("rate limits must not be negative (0 lifts a limit)")
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("log format %q: want text or json", c.LogFormat)
	}
	return nil
}
