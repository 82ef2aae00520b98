package netguard

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Rule is one entry of the operator's allow-list: a range of addresses and,
// when Port is not zero, only that port.
type Rule struct {
	Prefix netip.Prefix
	Port   uint16
}

// Loopback allows 127.0.0.0/8 and ::1: what dev mode, the demo and the
// test fixtures allow, so the hub can call simulators on the same machine.
var Loopback = []Rule{
	{Prefix: netip.MustParsePrefix("127.0.0.0/8")},
	{Prefix: netip.MustParsePrefix("::1/128")},
}

// Match reports whether the rule allows ap. IPv4-mapped IPv6 addresses are
// matched as the IPv4 address they carry.
func (r Rule) Match(ap netip.AddrPort) bool {
	if r.Port != 0 && r.Port != ap.Port() {
		return false
	}
	a := ap.Addr().WithZone("")
	return r.Prefix.Contains(a) || r.Prefix.Contains(a.Unmap())
}

// String is the rule as ParseRule reads it.
func (r Rule) String() string {
	p := r.Prefix.String()
	if r.Prefix.IsSingleIP() {
		p = r.Prefix.Addr().String()
	}
	if r.Port == 0 {
		return p
	}
	if r.Prefix.Addr().Is6() {
		p = "[" + p + "]"
	}
	return p + ":" + strconv.Itoa(int(r.Port))
}

// ParseRule reads one allow-list entry: an address (10.1.2.3, ::1), a CIDR
// range (127.0.0.0/8, fd00::/8), or either with a port (10.1.2.3:587,
// [::1]:8443, 10.0.0.0/8:443). Names are not accepted: the guard judges
// addresses, and what a name resolves to can change.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) (Rule, error) {
		return Rule{}, fmt.Errorf("allow-list entry %q: %s (want an address or CIDR range, optionally with :port, e.g. 127.0.0.0/8, ::1, 10.1.2.3:587, [fd00::1]:8443)", s, why)
	}
	if s == "" {
		return bad("empty")
	}
	addr, port := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return bad("no closing ]")
		}
		addr, port = s[1:end], strings.TrimPrefix(s[end+1:], ":")
		if rest := s[end+1:]; rest != "" && !strings.HasPrefix(rest, ":") {
			return bad("junk after ]")
		}
	case strings.Count(s, ":") == 1:
		addr, port, _ = strings.Cut(s, ":")
	}
	var r Rule
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return bad("the port must be 1 to 65535")
		}
		r.Port = uint16(n)
	}
	if strings.Contains(addr, "/") {
		p, err := netip.ParsePrefix(addr)
		if err != nil {
			return bad("not a CIDR range")
		}
		r.Prefix = p.Masked()
		return r, nil
	}
	a, err := netip.ParseAddr(addr)
	if err != nil || a.Zone() != "" {
		return bad("not an IP address")
	}
	r.Prefix = netip.PrefixFrom(a, a.BitLen())
	return r, nil
}

// ParseAllow reads a comma-separated allow-list (--outbound-allow); blanks
// are skipped.
func ParseAllow(s string) ([]Rule, error) {
	var out []Rule
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		r, err := ParseRule(f)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
