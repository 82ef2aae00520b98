package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Delivery statuses.
const (
	StatusPending   = "PENDING"
	StatusDelivered = "DELIVERED"
	StatusFailed    = "FAILED"
)

// Deliveries to one subscription leave in order, one at a time: the
// subscription's PENDING deliveries form a queue, and only its head is ever
// sent. A job that finds the queue's head due takes the subscription's lease
// (lease_owner/lease_until, set under the row lock), sends the head, records
// the answer and, while it holds the lease, goes on with the next head: one
// worker drains a busy subscription without a job hand-over per event.
//
// Every delivery gets a job when it is stored (Emit, Replay); a job whose
// delivery is not the due head, or whose subscription is leased by another
// job, ends at once: the lease holder always looks for a next head under the
// same row lock before it lets go, so a delivery stored meanwhile is either
// seen by the holder or finds the lease free. A failed attempt releases the
// lease and schedules a job for the head at its next attempt; the failing
// subscription's later deliveries wait behind it, and a slow or failing
// subscriber holds up only its own queue. A sweep every minute starts a job
// for any due head nobody picked up (a lost job, a crash), so a queue never
// stalls for good.
//
// Backoff is per subscription: the n-th consecutive failed attempt delays
// the next attempt by Schedule[n] (±10 %); a delivery gives up (FAILED) after
// len(Schedule) attempts and the next one waits its turn at the current
// backoff. An HTTP 410, or failing without a success for DisableAfter,
// disables the subscription, fails its pending deliveries (they can be
// replayed) and emits webhook.disabled to its owner.
const (
	// leaseFor is how long a lease lasts without renewal; the holder renews
	// it after every attempt, and an attempt lasts at most Config.Timeout.
	leaseFor = 45 * time.Second
	// drainMax and drainBudget bound one job's drain before it hands over
	// to a new job.
	drainMax    = 200
	drainBudget = 20 * time.Second
	// stallAfter is how long a due head may wait before the sweep starts a
	// job for it.
	stallAfter = time.Minute
)

// deliverArgs is the job of a delivery: work the subscription's queue,
// starting from its head.
type deliverArgs struct {
	SubscriptionID string `json:"subscription_id"`
	DeliveryID     int64  `json:"delivery_id"`
}

// Kind implements river.JobArgs.
func (deliverArgs) Kind() string { return "webhook_deliver" }

// InsertOpts puts deliveries on the webhooks queue.
func (deliverArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: jobs.QueueWebhooks} }

type deliverWorker struct {
	river.WorkerDefaults[deliverArgs]
	s *Service
}

// Timeout leaves room for a full drain and one last attempt.
func (w *deliverWorker) Timeout(*river.Job[deliverArgs]) time.Duration {
	return drainBudget + 2*w.s.cfg.Timeout + 30*time.Second
}

func (w *deliverWorker) Work(ctx context.Context, job *river.Job[deliverArgs]) error {
	return w.s.work(ctx, job.ID, job.Args)
}

func (s *Service) work(ctx context.Context, jobID int64, a deliverArgs) error {
	due, err := s.headDue(ctx, jobID, a)
	if err != nil || !due {
		return err
	}
	leased, err := s.lease(ctx, jobID, a.SubscriptionID)
	if err != nil || !leased {
		return err
	}
	return s.drain(ctx, jobID, a.SubscriptionID)
}

