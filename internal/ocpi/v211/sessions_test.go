package v211_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
)

const token221 = `{"country_code":"NL","party_id":"EMS","uid":"T1","type":"RFID","contract_id":"NL-EMS-C1","visual_number":"1234",
  "issuer":"eMSP","valid":true,"whitelist":"ALLOWED","language":"nl","last_updated":"2026-01-01T00:00:00Z"}`

func TestTokenRoundTrip(t *testing.T) {
	t.Parallel()
	in := decode[ocpi.Token](t, []byte(token221))
	lt, loss := v211.FromToken(&in)
	if len(loss) > 0 || lt.AuthID != "NL-EMS-C1" {
		t.Fatalf("%+v %v", lt, loss)
	}
	validate211(t, "token", lt)
	out := lt.To221("NL", "EMS")
	if diff := cmp.Diff(canonical(t, in), canonical(t, out)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	in.Type, in.GroupID, in.DefaultProfileType = "APP_USER", "G1", "GREEN"
	lt, loss = v211.FromToken(&in)
	if lt.Type != "OTHER" || !slices.Equal(sorted(loss.Fields()), []string{"default_profile_type", "group_id", "type"}) {
		t.Errorf("%+v %v", lt, loss)
	}
	// 2.0: allow_whitelist, no language.
	b, _ := v211.Encode(v211.V20, "tokens", "", lt)
	if s := string(b); !strings.Contains(s, `"allow_whitelist":true`) || strings.Contains(s, "whitelist\":\"") || strings.Contains(s, "language") {
		t.Errorf("2.0 token %s", b)
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }

const session221 = `{"country_code":"IN","party_id":"CPO","id":"S1","start_date_time":"2026-01-01T10:00:00.5Z","end_date_time":"2026-01-01T11:00:00Z",
  "kwh":12.5,"cdr_token":{"country_code":"NL","party_id":"EMS","uid":"T1","type":"RFID","contract_id":"NL-EMS-C1"},
  "auth_method":"WHITELIST","location_id":"LOC1","evse_uid":"E1","connector_id":"1","currency":"INR",
  "charging_periods":[{"start_date_time":"2026-01-01T10:00:00Z","dimensions":[{"type":"ENERGY","volume":12.5},{"type":"STATE_OF_CHARGE","volume":80}],"tariff_id":"T1"}],
  "total_cost":{"excl_vat":231.25,"incl_vat":272.88},"status":"COMPLETED","last_updated":"2026-01-01T11:00:00Z"}`

// TestSessionConversion: a 2.2.1 session becomes a 2.1.1 one with its
// location trimmed to the EVSE and connector in use, the contract as
// auth_id, the cost excluding VAT; what 2.1.1 lacks is reported; back in
// 2.2.1 with the token the hub finds, the identity and place are the same.
func TestSessionConversion(t *testing.T) {
	t.Parallel()
	s := decode[ocpi.Session](t, []byte(session221))
	loc := decode221(t, location221)
	loc.ID = "LOC1"
	second := loc.EVSEs[0]
	second.UID = "E2"
	loc.EVSEs = append(loc.EVSEs, second)

	ls, loss, ok := v211.FromSession(&s, &loc)
	if !ok {
		t.Fatalf("not converted: %v", loss)
	}
	validate211(t, "session", ls)
	if ls.AuthID != "NL-EMS-C1" || ls.TotalCost.String() != "231.25" || len(ls.Location.EVSEs) != 1 || ls.Location.EVSEs[0].UID != "E1" ||
		ls.StartDateTime.String() != "2026-01-01T10:00:00Z" || len(ls.ChargingPeriods[0].Dimensions) != 1 {
		t.Errorf("converted %+v", ls)
	}
	for _, f := range []string{"cdr_token.uid", "total_cost.incl_vat", "charging_periods[].tariff_id", "charging_periods[].dimensions[]"} {
		if !slices.Contains(loss.Fields(), f) {
			t.Errorf("loss lacks %s: %v", f, loss)
		}
	}
	back := reread[v211.Session](t, ls)
	out, _ := back.To221("IN", "CPO", s.CdrToken)
	if err := checkErr(&out); err != nil {
		t.Fatalf("back in 2.2.1: %v", err)
	}
	if out.LocationID != "LOC1" || out.EVSEUID != "E1" || out.ConnectorID != "1" || *out.CdrToken != *s.CdrToken ||
		out.TotalCost.ExclVAT.String() != "231.25" || out.TotalCost.InclVAT != nil {
		t.Errorf("back %+v", out)
	}

	// What cannot be a 2.1.1 session is not sent.
	s.Status = "RESERVATION"
	if _, _, ok := v211.FromSession(&s, &loc); ok {
		t.Error("a reservation sent as a 2.1.1 session")
	}
	s.Status = "ACTIVE"
	if _, loss, ok := v211.FromSession(&s, nil); ok || !strings.Contains(loss.String(), "not in the hub's directory") {
		t.Errorf("a session without a known location: %v", loss)
	}
	s.AuthMethod = "COMMAND"
	if ls, loss, _ := v211.FromSession(&s, &loc); ls.AuthMethod != "AUTH_REQUEST" || !slices.Contains(loss.Fields(), "auth_method") {
		t.Errorf("COMMAND: %s %v", ls.AuthMethod, loss)
	}
}

// TestSessionPatch converts session PATCHes field by field both ways.
func TestSessionPatch(t *testing.T) {
	t.Parallel()
	p := mustParse(t, `{"kwh":5,"total_cost":{"excl_vat":10,"incl_vat":12},"end_date_time":"2026-01-01T11:00:00.9Z","status":"COMPLETED","last_updated":"2026-01-01T11:00:00Z"}`)
	out, loss, ok := v211.SessionPatchFrom221(p, nil, "", "")
	if !ok || out["end_datetime"] != "2026-01-01T11:00:00Z" || out["end_date_time"] != nil || toJSON(out["total_cost"]) != "10" || len(loss) != 0 {
		t.Errorf("2.2.1 → 2.1.1: %v %v", out, loss)
	}
	if _, _, ok := v211.SessionPatchFrom221(mustParse(t, `{"status":"RESERVATION","last_updated":"2026-01-01T11:00:00Z"}`), nil, "", ""); ok {
		t.Error("a change to RESERVATION sent")
	}
	in := mustParse(t, `{"auth_id":"NL-EMS-C1","total_cost":3.5,"start_datetime":"2026-01-01T10:00:00Z"}`)
	got, _, err := v211.SessionPatchTo221(in, func(authID string) (*ocpi.CdrToken, error) {
		return &ocpi.CdrToken{CountryCode: "NL", PartyID: "EMS", UID: "T1", Type: "RFID", ContractID: authID}, nil
	})
	if err != nil || toJSON(got["total_cost"]) != `{"excl_vat":3.5}` || got["start_date_time"] == nil || got["cdr_token"] == nil {
		t.Errorf("2.1.1 → 2.2.1: %v %v", got, err)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

const cdr221 = `{"country_code":"IN","party_id":"CPO","id":"CDR1","start_date_time":"2026-01-01T10:00:00Z","end_date_time":"2026-01-01T11:00:00Z",
  "session_id":"S1","cdr_token":{"country_code":"NL","party_id":"EMS","uid":"T1","type":"RFID","contract_id":"NL-EMS-C1"},
  "auth_method":"WHITELIST","cdr_location":{"id":"LOC1","address":"Stationsplein 1","city":"Amsterdam","postal_code":"1012AB","country":"NLD",
  "coordinates":{"latitude":"52.378900","longitude":"4.900000"},"evse_uid":"E1","evse_id":"NL*TNM*E1","connector_id":"1",
  "connector_standard":"IEC_62196_T2","connector_format":"SOCKET","connector_power_type":"AC_3_PHASE"},
  "currency":"EUR","charging_periods":[{"start_date_time":"2026-01-01T10:00:00Z","dimensions":[{"type":"ENERGY","volume":12.5}]}],
  "total_cost":{"excl_vat":5,"incl_vat":6.05},"total_energy_cost":{"excl_vat":5},"total_energy":12.5,"total_time":1,"last_updated":"2026-01-01T11:00:00Z"}`

// TestCDRConversion: a CDR converts with its location from the directory
// (or rebuilt from cdr_location without inventing voltage or amperage);
// credit CDRs are not sent; back in 2.2.1 the cdr_location is complete.
func TestCDRConversion(t *testing.T) {
	t.Parallel()
	d := decode[ocpi.CDR](t, []byte(cdr221))
	loc := decode221(t, location221)
	loc.ID = "LOC1"
	lc, loss, ok := v211.FromCDR(&d, &loc)
	if !ok {
		t.Fatalf("not converted: %v", loss)
	}
	validate211(t, "cdr", lc)
	if lc.StopDateTime.String() != "2026-01-01T11:00:00Z" || lc.TotalCost.String() != "5" || *lc.Location.EVSEs[0].Connectors[0].Voltage != 230 {
		t.Errorf("converted %+v", lc)
	}
	for _, f := range []string{"session_id", "total_energy_cost", "total_cost.incl_vat"} {
		if !slices.Contains(loss.Fields(), f) {
			t.Errorf("loss lacks %s: %v", f, loss)
		}
	}
	// Without the directory's copy.
	lc, loss, ok = v211.FromCDR(&d, nil)
	if !ok || lc.Location.EVSEs[0].Connectors[0].Voltage != nil || lc.Location.Type != "UNKNOWN" || !slices.Contains(loss.Fields(), "location.evses[].connectors[].voltage") {
		t.Errorf("rebuilt location %+v %v", lc.Location, loss)
	}
	back := reread[v211.CDR](t, lc)
	out, _, err := back.To221("IN", "CPO", d.CdrToken, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkErr(&out); err != nil {
		t.Errorf("back in 2.2.1: %v", err)
	}
	if diff := cmp.Diff(d.CdrLocation, out.CdrLocation); diff != "" {
		t.Errorf("cdr_location back in 2.2.1 (-want +got):\n%s", diff)
	}
	back.Location.EVSEs[0].EVSEID = ""
	if _, _, err := back.To221("IN", "CPO", d.CdrToken, ""); err == nil || !strings.Contains(err.Error(), "evse_id") {
		t.Errorf("no evse_id anywhere: %v", err)
	}
	credit := true
	d.Credit, d.CreditReferenceID = &credit, "CDR0"
	if _, _, ok := v211.FromCDR(&d, &loc); ok {
		t.Error("a credit CDR sent to 2.1.1")
	}
	// 2.0: total_usage instead of the totals, and back.
	d.Credit, d.CreditReferenceID = nil, ""
	lc, _, _ = v211.FromCDR(&d, &loc)
	b20, _ := v211.Encode(v211.V20, "cdrs", "", lc)
	if s := string(b20); !strings.Contains(s, `"total_usage":[{"type":"ENERGY","volume":"12.5"}`) || strings.Contains(s, "total_energy") {
		t.Errorf("2.0 CDR %s", b20)
	}
	var from20 v211.CDR
	if err := v211.Decode(v211.V20, "cdrs", "", b20, d.LastUpdated.Time, &from20); err != nil || from20.TotalEnergy.String() != "12.5" || from20.TotalTime.String() != "1" {
		t.Errorf("2.0 CDR read back: %v %+v", err, from20)
	}
}

// TestCommandConversion: commands to a 2.1.1 CPO and results both ways.
func TestCommandConversion(t *testing.T) {
	t.Parallel()
	start := `{"response_url":"https://hub.example/ocpi/2.1.1/cpo/commands/START_SESSION/1","token":` + token221 + `,"location_id":"LOC1","evse_uid":"E1","connector_id":"1","authorization_reference":"R1"}`
	b, loss, ok, err := v211.CommandFrom221("START_SESSION", []byte(start))
	if err != nil || !ok || strings.Contains(string(b), "connector_id") || !strings.Contains(string(b), `"auth_id":"NL-EMS-C1"`) ||
		!slices.Equal(sorted(loss.Fields()), []string{"authorization_reference", "connector_id"}) {
		t.Errorf("START_SESSION: %s %v %v", b, loss, err)
	}
	if _, _, ok, _ := v211.CommandFrom221("CANCEL_RESERVATION", []byte(`{"response_url":"https://x.example/r","reservation_id":"1"}`)); ok {
		t.Error("CANCEL_RESERVATION sent to 2.1.1")
	}
	if _, loss, ok, _ := v211.CommandFrom221("RESERVE_NOW", []byte(`{"response_url":"https://x.example/r","token":`+token221+`,"expiry_date":"2026-01-01T12:00:00Z","reservation_id":"R-9","location_id":"L"}`)); ok || len(loss) == 0 {
		t.Error("a non-integer reservation id sent to 2.1.1")
	}
	b, _, ok, _ = v211.CommandFrom221("RESERVE_NOW", []byte(`{"response_url":"https://x.example/r","token":`+token221+`,"expiry_date":"2026-01-01T12:00:00Z","reservation_id":"42","location_id":"L"}`))
	if !ok || !strings.Contains(string(b), `"reservation_id":42`) {
		t.Errorf("RESERVE_NOW: %s", b)
	}
	for in, want := range map[string]string{"ACCEPTED": `{"result":"ACCEPTED"}`, "UNKNOWN_SESSION": `"result":"FAILED"`} {
		out, _, err := v211.ResultTo221([]byte(`{"result":"` + in + `"}`))
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("result %s → %s %v", in, out, err)
		}
	}
	if _, _, err := v211.ResultTo221([]byte(`{"result":"MAYBE"}`)); err == nil {
		t.Error("an unknown result accepted")
	}
	out, loss, _ := v211.ResultFrom221([]byte(`{"result":"EVSE_OCCUPIED","message":[{"language":"en","text":"busy"}]}`))
	if string(out) != `{"result":"REJECTED"}` || len(loss) != 2 {
		t.Errorf("EVSE_OCCUPIED → %s %v", out, loss)
	}
	out, _, _ = v211.ResponseTo221([]byte(`{"result":"ACCEPTED"}`), 60)
	if string(out) != `{"result":"ACCEPTED","timeout":60}` {
		t.Errorf("response %s", out)
	}
}
