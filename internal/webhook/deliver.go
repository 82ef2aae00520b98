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

	"github.com/google/uuid"

	"github.com/ocpihub/ocpihub/internal/delivery"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/instance"
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

// Deliveries run on the delivery engine (internal/delivery), the one hub
// pushes run on: a subscription is one of the engine's receivers (its number
// in webhook_receivers) and the engine's one worker per receiver sends its
// deliveries, so a slow or failing subscriber holds up its own queue only.
// Deliveries to one subscription leave in order, one at a time: the
// subscription's PENDING deliveries form a queue, every item carries the
// subscription as its ordering key, so the engine has one item of it in
// flight at most, and an item is a run of the queue (its head and those
// right behind it, see runMax) leased for sending one after the other
// (lease_token, lease_until in the deliveries' rows). The lease's token
// names its holder (instance.ID), and the engine renews it every third of
// leaseFor while the run is in flight, so a slow subscriber keeps it.
//
// Who starts a sender: Emit (and Replay) wake the engine for the
// subscriptions they queued for, once their transaction committed; the
// engine's polling finds deliveries queued by another process and heads
// due again after a retry. A sender that dies (a killed process) leaves its
// lease behind: Recover, every few seconds in every process, wakes the
// subscription at once when the holder is known to be gone (a restart on
// the same machine), and the engine's polling takes the lease when it runs
// out (within leaseFor) otherwise. Nothing acknowledged is lost, and only
// an attempt whose outcome was never recorded (it died with its process, or
// recording it failed) is ever sent twice.
//
// Backoff is per subscription: the n-th consecutive failed attempt delays
// the next attempt by Schedule[n] (±10 %); a delivery gives up (FAILED) after
// len(Schedule) attempts and the next one waits its turn at the current
// backoff. An HTTP 410, or failing without a success for DisableAfter,
// disables the subscription, fails its pending deliveries (they can be
// replayed) and emits webhook.disabled to its owner.
const leaseFor = 10 * time.Second

// queue is the webhook deliveries as a delivery.Queue: a receiver is a
// subscription's number, an item a run of its queue's first deliveries.
type queue struct{ s *Service }

// A claim leases up to runMax of a subscription's deliveries, the head of
// its queue and those right behind it, as one item (a run): Send sends them
// one after the other, stopping at the first failure or after runWindow,
// and Settle records them in one transaction. A busy subscription then
// costs two write transactions per run, not per delivery, and still has
// one delivery in flight at a time.
const (
	runMax    = 25
	runWindow = 10 * time.Second
)

// run is a claimed run of deliveries, in queue order, under one lease.
type run struct {
	token   string
	targets []*target
}

// target is a leased delivery with what sending it needs.
type target struct {
	id, createdAt, dueAt int64
	attempts             int
	eventID, event       string
	data                 []byte
	subID, url, secret   string // secret: the stored (sealed) form
	platformID           int64
	failures             int
}

// sent is what Settle records of a run: the outcomes of the deliveries
// sent, in order; those after them were not sent and are given back.
type sent []outcome

// Label implements delivery.Queue: a receiver is named by its
// subscription's id.
func (q queue) Label(receiver int64) string {
	id, err := q.subscription(context.Background(), receiver)
	if err != nil || id == "" {
		return "subscription-" + strconv.FormatInt(receiver, 10)
	}
	return id
}

