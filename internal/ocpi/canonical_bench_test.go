package ocpi_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// BenchmarkCanonicalCDR: a CDR decoded, validated and brought to the form
// the hub stores, as its POST does.
func BenchmarkCanonicalCDR(b *testing.B) {
	raw := []byte(validCDR)
	b.ReportAllocs()
	for b.Loop() {
		var d ocpi.CDR
		if err := ocpi.DecodeValid(raw, &d); err != nil {
			b.Fatal(err)
		}
		if _, err := ocpi.Canonical(raw, &d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonicalLongCDR brings a decoded CDR with 24 charging periods
// (two hours of five-minute meter values, 3.6 KB as sent) to its stored
// form, Canonical alone.
func BenchmarkCanonicalLongCDR(b *testing.B) {
	var ps []any
	for i := range 24 {
		ps = append(ps, map[string]any{"start_date_time": fmt.Sprintf("2026-03-01T%02d:%02d:00Z", 10+i/12, i*5%60), "dimensions": []any{
			map[string]any{"type": "ENERGY", "volume": 0.52}, map[string]any{"type": "TIME", "volume": 0.083}}})
	}
	raw, _ := json.Marshal(map[string]any{"country_code": "IN", "party_id": "CP1", "id": "CDR1", "session_id": "S1",
		"start_date_time": "2026-03-01T10:00:00Z", "end_date_time": "2026-03-01T12:00:00Z", "auth_method": "WHITELIST",
		"cdr_token": map[string]any{"country_code": "DE", "party_id": "EM1", "uid": "T1", "type": "RFID", "contract_id": "C1"},
		"cdr_location": map[string]any{"id": "LOC1", "address": "Road 1", "city": "Pune", "country": "IND",
			"coordinates": map[string]any{"latitude": "18.00001", "longitude": "73.85670"}, "evse_uid": "E1", "evse_id": "IN*CP1*E1",
			"connector_id": "1", "connector_standard": "IEC_62196_T2", "connector_format": "SOCKET", "connector_power_type": "AC_3_PHASE"},
		"currency": "INR", "charging_periods": ps, "total_cost": map[string]any{"excl_vat": 230.88, "incl_vat": 272.44},
		"total_energy": 12.48, "total_time": 2, "last_updated": "2026-03-01T12:00:00Z"})
	var d ocpi.CDR
	if err := ocpi.DecodeValid(raw, &d); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ocpi.Canonical(raw, &d); err != nil {
			b.Fatal(err)
		}
	}
}
