package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/delivery"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/tracing"
)

// claimLook bounds the open rows of a receiver one claim reads to find the
// heads of its objects' queues.
const claimLook = 4096

// Coalescing defaults: an object with at least CoalesceRows open pushes to a
// receiver whose oldest waited CoalesceAge is sent as its current state in
// one full push instead (the receiver is behind: it gets the latest state,
// never an older one after a newer).
const (
	DefaultCoalesceRows = 64
	DefaultCoalesceAge  = 30 * time.Second
)

// pushJob only wakes the delivery of a PushArgs job's platform: delivery
// runs in process (the delivery engine), jobs of this kind are left from
// before.
func (h *Hub) pushJob(_ context.Context, a PushArgs) error {
	h.engine.Wake(a.PlatformID)
	return nil
}

// pushQueue is the hub outbox as a delivery.Queue: items are the heads of
// a receiver's (module, object) queues in hub_push.
type pushQueue struct{ h *Hub }

// claimed is one claimed row, as the engine carries it.
type claimed struct {
	row      pushRow
	module   string
	key      string
	platform *party.Platform
	findErr  error
}

// settle is what Settle records of one attempt.
type settle struct {
	kind   int
	state  string // settleEnd
	msg    string
	resync bool
	delay  time.Duration // settleRetry
	header http.Header   // delivered
}

const (
	settleDelivered = iota
	settleEnd       // the row ends in state (resync: queue a full push)
	settleClose     // every open row of the object ends failed (resync: mark it)
	settleGiveUp    // settleClose with resync, then a resync if the receiver answers
	settleRetry
	settleRelease // our error: the attempt does not count
)

// Label implements delivery.Queue: the receiving party of the platform,
// as the last claim that found work for it saw it (a worker starts with
// its receiver's label, and workers start and end with the traffic).
func (q pushQueue) Label(id int64) string {
	if l, ok := q.h.labels.Load(id); ok {
		return l.(string)
	}
	if q.h.parties != nil {
		if p, err := q.h.parties.Find(context.Background(), id); err == nil {
			return q.h.label(p)
		}
	}
	return "platform-" + strconv.FormatInt(id, 10)
}

// label names p in metrics and remembers it for Label.
func (h *Hub) label(p *party.Platform) string {
	to := receivingParty(p)
	l := party.Notation(to.CountryCode, to.PartyID)
	h.labels.Store(p.ID, l)
	return l
}

// Due implements delivery.Queue: the receivers with a push due now, whoever
// holds them (a claim finds a live holder's lease and waits for it).
func (q pushQueue) Due(ctx context.Context) ([]int64, error) {
	return store.QueryAll(ctx, q.h.db.Read(), scanPlatformID, `SELECT DISTINCT platform_id FROM hub_push
		WHERE state IN ('pending', 'leased') AND state = 'pending' AND retry_at <= $1`, q.h.now())
}

// head is an open row as a claim first reads it.
type head struct {
	id           int64
	module, key  string
	retryAt      int64
	createdAt    int64
	path, fields string
	attempts     int
	open         int
	// rows are the object's open rows in id order, this one first.
	rows []*head
	// passed are the rows before this one that collapseFront passed over.
	passed []*head
}

