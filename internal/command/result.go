package command

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// ResultRequest is a result a CPO posts to the hub's response_url.
type ResultRequest struct {
	Module  string
	Command string
	ID      string
	// CPOs are the caller's CPO parties: the command must have gone to one
	// of them.
	CPOs []party.PartyRef
	Body []byte
}

// Receive stores a result a CPO posted and, unless it comes too late or
// repeats what was relayed, enqueues its relay to the requester in the same
// transaction. A command of another CPO is not found (HTTP 404).
func (s *Service) Receive(ctx context.Context, rr ResultRequest) error {
	rec, err := scanRecord(s.db.Read().QueryRow(ctx, "SELECT "+recordColumns+" FROM commands WHERE id = $1", rr.ID))
	if ocpi.IsNotFound(err) || (err == nil && (rec.Module != rr.Module || rec.Command != rr.Command || !ownedBy(rr.CPOs, rec))) {
		return errUnknown(rr.ID)
	}
	if err != nil {
		return err
	}
	result, body, err := checkResult(rr.Module, rr.Command, rr.Body)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		cur, err := lockCommand(ctx, tx, rr.ID)
		if err != nil {
			return err
		}
		relay, why := decide(cur, result)
		if relay == RelaySkipped {
			s.logger.InfoContext(ctx, "command result recorded, not relayed", "command_id", cur.ID, "command", cur.Command,
				"result", result, "reason", why)
		}
		if err := s.addResult(ctx, tx, cur, "cpo", result, body, relay); err != nil {
			return err
		}
		if relay == RelayPending {
			// The command's result is the last one relayed (a reservation's
			// CANCELED_RESERVATION after its ACCEPTED).
			if _, err := tx.Exec(ctx, "UPDATE commands SET state = $1, result = $2, updated_at = $3 WHERE id = $4",
				StateCompleted, result, s.now(), cur.ID); err != nil {
				return err
			}
		}
		if cur.Module == ProfilesModule && cur.Command == ocpi.ProfileSet && result == "ACCEPTED" && relay == RelayPending {
			return s.rememberSetter(ctx, tx, cur)
		}
		return nil
	})
}

func ownedBy(cpos []party.PartyRef, r *Record) bool {
	for _, p := range cpos {
		if p.Role == party.RoleCPO && p.Matches(r.CPO.CountryCode, r.CPO.PartyID) {
			return true
		}
	}
	return false
}

// decide says whether a result is relayed: the first result of an open
// command is; after TIMEOUT, a rejection or a failure nothing is; after a
// relayed result only a reservation's CANCELED_RESERVATION is.
func decide(cur *Record, result string) (relay, why string) {
	switch {
	case isOpen(cur.State):
		return RelayPending, ""
	case cur.State == StateTimeout:
		return RelaySkipped, "late: the requester got TIMEOUT"
	case cur.State == StateCompleted && cur.Command == ocpi.CommandReserveNow && result == ocpi.CommandCanceled && cur.Result != result:
		return RelayPending, ""
	case cur.State == StateCompleted && cur.Result == result:
		return RelaySkipped, "repeat of the relayed result"
	case cur.State == StateCompleted:
		return RelaySkipped, "a result was relayed already (" + cur.Result + ")"
	}
	return RelaySkipped, "no result was expected (command " + cur.State + ")"
}

// checkResult validates a result body for its module and command.
func checkResult(module, command string, raw []byte) (string, []byte, error) {
	var result string
	var typed any
	switch {
	case module == Module:
		var r ocpi.CommandResult
		if err := ocpi.DecodeValid(raw, &r); err != nil {
			return "", nil, err
		}
		result, typed = r.Result, &r
	case command == ocpi.ProfileGet:
		var r ocpi.ActiveChargingProfileResult
		if err := ocpi.DecodeValid(raw, &r); err != nil {
			return "", nil, err
		}
		result, typed = r.Result, &r
	default:
		var r ocpi.ChargingProfileResult
		if err := ocpi.DecodeValid(raw, &r); err != nil {
			return "", nil, err
		}
		result, typed = r.Result, &r
	}
	body, err := ocpi.Canonical(raw, typed)
	return result, body, err
}

