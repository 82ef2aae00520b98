package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A tariff of 0.50 start fee (20 % VAT) and 0.25 per kWh (10 % VAT), and a
// CDR of 20 kWh that says it costs 6.05 excl. VAT: the engine's 5.50 is 0.55
// less.
const (
	cliTariff = `{"country_code":"IN","party_id":"SUR","id":"T1","currency":"INR","last_updated":"2025-01-01T00:00:00Z",
		"elements":[{"price_components":[{"type":"FLAT","price":0.50,"vat":20,"step_size":1},{"type":"ENERGY","price":0.25,"vat":10,"step_size":1}]}]}`
	cliCDR = `{"country_code":"IN","party_id":"SUR","id":"C1","start_date_time":"2025-06-02T10:00:00Z","end_date_time":"2025-06-02T11:00:00Z",
		"cdr_token":{"country_code":"IN","party_id":"OHE","uid":"U1","type":"APP_USER","contract_id":"C"},"auth_method":"COMMAND",
		"cdr_location":{"id":"L1","address":"a","city":"c","country":"IND","coordinates":{"latitude":"12.9","longitude":"77.5"},
		"evse_uid":"E1","evse_id":"IN*SUR*E1","connector_id":"1","connector_standard":"IEC_62196_T2","connector_format":"SOCKET","connector_power_type":"AC_3_PHASE"},
		"currency":"INR","charging_periods":[{"start_date_time":"2025-06-02T10:00:00Z","dimensions":[{"type":"ENERGY","volume":20}]}],
		"total_cost":{"excl_vat":6.05,"incl_vat":6.71},"total_energy":20,"total_time":1,"last_updated":"2025-06-02T11:00:00Z"}`
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTariffPrice(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"t.json": cliTariff, "c.json": cliCDR,
		"bad.json": strings.Replace(cliTariff, `"price":0.25`, `"price":-0.25`, 1)})
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"tariff", "price", "--tariff", filepath.Join(dir, "t.json"), "--cdr", filepath.Join(dir, "c.json"), "--explain"},
		&out, &errOut, func(string) string { return "" })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got struct {
		TotalCost  map[string]json.Number `json:"total_cost"`
		Difference map[string]json.Number `json:"difference"`
		Explain    []map[string]any       `json:"explain"`
		Lines      []map[string]any       `json:"lines"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got.TotalCost["excl_vat"] != "5.5" || got.TotalCost["incl_vat"] != "6.1" {
		t.Errorf("total_cost = %v, want 5.5 / 6.1", got.TotalCost)
	}
	if got.Difference["excl_vat"] != "0.55" || got.Difference["incl_vat"] != "0.61" {
		t.Errorf("difference = %v, want 0.55 / 0.61", got.Difference)
	}
	if len(got.Explain) == 0 || len(got.Lines) != 2 {
		t.Errorf("explain %d steps, %d lines: %s", len(got.Explain), len(got.Lines), out.String())
	}

	// Bad input: a negative price is named; a missing --cdr is a usage error.
	out.Reset()
	errOut.Reset()
	code = run(context.Background(), []string{"tariff", "price", "--tariff", filepath.Join(dir, "bad.json"), "--cdr", filepath.Join(dir, "c.json")},
		&out, &errOut, func(string) string { return "" })
	if code != 1 || !strings.Contains(errOut.String(), "elements[0].price_components[1].price") {
		t.Errorf("negative price: exit %d, %q", code, errOut.String())
	}
	code = run(context.Background(), []string{"tariff", "price", "--tariff", filepath.Join(dir, "t.json")}, &out, &errOut, func(string) string { return "" })
	if code != 2 {
		t.Errorf("no --cdr or --session: exit %d, want 2", code)
	}
}
