package httpapi

import (
	"encoding/json"

	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/payment"
	"github.com/ocpihub/ocpihub/internal/upi"
)

// paymentRows are Direct Payment (the 2.3.0 Payments module, also served
// under 2.2.1: PTPs post terminals and confirmations here, CPOs read them,
// assign terminals and ask PTPs to activate or deactivate them), the PTP's
// commands, UPI QR charging and the operator's views of both.
func (s *Server) paymentRows() module {
	var rows []Row
	add := func(r Row, d Doc) { r.Doc = d; rows = append(rows, r) }
	str := openapi.Schema{"type": "string"}
	for _, v := range []string{"2.2.1", "2.3.0"} {
		base := "/ocpi/" + v + "/payments"
		// One URL per role, the sub-paths /terminals and
		// /financial-advice-confirmations appended: PTPs push to the hub's
		// RECEIVER, CPOs read and assign through its SENDER.
		recv, send := Listing{Identifier: "payments", Role: ocpi.InterfaceReceiver, Path: base}, Listing{Identifier: "payments", Role: ocpi.InterfaceSender, Path: base}
		v230 := ""
		if v == ocpi.Version230 {
			v230 = "230"
		}
		term := []openapi.Parameter{{Name: "terminal_id", In: "path", Schema: openapi.Schema{"type": "string", "maxLength": 36}}}
		doc := func(d Doc) Doc {
			d.Tag, d.Spec, d.Params = "payments", "mod_payments.asciidoc", append(d.Params, routingHeaders...)
			if d.Request != nil {
				// A write by a party whose role may not make it (a CPO
				// posting a terminal, a PTP assigning one).
				d.Errors = append(d.Errors, 405)
			}
			return d
		}
		add(Row{Pattern: "POST " + base + "/terminals", Access: platform, Handler: s.handlePaymentTerminalPost, Needs: needPayments, Listed: recv, Schema: data("")}, doc(Doc{Summary: "A PTP registers a terminal (created: 201, replaced: 200)", Request: ocpi.Terminal{}, Stored: true}))
		add(Row{Pattern: "GET " + base + "/terminals", Access: platform, Handler: s.handlePaymentTerminals, Needs: needPayments, Listed: send, Schema: data("[]Terminal")}, doc(Doc{Summary: "Terminals the caller may see (a PTP its own, a CPO those assigned to its locations), paged", Data: []ocpi.Terminal{}, Paged: true}))
		add(Row{Pattern: "POST " + base + "/terminals/{terminal_id}", Access: platform, Handler: s.handlePaymentTerminalPost, Needs: needPayments, Listed: recv, Schema: data("")}, doc(Doc{Summary: "A PTP registers a terminal under its id", Request: ocpi.Terminal{}, Stored: true, Params: term}))
		add(Row{Pattern: "GET " + base + "/terminals/{terminal_id}", Access: platform, Handler: s.handlePaymentTerminal, Needs: needPayments, Listed: send, Schema: data("Terminal")}, doc(Doc{Summary: "One terminal", Data: ocpi.Terminal{}, Params: term}))
		add(Row{Pattern: "PUT " + base + "/terminals/{terminal_id}", Access: platform, Handler: s.handlePaymentTerminal, Needs: needPayments, Listed: send, Schema: data("")}, doc(Doc{Summary: "Replace a terminal (a CPO assigns it to locations and EVSEs)", Request: ocpi.Terminal{}, Stored: true, Params: term}))
		add(Row{Pattern: "PATCH " + base + "/terminals/{terminal_id}", Access: platform, Handler: s.handlePaymentTerminal, Needs: needPayments, Listed: send, Schema: data("")}, doc(Doc{Summary: "Update fields of a terminal", Request: map[string]any{}, Stored: true, Params: term}))
		add(Row{Pattern: "POST " + base + "/terminals/activate", Access: platform, Handler: s.handlePaymentActivate, Needs: needPayments, Listed: send, Schema: nil}, doc(Doc{Summary: "A CPO activates a terminal at its PTP; the PTP's answer is relayed", Request: map[string]any{}, Relayed: true}))
		add(Row{Pattern: "POST " + base + "/terminals/{terminal_id}/deactivate", Access: platform, Handler: s.handlePaymentDeactivate, Needs: needPayments, Listed: send, Schema: data("")}, doc(Doc{Summary: "Deactivate a terminal", Params: term}))
		fac := []openapi.Parameter{{Name: "financial_advice_confirmation_id", In: "path", Schema: openapi.Schema{"type": "string", "maxLength": 36}}}
		add(Row{Pattern: "GET " + base + "/financial-advice-confirmations", Access: platform, Handler: s.handlePaymentAdviceList, Needs: needPayments, Listed: send, Schema: data("[]" + "FinancialAdviceConfirmation" + v230)}, doc(Doc{Summary: "Financial advice confirmations the caller may see, paged", Data: []ocpi.FinancialAdviceConfirmation{}, Paged: true}))
		add(Row{Pattern: "POST " + base + "/financial-advice-confirmations", Access: platform, Handler: s.handlePaymentAdvicePost, Needs: needPayments, Listed: recv, Schema: data("")}, doc(Doc{Summary: "A PTP confirms a session's payment (actual cost, EFT data); linked by authorization_reference and forwarded to the CPO",
			Request: ocpi.FinancialAdviceConfirmation{}, Stored: true}))
		add(Row{Pattern: "GET " + base + "/financial-advice-confirmations/{financial_advice_confirmation_id}", Access: platform, Handler: s.handlePaymentAdvice, Needs: needPayments, Listed: send, Schema: data("FinancialAdviceConfirmation" + v230)}, doc(Doc{Summary: "One financial advice confirmation", Data: ocpi.FinancialAdviceConfirmation{}, Params: fac}))
	}
	add(Row{Pattern: "POST /ocpi/2.3.0/ptp/commands/{command}", Access: platform, Handler: s.handleEMSPCommand, Needs: needPaymentCommands, Listed: Listing{Identifier: "commands", Role: ocpi.InterfaceReceiver, Path: "/ocpi/2.3.0/ptp/commands"}, Schema: dataOr("CommandResponse", "?CommandResponse")}, Doc{Summary: "A PTP sends a command (START_SESSION with the payment's authorization_reference, STOP_SESSION)",
		Request: map[string]any{}, Data: ocpi.CommandResponse{}, ErrorData: ocpi.CommandResponse{}, Relayed: true, Tag: "payments", Spec: "mod_commands.asciidoc",
		Params: []openapi.Parameter{{Name: "command", In: "path", Schema: openapi.Schema{"enum": anyOf(ocpi.CommandTypes)}}}})
	limits := []openapi.Parameter{
		{Name: "limit", In: "query", Schema: openapi.Schema{"type": "integer", "minimum": 0}},
		{Name: "offset", In: "query", Schema: openapi.Schema{"type": "integer", "minimum": 0}},
	}
	add(Row{Pattern: "GET /admin/payments/{authorization_reference}", Access: route.Admin, Handler: s.handleAdminPayment, Needs: needPayments}, Doc{Tag: "admin", Summary: "A Direct Payment's chain: command, session, CDR, financial advice confirmation",
		Data: &payment.Chain{}})
	add(Row{Pattern: "GET /admin/financial-advice/flagged", Access: route.Admin, Handler: s.handleAdminFlagged, Needs: needPayments}, Doc{Tag: "admin", Summary: "Financial advice confirmations that need the operator (amount mismatches, no session)",
		Data: []*payment.Advice{}, Params: limits})
	add(Row{Pattern: "POST /admin/financial-advice/{record_id}/resolve", Access: route.Admin, Handler: s.handleAdminResolve, Needs: needPayments}, Doc{Tag: "admin", Summary: "Mark a flagged confirmation resolved, with the operator's note",
		Request: resolveRequest{}, Data: &payment.Advice{}, Params: []openapi.Parameter{{Name: "record_id", In: "path", Schema: openapi.Schema{"type": "integer", "minimum": 1}}}})

	// UPI.
	const u = "/ocpi/2.2.1/payments/upi"
	qr := []openapi.Parameter{{Name: "qr_ref", In: "path", Schema: str}}
	upiDoc := func(d Doc) Doc { d.Tag = "upi"; return d }
	add(Row{Pattern: "POST " + u + "/webhook", Access: public, Handler: s.handleUPIWebhook, Needs: needUPI, Schema: data("")}, upiDoc(Doc{Summary: "The payment gateway's webhook (signed; no OCPI token)",
		Description: "Verified with the webhook secret (Razorpay's X-Razorpay-Signature, Cashfree's x-webhook-signature, or the flat form's signature); a signature that does not verify is 401 and changes nothing. Stored and answered at once; the work happens in a job.",
		Request:     map[string]any{}, Errors: []int{401}}))
	add(Row{Pattern: "POST " + u + "/qr", Access: route.Admin, Handler: s.handleQRCreate, Needs: needUPI, Options: []routeOption{withIdempotencyKey}}, upiDoc(Doc{Summary: "Create the static QR code of a connector", Request: upi.QRCreate{}, Data: &upi.QRMapping{}, Created: true, Errors: []int{404, 409}}))
	add(Row{Pattern: "GET " + u + "/qr", Access: route.Admin, Handler: s.handleQRList, Needs: needUPI}, upiDoc(Doc{Summary: "QR mappings, paged", Data: []*upi.QRMapping{}, Paged: true,
		Params: []openapi.Parameter{{Name: "status", In: "query", Schema: openapi.Schema{"enum": []any{upi.QRActive, upi.QRDisabled}}}, {Name: "location_id", In: "query", Schema: str}}}))
	add(Row{Pattern: "GET " + u + "/qr/{qr_ref}", Access: route.Admin, Handler: s.handleQRGet, Needs: needUPI}, upiDoc(Doc{Summary: "One QR mapping", Data: &upi.QRMapping{}, Params: qr}))
	add(Row{Pattern: "POST " + u + "/qr/{qr_ref}/disable", Access: route.Admin, Handler: s.handleQRDisable, Needs: needUPI, Options: []routeOption{withIdempotencyKey}}, upiDoc(Doc{Summary: "Disable a QR code (scans land on a page saying so)", Data: &upi.QRMapping{}, Params: qr}))
	sticker := map[string]openapi.Schema{}
	for _, mt := range upi.StickerFormats {
		sticker[mt] = openapi.Schema{"type": "string", "contentMediaType": mt}
	}
	add(Row{Pattern: "GET " + u + "/qr/{qr_ref}/sticker/{format}", Access: route.Admin, Handler: s.handleQRSticker, Needs: needUPI}, upiDoc(Doc{Summary: "The printable sticker of a QR code (PNG, SVG or PDF)", Raw: sticker,
		Params: append(qr, openapi.Parameter{Name: "format", In: "path", Schema: openapi.Schema{"enum": []any{"png", "svg", "pdf"}}})}))
	add(Row{Pattern: "POST " + u + "/refunds", Access: route.Admin, Handler: s.handleRefundCreate, Needs: needUPI, Options: []routeOption{withIdempotencyKey}}, upiDoc(Doc{Summary: "Refund (part of) a captured payment; the same refund_id again is the same refund",
		Request: refundBody{}, Data: &upi.Refund{}, Stored: true, Errors: []int{404, 409}}))
	add(Row{Pattern: "GET " + u + "/refunds", Access: route.Admin, Handler: s.handleRefundList, Needs: needUPI}, upiDoc(Doc{Summary: "Refunds, paged", Data: []*upi.Refund{}, Paged: true,
		Params: []openapi.Parameter{{Name: "status", In: "query", Schema: openapi.Schema{"enum": []any{upi.RefundQueued, upi.RefundPending, upi.RefundProcessed, upi.RefundFailed}}}, {Name: "payment_id", In: "query", Schema: str}}}))
	add(Row{Pattern: "GET " + u + "/refunds/{refund_id}", Access: route.Admin, Handler: s.handleRefundGet, Needs: needUPI}, upiDoc(Doc{Summary: "One refund", Data: &upi.Refund{}}))
	payParams := []openapi.Parameter{{Name: "status", In: "query", Schema: openapi.Schema{"enum": anyOf(upi.Statuses)}}, {Name: "qr_ref", In: "query", Schema: str},
		{Name: "attention", In: "query", Schema: openapi.Schema{"type": "boolean"}}}
	add(Row{Pattern: "GET " + u + "/payments", Access: route.Admin, Handler: s.handlePaymentList, Needs: needUPI}, upiDoc(Doc{Summary: "UPI payments with their chain (QR, session, CDR, refunds), paged", Data: []*upi.PaymentView{}, Paged: true, Params: payParams}))
	add(Row{Pattern: "GET " + u + "/payments/attention", Access: route.Admin, Handler: s.handlePaymentAttention, Needs: needUPI}, upiDoc(Doc{Summary: "Payments that need the operator", Data: []*upi.PaymentView{}, Paged: true}))
	add(Row{Pattern: "GET " + u + "/payments/{payment_id}", Access: route.Admin, Handler: s.handlePaymentGet, Needs: needUPI}, upiDoc(Doc{Summary: "One payment and its chain", Data: &upi.PaymentView{}}))
	add(Row{Pattern: "POST " + u + "/payments/{payment_id}/resolve", Access: route.Admin, Handler: s.handlePaymentResolve, Needs: needUPI, Options: []routeOption{withIdempotencyKey}}, upiDoc(Doc{Summary: "Clear a payment's attention flag, with a note; a payment held on a CDR cost mismatch is settled on settle_on (cdr or hub)",
		Request: upi.Resolution{}, Data: &upi.PaymentView{}}))
	add(Row{Pattern: "POST " + u + "/sms/reports", Access: public, Handler: s.handleSMSReports, Needs: needUPI, Schema: data("")}, upiDoc(Doc{Summary: "The SMS provider's delivery reports (authenticated by the adapter; no OCPI token)",
		Description: "msg91: a JSON array of reports; the URL carries ?token= with the SMS secret. signed: {\"reports\": [...]} signed like ocpihub's webhooks. A report that does not authenticate is 401 and changes nothing; one naming no known message is 404, so the provider retries.",
		Request:     map[string]any{}, Errors: []int{401, 404}}))
	rid := []openapi.Parameter{{Name: "receipt_id", In: "path", Schema: str}}
	add(Row{Pattern: "GET " + u + "/receipts/{receipt_id}", Access: route.Admin, Handler: s.handleReceiptGet, Needs: needUPI}, upiDoc(Doc{Summary: "One receipt (its GST tax invoice and credit notes) with its SMS deliveries",
		Data: &upi.ReceiptRecord{}, Params: rid}))
	add(Row{Pattern: "POST " + u + "/receipts/{receipt_id}/resend", Access: route.Admin, Handler: s.handleReceiptResend, Needs: needUPI, Options: []routeOption{withIdempotencyKey}}, upiDoc(Doc{Summary: "Send a receipt again: by SMS (to the number given, else the last one) or by e-mail",
		Request: upi.ResendRequest{}, Data: &upi.ResendResult{}, Created: true, Params: rid, Errors: []int{404}}))
	add(Row{Pattern: "GET " + u + "/payments/{payment_id}/receipts", Access: route.Admin, Handler: s.handlePaymentReceipts, Needs: needUPI}, upiDoc(Doc{Summary: "The receipts of a payment with their deliveries", Data: []*upi.ReceiptRecord{}}))

	return module{
		Tag: openapi.Tag{Name: "payments", Description: "Direct Payment: PTPs' terminals, pre-authorised sessions and financial advice confirmations.",
			ExternalDocs: &openapi.ExternalDocs{URL: "https://github.com/ocpi/ocpi/blob/2.3.0/mod_payments.asciidoc"}},
		Rows: rows,
		Schemas: func(s *openapi.Schemas) {
			s.Type(json.Number(""), openapi.Schema{"type": "number"})
		},
	}
}
