package charging

import (
	"encoding/json"

	"github.com/ocpihub/ocpihub/internal/httpapi/apidoc"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/payment"
)

// paymentRows are Direct Payment (the 2.3.0 Payments module, also served
// under 2.2.1: PTPs post terminals and confirmations here, CPOs read them,
// assign terminals and ask PTPs to activate or deactivate them), the PTP's
// commands, UPI QR charging and the operator's views of both.
func (s *handlers) paymentRows() route.Module {
	var rows []route.Row
	add := func(r route.Row, d route.Doc) { r.Doc = d; rows = append(rows, r) }
	for _, v := range []string{"2.2.1", "2.3.0"} {
		base := "/ocpi/" + v + "/payments"
		// One URL per role, the sub-paths /terminals and
		// /financial-advice-confirmations appended: PTPs push to the hub's
		// RECEIVER, CPOs read and assign through its SENDER.
		recv, send := route.Listing{Identifier: "payments", Role: ocpi.InterfaceReceiver, Path: base}, route.Listing{Identifier: "payments", Role: ocpi.InterfaceSender, Path: base}
		v230 := ""
		if v == ocpi.Version230 {
			v230 = "230"
		}
		term := []openapi.Parameter{{Name: "terminal_id", In: "path", Schema: openapi.Schema{"type": "string", "maxLength": 36}}}
		doc := func(d route.Doc) route.Doc {
			d.Tag, d.Spec, d.Params = "payments", "mod_payments.asciidoc", append(d.Params, apidoc.RoutingHeaders...)
			if d.Request != nil {
				// A write by a party whose role may not make it (a CPO
				// posting a terminal, a PTP assigning one).
				d.Errors = append(d.Errors, 405)
			}
			return d
		}
		add(route.Row{Pattern: "POST " + base + "/terminals", Access: route.Platform, Handler: s.handlePaymentTerminalPost, Needs: route.NeedPayments, Listed: recv, Schema: route.Data("")}, doc(route.Doc{Summary: "A PTP registers a terminal (created: 201, replaced: 200)", Request: ocpi.Terminal{}, Stored: true}))
		add(route.Row{Pattern: "GET " + base + "/terminals", Access: route.Platform, Handler: s.handlePaymentTerminals, Needs: route.NeedPayments, Listed: send, Schema: route.Data("[]Terminal")}, doc(route.Doc{Summary: "Terminals the caller may see (a PTP its own, a CPO those assigned to its locations), paged", Data: []ocpi.Terminal{}, Paged: true}))
		add(route.Row{Pattern: "POST " + base + "/terminals/{terminal_id}", Access: route.Platform, Handler: s.handlePaymentTerminalPost, Needs: route.NeedPayments, Listed: recv, Schema: route.Data("")}, doc(route.Doc{Summary: "A PTP registers a terminal under its id", Request: ocpi.Terminal{}, Stored: true, Params: term}))
		add(route.Row{Pattern: "GET " + base + "/terminals/{terminal_id}", Access: route.Platform, Handler: s.handlePaymentTerminal, Needs: route.NeedPayments, Listed: send, Schema: route.Data("Terminal")}, doc(route.Doc{Summary: "One terminal", Data: ocpi.Terminal{}, Params: term}))
		add(route.Row{Pattern: "PUT " + base + "/terminals/{terminal_id}", Access: route.Platform, Handler: s.handlePaymentTerminal, Needs: route.NeedPayments, Listed: send, Schema: route.Data("")}, doc(route.Doc{Summary: "Replace a terminal (a CPO assigns it to locations and EVSEs)", Request: ocpi.Terminal{}, Stored: true, Params: term}))
		add(route.Row{Pattern: "PATCH " + base + "/terminals/{terminal_id}", Access: route.Platform, Handler: s.handlePaymentTerminal, Needs: route.NeedPayments, Listed: send, Schema: route.Data("")}, doc(route.Doc{Summary: "Update fields of a terminal", Request: map[string]any{}, Stored: true, Params: term}))
		add(route.Row{Pattern: "POST " + base + "/terminals/activate", Access: route.Platform, Handler: s.handlePaymentActivate, Needs: route.NeedPayments, Listed: send, Schema: nil}, doc(route.Doc{Summary: "A CPO activates a terminal at its PTP; the PTP's answer is relayed", Request: map[string]any{}, Relayed: true}))
		add(route.Row{Pattern: "POST " + base + "/terminals/{terminal_id}/deactivate", Access: route.Platform, Handler: s.handlePaymentDeactivate, Needs: route.NeedPayments, Listed: send, Schema: route.Data("")}, doc(route.Doc{Summary: "Deactivate a terminal", Params: term}))
		fac := []openapi.Parameter{{Name: "financial_advice_confirmation_id", In: "path", Schema: openapi.Schema{"type": "string", "maxLength": 36}}}
		add(route.Row{Pattern: "GET " + base + "/financial-advice-confirmations", Access: route.Platform, Handler: s.handlePaymentAdviceList, Needs: route.NeedPayments, Listed: send, Schema: route.Data("[]" + "FinancialAdviceConfirmation" + v230)}, doc(route.Doc{Summary: "Financial advice confirmations the caller may see, paged", Data: []ocpi.FinancialAdviceConfirmation{}, Paged: true}))
		add(route.Row{Pattern: "POST " + base + "/financial-advice-confirmations", Access: route.Platform, Handler: s.handlePaymentAdvicePost, Needs: route.NeedPayments, Listed: recv, Schema: route.Data("")}, doc(route.Doc{Summary: "A PTP confirms a session's payment (actual cost, EFT data); linked by authorization_reference and forwarded to the CPO",
			Request: ocpi.FinancialAdviceConfirmation{}, Stored: true}))
		add(route.Row{Pattern: "GET " + base + "/financial-advice-confirmations/{financial_advice_confirmation_id}", Access: route.Platform, Handler: s.handlePaymentAdvice, Needs: route.NeedPayments, Listed: send, Schema: route.Data("FinancialAdviceConfirmation" + v230)}, doc(route.Doc{Summary: "One financial advice confirmation", Data: ocpi.FinancialAdviceConfirmation{}, Params: fac}))
	}
	add(route.Row{Pattern: "POST /ocpi/2.3.0/ptp/commands/{command}", Access: route.Platform, Handler: s.handleEMSPCommand, Needs: route.NeedPaymentCommands, Listed: route.Listing{Identifier: "commands", Role: ocpi.InterfaceReceiver, Path: "/ocpi/2.3.0/ptp/commands"}, Schema: route.DataOr("CommandResponse", "?CommandResponse")}, route.Doc{Summary: "A PTP sends a command (START_SESSION with the payment's authorization_reference, STOP_SESSION)",
		Request: map[string]any{}, Data: ocpi.CommandResponse{}, ErrorData: ocpi.CommandResponse{}, Relayed: true, Tag: "payments", Spec: "mod_commands.asciidoc",
		Params: []openapi.Parameter{{Name: "command", In: "path", Schema: openapi.Schema{"enum": route.AnyOf(ocpi.CommandTypes)}}}})
	limits := []openapi.Parameter{
		{Name: "limit", In: "query", Schema: openapi.Schema{"type": "integer", "minimum": 0}},
		{Name: "offset", In: "query", Schema: openapi.Schema{"type": "integer", "minimum": 0}},
	}
	add(route.Row{Pattern: "GET /admin/payments/{authorization_reference}", Access: route.Admin, Handler: s.handleAdminPayment, Needs: route.NeedPayments}, route.Doc{Tag: "admin", Summary: "A Direct Payment's chain: command, session, CDR, financial advice confirmation",
		Data: &payment.Chain{}})
	add(route.Row{Pattern: "GET /admin/financial-advice/flagged", Access: route.Admin, Handler: s.handleAdminFlagged, Needs: route.NeedPayments}, route.Doc{Tag: "admin", Summary: "Financial advice confirmations that need the operator (amount mismatches, no session)",
		Data: []*payment.Advice{}, Params: limits})
	add(route.Row{Pattern: "POST /admin/financial-advice/{record_id}/resolve", Access: route.Admin, Handler: s.handleAdminResolve, Needs: route.NeedPayments}, route.Doc{Tag: "admin", Summary: "Mark a flagged confirmation resolved, with the operator's note",
		Request: resolveRequest{}, Data: &payment.Advice{}, Params: []openapi.Parameter{{Name: "record_id", In: "path", Schema: openapi.Schema{"type": "integer", "minimum": 1}}}})

	return route.Module{
		Tag: openapi.Tag{Name: "payments", Description: "Direct Payment: PTPs' terminals, pre-authorised sessions and financial advice confirmations.",
			ExternalDocs: &openapi.ExternalDocs{URL: "https://github.com/ocpi/ocpi/blob/2.3.0/mod_payments.asciidoc"}},
		Rows: rows,
		Schemas: func(s *openapi.Schemas) {
			s.Type(json.Number(""), openapi.Schema{"type": "number"})
		},
	}
}
