package upiapi

import (
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/upi"
	"github.com/ocpihub/ocpihub/internal/upi/paymentrow"
	"github.com/ocpihub/ocpihub/internal/upi/paymentview"
	"github.com/ocpihub/ocpihub/internal/upi/printer"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
	"github.com/ocpihub/ocpihub/internal/upi/refunds"
)

// upiRows are UPI QR charging: the payment gateway's and the SMS
// provider's webhooks, and the operator's QR codes, refunds, payments and
// receipts.
func (s *handlers) upiRows() route.Module {
	var rows []route.Row
	add := func(r route.Row, d route.Doc) { r.Doc = d; rows = append(rows, r) }
	str := openapi.Schema{"type": "string"}
	const u = "/ocpi/2.2.1/payments/upi"
	qr := []openapi.Parameter{{Name: "qr_ref", In: "path", Schema: str}}
	upiDoc := func(d route.Doc) route.Doc { d.Tag = "upi"; return d }
	add(route.Row{Pattern: "POST " + u + "/webhook", Access: route.Public, Handler: s.handleUPIWebhook, Needs: route.NeedUPI, Schema: route.Data("")}, upiDoc(route.Doc{Summary: "The payment gateway's webhook (signed; no OCPI token)",
		Description: "Verified with the webhook secret (Razorpay's X-Razorpay-Signature, Cashfree's x-webhook-signature, or the flat form's signature); a signature that does not verify is 401 and changes nothing. Stored and answered at once; the work happens in a job.",
		Request:     map[string]any{}, Errors: []int{401}}))
	add(route.Row{Pattern: "POST " + u + "/qr", Access: route.Admin, Handler: s.handleQRCreate, Needs: route.NeedUPI, Options: []route.Option{route.WithIdempotencyKey}}, upiDoc(route.Doc{Summary: "Create the static QR code of a connector", Request: qrmap.QRCreate{}, Data: &qrmap.QRMapping{}, Created: true, Errors: []int{404, 409}}))
	add(route.Row{Pattern: "GET " + u + "/qr", Access: route.Admin, Handler: s.handleQRList, Needs: route.NeedUPI}, upiDoc(route.Doc{Summary: "QR mappings, paged", Data: []*qrmap.QRMapping{}, Paged: true,
		Params: []openapi.Parameter{{Name: "status", In: "query", Schema: openapi.Schema{"enum": []any{qrmap.Active, qrmap.Disabled}}}, {Name: "location_id", In: "query", Schema: str}}}))
	add(route.Row{Pattern: "GET " + u + "/qr/{qr_ref}", Access: route.Admin, Handler: s.handleQRGet, Needs: route.NeedUPI}, upiDoc(route.Doc{Summary: "One QR mapping", Data: &qrmap.QRMapping{}, Params: qr}))
	add(route.Row{Pattern: "POST " + u + "/qr/{qr_ref}/disable", Access: route.Admin, Handler: s.handleQRDisable, Needs: route.NeedUPI, Options: []route.Option{route.WithIdempotencyKey}}, upiDoc(route.Doc{Summary: "Disable a QR code (scans land on a page saying so)", Data: &qrmap.QRMapping{}, Params: qr}))
	sticker := map[string]openapi.Schema{}
	for _, mt := range printer.StickerFormats {
		sticker[mt] = openapi.Schema{"type": "string", "contentMediaType": mt}
	}
	add(route.Row{Pattern: "GET " + u + "/qr/{qr_ref}/sticker/{format}", Access: route.Admin, Handler: s.handleQRSticker, Needs: route.NeedUPI}, upiDoc(route.Doc{Summary: "The printable sticker of a QR code (PNG, SVG or PDF)", Raw: sticker,
		Params: append(qr, openapi.Parameter{Name: "format", In: "path", Schema: openapi.Schema{"enum": []any{"png", "svg", "pdf"}}})}))
	add(route.Row{Pattern: "POST " + u + "/refunds", Access: route.Admin, Handler: s.handleRefundCreate, Needs: route.NeedUPI, Options: []route.Option{route.WithIdempotencyKey}}, upiDoc(route.Doc{Summary: "Refund (part of) a captured payment; the same refund_id again is the same refund",
		Request: refundBody{}, Data: &refunds.Refund{}, Stored: true, Errors: []int{404, 409}}))
	add(route.Row{Pattern: "GET " + u + "/refunds", Access: route.Admin, Handler: s.handleRefundList, Needs: route.NeedUPI}, upiDoc(route.Doc{Summary: "Refunds, paged", Data: []*refunds.Refund{}, Paged: true,
		Params: []openapi.Parameter{{Name: "status", In: "query", Schema: openapi.Schema{"enum": []any{refunds.Queued, refunds.Pending, refunds.Processed, refunds.Failed}}}, {Name: "payment_id", In: "query", Schema: str}}}))
	add(route.Row{Pattern: "GET " + u + "/refunds/{refund_id}", Access: route.Admin, Handler: s.handleRefundGet, Needs: route.NeedUPI}, upiDoc(route.Doc{Summary: "One refund", Data: &refunds.Refund{}}))
	payParams := []openapi.Parameter{{Name: "status", In: "query", Schema: openapi.Schema{"enum": route.AnyOf(paymentrow.Statuses)}}, {Name: "qr_ref", In: "query", Schema: str},
		{Name: "attention", In: "query", Schema: openapi.Schema{"type": "boolean"}}}
	add(route.Row{Pattern: "GET " + u + "/payments", Access: route.Admin, Handler: s.handlePaymentList, Needs: route.NeedUPI}, upiDoc(route.Doc{Summary: "UPI payments with their chain (QR, session, CDR, refunds), paged", Data: []*paymentview.PaymentView{}, Paged: true, Params: payParams}))
	add(route.Row{Pattern: "GET " + u + "/payments/attention", Access: route.Admin, Handler: s.handlePaymentAttention, Needs: route.NeedUPI}, upiDoc(route.Doc{Summary: "Payments that need the operator", Data: []*paymentview.PaymentView{}, Paged: true}))
	add(route.Row{Pattern: "GET " + u + "/payments/{payment_id}", Access: route.Admin, Handler: s.handlePaymentGet, Needs: route.NeedUPI}, upiDoc(route.Doc{Summary: "One payment and its chain", Data: &paymentview.PaymentView{}}))
	add(route.Row{Pattern: "POST " + u + "/payments/{payment_id}/resolve", Access: route.Admin, Handler: s.handlePaymentResolve, Needs: route.NeedUPI, Options: []route.Option{route.WithIdempotencyKey}}, upiDoc(route.Doc{Summary: "Clear a payment's attention flag, with a note; a payment held on a CDR cost mismatch is settled on settle_on (cdr or hub)",
		Request: upi.Resolution{}, Data: &paymentview.PaymentView{}}))
	add(route.Row{Pattern: "POST " + u + "/sms/reports", Access: route.Public, Handler: s.handleSMSReports, Needs: route.NeedUPI, Schema: route.Data("")}, upiDoc(route.Doc{Summary: "The SMS provider's delivery reports (authenticated by the adapter; no OCPI token)",
		Description: "msg91: a JSON array of reports; the URL carries ?token= with the SMS secret. signed: {\"reports\": [...]} signed like ocpihub's webhooks. A report that does not authenticate is 401 and changes nothing; one naming no known message is 404, so the provider retries.",
		Request:     map[string]any{}, Errors: []int{401, 404}}))
	rid := []openapi.Parameter{{Name: "receipt_id", In: "path", Schema: str}}
	add(route.Row{Pattern: "GET " + u + "/receipts/{receipt_id}", Access: route.Admin, Handler: s.handleReceiptGet, Needs: route.NeedUPI}, upiDoc(route.Doc{Summary: "One receipt (its GST tax invoice and credit notes) with its SMS deliveries",
		Data: &upi.ReceiptRecord{}, Params: rid}))
	add(route.Row{Pattern: "POST " + u + "/receipts/{receipt_id}/resend", Access: route.Admin, Handler: s.handleReceiptResend, Needs: route.NeedUPI, Options: []route.Option{route.WithIdempotencyKey}}, upiDoc(route.Doc{Summary: "Send a receipt again: by SMS (to the number given, else the last one) or by e-mail",
		Request: upi.ResendRequest{}, Data: &upi.ResendResult{}, Created: true, Params: rid, Errors: []int{404}}))
	add(route.Row{Pattern: "GET " + u + "/payments/{payment_id}/receipts", Access: route.Admin, Handler: s.handlePaymentReceipts, Needs: route.NeedUPI}, upiDoc(route.Doc{Summary: "The receipts of a payment with their deliveries", Data: []*upi.ReceiptRecord{}}))

	return route.Module{Rows: rows}
}
