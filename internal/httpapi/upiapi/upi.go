package upiapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/httpapi/kit"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/intake"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/printer"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// handleUPIWebhook receives the payment gateway's webhooks: verified,
// stored and answered at once; the work happens in a job.
func (s *handlers) handleUPIWebhook(w http.ResponseWriter, r *http.Request) error {
	raw, err := kit.ReadBody(r)
	if err != nil {
		return err
	}
	if _, err := s.cfg.UPI.ReceiveWebhook(intake.WithRemote(r.Context(), r.RemoteAddr), r.Header, raw); err != nil {
		return err
	}
	return s.OK(w, nil)
}

func (s *handlers) handleQRCreate(w http.ResponseWriter, r *http.Request) error {
	var in qrmap.QRCreate
	if err := kit.Decode(r, &in); err != nil {
		return err
	}
	m, err := s.cfg.UPI.CreateQR(r.Context(), in)
	if err != nil {
		return err
	}
	return s.Created(w, m)
}

func (s *handlers) handleQRList(w http.ResponseWriter, r *http.Request) error {
	return kit.ListPage(s.Kit, w, r, func(req ocpi.PageRequest) ([]*qrmap.QRMapping, ocpi.Page, error) {
		f := qrmap.QRFilter{Status: strings.ToUpper(r.URL.Query().Get("status")), LocationID: r.URL.Query().Get("location_id")}
		if f.Status != "" && f.Status != qrmap.Active && f.Status != qrmap.Disabled {
			return nil, ocpi.Page{}, ocpi.Invalid("status", "must be ACTIVE or DISABLED")
		}
		return s.cfg.UPI.ListQR(r.Context(), f, req)
	})
}

func (s *handlers) handleQRGet(w http.ResponseWriter, r *http.Request) error {
	return kit.ByPath(s.Kit, w, r, "qr_ref", s.cfg.UPI.QR)
}

func (s *handlers) handleQRDisable(w http.ResponseWriter, r *http.Request) error {
	return kit.ByPath(s.Kit, w, r, "qr_ref", s.cfg.UPI.DisableQR)
}

// handleQRSticker serves the printable sticker of a mapping as PNG, SVG or
// PDF.
func (s *handlers) handleQRSticker(w http.ResponseWriter, r *http.Request) error {
	format := strings.ToLower(r.PathValue("format"))
	ref := r.PathValue("qr_ref")
	b, err := s.cfg.UPI.Sticker(r.Context(), ref, format)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", printer.StickerFormats[format])
	w.Header().Set("Content-Disposition", `inline; filename="qr-`+ref+`.`+format+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, err = w.Write(b)
	return err
}

// refundBody is the body of POST …/upi/refunds (upi.md §5). refund_amount
// is decimal rupees, as a string ("12.50", the seed's money convention) or
// a JSON number.
type refundBody struct {
	RefundID     string          `json:"refund_id"`
	PaymentID    string          `json:"payment_id"`
	RefundAmount json.RawMessage `json:"refund_amount"`
	Reason       string          `json:"reason"`
}

func (s *handlers) handleRefundCreate(w http.ResponseWriter, r *http.Request) error {
	var in refundBody
	if err := kit.Decode(r, &in); err != nil {
		return err
	}
	req := refunds.RefundRequest{RefundID: in.RefundID, PaymentID: in.PaymentID, Reason: in.Reason}
	if in.RefundID == "" {
		return ocpi.Invalid("refund_id", "is required: it is the idempotency key")
	}
	if in.PaymentID == "" {
		return ocpi.Invalid("payment_id", "is required")
	}
	paise, err := rupeesField(in.RefundAmount)
	if err != nil {
		return ocpi.Invalid("refund_amount", err.Error())
	}
	req.Paise = paise
	ref, isNew, err := s.cfg.UPI.CreateRefund(r.Context(), req)
	if err != nil {
		return err
	}
	if isNew {
		return s.Created(w, ref)
	}
	return s.OK(w, ref)
}

// rupeesField reads a decimal amount of rupees from a JSON string or
// number, exactly.
func rupeesField(raw json.RawMessage) (int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, errString("is required (decimal rupees, e.g. \"12.50\")")
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, errString("must be decimal rupees, e.g. \"12.50\"")
		}
	}
	p, err := pg.ParseRupees(text)
	if err != nil {
		return 0, errString("must be decimal rupees with at most two decimals, e.g. \"12.50\"")
	}
	return p, nil
}

type errString string

func (e errString) Error() string { return string(e) }

func (s *handlers) handleRefundList(w http.ResponseWriter, r *http.Request) error {
	return kit.ListPage(s.Kit, w, r, func(req ocpi.PageRequest) ([]*refunds.Refund, ocpi.Page, error) {
		q := r.URL.Query()
		f := refunds.Filter{Status: strings.ToUpper(q.Get("status")), PaymentID: q.Get("payment_id")}
		if f.Status != "" && !slices.Contains([]string{refunds.Queued, refunds.Pending, refunds.Processed, refunds.Failed}, f.Status) {
			return nil, ocpi.Page{}, ocpi.Invalid("status", "must be QUEUED, PENDING, PROCESSED or FAILED")
		}
		return s.cfg.UPI.ListRefunds(r.Context(), f, req)
	})
}

func (s *handlers) handleRefundGet(w http.ResponseWriter, r *http.Request) error {
	return kit.ByPath(s.Kit, w, r, "refund_id", s.cfg.UPI.Refund)
}

func (s *handlers) handlePaymentList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := upi.PaymentFilter{Status: strings.ToUpper(q.Get("status")), QRRef: q.Get("qr_ref")}
	if f.Status != "" && !slices.Contains(paymentrow.Statuses, f.Status) {
		return ocpi.Invalid("status", "must be one of "+strings.Join(paymentrow.Statuses, ", "))
	}
	if a := q.Get("attention"); a != "" {
		b, err := strconv.ParseBool(a)
		if err != nil {
			return ocpi.Invalid("attention", "must be true or false")
		}
		f.Attention = b
	}
	return s.paymentList(w, r, f)
}

// handlePaymentAttention lists the payments an operator must look at.
func (s *handlers) handlePaymentAttention(w http.ResponseWriter, r *http.Request) error {
	return s.paymentList(w, r, upi.PaymentFilter{Attention: true})
}

func (s *handlers) paymentList(w http.ResponseWriter, r *http.Request, f upi.PaymentFilter) error {
	return kit.ListPage(s.Kit, w, r, func(req ocpi.PageRequest) ([]*paymentview.PaymentView, ocpi.Page, error) {
		return s.cfg.UPI.ListPayments(r.Context(), f, req)
	})
}

func (s *handlers) handlePaymentGet(w http.ResponseWriter, r *http.Request) error {
	return kit.ByPath(s.Kit, w, r, "payment_id", s.cfg.UPI.Payment)
}

func (s *handlers) handlePaymentResolve(w http.ResponseWriter, r *http.Request) error {
	return kit.ActOn(w, r, "payment_id", s.cfg.UPI.Resolve, s.OK)
}
