package upi

import (
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
)

// addWorkers registers the module's job workers.
func (s *Service) addWorkers() {
	jobs.AddWorker(s.jobs, &webhookWorker{s: s})
	jobs.AddWorker(s.jobs, &pollWorker{s: s})
	jobs.AddWorker(s.jobs, &startWorker{s: s})
	jobs.AddWorker(s.jobs, &deadlineWorker{s: s})
	jobs.AddWorker(s.jobs, &refundWorker{s: s})
	jobs.AddWorker(s.jobs, &notifyWorker{s: s})
	jobs.AddWorker(s.jobs, &orderCheckWorker{s: s})
}

// NextRetry retries a refund the PG did not accept with the module's
// backoff and the same idempotency key.
func (w *refundWorker) NextRetry(job *river.Job[refundArgs]) time.Time {
	return time.Now().Add(w.s.retryDelay(job.Attempt))
}

// NextRetry retries a receipt delivery with the module's backoff.
func (w *notifyWorker) NextRetry(job *river.Job[notifyArgs]) time.Time {
	return time.Now().Add(w.s.retryDelay(job.Attempt))
}