// headDue reads, without locking, whether the job has work: its delivery is
// pending, the subscription active and not leased by another job, and the
// queue's head due.
func (s *Service) headDue(ctx context.Context, jobID int64, a deliverArgs) (bool, error) {
	now := s.now().UnixMicro()
	q := s.db.Read()
	var dStatus, sStatus string
	var owner, until int64
	err := q.QueryRow(ctx, `SELECT d.status, s.status, s.lease_owner, s.lease_until FROM webhook_deliveries d
		JOIN webhook_subscriptions s ON s.id = d.subscription_id WHERE d.id = $1`, a.DeliveryID).Scan(&dStatus, &sStatus, &owner, &until)
	if errors.Is(err, store.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if dStatus != StatusPending || sStatus != StatusActive || (until > now && owner != jobID) {
		return false, nil
	}
	_, at, ok, err := nextHead(ctx, q, a.SubscriptionID)
	return ok && at <= now, err
}

// nextHead returns the oldest pending delivery of a subscription and when
// it is due.
func nextHead(ctx context.Context, q store.Querier, subID string) (id, dueAt int64, ok bool, err error) {
	err = q.QueryRow(ctx, "SELECT id, next_attempt_at FROM webhook_deliveries WHERE subscription_id = $1 AND status = $2 ORDER BY id LIMIT 1",
		subID, StatusPending).Scan(&id, &dueAt)
	if errors.Is(err, store.ErrNoRows) {
		return 0, 0, false, nil
	}
	return id, dueAt, err == nil, err
}

// lease makes the job the subscription's sender if the lease is free (or
// already its own) and the head is due.
func (s *Service) lease(ctx context.Context, jobID int64, subID string) (bool, error) {
	leased := false
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		now := s.now().UnixMicro()
		n, err := tx.Exec(ctx, `UPDATE webhook_subscriptions SET lease_owner = $1, lease_until = $2
			WHERE id = $3 AND status = $4 AND (lease_until <= $5 OR lease_owner = $1)`,
			jobID, now+leaseFor.Microseconds(), subID, StatusActive, now)
		if err != nil || n == 0 {
			return err
		}
		_, at, ok, err := nextHead(ctx, tx, subID)
		if err != nil {
			return err
		}
		if !ok || at > now {
			return release(ctx, tx, subID, jobID)
		}
		leased = true
		return nil
	})
	return leased, err
}

func release(ctx context.Context, tx *store.Tx, subID string, jobID int64) error {
	_, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET lease_owner = 0, lease_until = 0 WHERE id = $1 AND lease_owner = $2", subID, jobID)
	return err
}

// target is the head delivery with what sending it needs.
type target struct {
	id, createdAt      int64
	attempts           int
	eventID, event     string
	data               []byte
	subID, url, secret string
	platformID         int64
	failures           int
	failingSince       int64
}

func (s *Service) head(ctx context.Context, subID string) (*target, error) {
	var t target
	err := s.db.Read().QueryRow(ctx, `SELECT d.id, d.created_at, d.attempts, d.event_id, d.event, e.data,
			s.id, s.url, s.secret, s.platform_id, s.failures, s.failing_since
		FROM webhook_deliveries d
		JOIN webhook_events e ON e.id = d.event_id
		JOIN webhook_subscriptions s ON s.id = d.subscription_id
		WHERE d.subscription_id = $1 AND d.status = $2 ORDER BY d.id LIMIT 1`, subID, StatusPending).
		Scan(&t.id, &t.createdAt, &t.attempts, &t.eventID, &t.event, &t.data, &t.subID, &t.url, &t.secret, &t.platformID, &t.failures, &t.failingSince)
	if errors.Is(err, store.ErrNoRows) {
		return nil, nil
	}
	return &t, err
}

// drain sends the subscription's due deliveries in order while the job
// holds the lease.
func (s *Service) drain(ctx context.Context, jobID int64, subID string) error {
	started := time.Now()
	for n := 1; ; n++ {
		t, err := s.head(ctx, subID)
		if err != nil {
			return err
		}
		if t == nil {
			return s.db.InTx(context.WithoutCancel(ctx), func(ctx context.Context, tx *store.Tx) error {
				return release(ctx, tx, subID, jobID)
			})
		}
		o := s.send(ctx, t)
		if ctx.Err() != nil {
			// Shutting down: the attempt says nothing about the receiver.
			// The job runs again (River keeps it) and, being the lease
			// owner, resumes at once.
			return ctx.Err()
		}
		more, err := s.record(ctx, jobID, t, o, n < drainMax && time.Since(started) < drainBudget)
		if err != nil || !more {
			return err
		}
	}
}

// outcome is what one attempt got.
type outcome struct {
	ok, gone bool
	code     int
	latency  time.Duration
	err      string
	result   string // metric label
}

