package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
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

// TestTariffPriceTimeZone: restrictions read local time in the zone the
// command names (--time-zone), else the --location file's, else the hub's
// copy of the location (--db), else UTC. The CDR is at 10:00–11:00 UTC,
// 15:30 in India: 0.25 per kWh before noon, 0.50 after.
func TestTariffPriceTimeZone(t *testing.T) {
	t.Parallel()
	tod := `{"country_code":"IN","party_id":"SUR","id":"T2","currency":"INR","last_updated":"2025-01-01T00:00:00Z","elements":[` +
		`{"price_components":[{"type":"ENERGY","price":0.25,"step_size":1}],"restrictions":{"start_time":"00:00","end_time":"12:00"}},` +
		`{"price_components":[{"type":"ENERGY","price":0.50,"step_size":1}]}]}`
	loc := `{"country_code":"IN","party_id":"SUR","id":"L1","publish":true,"address":"a","city":"c","country":"IND",` +
		`"coordinates":{"latitude":"12.9","longitude":"77.5"},"time_zone":"Asia/Kolkata","last_updated":"2025-01-01T00:00:00Z"}`
	dir := writeFiles(t, map[string]string{"t.json": tod, "c.json": cliCDR, "l.json": loc, "nozone.json": strings.Replace(loc, `"time_zone":"Asia/Kolkata",`, "", 1)})

	// A hub's database that holds the location.
	ctx := context.Background()
	dbURL := "sqlite:" + filepath.Join(dir, "hub.db")
	db, err := store.Open(ctx, dbURL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO locations (country_code, party_id, id, publish, lat_e7, lon_e7, last_updated, body)
			VALUES ('IN', 'SUR', 'L1', TRUE, 129000000, 775000000, 0, $1)`, loc)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	price := func(env map[string]string, args ...string) (code int, total, zone, from string, stderr string) {
		var out, errOut bytes.Buffer
		args = append([]string{"tariff", "price", "--tariff", filepath.Join(dir, "t.json"), "--cdr", filepath.Join(dir, "c.json")}, args...)
		code = run(ctx, args, &out, &errOut, func(k string) string { return env[k] })
		var got struct {
			TotalCost    map[string]json.Number `json:"total_cost"`
			TimeZone     string                 `json:"time_zone"`
			TimeZoneFrom string                 `json:"time_zone_from"`
		}
		if code == 0 {
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("%v: %s", err, out.String())
			}
		}
		return code, string(got.TotalCost["excl_vat"]), got.TimeZone, got.TimeZoneFrom, errOut.String()
	}
	for _, c := range []struct {
		name              string
		env               map[string]string
		args              []string
		total, zone, from string
	}{
		{"default UTC", nil, nil, "5", "UTC", "default"},
		{"flag", nil, []string{"--time-zone", "Asia/Kolkata"}, "10", "Asia/Kolkata", "flag"},
		{"location file", nil, []string{"--location", filepath.Join(dir, "l.json")}, "10", "Asia/Kolkata", "location file"},
		{"the flag wins over the location", nil, []string{"--location", filepath.Join(dir, "l.json"), "--time-zone", "UTC"}, "5", "UTC", "flag"},
		{"the hub's location", nil, []string{"--db", dbURL}, "10", "Asia/Kolkata", "hub"},
		{"the hub's location through OCPIHUB_DB", map[string]string{"OCPIHUB_DB": dbURL}, nil, "10", "Asia/Kolkata", "hub"},
	} {
		code, total, zone, from, stderr := price(c.env, c.args...)
		if code != 0 || total != c.total || zone != c.zone || from != c.from {
			t.Errorf("%s: exit %d, total %s in %s from %s (want %s in %s from %s) %s", c.name, code, total, zone, from, c.total, c.zone, c.from, stderr)
		}
	}
	// A location file without a zone, a bad zone and a database that does
	// not exist are usage errors; the command creates no database.
	for name, args := range map[string][]string{
		"location without time_zone": {"--location", filepath.Join(dir, "nozone.json")},
		"unknown zone":               {"--time-zone", "Mars/Olympus"},
		"no database":                {"--db", "sqlite:" + filepath.Join(dir, "none.db")},
	} {
		if code, _, _, _, stderr := price(nil, args...); code != 2 {
			t.Errorf("%s: exit %d, want 2: %s", name, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); err == nil {
		t.Error("tariff price created a database")
	}
}
