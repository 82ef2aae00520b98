package upi

import (
	"context"
	"errors"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Landing is what the landing page of a sticker shows.
type Landing struct {
	Mapping   *QRMapping
	Connector *Connector
	// Refusal says why no payment can be taken now ("" when one can).
	Refusal string
	Presets []pg.Amount
	Min     pg.Amount
	Max     pg.Amount
	// Estimates say what each preset buys now at the connector's tariff,
	// and ParkingNote what parking costs ("" when nothing).
	Estimates   []Estimate
	ParkingNote string
}

// Landing returns the landing page of a sticker: the mapping and its
// connector as the directory has it now. It is ENOTFOUND for an unknown
// reference.
func (s *Service) Landing(ctx context.Context, ref string) (*Landing, error) {
	m, err := s.QR(ctx, ref)
	if err != nil {
		return nil, err
	}
	l := &Landing{Mapping: m, Min: pg.INR(s.cfg.MinPaise), Max: pg.INR(s.cfg.MaxPaise)}
	for _, p := range s.cfg.Presets {
		if p >= s.cfg.MinPaise && p <= s.cfg.MaxPaise {
			l.Presets = append(l.Presets, pg.INR(p))
		}
	}
	c, err := s.dir.Connector(ctx, m.Ref())
	switch {
	case err == nil:
		l.Connector = c
	case isNotFound(err) || ocpi.ErrorCode(err) == ocpi.EUNKNOWNLOCATION:
		l.Refusal = "This charger is no longer listed. Please use another one."
		return l, nil
	default:
		return nil, err
	}
	l.Refusal = s.refusal(m, c)
	l.Estimates = c.Estimates(l.Presets, s.now())
	l.ParkingNote = c.ParkingNote(s.now())
	return l, nil
}

// refusal says why a connector cannot take a payment now ("" if it can).
func (s *Service) refusal(m *QRMapping, c *Connector) string {
	switch {
	case m.Status != QRActive:
		return "This QR code is no longer in use. Please use the code on the charger or another charger."
	case !s.Enabled():
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
	ref       ConnectorRef
	pk        int64
}

// OrderRequest is the driver's choice on the landing page.
type OrderRequest struct {
	QRRef string
	// Paise is the amount to pay.
	Paise int64
	// Email, optional, receives the receipt.
	Email string
	// Phone, optional, receives the receipt by SMS (NormalizePhone), with
	// PhoneConsent: the driver agreed to its use for the receipt.
	Phone        string
	PhoneConsent bool
	// Admit, when set, is called once the request is valid and before the
	// payment gateway is called; its error refuses the order. The driver
	// pages count orders against their per-QR limit here, so invalid
	// requests never spend it.
	Admit func() error
}

// CreateOrder checks that the connector can be paid for now and the amount
// is within bounds, creates the order and its UPI QR code at the PG (notes
// carry qr_ref and our order id) and stores the order.
func (s *Service) CreateOrder(ctx context.Context, req OrderRequest) (*Order, error) {
	if !s.Enabled() {
		return nil, ErrPaymentsOff
	}
	l, err := s.Landing(ctx, req.QRRef)
	if err != nil {
		return nil, err
	}
	if l.Refusal != "" {
		return nil, &ocpi.Error{Code: ocpi.EINVALID, Field: "qr_ref", Issue: "cannot take a payment now", Message: l.Refusal}
	}
	if req.Paise < s.cfg.MinPaise || req.Paise > s.cfg.MaxPaise {
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
		e164, err := NormalizePhone(req.Phone)
		if err != nil {
			return nil, err
		}
		if !req.PhoneConsent {
			return nil, ocpi.Invalid("phone_consent", "is required to send the receipt to this number")
		}
		if s.sms == nil {
			return nil, ocpi.Invalid("phone", "receipts are not sent by SMS on this hub")
		}
		phone, phoneKey, consentAt = s.box.Seal(e164), s.phoneKey(e164), s.micros()
	}
	if req.Admit != nil {
		if err := req.Admit(); err != nil {
			return nil, err
		}
	}
	c := l.Connector
	o := &Order{ID: newOrderID(), QRRef: l.Mapping.QRRef, Amount: pg.INR(req.Paise), Email: req.Email, ref: c.ConnectorRef,
		CreatedAt: s.now()}
	o.ExpiresAt = o.CreatedAt.Add(s.cfg.PaymentWindow)
	notes := map[string]string{"qr_ref": o.QRRef, "order": o.ID, "location_id": c.LocationID, "evse_uid": c.EVSEUID,
		"connector_id": c.ConnectorID}
	po, err := s.gw.CreateOrder(ctx, pg.OrderRequest{Amount: o.Amount, Receipt: o.ID, Notes: notes})
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
	qr, err := s.gw.CreateUPIQR(ctx, pg.QRRequest{OrderID: po.ID, Amount: o.Amount, Name: truncate(name, 80),
		Description: truncate("Charging at "+c.Label(), 100), CloseBy: closeBy, Notes: map[string]string{"qr_ref": o.QRRef, "order": o.ID}})
	if err != nil {
		return nil, pgUnavailable("create the UPI QR code", err)
	}
	o.Intent, o.QRImageURL = qr.Intent, qr.ImageURL
	err = s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO upi_orders (id, pg_order_id, qr_ref, country_code, party_id, location_id, evse_uid,
			connector_id, amount_paise, currency, email, pg_qr_id, qr_image_url, intent, created_at, expires_at, phone, phone_key, phone_consent_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) RETURNING pk`,
			o.ID, o.PGOrderID, o.QRRef, ocpi.Key(c.CountryCode), ocpi.Key(c.PartyID), c.LocationID, c.EVSEUID, c.ConnectorID,
			o.Amount.Paise, o.Amount.Currency, o.Email, qr.ID, o.QRImageURL, o.Intent, micros(o.CreatedAt), micros(o.ExpiresAt),
			phone, phoneKey, consentAt).Scan(&o.pk); err != nil {
			return err
		}
		_, err := s.jobs.InsertTx(ctx, tx, orderCheckArgs{OrderID: o.ID},
			&river.InsertOpts{Queue: jobs.QueueMoney, ScheduledAt: o.CreatedAt.Add(s.orderCheckDelay(0))})
		return err
	})
	if err != nil {
		return nil, err
	}
	s.logger.InfoContext(ctx, "UPI order created", "order", o.ID, "pg_order_id", o.PGOrderID, "qr_ref", o.QRRef, "amount", o.Amount.String())
	return o, nil
}

// pgUnavailable answers a failed PG call to a driver: try again later.
func pgUnavailable(what string, err error) error {
	return &ocpi.Error{Code: ocpi.EUNAVAILABLE, Message: "the payment gateway could not " + what + "; please try again in a moment", Err: err}
}

const orderColumns = `pk, id, pg_order_id, qr_ref, country_code, party_id, location_id, evse_uid, connector_id, amount_paise,
	currency, email, qr_image_url, intent, payment_id, created_at, expires_at`

func scanOrder(row interface{ Scan(...any) error }) (*Order, error) {
	var o Order
	var created, expires int64
	err := row.Scan(&o.pk, &o.ID, &o.PGOrderID, &o.QRRef, &o.ref.CountryCode, &o.ref.PartyID, &o.ref.LocationID, &o.ref.EVSEUID,
		&o.ref.ConnectorID, &o.Amount.Paise, &o.Amount.Currency, &o.Email, &o.QRImageURL, &o.Intent, &o.PaymentID, &created, &expires)
	o.CreatedAt, o.ExpiresAt = time.UnixMicro(created).UTC(), time.UnixMicro(expires).UTC()
	return &o, err
}

// Order returns an order by our id.
func (s *Service) Order(ctx context.Context, id string) (*Order, error) {
	o, err := scanOrder(s.db.Read().QueryRow(ctx, "SELECT "+orderColumns+" FROM upi_orders WHERE id = $1", id))
	if errors.Is(err, store.ErrNoRows) {
		return nil, errNotFound("order")
	}
	return o, err
}

func orderByPG(ctx context.Context, q store.Querier, pgOrderID string) (*Order, error) {
	return scanOrder(q.QueryRow(ctx, "SELECT "+orderColumns+" FROM upi_orders WHERE pg_order_id = $1", pgOrderID))
}

func orderByPK(ctx context.Context, q store.Querier, pk int64) (*Order, error) {
	return scanOrder(q.QueryRow(ctx, "SELECT "+orderColumns+" FROM upi_orders WHERE pk = $1", pk))
}

// orderCheckArgs is the job that asks the PG for an order's payments while
// the order is open: the safety net for webhooks that never come (a
// misconfigured webhook URL or secret, an outage longer than the PG's
// retries). What it finds goes through the same state machine.
type orderCheckArgs struct {
	OrderID string `json:"order_id"`
}

func (orderCheckArgs) Kind() string { return "upi_order_check" }

type orderCheckWorker struct {
	river.WorkerDefaults[orderCheckArgs]
	s *Service
}

// orderCheckDelay is the wait before the next look at an order age old:
// half its age, from 6 to 24 poll intervals (30 s to 2 minutes by default).
func (s *Service) orderCheckDelay(age time.Duration) time.Duration {
	return min(max(age/2, 6*s.cfg.PollInterval), 24*s.cfg.PollInterval)
}

// Work asks the PG for the order's payments until one is captured or the
// order's window (and the grace after it) has passed; a last look is taken
// after that.
func (w *orderCheckWorker) Work(ctx context.Context, job *river.Job[orderCheckArgs]) error {
	s := w.s
	o, err := s.Order(ctx, job.Args.OrderID)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if o.PaymentID != "" {
		return nil
	}
	payments, err := s.gw.OrderPayments(ctx, o.PGOrderID)
	if err != nil && !pg.IsRetryable(err) {
		s.logger.WarnContext(ctx, "asking the PG for an order's payments failed", "order", o.ID, "error", err)
	}
	for _, p := range payments {
		obs := observationOf(&p, "order check")
		if err := s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := s.applyPayment(ctx, tx, obs)
			return err
		}); err != nil {
			return err
		}
	}
	if s.now().After(o.ExpiresAt.Add(s.cfg.PaymentWindow)) {
		return nil
	}
	return river.JobSnooze(s.orderCheckDelay(s.now().Sub(o.CreatedAt)))
}
