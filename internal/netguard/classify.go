package netguard

import "net/netip"

// block is a range of addresses the guard refuses.
type block struct {
	prefix netip.Prefix
	class  string
}

func blocks(class string, prefixes ...string) []block {
	out := make([]block, len(prefixes))
	for i, p := range prefixes {
		out[i] = block{netip.MustParsePrefix(p), class}
	}
	return out
}

// refused4 and refused6 are the IANA special-purpose ranges (RFC 6890 and
// its updates) that are not globally reachable, plus multicast and the
// documentation and benchmarking ranges. Earlier entries win, so the
// broadcast address is named before the reserved 240/4 it sits in.
var (
	refused4 = concat(
		blocks("unspecified (this network)", "0.0.0.0/8"),
		blocks("private", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"),
		blocks("shared (CGNAT)", "100.64.0.0/10"),
		blocks("loopback", "127.0.0.0/8"),
		blocks("link-local", "169.254.0.0/16"),
		blocks("IETF protocol assignment", "192.0.0.0/24"),
		blocks("documentation", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"),
		blocks("6to4 relay anycast", "192.88.99.0/24"),
		blocks("benchmarking", "198.18.0.0/15"),
		blocks("multicast", "224.0.0.0/4"),
		blocks("broadcast", "255.255.255.255/32"),
		blocks("reserved", "240.0.0.0/4"),
	)
	refused6 = concat(
		blocks("unspecified", "::/128"),
		blocks("loopback", "::1/128"),
		blocks("IPv4-compatible (deprecated)", "::/96"),
		blocks("local-use NAT64", "64:ff9b:1::/48"),
		blocks("discard-only", "100::/64"),
		blocks("Teredo", "2001::/32"),
		blocks("benchmarking", "2001:2::/48"),
		blocks("ORCHID", "2001:10::/28", "2001:20::/28"),
		blocks("documentation", "2001:db8::/32", "3fff::/20"),
		blocks("unique local (private)", "fc00::/7"),
		blocks("link-local", "fe80::/10"),
		blocks("site-local (deprecated)", "fec0::/10"),
		blocks("multicast", "ff00::/8"),
	)
	// Forms of IPv6 that carry an IPv4 address the connection ends up at:
	// the address is judged by the IPv4 address inside.
	mapped     = netip.MustParsePrefix("::ffff:0:0/96")   // IPv4-mapped
	translated = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (SIIT)
	nat64      = netip.MustParsePrefix("64:ff9b::/96")    // well-known NAT64
	sixToFour  = netip.MustParsePrefix("2002::/16")       // 6to4
)

func concat(bs ...[]block) []block {
	var out []block
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// Classify says whether the guard refuses a (without an allow-list) and,
// if so, the class of address it is. An invalid address is refused.
func Classify(a netip.Addr) (class string, refused bool) {
	if !a.IsValid() {
		return "invalid", true
	}
	a = a.WithZone("")
	if a.Is4() {
		return match(refused4, a)
	}
	b := a.As16()
	var inner netip.Addr
	var form string
	switch {
	case mapped.Contains(a):
		inner, form = a.Unmap(), "IPv4-mapped"
	case translated.Contains(a):
		inner, form = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), "IPv4-translated"
	case nat64.Contains(a):
		inner, form = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), "NAT64"
	case sixToFour.Contains(a):
		inner, form = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), "6to4"
	}
	if inner.IsValid() {
		if class, refused := match(refused4, inner); refused {
			return form + " " + class, true
		}
		return "", false
	}
	return match(refused6, a)
}

func match(bs []block, a netip.Addr) (string, bool) {
	for _, b := range bs {
		if b.prefix.Contains(a) {
			return b.class, true
		}
	}
	return "", false
}
