package pgsim

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// routes is the simulated PG's HTTP API, its driver endpoints and its
// checkout page.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/orders", s.handle(APICreateOrder, s.createOrder))
	mux.HandleFunc("GET /v1/orders/{id}", s.handle(APIFetchOrder, s.fetchOrder))
	mux.HandleFunc("GET /v1/orders/{id}/payments", s.handle(APIOrderPayments, s.orderPayments))
	mux.HandleFunc("POST /v1/payments/qr_codes", s.handle(APICreateQR, s.createQR))
	mux.HandleFunc("GET /v1/payments/{id}", s.handle(APIFetchPayment, s.fetchPayment))
	mux.HandleFunc("POST /v1/payments/{id}/refund", s.handle(APIRefund, s.createRefund))
	// GET /v1/payments/qr_codes/{id} and GET /v1/payments/{id}/refunds
	// overlap as patterns; one route tells them apart.
	fetchQR, paymentRefunds := s.handle(APIFetchQR, s.fetchQR), s.handle(APIPaymentRefund, s.paymentRefunds)
	mux.HandleFunc("GET /v1/payments/{id}/{sub}", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.PathValue("id") == "qr_codes":
			r.SetPathValue("id", r.PathValue("sub"))
			fetchQR(w, r)
		case r.PathValue("sub") == "refunds":
			paymentRefunds(w, r)
		default:
			writeError(w, http.StatusNotFound, "BAD_REQUEST_ERROR", "The requested URL was not found on the simulated gateway", "")
		}
	})
	mux.HandleFunc("GET /v1/refunds/{id}", s.handle(APIFetchRefund, s.fetchRefund))
	mux.HandleFunc("POST /sim/orders/{id}/pay", s.driverPay)
	mux.HandleFunc("GET /sim/checkout/{id}", s.checkoutPage)
	mux.HandleFunc("POST /sim/checkout/{id}", s.checkoutPay)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "BAD_REQUEST_ERROR", "The requested URL was not found on the simulated gateway", "")
	})
	return mux
}

// apiError is an answer with the PG's error body.
type apiError struct {
	status            int
	code, desc, field string
}

func (e *apiError) Error() string { return e.desc }

func badRequest(field, format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "BAD_REQUEST_ERROR", fmt.Sprintf(format, args...), field}
}

func notFound() *apiError { return badRequest("id", "The id does not exist") }

// handle authenticates a call, counts it, applies injected faults before or
// after the work, and writes the entity or the error.
func (s *Server) handle(api API, fn func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(id), []byte(s.opts.KeyID)) != 1 ||
			subtle.ConstantTimeCompare([]byte(secret), []byte(s.opts.KeySecret)) != 1 {
			writeError(w, http.StatusUnauthorized, "BAD_REQUEST_ERROR", "Authentication failed", "")
			return
		}
		f, faulty := s.takeFault(api)
		if faulty && !f.AfterCommit {
			s.applyFault(w, r, f)
			return
		}
		v, err := fn(r)
		if faulty {
			s.applyFault(w, r, f)
			return
		}
		var ae *apiError
		switch {
		case errors.As(err, &ae):
			writeError(w, ae.status, ae.code, ae.desc, ae.field)
		case err != nil:
			writeError(w, http.StatusInternalServerError, "SERVER_ERROR", err.Error(), "")
		default:
			writeJSON(w, http.StatusOK, v)
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"SERVER_ERROR","description":"encoding failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, status int, code, desc, field string) {
	e := map[string]any{"code": code, "description": desc, "source": "NA", "step": "NA", "reason": "NA", "metadata": map[string]any{}}
	if status == http.StatusBadRequest {
		e["source"], e["step"], e["reason"] = "business", "payment_initiation", "input_validation_failed"
	}
	if field != "" {
		e["field"] = field
	}
	writeJSON(w, status, map[string]any{"error": e})
}

