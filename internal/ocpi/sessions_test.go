package ocpi_test

import (
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

const validToken = `{"country_code":"DE","party_id":"EMS","uid":"012345678","type":"RFID","contract_id":"DE8ACC12E46L89",
  "visual_number":"DF000-2001-8999","issuer":"TheNewMotion","group_id":"DF000-2001-8999","valid":true,
  "whitelist":"ALLOWED","language":"it","default_profile_type":"GREEN",
  "energy_contract":{"supplier_name":"Greenpeace Energy eG","contract_id":"0123456789"},
  "last_updated":"2026-02-27T10:06:12Z"}`

const validSession = `{"country_code":"NL","party_id":"CPO","id":"101","start_date_time":"2026-06-29T22:39:09Z",
  "kwh":0.00,"cdr_token":{"country_code":"DE","party_id":"EMS","uid":"012345678","type":"RFID","contract_id":"DE8ACC12E46L89"},
  "auth_method":"WHITELIST","location_id":"LOC1","evse_uid":"3256","connector_id":"1","currency":"EUR",
  "charging_periods":[{"start_date_time":"2026-06-29T22:39:09Z","dimensions":[{"type":"ENERGY","volume":120},{"type":"POWER","volume":11.5}],"tariff_id":"12"}],
  "total_cost":{"excl_vat":0.10,"incl_vat":0.12},"status":"ACTIVE","last_updated":"2026-06-29T22:39:09Z","x_vendor":{"k":1.50}}`

const validCDR = `{"country_code":"NL","party_id":"CPO","id":"12345","start_date_time":"2026-06-29T21:39:09Z",
  "end_date_time":"2026-06-29T23:37:32Z","session_id":"101",
  "cdr_token":{"country_code":"DE","party_id":"EMS","uid":"012345678","type":"RFID","contract_id":"DE8ACC12E46L89"},
  "auth_method":"WHITELIST","cdr_location":{"id":"LOC1","name":"Gent Zuid","address":"F.Rooseveltlaan 3A","city":"Gent",
  "postal_code":"9000","country":"BEL","coordinates":{"latitude":"3.729944","longitude":"51.047599"},"evse_uid":"3256",
  "evse_id":"BE*BEC*E041503003","connector_id":"1","connector_standard":"IEC_62196_T2","connector_format":"SOCKET",
  "connector_power_type":"AC_1_PHASE"},"currency":"EUR",
  "tariffs":[{"country_code":"BE","party_id":"BEC","id":"12","currency":"EUR","elements":[{"price_components":[{"type":"TIME","price":2.00,"vat":10.0,"step_size":300}]}],"last_updated":"2026-02-02T14:15:01Z"}],
  "charging_periods":[{"start_date_time":"2026-06-29T21:39:09Z","dimensions":[{"type":"TIME","volume":1.973}],"tariff_id":"12"}],
  "signed_data":{"encoding_method":"OCMF","signed_values":[{"nature":"Start","plain_data":"x","signed_data":"eA=="}]},
  "total_cost":{"excl_vat":4.00,"incl_vat":4.40},"total_energy":15.342,"total_time":1.973,"total_time_cost":{"excl_vat":4.00,"incl_vat":4.40},
  "last_updated":"2026-06-29T23:38:00Z"}`

// canonical decodes raw into v and returns its canonical form.
func canonical(t *testing.T, raw []byte, v any) []byte {
	t.Helper()
	if err := ocpi.Decode(raw, v); err != nil {
		t.Fatal(err)
	}
	out, err := ocpi.Canonical(raw, v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkInto(raw []byte, v interface{ Check(*ocpi.Check) }) error {
	if err := ocpi.Decode(raw, v); err != nil {
		return err
	}
	c := ocpi.NewCheck("")
	v.Check(c)
	return c.Err()
}

type fieldCase struct {
	name  string
	edit  func(m map[string]any)
	field string
}

// runFieldCases checks that base is a valid T and that each case's edit of
// it is refused as EINVALID naming the case's field.
func runFieldCases[T any, P interface {
	*T
	Check(*ocpi.Check)
}](t *testing.T, base string, cases []fieldCase) {
	t.Helper()
	if err := checkInto([]byte(base), P(new(T))); err != nil {
		t.Fatalf("valid object rejected: %v", err)
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			err := checkInto(mutate(t, base, tt.edit), P(new(T)))
			e, ok := err.(*ocpi.Error)
			if !ok || e.Code != ocpi.EINVALID {
				t.Fatalf("got %v, want EINVALID on %s", err, tt.field)
			}
			if e.Field != tt.field {
				t.Fatalf("field = %q (%s), want %q", e.Field, e.Issue, tt.field)
			}
		})
	}
}

func sub(m map[string]any, k string) map[string]any { return m[k].(map[string]any) }
func item(m map[string]any, k string, i int) map[string]any {
	return m[k].([]any)[i].(map[string]any)
}

func TestTokenValidation(t *testing.T) {
	t.Parallel()
	runFieldCases[ocpi.Token](t, validToken, []fieldCase{
		{"uid 37", func(m map[string]any) { m["uid"] = strings.Repeat("u", 37) }, "uid"},
		{"uid missing", func(m map[string]any) { delete(m, "uid") }, "uid"},
		{"type", func(m map[string]any) { m["type"] = "EMAID" }, "type"},
		{"contract_id 37", func(m map[string]any) { m["contract_id"] = strings.Repeat("c", 37) }, "contract_id"},
		{"visual_number 65", func(m map[string]any) { m["visual_number"] = strings.Repeat("v", 65) }, "visual_number"},
		{"issuer missing", func(m map[string]any) { delete(m, "issuer") }, "issuer"},
		{"group_id non-ascii", func(m map[string]any) { m["group_id"] = "grüppe" }, "group_id"},
		{"valid missing", func(m map[string]any) { delete(m, "valid") }, "valid"},
		{"valid string", func(m map[string]any) { m["valid"] = "true" }, "valid"},
		{"whitelist", func(m map[string]any) { m["whitelist"] = "SOMETIMES" }, "whitelist"},
		{"language", func(m map[string]any) { m["language"] = "ita" }, "language"},
		{"profile", func(m map[string]any) { m["default_profile_type"] = "SLOW" }, "default_profile_type"},
		{"energy supplier", func(m map[string]any) { delete(sub(m, "energy_contract"), "supplier_name") }, "energy_contract.supplier_name"},
		{"last_updated", func(m map[string]any) { m["last_updated"] = "now" }, "last_updated"},
	})
}

func TestSessionValidation(t *testing.T) {
	t.Parallel()
	runFieldCases[ocpi.Session](t, validSession, []fieldCase{
		{"id 37", func(m map[string]any) { m["id"] = strings.Repeat("i", 37) }, "id"},
		{"party id", func(m map[string]any) { m["party_id"] = "CP" }, "party_id"},
		{"kwh missing", func(m map[string]any) { delete(m, "kwh") }, "kwh"},
		{"kwh text", func(m map[string]any) { m["kwh"] = "lots" }, "kwh"},
		{"end before start", func(m map[string]any) { m["end_date_time"] = "2026-06-29T22:00:00Z" }, "end_date_time"},
		{"cdr_token missing", func(m map[string]any) { delete(m, "cdr_token") }, "cdr_token"},
		{"cdr_token party", func(m map[string]any) { delete(sub(m, "cdr_token"), "party_id") }, "cdr_token.party_id"},
		{"cdr_token type", func(m map[string]any) { sub(m, "cdr_token")["type"] = "CARD" }, "cdr_token.type"},
		{"auth method", func(m map[string]any) { m["auth_method"] = "QR" }, "auth_method"},
		{"authorization_reference 37", func(m map[string]any) { m["authorization_reference"] = strings.Repeat("a", 37) }, "authorization_reference"},
		{"evse_uid missing", func(m map[string]any) { delete(m, "evse_uid") }, "evse_uid"},
		{"meter 256", func(m map[string]any) { m["meter_id"] = strings.Repeat("m", 256) }, "meter_id"},
		{"currency", func(m map[string]any) { m["currency"] = "€" }, "currency"},
		{"period no dimensions", func(m map[string]any) { item(m, "charging_periods", 0)["dimensions"] = []any{} }, "charging_periods[0].dimensions"},
		{"dimension type", func(m map[string]any) {
			item(item(m, "charging_periods", 0), "dimensions", 1)["type"] = "FLAT"
		}, "charging_periods[0].dimensions[1].type"},
		{"dimension volume", func(m map[string]any) {
			delete(item(item(m, "charging_periods", 0), "dimensions", 0), "volume")
		}, "charging_periods[0].dimensions[0].volume"},
		{"total cost", func(m map[string]any) { m["total_cost"] = map[string]any{"incl_vat": 1} }, "total_cost.excl_vat"},
		{"status RESERVED", func(m map[string]any) { m["status"] = "RESERVED" }, "status"},
	})
}

func TestCDRValidation(t *testing.T) {
	t.Parallel()
	loc := func(m map[string]any) map[string]any { return sub(m, "cdr_location") }
	runFieldCases[ocpi.CDR](t, validCDR, []fieldCase{
		{"id 37 without credit", func(m map[string]any) { m["id"] = strings.Repeat("i", 37) }, "id"},
		{"id 40 credit", func(m map[string]any) {
			m["id"], m["credit"], m["credit_reference_id"] = strings.Repeat("i", 40), true, "12344"
		}, "id"},
		{"credit without reference", func(m map[string]any) { m["credit"] = true }, "credit_reference_id"},
		{"reference without credit", func(m map[string]any) { m["credit_reference_id"] = "1" }, "credit_reference_id"},
		{"end missing", func(m map[string]any) { delete(m, "end_date_time") }, "end_date_time"},
		{"location address 46", func(m map[string]any) { loc(m)["address"] = strings.Repeat("a", 46) }, "cdr_location.address"},
		{"location state 21", func(m map[string]any) { loc(m)["state"] = strings.Repeat("s", 21) }, "cdr_location.state"},
		{"location evse_id 49", func(m map[string]any) { loc(m)["evse_id"] = strings.Repeat("e", 49) }, "cdr_location.evse_id"},
		{"location standard", func(m map[string]any) { loc(m)["connector_standard"] = "TYPE2" }, "cdr_location.connector_standard"},
		{"location coordinates", func(m map[string]any) { delete(loc(m), "coordinates") }, "cdr_location.coordinates"},
		{"tariff invalid", func(m map[string]any) { delete(item(m, "tariffs", 0), "currency") }, "tariffs[0].currency"},
		{"no periods", func(m map[string]any) { m["charging_periods"] = []any{} }, "charging_periods"},
		{"session-only dimension", func(m map[string]any) {
			item(item(m, "charging_periods", 0), "dimensions", 0)["type"] = "STATE_OF_CHARGE"
		}, "charging_periods[0].dimensions[0].type"},
		{"signed nature 33", func(m map[string]any) {
			item(sub(m, "signed_data"), "signed_values", 0)["nature"] = strings.Repeat("n", 33)
		}, "signed_data.signed_values[0].nature"},
		{"plain data 5001", func(m map[string]any) {
			item(sub(m, "signed_data"), "signed_values", 0)["plain_data"] = strings.Repeat("p", 5001)
		}, "signed_data.signed_values[0].plain_data"},
		{"total cost missing", func(m map[string]any) { delete(m, "total_cost") }, "total_cost"},
		{"negative cost", func(m map[string]any) { m["total_cost"] = map[string]any{"excl_vat": -4} }, "total_cost.excl_vat"},
		{"total energy missing", func(m map[string]any) { delete(m, "total_energy") }, "total_energy"},
		{"parking over total", func(m map[string]any) { m["total_parking_time"] = 3 }, "total_parking_time"},
		{"remark 256", func(m map[string]any) { m["remark"] = strings.Repeat("r", 256) }, "remark"},
		{"invoice 40", func(m map[string]any) { m["invoice_reference_id"] = strings.Repeat("v", 40) }, "invoice_reference_id"},
	})
	// The erratum length is accepted; a credit CDR may be negative and use 39.
	ok := mutate(t, validCDR, func(m map[string]any) {
		item(sub(m, "signed_data"), "signed_values", 0)["plain_data"] = strings.Repeat("p", 5000)
		m["id"], m["credit"], m["credit_reference_id"] = "12345-CREDIT-"+strings.Repeat("x", 26), true, "12345"
		m["total_cost"] = map[string]any{"excl_vat": -4, "incl_vat": -4.4}
	})
	if err := checkInto(ok, &ocpi.CDR{}); err != nil {
		t.Fatalf("credit CDR rejected: %v", err)
	}
}

func TestCommandValidation(t *testing.T) {
	t.Parallel()
	start := `{"response_url":"https://emsp.example/cb/1","token":` + validToken + `,"location_id":"LOC1","evse_uid":"E1","connector_id":"1","authorization_reference":"ref-1"}`
	runFieldCases[ocpi.StartSession](t, start, []fieldCase{
		{"response_url relative", func(m map[string]any) { m["response_url"] = "/cb" }, "response_url"},
		{"response_url missing", func(m map[string]any) { delete(m, "response_url") }, "response_url"},
		{"token missing", func(m map[string]any) { delete(m, "token") }, "token"},
		{"token whitelist", func(m map[string]any) { sub(m, "token")["whitelist"] = "X" }, "token.whitelist"},
		{"connector without evse", func(m map[string]any) { delete(m, "evse_uid") }, "evse_uid"},
		{"location 37", func(m map[string]any) { m["location_id"] = strings.Repeat("l", 37) }, "location_id"},
	})
	reserve := `{"response_url":"https://emsp.example/cb/2","token":` + validToken + `,"expiry_date":"2026-06-29T23:00:00Z","reservation_id":"R1","location_id":"LOC1"}`
	runFieldCases[ocpi.ReserveNow](t, reserve, []fieldCase{
		{"expiry missing", func(m map[string]any) { delete(m, "expiry_date") }, "expiry_date"},
		{"reservation int", func(m map[string]any) { m["reservation_id"] = 5 }, "reservation_id"},
	})
	runFieldCases[ocpi.StopSession](t, `{"response_url":"https://e.example/x","session_id":"S1"}`, []fieldCase{
		{"session missing", func(m map[string]any) { delete(m, "session_id") }, "session_id"},
	})
	runFieldCases[ocpi.UnlockConnector](t, `{"response_url":"https://e.example/x","location_id":"L","evse_uid":"E","connector_id":"1"}`, []fieldCase{
		{"connector missing", func(m map[string]any) { delete(m, "connector_id") }, "connector_id"},
	})
	runFieldCases[ocpi.CancelReservation](t, `{"response_url":"https://e.example/x","reservation_id":"R1"}`, []fieldCase{
		{"reservation missing", func(m map[string]any) { delete(m, "reservation_id") }, "reservation_id"},
	})
	runFieldCases[ocpi.CommandResponse](t, `{"result":"ACCEPTED","timeout":30}`, []fieldCase{
		{"timeout missing", func(m map[string]any) { delete(m, "timeout") }, "timeout"},
		{"timeout negative", func(m map[string]any) { m["timeout"] = -1 }, "timeout"},
		{"result TIMEOUT is a result, not a response", func(m map[string]any) { m["result"] = "TIMEOUT" }, "result"},
	})
	runFieldCases[ocpi.CommandResult](t, `{"result":"EVSE_OCCUPIED","message":[{"language":"en","text":"busy"}]}`, []fieldCase{
		{"result", func(m map[string]any) { m["result"] = "UNKNOWN_SESSION" }, "result"},
		{"message language", func(m map[string]any) { item(m, "message", 0)["language"] = "english" }, "message[0].language"},
	})
}

func TestChargingProfileValidation(t *testing.T) {
	t.Parallel()
	set := `{"response_url":"https://scsp.example/r/1","charging_profile":{"charging_rate_unit":"W","min_charging_rate":1000.5,
	  "charging_profile_period":[{"start_period":0,"limit":11000},{"start_period":1800,"limit":7400.5}]}}`
	prof := func(m map[string]any) map[string]any { return sub(m, "charging_profile") }
	runFieldCases[ocpi.SetChargingProfile](t, set, []fieldCase{
		{"unit", func(m map[string]any) { prof(m)["charging_rate_unit"] = "kW" }, "charging_profile.charging_rate_unit"},
		{"two decimals", func(m map[string]any) { item(prof(m), "charging_profile_period", 1)["limit"] = 7400.55 }, "charging_profile.charging_profile_period[1].limit"},
		{"periods out of order", func(m map[string]any) { item(prof(m), "charging_profile_period", 1)["start_period"] = 0 }, "charging_profile.charging_profile_period[1].start_period"},
		{"min rate negative", func(m map[string]any) { prof(m)["min_charging_rate"] = -1 }, "charging_profile.min_charging_rate"},
		{"response_url", func(m map[string]any) { delete(m, "response_url") }, "response_url"},
	})
	runFieldCases[ocpi.ActiveChargingProfileResult](t, `{"result":"ACCEPTED","profile":{"start_date_time":"2026-01-01T00:00:00Z","charging_profile":{"charging_rate_unit":"A"}}}`,
		[]fieldCase{
			{"result", func(m map[string]any) { m["result"] = "TOO_OFTEN" }, "result"},
			{"profile start", func(m map[string]any) { delete(sub(m, "profile"), "start_date_time") }, "profile.start_date_time"},
		})
	runFieldCases[ocpi.ChargingProfileResponse](t, `{"result":"ACCEPTED","timeout":15}`, []fieldCase{
		{"result", func(m map[string]any) { m["result"] = "UNKNOWN" }, "result"},
	})
}

func TestSessionCanonicalKeepsUnknownFieldsAndDigits(t *testing.T) {
	t.Parallel()
	out := canonical(t, []byte(validSession), &ocpi.Session{})
	for _, want := range []string{`"x_vendor":{"k":1.50}`, `"kwh":0`, `"excl_vat":0.1`, `"incl_vat":0.12`, `"start_date_time":"2026-06-29T22:39:09Z"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("canonical session lacks %s: %s", want, out)
		}
	}
}

// fuzzDecode decodes, validates and canonicalizes arbitrary input: nothing
// may panic, and whatever passes validation must survive its own canonical
// form unchanged.
func fuzzDecode[T any, P interface {
	*T
	Check(*ocpi.Check)
}](t *testing.T, raw []byte) {
	var v T
	if err := checkInto(raw, P(&v)); err != nil {
		var e *ocpi.Error
		if !asError(err, &e) {
			t.Fatalf("decode returned a non-OCPI error: %v", err)
		}
		return
	}
	canon, err := ocpi.Canonical(raw, P(&v))
	if err != nil {
		t.Fatalf("canonical form of a valid object: %v", err)
	}
	var again T
	if err := checkInto(canon, P(&again)); err != nil {
		t.Fatalf("canonical form does not validate: %v\n%s", err, canon)
	}
	canon2, err := ocpi.Canonical(canon, P(&again))
	if err != nil || string(canon2) != string(canon) {
		t.Fatalf("canonical form is not stable:\n%s\n%s", canon, canon2)
	}
}

func asError(err error, e **ocpi.Error) bool {
	v, ok := err.(*ocpi.Error)
	*e = v
	return ok
}

func FuzzSessionDecode(f *testing.F) {
	f.Add([]byte(validSession))
	f.Add([]byte(`{"kwh":"1e9999999"}`))
	f.Add([]byte(`{"charging_periods":[{"dimensions":[{}]}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) { fuzzDecode[ocpi.Session](t, raw) })
}

func FuzzCDRDecode(f *testing.F) {
	f.Add([]byte(validCDR))
	f.Add([]byte(`{"credit":true,"credit_reference_id":"x","total_cost":{"excl_vat":-1}}`))
	f.Fuzz(func(t *testing.T, raw []byte) { fuzzDecode[ocpi.CDR](t, raw) })
}