// subscription returns the id of the subscription whose receiver number
// is receiver ("" when there is none).
func (q queue) subscription(ctx context.Context, receiver int64) (string, error) {
	if id, ok := q.s.subIDs.Load(receiver); ok {
		return id.(string), nil
	}
	var id string
	err := q.s.db.Read().QueryRow(ctx, "SELECT subscription_id FROM webhook_receivers WHERE id = $1", receiver).Scan(&id)
	if errors.Is(err, store.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	q.s.subIDs.Store(receiver, id)
	return id, nil
}

// known lists the receivers of the active subscriptions (their metric
// series exist before their first delivery).
func (q queue) known(ctx context.Context) ([]int64, error) {
	return store.QueryAll(ctx, q.s.db.Read(), func(r store.Row) (int64, error) {
		var n int64
		var id string
		err := r.Scan(&n, &id)
		if err == nil {
			q.s.subIDs.Store(n, id)
		}
		return n, err
	}, `SELECT r.id, s.id FROM webhook_receivers r JOIN webhook_subscriptions s ON s.id = r.subscription_id WHERE s.status = $1`, StatusActive)
}

// Due implements delivery.Queue: the active subscriptions whose head is due
// and not leased, or leased by a holder whose lease ran out.
func (q queue) Due(ctx context.Context) ([]int64, error) {
	now := q.s.now().UnixMicro()
	return store.QueryAll(ctx, q.s.db.Read(), func(r store.Row) (n int64, err error) { return n, r.Scan(&n) },
		`SELECT r.id FROM webhook_subscriptions s
		JOIN webhook_receivers r ON r.subscription_id = s.id
		JOIN webhook_deliveries d ON d.id = (SELECT MIN(id) FROM webhook_deliveries WHERE subscription_id = s.id AND status = $1)
		WHERE s.status = $2 AND ((d.lease_token = '' AND d.next_attempt_at <= $3) OR (d.lease_token <> '' AND d.lease_until <= $3))`,
		StatusPending, StatusActive, now)
}

// errRaced undoes a claim that found a delivery of its run taken by
// another worker meanwhile: a run must not have a gap.
var errRaced = errors.New("webhook: claim raced")

// Claim implements delivery.Queue: it leases the head of the
// subscription's queue, when it is due and nobody else holds it, with the
// deliveries right behind it (a run). It reads on the read pool first (most
// looks find nothing to do and take no write transaction), leases in one
// transaction guarded by what it read, so that deliveries another worker
// took meanwhile are left to it, and reads what the attempts need after the
// commit.
func (q queue) Claim(ctx context.Context, receiver int64, n int) (delivery.Claim, error) {
	s := q.s
	now := s.now().UnixMicro()
	var c delivery.Claim
	subID, err := q.subscription(ctx, receiver)
	if err != nil || subID == "" || n <= 0 {
		return c, err
	}
	// One read: the queue's first deliveries with what sending them needs
	// (a queued event never changes), while the subscription is active.
	type open struct {
		t      *target
		holder string
		until  int64
	}
	r := s.db.Read()
	queued, err := store.QueryAll(ctx, r, func(row store.Row) (o open, err error) {
		o.t = &target{subID: subID}
		t := o.t
		return o, row.Scan(&t.id, &t.dueAt, &o.holder, &o.until, &t.createdAt, &t.attempts, &t.eventID, &t.event, &t.data,
			&t.url, &t.secret, &t.platformID, &t.failures)
	}, fmt.Sprintf(`SELECT d.id, d.next_attempt_at, d.lease_token, d.lease_until, d.created_at, d.attempts, d.event_id, d.event, e.data,
			s.url, s.secret, s.platform_id, s.failures
		FROM webhook_deliveries d
		JOIN webhook_subscriptions s ON s.id = d.subscription_id
		JOIN webhook_events e ON e.id = d.event_id
		WHERE d.subscription_id = $1 AND d.status = $2 AND s.status = $3 ORDER BY d.id LIMIT %d`, runMax), subID, StatusPending, StatusActive)
	if err != nil || len(queued) == 0 {
		return c, err
	}
	c.Backlog = len(queued)
	if len(queued) == runMax {
		if err := r.QueryRow(ctx, "SELECT COUNT(*) FROM webhook_deliveries WHERE subscription_id = $1 AND status = $2",
			subID, StatusPending).Scan(&c.Backlog); err != nil {
			return c, err
		}
	}
	switch h := queued[0]; {
	case h.holder != "" && h.until > now && !s.cfg.Instance.Gone(instance.Holder(h.holder)):
		// In flight elsewhere (or here, in an earlier claim whose outcome
		// could not be recorded): it is the holder's until the lease runs
		// out.
		c.Next = time.UnixMicro(h.until)
		return c, nil
	case h.holder == "" && h.t.dueAt > now:
		c.Next = time.UnixMicro(h.t.dueAt)
		return c, nil
	}
	// The run: the head and those behind it, up to the first that is not
	// free. A lease that ran out, or whose holder is gone, is taken over;
	// the attempt its holder made may have reached the receiver, and is
	// made again.
	free := func(o open) bool {
		if o.holder == "" {
			return o.t.dueAt <= now
		}
		return o.until <= now || s.cfg.Instance.Gone(instance.Holder(o.holder))
	}
	type lease struct {
		holder string
		until  int64
	}
	groups := map[lease][]string{}
	var targets []*target
	for _, o := range queued {
		if !free(o) {
			break
		}
		l := lease{o.holder, o.until}
		groups[l] = append(groups[l], strconv.FormatInt(o.t.id, 10))
		targets = append(targets, o.t)
	}
	token := s.cfg.Instance.Token(uuid.NewString())
	err = s.db.InBatch(ctx, func(ctx context.Context, tx *store.Tx) error {
		for l, group := range groups {
			n, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET lease_token = $1, lease_until = $2
				WHERE id IN (`+strings.Join(group, ",")+`) AND status = $3 AND lease_token = $4 AND lease_until = $5 AND next_attempt_at <= $6`,
				token, now+leaseFor.Microseconds(), StatusPending, l.holder, l.until, now)
			if err != nil {
				return err
			}
			if n != int64(len(group)) {
				return errRaced
			}
		}
		return nil
	})
	if errors.Is(err, errRaced) {
		// Look again: the other worker's lease now shows.
		c.Again = true
		return c, nil
	}
	if err != nil {
		return c, err
	}
	// Lag is measured once per run, for its oldest delivery.
	c.Items = []delivery.Item{{Key: subID, Committed: time.UnixMicro(targets[0].createdAt), Value: &run{token: token, targets: targets}}}
	return c, nil
}

// Renew implements delivery.Queue.
func (q queue) Renew(ctx context.Context, receiver int64, items []delivery.Item) error {
	s := q.s
	return s.db.InBatch(ctx, func(ctx context.Context, tx *store.Tx) error {
		for _, it := range items {
			if _, err := tx.Exec(ctx, "UPDATE webhook_deliveries SET lease_until = $1 WHERE lease_token = $2 AND status = $3",
				s.now().Add(leaseFor).UnixMicro(), it.Value.(*run).token, StatusPending); err != nil {
				return err
			}
		}
		return nil
	})
}

// Send implements delivery.Queue: the run's deliveries one after the
// other, until one fails or runWindow has passed, recorded by Settle. A
// failure asks the engine to come back after the subscription's backoff; a
// 410 ends the queue (Settle disables the subscription).
func (q queue) Send(ctx context.Context, receiver int64, it delivery.Item) delivery.Result {
	s := q.s
	r := it.Value.(*run)
	// The window is elapsed wall time (how long this run has been
	// sending), not the hub's time.
	start := time.Now()
	var out sent
	for _, t := range r.targets {
		o := s.send(ctx, t)
		if !o.ok && ctx.Err() != nil {
			// Stopping: this attempt says nothing about the receiver
			// and does not count.
			break
		}
		out = append(out, o)
		if !o.ok || time.Since(start) > runWindow {
			break
		}
	}
	if len(out) == 0 {
		return delivery.Result{Outcome: delivery.Retry, RetryAt: s.now(), Value: out}
	}
	switch last := out[len(out)-1]; {
	case last.ok:
		return delivery.Result{Outcome: delivery.Delivered, Value: out}
	case last.gone:
		return delivery.Result{Outcome: delivery.Ended, Value: out}
	}
	failures := r.targets[0].failures
	if len(out) > 1 {
		failures = 0 // a success in the run ended the streak
	}
	return delivery.Result{Outcome: delivery.Retry, RetryAt: s.now().Add(s.delay(failures + 1)), Value: out}
}

// Settle implements delivery.Queue: the outcomes of a run and what follows
// from them, in one transaction; the deliveries not sent are given back. An
// outcome whose lease was lost (it ran out, and another worker took the
// delivery) is the other worker's to record.
func (q queue) Settle(ctx context.Context, receiver int64, rs []delivery.Result) error {
	s := q.s
	for _, r := range rs {
		for _, o := range r.Value.(sent) {
			s.metrics.attempts.WithLabelValues(o.result).Inc()
		}
	}
	return s.db.InBatch(context.WithoutCancel(ctx), func(ctx context.Context, tx *store.Tx) error {
		for _, r := range rs {
			if err := s.settleRun(ctx, tx, r.Item.Value.(*run), r.Value.(sent), r.RetryAt); err != nil {
				return err
			}
		}
		return nil
	})
}

// settleRun records a run inside tx in a few statements whatever its
// length: its deliveries sent with success in one, a failure that ended it
// (settle), and the deliveries not sent given back in one.
func (s *Service) settleRun(ctx context.Context, tx *store.Tx, r *run, out sent, retryAt time.Time) error {
	now := s.now()
	us := now.UnixMicro()
	ok := 0
	for ok < len(out) && out[ok].ok {
		ok++
	}
	if ok > 0 {
		// The answers' codes and latencies differ per delivery: CASE on
		// the id, with the numbers (ours, not input) written inline.
		var ids, codes, latencies strings.Builder
		for i, o := range out[:ok] {
			t := r.targets[i]
			if i > 0 {
				ids.WriteString(",")
			}
			fmt.Fprintf(&ids, "%d", t.id)
			fmt.Fprintf(&codes, " WHEN %d THEN %d", t.id, o.code)
			fmt.Fprintf(&latencies, " WHEN %d THEN %d", t.id, o.latency.Microseconds())
			s.metrics.lag.Observe(now.Sub(time.UnixMicro(t.createdAt)).Seconds())
		}
		held, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = $1, attempts = attempts + 1,
				response_code = CASE id`+codes.String()+` ELSE response_code END, latency_us = CASE id`+latencies.String()+` ELSE latency_us END,
				last_error = '', last_attempt_at = $2, delivered_at = $2, updated_at = $2, lease_token = '', lease_until = 0
			WHERE id IN (`+ids.String()+`) AND lease_token = $3 AND status = $4`, StatusDelivered, us, r.token, StatusPending)
		if err != nil {
			return err
		}
		if held > 0 {
			// A success ends the failure streak.
			if _, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET failures = 0, failing_since = 0 WHERE id = $1 AND (failures <> 0 OR failing_since <> 0)",
				r.targets[0].subID); err != nil {
				return err
			}
		}
	}
	if ok < len(out) {
		if err := s.settle(ctx, tx, r.targets[ok], r.token, out[ok], retryAt); err != nil {
			return err
		}
	}
	if len(out) < len(r.targets) {
		var ids []string
		for _, t := range r.targets[len(out):] {
			ids = append(ids, strconv.FormatInt(t.id, 10))
		}
		if _, err := tx.Exec(ctx, "UPDATE webhook_deliveries SET lease_token = '', lease_until = 0 WHERE id IN ("+strings.Join(ids, ",")+") AND lease_token = $1",
			r.token); err != nil {
			return err
		}
	}
	return nil
}

// settle records a failed attempt of t, leased by token, inside tx;
// retryAt is when the subscription's next attempt may go.
func (s *Service) settle(ctx context.Context, tx *store.Tx, t *target, token string, o outcome, retryAt time.Time) error {
	now := s.now()
	us := now.UnixMicro()
	attempts := t.attempts + 1
	status, errText, due := StatusPending, o.err, t.dueAt
	switch {
	case o.gone:
		status = StatusFailed
	case attempts >= len(s.cfg.Schedule):
		status = StatusFailed
		errText += fmt.Sprintf(" (gave up after %d attempts)", attempts)
	default:
		due = retryAt.UnixMicro()
	}
	held, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = $1, attempts = attempts + 1, response_code = $2, latency_us = $3,
			last_error = $4, last_attempt_at = $5, updated_at = $5, next_attempt_at = $6, lease_token = '', lease_until = 0
		WHERE id = $7 AND lease_token = $8 AND status = $9`,
		status, o.code, o.latency.Microseconds(), errText, us, due, t.id, token, StatusPending)
	if err != nil || held == 0 {
		return err
	}
	// A failure starts a streak or goes on with it.
	var subStatus string
	var failures int
	var failingSince int64
	if err := tx.QueryRow(ctx, "SELECT status, failures, failing_since FROM webhook_subscriptions WHERE id = $1", t.subID).
		Scan(&subStatus, &failures, &failingSince); err != nil || subStatus != StatusActive {
		return err
	}
	failures++
	if failingSince == 0 {
		failingSince, failures = us, 1
	}
	sub := &Subscription{ID: t.subID, URL: t.url, PlatformID: t.platformID}
	if o.gone {
		return s.disable(ctx, tx, sub, "the receiver answered HTTP 410 Gone", now, true)
	}
	if us-failingSince >= s.cfg.DisableAfter.Microseconds() {
		return s.disable(ctx, tx, sub, fmt.Sprintf("every delivery failed for %s (since %s); last error: %s",
			s.cfg.DisableAfter, ocpi.FromMicros(failingSince), clip(o.err, 200)), now, true)
	}
	if _, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET failures = $1, failing_since = $2 WHERE id = $3", failures, failingSince, t.subID); err != nil {
		return err
	}
	if status == StatusPending {
		return nil
	}
	// The delivery gave up: the next one waits its turn at the current
	// backoff.
	_, err = tx.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = $1 WHERE id = (
		SELECT MIN(id) FROM webhook_deliveries WHERE subscription_id = $2 AND status = $3) AND next_attempt_at < $1`,
		retryAt.UnixMicro(), t.subID, StatusPending)
	return err
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

// delay is the wait after the n-th consecutive failure.
func (s *Service) delay(failures int) time.Duration {
	d := s.cfg.Schedule[min(failures, len(s.cfg.Schedule)-1)]
	if d <= 0 {
		return 0
	}
	return jobs.Jitter(d, 0.1)
}

// disable turns a subscription off, fails its pending deliveries and, when
// notify is set, tells its owner with a webhook.disabled event.
func (s *Service) disable(ctx context.Context, tx *store.Tx, sub *Subscription, reason string, now time.Time, notify bool) error {
	us := now.UnixMicro()
	if _, err := tx.Exec(ctx, `UPDATE webhook_subscriptions SET status = $1, disabled_reason = $2, updated_at = $3 WHERE id = $4`,
		StatusDisabled, clip(reason, 500), us, sub.ID); err != nil {
		return err
	}
	note := clip("not sent: the subscription was disabled ("+reason+")", 500)
	// A delivery in flight is failed too: its sender's outcome finds the
	// lease gone and is not recorded.
	if _, err := tx.Exec(ctx, `UPDATE webhook_deliveries SET status = $1, last_error = $2, updated_at = $3, lease_token = '', lease_until = 0
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
