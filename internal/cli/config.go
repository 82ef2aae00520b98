package cli

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/authguard"
	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/tracing"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
)

// setting binds one configuration value to its flag, its environment variable
// and its config-file key (the flag name).
type setting struct {
	name string
	env  string
	help string
	set  func(string) error
	def  string
}

// settings returns the bindings of cfg's fields (DESIGN §8 fixes the names).
func settings(cfg *app.Config) []setting {
	str := func(p *string) func(string) error { return func(v string) error { *p = v; return nil } }
	count := func(p *int, lo, hi int) func(string) error {
		return func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				return fmt.Errorf("want a whole number from %d to %d", lo, hi)
			}
			*p = n
			return nil
		}
	}
	duration := func(p *time.Duration) func(string) error {
		return func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("want a positive duration such as 30s")
			}
			*p = d
			return nil
		}
	}
	return []setting{
		{"addr", "OCPIHUB_ADDR", "address to listen on", str(&cfg.Addr), cfg.Addr},
		{"db", "OCPIHUB_DB", "database: sqlite:FILE (default, embedded) or postgres://user@host/db", str(&cfg.DB), cfg.DB},
		{"public-url", "OCPIHUB_PUBLIC_URL", "base URL partners and drivers reach the hub at (default http://ADDR)", str(&cfg.PublicURL), ""},
		{"admin-token", "OCPIHUB_ADMIN_TOKEN", "operator token for /admin and the console (default: generated at first start and printed once)", str(&cfg.AdminToken), ""},
		{"secret-key", "OCPIHUB_SECRET_KEY", "key that encrypts the tokens we hold for partners and the webhook signing secrets (default: stored unencrypted, with a warning)", str(&cfg.SecretKey), ""},
		{"country-code", "OCPIHUB_COUNTRY_CODE", "country code of the hub's own parties", str(&cfg.CountryCode), cfg.CountryCode},
		{"hub-party-id", "OCPIHUB_HUB_PARTY_ID", "party id of the hub's HUB role", str(&cfg.HubPartyID), cfg.HubPartyID},
		{"emsp-party-id", "OCPIHUB_EMSP_PARTY_ID", "party id of the hub's own EMSP role (UPI and Direct Payment drivers)", str(&cfg.EMSPPartyID), cfg.EMSPPartyID},
		{"hub-name", "OCPIHUB_HUB_NAME", "business name of the HUB role", str(&cfg.HubName), cfg.HubName},
		{"emsp-name", "OCPIHUB_EMSP_NAME", "business name of the EMSP role", str(&cfg.EMSPName), cfg.EMSPName},
		{"sandbox-addr", "OCPIHUB_SANDBOX_ADDR", "address of the sandbox instance (default: off)", str(&cfg.SandboxAddr), ""},
		{"sandbox-db", "OCPIHUB_SANDBOX_DB", "database of the sandbox (default: a sibling SQLite file, ocpihub-sandbox.db, or the schema \"sandbox\" on PostgreSQL)", str(&cfg.SandboxDB), ""},
		{"sandbox-public-url", "OCPIHUB_SANDBOX_PUBLIC_URL", "base URL partners reach the sandbox at (default http://SANDBOX-ADDR)", str(&cfg.SandboxPublicURL), ""},
		{"sandbox-reset-hour", "OCPIHUB_SANDBOX_RESET_HOUR", "hour of the day (UTC, 0-23) at which the sandbox's data is reset", count(&cfg.SandboxResetHour, 0, 23), strconv.Itoa(cfg.SandboxResetHour)},
		{"rate-limit-per-second", "OCPIHUB_RATE_LIMIT_PER_SECOND", "requests per second per token, the burst (0: no limit)", count(&cfg.RateLimit.PerSecond, 0, 1_000_000), strconv.Itoa(cfg.RateLimit.PerSecond)},
		{"rate-limit-per-minute", "OCPIHUB_RATE_LIMIT_PER_MINUTE", "requests per minute per token (0: no limit)", count(&cfg.RateLimit.PerMinute, 0, 1_000_000), strconv.Itoa(cfg.RateLimit.PerMinute)},
		{"rate-limit-per-hour", "OCPIHUB_RATE_LIMIT_PER_HOUR", "requests per hour per token (0: no limit)", count(&cfg.RateLimit.PerHour, 0, 1_000_000), strconv.Itoa(cfg.RateLimit.PerHour)},
		{"auth-failures", "OCPIHUB_AUTH_FAILURES", "failed authentications (unknown tokens, wrong console sign-ins) a client may make per 5 minutes before it gets 429 (0: no limit)", count(&cfg.AuthFailures, 0, 1_000_000), strconv.Itoa(cfg.AuthFailures)},
		{"trusted-proxies", "OCPIHUB_TRUSTED_PROXIES", "load balancers in front of the hub (addresses or CIDR blocks, comma-separated) whose X-Forwarded-For names the client (default: none, the connection's address is the client)", func(v string) error {
			if _, err := authguard.ParseProxies(v); err != nil {
				return fmt.Errorf("want addresses or CIDR blocks such as 10.0.0.0/8,192.168.1.10")
			}
			cfg.TrustedProxies = v
			return nil
		}, ""},
		{"metrics-token", "OCPIHUB_METRICS_TOKEN", "token /metrics requires (Authorization: Bearer TOKEN; default: none, /metrics is open)", str(&cfg.MetricsToken), ""},
		{"metrics-addr", "OCPIHUB_METRICS_ADDR", "address serving /metrics on its own, instead of the main address (default: none, /metrics on the main address)", str(&cfg.MetricsAddr), ""},
		{"console-map-tiles", "OCPIHUB_CONSOLE_MAP_TILES", "tile URL template with {z}, {x}, {y} for the console's maps (default: none, a coordinate grid that works offline)", str(&cfg.ConsoleMapTiles), ""},
		{"console-map-attribution", "OCPIHUB_CONSOLE_MAP_ATTRIBUTION", "attribution shown under the map tiles (e.g. \"© OpenStreetMap contributors\")", str(&cfg.ConsoleMapAttribution), ""},
		{"pg-base-url", "OCPIHUB_PG_BASE_URL", "payment gateway API base URL (default: none, UPI payments off; ocpihub-dev in dev mode: the built-in simulator)", str(&cfg.PGBaseURL), ""},
		{"pg-key-id", "OCPIHUB_PG_KEY_ID", "payment gateway key id", str(&cfg.PGKeyID), ""},
		{"pg-key-secret", "OCPIHUB_PG_KEY_SECRET", "payment gateway key secret", str(&cfg.PGKeySecret), ""},
		{"pg-webhook-secret", "OCPIHUB_PG_WEBHOOK_SECRET", "secret that signs the payment gateway's webhooks", str(&cfg.PGWebhookSecret), ""},
		{"log-level", "OCPIHUB_LOG_LEVEL", "debug, info, warn or error", oneOf(&cfg.LogLevel, "debug", "info", "warn", "error"), cfg.LogLevel},
		{"log-format", "OCPIHUB_LOG_FORMAT", "text or json", oneOf(&cfg.LogFormat, "text", "json"), cfg.LogFormat},
		{"max-body-bytes", "OCPIHUB_MAX_BODY_BYTES", "largest request body accepted (larger: HTTP 413)", func(v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("want a positive number of bytes")
			}
			cfg.MaxBodyBytes = n
			return nil
		}, strconv.FormatInt(cfg.MaxBodyBytes, 10)},
		{"shutdown-timeout", "OCPIHUB_SHUTDOWN_TIMEOUT", "how long shutdown waits for requests and jobs", func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("want a duration such as 30s")
			}
			cfg.ShutdownTimeout = d
			return nil
		}, cfg.ShutdownTimeout.String()},
		{"webhook-timeout", "OCPIHUB_WEBHOOK_TIMEOUT", "how long a webhook delivery attempt waits for the receiver", func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || d > 5*time.Minute {
				return fmt.Errorf("want a duration up to 5m such as 15s")
			}
			cfg.WebhookTimeout = d
			return nil
		}, cfg.WebhookTimeout.String()},
		{"job-timeout", "OCPIHUB_JOB_TIMEOUT", "how long one attempt of a background job may run (pushes, refunds, command relays; a full sync has 30m)", duration(&cfg.JobTimeout), jobs.DefaultJobTimeout.String()},
		{"job-rescue-after", "OCPIHUB_JOB_RESCUE_AFTER", "how long a job may stay running before it is taken for one whose process died and is run again (default: job timeout + 30s; a restart on the same machine re-arms its dead predecessor's jobs at once)", duration(&cfg.JobRescueAfter), ""},
		{"push-collapse-after", "OCPIHUB_PUSH_COLLAPSE_AFTER", "how long a push may wait for a receiver that is behind before a later push rewriting the same fields takes its place (EVSE statuses, token changes; 0: never, every state is sent)", func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return fmt.Errorf("want a duration such as 1s, or 0")
			}
			cfg.PushCollapseAfter = cmp.Or(d, -1)
			return nil
		}, hub.DefaultCollapseAfter.String()},
		{"sync-interval", "OCPIHUB_SYNC_INTERVAL", "how often CPOs' locations and tariffs, and peer hubs' tokens, sessions and CDRs too, are pulled since the last pull (0 disables)", func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return fmt.Errorf("want a duration such as 1h, or 0")
			}
			cfg.SyncInterval = d
			return nil
		}, cfg.SyncInterval.String()},
		{"initial-load", "OCPIHUB_INITIAL_LOAD", "push the locations, tariffs and ClientInfo that exist to a partner that gains a receiver for them (false: it gets only later changes and must pull once)", func(v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("want true or false")
			}
			cfg.NoInitialLoad = !b
			return nil
		}, "true"},
		{"initial-load-batch", "OCPIHUB_INITIAL_LOAD_BATCH", "objects an initial load queues per step", count(&cfg.InitialLoadBatch, 1, 10_000), "100"},
		{"initial-load-pace", "OCPIHUB_INITIAL_LOAD_PACE", "pause between two steps of an initial load (also while the partner has a step's worth of pushes outstanding)", duration(&cfg.InitialLoadPace), "1s"},
		{"upi-presets", "OCPIHUB_UPI_PRESETS", "amounts in rupees the UPI landing page offers, comma-separated", func(v string) error {
			var out []int64
			for _, f := range strings.Split(v, ",") {
				p, err := pg.ParseRupees(strings.TrimSpace(f))
				if err != nil || p <= 0 {
					return fmt.Errorf("want rupee amounts such as 100,200,500")
				}
				out = append(out, p)
			}
			cfg.UPIPresets = out
			return nil
		}, "100,200,500"},
		{"upi-min-amount", "OCPIHUB_UPI_MIN_AMOUNT", "smallest amount in rupees a driver may pay", rupees(&cfg.UPIMinPaise), "50"},
		{"upi-max-amount", "OCPIHUB_UPI_MAX_AMOUNT", "largest amount in rupees a driver may pay", rupees(&cfg.UPIMaxPaise), "5000"},
		{"upi-payment-window", "OCPIHUB_UPI_PAYMENT_WINDOW", "how long a UPI order takes payments and a pending payment is polled", duration(&cfg.UPIPaymentWindow), "15m"},
		{"upi-session-deadline", "OCPIHUB_UPI_SESSION_DEADLINE", "how long after START_SESSION a session must appear before the payment is refunded", duration(&cfg.UPISessionDeadline), "5m"},
		{"upi-start-delay", "OCPIHUB_UPI_START_DELAY", "wait after a UPI capture before START_SESSION (time to plug in)", func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return fmt.Errorf("want a duration such as 10s, or 0")
			}
			cfg.UPIStartDelay = d
			return nil
		}, "0s"},
		{"upi-cdr-deadline", "OCPIHUB_UPI_CDR_DEADLINE", "how long after a UPI session ends its CDR may take before cdr.missing is raised", duration(&cfg.UPICDRDeadline), "1h"},
		{"cdr-price-tolerance", "OCPIHUB_CDR_PRICE_TOLERANCE", "how far a CDR's total_cost may be from the hub's price before it is flagged: an amount in currency units and a percentage of the hub's price, the larger applies", func(v string) error {
			abs, pct, ok := strings.Cut(v, ",")
			a, err1 := decimal.NewFromString(strings.TrimSpace(abs))
			p, err2 := decimal.NewFromString(strings.TrimSuffix(strings.TrimSpace(pct), "%"))
			if !ok || err1 != nil || err2 != nil || a.IsNegative() || p.IsNegative() {
				return fmt.Errorf("want an amount and a percentage such as 0.05,1%%")
			}
			cfg.CDRPriceTolerance = &cdr.Tolerance{Absolute: a, Percent: p}
			return nil
		}, "0.05,1%"},
		{"upi-cost-mismatch", "OCPIHUB_UPI_COST_MISMATCH", "how a UPI payment is settled when the hub flags its CDR's total_cost: hold (for the operator), cdr (on the CDR's total) or hub (on the hub's price)", func(v string) error {
			if !slices.Contains(upi.MismatchPolicies, v) {
				return fmt.Errorf("want hold, cdr or hub")
			}
			cfg.UPICostMismatch = v
			return nil
		}, upi.MismatchHold},
		{"upi-other-token-cpos", "OCPIHUB_UPI_OTHER_TOKEN_CPOS", "CPO parties (CC/PID, comma-separated) that reject AD_HOC_USER tokens: they get type OTHER", func(v string) error {
			var out []string
			for _, f := range strings.Split(v, ",") {
				if f = strings.TrimSpace(f); f == "" {
					continue
				}
				if _, _, err := qrmap.ParseTenant(f); err != nil {
					return err
				}
				out = append(out, f)
			}
			cfg.UPIOtherTokenCPOs = out
			return nil
		}, ""},
		{"smtp-addr", "OCPIHUB_SMTP_ADDR", "SMTP server (host:port) that e-mails receipts (default: receipts are logged only)", str(&cfg.SMTPAddr), ""},
		{"smtp-from", "OCPIHUB_SMTP_FROM", "sender address of receipt e-mails", str(&cfg.SMTPFrom), ""},
		{"smtp-username", "OCPIHUB_SMTP_USERNAME", "SMTP user name (PLAIN authentication)", str(&cfg.SMTPUsername), ""},
		{"smtp-password", "OCPIHUB_SMTP_PASSWORD", "SMTP password (sent only over TLS or to a server on loopback)", str(&cfg.SMTPPassword), ""},
		{"smtp-tls", "OCPIHUB_SMTP_TLS", "starttls (default: when offered), tls (implicit, port 465) or none", func(v string) error {
			switch v {
			case "", "starttls", "tls", "none":
				cfg.SMTPTLS = v
				return nil
			}
			return fmt.Errorf("want starttls, tls or none")
		}, "starttls"},
		{"sms-provider", "OCPIHUB_SMS_PROVIDER", "msg91 or signed: how receipts go by SMS (default: no SMS; ocpihub-dev in dev mode: the simulator)", func(v string) error {
			switch v {
			case "", app.SMSProviderMSG91, app.SMSProviderSigned:
				cfg.SMSProvider = v
				return nil
			}
			return fmt.Errorf("want msg91 or signed")
		}, ""},
		{"sms-url", "OCPIHUB_SMS_URL", "the SMS provider's base URL (msg91) or endpoint (signed)", str(&cfg.SMSURL), ""},
		{"sms-auth-key", "OCPIHUB_SMS_AUTH_KEY", "the MSG91 account's authkey", str(&cfg.SMSAuthKey), ""},
		{"sms-flow-id", "OCPIHUB_SMS_FLOW_ID", "the MSG91 template (flow) id of the receipt message", str(&cfg.SMSFlowID), ""},
		{"sms-secret", "OCPIHUB_SMS_SECRET", "signs messages and delivery reports (signed); the ?token= of the delivery-report URL (msg91)", str(&cfg.SMSSecret), ""},
		{"sms-sender", "OCPIHUB_SMS_SENDER", "the DLT-registered sender header (six characters)", str(&cfg.SMSSender), ""},
		{"sms-dlt-template-id", "OCPIHUB_SMS_DLT_TEMPLATE_ID", "the DLT content template id of the receipt message", str(&cfg.SMSDLTTemplateID), ""},
		{"sms-dlt-entity-id", "OCPIHUB_SMS_DLT_ENTITY_ID", "the operator's DLT principal entity id", str(&cfg.SMSDLTEntityID), ""},
		{"sms-daily-cap", "OCPIHUB_SMS_DAILY_CAP", "receipt SMS one number gets per day", count(&cfg.SMSDailyCap, 1, 1000), "5"},
		{"phone-retention", "OCPIHUB_PHONE_RETENTION", "how long drivers' phone numbers are kept before they are erased", duration(&cfg.PhoneRetention), "2160h"},
		{"gst-supplier-name", "OCPIHUB_GST_SUPPLIER_NAME", "legal name of the operator printed on GST tax invoices", str(&cfg.GST.SupplierName), ""},
		{"gst-supplier-address", "OCPIHUB_GST_SUPPLIER_ADDRESS", "registered address printed on GST tax invoices", str(&cfg.GST.SupplierAddress), ""},
		{"gstin", "OCPIHUB_GSTIN", "the operator's GSTIN: receipts become GST tax invoices (default: plain receipts)", func(v string) error {
			v = strings.ToUpper(strings.TrimSpace(v))
			if v != "" {
				if err := receipt.CheckGSTIN(v); err != nil {
					return err
				}
			}
			cfg.GST.GSTIN = v
			return nil
		}, ""},
		{"gst-sac", "OCPIHUB_GST_SAC", "service accounting code on tax invoices", str(&cfg.GST.SAC), receipt.DefaultSAC},
		{"gst-rate", "OCPIHUB_GST_RATE", "GST rate (percent) of CDRs that give no incl_vat; they are taken as tax-inclusive", str(&cfg.GST.Rate), "18"},
		{"gst-invoice-prefix", "OCPIHUB_GST_INVOICE_PREFIX", "series of tax invoice numbers (1-3 letters or digits)", str(&cfg.GST.Prefix), "INV"},
		{"gst-credit-prefix", "OCPIHUB_GST_CREDIT_PREFIX", "series of credit note numbers (1-3 letters or digits)", str(&cfg.GST.CreditPrefix), "CRN"},
		{"command-timeout-margin", "OCPIHUB_COMMAND_TIMEOUT_MARGIN", "added to a CPO's command timeout before the requester gets TIMEOUT", duration(&cfg.CommandTimeoutMargin), "30s"},
		{"command-timeout", "OCPIHUB_COMMAND_TIMEOUT", "how long a command result is awaited when the CPO names no timeout", duration(&cfg.CommandTimeout), "60s"},
		{"legacy-sunset", "OCPIHUB_LEGACY_SUNSET", "date OCPI 2.1.1 and 2.0 stop working, announced in a Sunset header (e.g. 2027-06-30; default: none)", dateSetting(&cfg.LegacySunset), ""},
		{"legacy-deprecated", "OCPIHUB_LEGACY_DEPRECATED", "date announced in the Deprecation header of OCPI 2.1.1 and 2.0 answers (default 2021-10-01, when 2.2.1 superseded them)", dateSetting(&cfg.LegacyDeprecated), ""},
		{"legacy-policy-url", "OCPIHUB_LEGACY_POLICY_URL", "page explaining the deprecation, linked from OCPI 2.1.1 and 2.0 answers (default: none)", func(v string) error {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("want an absolute http(s) URL")
			}
			cfg.LegacyPolicyURL = v
			return nil
		}, ""},
		{"outbound-allow", "OCPIHUB_OUTBOUND_ALLOW", "internal addresses the hub may connect to although the outbound address guard refuses them: comma-separated addresses or CIDR ranges, each optionally with :port (e.g. 127.0.0.0/8,::1 or 10.1.2.3:587; default: none)", func(v string) error {
			rules, err := netguard.ParseAllow(v)
			if err != nil {
				return err
			}
			cfg.OutboundAllow = rules
			return nil
		}, ""},
		{"traffic", "OCPIHUB_TRAFFIC", "record every OCPI exchange for the traffic inspector", func(v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("want true or false")
			}
			cfg.TrafficOff = !b
			return nil
		}, "true"},
		{"traffic-retention", "OCPIHUB_TRAFFIC_RETENTION", "how long recorded OCPI exchanges are kept", duration(&cfg.TrafficRetention), "168h"},
		{"traffic-max-bytes", "OCPIHUB_TRAFFIC_MAX_BYTES", "the most the recorded exchanges may take (the oldest go first)", func(v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("want a positive number of bytes")
			}
			cfg.TrafficMaxBytes = n
			return nil
		}, "1073741824"},
		{"otlp-endpoint", "OCPIHUB_OTLP_ENDPOINT", "OpenTelemetry collector spans are exported to over OTLP/HTTP, e.g. http://localhost:4318 (default: none, tracing off; OTEL_EXPORTER_OTLP_ENDPOINT is read too)", str(&cfg.OTLPEndpoint), ""},
		{"otlp-headers", "OCPIHUB_OTLP_HEADERS", "headers sent with every span export, comma-separated key=value pairs, e.g. api-key=… (OTEL_EXPORTER_OTLP_HEADERS is read too)", func(v string) error {
			if _, err := tracing.ParseHeaders(v); err != nil {
				return err
			}
			cfg.OTLPHeaders = v
			return nil
		}, ""},
		{"otlp-service-name", "OCPIHUB_OTLP_SERVICE_NAME", "service.name of the exported spans (OTEL_SERVICE_NAME is read too)", str(&cfg.OTLPServiceName), "ocpihub"},
		{"otlp-sample-ratio", "OCPIHUB_OTLP_SAMPLE_RATIO", "share of new traces exported, from 0 to 1 (a trace a partner's traceparent continues follows its cause)", func(v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 || f > 1 {
				return fmt.Errorf("want a number above 0, at most 1")
			}
			cfg.OTLPSampleRatio = f
			return nil
		}, "1"},
		{"dev", "OCPIHUB_DEV", "development mode: allow http webhook URLs on loopback and outbound connections to loopback; in ocpihub-dev, use the PG and SMS simulators", func(v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("want true or false")
			}
			cfg.DevMode = b
			return nil
		}, "false"},
	}
}

