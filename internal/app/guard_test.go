package app_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/pg"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
)

// TestOutboundGuard: production refuses loopback; dev mode allows loopback
// and nothing more; the allow-list adds exactly what it names.
func TestOutboundGuard(t *testing.T) {
	t.Parallel()
	check := func(cfg app.Config, addr string) bool {
		return cfg.OutboundGuard().Check("", netip.MustParseAddrPort(addr)) == nil
	}
	prod := app.Defaults()
	dev := app.Defaults()
	dev.DevMode = true
	allow := app.Defaults()
	allow.OutboundAllow, _ = netguard.ParseAllow("10.1.2.3:587")
	for _, tc := range []struct {
		name string
		cfg  app.Config
		addr string
		want bool
	}{
		{"production, loopback", prod, "127.0.0.1:8080", false},
		{"production, IPv6 loopback", prod, "[::1]:8080", false},
		{"production, metadata", prod, "169.254.169.254:80", false},
		{"production, public", prod, "8.8.8.8:443", true},
		{"dev, loopback", dev, "127.0.0.1:8080", true},
		{"dev, IPv6 loopback", dev, "[::1]:8080", true},
		{"dev, private", dev, "10.0.0.1:80", false},
		{"allowed relay", allow, "10.1.2.3:587", true},
		{"allowed relay, other port", allow, "10.1.2.3:25", false},
	} {
		if got := check(tc.cfg, tc.addr); got != tc.want {
			t.Errorf("%s: %s allowed %v, want %v", tc.name, tc.addr, got, tc.want)
		}
	}
}

// TestValidateRefusedPGAndSMTP: a PG or SMTP server configured at an
// address the guard refuses stops the hub at start, naming the setting and
// the allow-list; the allow-list, dev mode (loopback) or a name lets it by.
func TestValidateRefusedPGAndSMTP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		edit    func(*app.Config)
		wantErr string
	}{
		{"PG on loopback", func(c *app.Config) { c.PGBaseURL = "http://127.0.0.1:9000" }, "--pg-base-url"},
		{"PG on a private address", func(c *app.Config) { c.PGBaseURL = "https://10.0.0.5" }, "--pg-base-url"},
		{"SMTP on localhost", func(c *app.Config) { c.SMTPAddr = "localhost:25" }, "--smtp-addr"},
		{"SMTP on a private address", func(c *app.Config) { c.SMTPAddr = "192.168.1.10:587" }, "--smtp-addr"},
		{"SMTP allowed", func(c *app.Config) {
			c.SMTPAddr = "192.168.1.10:587"
			c.OutboundAllow, _ = netguard.ParseAllow("192.168.1.10:587")
		}, ""},
		{"PG on loopback in dev mode", func(c *app.Config) { c.PGBaseURL, c.DevMode = "http://127.0.0.1:9000", true }, ""},
		{"names are checked when dialled", func(c *app.Config) { c.PGBaseURL, c.SMTPAddr = "https://api.pg.example", "smtp.example.com:587" }, ""},
	} {
		cfg := app.Defaults()
		tc.edit(&cfg)
		err := cfg.Validate()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--outbound-allow")):
			t.Errorf("%s: %v, want an error naming %s and --outbound-allow", tc.name, err, tc.wantErr)
		}
	}
}

// TestPaymentGatewayDialsThroughTheGuard: the PG client refuses a gateway
// on a refused address (here the simulator on loopback, outside dev mode)
// before connecting, and reaches it once the allow-list names it; the
// sandbox's built-in simulator is reachable without any allow-list.
func TestPaymentGatewayDialsThroughTheGuard(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sim, err := pgsim.Start(pgsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	cfg := app.Defaults()
	cfg.PGBaseURL, cfg.PGKeyID, cfg.PGKeySecret = sim.URL(), sim.KeyID(), sim.KeySecret()
	gw := gateway(t, cfg, "")
	if _, err := gw.CreateOrder(ctx, pg.OrderRequest{Amount: pg.INR(10000)}); !netguard.IsRefused(err) {
		t.Errorf("order at a PG on loopback outside dev mode: %v, want refused by the guard", err)
	}
	cfg.OutboundAllow, _ = netguard.ParseAllow(strings.TrimPrefix(sim.URL(), "http://"))
	gw = gateway(t, cfg, "")
	if _, err := gw.CreateOrder(ctx, pg.OrderRequest{Amount: pg.INR(10000)}); err != nil {
		t.Errorf("order at an allowed PG: %v", err)
	}

	sb := app.Defaults()
	sb.SandboxAddr = "127.0.0.1:0"
	own := sandboxGateway(t, sb, "")
	if _, err := own.CreateOrder(ctx, pg.OrderRequest{Amount: pg.INR(10000)}); err != nil {
		t.Errorf("order at the sandbox's own simulator: %v", err)
	}
}