// Claim implements delivery.Queue. The receiver is this process' while it
// holds the receiver's lease (lease.go): the claim reads the receiver's open
// rows on the read pool and takes the due head of each object's queue. It
// writes only when it must: to take or extend the lease, to pass over the
// pushes a later one covers (collapseFront), or to coalesce an object that
// is far behind; most claims of a busy receiver write nothing.
func (q pushQueue) Claim(ctx context.Context, platformID int64, n int) (delivery.Claim, error) {
	h := q.h
	now := h.now()
	var c delivery.Claim
	plan, busy, err := h.planLease(ctx, platformID, now)
	if err != nil {
		return c, err
	}
	if busy > 0 {
		// Another live process delivers to this receiver: its lease is
		// respected until it ends or the holder hands it back (look again
		// after ReleaseAfter).
		c.Next = time.UnixMicro(min(busy, now+ReleaseAfter.Microseconds()))
		return c, nil
	}
	rows, err := h.db.Read().Query(ctx, `SELECT id, module, object_key, retry_at, created_at, path, fields, attempts
		FROM hub_push WHERE platform_id = $1 AND state IN ('pending', 'leased') ORDER BY id LIMIT $2`, platformID, claimLook)
	if err != nil {
		return c, err
	}
	heads := map[string]*head{}
	var order []*head
	for rows.Next() {
		r := &head{}
		if err := rows.Scan(&r.id, &r.module, &r.key, &r.retryAt, &r.createdAt, &r.path, &r.fields, &r.attempts); err != nil {
			rows.Close()
			return c, err
		}
		c.Backlog++
		k := r.module + "\x00" + r.key
		if hd, ok := heads[k]; ok {
			hd.open++
			hd.rows = append(hd.rows, r)
			continue
		}
		r.open = 1
		r.rows = []*head{r}
		heads[k] = r
		order = append(order, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return c, err
	}
	var take, coalesce []*head
	// drop: the rows collapseFront passes over, superseded by the claim.
	var drop []int64
	var next int64
	for _, hd := range order {
		if hd.retryAt > now {
			if next == 0 || hd.retryAt < next {
				next = hd.retryAt
			}
			continue
		}
		if hd.open >= h.cfg.CoalesceRows && now-hd.createdAt >= h.cfg.CoalesceAge.Microseconds() && h.sources[hd.module] != nil {
			coalesce = append(coalesce, hd)
			continue
		}
		if len(take) < n {
			// A receiver that is behind gets the latest of several pushes
			// of the same thing: the ones a later push covers are dropped
			// in the claim's transaction, and the first that must go is
			// taken in their place.
			i := h.collapseFront(hd.rows, now)
			for _, r := range hd.rows[:i] {
				drop = append(drop, r.id)
			}
			front := hd.rows[i]
			front.open, front.passed = hd.open-i, hd.rows[:i]
			take = append(take, front)
		}
	}
	if next > 0 {
		c.Next = time.UnixMicro(next)
	}
	if len(take) == 0 && len(coalesce) == 0 {
		return c, nil
	}
	var p *party.Platform
	var findErr error
	if len(take) > 0 && h.parties != nil {
		p, findErr = h.parties.Find(ctx, platformID)
		if findErr != nil && !ocpi.IsNotFound(findErr) {
			return c, findErr
		}
		findErr = nil
		if p != nil {
			h.label(p)
		}
	}
	until := now + h.cfg.Lease.Microseconds()
	var gone map[int64]bool
	if plan.write || len(drop) > 0 || len(coalesce) > 0 {
		err = h.db.InBatch(ctx, func(ctx context.Context, tx *store.Tx) error {
			c.Again = false
			if err := h.takeLease(ctx, tx, platformID, plan, until); err != nil {
				return err
			}
			for _, hd := range coalesce {
				// The object's current state replaces its queued pushes.
				if err := h.resyncObject(ctx, tx, platformID, hd.module, hd.key); err != nil {
					return err
				}
				c.Again = true
			}
			var err error
			gone, err = h.supersedeRows(ctx, tx, drop, now)
			return err
		})
		if errors.Is(err, errLeaseTaken) {
			h.leases.drop(platformID)
			return delivery.Claim{Backlog: c.Backlog, Next: time.UnixMicro(now).Add(time.Second)}, nil
		}
		if err != nil {
			return delivery.Claim{}, err
		}
		if plan.write {
			h.leases.set(platformID, until)
		}
	}
	var ids []string
	for _, hd := range take {
		if !allIn(hd.passed, gone) {
			// A row before this one left the queue another way meanwhile
			// (superseded by a full push): the next claim looks again.
			continue
		}
		ids = append(ids, strconv.FormatInt(hd.id, 10))
	}
	h.countSuperseded(platformID, p, take, gone)
	if len(ids) == 0 {
		return c, nil
	}
	// What a push carries never changes once it is queued. A row that left
	// the queue since it was read (superseded by a full push) is not sent.
	items, err := store.QueryAll(ctx, h.db.Read(), func(r store.Row) (delivery.Item, error) {
		cl := &claimed{platform: p, findErr: findErr}
		row := &cl.row
		var body *string
		if err := r.Scan(&row.id, &cl.module, &cl.key, &row.method, &row.path, &body, &row.full, &row.attempts, &row.correlationID, &row.createdAt,
			&row.to.CountryCode, &row.to.PartyID, &row.from.CountryCode, &row.from.PartyID, &row.iface, &row.traceparent); err != nil {
			return delivery.Item{}, err
		}
		// attempts numbers the attempt about to be made; Settle records it.
		row.attempts++
		if body != nil {
			row.body = []byte(*body)
		}
		return delivery.Item{Key: cl.module + "/" + cl.key, Committed: time.UnixMicro(row.createdAt), Value: cl}, nil
	}, `SELECT id, module, object_key, method, path, body, full_object, attempts, correlation_id, created_at,
		to_country_code, to_party_id, from_country_code, from_party_id, iface, traceparent
		FROM hub_push WHERE id IN (`+strings.Join(ids, ",")+`) AND state = 'pending' ORDER BY id`)
	if err != nil {
		return delivery.Claim{}, err
	}
	c.Items = items
	return c, nil
}

// Renew implements delivery.Queue: it extends the receiver's lease while a
// batch is in flight.
func (q pushQueue) Renew(ctx context.Context, platformID int64, _ []delivery.Item) error {
	return q.h.renewLease(ctx, platformID)
}

// outcome of one delivery attempt.
const (
	outcomeDelivered = "delivered"
	outcomeRejected  = "rejected"
	outcomeRetry     = "retry"
	outcomeGaveUp    = "gave_up"
	outcomeDropped   = "dropped"
	outcomeOffline   = "offline"
	outcomeSkipped   = "skipped"
	// outcomeSuperseded: not sent, a later push to the receiver covered it
	// (collapseFront).
	outcomeSuperseded = "superseded"
)

// Send implements delivery.Queue: one attempt of one leased row. It writes
// nothing but the partner health; Settle records the outcome.
func (q pushQueue) Send(ctx context.Context, platformID int64, it delivery.Item) (res delivery.Result) {
	h := q.h
	cl := it.Value.(*claimed)
	// The attempt is a span under the transaction that recorded the change;
	// the call itself (ocpiclient) is its child.
	ctx, span := h.cfg.Tracer.Continue(ctx, cl.row.traceparent, "push "+cl.module, tracing.Consumer)
	if span != nil {
		span.SetString("ocpi.module", cl.module)
		span.SetInt("hub.push_id", cl.row.id)
		span.SetInt("hub.push_attempt", int64(cl.row.attempts))
		defer func() {
			if res.Outcome == delivery.Retry {
				span.Fail("the attempt failed; retrying")
			}
			span.End()
		}()
	}
	row, module := &cl.row, cl.module
	end := func(s settle) delivery.Result {
		return delivery.Result{Outcome: delivery.Ended, Value: s}
	}
	p := cl.platform
	if p == nil || p.Status != party.StatusConnected {
		h.metrics.count(fmt.Sprintf("platform-%d", platformID), module, outcomeDropped)
		return end(settle{kind: settleClose, msg: "the platform is not connected", resync: p != nil})
	}
	to := row.to
	if to.IsZero() {
		to = receivingParty(p)
	}
	from := row.from
	if from.IsZero() {
		from = h.Self()
	}
	label := party.Notation(to.CountryCode, to.PartyID)
	if p.Connection == party.ClientOffline {
		h.metrics.count(label, module, outcomeOffline)
		return end(settle{kind: settleClose, msg: "the platform is OFFLINE", resync: true})
	}
	role := row.iface
	if role == "" {
		role = ocpi.InterfaceReceiver
	}
	base, ok := p.Endpoint(module, role)
	if !ok {
		h.metrics.count(label, module, outcomeDropped)
		return end(settle{kind: settleClose, msg: "the platform no longer offers the " + module + " " + role + " interface"})
	}
	auth, err := h.parties.Auth(p)
	if err != nil {
		h.logger.ErrorContext(ctx, "could not authorize a push", "platform_id", platformID, "error", err)
		return delivery.Result{Outcome: delivery.Retry, RetryAt: h.clock.Now().Add(time.Second), Value: settle{kind: settleRelease}}
	}
	req := ocpiclient.Request{Method: row.method, URL: base + row.path, Token: auth.Token, Base64: auth.Base64,
		To: to, From: from, CorrelationID: row.correlationID, MaxAttempts: 1, Timeout: h.cfg.Timeout,
		PlatformID: p.ID, Partner: p.Name, Module: module}
	var body []byte
	if row.body != nil {
		body = row.body
		for _, fn := range h.adapters[module] {
			body = fn(p.Version, row.method, row.path, body)
		}
		req.Body = body
	}
	if d, ok := h.dialect(p.Version); ok {
		m := Message{Version: p.Version, PlatformID: p.ID, Party: label, Module: module, Interface: ocpi.InterfaceReceiver,
			Method: row.method, Path: row.path, Body: body}
		send, err := d.Request(ctx, &m)
		if err != nil || !send {
			msg := "not sent: it has no OCPI " + p.Version + " form"
			if err != nil {
				msg = "not sent: converting it to OCPI " + p.Version + " failed: " + err.Error()
				h.logger.ErrorContext(ctx, "could not convert a push", "platform_id", platformID, "module", module, "path", row.path, "error", err)
			}
			h.metrics.count(label, module, outcomeSkipped)
			return end(settle{kind: settleEnd, state: stateSkipped, msg: msg})
		}
		req.Method, req.URL, req.Body = m.Method, base+m.Path, nil
		if m.Body != nil {
			req.Body = m.Body
		}
	}
	resp, callErr := h.client.Do(ctx, req)
	h.recordHealth(ctx, platformID, row, resp, callErr)
	switch classify(resp, callErr) {
	case outcomeDelivered:
		h.metrics.count(label, module, outcomeDelivered)
		h.metrics.latency(module, time.Duration(h.now()-row.createdAt)*time.Microsecond)
		return delivery.Result{Outcome: delivery.Delivered, Value: settle{kind: settleDelivered, header: resp.Header}}
	case outcomeRejected:
		h.metrics.count(label, module, outcomeRejected)
		msg := describeAnswer(resp)
		h.logger.WarnContext(ctx, "receiver rejected a push", "platform_id", platformID, "module", module,
			"method", row.method, "path", row.path, "answer", msg)
		// A rejected PATCH usually means the receiver lacks the object: the
		// spec's remedy is a PUT of the whole object (transport.md §10).
		return end(settle{kind: settleEnd, state: stateRejected, msg: msg, resync: row.method == http.MethodPatch})
	}
	msg := describeFailure(resp, callErr)
	if ctx.Err() != nil {
		// Stopping: the attempt does not count.
		return delivery.Result{Outcome: delivery.Retry, RetryAt: h.clock.Now(), Value: settle{kind: settleRelease}}
	}
	if row.attempts >= h.cfg.MaxAttempts {
		h.metrics.count(label, module, outcomeGaveUp)
		h.logger.WarnContext(ctx, "push failed for good; the object will be resynced in full", "platform_id", platformID,
			"module", module, "object", cl.key, "attempts", row.attempts, "error", msg)
		return end(settle{kind: settleGiveUp, msg: msg})
	}
	h.metrics.count(label, module, outcomeRetry)
	delay := h.cfg.Backoff(row.attempts)
	return delivery.Result{Outcome: delivery.Retry, RetryAt: h.clock.Now().Add(delay), Value: settle{kind: settleRetry, msg: msg, delay: delay}}
}

// Settle implements delivery.Queue: the outcomes of a batch in one
// transaction, then what follows their commit (resyncs, OnDelivered). Each
// attempt made is counted on its row. Only open rows change: one that left
// the queue while it was in flight (a full push superseded it) keeps that
// end.
func (q pushQueue) Settle(ctx context.Context, platformID int64, rs []delivery.Result) error {
	h := q.h
	ctx = context.WithoutCancel(ctx)
	var marks, gaveUp bool
	var delivered []delivery.Result
	err := h.db.InBatch(ctx, func(ctx context.Context, tx *store.Tx) error {
		marks, gaveUp, delivered = false, false, delivered[:0]
		now := h.now()
		var done []string
		for _, r := range rs {
			cl := r.Item.Value.(*claimed)
			s := r.Value.(settle)
			var err error
			switch s.kind {
			case settleDelivered:
				done = append(done, strconv.FormatInt(cl.row.id, 10))
				delivered = append(delivered, r)
			case settleEnd:
				_, err = tx.Exec(ctx, `UPDATE hub_push SET state = $1, attempts = attempts + 1, last_error = $2, updated_at = $3
					WHERE id = $4 AND state = 'pending'`, s.state, truncate(s.msg, 500), now, cl.row.id)
				if err == nil && s.resync {
					err = h.resyncObject(ctx, tx, platformID, cl.module, cl.key)
				}
			case settleGiveUp:
				if _, err = tx.Exec(ctx, "UPDATE hub_push SET attempts = attempts + 1 WHERE id = $1", cl.row.id); err != nil {
					break
				}
				gaveUp = true
				fallthrough
			case settleClose:
				err = h.closeQueue(ctx, tx, platformID, cl.module, cl.key, s.msg, s.resync || s.kind == settleGiveUp)
			case settleRetry:
				_, err = tx.Exec(ctx, `UPDATE hub_push SET attempts = attempts + 1, retry_at = $1, last_error = $2, updated_at = $3
					WHERE id = $4 AND state = 'pending'`, now+s.delay.Microseconds(), truncate(s.msg, 500), now, cl.row.id)
			case settleRelease:
				// Not an attempt: the row stays as it was.
			}
			if err != nil {
				return err
			}
		}
		if len(done) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, attempts = attempts + 1, last_error = '', updated_at = $2
			WHERE id IN (`+strings.Join(done, ",")+`) AND state = 'pending'`, stateDelivered, now); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM hub_resync WHERE platform_id = $1)", platformID).Scan(&marks)
	})
	if err != nil {
		return err
	}
	for _, r := range delivered {
		cl := r.Item.Value.(*claimed)
		for _, fn := range h.delivered[cl.module] {
			fn(ctx, Delivery{PlatformID: platformID, Module: cl.module, ObjectKey: cl.key, Method: cl.row.method, Path: cl.row.path,
				Header: r.Value.(settle).header})
		}
	}
	if marks {
		// The receiver answers again: send what it missed.
		h.reconnected(ctx, platformID)
	}
	if gaveUp {
		h.resyncIfAnswering(ctx, platformID)
	}
	return nil
}

// resyncIfAnswering schedules the resync of a platform that answers again
// already, right after one of its objects was marked for a resync. A push of
// another object that succeeded between this object's last failed attempt
// and its mark looked for marks too early (Settle), and the mark would
// otherwise wait for the hourly cleanup. The partner health says whether the
// platform's latest attempt, of any object, was answered: every attempt is
// recorded before its outcome is handled.
func (h *Hub) resyncIfAnswering(ctx context.Context, platformID int64) {
	if h.parties == nil {
		return
	}
	health, found, err := h.parties.HealthOf(ctx, platformID)
	if err != nil {
		h.logger.WarnContext(ctx, "could not read a partner's health", "platform_id", platformID, "error", err)
		return
	}
	if found && health.ConsecutiveFailures == 0 {
		h.reconnected(ctx, platformID)
	}
}

// closeQueue ends, inside tx, every open row of an object's queue to a
// platform without delivering it; with resync the object is marked for a
// full push when the platform is back.
func (h *Hub) closeQueue(ctx context.Context, tx *store.Tx, platformID int64, module, key, msg string, resync bool) error {
	if _, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, last_error = $2, updated_at = $3
		WHERE platform_id = $4 AND module = $5 AND object_key = $6 AND state IN ('pending', 'leased')`,
		stateFailed, truncate(msg, 500), h.now(), platformID, module, key); err != nil {
		return err
	}
	if !resync {
		return nil
	}
	return h.markResync(ctx, tx, platformID, module, key)
}

// classify sorts a delivery attempt's result: a 1xxx answer is delivered; a
// 2xxx answer (the receiver understood and refused) is rejected and not
// retried; anything else (network, timeout, HTTP 5xx, 3xxx, no envelope)
// is retried.
func classify(resp *ocpiclient.Response, err error) string {
	if err != nil || resp == nil || resp.Envelope == nil {
		return outcomeRetry
	}
	code := resp.Envelope.StatusCode
	switch {
	case resp.HTTPStatus < 300 && ocpi.IsSuccess(code):
		return outcomeDelivered
	case resp.HTTPStatus == http.StatusUnauthorized || resp.HTTPStatus == http.StatusTooManyRequests || resp.HTTPStatus >= 500:
		return outcomeRetry
	case code >= 2000 && code < 3000:
		return outcomeRejected
	}
	return outcomeRetry
}

// receivingParty picks the party a push to platform p is addressed to
// (OCPI-to) when the push names none (routing.ReceivingParty).
func receivingParty(p *party.Platform) ocpiclient.Party { return routing.ReceivingParty(p) }

func describeAnswer(resp *ocpiclient.Response) string {
	if resp == nil || resp.Envelope == nil {
		return "no OCPI answer"
	}
	return fmt.Sprintf("HTTP %d, status_code %d: %s", resp.HTTPStatus, resp.Envelope.StatusCode, resp.Envelope.StatusMessage)
}

func describeFailure(resp *ocpiclient.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return describeAnswer(resp)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
