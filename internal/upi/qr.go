package upi

import (
	"context"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
)

func (s *Service) newQRBook() *qrmap.Book {
	return &qrmap.Book{DB: s.db, Dir: s.dir, Clock: s.clock, Logger: s.logger, PublicURL: s.cfg.PublicURL,
		NewRef: func() string { return strings.ToUpper(randomID(10)) }}
}

// CreateQR creates a mapping (qrmap.Book.Create).
func (s *Service) CreateQR(ctx context.Context, in qrmap.QRCreate) (*qrmap.QRMapping, error) {
	return s.qr.Create(ctx, in)
}

// QRURL is the landing page URL a sticker encodes.
func (s *Service) QRURL(ref string) string { return s.qr.URL(ref) }

// QR returns a mapping by its reference.
func (s *Service) QR(ctx context.Context, ref string) (*qrmap.QRMapping, error) {
	return s.qr.Get(ctx, ref)
}

// ListQR returns a page of mappings, oldest change first.
func (s *Service) ListQR(ctx context.Context, f qrmap.QRFilter, p ocpi.PageRequest) ([]*qrmap.QRMapping, ocpi.Page, error) {
	return s.qr.List(ctx, f, p)
}

// DisableQR disables a mapping: its sticker stops taking payments and the
// connector may get a new mapping.
func (s *Service) DisableQR(ctx context.Context, ref string) (*qrmap.QRMapping, error) {
	return s.qr.Disable(ctx, ref)
}

// where adds a condition on one argument to a list (qrmap.Where).
func where(l *store.List, cond string, arg any) { qrmap.Where(l, cond, arg) }

// listPage runs a List whose rows scan into T (qrmap.ListPage).
func listPage[T any](ctx context.Context, q store.Querier, l store.List, scan func(interface{ Scan(...any) error }) (T, error),
	key func(T) (int64, int64)) ([]T, ocpi.Page, error) {
	return qrmap.ListPage(ctx, q, l, scan, key)
}
