package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/netguard"
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
// sent. One job at a time holds the subscription's lease (lease_owner,
// lease_until, taken and given back under the row lock) and drains the
// queue: it reads the next deliveries, sends them one after the other
// (stopping at the first failure), records the batch in one transaction and
// goes on while deliveries are waiting. A busy subscription is drained by one
// worker without a job per event, and a slow or failing subscriber holds up
// its own queue only.
//
// Who starts a sender: Emit (and Replay) store, with their deliveries, one
// dispatch job. The dispatcher locks the subscriptions' rows and starts a
// delivery job for each one that has no sender and a due head. A sender
// looks for a next delivery under the same row lock before it lets go, so a
// delivery is either seen by the sender or finds the lease free when its
// dispatcher runs. A failed attempt gives the lease back and schedules a job
// for the head's next attempt; the subscription's later deliveries wait
// behind it. A sender that dies (a killed process) leaves its lease to run
// out within leaseFor; Recover, every few seconds in every process, then
// frees it and starts a new sender. A sweep every minute starts a job for any
// due head nobody picked up (a lost job), so a queue never stalls for good.
//
// Backoff is per subscription: the n-th consecutive failed attempt delays
// the next attempt by Schedule[n] (±10 %); a delivery gives up (FAILED) after
// len(Schedule) attempts and the next one waits its turn at the current
// backoff. An HTTP 410, or failing without a success for DisableAfter,
// disables the subscription, fails its pending deliveries (they can be
// replayed) and emits webhook.disabled to its owner.
const (
	// leaseFor is how long a lease lasts without renewal: short, so the
	// queue of a killed sender is taken again within seconds (Recover). The
	// sender renews it after every batch and, while it works, every
	// leaseFor/3 (keepLease), so a slow subscriber keeps it.
	leaseFor    = 10 * time.Second
	batchSize   = 25
	batchWindow = 10 * time.Second
	// drainMax and drainBudget bound one job's drain before it hands over
	// to a new job.
	drainMax    = 500
	drainBudget = 20 * time.Second
	// stallAfter is how long a due head may wait before the sweep starts a
	// job for it.
	stallAfter = time.Minute
	// linger is how long a sender whose queue ran empty waits for more
	// before it lets go, looking every lingerPoll.
	linger     = 250 * time.Millisecond
	lingerPoll = 20 * time.Millisecond
)

// dispatchArgs is the job stored with new deliveries: start a sender for
// each of these subscriptions that has none.
type dispatchArgs struct {
	SubscriptionIDs []string `json:"subscription_ids"`
}

// Kind implements river.JobArgs.
func (dispatchArgs) Kind() string { return "webhook_dispatch" }

// InsertOpts puts dispatches on the webhooks queue.
func (dispatchArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: jobs.QueueWebhooks} }

// dispatch starts a delivery job for each subscription whose lease is free
// and whose queue has a due head. The row locks make it wait for a sender
// that is letting go (which looks for a next head under the same lock), so
// no delivery is left without a sender.
func (s *Service) dispatch(ctx context.Context, subs []string) error {
	if len(subs) == 0 {
		return nil
	}
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		now := s.now().UnixMicro()
		args := []any{StatusActive}
		ph := make([]string, len(subs))
		for i, id := range subs {
			args = append(args, id)
			ph[i] = "$" + strconv.Itoa(len(args))
		}
		// Lock the rows in id order, so that dispatchers never deadlock
		// each other. On SQLite the write transaction is the lock; on
		// PostgreSQL FOR NO KEY UPDATE conflicts with a sender's update of
		// the row and not with the key-share locks that inserting
		// deliveries takes.
		query := `SELECT id, lease_until FROM webhook_subscriptions WHERE status = $1 AND id IN (` + strings.Join(ph, ", ") + `) ORDER BY id`
		if tx.Engine() == store.Postgres {
			query += " FOR NO KEY UPDATE"
		}
		rows, err := tx.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		var free []any
		for rows.Next() {
			var id string
			var until int64
			if err := rows.Scan(&id, &until); err != nil {
				rows.Close()
				return err
			}
			if until <= now {
				free = append(free, id)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(free) == 0 {
			return err
		}
		ph = ph[:0]
		for i := range free {
			ph = append(ph, "$"+strconv.Itoa(i+3))
		}
		rows, err = tx.Query(ctx, `SELECT d.subscription_id, d.id FROM webhook_deliveries d
			JOIN (SELECT subscription_id, MIN(id) AS id FROM webhook_deliveries
				WHERE status = $1 AND subscription_id IN (`+strings.Join(ph, ", ")+`) GROUP BY subscription_id) h ON h.id = d.id
			WHERE d.next_attempt_at <= $2`, append([]any{StatusPending, now}, free...)...)
		if err != nil {
			return err
		}
		params, err := deliverJobs(rows)
		if err != nil {
			return err
		}
		return s.jobs.InsertManyTx(ctx, tx, params)
	})
}