// addResult stores a result and, when it is to be relayed, its relay job
// and the command.result event.
func (s *Service) addResult(ctx context.Context, tx *store.Tx, cur *Record, source, result string, body []byte, relay string) error {
	var pk int64
	if err := tx.QueryRow(ctx, `INSERT INTO command_results (command_id, source, result, body, relay, received_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING pk`, cur.ID, source, result, string(body), relay, s.now()).Scan(&pk); err != nil {
		return err
	}
	if relay != RelayPending {
		return nil
	}
	if _, err := s.jobs.InsertTx(ctx, tx, RelayArgs{ResultID: pk}, &river.InsertOpts{Queue: jobs.QueuePush,
		MaxAttempts: s.cfg.RelayAttempts}); err != nil {
		return err
	}
	data := map[string]any{"command_id": cur.ID, "command": cur.Command, "module": cur.Module, "result": result,
		"timestamp": ocpi.FromMicros(s.now())}
	for k, v := range map[string]string{"location_id": cur.LocationID, "evse_uid": cur.EVSEUID, "connector_id": cur.ConnectorID,
		"session_id": cur.SessionID, "authorization_reference": cur.AuthorizationReference} {
		if v != "" {
			data[k] = v
		}
	}
	parties := []event.Party{{Role: string(party.RoleEMSP), CountryCode: cur.Requester.CountryCode, PartyID: cur.Requester.PartyID}}
	if cur.CPO.CountryCode != "" {
		parties = append(parties, event.Party{Role: string(party.RoleCPO), CountryCode: cur.CPO.CountryCode, PartyID: cur.CPO.PartyID})
	}
	return s.events.Emit(ctx, tx, event.Event{Name: event.CommandResult, Data: data, Parties: parties})
}

// RelayArgs is the job that delivers one result to its requester.
type RelayArgs struct {
	ResultID int64 `json:"result_id"`
}

// Kind implements river.JobArgs.
func (RelayArgs) Kind() string { return "command_relay" }

type relayWorker struct {
	river.WorkerDefaults[RelayArgs]
	s *Service
}

// NextRetry spaces the relay attempts by the configured backoff.
func (w *relayWorker) NextRetry(job *river.Job[RelayArgs]) time.Time {
	return job.AttemptedAt.Add(w.s.cfg.RelayBackoff(job.Attempt))
}

// Work delivers a pending result once: to the hook of one of our own
// commands, or to the requester's response_url. It is idempotent: a result
// no longer pending is left alone. The last failed attempt gives up and
// records it.
func (w *relayWorker) Work(ctx context.Context, job *river.Job[RelayArgs]) error {
	s := w.s
	var cmdID, relay string
	var body []byte
	err := s.db.Read().QueryRow(ctx, "SELECT command_id, relay, body FROM command_results WHERE pk = $1", job.Args.ResultID).
		Scan(&cmdID, &relay, &body)
	if err != nil {
		return err
	}
	if relay != RelayPending {
		return nil
	}
	cmd, err := scanRecord(s.db.Read().QueryRow(ctx, "SELECT "+recordColumns+" FROM commands WHERE id = $1", cmdID))
	if err != nil {
		return err
	}
	deliverErr := s.deliver(ctx, cmd, body)
	final := deliverErr == nil || job.Attempt >= job.MaxAttempts || isPermanent(deliverErr)
	state, msg := RelayDelivered, ""
	if deliverErr != nil {
		state, msg = RelayFailed, deliverErr.Error()
		if !final {
			state = RelayPending
		}
	}
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		relayedAt := int64(0)
		if state == RelayDelivered {
			relayedAt = s.now()
		}
		_, err := tx.Exec(ctx, `UPDATE command_results SET relay = $1, relay_attempts = relay_attempts + 1, relay_error = $2,
			relayed_at = $3 WHERE pk = $4 AND relay = $5`, state, truncate(msg, 500), relayedAt, job.Args.ResultID, RelayPending)
		return err
	})
	if err != nil {
		return err
	}
	switch {
	case deliverErr == nil:
		return nil
	case final:
		s.logger.ErrorContext(ctx, "gave up relaying a command result", "command_id", cmd.ID, "command", cmd.Command,
			"requester", cmd.Requester.CountryCode+"/"+cmd.Requester.PartyID, "attempts", job.Attempt, "error", deliverErr)
		return nil
	}
	s.logger.WarnContext(ctx, "relaying a command result failed; will retry", "command_id", cmd.ID, "attempt", job.Attempt, "error", deliverErr)
	return deliverErr
}

