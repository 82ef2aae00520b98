package upi

import (
	"context"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/upi/orders"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
)

func (s *Service) newOrderBook() *orders.Book {
	return &orders.Book{Config: orders.Config{Presets: s.cfg.Presets, MinPaise: s.cfg.MinPaise, MaxPaise: s.cfg.MaxPaise,
		PaymentWindow: s.cfg.PaymentWindow, PollInterval: s.cfg.PollInterval},
		DB: s.db, Gateway: s.gw, Dir: s.dir, Host: host{s}, NewID: newOrderID, Clock: s.clock, Logger: s.logger}
}

// Landing returns the landing page of a sticker (orders.Book.Landing).
func (s *Service) Landing(ctx context.Context, ref string) (*orders.Landing, error) {
	return s.orders.Landing(ctx, ref)
}

// CreateOrder creates an order at the PG for the driver's choice on the
// landing page and stores it (orders.Book.Create).
func (s *Service) CreateOrder(ctx context.Context, req orders.Request) (*orders.Order, error) {
	if !s.Enabled() {
		return nil, ErrPaymentsOff
	}
	return s.orders.Create(ctx, req)
}

// Order returns an order by our id.
func (s *Service) Order(ctx context.Context, id string) (*orders.Order, error) {
	return s.orders.Get(ctx, id)
}

func (s *Service) orderCheckWorker() river.Worker[orders.CheckArgs] {
	return jobs.Func(func(ctx context.Context, a orders.CheckArgs) error { return s.orders.Check(ctx, a.OrderID) })
}

func (h host) QR(ctx context.Context, ref string) (*qrmap.QRMapping, error) {
	return h.s.QR(ctx, ref)
}

func (h host) Enabled() bool { return h.s.Enabled() }

// Phone checks a driver's number (NormalizePhone) and consent, and that
// receipts go by SMS on this hub; it returns the number sealed and its key.
func (h host) Phone(raw string, consent bool) (sealed, key string, err error) {
	e164, err := NormalizePhone(raw)
	if err != nil {
		return "", "", err
	}
	if !consent {
		return "", "", ocpi.Invalid("phone_consent", "is required to send the receipt to this number")
	}
	if h.s.sms == nil {
		return "", "", ocpi.Invalid("phone", "receipts are not sent by SMS on this hub")
	}
	return h.s.box.Seal(e164), h.s.phoneKey(e164), nil
}
