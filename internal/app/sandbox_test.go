package app_test

import (
	"testing"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/devgw"
)

func TestSandboxDBURL(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"sqlite:ocpihub.db":          "sqlite:ocpihub-sandbox.db",
		"data/hub.sqlite":            "sqlite:data/hub-sandbox.sqlite",
		"sqlite:/var/lib/ocpihub/db": "sqlite:/var/lib/ocpihub/db-sandbox",
		"postgres://u@db/ocpihub":    "postgres://u@db/ocpihub?search_path=sandbox",
		"postgres://u@db/ocpihub?sslmode=require&search_path=prod": "postgres://u@db/ocpihub?search_path=prod_sandbox&sslmode=require",
	}
	for prod, want := range cases {
		got, err := app.SandboxDBURL(prod)
		if err != nil || got != want {
			t.Errorf("SandboxDBURL(%q) = %q, %v; want %q", prod, got, err, want)
		}
	}
}

func TestSandboxConfig(t *testing.T) {
	t.Parallel()
	cfg := app.Defaults()
	if _, err := cfg.SandboxConfig(); err == nil {
		t.Fatal("a sandbox config without --sandbox-addr")
	}
	cfg.SandboxAddr = "127.0.0.1:9443"
	cfg.PGBaseURL, cfg.PGKeySecret = "https://api.pg.example", "live-secret"
	sc, err := cfg.SandboxConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Sandbox || sc.Addr != "127.0.0.1:9443" || sc.SandboxAddr != "" || sc.DB != "sqlite:ocpihub-sandbox.db" ||
		sc.PGBaseURL != "" || sc.PGKeySecret != "" || !sc.RateLimit.Unlimited() {
		t.Fatalf("sandbox config %+v", sc)
	}
	cfg.SandboxDB = cfg.DB
	if _, err := cfg.SandboxConfig(); err == nil {
		t.Fatal("the sandbox may share production's database")
	}
}

// TestSandboxPaysTheSimulator: the sandbox's payments go to the built-in PG
// simulator even when production talks to a real gateway outside dev mode.
func TestSandboxPaysTheSimulator(t *testing.T) {
	t.Parallel()
	cfg := app.Defaults()
	cfg.SandboxAddr = "127.0.0.1:0"
	cfg.PGBaseURL, cfg.PGKeyID, cfg.PGKeySecret = "https://api.pg.example", "rzp_live_x", "live-secret"
	if gw := sandboxGateway(t, cfg, "http://127.0.0.1:9/ocpi/2.2.1/payments/upi/webhook"); gw.Sim == nil {
		t.Fatal("the sandbox uses a real payment gateway")
	}
}

// gateway builds cfg's payment gateway (the dev-mode simulators at hand);
// it is closed when the test ends.
func gateway(t *testing.T, cfg app.Config, webhookURL string) *app.PaymentGateway {
	t.Helper()
	gw, err := app.NewPaymentGateway(cfg, webhookURL, nil, nil, devgw.Simulators())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	return gw
}

// sandboxGateway is gateway for the sandbox of cfg.
func sandboxGateway(t *testing.T, cfg app.Config, webhookURL string) *app.PaymentGateway {
	t.Helper()
	sc, err := cfg.SandboxConfig()
	if err != nil {
		t.Fatal(err)
	}
	return gateway(t, sc, webhookURL)
}
