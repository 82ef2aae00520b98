package main

import (
	"bytes"
	"testing"
	"time"
)

// TestSettings: flags win over the environment; a switch needs no value;
// the UPI settings read rupees and durations.
func TestSettings(t *testing.T) {
	t.Parallel()
	var errOut bytes.Buffer
	e := env{stderr: &errOut, getenv: func(k string) string {
		return map[string]string{"OCPIHUB_UPI_MIN_AMOUNT": "25.50", "OCPIHUB_UPI_PAYMENT_WINDOW": "10m", "OCPIHUB_DEV": "false"}[k]
	}}
	fs, cfg, apply := newFlagSet(e, "serve", "serve")
	if err := fs.Parse([]string{"--dev", "--upi-presets", "150, 300", "--upi-other-token-cpos", "IN*ABC,NL-XYZ", "--dev=true"}); err != nil {
		t.Fatal(err)
	}
	if err := apply(); err != nil {
		t.Fatal(err)
	}
	if !cfg.DevMode || cfg.UPIMinPaise != 2550 || cfg.UPIPaymentWindow != 10*time.Minute || len(cfg.UPIPresets) != 2 ||
		cfg.UPIPresets[1] != 30000 || len(cfg.UPIOtherTokenCPOs) != 2 {
		t.Errorf("settings %+v", cfg)
	}
	for _, bad := range [][]string{{"--upi-presets", "1.005"}, {"--upi-other-token-cpos", "INDIA*X"}, {"--upi-min-amount", "-1"}, {"--smtp-tls", "ssl"}} {
		fs, _, _ := newFlagSet(e, "serve", "serve")
		if err := fs.Parse(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
