package hub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/instance"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/store"
)

// rowsPerRun bounds the rows one job run delivers before it hands over to a
// fresh job, so one hot queue cannot hold a worker for ever.
const rowsPerRun = 200

type pushWorker struct {
	river.WorkerDefaults[PushArgs]
	h *Hub
}

// Work delivers the queue of one (platform, module, object) in order. Only
// the holder of the head row's lease delivers; a job that finds the head
// leased by a live lease exits (the holder loops to the next row), and one
// that finds it waiting for a retry sleeps until then.
func (w *pushWorker) Work(ctx context.Context, job *river.Job[PushArgs]) error {
	h, a := w.h, job.Args
	for n := 0; n < rowsPerRun; n++ {
		row, token, wait, err := h.lease(ctx, a, job.ID)
		if err != nil {
			return err
		}
		if row == nil {
			if wait > 0 {
				return river.JobSnooze(wait)
			}
			return nil
		}
		stop := h.keepLease(ctx, row.id, token)
		err = h.deliver(ctx, a, row, token, job.ID)
		stop()
		if err != nil {
			return err
		}
	}
	_, err := h.jobs.Insert(ctx, a, &river.InsertOpts{Queue: job.Queue, MaxAttempts: 1_000})
	return err
}

// lease takes the head row of a queue. It returns no row when the queue is
// empty or its head is held by a live lease, and a wait when the head is
// waiting for its next retry and jobID is the job that will retry it (the
// one whose attempt failed). Other jobs of the queue exit: a receiver that
// is down while changes keep coming would otherwise have every queued job
// wake at each retry and take the writer for nothing.
func (h *Hub) lease(ctx context.Context, a PushArgs, jobID int64) (*pushRow, string, time.Duration, error) {
	var row *pushRow
	var wait time.Duration
	token := h.cfg.Instance.Token(uuid.NewString())
	err := h.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var r pushRow
		var state, holder string
		var body *string
		var leaseUntil, retryAt int64
		err := tx.QueryRow(ctx, `SELECT id, method, path, body, full_object, state, attempts, lease_token, lease_until, retry_at, correlation_id, created_at,
			to_country_code, to_party_id, from_country_code, from_party_id, iface
			FROM hub_push WHERE platform_id = $1 AND module = $2 AND object_key = $3 AND state IN ('pending', 'leased')
			ORDER BY id LIMIT 1`, a.PlatformID, a.Module, a.ObjectKey).
			Scan(&r.id, &r.method, &r.path, &body, &r.full, &state, &r.attempts, &holder, &leaseUntil, &retryAt, &r.correlationID, &r.createdAt,
				&r.to.CountryCode, &r.to.PartyID, &r.from.CountryCode, &r.from.PartyID, &r.iface)
		if errors.Is(err, store.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		now := h.now()
		// A live lease is respected; one whose holder is known to be gone
		// (a killed process, seen from its restart) is taken at once.
		if state == stateLeased && leaseUntil > now && !h.cfg.Instance.Gone(instance.Holder(holder)) {
			return nil
		}
		if retryAt > now {
			if holder == "" || holder == retryHolder(jobID) {
				wait = time.Duration(retryAt-now) * time.Microsecond
			}
			return nil
		}
		n, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, lease_token = $2, lease_until = $3, attempts = attempts + 1, updated_at = $4
			WHERE id = $5 AND (state = 'pending' OR (state = 'leased' AND (lease_until <= $4 OR lease_token = $6)))`,
			stateLeased, token, now+h.cfg.Lease.Microseconds(), now, r.id, holder)
		if err != nil || n != 1 {
			return err
		}
		if body != nil {
			r.body = []byte(*body)
		}
		r.attempts++
		row = &r
		return nil
	})
	return row, token, wait, err
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
)

// deliver sends one leased row and records the outcome.
func (h *Hub) deliver(ctx context.Context, a PushArgs, row *pushRow, token string, jobID int64) error {
	p, err := h.parties.Find(ctx, a.PlatformID)
	if err != nil && !ocpi.IsNotFound(err) {
		return h.release(ctx, row, token, err)
	}
	if p == nil || p.Status != party.StatusConnected {
		h.metrics.count(fmt.Sprintf("platform-%d", a.PlatformID), a.Module, outcomeDropped)
		return h.closeQueue(ctx, a, "the platform is not connected", p != nil)
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
		h.metrics.count(label, a.Module, outcomeOffline)
		return h.closeQueue(ctx, a, "the platform is OFFLINE", true)
	}
	role := row.iface
	if role == "" {
		role = ocpi.InterfaceReceiver
	}
	base, ok := p.Endpoint(a.Module, role)
	if !ok {
		h.metrics.count(label, a.Module, outcomeDropped)
		return h.closeQueue(ctx, a, "the platform no longer offers the "+a.Module+" "+role+" interface", false)
	}
	auth, err := h.parties.Auth(p)
	if err != nil {
		return h.release(ctx, row, token, err)
	}
	req := ocpiclient.Request{Method: row.method, URL: base + row.path, Token: auth.Token, Base64: auth.Base64,
		To: to, From: from, CorrelationID: row.correlationID, MaxAttempts: 1, Timeout: h.cfg.Timeout,
		PlatformID: p.ID, Partner: p.Name, Module: a.Module}
	var body []byte
	if row.body != nil {
		body = row.body
		for _, fn := range h.adapters[a.Module] {
			body = fn(p.Version, row.method, row.path, body)
		}
		req.Body = body
	}
	if d, ok := h.dialect(p.Version); ok {
		m := Message{Version: p.Version, PlatformID: p.ID, Party: label, Module: a.Module, Interface: ocpi.InterfaceReceiver,
			Method: row.method, Path: row.path, Body: body}
		send, err := d.Request(ctx, &m)
		if err != nil || !send {
			msg := "not sent: it has no OCPI " + p.Version + " form"
			if err != nil {
				msg = "not sent: converting it to OCPI " + p.Version + " failed: " + err.Error()
				h.logger.ErrorContext(ctx, "could not convert a push", "platform_id", a.PlatformID, "module", a.Module, "path", row.path, "error", err)
			}
			h.metrics.count(label, a.Module, outcomeSkipped)
			return h.finish(ctx, a, row, token, stateSkipped, msg, false)
		}
		req.Method, req.URL, req.Body = m.Method, base+m.Path, nil
		if m.Body != nil {
			req.Body = m.Body
		}
	}
	resp, callErr := h.client.Do(ctx, req)
	h.recordHealth(ctx, a, row, resp, callErr)
	switch classify(resp, callErr) {
	case outcomeDelivered:
		h.metrics.count(label, a.Module, outcomeDelivered)
		h.metrics.latency(a.Module, time.Duration(h.now()-row.createdAt)*time.Microsecond)
		if err := h.finish(ctx, a, row, token, stateDelivered, "", false); err != nil {
			return err
		}
		for _, fn := range h.delivered[a.Module] {
			fn(ctx, Delivery{PlatformID: a.PlatformID, Module: a.Module, ObjectKey: a.ObjectKey, Method: row.method, Path: row.path, Header: resp.Header})
		}
		return nil
	case outcomeRejected:
		h.metrics.count(label, a.Module, outcomeRejected)
		msg := describeAnswer(resp)
		h.logger.WarnContext(ctx, "receiver rejected a push", "platform_id", a.PlatformID, "module", a.Module,
			"method", row.method, "path", row.path, "answer", msg)
		// A rejected PATCH usually means the receiver lacks the object: the
		// spec's remedy is a PUT of the whole object (transport.md §10).
		return h.finish(ctx, a, row, token, stateRejected, msg, row.method == http.MethodPatch)
	}
	msg := describeFailure(resp, callErr)
	if row.attempts >= h.cfg.MaxAttempts {
		h.metrics.count(label, a.Module, outcomeGaveUp)
		h.logger.WarnContext(ctx, "push failed for good; the object will be resynced in full", "platform_id", a.PlatformID,
			"module", a.Module, "object", a.ObjectKey, "attempts", row.attempts, "error", msg)
		if err := h.closeQueue(ctx, a, msg, true); err != nil {
			return err
		}
		h.resyncIfAnswering(ctx, a.PlatformID)
		return nil
	}
	h.metrics.count(label, a.Module, outcomeRetry)
	delay := h.cfg.Backoff(row.attempts)
	err = h.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, lease_token = $7, lease_until = 0, retry_at = $2, last_error = $3, updated_at = $4
			WHERE id = $5 AND lease_token = $6`, statePending, h.now()+delay.Microseconds(), truncate(msg, 500), h.now(), row.id, token, retryHolder(jobID))
		return err
	})
	if err != nil {
		return err
	}
	return river.JobSnooze(delay)
}