// send makes one attempt: the signed body, the Standard Webhooks headers, a
// bounded wait.
func (s *Service) send(ctx context.Context, t *target) outcome {
	msg, err := NewMessage(t.secret, t.eventID, t.event, t.data, s.now())
	if err != nil {
		return outcome{err: "cannot sign: " + err.Error(), result: "network"}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(msg.Body))
	if err != nil {
		return outcome{err: "bad URL: " + err.Error(), result: "network"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ocpihub-webhooks/1")
	msg.SetHeaders(req.Header)
	client := s.partner
	if t.platformID == 0 {
		client = s.operator
	}
	start := time.Now()
	resp, err := client.Do(req)
	o := outcome{latency: time.Since(start)}
	s.metrics.latency.Observe(o.latency.Seconds())
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			o.err, o.result = fmt.Sprintf("no answer within %s", s.cfg.Timeout), "timeout"
		} else {
			o.err, o.result = "request failed: "+clip(err.Error(), 300), "network"
		}
		return o
	}
	defer resp.Body.Close()
	o.code = resp.StatusCode
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		o.ok, o.result = true, "delivered"
	case resp.StatusCode == http.StatusGone:
		o.gone, o.result = true, "gone"
		o.err = "HTTP 410 Gone: the receiver asked to stop"
	default:
		o.result = "http_error"
		o.err = fmt.Sprintf("HTTP %d", resp.StatusCode)
		if b := strings.TrimSpace(clip(string(snippet), 200)); b != "" {
			o.err += ": " + b
		}
	}
	return o
}