// permanentError marks a relay failure that retrying cannot fix.
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

func isPermanent(err error) bool {
	_, ok := err.(*permanentError)
	return ok
}

// deliver sends one result to the requester.
func (s *Service) deliver(ctx context.Context, cmd *Record, body []byte) error {
	if cmd.Requester.Hook != "" {
		fn, ok := s.hook(cmd.Requester.Hook)
		if !ok {
			return errNoHook
		}
		var res ocpi.CommandResult
		if err := json.Unmarshal(body, &res); err != nil {
			return &permanentError{"stored result is not a CommandResult: " + err.Error()}
		}
		return fn(ctx, HookResult{CommandID: cmd.ID, Command: cmd.Command, Result: res, SessionID: cmd.SessionID,
			LocationID: cmd.LocationID, AuthorizationReference: cmd.AuthorizationReference, Request: cmd.Request})
	}
	p, err := s.parties.Find(ctx, cmd.Requester.PlatformID)
	if ocpi.IsNotFound(err) || (err == nil && p.Status != party.StatusConnected) {
		return &permanentError{"the requesting platform is no longer connected"}
	}
	if err != nil {
		return err
	}
	auth, err := s.parties.Auth(p)
	if err != nil {
		return err
	}
	// A requester of another OCPI version gets the result in its form.
	m := hub.Message{PlatformID: p.ID, Party: party.Notation(cmd.Requester.CountryCode, cmd.Requester.PartyID), Module: cmd.Module,
		Interface: ocpi.InterfaceSender, Method: http.MethodPost, Body: body}
	if send, err := s.hub.Convert(ctx, p.Version, &m); err != nil || !send {
		return &permanentError{fmt.Sprintf("the result has no OCPI %s form (%v)", p.Version, err)}
	}
	body = m.Body
	resp, err := s.client.Do(ctx, ocpiclient.Request{Method: http.MethodPost, URL: cmd.Requester.ResponseURL, Body: body,
		Token: auth.Token, Base64: auth.Base64, MaxAttempts: 1, CorrelationID: cmd.CorrelationID,
		PlatformID: p.ID, Partner: p.Name, Module: cmd.Module,
		To:   ocpiclient.Party{CountryCode: cmd.Requester.CountryCode, PartyID: cmd.Requester.PartyID},
		From: ocpiclient.Party{CountryCode: cmd.CPO.CountryCode, PartyID: cmd.CPO.PartyID}})
	if err != nil {
		return err
	}
	switch {
	case resp.Envelope == nil:
		return fmt.Errorf("the requester answered HTTP %d without an OCPI envelope", resp.HTTPStatus)
	case resp.HTTPStatus < 300 && ocpi.IsSuccess(resp.Envelope.StatusCode):
		return nil
	case resp.Envelope.StatusCode >= 2000 && resp.Envelope.StatusCode < 3000 && resp.HTTPStatus != http.StatusUnauthorized &&
		resp.HTTPStatus != http.StatusTooManyRequests && resp.HTTPStatus < 500:
		return &permanentError{fmt.Sprintf("the requester refused the result: HTTP %d, status_code %d: %s", resp.HTTPStatus,
			resp.Envelope.StatusCode, resp.Envelope.StatusMessage)}
	}
	return fmt.Errorf("the requester answered HTTP %d, status_code %d", resp.HTTPStatus, resp.Envelope.StatusCode)
}
