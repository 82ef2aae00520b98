package ocpi

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTerminalCheck(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 37)
	tests := []struct {
		name, body, field string
		requireID         bool
	}{
		{name: "minimal", body: `{"terminal_id":"T1"}`, requireID: true},
		{name: "full", requireID: true, body: `{"terminal_id":"452cf8a1","address":"Street 1","city":"Vienna","country":"AUT",
			"coordinates":{"latitude":"51.047599","longitude":"3.729944"},"customer_reference":"ChargePoint",
			"invoice_base_url":"https://somecompany.com/invoices","invoice_creator":"CPO","location_ids":[],
			"evse_uids":["E1","E2"],"party_id":"ABC","country_code":"NL","reference":"SN-1","postal_code":"1010",
			"state":"Wien","last_updated":"2018-12-10T17:16:15Z"}`},
		{name: "activation without id", body: `{"reference":"SN-1","location_ids":["L1"]}`},
		{name: "id required", body: `{"reference":"SN-1"}`, requireID: true, field: "terminal_id"},
		{name: "id too long", body: `{"terminal_id":"` + long + `"}`, requireID: true, field: "terminal_id"},
		{name: "id not ASCII", body: `{"terminal_id":"tërm"}`, requireID: true, field: "terminal_id"},
		{name: "address is CiString", body: `{"terminal_id":"T","address":"Straße 1"}`, requireID: true, field: "address"},
		{name: "city 45", body: `{"terminal_id":"T","city":"` + strings.Repeat("c", 46) + `"}`, requireID: true, field: "city"},
		{name: "postal code 10", body: `{"terminal_id":"T","postal_code":"12345678901"}`, requireID: true, field: "postal_code"},
		{name: "state 20", body: `{"terminal_id":"T","state":"` + strings.Repeat("s", 21) + `"}`, requireID: true, field: "state"},
		{name: "country alpha-3", body: `{"terminal_id":"T","country":"AT"}`, requireID: true, field: "country"},
		{name: "party without country", body: `{"terminal_id":"T","party_id":"ABC"}`, requireID: true, field: "country_code"},
		{name: "country without party", body: `{"terminal_id":"T","country_code":"NL"}`, requireID: true, field: "party_id"},
		{name: "bad party", body: `{"terminal_id":"T","country_code":"NL","party_id":"A-C"}`, requireID: true, field: "party_id"},
		{name: "coordinates", body: `{"terminal_id":"T","coordinates":{"latitude":"51.0","longitude":"3.729944"}}`, requireID: true, field: "coordinates.latitude"},
		{name: "invoice url", body: `{"terminal_id":"T","invoice_base_url":"ftp://x"}`, requireID: true, field: "invoice_base_url"},
		{name: "invoice creator", body: `{"terminal_id":"T","invoice_creator":"EMSP"}`, requireID: true, field: "invoice_creator"},
		{name: "reference 36", body: `{"terminal_id":"T","reference":"` + long + `"}`, requireID: true, field: "reference"},
		{name: "empty location id", body: `{"terminal_id":"T","location_ids":["L1",""]}`, requireID: true, field: "location_ids[1]"},
		{name: "long evse uid", body: `{"terminal_id":"T","evse_uids":["` + long + `"]}`, requireID: true, field: "evse_uids[0]"},
		{name: "duplicate location", body: `{"terminal_id":"T","location_ids":["L1","L2","l1"]}`, requireID: true, field: "location_ids[2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var term Terminal
			if err := Decode([]byte(tt.body), &term); err != nil {
				t.Fatal(err)
			}
			c := NewCheck("")
			term.Check(c, tt.requireID)
			assertField(t, c.Err(), tt.field)
		})
	}
}

