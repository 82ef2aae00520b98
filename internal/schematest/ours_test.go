package schematest

import (
	"strings"
	"testing"
)

// TestOurSchemas holds ocpihub's own schemas to the spec digests: the
// payments.md examples pass, and what the digests forbid fails, naming the
// field.
func TestOurSchemas(t *testing.T) {
	t.Parallel()
	set := OCPI221()
	tests := []struct {
		name, schema, body string
		field              string // "" = valid
	}{
		{name: "terminal example", schema: "Terminal", body: `{"terminal_id":"452cf8a1-e2a0-4f5b-8a59-d1b1a9b1a1c2","address":"Street 1",
			"city":"Vienna","country":"AUT","coordinates":{"latitude":"51.047599","longitude":"3.729944"},"customer_reference":"ChargePoint",
			"invoice_base_url":"https://somecompany.com/invoices","invoice_creator":"CPO","location_ids":[],"last_updated":"2018-12-10T17:16:15Z"}`},
		{name: "terminal assigned", schema: "Terminal", body: `{"terminal_id":"T1","location_ids":["L1","L2"],"evse_uids":["E1"],"last_updated":"2018-12-10T17:16:15Z"}`},
		{name: "terminal id too long", schema: "Terminal", body: `{"terminal_id":"` + strings.Repeat("x", 37) + `","last_updated":"2018-12-10T17:16:15Z"}`, field: "terminal_id"},
		{name: "terminal address not ASCII", schema: "Terminal", body: `{"terminal_id":"T","address":"Straße 1","last_updated":"2018-12-10T17:16:15Z"}`, field: "address"},
		{name: "terminal invoice creator", schema: "Terminal", body: `{"terminal_id":"T","invoice_creator":"EMSP","last_updated":"2018-12-10T17:16:15Z"}`, field: "invoice_creator"},
		{name: "terminal without last_updated", schema: "Terminal", body: `{"terminal_id":"T"}`, field: "(body)"},
		{name: "terminal location id", schema: "Terminal", body: `{"terminal_id":"T","location_ids":[""],"last_updated":"2018-12-10T17:16:15Z"}`, field: "location_ids[0]"},
		{name: "advice example", schema: "FinancialAdviceConfirmation", body: `{"id":"452cf8a1","authorization_reference":"pp-100100-1948213567",
			"total_costs":{"excl_vat":4.00,"incl_vat":4.40},"currency":"EUR","eft_data":["Mastercard","AID: 1234","Crypto: 3456",
			"Nr: **** **** **** 1234","SEQ: 00","Amount: EUR 4.40"],"capture_status_code":"SUCCESS",
			"capture_status_message":"Capture successfull at PSP","last_updated":"2018-12-10T17:16:15Z"}`},
		{name: "advice 2.3.0 price on 2.2.1", schema: "FinancialAdviceConfirmation", body: `{"id":"1","authorization_reference":"r","total_costs":{"before_taxes":4},
			"currency":"EUR","eft_data":[],"capture_status_code":"SUCCESS","last_updated":"2018-12-10T17:16:15Z"}`, field: "total_costs"},
		{name: "advice 2.3.0", schema: "FinancialAdviceConfirmation230", body: `{"id":"1","authorization_reference":"r",
			"total_costs":{"before_taxes":4,"taxes":[{"name":"VAT","amount":0.4}]},"currency":"EUR","eft_data":["x"],
			"capture_status_code":"PARTIAL_SUCCESS","last_updated":"2018-12-10T17:16:15Z"}`},
		{name: "advice 2.2.1 price on 2.3.0", schema: "FinancialAdviceConfirmation230", body: `{"id":"1","authorization_reference":"r",
			"total_costs":{"excl_vat":4},"currency":"EUR","eft_data":[],"capture_status_code":"SUCCESS","last_updated":"2018-12-10T17:16:15Z"}`, field: "total_costs"},
		{name: "advice status", schema: "FinancialAdviceConfirmation", body: `{"id":"1","authorization_reference":"r","total_costs":{"excl_vat":4},
			"currency":"EUR","eft_data":[],"capture_status_code":"OK","last_updated":"2018-12-10T17:16:15Z"}`, field: "capture_status_code"},
		{name: "advice without eft_data", schema: "FinancialAdviceConfirmation", body: `{"id":"1","authorization_reference":"r","total_costs":{"excl_vat":4},
			"currency":"EUR","capture_status_code":"FAILED","last_updated":"2018-12-10T17:16:15Z"}`, field: "(body)"},
		{name: "credentials 2.3.0", schema: "Credentials230", body: `{"token":"abc","url":"https://hub.example/ocpi/versions","hub_party_id":"INHUB",
			"roles":[{"role":"PTP","party_id":"PAY","country_code":"NL","business_details":{"name":"Pay"}}]}`},
		{name: "credentials 2.3.0 HUB role", schema: "Credentials230", body: `{"token":"abc","url":"https://hub.example/ocpi/versions",
			"roles":[{"role":"HUB","party_id":"HUB","country_code":"IN","business_details":{"name":"Hub"}}]}`, field: "roles[0].role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := set.Validate(tt.schema, []byte(tt.body))
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("valid, want a failure at %s", tt.field)
			}
			if !strings.Contains(err.Error(), tt.field+":") {
				t.Fatalf("%v, want a failure at %s", err, tt.field)
			}
		})
	}
}
