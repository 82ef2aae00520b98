package hubtest

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// AllowOnly configures a hub as in production (no dev mode) with an
// outbound address guard that lets it reach p and no other service on this
// machine, for the tests of that guard: p stands for an allowed partner,
// every other loopback address for an internal service.
func AllowOnly(p *sim.Platform) func(*Options) {
	ap := netip.MustParseAddrPort(strings.TrimPrefix(p.URL(), "http://"))
	return func(o *Options) {
		o.Config = func(c *app.Config) {
			c.DevMode = false
			c.OutboundAllow = []netguard.Rule{{Prefix: netip.PrefixFrom(ap.Addr(), 32), Port: ap.Port()}}
		}
	}
}

// StartError starts a hub on the database at dbURL with secretKey and
// returns the error it refuses to start with; the test fails when it
// starts, as with a key that cannot open what the database holds sealed.
func StartError(t testing.TB, dbURL, secretKey string) error {
	t.Helper()
	cfg := app.Defaults()
	cfg.DB, cfg.Addr, cfg.AdminToken, cfg.SecretKey = dbURL, "127.0.0.1:0", AdminToken, secretKey
	a, err := app.New(context.Background(), cfg, app.Options{Logger: Logger()})
	if err == nil {
		a.Close(context.Background())
		t.Fatal("a hub started with a key that does not open what its database holds sealed")
	}
	return err
}
