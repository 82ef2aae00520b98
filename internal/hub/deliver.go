package hub

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ocpihub/ocpihub/internal/delivery"
	"github.com/ocpihub/ocpihub/internal/instance"
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

// claimed is one leased row, as the engine carries it.
type claimed struct {
	row      pushRow
	module   string
	key      string
	token    string
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

// Label implements delivery.Queue.
func (q pushQueue) Label(id int64) string {
	if q.h.parties != nil {
		if p, err := q.h.parties.Find(context.Background(), id); err == nil {
			to := receivingParty(p)
			return party.Notation(to.CountryCode, to.PartyID)
		}
	}
	return "platform-" + strconv.FormatInt(id, 10)
}

// Due implements delivery.Queue.
func (q pushQueue) Due(ctx context.Context) ([]int64, error) {
	now := q.h.now()
	return store.QueryAll(ctx, q.h.db.Read(), scanPlatformID, `SELECT DISTINCT platform_id FROM hub_push
		WHERE state IN ('pending', 'leased') AND ((state = 'pending' AND retry_at <= $1) OR (state = 'leased' AND lease_until <= $1))`, now)
}

// head is an open row as a claim first reads it.
type head struct {
	id                  int64
	module, key, state  string
	holder              string
	leaseUntil, retryAt int64
	createdAt           int64
	path, fields        string
	attempts            int
	open                int
	// rows are the object's open rows in id order, this one first.
	rows []*head
	// passed are the rows before this one that collapseFront passed over.
	passed []*head
}

// Claim implements delivery.Queue. It reads the receiver's open rows on the
// read pool first (most looks find nothing due, and take no write
// transaction), then leases the due heads in one transaction, guarded so
// that a row another worker took meanwhile is left to it.
func (q pushQueue) Claim(ctx context.Context, platformID int64, n int) (delivery.Claim, error) {
	h := q.h
	now := h.now()
	var c delivery.Claim
	rows, err := h.db.Read().Query(ctx, `SELECT id, module, object_key, state, lease_token, lease_until, retry_at, created_at, path, fields, attempts
		FROM hub_push WHERE platform_id = $1 AND state IN ('pending', 'leased') ORDER BY id LIMIT $2`, platformID, claimLook)
	if err != nil {
		return c, err
	}
	heads := map[string]*head{}
	var order []*head
	for rows.Next() {
		r := &head{}
		if err := rows.Scan(&r.id, &r.module, &r.key, &r.state, &r.holder, &r.leaseUntil, &r.retryAt, &r.createdAt, &r.path, &r.fields, &r.attempts); err != nil {
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
	wait := func(at int64) {
		if next == 0 || at < next {
			next = at
		}
	}
	for _, hd := range order {
		switch {
		case hd.state == stateLeased && hd.leaseUntil > now && !h.cfg.Instance.Gone(instance.Holder(hd.holder)):
			wait(hd.leaseUntil)
			continue
		case hd.state == statePending && hd.retryAt > now:
			wait(hd.retryAt)
			continue
		}
		if hd.state == statePending && hd.open >= h.cfg.CoalesceRows && now-hd.createdAt >= h.cfg.CoalesceAge.Microseconds() && h.sources[hd.module] != nil {
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
	}
	token := h.cfg.Instance.Token(uuid.NewString())
	var leased []string
	var gone map[int64]bool
	err = h.db.InBatch(ctx, func(ctx context.Context, tx *store.Tx) error {
		leased = leased[:0]
		c.Again = false
		for _, hd := range coalesce {
			// The object's current state replaces its queued pushes.
			if err := h.resyncObject(ctx, tx, platformID, hd.module, hd.key); err != nil {
				return err
			}
			c.Again = true
		}
		if len(take) == 0 {
			return nil
		}
		var err error
		if gone, err = h.supersedeRows(ctx, tx, drop, now); err != nil {
			return err
		}
		var pending []string
		for _, hd := range take {
			if !allIn(hd.passed, gone) {
				// Another claim took a row before this one meanwhile: the
				// object is its until that row is settled.
				continue
			}
			if hd.state == statePending {
				pending = append(pending, strconv.FormatInt(hd.id, 10))
				continue
			}
			// A lease that ran out, or whose holder is gone. The attempt
			// the holder made stays counted: the receiver may have got it.
			n, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, lease_token = $2, lease_until = $3, attempts = attempts + 1, updated_at = $4
				WHERE id = $5 AND state = 'leased' AND lease_token = $6 AND lease_until = $7`,
				stateLeased, token, now+h.cfg.Lease.Microseconds(), now, hd.id, hd.holder, hd.leaseUntil)
			if err != nil {
				return err
			}
			if n == 1 {
				leased = append(leased, strconv.FormatInt(hd.id, 10))
			}
		}
		if len(pending) == 0 {
			return nil
		}
		ids, err := store.QueryAll(ctx, tx, func(r store.Row) (id string, err error) { return id, r.Scan(&id) },
			`UPDATE hub_push SET state = $1, lease_token = $2, lease_until = $3, attempts = attempts + 1, updated_at = $4
			WHERE id IN (`+strings.Join(pending, ",")+`) AND state = 'pending' AND retry_at <= $4 RETURNING id`,
			stateLeased, token, now+h.cfg.Lease.Microseconds(), now)
		leased = append(leased, ids...)
		return err
	})
	if err != nil {
		return delivery.Claim{}, err
	}
	h.countSuperseded(platformID, p, take, gone)
	if len(leased) == 0 {
		return c, nil
	}
	// What a push carries never changes once it is queued, and the rows are
	// this claim's now: they are read after the commit, on the read pool,
	// not while the writer is held.
	items, err := store.QueryAll(ctx, h.db.Read(), func(r store.Row) (delivery.Item, error) {
		cl := &claimed{token: token, platform: p, findErr: findErr}
		row := &cl.row
		var body *string
		if err := r.Scan(&row.id, &cl.module, &cl.key, &row.method, &row.path, &body, &row.full, &row.attempts, &row.correlationID, &row.createdAt,
			&row.to.CountryCode, &row.to.PartyID, &row.from.CountryCode, &row.from.PartyID, &row.iface, &row.traceparent); err != nil {
			return delivery.Item{}, err
		}
		if body != nil {
			row.body = []byte(*body)
		}
		return delivery.Item{Key: cl.module + "/" + cl.key, Committed: time.UnixMicro(row.createdAt), Value: cl}, nil
	}, `SELECT id, module, object_key, method, path, body, full_object, attempts, correlation_id, created_at,
		to_country_code, to_party_id, from_country_code, from_party_id, iface, traceparent
		FROM hub_push WHERE id IN (`+strings.Join(leased, ",")+`) ORDER BY id`)
	if err != nil {
		// The leases run out and the rows are claimed again.
		return delivery.Claim{}, err
	}
	c.Items = items
	return c, nil
}

// Renew implements delivery.Queue.
func (q pushQueue) Renew(ctx context.Context, platformID int64, items []delivery.Item) error {
	h := q.h
	if len(items) == 0 {
		return nil
	}
	token := items[0].Value.(*claimed).token
	return h.db.InBatch(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE hub_push SET lease_until = $1 WHERE platform_id = $2 AND lease_token = $3 AND state = $4 AND state IN ('pending', 'leased')",
			h.now()+h.cfg.Lease.Microseconds(), platformID, token, stateLeased)
		return err
	})
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
// transaction, then what follows their commit (resyncs, OnDelivered).
func (q pushQueue) Settle(ctx context.Context, platformID int64, rs []delivery.Result) error {
	h := q.h
	ctx = context.WithoutCancel(ctx)
	var marks, gaveUp bool
	var delivered []delivery.Result
	err := h.db.InBatch(ctx, func(ctx context.Context, tx *store.Tx) error {
		marks, gaveUp, delivered = false, false, delivered[:0]
		now := h.now()
		var done []string
		var token string
		for _, r := range rs {
			cl := r.Item.Value.(*claimed)
			s := r.Value.(settle)
			token = cl.token
			var err error
			switch s.kind {
			case settleDelivered:
				done = append(done, strconv.FormatInt(cl.row.id, 10))
				delivered = append(delivered, r)
			case settleEnd:
				_, err = tx.Exec(ctx, `UPDATE hub_push SET state = $1, lease_token = '', last_error = $2, updated_at = $3 WHERE id = $4 AND lease_token = $5`,
					s.state, truncate(s.msg, 500), now, cl.row.id, cl.token)
				if err == nil && s.resync {
					err = h.resyncObject(ctx, tx, platformID, cl.module, cl.key)
				}
			case settleClose, settleGiveUp:
				err = h.closeQueue(ctx, tx, platformID, cl.module, cl.key, s.msg, s.resync || s.kind == settleGiveUp)
				gaveUp = gaveUp || s.kind == settleGiveUp
			case settleRetry:
				_, err = tx.Exec(ctx, `UPDATE hub_push SET state = $1, lease_token = '', lease_until = 0, retry_at = $2, last_error = $3, updated_at = $4
					WHERE id = $5 AND lease_token = $6`, statePending, now+s.delay.Microseconds(), truncate(s.msg, 500), now, cl.row.id, cl.token)
			case settleRelease:
				_, err = tx.Exec(ctx, `UPDATE hub_push SET state = $1, lease_token = '', lease_until = 0, attempts = attempts - 1 WHERE id = $2 AND lease_token = $3`,
					statePending, cl.row.id, cl.token)
			}
			if err != nil {
				return err
			}
		}
		if len(done) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, lease_token = '', last_error = '', updated_at = $2
			WHERE id IN (`+strings.Join(done, ",")+`) AND lease_token = $3`, stateDelivered, now, token); err != nil {
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
	if _, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, lease_token = '', last_error = $2, updated_at = $3
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
