package command

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ids"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Request is a command or charging profile request to relay.
type Request struct {
	// Module is Module or ProfilesModule; Command a CommandType or one of
	// ocpi.ProfileSet, ProfileGet, ProfileClear.
	Module  string
	Command string
	// PlatformID is the requesting platform (0: ocpihub itself); Parties
	// are its parties; From is the party it acts for (OCPI-from).
	PlatformID int64
	Parties    []party.PartyRef
	From       ocpiclient.Party
	// To is the CPO the requester addressed with OCPI-to-* (zero: found
	// from the location, session or reservation).
	To ocpiclient.Party
	// SessionID and Query are a charging profile request's URL parts.
	SessionID string
	Query     url.Values
	Body      []byte
	// Hook receives the results of ocpihub's own commands.
	Hook          string
	CorrelationID string
}

// Outcome is the synchronous answer to a request: the CPO's answer to pass
// back unchanged, or the hub's own.
type Outcome struct {
	// ID is the stored command's id ("" when nothing was stored).
	ID        string
	Forwarded *hub.Forwarded
	Local     *Local
}

// Local is an answer the hub gives itself: an envelope with a
// CommandResponse (or ChargingProfileResponse) as data, and the error that
// explains it when StatusCode is not 1000.
type Local struct {
	HTTPStatus int
	StatusCode int
	Data       any
	Err        *ocpi.Error
}

// target is what a request addresses, read from its body or URL.
type target struct {
	responseURL              string
	locationID, evse, conn   string
	sessionID, reservationID string
	authorizationReference   string
	method, suffix           string
	request                  []byte
}

// Submit validates a request, finds its CPO, stores it and forwards it with
// the hub's own response_url; it returns the answer for the requester.
func (s *Service) Submit(ctx context.Context, req Request) (*Outcome, error) {
	t, err := s.parse(req)
	if err != nil {
		return nil, err
	}
	cpo, local, err := s.routeTo(ctx, req, t)
	if err != nil {
		return nil, err
	}
	id := s.NewIDFunc()
	if local != nil {
		if err := s.storeLocal(ctx, req, t, id, cpo, local); err != nil {
			return nil, err
		}
		return &Outcome{ID: id, Local: local}, nil
	}
	ours := s.resultURL(req.Module, req.Command, id)
	fr := hub.ForwardRequest{From: req.From, To: cpo, Module: req.Module, Interface: ocpi.InterfaceReceiver, Method: t.method,
		Suffix: t.suffix, CorrelationID: req.CorrelationID}
	var forwarded []byte
	if t.method == http.MethodGet || t.method == http.MethodDelete {
		q := url.Values{}
		if d := req.Query.Get("duration"); d != "" {
			q.Set("duration", d)
		}
		q.Set("response_url", ours)
		fr.Query = q.Encode()
	} else {
		obj, err := ocpi.ParseObject(req.Body)
		if err != nil {
			return nil, err
		}
		obj["response_url"] = ours
		if forwarded, err = ocpi.MarshalObject(obj); err != nil {
			return nil, err
		}
		fr.Body = forwarded
	}
	// The deadline until the CPO's answer sets one: the sweep
	// (sweepTimeouts) closes a command the hub lost track of, a crash
	// between here and the answer included.
	err = s.db.InShared(ctx, func(ctx context.Context, tx *store.Tx) error {
		return s.insert(ctx, tx, req, t, id, cpo, StateForwarding, forwarded, s.deadlineAfter(s.cfg.DefaultTimeout))
	})
	if err != nil {
		return nil, err
	}
	fwd, ferr := s.hub.Forward(ctx, fr)
	if err := s.answered(context.WithoutCancel(ctx), req.Module, id, fwd, ferr); err != nil {
		s.logger.ErrorContext(ctx, "could not record a CPO's answer to a command", "command_id", id, "error", err)
	}
	if ferr != nil {
		return &Outcome{ID: id}, ferr
	}
	return &Outcome{ID: id, Forwarded: fwd}, nil
}

// insert stores a new command. It is queued (ExecLater): on PostgreSQL a
// relayed command's transaction is then one round trip, its BEGIN, the row
// and its COMMIT together.
func (s *Service) insert(ctx context.Context, tx *store.Tx, req Request, t *target, id string, cpo ocpiclient.Party, state string,
	forwarded []byte, deadline int64) error {
	now := s.now()
	var fw any
	if forwarded != nil {
		fw = string(forwarded)
	}
	responseURL := t.responseURL
	if req.Hook != "" {
		responseURL = ""
	}
	return tx.ExecLater(ctx, `INSERT INTO commands (id, module, command, state, requester_platform_id, requester_country_code,
		requester_party_id, response_url, hook, cpo_country_code, cpo_party_id, location_id, evse_uid, connector_id, session_id,
		reservation_id, authorization_reference, request, forwarded, deadline, correlation_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $22)`,
		id, req.Module, req.Command, state, req.PlatformID, ocpi.Key(req.From.CountryCode), ocpi.Key(req.From.PartyID), responseURL,
		req.Hook, ocpi.Key(cpo.CountryCode), ocpi.Key(cpo.PartyID), t.locationID, t.evse, t.conn, t.sessionID, t.reservationID,
		t.authorizationReference, string(t.request), fw, deadline, req.CorrelationID, now)
}

