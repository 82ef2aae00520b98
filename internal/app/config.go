package app

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/authguard"
	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/ratelimit"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
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

	// AuthFailures is how many failed authentications (unknown tokens,
	// wrong console sign-ins) a client may make per 5 minutes before it is
	// refused with 429 until the window ends (authguard; 0: no limit).
	AuthFailures int
	// TrustedProxies are the addresses and CIDR blocks of the load
	// balancers in front of the hub, comma-separated: only a connection
	// from one of them has its X-Forwarded-For believed.
	TrustedProxies string
	// MetricsToken, when set, is required to read /metrics
	// (Authorization: Bearer); MetricsAddr, when set, serves /metrics on
	// that address only (a port a load balancer does not expose).
	MetricsToken string
	MetricsAddr  string

	// ConsoleMapTiles is a tile URL template ({z}/{x}/{y}) drawn under the
	// console's maps; empty: a coordinate grid only (works offline).
	ConsoleMapTiles       string
	ConsoleMapAttribution string

	PGBaseURL       string
	PGKeyID         string
	PGKeySecret     string
	PGWebhookSecret string

	LogLevel  string // debug, info, warn, error
	LogFormat string // text or json

	MaxBodyBytes    int64
	ShutdownTimeout time.Duration

	// TrafficOff stops recording OCPI exchanges (the traffic inspector);
	// TrafficRetention (7 days) and TrafficMaxBytes (1 GiB) bound what is
	// kept.
	TrafficOff       bool
	TrafficRetention time.Duration
	TrafficMaxBytes  int64

	// OTLPEndpoint is the OpenTelemetry collector spans are exported to over
	// OTLP/HTTP (empty: tracing off); OTLPHeaders are sent with every export
	// (key=value pairs, comma-separated, as OTEL_EXPORTER_OTLP_HEADERS);
	// OTLPServiceName is the service.name (default "ocpihub");
	// OTLPSampleRatio the share of new traces recorded (0: all).
	OTLPEndpoint    string
	OTLPHeaders     string
	OTLPServiceName string
	OTLPSampleRatio float64

	// SyncInterval is how often the hub pulls every CPO's locations and
	// tariffs since the last successful pull (0: never; pushes are the
	// primary path, this is the recovery).
	SyncInterval time.Duration
	// PushMaxAttempts and PushBackoff tune the push outbox: attempts before
	// an object is marked for a full resync, and the first retry delay
	// (doubling). Zero: 10 attempts, the jobs backoff from 2 s.
	PushMaxAttempts int
	PushBackoff     time.Duration
	// PushCollapseAfter: a push that has waited this long for a receiver
	// that is behind is dropped when a later one of the same thing covers
	// it (hub.Config.CollapseAfter; zero: 1 s, negative: never).
	PushCollapseAfter time.Duration
	// PushPoll is how often delivery looks for work nobody woke it for:
	// another replica's changes, a wake lost in a crash (zero: the
	// expansion of changes every 250 ms, the delivery engine every
	// second). In one process a change travels on wakes alone.
	PushPoll time.Duration
	// RecoverEvery is how often the queues' recovery runs (zero:
	// DefaultRecoverEvery).
	RecoverEvery time.Duration
	// JobTimeout bounds one attempt of a background job that names no
	// timeout of its own (default jobs.DefaultJobTimeout). JobRescueAfter
	// is how long a job may run before it is taken for one whose process
	// died and is run again (default JobTimeout + 30 s); a process that
	// restarts on the same machine re-arms the jobs of its dead
	// predecessor within seconds without waiting for it.
	JobTimeout     time.Duration
	JobRescueAfter time.Duration
	// NoInitialLoad turns off the initial load of a new receiver (the
	// locations, tariffs and ClientInfo that exist when it joins).
	// InitialLoadBatch and InitialLoadPace pace it: objects per step and the
	// pause between steps (zero: the hub's defaults, 100 per second).
	NoInitialLoad    bool
	InitialLoadBatch int
	InitialLoadPace  time.Duration
	// InitialLoadDelay is how long after the handshake an initial load
	// starts (zero: 2 s; tests set it).
	InitialLoadDelay time.Duration
	// ForwardTimeout bounds a request the hub forwards to another party
	// (default 30 s; past it the requester gets 4002).
	ForwardTimeout time.Duration
	// UPI QR charging (upi.Config): the amounts the landing page offers and
	// accepts (paise), how long an order takes payments, how long a
	// session and its CDR may take, and the CPOs ("CC*PID") that want
	// tokens of type OTHER instead of AD_HOC_USER. Zero: upi's defaults.
	UPIPresets         []int64
	UPIMinPaise        int64
	UPIMaxPaise        int64
	UPIPaymentWindow   time.Duration
	UPISessionDeadline time.Duration
	UPICDRDeadline     time.Duration
	// CDRPriceTolerance is how far a CDR's total_cost may be from the hub's
	// price before it is flagged (nil: cdr.DefaultTolerance).
	CDRPriceTolerance *cdr.Tolerance
	// UPICostMismatch is how a UPI payment is settled on a CDR the hub
	// flagged: upi.MismatchHold (default), MismatchCDR or MismatchHub.
	UPICostMismatch   string
	UPIOtherTokenCPOs []string
	UPIStartDelay     time.Duration
	// UPIPollInterval and UPIRetryBase tune the pending-payment polls and
	// the retries of START_SESSION and refunds (tests shorten them).
	UPIPollInterval time.Duration
	UPIRetryBase    time.Duration

	// SMTP e-mails receipts (upi.SMTPConfig); no SMTPAddr: receipts are
	// only logged.
	SMTPAddr     string
	SMTPFrom     string
	SMTPUsername string
	SMTPPassword string
	SMTPTLS      string

	// GST makes receipts GST tax invoices (upi.GSTConfig); no GSTIN: plain
	// receipts.
	GST receipt.GSTConfig

	// SMS sends receipts by SMS (app/sms.go): the provider's shape (msg91
	// or signed; none: no SMS, the simulator in dev mode), its URL, the
	// MSG91 authkey and template ("flow") id, the secret that signs (signed)
	// or authenticates the delivery reports (msg91: ?token=), and the DLT
	// registration. SMSDailyCap bounds a number's receipt SMS a day;
	// PhoneRetention is how long numbers are kept.
	SMSProvider      string
	SMSURL           string
	SMSAuthKey       string
	SMSFlowID        string
	SMSSecret        string
	SMSSender        string
	SMSDLTTemplateID string
	SMSDLTEntityID   string
	SMSDailyCap      int
	PhoneRetention   time.Duration

	// CommandTimeoutMargin is added to a CPO's command timeout before the
	// requester gets TIMEOUT (default 30 s); CommandTimeout is the wait when
	// the CPO names none (default 60 s).
	CommandTimeoutMargin time.Duration
	CommandTimeout       time.Duration
	// LegacySunset, when set, is announced in the Sunset header of every
	// OCPI 2.1.1 and 2.0 answer (RFC 8594): the date the hub stops speaking
	// them. LegacyDeprecated is the Deprecation date (RFC 9745; default
	// 2021-10-01, when 2.2.1 superseded them); LegacyPolicyURL, when set, is
	// linked from both as the operator's policy.
	LegacySunset     time.Time
	LegacyDeprecated time.Time
	LegacyPolicyURL  string
	// DevMode relaxes checks meant for production (http webhook URLs on
	// loopback, the built-in PG simulator, outbound connections to
	// loopback).
	DevMode bool
	// OutboundAllow are addresses the outbound address guard lets the hub
	// reach although their class is refused (--outbound-allow): a PG or SMTP
	// relay on the operator's network, simulators (see OutboundGuard).
	OutboundAllow []netguard.Rule

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
		AuthFailures:    authguard.DefaultMax,
		WebhookTimeout:  15 * time.Second,
		SyncInterval:    time.Hour,
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
	if c.SecretKey != "" && !strongKey(c.SecretKey) {
		return fmt.Errorf("the secret key must be at least %d random bytes (e.g. the output of openssl rand -base64 32): a short or repetitive key protects the partner tokens poorly", MinSecretKey)
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		return fmt.Errorf("the admin token must have at least 16 characters")
	}
	if err := c.validateOTLP(); err != nil {
		return err
	}
	if c.SandboxResetHour < 0 || c.SandboxResetHour > 23 {
		return fmt.Errorf("sandbox reset hour %d: want 0 to 23 (UTC)", c.SandboxResetHour)
	}
	if _, err := authguard.ParseProxies(c.TrustedProxies); err != nil {
		return fmt.Errorf("trusted proxies %q: want addresses or CIDR blocks, comma-separated: %v", c.TrustedProxies, err)
	}
	if c.RateLimit.PerSecond < 0 || c.RateLimit.PerMinute < 0 || c.RateLimit.PerHour < 0 {
		return fmt.Errorf("rate limits must not be negative (0 lifts a limit)")
	}
	if c.ConsoleMapTiles != "" {
		u, err := url.Parse(strings.NewReplacer("{z}", "0", "{x}", "0", "{y}", "0").Replace(c.ConsoleMapTiles))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
			!strings.Contains(c.ConsoleMapTiles, "{z}") || !strings.Contains(c.ConsoleMapTiles, "{x}") || !strings.Contains(c.ConsoleMapTiles, "{y}") {
			return fmt.Errorf("console map tiles %q: want an http(s) URL template with {z}, {x} and {y}", c.ConsoleMapTiles)
		}
	}
	if c.UPIMinPaise > 0 && c.UPIMinPaise < 100 {
		return fmt.Errorf("the smallest UPI amount must be at least 1.00 rupee (the payment gateway's minimum)")
	}
	if c.UPIMinPaise > 0 && c.UPIMaxPaise > 0 && c.UPIMinPaise > c.UPIMaxPaise {
		return fmt.Errorf("the smallest UPI amount is above the largest")
	}
	if timeout := cmp.Or(c.JobTimeout, jobs.DefaultJobTimeout); c.JobRescueAfter > 0 && c.JobRescueAfter <= timeout {
		return fmt.Errorf("job rescue after %v must be longer than the job timeout %v: a job still running would be run twice", c.JobRescueAfter, timeout)
	}
	if err := c.checkSMS(); err != nil {
		return err
	}
	if err := c.GST.Check(); err != nil {
		return fmt.Errorf("GST settings: %w", err)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return fmt.Errorf("log format %q: want text or json", c.LogFormat)
	}
	return c.validateOutbound()
}

// MinSecretKey is the shortest secret key accepted, in bytes.
const MinSecretKey = 32

// strongKey reports whether a secret key can carry 32 bytes of entropy: at
// least MinSecretKey bytes, and not a repetition of a few characters (the
// output of a random generator, hex or Base64, has at least 12 distinct
// characters in 32).
func strongKey(k string) bool {
	if len(k) < MinSecretKey {
		return false
	}
	distinct := map[rune]bool{}
	for _, r := range k {
		distinct[r] = true
	}
	return len(distinct) >= 12
}