// oneOf binds a setting that takes one of a few words (any case).
func oneOf(p *string, words ...string) func(string) error {
	return func(v string) error {
		for _, w := range words {
			if strings.EqualFold(v, w) {
				*p = w
				return nil
			}
		}
		return fmt.Errorf("want %s or %s", strings.Join(words[:len(words)-1], ", "), words[len(words)-1])
	}
}

// dateSetting parses a setting given as a date (2027-06-30) or a timestamp
// (2027-06-30T00:00:00Z).
func dateSetting(p *time.Time) func(string) error {
	return func(v string) error {
		for _, layout := range []string{"2006-01-02", time.RFC3339} {
			if t, err := time.Parse(layout, v); err == nil {
				*p = t.UTC()
				return nil
			}
		}
		return fmt.Errorf("want a date such as 2027-06-30")
	}
}

// rupees binds a setting given in rupees ("50", "50.50") to paise.
func rupees(p *int64) func(string) error {
	return func(v string) error {
		n, err := pg.ParseRupees(strings.TrimSpace(v))
		if err != nil || n <= 0 {
			return fmt.Errorf("want a positive amount in rupees such as 50 or 49.50")
		}
		*p = n
		return nil
	}
}

// configFlags registers every setting on fs, plus --config.
func configFlags(fs *flag.FlagSet, cfg *app.Config) (binds []setting, configPath *string) {
	binds = settings(cfg)
	for _, b := range binds {
		help := b.help
		if b.def != "" && !strings.Contains(help, "(default") {
			help += " (default " + b.def + ")"
		}
		help += " [" + b.env + "]"
		if b.def == "false" {
			// A boolean switch: --dev alone means true.
			fs.BoolFunc(b.name, help, b.set)
			continue
		}
		fs.Func(b.name, help, b.set)
	}
	configPath = fs.String("config", "", "config file of \"name = value\" lines using the flag names [OCPIHUB_CONFIG]")
	return binds, configPath
}

