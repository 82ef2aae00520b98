package upi

import (
	"context"
	"net/http"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/intake"
)

// ReceiveWebhook authenticates a PG webhook, stores it once per event id
// and enqueues its processing in the same transaction (intake.Receive); it
// does no other work, so the PG gets its answer fast. A repeated event is
// acknowledged and changes nothing (isNew false).
func (s *Service) ReceiveWebhook(ctx context.Context, h http.Header, body []byte) (isNew bool, err error) {
	if !s.Enabled() {
		return false, ErrPaymentsOff
	}
	return s.intake.Receive(ctx, h, body)
}

func (s *Service) webhookWorker() river.Worker[intake.Args] {
	return jobs.Func(func(ctx context.Context, a intake.Args) error { return s.intake.Work(ctx, a.EventPK) })
}

// host is the payment module as the webhook intake and the order book see
// it (intake.Host, orders.Host).
type host struct{ s *Service }

func (h host) ApplyPayment(ctx context.Context, tx *store.Tx, p *pg.Payment, source string) (string, error) {
	return h.s.applyPayment(ctx, tx, observationOf(p, source))
}

func (h host) ApplyRefund(ctx context.Context, tx *store.Tx, pgRefundID, refundID string, status pg.RefundStatus, typ string) (string, error) {
	return h.s.refunder.ApplyEvent(ctx, tx, pgRefundID, refundID, status, typ)
}

func (h host) InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return h.s.jobs.InsertTx(ctx, tx, args, opts)
}
