package upi

import (
	"context"
	"errors"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// The operator's refunds and the refund machine's job and host (package
// refunds).

// CreateRefund refunds part of a payment at the operator's request
// (refunds.Machine.Create): stored QUEUED with its job, sent to the PG by the
// job. A repeated refund_id with the same payment and amount returns the
// first refund and sends nothing (isNew false); with anything else it is a
// conflict. The sum of refunds never exceeds the capture.
func (s *Service) CreateRefund(ctx context.Context, req refunds.RefundRequest) (r *refunds.Refund, isNew bool, err error) {
	if isNew, err = s.refunder.Create(ctx, req); err != nil {
		return nil, false, err
	}
	r, err = s.Refund(ctx, req.RefundID)
	return r, isNew, err
}

type refundWorker struct {
	river.WorkerDefaults[refunds.Args]
	s *Service
}

func (w *refundWorker) Work(ctx context.Context, job *river.Job[refunds.Args]) error {
	return w.s.refunder.Work(ctx, job.Args.RefundID)
}

// refundHost is the payment machine as the refund machine sees it.
type refundHost struct{ s *Service }

func (h refundHost) Read(ctx context.Context, q store.Querier, id string) (*paymentrow.Payment, error) {
	return h.s.readPayment(ctx, q, id)
}

func (h refundHost) Save(ctx context.Context, tx *store.Tx, p *paymentrow.Payment) error {
	return h.s.save(ctx, tx, p)
}

func (h refundHost) Transition(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, to, actor, note string) error {
	return h.s.transition(ctx, tx, p, to, actor, note)
}

func (h refundHost) Flag(ctx context.Context, tx *store.Tx, p *paymentrow.Payment, reason, note string) error {
	return h.s.flag(ctx, tx, p, reason, note)
}

func (h refundHost) CreditReceipt(ctx context.Context, tx *store.Tx, paymentID string, paise int64, reason string) error {
	return h.s.creditReceipt(ctx, tx, paymentID, paise, reason)
}

func (h refundHost) InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return h.s.jobs.InsertTx(ctx, tx, args, opts)
}

func (h refundHost) Refund(ctx context.Context, req pg.RefundRequest) (*pg.Refund, error) {
	return h.s.gw.Refund(ctx, req)
}

func (h refundHost) FetchRefund(ctx context.Context, refundID string) (*pg.Refund, error) {
	return h.s.gw.FetchRefund(ctx, refundID)
}

// Refund returns a refund by our refund_id.
func (s *Service) Refund(ctx context.Context, refundID string) (*refunds.Refund, error) {
	r, err := refunds.Scan(s.db.Read().QueryRow(ctx, "SELECT "+refunds.Columns+" FROM upi_refunds WHERE refund_id = $1", refundID))
	if errors.Is(err, store.ErrNoRows) {
		return nil, errNotFound("refund " + refundID)
	}
	return r, err
}

// ListRefunds returns a page of refunds, oldest change first.
func (s *Service) ListRefunds(ctx context.Context, f refunds.Filter, p ocpi.PageRequest) ([]*refunds.Refund, ocpi.Page, error) {
	l := store.List{Table: "upi_refunds", Columns: refunds.Columns}.WithPage(p)
	if f.Status != "" {
		where(&l, "status = $%d", f.Status)
	}
	if f.PaymentID != "" {
		where(&l, "payment_id = $%d", ocpi.Key(f.PaymentID))
	}
	return listPage(ctx, s.db.Read(), l, refunds.Scan, func(r *refunds.Refund) (int64, int64) { return r.LU, r.PK })
}