// clip cuts s to at most n bytes at a rune boundary and drops control
// characters.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// record stores an attempt's outcome and decides what comes next, in one
// transaction under the subscription's row lock. more says the job should
// send the next head now (it still holds the lease).
func (s *Service) record(ctx context.Context, jobID int64, t *target, o outcome, mayContinue bool) (more bool, err error) {
	s.metrics.attempts.WithLabelValues(o.result).Inc()
	ctx = context.WithoutCancel(ctx)
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		more = false
		now := s.now()
		us := now.UnixMicro()
		held, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET lease_until = $1 WHERE id = $2 AND lease_owner = $3 AND status = $4",
			us+leaseFor.Microseconds(), t.subID, jobID, StatusActive)
		if err != nil {
			return err
		}
		attempts := t.attempts + 1
		status, errText := StatusPending, o.err
		if o.ok {
			status = StatusDelivered
		} else if o.gone || attempts >= len(s.cfg.Schedule) {
			status = StatusFailed
		}
		if attempts >= len(s.cfg.Schedule) && !o.ok && !o.gone {
			errText += fmt.Sprintf(" (gave up after %d attempts)", attempts)
		}
		delivered := int64(0)
		if o.ok {
			delivered = us
		}
		if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = $1, attempts = attempts + 1, response_code = $2, latency_us = $3,
				last_error = $4, last_attempt_at = $5, delivered_at = $6, updated_at = $5 WHERE id = $7 AND status = $8`,
			status, o.code, o.latency.Microseconds(), errText, us, delivered, t.id, StatusPending); err != nil {
			return err
		}
		if held == 0 {
			// The lease ran out during the attempt and another job took
			// over: it owns what comes next.
			return nil
		}
		if o.ok {
			s.metrics.lag.Observe(now.Sub(time.UnixMicro(t.createdAt)).Seconds())
			if _, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET failures = 0, failing_since = 0 WHERE id = $1", t.subID); err != nil {
				return err
			}
			next, at, ok, err := nextHead(ctx, tx, t.subID)
			if err != nil {
				return err
			}
			if ok && at <= us && mayContinue {
				more = true
				return nil
			}
			if err := release(ctx, tx, t.subID, jobID); err != nil {
				return err
			}
			if ok {
				return s.enqueue(ctx, tx, t.subID, next, time.UnixMicro(at))
			}
			return nil
		}
		failingSince := t.failingSince
		if failingSince == 0 {
			failingSince = us
		}
		sub := &Subscription{ID: t.subID, URL: t.url, PlatformID: t.platformID}
		if o.gone {
			return s.disable(ctx, tx, sub, "the receiver answered HTTP 410 Gone", now, true)
		}
		if us-failingSince >= s.cfg.DisableAfter.Microseconds() {
			return s.disable(ctx, tx, sub, fmt.Sprintf("every delivery failed for %s (since %s); last error: %s",
				s.cfg.DisableAfter, ocpi.FromMicros(failingSince), clip(o.err, 200)), now, true)
		}
		failures := t.failures + 1
		if _, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET failures = $1, failing_since = $2, lease_owner = 0, lease_until = 0 WHERE id = $3",
			failures, failingSince, t.subID); err != nil {
			return err
		}
		at := now.Add(s.delay(failures))
		next, _, ok, err := nextHead(ctx, tx, t.subID)
		if err != nil || !ok {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE webhook_deliveries SET next_attempt_at = $1 WHERE id = $2", at.UnixMicro(), next); err != nil {
			return err
		}
		return s.enqueue(ctx, tx, t.subID, next, at)
	})
	return more, err
}

// delay is the wait after the n-th consecutive failure.
func (s *Service) delay(failures int) time.Duration {
	d := s.cfg.Schedule[min(failures, len(s.cfg.Schedule)-1)]
	if d <= 0 {
		return 0
	}
	return jobs.Jitter(d, 0.1)
}

// enqueue adds a job for a subscription's head, to run at at.
func (s *Service) enqueue(ctx context.Context, tx *store.Tx, subID string, deliveryID int64, at time.Time) error {
	opts := &river.InsertOpts{}
	if at.After(s.now()) {
		opts.ScheduledAt = at
	}
	_, err := s.jobs.InsertTx(ctx, tx, deliverArgs{SubscriptionID: subID, DeliveryID: deliveryID}, opts)
	return err
}

// disable turns a subscription off, fails its pending deliveries and, when
// notify is set, tells its owner with a webhook.disabled event.
func (s *Service) disable(ctx context.Context, tx *store.Tx, sub *Subscription, reason string, now time.Time, notify bool) error {
	us := now.UnixMicro()
	if _, err := tx.Exec(ctx, `UPDATE webhook_subscriptions SET status = $1, disabled_reason = $2, lease_owner = 0, lease_until = 0,
		updated_at = $3 WHERE id = $4`, StatusDisabled, clip(reason, 500), us, sub.ID); err != nil {
		return err
	}
	note := clip("not sent: the subscription was disabled ("+reason+")", 500)
	if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = $1, last_error = $2, updated_at = $3
		WHERE subscription_id = $4 AND status = $5`, StatusFailed, note, us, sub.ID, StatusPending); err != nil {
		return err
	}
	if !notify {
		return nil
	}
	s.metrics.disabled.Inc()
	s.logger.WarnContext(ctx, "webhook subscription disabled", "subscription_id", sub.ID, "platform_id", sub.PlatformID, "url", sub.URL, "reason", reason)
	parties, err := ownerParties(ctx, tx, sub.PlatformID)
	if err != nil {
		return err
	}
	return s.Emit(ctx, tx, event.Event{Name: event.WebhookDisabled, Parties: parties, Data: DisabledData{
		SubscriptionID: sub.ID, URL: sub.URL, Reason: reason, Timestamp: ocpi.NewDateTime(now),
	}})
}

// DisabledData is the data of a webhook.disabled event.
type DisabledData struct {
	SubscriptionID string        `json:"subscription_id"`
	URL            string        `json:"url"`
	Reason         string        `json:"reason"`
	Timestamp      ocpi.DateTime `json:"timestamp"`
}

func ownerParties(ctx context.Context, q store.Querier, platformID int64) ([]event.Party, error) {
	if platformID == 0 {
		return nil, nil
	}
	rows, err := q.Query(ctx, "SELECT role, country_code, party_id FROM platform_roles WHERE platform_id = $1", platformID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []event.Party
	for rows.Next() {
		var p event.Party
		if err := rows.Scan(&p.Role, &p.CountryCode, &p.PartyID); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
