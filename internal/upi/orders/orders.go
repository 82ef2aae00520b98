// Package orders is the order book of UPI charging: the landing page of a
// sticker (what the connector is, what can be paid), the orders the landing
// page creates at the payment gateway (PG) with their UPI QR codes, the
// upi_orders rows, and the order check, the job that asks the PG for an
// open order's payments when its webhooks do not come. What the PG says of
// a payment goes to the payment machine (package upi) through Host.
package orders

import (
	"context"
	"errors"
	"log/slog"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/charger"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
)

// Host is what the order book needs of the payment module (package upi),
// asked for at each use (its tests swap the job queue, the SMS gateway and
// the box after construction).
type Host interface {
	// QR returns a QR mapping by its reference (ENOTFOUND when unknown).
	QR(ctx context.Context, ref string) (*qrmap.QRMapping, error)
	// Enabled reports whether payments can be taken.
	Enabled() bool
	// Phone checks the driver's number and consent and returns the
	// number sealed and its key ("" for no number).
	Phone(raw string, consent bool) (sealed, key string, err error)
	// ApplyPayment moves a payment forward with what the PG says of it.
	ApplyPayment(ctx context.Context, tx *store.Tx, p *pg.Payment, source string) (outcome string, err error)
	// InsertTx enqueues a job in tx.
	InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Directory looks connectors up in the hub's location directory.
type Directory interface {
	Connector(ctx context.Context, ref charger.ConnectorRef) (*charger.Connector, error)
}

// Config holds the settings of the order book (upi.Config's, with its
// defaults applied).
type Config struct {
	// Presets are the amounts (paise) the landing page offers.
	Presets []int64
	// MinPaise and MaxPaise bound the amount a driver may pay.
	MinPaise, MaxPaise int64
	// PaymentWindow is how long an order accepts a payment.
	PaymentWindow time.Duration
	// PollInterval paces the order check.
	PollInterval time.Duration
}

// Book creates, reads and checks orders.
type Book struct {
	Config  Config
	DB      *store.DB
	Gateway pg.Gateway
	Dir     Directory
	Host    Host
	// NewID returns the id of a new order: the unguessable part of its
	// status page's URL.
	NewID  func() string
	Clock  clock.Clock
	Logger *slog.Logger
}

func (b *Book) now() time.Time { return b.Clock.Now() }

// Landing is what the landing page of a sticker shows.
type Landing struct {
	Mapping   *qrmap.QRMapping
	Connector *charger.Connector
	// Refusal says why no payment can be taken now ("" when one can).
	Refusal string
	Presets []pg.Amount
	Min     pg.Amount
	Max     pg.Amount
	// Estimates say what each preset buys now at the connector's tariff,
	// and ParkingNote what parking costs ("" when nothing).
	Estimates   []charger.Estimate
	ParkingNote string
}

// Landing returns the landing page of a sticker: the mapping and its
// connector as the directory has it now. It is ENOTFOUND for an unknown
// reference.
func (b *Book) Landing(ctx context.Context, ref string) (*Landing, error) {
	m, err := b.Host.QR(ctx, ref)
	if err != nil {
		return nil, err
	}
	l := &Landing{Mapping: m, Min: pg.INR(b.Config.MinPaise), Max: pg.INR(b.Config.MaxPaise)}
	for _, p := range b.Config.Presets {
		if p >= b.Config.MinPaise && p <= b.Config.MaxPaise {
			l.Presets = append(l.Presets, pg.INR(p))
		}
	}
	c, err := b.Dir.Connector(ctx, m.Ref())
	switch {
	case err == nil:
		l.Connector = c
	case isNotFound(err) || ocpi.ErrorCode(err) == ocpi.EUNKNOWNLOCATION:
		l.Refusal = "This charger is no longer listed. Please use another one."
		return l, nil
	default:
		return nil, err
	}
	l.Refusal = b.refusal(m, c)
	l.Estimates = c.Estimates(l.Presets, b.now())
	l.ParkingNote = c.ParkingNote(b.now())
	return l, nil
}

// refusal says why a connector cannot take a payment now ("" if it can).
func (b *Book) refusal(m *qrmap.QRMapping, c *charger.Connector) string {
	switch {
	case m.Status != qrmap.Active:
		return "This QR code is no longer in use. Please use the code on the charger or another charger."
	case !b.Host.Enabled():
		return "Payments are not available at the moment."
	case c.Status == "CHARGING" || c.Status == "BLOCKED" || c.Status == "RESERVED":
		return "This charger is in use right now. Please wait until it is free or use another one."
	case !c.Available():
		return "This charger is not available right now (" + strings.ToLower(strings.ReplaceAll(c.Status, "_", " ")) + "). Please use another one."
	case len(c.Capabilities) > 0 && !slices.Contains(c.Capabilities, "REMOTE_START_STOP_CAPABLE"):
		return "This charger cannot be started remotely, so it cannot be paid for by UPI."
	}
	return ""
}

// Order is a PG order created from the landing page.
type Order struct {
	ID        string
	PGOrderID string
	QRRef     string
	Amount    pg.Amount
	Email     string
	// Intent is the upi://pay link (phones); QRImageURL the PG's page or
	// image of the code (desktops).
	Intent     string
	QRImageURL string
	// PaymentID is the captured payment that owns the session ("" none).
	PaymentID string
	CreatedAt time.Time
	ExpiresAt time.Time
	ref       charger.ConnectorRef
	pk        int64
}

// PK is the order's row key (upi_payments.order_pk).
func (o *Order) PK() int64 { return o.pk }

// Ref is the connector the order pays for.
func (o *Order) Ref() charger.ConnectorRef { return o.ref }

// Request is the driver's choice on the landing page.
type Request struct {
	QRRef string
	// Paise is the amount to pay.
	Paise int64
	// Email, optional, receives the receipt.
	Email string
	// Phone, optional, receives the receipt by SMS (upi.NormalizePhone),
	// with PhoneConsent: the driver agreed to its use for the receipt.
	Phone        string
	PhoneConsent bool
	// Admit, when set, is called once the request is valid and before the
	// payment gateway is called; its error refuses the order. The driver
	// pages count orders against their per-QR limit here, so invalid
	// requests never spend it.
	Admit func() error
}

// Create checks that the connector can be paid for now and the amount is
// within bounds, creates the order and its UPI QR code at the PG (notes
// carry qr_ref and our order id) and stores the order with its order check.
func (b *Book) Create(ctx context.Context, req Request) (*Order, error) {
	l, err := b.Landing(ctx, req.QRRef)
	if err != nil {
		return nil, err
	}
	if l.Refusal != "" {
		return nil, &ocpi.Error{Code: ocpi.EINVALID, Field: "qr_ref", Issue: "cannot take a payment now", Message: l.Refusal}
	}
	if req.Paise < b.Config.MinPaise || req.Paise > b.Config.MaxPaise {
		return nil, ocpi.Invalid("amount", "must be between "+l.Min.Display()+" and "+l.Max.Display())
	}
	req.Email = strings.TrimSpace(req.Email)
	if req.Email != "" {
		if a, err := mail.ParseAddress(req.Email); err != nil || a.Address != req.Email || len(req.Email) > 254 {
			return nil, ocpi.Invalid("email", "is not an e-mail address")
		}
	}
	var phone, phoneKey string
	var consentAt int64
	if req.Phone = strings.TrimSpace(req.Phone); req.Phone != "" {
		if phone, phoneKey, err = b.Host.Phone(req.Phone, req.PhoneConsent); err != nil {
			return nil, err
		}
		consentAt = b.now().UnixMicro()
	}
	if req.Admit != nil {
		if err := req.Admit(); err != nil {
			return nil, err
		}
	}
	c := l.Connector
	o := &Order{ID: b.NewID(), QRRef: l.Mapping.QRRef, Amount: pg.INR(req.Paise), Email: req.Email, ref: c.ConnectorRef,
		CreatedAt: b.now()}
	o.ExpiresAt = o.CreatedAt.Add(b.Config.PaymentWindow)
	notes := map[string]string{"qr_ref": o.QRRef, "order": o.ID, "location_id": c.LocationID, "evse_uid": c.EVSEUID,
		"connector_id": c.ConnectorID}
	po, err := b.Gateway.CreateOrder(ctx, pg.OrderRequest{Amount: o.Amount, Receipt: o.ID, Notes: notes})
	if err != nil {
		return nil, pgUnavailable("create the order", err)
	}
	o.PGOrderID = po.ID
	name := c.LocationName
	if name == "" {
		name = "EV charging"
	}
	// The PG closes codes no sooner than two minutes from now; a payment
	// after our window is refunded anyway.
	closeBy := o.ExpiresAt
	if earliest := o.CreatedAt.Add(150 * time.Second); closeBy.Before(earliest) {
		closeBy = earliest
	}
	qr, err := b.Gateway.CreateUPIQR(ctx, pg.QRRequest{OrderID: po.ID, Amount: o.Amount, Name: paymentrow.Truncate(name, 80),
		Description: paymentrow.Truncate("Charging at "+c.Label(), 100), CloseBy: closeBy,
		Notes: map[string]string{"qr_ref": o.QRRef, "order": o.ID}})
	if err != nil {
		return nil, pgUnavailable("create the UPI QR code", err)
	}
	o.Intent, o.QRImageURL = qr.Intent, qr.ImageURL
	err = b.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO upi_orders (id, pg_order_id, qr_ref, country_code, party_id, location_id, evse_uid,
			connector_id, amount_paise, currency, email, pg_qr_id, qr_image_url, intent, created_at, expires_at, phone, phone_key, phone_consent_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) RETURNING pk`,
			o.ID, o.PGOrderID, o.QRRef, ocpi.Key(c.CountryCode), ocpi.Key(c.PartyID), c.LocationID, c.EVSEUID, c.ConnectorID,
			o.Amount.Paise, o.Amount.Currency, o.Email, qr.ID, o.QRImageURL, o.Intent, o.CreatedAt.UnixMicro(), o.ExpiresAt.UnixMicro(),
			phone, phoneKey, consentAt).Scan(&o.pk); err != nil {
			return err
		}
		_, err := b.Host.InsertTx(ctx, tx, CheckArgs{OrderID: o.ID},
			&river.InsertOpts{Queue: jobs.QueueMoney, ScheduledAt: o.CreatedAt.Add(b.checkDelay(0))})
		return err
	})
	if err != nil {
		return nil, err
	}
	b.Logger.InfoContext(ctx, "UPI order created", "order", o.ID, "pg_order_id", o.PGOrderID, "qr_ref", o.QRRef, "amount", o.Amount.String())
	return o, nil
}

// pgUnavailable answers a failed PG call to a driver: try again later.
func pgUnavailable(what string, err error) error {
	return &ocpi.Error{Code: ocpi.EUNAVAILABLE, Message: "the payment gateway could not " + what + "; please try again in a moment", Err: err}
}

// isNotFound reports a not-found error.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNoRows) || ocpi.IsNotFound(err) }

const columns = `pk, id, pg_order_id, qr_ref, country_code, party_id, location_id, evse_uid, connector_id, amount_paise,
	currency, email, qr_image_url, intent, payment_id, created_at, expires_at`

func scan(row interface{ Scan(...any) error }) (*Order, error) {
	var o Order
	var created, expires int64
	err := row.Scan(&o.pk, &o.ID, &o.PGOrderID, &o.QRRef, &o.ref.CountryCode, &o.ref.PartyID, &o.ref.LocationID, &o.ref.EVSEUID,
		&o.ref.ConnectorID, &o.Amount.Paise, &o.Amount.Currency, &o.Email, &o.QRImageURL, &o.Intent, &o.PaymentID, &created, &expires)
	o.CreatedAt, o.ExpiresAt = time.UnixMicro(created).UTC(), time.UnixMicro(expires).UTC()
	return &o, err
}

// Get returns an order by our id (ENOTFOUND when there is none).
func (b *Book) Get(ctx context.Context, id string) (*Order, error) {
	o, err := scan(b.DB.Read().QueryRow(ctx, "SELECT "+columns+" FROM upi_orders WHERE id = $1", id))
	if errors.Is(err, store.ErrNoRows) {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "order not found"}
	}
	return o, err
}

// ByPG reads the order of a PG order id (store.ErrNoRows when there is
// none).
func ByPG(ctx context.Context, q store.Querier, pgOrderID string) (*Order, error) {
	return scan(q.QueryRow(ctx, "SELECT "+columns+" FROM upi_orders WHERE pg_order_id = $1", pgOrderID))
}

// ByPK reads an order by its row key (store.ErrNoRows when there is none).
func ByPK(ctx context.Context, q store.Querier, pk int64) (*Order, error) {
	return scan(q.QueryRow(ctx, "SELECT "+columns+" FROM upi_orders WHERE pk = $1", pk))
}

// CheckArgs is the job that asks the PG for an order's payments while the
// order is open: the safety net for webhooks that never come (a
// misconfigured webhook URL or secret, an outage longer than the PG's
// retries). What it finds goes through the same state machine.
type CheckArgs struct {
	OrderID string `json:"order_id"`
}

// Kind names the job.
func (CheckArgs) Kind() string { return "upi_order_check" }

// checkDelay is the wait before the next look at an order age old: half
// its age, from 6 to 24 poll intervals (30 s to 2 minutes by default).
func (b *Book) checkDelay(age time.Duration) time.Duration {
	return min(max(age/2, 6*b.Config.PollInterval), 24*b.Config.PollInterval)
}

// Check asks the PG for the order's payments until one is captured or the
// order's window (and the grace after it) has passed; a last look is taken
// after that. It returns river.JobSnooze while the order is still open.
func (b *Book) Check(ctx context.Context, orderID string) error {
	o, err := b.Get(ctx, orderID)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.PaymentID != "" {
		return nil
	}
	payments, err := b.Gateway.OrderPayments(ctx, o.PGOrderID)
	if err != nil && !pg.IsRetryable(err) {
		b.Logger.WarnContext(ctx, "asking the PG for an order's payments failed", "order", o.ID, "error", err)
	}
	for _, p := range payments {
		if err := b.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := b.Host.ApplyPayment(ctx, tx, &p, "order check")
			return err
		}); err != nil {
			return err
		}
	}
	if b.now().After(o.ExpiresAt.Add(b.Config.PaymentWindow)) {
		return nil
	}
	return river.JobSnooze(b.checkDelay(b.now().Sub(o.CreatedAt)))
}
