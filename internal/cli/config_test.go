package cli

import (
	"bytes"
	"strings"
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

// TestJobSettings: the job timeout and rescue are read as durations, and a
// rescue no longer than the timeout is refused (a job still running would
// be run a second time beside it).
func TestJobSettings(t *testing.T) {
	t.Parallel()
	e := env{stderr: &bytes.Buffer{}, getenv: func(k string) string {
		return map[string]string{"OCPIHUB_JOB_TIMEOUT": "45s"}[k]
	}}
	fs, cfg, apply := newFlagSet(e, "serve", "serve")
	if err := fs.Parse([]string{"--job-rescue-after", "90s"}); err != nil {
		t.Fatal(err)
	}
	if err := apply(); err != nil {
		t.Fatal(err)
	}
	if cfg.JobTimeout != 45*time.Second || cfg.JobRescueAfter != 90*time.Second {
		t.Errorf("job timeout %v, rescue after %v", cfg.JobTimeout, cfg.JobRescueAfter)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("valid job settings refused: %v", err)
	}
	cfg.JobRescueAfter = 45 * time.Second
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "job rescue after") {
		t.Errorf("a rescue no longer than the timeout: %v, want it refused", err)
	}
	cfg.JobTimeout, cfg.JobRescueAfter = 0, 50*time.Second // below the default timeout
	if err := cfg.Validate(); err == nil {
		t.Error("a rescue shorter than the default job timeout was accepted")
	}
}

// TestOTLPSettings: the standard OpenTelemetry variables configure span
// export when the hub's own are not set; the hub's own win; bad headers
// and ratios are refused.
func TestOTLPSettings(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_EXPORTER_OTLP_HEADERS": "api-key=k%2C1",
		"OTEL_SERVICE_NAME": "hub-std", "OCPIHUB_OTLP_SERVICE_NAME": "hub-own"}
	e := env{stderr: &bytes.Buffer{}, getenv: func(k string) string { return vars[k] }}
	fs, cfg, apply := newFlagSet(e, "serve", "serve")
	if err := fs.Parse([]string{"--otlp-sample-ratio", "0.25"}); err != nil {
		t.Fatal(err)
	}
	if err := apply(); err != nil {
		t.Fatal(err)
	}
	if cfg.OTLPEndpoint != "http://collector:4318" || cfg.OTLPHeaders != "api-key=k%2C1" || cfg.OTLPServiceName != "hub-own" || cfg.OTLPSampleRatio != 0.25 {
		t.Errorf("OTLP settings %q %q %q %v", cfg.OTLPEndpoint, cfg.OTLPHeaders, cfg.OTLPServiceName, cfg.OTLPSampleRatio)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("valid OTLP settings refused: %v", err)
	}
	cfg.OTLPEndpoint = "collector:4318"
	if err := cfg.Validate(); err == nil {
		t.Error("an endpoint without a scheme was accepted")
	}
	for _, bad := range [][]string{{"--otlp-headers", "novalue"}, {"--otlp-sample-ratio", "1.5"}, {"--otlp-sample-ratio", "0"}} {
		fs, _, _ := newFlagSet(e, "serve", "serve")
		if err := fs.Parse(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