// retryHolder is the lease_token of a row waiting for its next retry: the
// job that snoozed to retry it.
func retryHolder(jobID int64) string { return "retry:" + strconv.FormatInt(jobID, 10) }

// release gives a lease back after an error of ours (not the receiver's).
func (h *Hub) release(ctx context.Context, row *pushRow, token string, cause error) error {
	_ = h.db.InTx(context.WithoutCancel(ctx), func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, lease_token = '', lease_until = 0, attempts = attempts - 1 WHERE id = $2 AND lease_token = $3`,
			statePending, row.id, token)
		return err
	})
	return cause
}

// finish records the end of a row; resync also queues a full push of the
// object's current state.
func (h *Hub) finish(ctx context.Context, a PushArgs, row *pushRow, token, state, msg string, resync bool) error {
	var marks bool
	err := h.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, lease_token = '', last_error = $2, updated_at = $3 WHERE id = $4 AND lease_token = $5`,
			state, truncate(msg, 500), h.now(), row.id, token); err != nil {
			return err
		}
		if resync {
			if err := h.resyncObject(ctx, tx, a.PlatformID, a.Module, a.ObjectKey); err != nil {
				return err
			}
		}
		return tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM hub_resync WHERE platform_id = $1)", a.PlatformID).Scan(&marks)
	})
	if err != nil {
		return err
	}
	if marks && state == stateDelivered {
		// The receiver answers again: send what it missed.
		h.reconnected(ctx, a.PlatformID)
	}
	return nil
}

// resyncIfAnswering schedules the resync of a platform that answers again
// already, right after one of its objects was marked for a resync. A push of
// another object that succeeded between this object's last failed attempt
// and its mark looked for marks too early (finish), and the mark would
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

// closeQueue ends every open row of a queue without delivering it; with
// resync the object is marked for a full push when the platform is back.
func (h *Hub) closeQueue(ctx context.Context, a PushArgs, msg string, resync bool) error {
	return h.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE hub_push SET state = $1, lease_token = '', last_error = $2, updated_at = $3
			WHERE platform_id = $4 AND module = $5 AND object_key = $6 AND state IN ('pending', 'leased')`,
			stateFailed, truncate(msg, 500), h.now(), a.PlatformID, a.Module, a.ObjectKey); err != nil {
			return err
		}
		if !resync {
			return nil
		}
		return h.markResync(ctx, tx, a.PlatformID, a.Module, a.ObjectKey)
	})
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