// decode reads a JSON body strictly: like the PG, a field it does not know
// is refused.
func decode(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return badRequest("", "The request body could not be read")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return badRequest(te.Field, "The %s field has the wrong type", te.Field)
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return badRequest(f, "%s is/are not required and should not be sent", f)
		}
		return badRequest("", "The request body is not valid JSON")
	}
	return nil
}

func checkNotes(n map[string]string) error {
	if len(n) > 15 {
		return badRequest("notes", "The notes may have at most 15 keys")
	}
	for k, v := range n {
		if len(v) > 256 {
			return badRequest("notes."+k, "Each note may have at most 256 characters")
		}
	}
	return nil
}

// notesJSON renders notes as the PG does: an empty array when there are
// none.
func notesJSON(n map[string]string) any {
	if len(n) == 0 {
		return []any{}
	}
	return n
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (o *order) json() map[string]any {
	return map[string]any{
		"id": o.ID, "entity": "order", "amount": o.Amount, "amount_paid": o.AmountPaid, "amount_due": o.Amount - o.AmountPaid,
		"currency": o.Currency, "receipt": nullable(o.Receipt), "offer_id": nil, "status": o.Status, "attempts": o.Attempts,
		"notes": notesJSON(o.Notes), "created_at": o.CreatedAt,
	}
}

func (p *payment) json() map[string]any {
	refundStatus := any(nil)
	if p.AmountRefunded > 0 {
		refundStatus = "partial"
		if p.AmountRefunded == p.Amount {
			refundStatus = "full"
		}
	}
	return map[string]any{
		"id": p.ID, "entity": "payment", "amount": p.Amount, "currency": p.Currency, "status": p.Status,
		"order_id": nullable(p.OrderID), "invoice_id": nil, "international": false, "method": "upi",
		"amount_refunded": p.AmountRefunded, "refund_status": refundStatus, "captured": p.Captured,
		"description": nil, "card_id": nil, "bank": nil, "wallet": nil, "vpa": p.VPA,
		"email": "driver@example.com", "contact": "+919000000000", "notes": notesJSON(p.Notes),
		"fee": nil, "tax": nil, "error_code": nullable(p.ErrorCode), "error_description": nullable(p.ErrorDesc),
		"error_source": nil, "error_step": nil, "error_reason": nullable(p.ErrorReason),
		"acquirer_data": map[string]any{"rrn": nullable(p.RRN), "upi_transaction_id": nullable(p.RRN)},
		"upi":           map[string]any{"vpa": p.VPA, "payer_account_type": "bank_account"},
		"created_at":    p.CreatedAt,
	}
}

func (r *refund) json() map[string]any {
	return map[string]any{
		"id": r.ID, "entity": "refund", "amount": r.Amount, "currency": r.Currency, "payment_id": r.PaymentID,
		"notes": notesJSON(r.Notes), "receipt": nullable(r.Receipt), "acquirer_data": map[string]any{"arn": nullable(r.ARN)},
		"created_at": r.CreatedAt, "batch_id": nil, "status": r.Status, "speed_processed": "normal", "speed_requested": "normal",
	}
}

func (s *Server) qrJSON(q *qrCode) map[string]any {
	return map[string]any{
		"id": q.ID, "entity": "qr_code", "created_at": q.CreatedAt, "name": q.Name, "usage": "single_use", "type": "upi_qr",
		"image_url": s.URL() + "/sim/checkout/" + q.ID, "image_content": s.intent(q),
		"payment_amount": q.Amount, "status": q.Status, "description": q.Description, "fixed_amount": true,
		"payments_amount_received": q.Received, "payments_count_received": q.Count,
		"notes": notesJSON(q.Notes), "customer_id": nil, "close_by": q.CloseBy,
	}
}

func list(items []map[string]any) map[string]any {
	if items == nil {
		items = []map[string]any{}
	}
	return map[string]any{"entity": "collection", "count": len(items), "items": items}
}
