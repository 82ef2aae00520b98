package upiapi

import (
	"net/http"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
)

// handleSMSReports takes the SMS provider's delivery reports.
func (s *handlers) handleSMSReports(w http.ResponseWriter, r *http.Request) error {
	raw, err := kit.ReadBody(r)
	if err != nil {
		return err
	}
	if _, err := s.cfg.UPI.ReceiveSMSReports(r.Context(), r.Header, r.URL.Query(), raw); err != nil {
		return err
	}
	return s.OK(w, nil)
}

func (s *handlers) handleReceiptGet(w http.ResponseWriter, r *http.Request) error {
	return kit.ByPath(s.Kit, w, r, "receipt_id", s.cfg.UPI.ReceiptRecord)
}

func (s *handlers) handlePaymentReceipts(w http.ResponseWriter, r *http.Request) error {
	return kit.ByPath(s.Kit, w, r, "payment_id", s.cfg.UPI.PaymentReceipts)
}

func (s *handlers) handleReceiptResend(w http.ResponseWriter, r *http.Request) error {
	return kit.ActOn(w, r, "receipt_id", s.cfg.UPI.Resend, s.Created)
}
