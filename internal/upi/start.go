package upi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
)

// startAttempts is how often delivering START_SESSION is tried before the
// payment is refunded: the driver is waiting at the charger.
const startAttempts = 3

// startArgs is the job that sends START_SESSION for a captured payment.
type startArgs struct {
	PaymentID string `json:"payment_id"`
}

func (startArgs) Kind() string { return "upi_start_session" }

type startWorker struct {
	river.WorkerDefaults[startArgs]
	s *Service
}

// NextRetry retries an undelivered START_SESSION quickly.
func (w *startWorker) NextRetry(job *river.Job[startArgs]) time.Time {
	return w.s.now().Add(w.s.retryDelay(job.Attempt))
}

// Work sends START_SESSION as ocpihub's eMSP: the payment's token, the
// connector of the order, authorization_reference = the payment id. The
// payment is SESSION_REQUESTED (with the session deadline scheduled) before
// the command leaves. A CPO that cannot be reached is tried a few times; a
// CPO answer other than ACCEPTED, or no delivery at all, refunds the
// payment in full. A CPO that answers too late keeps the payment waiting
// for the command's result (or TIMEOUT) and the session deadline.
func (w *startWorker) Work(ctx context.Context, job *river.Job[startArgs]) error {
	s := w.s
	var p *paymentrow.Payment
	err := s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		p, err = paymentrow.Lock(ctx, tx, "id = $1", job.Args.PaymentID)
		if err != nil {
			return err
		}
		switch {
		case p.Status == paymentrow.StatusCaptured:
		case p.Status == paymentrow.StatusSessionRequested && p.CommandResponse == "" && p.Session.ID == "":
			return nil // an earlier attempt did not reach the CPO: send again
		default:
			p = nil // decided already
			return nil
		}
		p.CommandSentAt = s.micros()
		if err := s.transition(ctx, tx, p, paymentrow.StatusSessionRequested, paymentrow.ActorSystem, "START_SESSION to "+qrmap.TenantOf(p.Ref.CountryCode, p.Ref.PartyID)); err != nil {
			return err
		}
		if _, err := s.jobs.InsertTx(ctx, tx, deadlineArgs{PaymentID: p.ID, Check: checkSession},
			&river.InsertOpts{Queue: jobs.QueueMoney, ScheduledAt: s.now().Add(s.cfg.SessionDeadline)}); err != nil {
			return err
		}
		return s.save(ctx, tx, p)
	})
	if errors.Is(err, store.ErrNoRows) || err == nil && p == nil {
		return nil
	}
	if err != nil {
		return err
	}
	if s.commands == nil {
		return s.startFailed(ctx, p.ID, "", "", "no command service is configured to send START_SESSION")
	}
	id, resp, err := s.commands.StartSession(ctx, StartRequest{PaymentID: p.ID, CountryCode: p.Ref.CountryCode, PartyID: p.Ref.PartyID,
		Start: ocpi.StartSession{Token: ptr(s.token(p)), LocationID: p.Ref.LocationID, EVSEUID: p.Ref.EVSEUID,
			ConnectorID: p.Ref.ConnectorID, AuthorizationReference: p.ID}})
	switch {
	case errors.Is(err, ErrStartPending):
		return s.recordResponse(ctx, p.ID, id, responseNone, "the CPO did not answer START_SESSION in time; waiting for its result")
	case err != nil:
		if job.Attempt < startAttempts {
			s.logger.WarnContext(ctx, "START_SESSION not delivered; retrying", "payment_id", p.ID, "attempt", job.Attempt, "error", err)
			return err
		}
		return s.startFailed(ctx, p.ID, id, "", "START_SESSION could not be delivered: "+err.Error())
	case resp == nil || resp.Result != ocpi.CommandAccepted:
		result := "no CommandResponse"
		if resp != nil {
			result = resp.Result
		}
		return s.startFailed(ctx, p.ID, id, result, "the CPO answered START_SESSION with "+result+displayText(respMessage(resp)))
	}
	return s.recordResponse(ctx, p.ID, id, resp.Result, "CommandResponse ACCEPTED")
}

// responseNone marks a START_SESSION whose CommandResponse never came.
const responseNone = "NO_ANSWER"

func respMessage(r *ocpi.CommandResponse) []ocpi.DisplayText {
	if r == nil {
		return nil
	}
	return r.Message
}

// recordResponse stores the command id and the CPO's answer.
func (s *Service) recordResponse(ctx context.Context, paymentID, commandID, response, note string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		p, err := paymentrow.Lock(ctx, tx, "id = $1", paymentID)
		if err != nil || p.CommandResponse != "" {
			return err
		}
		p.CommandID, p.CommandResponse = commandID, response
		if err := paymentrow.Audit(ctx, tx, s.micros(), p.ID, "", p.Status, p.Status, paymentrow.ActorCPO, note); err != nil {
			return err
		}
		return s.save(ctx, tx, p)
	})
}

