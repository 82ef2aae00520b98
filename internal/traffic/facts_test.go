package traffic

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// decodedFacts is what scanFacts read of a body when it decoded it with
// encoding/json, the reference scanFacts is held to; but for a status_code
// that is not a number, which made the whole decoding fail and lost the
// body's ids with it, and is now left out alone.
func decodedFacts(b []byte) facts {
	type idFields struct {
		ID                     any `json:"id"`
		UID                    any `json:"uid"`
		LocationID             any `json:"location_id"`
		EVSEUID                any `json:"evse_uid"`
		SessionID              any `json:"session_id"`
		AuthorizationReference any `json:"authorization_reference"`
		TerminalID             any `json:"terminal_id"`
		TariffID               any `json:"tariff_id"`
		CDRID                  any `json:"cdr_id"`
		CommandID              any `json:"command_id"`
		PaymentID              any `json:"payment_id"`
		OrderID                any `json:"order_id"`
	}
	list := func(f idFields) []string {
		var out []string
		for _, v := range []any{f.ID, f.UID, f.LocationID, f.EVSEUID, f.SessionID, f.AuthorizationReference, f.TerminalID,
			f.TariffID, f.CDRID, f.CommandID, f.PaymentID, f.OrderID} {
			if s, ok := v.(string); ok && s != "" && len(s) <= 64 {
				out = append(out, s)
			}
		}
		return out
	}
	var bf struct {
		idFields
		StatusCode json.RawMessage `json:"status_code"`
		Data       json.RawMessage `json:"data"`
	}
	var f facts
	if b[0] != '{' || json.Unmarshal(b, &bf) != nil {
		return f
	}
	f.objectIDs = list(bf.idFields)
	if n, err := strconv.ParseInt(string(bf.StatusCode), 10, 64); err == nil {
		f.statusCode = int(n)
	}
	if len(bf.Data) > 0 && bf.Data[0] == '{' {
		var d idFields
		if json.Unmarshal(bf.Data, &d) == nil {
			f.objectIDs = append(f.objectIDs, list(d)...)
		}
	}
	return f
}

// TestScanFactsAsDecoding: scanning a body's top-level keys finds the
// facts decoding it found, for envelopes, pages, objects, repeated and
// differently cased keys, ids of other types and broken JSON.
func TestScanFactsAsDecoding(t *testing.T) {
	page := `{"status_code":1000,"timestamp":"2026-01-01T00:00:00Z","data":[` + strings.Repeat(`{"id":"L1","evses":[{"uid":"E1"}]},`, 50) + `{"id":"L2"}]}`
	bodies := []string{
		`{"status_code":1000,"data":{"id":"LOC1","evses":[{"uid":"E1"}],"party_id":"CP1"}}`,
		`{"status_code":2001,"status_message":"bad"}`,
		`{"id":"S1","location_id":"LOC1","evse_uid":"E1","session_id":"S1","authorization_reference":"A1"}`,
		`{"ID":"upper","Status_Code":1000,"Data":{"UID":"u1"}}`,
		`{"id":"first","id":"second","status_code":1000,"status_code":2000}`,
		`{"id":5,"uid":null,"command_id":["x"],"cdr_id":{"a":1},"order_id":"` + strings.Repeat("o", 65) + `"}`,
		`{"status_code":1000.5,"data":"text"}`,
		`{"status_code":1000,"data":[{"id":"in a list"}]}`,
		`{"id":"esc\u00e9\"q","data":{"payment_id":"p\\1"}}`,
		`{"id":"broken"`, `{"id":"x"} trailing`, `{}`, `{"data":{}}`,
		page,
	}
	rng := rand.New(rand.NewPCG(3, 4))
	keys := append(slices.Clone(factKeys[:]), "status_code", "data", "other", "Id", "STATUS_CODE")
	values := []string{`"v1"`, `"v2"`, `7`, `null`, `true`, `[]`, `{"id":"nested"}`, `1000`, `"` + strings.Repeat("x", 64) + `"`}
	for range 500 {
		bodies = append(bodies, randomObject(rng, keys, values))
	}
	for _, b := range bodies {
		got, want := scanFacts([]byte(b)), decodedFacts([]byte(b))
		if got.statusCode != want.statusCode || !slices.Equal(got.objectIDs, want.objectIDs) {
			t.Errorf("%.120s:\n got %+v\nwant %+v", b, got, want)
		}
	}
}

// randomObject is a JSON object of up to seven members, their keys drawn
// from keys and their values from values (written as they stand).
func randomObject(rng *rand.Rand, keys, values []string) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i := range rng.IntN(8) {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "%q:%s", keys[rng.IntN(len(keys))], values[rng.IntN(len(values))])
	}
	sb.WriteByte('}')
	return sb.String()
}

// BenchmarkScanFacts reads the facts of a directory page of 100 locations.
func BenchmarkScanFacts(b *testing.B) {
	page := []byte(`{"status_code":1000,"status_message":"Success","timestamp":"2026-01-01T00:00:00Z","data":[` +
		strings.TrimSuffix(strings.Repeat(`{"country_code":"NL","party_id":"DIR","id":"D000001","publish":true,"address":"Bench Road 1","city":"Pune","evses":[{"uid":"E1","status":"AVAILABLE","connectors":[{"id":"1","standard":"IEC_62196_T2"}]}]},`, 100), ",") + `]}`)
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			scanFacts(page)
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			decodedFacts(page)
		}
	})
}
