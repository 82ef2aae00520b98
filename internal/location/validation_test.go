package location_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
)

// TestValidation sends one bad request per rule and checks the answer's
// HTTP status, status_code and error.details.field, and that nothing
// changed: the stored objects read back byte for byte the same, and nothing
// was queued for the receivers.
func TestValidation(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		base := locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(0), "E1:AVAILABLE", "E2:AVAILABLE")
		b.putT1(t)
		if err := b.CPO.PutLocation(b.ctx, "LOC1", base); err != nil {
			t.Fatal(err)
		}
		edit := func(fn func(m map[string]any)) map[string]any {
			m := locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(1), "E1:AVAILABLE", "E2:AVAILABLE")
			fn(m)
			return m
		}
		evse := func(m map[string]any, i int) map[string]any { return m["evses"].([]any)[i].(map[string]any) }
		conn := func(m map[string]any) map[string]any { return evse(m, 0)["connectors"].([]any)[0].(map[string]any) }
		e1 := func(fn func(m map[string]any)) map[string]any {
			m := evseJSON("E1", "CHARGING", hubtest.Stamp(1))
			fn(m)
			return m
		}
		tests := []struct {
			name         string
			module       string
			method       string
			path         []string
			body         any
			httpStatus   int
			code         int
			field        string
			messageHints string
		}{
			{"id differs from URL", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { m["id"] = "LOC9" }), 200, 2001, "id", ""},
			{"country_code differs from URL", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { m["country_code"] = "BE" }), 200, 2001, "country_code", ""},
			{"party_id differs from URL", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { m["party_id"] = "XXX" }), 200, 2001, "party_id", ""},
			{"address missing", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { delete(m, "address") }), 200, 2001, "address", ""},
			{"address over 255", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { m["address"] = strings.Repeat("a", 256) }), 200, 2001, "address", ""},
			{"state over 45", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { m["state"] = strings.Repeat("s", 46) }), 200, 2001, "state", ""},
			{"publish missing", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { delete(m, "publish") }), 200, 2001, "publish", ""},
			{"latitude as a number", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) {
				m["coordinates"] = map[string]any{"latitude": 12.9716, "longitude": "77.59460"}
			}), 200, 2001, "coordinates.latitude", ""},
			{"time_zone missing", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { delete(m, "time_zone") }), 200, 2001, "time_zone", ""},
			{"last_updated missing", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { delete(m, "last_updated") }), 200, 2001, "last_updated", ""},
			{"EVSE status not in the enum", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { evse(m, 1)["status"] = "UNAVAILABLE" }), 200, 2001, "evses[1].status", ""},
			{"connector voltage as a string", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { conn(m)["max_voltage"] = "230" }), 200, 2001, "evses[0].connectors[0].max_voltage", ""},
			{"connector standard not in the enum", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { conn(m)["standard"] = "TYPE2" }), 200, 2001, "evses[0].connectors[0].standard", ""},
			{"EVSE removed by omission", "locations", "PUT", []string{"LOC1"}, edit(func(m map[string]any) { m["evses"] = m["evses"].([]any)[:1] }), 200, 2001, "evses", "REMOVED"},
			{"body is not JSON", "locations", "PUT", []string{"LOC1"}, "{not json", 400, 2001, "", ""},
			{"location_id over 36", "locations", "PUT", []string{strings.Repeat("L", 37)}, edit(func(m map[string]any) {}), 200, 2001, "location_id", ""},
			{"EVSE uid differs from URL", "locations", "PUT", []string{"LOC1", "E1"}, e1(func(m map[string]any) { m["uid"] = "E7" }), 200, 2001, "uid", ""},
			{"EVSE without connectors", "locations", "PUT", []string{"LOC1", "E1"}, e1(func(m map[string]any) { m["connectors"] = []any{} }), 200, 2001, "connectors", ""},
			{"EVSE status not in the enum", "locations", "PUT", []string{"LOC1", "E1"}, e1(func(m map[string]any) { m["status"] = "UNAVAILABLE" }), 200, 2001, "status", ""},
			{"EVSE of an unknown location", "locations", "PUT", []string{"NOPE", "E1"}, e1(func(m map[string]any) {}), 404, 2003, "", ""},
			{"connector id differs from URL", "locations", "PUT", []string{"LOC1", "E1", "1"}, connectorJSON("2", "CHADEMO", "DC", 500, 125, hubtest.Stamp(1)), 200, 2001, "id", ""},
			{"connector format not in the enum", "locations", "PUT", []string{"LOC1", "E1", "1"}, func() map[string]any {
				c := connectorJSON("1", "CHADEMO", "DC", 500, 125, hubtest.Stamp(1))
				c["format"] = "PLUG"
				return c
			}(), 200, 2001, "format", ""},
			{"PATCH without last_updated", "locations", "PATCH", []string{"LOC1", "E1"}, map[string]any{"status": "CHARGING"}, 200, 2001, "last_updated", ""},
			{"PATCH with a bad status", "locations", "PATCH", []string{"LOC1", "E1"}, map[string]any{"status": "UNAVAILABLE", "last_updated": hubtest.Stamp(2)}, 200, 2001, "status", ""},
			{"PATCH changing the EVSE uid", "locations", "PATCH", []string{"LOC1", "E1"}, map[string]any{"uid": "E9", "last_updated": hubtest.Stamp(2)}, 200, 2001, "uid", ""},
			{"PATCH changing the location id", "locations", "PATCH", []string{"LOC1"}, map[string]any{"id": "LOC2", "last_updated": hubtest.Stamp(2)}, 200, 2001, "id", ""},
			{"PATCH removing a required field", "locations", "PATCH", []string{"LOC1"}, map[string]any{"address": nil, "last_updated": hubtest.Stamp(2)}, 200, 2001, "address", ""},
			{"PATCH removing an EVSE by omission", "locations", "PATCH", []string{"LOC1"}, map[string]any{
				"evses": []any{map[string]any{"uid": "E1", "status": "CHARGING"}}, "last_updated": hubtest.Stamp(2)}, 200, 2001, "evses", "REMOVED"},
			{"PATCH of a connector with a bad amperage", "locations", "PATCH", []string{"LOC1", "E1", "1"}, map[string]any{"max_amperage": "lots", "last_updated": hubtest.Stamp(2)}, 200, 2001, "max_amperage", ""},
			{"PATCH of an unknown location", "locations", "PATCH", []string{"NOPE"}, map[string]any{"name": "x", "last_updated": hubtest.Stamp(2)}, 404, 2003, "", ""},
			{"PUT of an EVSE in an unknown location", "locations", "PUT", []string{"NOPE", "E1"}, evseJSON("E1", "AVAILABLE", hubtest.Stamp(1)), 404, 2003, "", ""},
			{"DELETE of an EVSE", "locations", "DELETE", []string{"LOC1", "E1"}, nil, 405, 2000, "", "REMOVED"},
			{"tariff id differs from URL", "tariffs", "PUT", []string{"T1"}, hubtest.Tariff("NL", "CP1", "T2", hubtest.Stamp(1)), 200, 2001, "id", ""},
			{"tariff currency", "tariffs", "PUT", []string{"T1"}, func() map[string]any {
				m := hubtest.Tariff("NL", "CP1", "T1", hubtest.Stamp(1))
				m["currency"] = "RUPEE"
				return m
			}(), 200, 2001, "currency", ""},
			{"tariff PATCH", "tariffs", "PATCH", []string{"T1"}, map[string]any{"currency": "EUR"}, 405, 2000, "", ""},
			{"DELETE of an unknown tariff", "tariffs", "DELETE", []string{"T9"}, nil, 404, 2000, "", ""},
		}
		before := snapshot(t, b)
		outbox, err := b.h.Hub.Outbox(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			var body any = tt.body
			if s, ok := tt.body.(string); ok {
				body = []byte(s)
			}
			resp, err := b.CPO.Push(b.ctx, tt.module, tt.method, body, nil, tt.path...)
			if err != nil && resp == nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if resp.HTTPStatus != tt.httpStatus || resp.Envelope == nil || resp.Envelope.StatusCode != tt.code {
				t.Errorf("%s: got HTTP %d %s, want HTTP %d status_code %d", tt.name, resp.HTTPStatus, resp.Body, tt.httpStatus, tt.code)
				continue
			}
			if got := hubtest.ErrorField(resp); got != tt.field {
				t.Errorf("%s: error field %q, want %q (%s)", tt.name, got, tt.field, resp.Body)
			}
			if tt.messageHints != "" && !strings.Contains(string(resp.Body), tt.messageHints) {
				t.Errorf("%s: the message does not mention %q: %s", tt.name, tt.messageHints, resp.Body)
			}
		}
		if after := snapshot(t, b); !bytes.Equal(before, after) {
			t.Errorf("rejected requests changed the stored objects:\nbefore %s\nafter  %s", before, after)
		}
		after, err := b.h.Hub.Outbox(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(outbox) {
			t.Errorf("rejected requests queued %d pushes", len(after)-len(outbox))
		}
	})
}

// snapshot reads the CPO's location and tariff back through the hub.
func snapshot(t *testing.T, b *bundle) []byte {
	t.Helper()
	var out []byte
	for _, g := range [][2]string{{"locations", "/NL/CP1/LOC1"}, {"tariffs", "/NL/CP1/T1"}, {"locations", "/NL/CP1/NOPE"}} {
		resp, _ := hubGet(t, b.CPO.Platform, g[0], "RECEIVER", g[1], nil)
		out = append(out, resp.Envelope.Data...)
		out = append(out, '|')
	}
	return out
}