// startFailed refunds a payment whose START_SESSION failed, unless a
// session was seen meanwhile.
func (s *Service) startFailed(ctx context.Context, id, commandID, response, why string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		p, err := paymentrow.Lock(ctx, tx, "id = $1", id)
		if err != nil {
			return err
		}
		if p.CommandResponse == "" {
			p.CommandID, p.CommandResponse = commandID, response
		}
		if p.Status == paymentrow.StatusSessionRequested && p.Session.ID == "" {
			if err := s.refundFull(ctx, tx, p, why); err != nil {
				return err
			}
		}
		return s.save(ctx, tx, p)
	})
}

// CommandResult is told the CommandResult of a START_SESSION ocpihub sent
// for a payment (reference is the command's authorization_reference, the
// payment id), TIMEOUT included when none came in time. A result other than
// ACCEPTED refunds the payment unless its session was seen already. Results
// of commands that are not ours are ignored; a repeat changes nothing.
func (s *Service) CommandResult(ctx context.Context, commandID, reference, result string) error {
	return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		return s.commandResult(ctx, tx, commandID, reference, result)
	})
}

func (s *Service) commandResult(ctx context.Context, tx *store.Tx, commandID, reference, result string) error {
	p, err := paymentrow.Lock(ctx, tx, "id = $1", ocpi.Key(reference))
	if errors.Is(err, store.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if p.CommandResult != "" || p.CommandID != "" && commandID != "" && p.CommandID != commandID {
		return nil // the first result of our command counts
	}
	if p.CommandID == "" {
		p.CommandID = commandID
	}
	p.CommandResult = result
	if err := paymentrow.Audit(ctx, tx, s.micros(), p.ID, "", p.Status, p.Status, paymentrow.ActorCPO, "CommandResult "+result); err != nil {
		return err
	}
	if result != ocpi.CommandAccepted && p.Status == paymentrow.StatusSessionRequested && p.Session.ID == "" {
		if err := s.refundFull(ctx, tx, p, "the START_SESSION result was "+result); err != nil {
			return err
		}
	}
	return s.save(ctx, tx, p)
}

// Deadline checks.
const (
	checkSession = "session" // a session must follow START_SESSION
	checkCDR     = "cdr"     // a CDR must follow the session's end
	checkAge     = "age"     // a session must end within MaxSessionAge
)

// deadlineArgs is a scheduled check on a payment.
type deadlineArgs struct {
	PaymentID string `json:"payment_id"`
	Check     string `json:"check"`
}

func (deadlineArgs) Kind() string { return "upi_deadline" }

// checkDeadline runs a deadline check: no session after START_SESSION refunds the
// payment; no CDR after the session ended raises cdr.missing; a session
// charging for too long is flagged. A check whose condition no longer holds
// does nothing.
func (s *Service) checkDeadline(ctx context.Context, a deadlineArgs) error {
	return s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		p, err := paymentrow.Lock(ctx, tx, "id = $1", a.PaymentID)
		if errors.Is(err, store.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		switch a.Check {
		case checkSession:
			if p.Status != paymentrow.StatusSessionRequested || p.Session.ID != "" {
				return nil
			}
			if err := s.refundFull(ctx, tx, p, fmt.Sprintf("no session within %s of START_SESSION", s.cfg.SessionDeadline)); err != nil {
				return err
			}
		case checkCDR:
			if p.CDRID != "" || p.Attention == paymentrow.AttentionCDRMissing {
				return nil
			}
			if err := s.flag(ctx, tx, p, paymentrow.AttentionCDRMissing, fmt.Sprintf("no CDR %s after session %s ended", s.cfg.CDRDeadline, p.Session.ID)); err != nil {
				return err
			}
		case checkAge:
			if p.CDRID != "" || p.SessionEnd != 0 || p.Status != paymentrow.StatusCharging {
				return nil
			}
			if err := s.flag(ctx, tx, p, paymentrow.AttentionLongSession, fmt.Sprintf("session %s still open %s after it started", p.Session.ID, s.cfg.MaxSessionAge)); err != nil {
				return err
			}
		default:
			return nil
		}
		return s.save(ctx, tx, p)
	})
}

// retryDelay is the backoff of the module's jobs: Config.RetryBase
// doubling per attempt, at most an hour, with jitter.
func (s *Service) retryDelay(attempt int) time.Duration {
	if s.cfg.RetryBase <= 0 {
		return jobs.BackoffDelay(attempt)
	}
	d := s.cfg.RetryBase << min(max(attempt-1, 0), 20)
	return jobs.Jitter(min(d, time.Hour), 0.2)
}

func ptr[T any](v T) *T { return &v }

func displayText(m []ocpi.DisplayText) string {
	var parts []string
	for _, t := range m {
		if t.Text != "" {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}
