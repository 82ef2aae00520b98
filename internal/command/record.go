package command

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Record is a command with its lifecycle, as the admin API shows it.
type Record struct {
	ID        string `json:"id"`
	Module    string `json:"module"`
	Command   string `json:"command"`
	State     string `json:"state"`
	Requester struct {
		PlatformID  int64  `json:"platform_id"`
		CountryCode string `json:"country_code"`
		PartyID     string `json:"party_id"`
		ResponseURL string `json:"response_url,omitempty"`
		Hook        string `json:"hook,omitempty"`
	} `json:"requester"`
	CPO struct {
		CountryCode string `json:"country_code,omitempty"`
		PartyID     string `json:"party_id,omitempty"`
	} `json:"cpo"`
	LocationID             string          `json:"location_id,omitempty"`
	EVSEUID                string          `json:"evse_uid,omitempty"`
	ConnectorID            string          `json:"connector_id,omitempty"`
	SessionID              string          `json:"session_id,omitempty"`
	ReservationID          string          `json:"reservation_id,omitempty"`
	AuthorizationReference string          `json:"authorization_reference,omitempty"`
	Request                json.RawMessage `json:"request"`
	Forwarded              json.RawMessage `json:"forwarded,omitempty"`
	Response               *Response       `json:"response,omitempty"`
	Deadline               *ocpi.DateTime  `json:"deadline,omitempty"`
	Result                 string          `json:"result,omitempty"`
	Error                  string          `json:"error,omitempty"`
	CorrelationID          string          `json:"correlation_id,omitempty"`
	CreatedAt              ocpi.DateTime   `json:"created_at"`
	UpdatedAt              ocpi.DateTime   `json:"updated_at"`
	// Results lists every result received or made, oldest first (Get only).
	// Result above is the last one relayed.
	Results []ResultRecord `json:"results,omitempty"`
}

// Response is the CPO's synchronous answer.
type Response struct {
	HTTPStatus     int             `json:"http_status"`
	StatusCode     int             `json:"status_code"`
	Body           json.RawMessage `json:"body,omitempty"`
	Result         string          `json:"result,omitempty"`
	TimeoutSeconds int             `json:"timeout,omitempty"`
}

// ResultRecord is one result and its relay.
type ResultRecord struct {
	ID            int64           `json:"id"`
	Source        string          `json:"source"` // cpo, or hub (TIMEOUT)
	Result        string          `json:"result"`
	Body          json.RawMessage `json:"body"`
	Relay         string          `json:"relay"`
	RelayAttempts int             `json:"relay_attempts"`
	RelayError    string          `json:"relay_error,omitempty"`
	ReceivedAt    ocpi.DateTime   `json:"received_at"`
	RelayedAt     *ocpi.DateTime  `json:"relayed_at,omitempty"`
}

const recordColumns = `id, module, command, state, requester_platform_id, requester_country_code, requester_party_id, response_url,
	hook, cpo_country_code, cpo_party_id, location_id, evse_uid, connector_id, session_id, reservation_id, authorization_reference,
	request, forwarded, response_http, response_status, response, response_result, timeout_seconds, deadline, result, error,
	correlation_id, created_at, updated_at`

func scanRecord(row store.Row) (*Record, error) {
	var r Record
	var request, forwarded, response []byte
	var httpStatus, status, timeout int
	var result string
	var deadline, created, updated int64
	err := row.Scan(&r.ID, &r.Module, &r.Command, &r.State, &r.Requester.PlatformID, &r.Requester.CountryCode, &r.Requester.PartyID,
		&r.Requester.ResponseURL, &r.Requester.Hook, &r.CPO.CountryCode, &r.CPO.PartyID, &r.LocationID, &r.EVSEUID, &r.ConnectorID,
		&r.SessionID, &r.ReservationID, &r.AuthorizationReference, &request, &forwarded, &httpStatus, &status, &response, &result,
		&timeout, &deadline, &r.Result, &r.Error, &r.CorrelationID, &created, &updated)
	if errors.Is(err, store.ErrNoRows) {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "unknown command"}
	}
	if err != nil {
		return nil, err
	}
	r.Request = request
	if len(forwarded) > 0 {
		r.Forwarded = forwarded
	}
	if httpStatus != 0 {
		r.Response = &Response{HTTPStatus: httpStatus, StatusCode: status, Result: result, TimeoutSeconds: timeout}
		if len(response) > 0 {
			r.Response.Body = response
		}
	}
	if deadline != 0 {
		d := ocpi.FromMicros(deadline)
		r.Deadline = &d
	}
	r.CreatedAt, r.UpdatedAt = ocpi.FromMicros(created), ocpi.FromMicros(updated)
	return &r, nil
}

// Get returns a command with all its results.
func (s *Service) Get(ctx context.Context, id string) (*Record, error) {
	r, err := scanRecord(s.db.ReadIn(ctx).QueryRow(ctx, "SELECT "+recordColumns+" FROM commands WHERE id = $1", id))
	if ocpi.IsNotFound(err) {
		return nil, errUnknown(id)
	}
	if err != nil {
		return nil, err
	}
	r.Results, err = s.results(ctx, s.db.ReadIn(ctx), id)
	return r, err
}

func (s *Service) results(ctx context.Context, q store.Querier, id string) ([]ResultRecord, error) {
	return store.QueryAll(ctx, q, scanResult, `SELECT pk, source, result, body, relay, relay_attempts, relay_error, received_at, relayed_at
		FROM command_results WHERE command_id = $1 ORDER BY pk`, id)
}

func scanResult(row store.Row) (ResultRecord, error) {
	var rr ResultRecord
	var body []byte
	var received, relayed int64
	if err := row.Scan(&rr.ID, &rr.Source, &rr.Result, &body, &rr.Relay, &rr.RelayAttempts, &rr.RelayError, &received, &relayed); err != nil {
		return rr, err
	}
	rr.Body = body
	rr.ReceivedAt = ocpi.FromMicros(received)
	if relayed != 0 {
		t := ocpi.FromMicros(relayed)
		rr.RelayedAt = &t
	}
	return rr, nil
}

// ListFilter selects commands in List.
type ListFilter struct {
	State   string
	Command string
	Module  string
	// PlatformID selects one requester platform (0: all).
	PlatformID             int64
	AuthorizationReference string
	Limit, Offset          int
}

// List returns commands, newest first, and how many match.
func (s *Service) List(ctx context.Context, f ListFilter) ([]*Record, int64, error) {
	var where []string
	var args store.Args
	add := func(col string, v any) {
		where = append(where, col+" = "+args.Add(v))
	}
	if f.State != "" {
		add("state", f.State)
	}
	if f.Command != "" {
		add("command", f.Command)
	}
	if f.Module != "" {
		add("module", f.Module)
	}
	if f.PlatformID != 0 {
		add("requester_platform_id", f.PlatformID)
	}
	if f.AuthorizationReference != "" {
		add("authorization_reference", f.AuthorizationReference)
	}
	limit := f.Limit
	if limit <= 0 || limit > 100 {
		limit = 50
	}
	out, total, err := store.CountedPage(ctx, s.db.Read(), recordColumns, "commands", store.Where(where), "created_at DESC, id DESC",
		limit, f.Offset, args, scanRecord)
	if err != nil {
		return nil, 0, err
	}
	if out == nil {
		out = []*Record{}
	}
	return out, total, nil
}
