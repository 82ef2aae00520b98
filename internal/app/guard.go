package app

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/netguard"
)

// OutboundGuard returns the address guard every connection to a
// partner-supplied or configured address goes through: OCPI calls
// (registration, discovery, every module URL), webhook deliveries, the
// payment gateway and the SMTP server. It allows OutboundAllow and, in dev
// mode, loopback (the demo and local simulators); a production hub with no
// allow-list refuses every internal address.
func (c Config) OutboundGuard() *netguard.Guard {
	rules := c.OutboundAllow
	if c.DevMode {
		rules = append(append([]netguard.Rule(nil), netguard.Loopback...), rules...)
	}
	return netguard.New(rules...)
}

// validateOutbound fails at start when the configured payment gateway or
// SMTP server is an address the guard would refuse on every call: better a
// clear message now than failed payments and receipts later. Names are
// checked when they are dialled.
func (c Config) validateOutbound() error {
	g := c.OutboundGuard()
	check := func(setting, host, port string) error {
		p, _ := strconv.ParseUint(port, 10, 16)
		var addrs []netip.Addr
		if strings.EqualFold(host, "localhost") {
			addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
		} else if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a}
		}
		for _, a := range addrs {
			if err := g.Check(host, netip.AddrPortFrom(a, uint16(p))); err != nil {
				return fmt.Errorf("%s: %w", setting, err)
			}
		}
		return nil
	}
	if c.PGBaseURL != "" {
		if u, err := url.Parse(c.PGBaseURL); err == nil && u.Host != "" {
			port := u.Port()
			if port == "" {
				port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
			}
			if err := check("--pg-base-url", u.Hostname(), port); err != nil {
				return err
			}
		}
	}
	if c.SMTPAddr != "" {
		if host, port, err := net.SplitHostPort(c.SMTPAddr); err == nil {
			if err := check("--smtp-addr", host, port); err != nil {
				return err
			}
		}
	}
	return nil
}
