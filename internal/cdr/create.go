package cdr

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/session"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Change is who posts a CDR and how it is traced.
type Change struct {
	// CPOs are the caller's CPO parties: the CDR must be one of theirs.
	CPOs          []party.PartyRef
	CorrelationID string
	// Sender is the platform that sent the CDR (0: unknown): a CDR is
	// never routed back to it (a peer hub's own eMSP).
	Sender int64
}

// Result says what Create did.
type Result struct {
	Ref Ref
	// Created is false for a repeat of a stored CDR.
	Created bool
}

// Create stores a CDR a CPO posted and routes it to the eMSP that owns its
// token. A repeat of a stored CDR with the same content is a success that
// changes nothing; with different content and an older last_updated it is an
// ocpi.StaleError (a late copy of a CDR the CPO since replaced: answered
// 1000, changes nothing); with different content otherwise it is EINVALID
// naming the first field that differs (CDRs are immutable).
func (s *Service) Create(ctx context.Context, ch Change, raw []byte) (Result, error) {
	var d ocpi.CDR
	if err := ocpi.DecodeValid(raw, &d); err != nil {
		return Result{}, err
	}
	r := Ref{ocpi.Key(d.CountryCode), ocpi.Key(d.PartyID), d.ID}
	if !ownedBy(ch.CPOs, r) {
		return Result{}, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "no CPO " + r.CountryCode + "/" + r.PartyID + " is registered with your credentials"}
	}
	body, err := ocpi.Canonical(raw, &d)
	if err != nil {
		return Result{}, err
	}
	res := Result{Ref: r}
	// What the CDR is checked and priced against, read together (one round
	// trip on PostgreSQL): a stored copy, its session, its location.
	rs := s.db.Reads()
	var stored struct {
		hash  string
		body  []byte
		found bool
	}
	rs.QueryRow(func(row store.Row) error {
		err := row.Scan(&stored.hash, &stored.body)
		if errors.Is(err, store.ErrNoRows) {
			return nil
		}
		stored.found = err == nil
		return err
	}, "SELECT body_hash, body FROM cdrs WHERE country_code = $1 AND party_id = $2 AND id = $3", r.args()...)
	var sess session.Cost
	if d.SessionID != "" && s.sessions != nil {
		s.sessions.CostWith(rs, session.Ref{CountryCode: r.CountryCode, PartyID: r.PartyID, ID: d.SessionID}, &sess)
	}
	var loc locationRead
	if priced(&d) {
		s.locationWith(rs, &d, &loc)
	}
	if err := rs.Run(ctx); err != nil {
		return res, err
	}
	// Stored CDRs are never updated, so a stored copy decides without a
	// lock: the same is a repeat, an older different one stale, a newer
	// one a conflict. A copy stored after this read (the same CDR posted
	// twice at once) makes the insert below fail on the key, and the CDR
	// is checked again.
	if stored.found {
		if stored.hash == hash(body) {
			return res, nil
		}
		if err := ocpi.CheckFresh(Module, "CDR "+r.String(), ocpi.LastUpdatedOf(stored.body), d.LastUpdated); err != nil {
			return res, err
		}
		return res, conflict(r, stored.body, body)
	}
	owner := ocpiclient.Party{CountryCode: ocpi.Key(d.CdrToken.CountryCode), PartyID: ocpi.Key(d.CdrToken.PartyID)}
	route, err := s.receiver(ctx, owner)
	if err != nil {
		return res, err
	}
	if route == ch.Sender {
		route = 0
	}
	price := s.priceCDR(ctx, &d, &loc)
	err = s.db.InShared(ctx, func(ctx context.Context, tx *store.Tx) error {
		res.Created = true
		costCheck := s.compareCost(ctx, r, &d, &sess)
		// Sent with the next statement (ExecLater); a concurrent POST of
		// the same CDR fails this write there, with the same unique
		// violation.
		if err := tx.ExecLater(ctx, `INSERT INTO cdrs (country_code, party_id, id, token_country_code, token_party_id, session_id,
			session_known, authorization_reference, credit, credit_reference_id, body_hash, cost_check, created_at, last_updated, body,
			price_status, hub_total_cost, cost_difference, price_note)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
			r.CountryCode, r.PartyID, ocpi.Key(r.ID), owner.CountryCode, owner.PartyID, ocpi.Key(d.SessionID), sess.Known,
			d.AuthorizationReference, d.IsCredit(), ocpi.Key(d.CreditReferenceID), hash(body), costCheck,
			s.clock.Now().UnixMicro(), d.LastUpdated.Micros(), string(body),
			price.Status, priceJSON(price.Hub), priceJSON(price.Difference), truncate(price.Note, 500)); err != nil {
			return err
		}
		st := &Stored{CountryCode: r.CountryCode, PartyID: r.PartyID, ID: d.ID, Owner: owner, SessionKnown: sess.Known,
			CostCheck: costCheck, Price: price, CDR: d, Body: body}
		if err := s.emit(ctx, tx, st); err != nil {
			return err
		}
		if err := s.recordPrice(ctx, tx, st); err != nil {
			return err
		}
		if route != 0 {
			if err := s.hub.Enqueue(ctx, tx, route, hub.Push{Module: Module, ObjectKey: r.key(), Method: http.MethodPost, Body: body,
				Full: true, First: true, To: owner, From: ocpiclient.Party{CountryCode: r.CountryCode, PartyID: r.PartyID},
				CorrelationID: ch.CorrelationID}); err != nil {
				return err
			}
		}
		for _, fn := range s.observers {
			if err := fn(ctx, tx, st); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && store.IsUniqueViolation(err) {
		// A concurrent POST of the same CDR stored it first: answer as a
		// repeat of it.
		return s.Create(ctx, ch, raw)
	}
	if err == nil && res.Created && d.IsCredit() {
		if _, err := s.Find(ctx, Ref{r.CountryCode, r.PartyID, d.CreditReferenceID}); ocpi.IsNotFound(err) {
			s.logger.InfoContext(ctx, "credit CDR for a CDR the hub never saw", "cdr", r.String(), "credit_reference_id", d.CreditReferenceID)
		}
	}
	return res, err
}

func ownedBy(cpos []party.PartyRef, r Ref) bool {
	for _, p := range cpos {
		if p.Role == party.RoleCPO && p.Matches(r.CountryCode, r.PartyID) {
			return true
		}
	}
	return false
}

// receiver returns the platform a CDR of owner is routed to (0: none; the
// token is ours, or its eMSP is not connected or has no cdrs RECEIVER and
// pulls instead).
func (s *Service) receiver(ctx context.Context, owner ocpiclient.Party) (int64, error) {
	if s.hub == nil || s.parties == nil {
		return 0, nil
	}
	rt := routing.New(s.parties)
	if rt.IsOwnParty(party.RoleEMSP, owner) {
		return 0, nil
	}
	p, found, err := rt.Enqueueable(ctx, party.RoleEMSP, owner, Module, ocpi.InterfaceReceiver)
	if err != nil || !found {
		return 0, err
	}
	return p.ID, nil
}

// conflict describes how a repeated CDR differs from the stored one.
func conflict(r Ref, oldBody, newBody []byte) error {
	field := "body"
	var a, b map[string]json.RawMessage
	if json.Unmarshal(oldBody, &a) == nil && json.Unmarshal(newBody, &b) == nil {
		keys := make([]string, 0, len(a)+len(b))
		for k := range a {
			keys = append(keys, k)
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !jsonEqual(a[k], b[k]) {
				field = k
				break
			}
		}
	}
	return &ocpi.Error{Code: ocpi.EINVALID, Field: field,
		Issue:   "differs from the stored CDR " + r.ID + "; CDRs are immutable: send a credit CDR and a new CDR instead",
		Message: "CDR " + r.String() + " was already received with different content (first difference: " + field + ")"}
}

// jsonEqual compares two JSON values semantically (PostgreSQL reorders the
// keys of stored JSON).
func jsonEqual(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	x, err1 := ocpi.ParseObject(append([]byte(`{"v":`), append(a, '}')...))
	y, err2 := ocpi.ParseObject(append([]byte(`{"v":`), append(b, '}')...))
	if err1 != nil || err2 != nil {
		return string(a) == string(b)
	}
	bx, _ := ocpi.MarshalObject(x)
	by, _ := ocpi.MarshalObject(y)
	return string(bx) == string(by)
}

// compareCost compares a CDR's total_cost with its session's last one.
func (s *Service) compareCost(ctx context.Context, r Ref, d *ocpi.CDR, sess *session.Cost) string {
	if !sess.Known || sess.TotalCost == nil || d.TotalCost == nil || d.IsCredit() {
		return ""
	}
	a, b := d.TotalCost, sess.TotalCost
	same := a.ExclVAT.Cmp(b.ExclVAT) == 0 && (a.InclVAT == nil || b.InclVAT == nil || a.InclVAT.Cmp(*b.InclVAT) == 0)
	if same {
		return "match"
	}
	s.mismatch.Inc()
	s.logger.WarnContext(ctx, "CDR cost differs from its session's", "cdr", r.String(), "session_id", d.SessionID,
		"cdr_total_cost", a.ExclVAT.String(), "session_total_cost", b.ExclVAT.String(), "currency", d.Currency)
	return "mismatch"
}

// emit records cdr.created.
func (s *Service) emit(ctx context.Context, tx *store.Tx, st *Stored) error {
	d := &st.CDR
	data := map[string]any{
		"cdr_id": d.ID, "country_code": st.CountryCode, "party_id": st.PartyID, "session_id": d.SessionID,
		"location_id": d.CdrLocation.ID, "evse_uid": d.CdrLocation.EVSEUID, "evse_id": d.CdrLocation.EVSEID,
		"start_date_time": d.StartDateTime, "end_date_time": d.EndDateTime, "timestamp": d.EndDateTime,
		"total_cost": d.TotalCost, "currency": d.Currency, "total_energy": d.TotalEnergy, "total_time": d.TotalTime,
		"credit": d.IsCredit(),
		"token": map[string]any{"country_code": st.Owner.CountryCode, "party_id": st.Owner.PartyID, "uid": d.CdrToken.UID,
			"type": d.CdrToken.Type},
	}
	if d.AuthorizationReference != "" {
		data["authorization_reference"] = d.AuthorizationReference
	}
	if d.IsCredit() {
		data["credit_reference_id"] = d.CreditReferenceID
	}
	if st.CostCheck != "" {
		data["cost_check"] = st.CostCheck
	}
	return s.events.Emit(ctx, tx, event.Event{Name: event.CDRCreated, Data: data, Parties: []event.Party{
		{Role: string(party.RoleCPO), CountryCode: st.CountryCode, PartyID: st.PartyID},
		{Role: string(party.RoleEMSP), CountryCode: st.Owner.CountryCode, PartyID: st.Owner.PartyID},
	}})
}