// applyConfig fills every setting not given as a flag from the environment,
// then from the config file: flags win over the environment, which wins over
// the file.
func applyConfig(fs *flag.FlagSet, binds []setting, configPath string, getenv func(string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if configPath == "" {
		configPath = getenv("OCPIHUB_CONFIG")
	}
	file := map[string]string{}
	if configPath != "" {
		f, err := os.Open(configPath)
		if err != nil {
			return fmt.Errorf("config file: %w", err)
		}
		defer f.Close()
		if file, err = parseConfigFile(f, binds); err != nil {
			return fmt.Errorf("config file %s: %w", configPath, err)
		}
	}
	for _, b := range binds {
		if given[b.name] {
			continue
		}
		v, ok := getenv(b.env), getenv(b.env) != ""
		if std := standardEnv(b.env); !ok && std != "" {
			v, ok = getenv(std), getenv(std) != ""
		}
		if !ok {
			v, ok = file[b.name]
		}
		if !ok {
			continue
		}
		if err := b.set(v); err != nil {
			return fmt.Errorf("%s: %w", b.env, err)
		}
	}
	return nil
}

// standardEnv names the standard OpenTelemetry variable a setting also
// reads, after its own: a container set up for any OpenTelemetry service
// configures the hub too.
func standardEnv(env string) string {
	switch env {
	case "OCPIHUB_OTLP_ENDPOINT":
		return "OTEL_EXPORTER_OTLP_ENDPOINT"
	case "OCPIHUB_OTLP_HEADERS":
		return "OTEL_EXPORTER_OTLP_HEADERS"
	case "OCPIHUB_OTLP_SERVICE_NAME":
		return "OTEL_SERVICE_NAME"
	}
	return ""
}

// parseConfigFile reads "name = value" lines; # starts a comment; values may
// be quoted.
func parseConfigFile(r io.Reader, binds []setting) (map[string]string, error) {
	known := map[string]bool{}
	for _, b := range binds {
		known[b.name] = true
	}
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("line %d: want name = value", n)
		}
		k = strings.ReplaceAll(k, "_", "-")
		if !known[k] {
			return nil, fmt.Errorf("line %d: unknown setting %q", n, k)
		}
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		}
		out[k] = v
	}
	return out, sc.Err()
}
