package upi

import (
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// addWorkers registers the module's job workers.
func (s *Service) addWorkers(q *jobs.Client) {
	jobs.AddWorker(q, s.webhookWorker())
	jobs.AddWorker(q, jobs.Func(s.pollPayment))
	jobs.AddWorker(q, &startWorker{s: s})
	jobs.AddWorker(q, jobs.Func(s.checkDeadline))
	jobs.AddWorker(q, &refundWorker{s: s})
	jobs.AddWorker(q, &notifyWorker{s: s})
	jobs.AddWorker(q, s.orderCheckWorker())
	jobs.AddWorker(q, s.texts.Worker())
	jobs.AddWorker(q, s.erasePhonesWorker())
}

// NextRetry retries a refund the PG did not accept with the module's
// backoff and the same idempotency key. Retries count on the module's clock,
// which is the job queue's: on the wall clock a queue on a test clock would
// run them at once or never.
func (w *refundWorker) NextRetry(job *river.Job[refunds.Args]) time.Time {
	return w.s.now().Add(w.s.retryDelay(job.Attempt))
}

// NextRetry retries a receipt delivery with the module's backoff.
func (w *notifyWorker) NextRetry(job *river.Job[notifyArgs]) time.Time {
	return w.s.now().Add(w.s.retryDelay(job.Attempt))
}