func TestFinancialAdviceConfirmationCheck(t *testing.T) {
	t.Parallel()
	base := `"id":"F1","authorization_reference":"pp-1","currency":"EUR","capture_status_code":"SUCCESS","last_updated":"2018-12-10T17:16:15Z"`
	tests := []struct {
		name, body, field string
		excl, incl        string // expected amounts when valid
	}{
		{name: "2.2.1 price", body: `{` + base + `,"total_costs":{"excl_vat":4.00,"incl_vat":4.40},"eft_data":["Mastercard","AID: 1234"]}`, excl: "4", incl: "4.4"},
		{name: "2.3.0 price", body: `{` + base + `,"total_costs":{"before_taxes":4,"taxes":[{"name":"VAT","amount":0.4}]},"eft_data":["x"]}`, excl: "4", incl: "4.4"},
		{name: "2.3.0 price two taxes", body: `{` + base + `,"total_costs":{"before_taxes":"10.00","taxes":[{"name":"CGST","amount":0.9,"percentage":9},{"name":"SGST","amount":0.9}]}}`, excl: "10", incl: "11.8"},
		{name: "no eft_data", body: `{` + base + `,"total_costs":{"excl_vat":4}}`, excl: "4"},
		{name: "empty eft_data", body: `{` + base + `,"total_costs":{"excl_vat":4},"eft_data":[]}`, excl: "4"},
		{name: "mixed shapes", body: `{` + base + `,"total_costs":{"excl_vat":4,"before_taxes":4}}`, field: "total_costs"},
		{name: "missing total", body: `{` + base + `}`, field: "total_costs"},
		{name: "empty total", body: `{` + base + `,"total_costs":{}}`, field: "total_costs.excl_vat"},
		{name: "negative", body: `{` + base + `,"total_costs":{"excl_vat":-1}}`, field: "total_costs.excl_vat"},
		{name: "tax without name", body: `{` + base + `,"total_costs":{"before_taxes":1,"taxes":[{"amount":1}]}}`, field: "total_costs.taxes[0].name"},
		{name: "tax without amount", body: `{` + base + `,"total_costs":{"before_taxes":1,"taxes":[{"name":"VAT"}]}}`, field: "total_costs.taxes[0].amount"},
		{name: "bad status", body: `{"id":"F1","authorization_reference":"pp-1","currency":"EUR","capture_status_code":"OK","last_updated":"2018-12-10T17:16:15Z","total_costs":{"excl_vat":1}}`, field: "capture_status_code"},
		{name: "bad currency", body: `{"id":"F1","authorization_reference":"pp-1","currency":"EURO","capture_status_code":"SUCCESS","last_updated":"2018-12-10T17:16:15Z","total_costs":{"excl_vat":1}}`, field: "currency"},
		{name: "empty eft line", body: `{` + base + `,"total_costs":{"excl_vat":4},"eft_data":["a",""]}`, field: "eft_data[1]"},
		{name: "long eft line", body: `{` + base + `,"total_costs":{"excl_vat":4},"eft_data":["` + strings.Repeat("e", 256) + `"]}`, field: "eft_data[0]"},
		{name: "reference 36", body: `{"id":"F1","authorization_reference":"` + strings.Repeat("r", 37) + `","currency":"EUR","capture_status_code":"SUCCESS","last_updated":"2018-12-10T17:16:15Z","total_costs":{"excl_vat":1}}`, field: "authorization_reference"},
		{name: "no last_updated", body: `{"id":"F1","authorization_reference":"r","currency":"EUR","capture_status_code":"SUCCESS","total_costs":{"excl_vat":1}}`, field: "last_updated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f FinancialAdviceConfirmation
			err := Decode([]byte(tt.body), &f)
			if err == nil {
				c := NewCheck("")
				f.Check(c)
				err = c.Err()
			}
			assertField(t, err, tt.field)
			if tt.field != "" {
				return
			}
			if got := f.TotalCosts.Excl().String(); got != tt.excl {
				t.Errorf("excl = %s, want %s", got, tt.excl)
			}
			incl, ok := f.TotalCosts.Incl()
			if tt.incl == "" && ok {
				t.Errorf("incl = %s, want none", incl)
			}
			if tt.incl != "" && incl.String() != tt.incl {
				t.Errorf("incl = %s, want %s", incl, tt.incl)
			}
		})
	}
}