// storeLocal records a request the hub answered itself.
func (s *Service) storeLocal(ctx context.Context, req Request, t *target, id string, cpo ocpiclient.Party, l *Local) error {
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := s.insert(ctx, tx, req, t, id, cpo, StateRejected, nil, 0); err != nil {
			return err
		}
		data, _ := json.Marshal(l.Data)
		var answer struct {
			Result string `json:"result"`
		}
		_ = json.Unmarshal(data, &answer)
		result := answer.Result
		msg := ""
		if l.Err != nil {
			msg = l.Err.Message
		} else if r, ok := l.Data.(ocpi.CommandResponse); ok && len(r.Message) > 0 {
			msg = r.Message[0].Text
		}
		_, err := tx.Exec(ctx, `UPDATE commands SET response_http = $1, response_status = $2, response = $3, response_result = $4,
			error = $5 WHERE id = $6`, l.HTTPStatus, l.StatusCode, string(data), result, "answered by the hub: "+msg, id)
		return err
	})
}

// answered records the CPO's synchronous answer (or the failure to get
// one) and moves the command on. It is one statement written alone
// (store.DB.Write), not a second transaction around the request: the
// command's row decides, as the statement runs, whether its state moves (a
// result the CPO posted before its answer was recorded has moved it on
// already, and wins).
func (s *Service) answered(ctx context.Context, module, id string, fwd *hub.Forwarded, ferr error) error {
	now := s.now()
	var n int64
	var err error
	if ferr != nil {
		state := StateFailed
		if ocpi.ErrorCode(ferr) == ocpi.ETIMEOUT {
			// The CPO may have received it: its result is still relayed,
			// or TIMEOUT at the deadline.
			state = StateUnconfirmed
		}
		n, err = s.db.Write(ctx, `UPDATE commands SET state = CASE WHEN state = $1 THEN $2 ELSE state END, error = $3, updated_at = $4
			WHERE id = $5`, StateForwarding, state, truncate(ferr.Error(), 500), now, id)
	} else {
		var status int
		var result string
		var timeout *int
		var body any
		if env, err := ocpi.DecodeEnvelope(fwd.Body); err == nil {
			status = env.StatusCode
			var resp struct {
				Result  string `json:"result"`
				Timeout *int   `json:"timeout"`
			}
			if len(env.Data) > 0 && json.Unmarshal(env.Data, &resp) == nil {
				result, timeout = resp.Result, resp.Timeout
			}
		}
		if json.Valid(fwd.Body) {
			body = string(fwd.Body)
		}
		accepted := fwd.HTTPStatus < 300 && ocpi.IsSuccess(status) && (result == ocpi.CommandAccepted || result == "")
		state := StateRejected
		wait := s.cfg.DefaultTimeout
		timeoutSeconds := 0
		if timeout != nil {
			wait = time.Duration(*timeout) * time.Second
			timeoutSeconds = *timeout
		}
		// An accepted answer sets the deadline of a command still open
		// (forwarding becomes accepted); otherwise the stored one stays.
		deadline := "deadline"
		if accepted {
			state = StateAccepted
			deadline = "CASE WHEN state IN ($1, $10, $11) THEN $12 ELSE deadline END"
		}
		args := []any{StateForwarding, state, fwd.HTTPStatus, status, body, result, timeoutSeconds, now, id}
		if accepted {
			args = append(args, StateAccepted, StateUnconfirmed, s.deadlineAfter(wait))
		}
		n, err = s.db.Write(ctx, `UPDATE commands SET state = CASE WHEN state = $1 THEN $2 ELSE state END, response_http = $3,
			response_status = $4, response = $5, response_result = $6, timeout_seconds = $7, deadline = `+deadline+`, updated_at = $8
			WHERE id = $9`, args...)
	}
	if err == nil && n == 0 {
		return errUnknown(id)
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// newID makes a command id: a time-ordered UUID (ids.New). It is part of
// the URL the CPO posts the result to, so it must not be guessable: 62 of
// its bits are random, and only the CPO the command went to may post there.
func newID() string { return ids.New() }
