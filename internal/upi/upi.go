// Package upi is ocpihub's QR-code charging paid by UPI (upi.md): the QR
// mappings printed on connectors, the orders the landing page creates at the
// payment gateway (PG), the PG's webhooks, the payment state machine,
// START_SESSION as ocpihub's own eMSP, refunds, the reconciliation of the
// CDR against the captured amount, and receipts.
//
// The flow: a driver scans the sticker of a connector (a QR mapping), picks
// an amount on our landing page, and pays the PG order we created for it.
// The PG's signed webhook is verified, stored and deduplicated in the
// request (ReceiveWebhook) and worked in a job: the payment moves forward
// only (pg.PaymentStatus.Rank). A verified capture enqueues START_SESSION,
// sent by a job as ocpihub's eMSP with an AD_HOC_USER token issued for the
// payment and authorization_reference = the payment id. The CPO's answer,
// the Session and the CDR find the payment by that reference. A start that
// is rejected, fails, times out or brings no session within a deadline is
// refunded in full; a completed session is settled against its CDR: the
// excess is refunded (below ₹1.00 it is recorded as not refundable), a
// shortfall is recorded and alerted, and a receipt is issued.
//
// Every state change that causes work enqueues its job in the same
// transaction; every job is idempotent. Money is int64 paise (pg.Amount).
//
// Decisions where the spec is silent:
//   - tenant_id of a QR mapping is the CPO party that owns the location,
//     written "CC*PID" (e.g. "IN*CPO"); it is derived from the location when
//     omitted and the location id is unambiguous.
//   - Payments are one row per PG payment (pg_payment_id unique); an order
//     belongs to one scan of one sticker and starts at most one session: a
//     second captured payment on an order that has one is refunded in full.
//   - Payments for orders ocpihub did not create are ignored (the PG account
//     may serve other products); they are logged.
//   - A capture that arrives after the payment window (the order's expiry)
//     is refunded in full instead of starting a charger the driver has left.
//   - CDR costs are total_cost.incl_vat (excl_vat when absent) converted to
//     paise rounding half away from zero; the identity kept for every
//     settled payment is captured = cost + refunded + not_refundable −
//     shortfall (the shortfall is the part of the cost the capture did not
//     cover).
//   - A CDR whose total_cost the hub's own price disputes (internal/cdr's
//     price check) does not settle its payment by default: the payment is
//     held for the operator, who settles it on the CDR's total or the hub's
//     price (Resolve; hold.go says why holding is the default).
package upi

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/sealbox"
	"github.com/ocpihub/ocpihub/internal/sms"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/intake"
	"github.com/ocpihub/ocpihub/internal/upi/orders"
	"github.com/ocpihub/ocpihub/internal/upi/printer"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
	"github.com/ocpihub/ocpihub/internal/upi/smsreceipt"
)

// Config holds the settings of UPI charging.
type Config struct {
	// PublicURL is the base URL drivers and partners reach the hub at: QR
	// codes, status pages and receipts are under it.
	PublicURL string
	// EMSPCountryCode, EMSPPartyID and EMSPName are ocpihub's own eMSP
	// party, the issuer of the payments' tokens.
	EMSPCountryCode, EMSPPartyID, EMSPName string
	// Presets are the amounts (paise) the landing page offers.
	Presets []int64
	// MinPaise and MaxPaise bound the amount a driver may pay.
	MinPaise, MaxPaise int64
	// PaymentWindow is how long an order accepts a payment and a pending
	// payment is polled (default 15 minutes).
	PaymentWindow time.Duration
	// SessionDeadline is how long after START_SESSION a session must be seen
	// before the payment is refunded (default 5 minutes).
	SessionDeadline time.Duration
	// CDRDeadline is how long after a session ends its CDR may take before
	// cdr.missing is raised (default 1 hour).
	CDRDeadline time.Duration
	// MaxSessionAge raises an alert for a session still charging this long
	// after it started (default 24 hours).
	MaxSessionAge time.Duration
	// StartDelay is how long START_SESSION waits after a capture (default
	// none): a moment for the driver to plug in, for chargers that refuse a
	// remote start without a vehicle.
	StartDelay time.Duration
	// PollInterval is the first and shortest wait between polls of a
	// pending payment (default 5 s; the waits grow with the payment's age).
	PollInterval time.Duration
	// RetryBase is the first retry delay of START_SESSION and refund jobs
	// (doubling; default: the job queue's backoff from 2 s).
	RetryBase time.Duration
	// OtherTokenCPOs are CPO parties ("CC*PID") that reject AD_HOC_USER
	// tokens: START_SESSION sends them a token of type OTHER.
	OtherTokenCPOs []string
	// CostMismatch is how a payment is settled when the hub flagged its
	// CDR's total_cost (MismatchHold, the default; MismatchCDR;
	// MismatchHub).
	CostMismatch string
	// GST makes receipts GST tax invoices (see GSTConfig).
	GST receipt.GSTConfig
	// SMSDailyCap is how many receipt SMS one number gets a day (default
	// 5); SMSAttempts how often a send is tried before the delivery fails
	// (default 6, with the module's backoff).
	SMSDailyCap, SMSAttempts int
	// PhoneRetention is how long a driver's phone number is kept (default
	// 90 days); then it is erased.
	PhoneRetention time.Duration
}