func assertField(t *testing.T, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("error %v, want one naming %s", err, field)
	}
	if e.Field != field {
		t.Fatalf("field %q (%v), want %q", e.Field, e, field)
	}
}

func TestAdviceForVersion(t *testing.T) {
	t.Parallel()
	doc, err := ParseObject([]byte(`{"id":"F1","total_costs":{"excl_vat":4.00,"incl_vat":4.40},"extra":1}`))
	if err != nil {
		t.Fatal(err)
	}
	b230, _ := MarshalObject(AdviceFor(doc, "2.3.0"))
	if want := `{"eft_data":[],"extra":1,"id":"F1","total_costs":{"before_taxes":4,"taxes":[{"amount":0.4,"name":"VAT"}]}}`; string(b230) != want {
		t.Errorf("2.3.0:\n got %s\nwant %s", b230, want)
	}
	b221, _ := MarshalObject(AdviceFor(doc, "2.2.1"))
	if want := `{"eft_data":[],"extra":1,"id":"F1","total_costs":{"excl_vat":4.00,"incl_vat":4.40}}`; string(b221) != want {
		t.Errorf("2.2.1:\n got %s\nwant %s", b221, want)
	}
	// Back from 2.3.0 to 2.2.1, taxes summed.
	doc2, _ := ParseObject(b230)
	back, _ := MarshalObject(AdviceFor(doc2, "2.2.1"))
	if want := `{"eft_data":[],"extra":1,"id":"F1","total_costs":{"excl_vat":4,"incl_vat":4.4}}`; string(back) != want {
		t.Errorf("round trip:\n got %s\nwant %s", back, want)
	}
	// The stored document is not changed.
	if _, ok := doc["eft_data"]; ok {
		t.Error("AdviceFor changed its input")
	}
}

func TestPricesTo230(t *testing.T) {
	t.Parallel()
	doc, _ := ParseObject([]byte(`{"total_cost":{"excl_vat":10,"incl_vat":11.8},"total_energy_cost":{"excl_vat":2},"kwh":3}`))
	PricesTo230(doc, CDRPriceFields...)
	b, _ := MarshalObject(doc)
	want := `{"kwh":3,"total_cost":{"before_taxes":10,"taxes":[{"amount":1.8,"name":"VAT"}]},"total_energy_cost":{"before_taxes":2}}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	var p PriceAny
	if err := json.Unmarshal([]byte(`{"before_taxes":2}`), &p); err != nil || p.V230 == nil {
		t.Fatalf("2.3.0 price without taxes: %v %+v", err, p)
	}
	if _, ok := p.Incl(); ok {
		t.Error("a 2.3.0 price without taxes has no known total with taxes")
	}
}

func TestTariffPreauthorizeAmount(t *testing.T) {
	t.Parallel()
	body := `{"country_code":"NL","party_id":"TNM","id":"T1","currency":"EUR","preauthorize_amount":%s,
		"elements":[{"price_components":[{"type":"ENERGY","price":0.3,"step_size":1}]}],"last_updated":"2026-01-01T00:00:00Z"}`
	for _, tt := range []struct{ amount, field string }{{"50", ""}, {"50.5", ""}, {"-1", "preauthorize_amount"}} {
		var tr Tariff
		if err := Decode([]byte(strings.Replace(body, "%s", tt.amount, 1)), &tr); err != nil {
			t.Fatal(err)
		}
		c := NewCheck("")
		tr.Check(c)
		assertField(t, c.Err(), tt.field)
		if tt.field == "" {
			out, _ := json.Marshal(tr)
			if !strings.Contains(string(out), `"preauthorize_amount":`+tt.amount) {
				t.Errorf("preauthorize_amount lost: %s", out)
			}
		}
	}
}
