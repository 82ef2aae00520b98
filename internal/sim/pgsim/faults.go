package pgsim

import (
	"net/http"
	"strconv"
	"time"
)

// API names one operation of the simulated PG, for fault injection and call
// counts.
type API string

// The simulated operations.
const (
	APICreateOrder   API = "create_order"    // POST /v1/orders
	APIFetchOrder    API = "fetch_order"     // GET /v1/orders/{id}
	APIOrderPayments API = "order_payments"  // GET /v1/orders/{id}/payments
	APICreateQR      API = "create_qr"       // POST /v1/payments/qr_codes
	APIFetchQR       API = "fetch_qr"        // GET /v1/payments/qr_codes/{id}
	APIFetchPayment  API = "fetch_payment"   // GET /v1/payments/{id}
	APIRefund        API = "refund"          // POST /v1/payments/{id}/refund
	APIFetchRefund   API = "fetch_refund"    // GET /v1/refunds/{id}
	APIPaymentRefund API = "payment_refunds" // GET /v1/payments/{id}/refunds
)

// Fault is how a call fails instead of (or after) doing its work.
type Fault struct {
	// Status is the HTTP status answered (with the PG's error body).
	Status int
	// Code and Description fill the error body.
	Code        string
	Description string
	// RetryAfter, when positive, is sent as the Retry-After header.
	RetryAfter time.Duration
	// Hang answers nothing until the caller gives up (a timeout).
	Hang bool
	// AfterCommit performs the call first, then fails: the caller does not
	// learn that its refund or order exists (a lost answer).
	AfterCommit bool
}

// ServerError is an HTTP 500 from the PG.
func ServerError() Fault {
	return Fault{Status: http.StatusInternalServerError, Code: "SERVER_ERROR", Description: "The simulated gateway failed internally"}
}

// Unavailable is an HTTP 503 from the PG.
func Unavailable() Fault {
	return Fault{Status: http.StatusServiceUnavailable, Code: "SERVER_ERROR", Description: "The simulated gateway is unavailable"}
}

// RateLimited is an HTTP 429 with Retry-After.
func RateLimited(retryAfter time.Duration) Fault {
	return Fault{Status: http.StatusTooManyRequests, Code: "BAD_REQUEST_ERROR", Description: "Too many requests, slow down", RetryAfter: retryAfter}
}

// Timeout never answers: the caller's timeout ends the call.
func Timeout() Fault { return Fault{Hang: true} }

// Rejected is a definitive HTTP 400 with the PG's error code and text.
func Rejected(code, description string) Fault {
	return Fault{Status: http.StatusBadRequest, Code: code, Description: description}
}

// Committed returns the fault applied after the call did its work.
func (f Fault) Committed() Fault {
	f.AfterCommit = true
	return f
}

type faultRule struct {
	fault     Fault
	remaining int // < 0: until cleared
}

// FailNext makes the next n calls of api fail with f (n < 0: every call
// until ClearFaults). Rules queue: FailNext(a, 2, x); FailNext(a, 1, y)
// fails two calls with x, then one with y.
func (s *Server) FailNext(api API, n int, f Fault) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[api] = append(s.faults[api], &faultRule{fault: f, remaining: n})
}

// RefuseRefunds makes every refund call fail definitively with an HTTP 400
// (the PG refuses, e.g. the payment is too old to refund) until
// ClearFaults.
func (s *Server) RefuseRefunds(code, description string) {
	s.FailNext(APIRefund, -1, Rejected(code, description))
}

// ClearFaults removes every pending fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = map[API][]*faultRule{}
}

// Calls returns how many authenticated calls of api the simulator has
// received, failed ones included.
func (s *Server) Calls(api API) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[api]
}

// takeFault counts the call and consumes the next fault for it, if any.
func (s *Server) takeFault(api API) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[api]++
	rules := s.faults[api]
	if len(rules) == 0 {
		return Fault{}, false
	}
	r := rules[0]
	if r.remaining > 0 {
		r.remaining--
		if r.remaining == 0 {
			s.faults[api] = rules[1:]
		}
	}
	return r.fault, true
}

// applyFault answers with the fault (or hangs until the caller leaves).
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, f Fault) {
	if f.Hang {
		select {
		case <-r.Context().Done():
		case <-s.bg.Closing():
		}
		return
	}
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((f.RetryAfter+time.Second-1)/time.Second)))
	}
	writeError(w, f.Status, f.Code, f.Description, "")
}
