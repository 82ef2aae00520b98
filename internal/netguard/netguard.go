// Package netguard is the outbound address guard: every connection the hub
// opens to an address a partner supplied or an operator configured (OCPI
// partners' versions and module URLs, webhook receivers, the payment
// gateway, the SMTP server) goes through a Guard, which refuses loopback,
// private, link-local, shared (CGNAT), multicast, unspecified, broadcast,
// documentation and benchmarking addresses, their IPv6 equivalents and the
// IPv6 forms that embed a refused IPv4 address — unless the operator's
// allow-list names them.
//
// The check is made on the address actually connected to, after DNS
// resolution, at dial time: the Guard resolves the name itself, refuses the
// addresses it must, and dials the remaining ones as IP literals through a
// net.Dialer whose Control checks the socket's address once more. So a name
// that resolves to a public address when a URL is checked and to 127.0.0.1
// when it is used (DNS rebinding) is refused, and so is every hop of a
// redirect, since each hop is a new dial.
//
// Clients built on a Guard do not use HTTP(S)_PROXY: a proxy resolves the
// name itself, where the guard could not see the address.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// ErrRefused is matched (errors.Is) by every *RefusedError.
var ErrRefused = errors.New("outbound address refused")

// RefusedError is a connection the guard refused.
type RefusedError struct {
	// Host is the name or address the caller asked for.
	Host string
	// Addr is the address refused.
	Addr netip.AddrPort
	// Class is why: "loopback", "private", "link-local", …
	Class string
}

func (e *RefusedError) Error() string {
	host := ""
	if e.Host != "" && e.Host != e.Addr.Addr().String() {
		host = e.Host + " → "
	}
	return fmt.Sprintf("outbound address guard: %s%s is a %s address, which the hub does not connect to (an operator may allow it with --outbound-allow)",
		host, e.Addr, e.Class)
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// IsRefused reports whether err is, or wraps, a refusal of the guard.
func IsRefused(err error) bool { return errors.Is(err, ErrRefused) }

// LookupFunc resolves a host name to its addresses; network is "ip", "ip4"
// or "ip6" (net.Resolver.LookupNetIP).
type LookupFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

// Guard decides which addresses outbound connections may reach. The zero
// value is not usable; build one with New. A Guard is safe for concurrent
// use and never changes: With and WithLookup return copies.
type Guard struct {
	allow  []Rule
	lookup LookupFunc
}

// New returns a guard that refuses every class of Classify except the
// addresses allow names.
func New(allow ...Rule) *Guard {
	return &Guard{allow: append([]Rule(nil), allow...), lookup: net.DefaultResolver.LookupNetIP}
}

// With returns a copy of g that also allows rules (the hub's own built-in
// payment gateway simulator, on a loopback port).
func (g *Guard) With(rules ...Rule) *Guard {
	c := *g
	c.allow = append(append([]Rule(nil), g.allow...), rules...)
	return &c
}

// WithLookup returns a copy of g that resolves names with fn (tests map
// names to the addresses they need).
func (g *Guard) WithLookup(fn LookupFunc) *Guard {
	c := *g
	c.lookup = fn
	return &c
}

// Allowed returns the allow-list.
func (g *Guard) Allowed() []Rule { return append([]Rule(nil), g.allow...) }

// Check returns a *RefusedError when ap may not be connected to, nil when
// it may. host is what the caller asked for, for the error.
func (g *Guard) Check(host string, ap netip.AddrPort) error {
	class, refused := Classify(ap.Addr())
	if !refused {
		return nil
	}
	for _, r := range g.allow {
		if r.Match(ap) {
			return nil
		}
	}
	return &RefusedError{Host: host, Addr: ap, Class: class}
}

// DialContext dials address (host:port) on a TCP network through the guard
// with a default net.Dialer (10 s timeout, 30 s keep-alive). It has the
// signature of http.Transport.DialContext.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return g.Dial(&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second})(ctx, network, address)
}

// Dial returns a dial function that resolves the host with the guard's
// lookup, refuses the addresses the guard refuses, and dials the others in
// turn with d, whose Control checks the socket's address again. d is copied;
// a Control it has runs after the guard's.
func (g *Guard) Dial(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	dialer := *d
	inner := d.Control
	dialer.ControlContext = nil
	dialer.Control = func(network, address string, c syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &RefusedError{Host: address, Class: "unparsable"}
		}
		if err := g.Check("", ap); err != nil {
			return err
		}
		if inner != nil {
			return inner(network, address, c)
		}
		return nil
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, portText, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		port, err := strconv.ParseUint(portText, 10, 16)
		if err != nil {
			if port, err = lookupPort(ctx, network, portText); err != nil {
				return nil, err
			}
		}
		addrs, err := g.resolve(ctx, network, host)
		if err != nil {
			return nil, err
		}
		var firstErr error
		for _, a := range addrs {
			ap := netip.AddrPortFrom(a, uint16(port))
			if err := g.Check(host, ap); err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			c, err := dialer.DialContext(ctx, network, ap.String())
			if err == nil {
				return c, nil
			}
			// A dial error is more telling than a refusal of another
			// address of the same name.
			if firstErr == nil || IsRefused(firstErr) {
				firstErr = err
			}
			if ctx.Err() != nil {
				break
			}
		}
		if firstErr == nil {
			firstErr = &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
		var oe *net.OpError
		if errors.As(firstErr, &oe) {
			return nil, firstErr
		}
		return nil, &net.OpError{Op: "dial", Net: network, Err: firstErr}
	}
}

// resolve returns the addresses of host usable on network: host itself when
// it is an IP literal, else what the lookup returns.
func (g *Guard) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return filterFamily(network, []netip.Addr{a}), nil
	}
	ipnet := "ip"
	switch network {
	case "tcp4", "udp4":
		ipnet = "ip4"
	case "tcp6", "udp6":
		ipnet = "ip6"
	}
	addrs, err := g.lookup(ctx, ipnet, host)
	if err != nil {
		return nil, err
	}
	return filterFamily(network, addrs), nil
}

func filterFamily(network string, addrs []netip.Addr) []netip.Addr {
	out := addrs[:0:0]
	for _, a := range addrs {
		switch network {
		case "tcp4", "udp4":
			if !a.Unmap().Is4() {
				continue
			}
			a = a.Unmap()
		case "tcp6", "udp6":
			if !a.Is6() {
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

func lookupPort(ctx context.Context, network, service string) (uint64, error) {
	p, err := net.DefaultResolver.LookupPort(ctx, network, service)
	return uint64(p), err
}
