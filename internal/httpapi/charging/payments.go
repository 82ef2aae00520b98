package charging

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/payment"
)

// paymentsActor describes the caller of a payments route for the payment
// service: its parties, the party it acts for (OCPI-from) and addresses
// (OCPI-to, unless that is the hub), and the version of the URL.
func (s *handlers) paymentsActor(r *http.Request) payment.Actor {
	c := party.CallerFrom(r.Context())
	a := payment.Actor{PlatformID: c.PlatformID, Parties: c.Roles, Version: kit.VersionOf(r), CorrelationID: kit.CorrelationID(r.Context()),
		As: ocpiclient.Party{CountryCode: r.Header.Get("OCPI-from-country-code"), PartyID: r.Header.Get("OCPI-from-party-id")}}
	if to, ok := kit.RoutingTo(r); ok && (s.Hub == nil || !s.LocalTo(r, to.CountryCode, to.PartyID)) {
		a.To = to
	}
	return a
}

// handlePaymentTerminals serves GET payments/terminals: the terminals the
// caller may see (a PTP its own, a CPO its own and the unclaimed ones),
// paged, with date_from and date_to.
func (s *handlers) handlePaymentTerminals(w http.ResponseWriter, r *http.Request) error {
	return s.ListPageRaw(w, r, func(req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		return s.cfg.Payments.ListTerminals(r.Context(), s.paymentsActor(r), req)
	})
}

// handlePaymentTerminalPost serves POST payments/terminals[/{terminal_id}]:
// a PTP creates (or replaces) a terminal.
func (s *handlers) handlePaymentTerminalPost(w http.ResponseWriter, r *http.Request) error {
	return s.paymentsStore(w, r, func(ctx context.Context, a payment.Actor, raw []byte) (bool, error) {
		return s.cfg.Payments.PostTerminal(ctx, a, r.PathValue("terminal_id"), raw)
	})
}

// handlePaymentTerminal serves GET, PUT and PATCH of
// payments/terminals/{terminal_id}: a PTP merges into its terminal, a CPO
// changes its assignment.
func (s *handlers) handlePaymentTerminal(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("terminal_id")
	if r.Method == http.MethodGet {
		body, err := s.cfg.Payments.GetTerminal(r.Context(), s.paymentsActor(r), id)
		if err != nil {
			return err
		}
		return s.OK(w, body)
	}
	return s.paymentsStore(w, r, func(ctx context.Context, a payment.Actor, raw []byte) (bool, error) {
		return s.cfg.Payments.UpdateTerminal(ctx, a, id, r.Method, raw)
	})
}

// handlePaymentActivate serves POST payments/terminals/activate: a CPO asks
// a PTP to activate a terminal; the PTP's answer comes back as it came.
func (s *handlers) handlePaymentActivate(w http.ResponseWriter, r *http.Request) error {
	raw, err := kit.ReadBody(r)
	if err != nil {
		return err
	}
	out, err := s.cfg.Payments.Activate(r.Context(), s.paymentsActor(r), raw)
	if err != nil {
		return err
	}
	writeForwarded(w, out)
	return nil
}

// handlePaymentDeactivate serves POST
// payments/terminals/{terminal_id}/deactivate: a CPO asks the terminal's
// PTP to deactivate it (relayed through the outbox).
func (s *handlers) handlePaymentDeactivate(w http.ResponseWriter, r *http.Request) error {
	if err := s.cfg.Payments.Deactivate(r.Context(), s.paymentsActor(r), r.PathValue("terminal_id")); err != nil {
		return err
	}
	return s.OK(w, nil)
}

// handlePaymentAdviceList serves GET payments/financial-advice-confirmations:
// a PTP's own confirmations, or those of a CPO's payments, paged, with prices
// in the shape of the URL's version.
func (s *handlers) handlePaymentAdviceList(w http.ResponseWriter, r *http.Request) error {
	return s.ListPageRaw(w, r, func(req ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
		return s.cfg.Payments.ListAdvice(r.Context(), s.paymentsActor(r), req)
	})
}

// handlePaymentAdvicePost serves POST payments/financial-advice-confirmations:
// a PTP confirms what it captured.
func (s *handlers) handlePaymentAdvicePost(w http.ResponseWriter, r *http.Request) error {
	return s.paymentsStore(w, r, s.cfg.Payments.Confirm)
}

