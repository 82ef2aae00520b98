package httpapi

import (
	"encoding/json"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/payment"
	"github.com/ocpihub/ocpihub/internal/upi"
)

// paymentDocs describes Direct Payment (terminals and financial advice
// confirmations, on 2.2.1 and 2.3.0), the PTP's commands, UPI QR charging
// and the operator's views of both.
func paymentDocs() apiDocs {
	routes := map[string]Doc{}
	str := openapi.Schema{"type": "string"}
	for _, v := range []string{"2.2.1", "2.3.0"} {
		base := "/ocpi/" + v + "/payments"
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
		routes["GET "+base+"/terminals"] = doc(Doc{Summary: "Terminals the caller may see (a PTP its own, a CPO those assigned to its locations), paged", Data: []ocpi.Terminal{}, Paged: true})
		routes["POST "+base+"/terminals"] = doc(Doc{Summary: "A PTP registers a terminal (created: 201, replaced: 200)", Request: ocpi.Terminal{}, Stored: true})
		routes["POST "+base+"/terminals/{terminal_id}"] = doc(Doc{Summary: "A PTP registers a terminal under its id", Request: ocpi.Terminal{}, Stored: true, Params: term})
		routes["GET "+base+"/terminals/{terminal_id}"] = doc(Doc{Summary: "One terminal", Data: ocpi.Terminal{}, Params: term})
		routes["PUT "+base+"/terminals/{terminal_id}"] = doc(Doc{Summary: "Replace a terminal (a CPO assigns it to locations and EVSEs)", Request: ocpi.Terminal{}, Stored: true, Params: term})
		routes["PATCH "+base+"/terminals/{terminal_id}"] = doc(Doc{Summary: "Update fields of a terminal", Request: map[string]any{}, Stored: true, Params: term})
		routes["POST "+base+"/terminals/activate"] = doc(Doc{Summary: "A CPO activates a terminal at its PTP; the PTP's answer is relayed", Request: map[string]any{}, Relayed: true})
		routes["POST "+base+"/terminals/{terminal_id}/deactivate"] = doc(Doc{Summary: "Deactivate a terminal", Params: term})
		fac := []openapi.Parameter{{Name: "financial_advice_confirmation_id", In: "path", Schema: openapi.Schema{"type": "string", "maxLength": 36}}}
		routes["GET "+base+"/financial-advice-confirmations"] = doc(Doc{Summary: "Financial advice confirmations the caller may see, paged", Data: []ocpi.FinancialAdviceConfirmation{}, Paged: true})
		routes["POST "+base+"/financial-advice-confirmations"] = doc(Doc{Summary: "A PTP confirms a session's payment (actual cost, EFT data); linked by authorization_reference and forwarded to the CPO",
			Request: ocpi.FinancialAdviceConfirmation{}, Stored: true})
		routes["GET "+base+"/financial-advice-confirmations/{financial_advice_confirmation_id}"] = doc(Doc{Summary: "One financial advice confirmation", Data: ocpi.FinancialAdviceConfirmation{}, Params: fac})
	}
	routes["POST /ocpi/2.3.0/ptp/commands/{command}"] = Doc{Summary: "A PTP sends a command (START_SESSION with the payment's authorization_reference, STOP_SESSION)",
		Request: map[string]any{}, Data: ocpi.CommandResponse{}, ErrorData: ocpi.CommandResponse{}, Relayed: true, Tag: "payments", Spec: "mod_commands.asciidoc",
		Params: []openapi.Parameter{{Name: "command", In: "path", Schema: openapi.Schema{"enum": anyOf(ocpi.CommandTypes)}}}}
	limits := []openapi.Parameter{
		{Name: "limit", In: "query", Schema: openapi.Schema{"type": "integer", "minimum": 0}},
		{Name: "offset", In: "query", Schema: openapi.Schema{"type": "integer", "minimum": 0}},
	}
	routes["GET /admin/payments/{authorization_reference}"] = Doc{Tag: "admin", Summary: "A Direct Payment's chain: command, session, CDR, financial advice confirmation",
		Data: &payment.Chain{}}
	routes["GET /admin/financial-advice/flagged"] = Doc{Tag: "admin", Summary: "Financial advice confirmations that need the operator (amount mismatches, no session)",
		Data: []*payment.Advice{}, Params: limits}
	routes["POST /admin/financial-advice/{record_id}/resolve"] = Doc{Tag: "admin", Summary: "Mark a flagged confirmation resolved, with the operator's note",
		Request: resolveRequest{}, Data: &payment.Advice{}, Params: []openapi.Parameter{{Name: "record_id", In: "path", Schema: openapi.Schema{"type": "integer", "minimum": 1}}}}

	// UPI.
	const u = "/ocpi/2.2.1/payments/upi"
	qr := []openapi.Parameter{{Name: "qr_ref", In: "path", Schema: str}}
	upiDoc := func(d Doc) Doc { d.Tag = "upi"; return d }
	routes["POST "+u+"/webhook"] = upiDoc(Doc{Summary: "The payment gateway's webhook (signed; no OCPI token)",
		Description: "Verified with the webhook secret (Razorpay's X-Razorpay-Signature, Cashfree's x-webhook-signature, or the flat form's signature); a signature that does not verify is 401 and changes nothing. Stored and answered at once; the work happens in a job.",
		Request:     map[string]any{}, Errors: []int{401}})
	routes["POST "+u+"/qr"] = upiDoc(Doc{Summary: "Create the static QR code of a connector", Request: upi.QRCreate{}, Data: &upi.QRMapping{}, Created: true, Errors: []int{404, 409}})
	routes["GET "+u+"/qr"] = upiDoc(Doc{Summary: "QR mappings, paged", Data: []*upi.QRMapping{}, Paged: true,
		Params: []openapi.Parameter{{Name: "status", In: "query", Schema: openapi.Schema{"enum": []any{upi.QRActive, upi.QRDisabled}}}, {Name: "location_id", In: "query", Schema: str}}})
	routes["GET "+u+"/qr/{qr_ref}"] = upiDoc(Doc{Summary: "One QR mapping", Data: &upi.QRMapping{}, Params: qr})
	routes["POST "+u+"/qr/{qr_ref}/disable"] = upiDoc(Doc{Summary: "Disable a QR code (scans land on a page saying so)", Data: &upi.QRMapping{}, Params: qr})
	sticker := map[string]openapi.Schema{}
	for _, mt := range upi.StickerFormats {
		sticker[mt] = openapi.Schema{"type": "string", "contentMediaType": mt}
	}
	routes["GET "+u+"/qr/{qr_ref}/sticker/{format}"] = upiDoc(Doc{Summary: "The printable sticker of a QR code (PNG, SVG or PDF)", Raw: sticker,
		Params: append(qr, openapi.Parameter{Name: "format", In: "path", Schema: openapi.Schema{"enum": []any{"png", "svg", "pdf"}}})})
	routes["POST "+u+"/refunds"] = upiDoc(Doc{Summary: "Refund (part of) a captured payment; the same refund_id again is the same refund",
		Request: refundBody{}, Data: &upi.Refund{}, Stored: true, Errors: []int{404, 409}})
	routes["GET "+u+"/refunds"] = upiDoc(Doc{Summary: "Refunds, paged", Data: []*upi.Refund{}, Paged: true,
		Params: []openapi.Parameter{{Name: "status", In: "query", Schema: openapi.Schema{"enum": []any{upi.RefundQueued, upi.RefundPending, upi.RefundProcessed, upi.RefundFailed}}}, {Name: "payment_id", In: "query", Schema: str}}})
	routes["GET "+u+"/refunds/{refund_id}"] = upiDoc(Doc{Summary: "One refund", Data: &upi.Refund{}})
	payParams := []openapi.Parameter{{Name: "status", In: "query", Schema: openapi.Schema{"enum": anyOf(upi.Statuses)}}, {Name: "qr_ref", In: "query", Schema: str},
		{Name: "attention", In: "query", Schema: openapi.Schema{"type": "boolean"}}}
	routes["GET "+u+"/payments"] = upiDoc(Doc{Summary: "UPI payments with their chain (QR, session, CDR, refunds), paged", Data: []*upi.PaymentView{}, Paged: true, Params: payParams})
	routes["GET "+u+"/payments/attention"] = upiDoc(Doc{Summary: "Payments that need the operator", Data: []*upi.PaymentView{}, Paged: true})
	routes["GET "+u+"/payments/{payment_id}"] = upiDoc(Doc{Summary: "One payment and its chain", Data: &upi.PaymentView{}})
	routes["POST "+u+"/payments/{payment_id}/resolve"] = upiDoc(Doc{Summary: "Clear a payment's attention flag, with a note; a payment held on a CDR cost mismatch is settled on settle_on (cdr or hub)",
		Request: upi.Resolution{}, Data: &upi.PaymentView{}})
	routes["POST "+u+"/sms/reports"] = upiDoc(Doc{Summary: "The SMS provider's delivery reports (authenticated by the adapter; no OCPI token)",
		Description: "msg91: a JSON array of reports; the URL carries ?token= with the SMS secret. signed: {\"reports\": [...]} signed like ocpihub's webhooks. A report that does not authenticate is 401 and changes nothing; one naming no known message is 404, so the provider retries.",
		Request:     map[string]any{}, Errors: []int{401, 404}})
	rid := []openapi.Parameter{{Name: "receipt_id", In: "path", Schema: str}}
	routes["GET "+u+"/receipts/{receipt_id}"] = upiDoc(Doc{Summary: "One receipt (its GST tax invoice and credit notes) with its SMS deliveries",
		Data: &upi.ReceiptRecord{}, Params: rid})
	routes["POST "+u+"/receipts/{receipt_id}/resend"] = upiDoc(Doc{Summary: "Send a receipt again: by SMS (to the number given, else the last one) or by e-mail",
		Request: upi.ResendRequest{}, Data: &upi.ResendResult{}, Created: true, Params: rid, Errors: []int{404}})
	routes["GET "+u+"/payments/{payment_id}/receipts"] = upiDoc(Doc{Summary: "The receipts of a payment with their deliveries", Data: []*upi.ReceiptRecord{}})

	return apiDocs{
		Tag: openapi.Tag{Name: "payments", Description: "Direct Payment: PTPs' terminals, pre-authorised sessions and financial advice confirmations.",
			ExternalDocs: &openapi.ExternalDocs{URL: "https://github.com/ocpi/ocpi/blob/2.3.0/mod_payments.asciidoc"}},
		Routes: routes,
		Schemas: func(s *openapi.Schemas) {
			s.Type(json.Number(""), openapi.Schema{"type": "number"})
		},
	}
}