// withDefaults fills zero settings with their defaults.
func (c Config) withDefaults() Config {
	if len(c.Presets) == 0 {
		c.Presets = []int64{100_00, 200_00, 500_00}
	}
	if c.MinPaise <= 0 {
		c.MinPaise = 50_00
	}
	if c.MaxPaise <= 0 {
		c.MaxPaise = 5_000_00
	}
	if c.PaymentWindow <= 0 {
		c.PaymentWindow = 15 * time.Minute
	}
	if c.SessionDeadline <= 0 {
		c.SessionDeadline = 5 * time.Minute
	}
	if c.CDRDeadline <= 0 {
		c.CDRDeadline = time.Hour
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 5 * time.Second
	}
	if c.MaxSessionAge <= 0 {
		c.MaxSessionAge = 24 * time.Hour
	}
	if c.CostMismatch == "" {
		c.CostMismatch = MismatchHold
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	c.GST = c.GST.WithDefaults()
	if c.SMSDailyCap <= 0 {
		c.SMSDailyCap = 5
	}
	if c.SMSAttempts <= 0 {
		c.SMSAttempts = 6
	}
	if c.PhoneRetention <= 0 {
		c.PhoneRetention = 90 * 24 * time.Hour
	}
	return c
}

// Deps are the services the UPI module works with.
type Deps struct {
	DB       *store.DB
	Jobs     *jobs.Client
	Gateway  pg.Gateway
	Dir      Directory
	Commands Commands
	Tokens   Tokens
	Events   event.Emitter
	Renderer printer.Renderer
	Notifier receipt.Notifier
	// SMS sends receipts by SMS to drivers who gave a number (nil: no SMS;
	// the landing page does not ask for one).
	SMS sms.Gateway
	// Box seals drivers' phone numbers; PhoneKey keys the hash that counts
	// a number's SMS per day.
	Box      *sealbox.Box
	PhoneKey []byte
	Clock    clock.Clock
	Logger   *slog.Logger
	Registry *prometheus.Registry
}

// Service is the UPI module.
type Service struct {
	cfg  Config
	db   *store.DB
	jobs jobQueue
	// periodic is the job client the module's periodic jobs are added to
	// (nil in the property test's harness, which runs jobs itself).
	periodic *jobs.Client
	gw       pg.Gateway
	dir      Directory
	commands Commands
	tokens   Tokens
	events   event.Emitter
	render   printer.Renderer
	notifier receipt.Notifier
	sms      sms.Gateway
	box      *sealbox.Box
	clock    clock.Clock
	logger   *slog.Logger
	metrics  *metrics

	phoneHashKey []byte
	// texts sends receipts by SMS (package smsreceipt).
	texts *smsreceipt.Sender
	// refunder is the refund machine (package refunds).
	refunder *refunds.Machine
	// qr is the book of QR mappings (package qrmap).
	qr *qrmap.Book
	// intake takes the PG's webhooks (package intake).
	intake *intake.Intake
	// orders is the order book (package orders).
	orders *orders.Book
}

// New builds the module and registers its job workers on deps.Jobs. A nil
// Gateway turns payments off (QR mappings still work).
func New(cfg Config, d Deps) *Service {
	if d.Events == nil {
		d.Events = event.Discard{}
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Clock == nil {
		d.Clock = clock.Real{}
	}
	if d.Renderer == nil {
		d.Renderer = printer.None{}
	}
	if d.Notifier == nil {
		d.Notifier = receipt.LogNotifier{Logger: d.Logger}
	}
	s := &Service{
		cfg: cfg.withDefaults(), db: d.DB, gw: d.Gateway, dir: d.Dir, commands: d.Commands, tokens: d.Tokens,
		events: d.Events, render: d.Renderer, notifier: d.Notifier, sms: d.SMS, box: d.Box, phoneHashKey: d.PhoneKey, clock: d.Clock,
		logger: d.Logger.With("module", "upi"), metrics: newMetrics(d.Registry),
	}
	s.texts = s.newSMSSender()
	s.qr = s.newQRBook()
	s.orders = s.newOrderBook()
	s.refunder = &refunds.Machine{DB: d.DB, Host: refundHost{s}, Events: d.Events, Clock: d.Clock, Logger: s.logger,
		Counter: s.metrics.refunds}
	s.intake = &intake.Intake{DB: d.DB, Gateway: d.Gateway, Host: host{s}, Clock: d.Clock, Logger: s.logger,
		Counter: s.metrics.webhooks}
	if d.Jobs != nil {
		s.jobs, s.periodic = d.Jobs, d.Jobs
		s.addWorkers(d.Jobs)
	}
	return s
}

// jobQueue enqueues the module's follow-up work in the transaction of the
// change that causes it (jobs.Client; the property test's harness keeps
// the jobs itself, to run them in an order of its choosing).
type jobQueue interface {
	InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// SMSEnabled reports whether receipts can be sent by SMS.
func (s *Service) SMSEnabled() bool { return s.sms != nil }

// Settings returns the effective configuration.
func (s *Service) Settings() Config { return s.cfg }

// Enabled reports whether payments can be taken (a gateway is configured).
func (s *Service) Enabled() bool { return s.gw != nil }

// ErrPaymentsOff is returned when no payment gateway is configured.
var ErrPaymentsOff = &ocpi.Error{Code: ocpi.EUNAVAILABLE, Message: "UPI payments are off: no payment gateway is configured"}

func (s *Service) now() time.Time { return s.clock.Now() }

func (s *Service) micros() int64 { return s.clock.Now().UnixMicro() }

// inTx runs fn in a write transaction.
func (s *Service) inTx(ctx context.Context, fn func(ctx context.Context, tx *store.Tx) error) error {
	return s.db.InTx(ctx, fn)
}

// randomID returns n characters of lower-case base32 (5 bits each) from the
// system's CSPRNG.
func randomID(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return string(b)
}

// newPaymentID returns a payment id: "UPI" and 20 upper-case base32
// characters (100 bits). It is the authorization_reference of the session
// and the uid of the payment's token, both CiString(36); upper case keeps
// it stable through partners that upper-case CiStrings.
func newPaymentID() string { return "UPI" + strings.ToUpper(randomID(20)) }

// newOrderID returns the id of an order: 26 characters (130 bits), the
// unguessable part of its status page's URL.
func newOrderID() string { return randomID(26) }

// newReceiptID returns the id of a receipt: 32 characters (160 bits), the
// unguessable part of its URL.
func newReceiptID() string { return randomID(32) }

// newShortCode returns the code of a receipt's short link: 16 characters
// (80 bits), unguessable but short enough for an SMS template variable.
func newShortCode() string { return randomID(16) }

// errNotFound names what was not found.
func errNotFound(what string) error {
	return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: what + " not found"}
}

// isNotFound reports a not-found error.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNoRows) || ocpi.IsNotFound(err) }