// paymentsStore hands the request's body to write, on behalf of the caller,
// and answers 201 when write created the object, 200 when it replaced or
// changed it.
func (s *handlers) paymentsStore(w http.ResponseWriter, r *http.Request, write func(context.Context, payment.Actor, []byte) (bool, error)) error {
	raw, err := kit.ReadBody(r)
	if err != nil {
		return err
	}
	created, err := write(r.Context(), s.paymentsActor(r), raw)
	if err != nil {
		return err
	}
	return s.Stored(w, created)
}

// handlePaymentAdvice serves GET
// payments/financial-advice-confirmations/{financial_advice_confirmation_id}.
func (s *handlers) handlePaymentAdvice(w http.ResponseWriter, r *http.Request) error {
	body, err := s.cfg.Payments.GetAdvice(r.Context(), s.paymentsActor(r), r.PathValue("financial_advice_confirmation_id"))
	if err != nil {
		return err
	}
	return s.OK(w, body)
}

// commandRequester returns the party a command acts for: an eMSP, or a PTP
// (the Direct Payment flow); OCPI-from picks between a platform's two.
func commandRequester(r *http.Request) (party.PartyRef, error) {
	c := party.CallerFrom(r.Context())
	cc, pid := r.Header.Get("OCPI-from-country-code"), r.Header.Get("OCPI-from-party-id")
	if cc != "" && c.Owns(party.RolePTP, cc, pid) && !c.Owns(party.RoleEMSP, cc, pid) {
		return kit.CallerParty(r, party.RolePTP)
	}
	if p, err := kit.CallerParty(r, party.RoleEMSP); err == nil {
		return p, nil
	}
	if p, err := kit.CallerParty(r, party.RolePTP); err == nil {
		return p, nil
	}
	return party.PartyRef{}, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "commands are sent by eMSPs and PTPs; your credentials name neither role"}
}

// startPayment relays a PTP's START_SESSION through the payment service,
// which holds its authorization_reference for the payment.
func (s *handlers) startPayment(w http.ResponseWriter, r *http.Request, req command.Request) error {
	s.fromCaller(r, &req)
	var out *command.Outcome
	err := s.cfg.Payments.StartSession(r.Context(), s.paymentsActor(r), req.Body, func(ctx context.Context) (payment.Submitted, error) {
		o, err := s.cfg.Commands.Submit(ctx, req)
		out = o
		var sub payment.Submitted
		if o == nil {
			return sub, err
		}
		sub.CommandID, sub.Refused = o.ID, o.Local != nil
		if o.ID != "" {
			if rec, gerr := s.cfg.Commands.Get(ctx, o.ID); gerr == nil {
				sub.CPO = ocpiclient.Party{CountryCode: rec.CPO.CountryCode, PartyID: rec.CPO.PartyID}
			}
		}
		return sub, err
	})
	if err != nil {
		return err
	}
	return s.answer(w, r, out)
}

// handleAdminPayment serves GET /admin/payments/{authorization_reference}:
// the payment's chain, terminal → command → session → CDR → confirmations.
func (s *handlers) handleAdminPayment(w http.ResponseWriter, r *http.Request) error {
	return kit.ByPath(s.Kit, w, r, "authorization_reference", s.cfg.Payments.Chain)
}

// handleAdminFlagged serves GET /admin/financial-advice/flagged: the
// confirmations that need the operator, most recent first; limit and offset
// page them (X-Total-Count).
func (s *handlers) handleAdminFlagged(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var limit, offset int
	for name, dst := range map[string]*int{"limit": &limit, "offset": &offset} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return ocpi.Invalid(name, "must be a non-negative integer")
			}
			*dst = n
		}
	}
	list, total, err := s.cfg.Payments.Flagged(r.Context(), limit, offset)
	if err != nil {
		return err
	}
	w.Header().Set("X-Total-Count", strconv.FormatInt(total, 10))
	return s.OK(w, list)
}

// resolveRequest is the body of POST /admin/financial-advice/{id}/resolve.
type resolveRequest struct {
	Resolution string `json:"resolution"`
}

// handleAdminResolve serves POST /admin/financial-advice/{record_id}/resolve:
// the operator dealt with a flagged confirmation.
func (s *handlers) handleAdminResolve(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("record_id"), 10, 64)
	if err != nil || id <= 0 {
		return ocpi.Invalid("record_id", "must be a positive integer")
	}
	var in resolveRequest
	if err := kit.Decode(r, &in); err != nil {
		return err
	}
	a, err := s.cfg.Payments.Resolve(r.Context(), id, in.Resolution)
	if err != nil {
		return err
	}
	return s.OK(w, a)
}
