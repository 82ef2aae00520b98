package hubtest

import (
	"net/netip"
	"strings"

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