// deliverJobs reads rows of (subscription_id, delivery id) queue heads as
// the delivery jobs that start their senders, and closes rows.
func deliverJobs(rows store.Rows) ([]river.InsertManyParams, error) {
	return store.Collect(rows, func(r store.Row) (p river.InsertManyParams, err error) {
		var a deliverArgs
		err = r.Scan(&a.SubscriptionID, &a.DeliveryID)
		return river.InsertManyParams{Args: a}, err
	})
}

// deliverArgs is the job of a sender: drain the subscription's queue,
// starting with its head (DeliveryID, when the job was made).
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

// Timeout leaves room for a full drain and one last batch.
func (w *deliverWorker) Timeout(*river.Job[deliverArgs]) time.Duration {
	return drainBudget + batchWindow + 2*w.s.cfg.Timeout + 30*time.Second
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
	stop := s.keepLease(ctx, jobID, a.SubscriptionID)
	defer stop()
	return s.drain(ctx, jobID, a.SubscriptionID)
}

// headDue reads, without locking, whether the job has work: its
// subscription is active and not leased by another job, and the queue's
// head is due. Jobs are only made when that held under the row lock (by the
// dispatcher, a sender letting go, the sweep), so a job finding another
// sender can leave its work to it.
func (s *Service) headDue(ctx context.Context, jobID int64, a deliverArgs) (bool, error) {
	now := s.now().UnixMicro()
	q := s.db.Read()
	var status string
	var owner, until int64
	err := q.QueryRow(ctx, "SELECT status, lease_owner, lease_until FROM webhook_subscriptions WHERE id = $1", a.SubscriptionID).Scan(&status, &owner, &until)
	if errors.Is(err, store.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if status != StatusActive || (until > now && owner != jobID) {
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

// letGo gives the lease back unless, seen under the row lock, a due head
// is waiting; then it keeps the lease and says to go on.
func (s *Service) letGo(ctx context.Context, jobID int64, subID string) (keep bool, err error) {
	err = s.db.InTx(context.WithoutCancel(ctx), func(ctx context.Context, tx *store.Tx) error {
		now := s.now().UnixMicro()
		held, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET lease_until = $1 WHERE id = $2 AND lease_owner = $3 AND status = $4",
			now+leaseFor.Microseconds(), subID, jobID, StatusActive)
		if err != nil || held == 0 {
			return err
		}
		_, at, ok, err := nextHead(ctx, tx, subID)
		if err != nil {
			return err
		}
		if ok && at <= now {
			keep = true
			return nil
		}
		return release(ctx, tx, subID, jobID)
	})
	return keep, err
}

func release(ctx context.Context, tx *store.Tx, subID string, jobID int64) error {
	_, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET lease_owner = 0, lease_until = 0 WHERE id = $1 AND lease_owner = $2", subID, jobID)
	return err
}

// target is a pending delivery with what sending it needs.
type target struct {
	id, createdAt, dueAt int64
	attempts             int
	eventID, event       string
	data                 []byte
	subID, url, secret   string // secret: the stored (sealed) form
	platformID           int64
	failures             int
	failingSince         int64
}

// heads returns up to n of the subscription's pending deliveries, oldest
// first, with the subscription's current URL and secret.
func (s *Service) heads(ctx context.Context, subID string, n int) ([]*target, error) {
	return store.QueryAll(ctx, s.db.Read(), func(row store.Row) (*target, error) {
		var t target
		return &t, row.Scan(&t.id, &t.createdAt, &t.dueAt, &t.attempts, &t.eventID, &t.event, &t.data, &t.subID, &t.url, &t.secret,
			&t.platformID, &t.failures, &t.failingSince)
	}, fmt.Sprintf(`SELECT d.id, d.created_at, d.next_attempt_at, d.attempts, d.event_id, d.event, e.data,
			s.id, s.url, s.secret, s.platform_id, s.failures, s.failing_since
		FROM webhook_deliveries d
		JOIN webhook_events e ON e.id = d.event_id
		JOIN webhook_subscriptions s ON s.id = d.subscription_id
		WHERE d.subscription_id = $1 AND d.status = $2 ORDER BY d.id LIMIT %d`, n), subID, StatusPending)
}

// drain sends the subscription's due deliveries in order, in batches,
// while the job holds the lease.
func (s *Service) drain(ctx context.Context, jobID int64, subID string) error {
	// The drain's budget, linger and batch window are elapsed wall time
	// (how long this attempt has run), not the hub's time: time.Now.
	started := time.Now()
	var idleSince time.Time
	for sent := 0; ; {
		batch, err := s.heads(ctx, subID, batchSize)
		if err != nil {
			return err
		}
		if len(batch) == 0 && time.Since(started) < drainBudget {
			// The queue ran empty: stay a moment, so that under a steady
			// stream of events the sender keeps its lease instead of a job
			// per event starting anew.
			if idleSince.IsZero() {
				idleSince = time.Now()
			}
			if time.Since(idleSince) < linger {
				select {
				case <-time.After(lingerPoll):
					continue
				case <-ctx.Done():
					// The job runs again and, as the lease owner, resumes.
					return ctx.Err()
				}
			}
		}
		idleSince = time.Time{}
		if len(batch) == 0 || batch[0].dueAt > s.now().UnixMicro() {
			// Nothing due as read without a lock: look again under the row
			// lock before letting go, or a delivery stored meanwhile, whose
			// dispatcher saw this job's lease, would be left behind.
			again, err := s.letGo(ctx, jobID, subID)
			if err != nil || !again {
				return err
			}
			continue
		}
		var results []outcome
		window := time.Now()
		for _, t := range batch {
			o := s.send(ctx, t)
			if ctx.Err() != nil {
				// Shutting down: this attempt says nothing about the
				// receiver. Keep what was sent; the job runs again and, as
				// the lease owner, resumes at once.
				break
			}
			results = append(results, o)
			if !o.ok || time.Since(window) > batchWindow {
				break
			}
		}
		sent += len(results)
		if len(results) == 0 {
			return ctx.Err()
		}
		more, err := s.record(ctx, jobID, batch[:len(results)], results, sent < drainMax && time.Since(started) < drainBudget)
		if err != nil || !more {
			return errors.Join(err, ctx.Err())
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

// The delivery log's text for a receiver the guard refused and for one the
// hub could not reach.
const (
	refusedText     = "the receiver's address is not one the hub may call (loopback, private and other internal addresses are refused)"
	unreachableText = "could not reach the receiver"
)

// send makes one attempt: the signed body, the Standard Webhooks headers, a
// bounded wait.
func (s *Service) send(ctx context.Context, t *target) outcome {
	secret, err := s.cfg.Box.Open(t.secret)
	if err != nil {
		return outcome{err: "cannot sign: " + err.Error(), result: "network"}
	}
	msg, err := NewMessage(secret, t.eventID, t.event, t.data, s.now())
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
	start := time.Now() // elapsed wall time: the delivery's latency metric
	resp, err := s.client.Do(req)
	o := outcome{latency: time.Since(start)}
	s.metrics.latency.Observe(o.latency.Seconds())
	if err != nil {
		switch {
		case netguard.IsRefused(err):
			o.err, o.result = refusedText, "network"
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
			o.err, o.result = fmt.Sprintf("no answer within %s", s.cfg.Timeout), "timeout"
		case t.platformID != 0:
			// A partner's delivery log must not tell a closed port from a
			// refusing service; the detail is for the operator's log.
			o.err, o.result = unreachableText, "network"
		default:
			o.err, o.result = "request failed: "+clip(err.Error(), 300), "network"
		}
		if t.platformID != 0 {
			s.logger.WarnContext(ctx, "webhook delivery failed", "subscription_id", t.subID, "url", t.url, "error", err)
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

// record stores the outcomes of a batch (all successes but maybe the last)
// and decides what comes next, in one transaction under the subscription's
// row lock. more says the job should go on sending (it still holds the
// lease).
func (s *Service) record(ctx context.Context, jobID int64, batch []*target, results []outcome, mayContinue bool) (more bool, err error) {
	for _, o := range results {
		s.metrics.attempts.WithLabelValues(o.result).Inc()
	}
	ctx = context.WithoutCancel(ctx)
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		more = false
		now := s.now()
		us := now.UnixMicro()
		last, lastOut := batch[len(results)-1], results[len(results)-1]
		// Renew the lease (and, after a success, end the failure streak)
		// if it is still ours.
		renew := "UPDATE webhook_subscriptions SET lease_until = $1 WHERE id = $2 AND lease_owner = $3 AND status = $4"
		if results[0].ok {
			renew = "UPDATE webhook_subscriptions SET lease_until = $1, failures = 0, failing_since = 0 WHERE id = $2 AND lease_owner = $3 AND status = $4"
		}
		held, err := tx.Exec(ctx, renew, us+leaseFor.Microseconds(), last.subID, jobID, StatusActive)
		if err != nil {
			return err
		}
		for i, o := range results {
			t := batch[i]
			attempts := t.attempts + 1
			status, errText, delivered := StatusPending, o.err, int64(0)
			switch {
			case o.ok:
				status, delivered = StatusDelivered, us
				s.metrics.lag.Observe(now.Sub(time.UnixMicro(t.createdAt)).Seconds())
			case o.gone:
				status = StatusFailed
			case attempts >= len(s.cfg.Schedule):
				status = StatusFailed
				errText += fmt.Sprintf(" (gave up after %d attempts)", attempts)
			}
			if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = $1, attempts = attempts + 1, response_code = $2, latency_us = $3,
					last_error = $4, last_attempt_at = $5, delivered_at = $6, updated_at = $5 WHERE id = $7 AND status = $8`,
				status, o.code, o.latency.Microseconds(), errText, us, delivered, t.id, StatusPending); err != nil {
				return err
			}
		}
		if held == 0 {
			// The lease ran out during the batch and another job took over:
			// it owns what comes next.
			return nil
		}
		if lastOut.ok {
			next, at, ok, err := nextHead(ctx, tx, last.subID)
			if err != nil {
				return err
			}
			if ok && at <= us && mayContinue {
				more = true
				return nil
			}
			if err := release(ctx, tx, last.subID, jobID); err != nil {
				return err
			}
			if ok {
				return s.enqueue(ctx, tx, last.subID, next, time.UnixMicro(at))
			}
			return nil
		}
		// The batch ended with a failure: a streak starts or goes on.
		failingSince, failures := us, 1
		if len(results) == 1 && last.failingSince > 0 {
			failingSince, failures = last.failingSince, last.failures+1
		}
		sub := &Subscription{ID: last.subID, URL: last.url, PlatformID: last.platformID}
		if lastOut.gone {
			return s.disable(ctx, tx, sub, "the receiver answered HTTP 410 Gone", now, true)
		}
		if us-failingSince >= s.cfg.DisableAfter.Microseconds() {
			return s.disable(ctx, tx, sub, fmt.Sprintf("every delivery failed for %s (since %s); last error: %s",
				s.cfg.DisableAfter, ocpi.FromMicros(failingSince), clip(lastOut.err, 200)), now, true)
		}
		if _, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET failures = $1, failing_since = $2, lease_owner = 0, lease_until = 0 WHERE id = $3",
			failures, failingSince, last.subID); err != nil {
			return err
		}
		at := now.Add(s.delay(failures))
		next, _, ok, err := nextHead(ctx, tx, last.subID)
		if err != nil || !ok {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE webhook_deliveries SET next_attempt_at = $1 WHERE id = $2", at.UnixMicro(), next); err != nil {
			return err
		}
		return s.enqueue(ctx, tx, last.subID, next, at)
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
	return store.QueryAll(ctx, q, func(row store.Row) (event.Party, error) {
		var p event.Party
		return p, row.Scan(&p.Role, &p.CountryCode, &p.PartyID)
	}, "SELECT role, country_code, party_id FROM platform_roles WHERE platform_id = $1", platformID)
}
