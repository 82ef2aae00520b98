package netguard_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/netguard"
)

// TestClassify covers every refused class, IPv4 and IPv6, and the IPv6
// forms that carry an IPv4 address, next to public neighbours of each
// range that must pass.
func TestClassify(t *testing.T) {
	t.Parallel()
	refused := map[string]string{
		"0.0.0.0":         "unspecified (this network)",
		"0.1.2.3":         "unspecified (this network)",
		"10.0.0.1":        "private",
		"10.255.255.255":  "private",
		"172.16.0.1":      "private",
		"172.31.255.254":  "private",
		"192.168.1.1":     "private",
		"100.64.0.1":      "shared (CGNAT)",
		"100.127.255.254": "shared (CGNAT)",
		"127.0.0.1":       "loopback",
		"127.255.255.254": "loopback",
		"169.254.169.254": "link-local",
		"192.0.0.8":       "IETF protocol assignment",
		"192.0.2.1":       "documentation",
		"198.51.100.7":    "documentation",
		"203.0.113.9":     "documentation",
		"192.88.99.1":     "6to4 relay anycast",
		"198.18.0.1":      "benchmarking",
		"198.19.255.254":  "benchmarking",
		"224.0.0.1":       "multicast",
		"239.255.255.250": "multicast",
		"240.0.0.1":       "reserved",
		"255.255.255.255": "broadcast",

		"::":               "unspecified",
		"::1":              "loopback",
		"::127.0.0.1":      "IPv4-compatible (deprecated)",
		"fc00::1":          "unique local (private)",
		"fd12:3456::1":     "unique local (private)",
		"fe80::1":          "link-local",
		"fe80::1%eth0":     "link-local",
		"febf:ffff::1":     "link-local",
		"fec0::1":          "site-local (deprecated)",
		"ff02::1":          "multicast",
		"ff0e::1":          "multicast",
		"2001:db8::1":      "documentation",
		"3fff::1":          "documentation",
		"2001::1":          "Teredo",
		"2001:2::1":        "benchmarking",
		"2001:10::1":       "ORCHID",
		"64:ff9b:1::1":     "local-use NAT64",
		"100::1":           "discard-only",
		"::ffff:0:0.0.0.1": "IPv4-translated unspecified (this network)",

		"::ffff:127.0.0.1":       "IPv4-mapped loopback",
		"::ffff:10.1.2.3":        "IPv4-mapped private",
		"::ffff:169.254.169.254": "IPv4-mapped link-local",
		"::ffff:100.64.0.1":      "IPv4-mapped shared (CGNAT)",
		"::ffff:0:127.0.0.1":     "IPv4-translated loopback",
		"::ffff:0:192.168.0.1":   "IPv4-translated private",
		"64:ff9b::127.0.0.1":     "NAT64 loopback",
		"64:ff9b::a00:1":         "NAT64 private",
		"2002:7f00:1::1":         "6to4 loopback",
		"2002:c0a8:101::1":       "6to4 private",
		"2002:a9fe:a9fe::":       "6to4 link-local",
	}
	allowed := []string{
		"8.8.8.8", "1.1.1.1", "9.255.255.255", "11.0.0.1", "100.63.255.255", "100.128.0.1",
		"126.255.255.255", "128.0.0.1", "169.253.255.255", "169.255.0.1", "172.15.255.255",
		"172.32.0.1", "192.167.255.255", "192.169.0.1", "198.17.255.255", "198.20.0.1", "223.255.255.255",
		"2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "2001:4860:4860::8888", "fbff::1", "fe00::1",
		"::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
	}
	got := map[string]string{}
	for s := range refused {
		class, ok := netguard.Classify(netip.MustParseAddr(s))
		if !ok {
			class = "(allowed)"
		}
		got[s] = class
	}
	if d := cmp.Diff(refused, got); d != "" {
		t.Errorf("refused classes (-want +got):\n%s", d)
	}
	for _, s := range allowed {
		if class, ok := netguard.Classify(netip.MustParseAddr(s)); ok {
			t.Errorf("%s refused as %s, want allowed", s, class)
		}
	}
	if _, ok := netguard.Classify(netip.Addr{}); !ok {
		t.Error("the zero address is allowed, want refused")
	}
}

func TestParseRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"127.0.0.0/8", "127.0.0.0/8"},
		{" 10.1.2.3 ", "10.1.2.3"},
		{"10.1.2.3:587", "10.1.2.3:587"},
		{"10.0.0.0/8:443", "10.0.0.0/8:443"},
		{"10.1.2.3/8", "10.0.0.0/8"},
		{"::1", "::1"},
		{"[::1]:8443", "[::1]:8443"},
		{"fd00::/8", "fd00::/8"},
		{"[fd00::/8]:443", "[fd00::/8]:443"},
	} {
		r, err := netguard.ParseRule(tc.in)
		if err != nil || r.String() != tc.want {
			t.Errorf("ParseRule(%q) = %v, %v; want %s", tc.in, r, err, tc.want)
		}
	}
	for _, in := range []string{"", "localhost", "smtp.example.com:587", "10.1.2.3:0", "10.1.2.3:70000", "10.0.0.0/33",
		"[::1", "[::1]x", "fe80::1%eth0", "1.2.3"} {
		if r, err := netguard.ParseRule(in); err == nil {
			t.Errorf("ParseRule(%q) = %v, want an error", in, r)
		}
	}
	rules, err := netguard.ParseAllow("127.0.0.0/8, ::1,,10.1.2.3:587")
	if err != nil || len(rules) != 3 {
		t.Fatalf("ParseAllow: %v, %v", rules, err)
	}
	if _, err := netguard.ParseAllow("127.0.0.0/8,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("ParseAllow with a bad entry: %v, want an error naming it", err)
	}
}

// TestAllowList: the operator's entries open exactly what they name —
// ranges, single addresses, one port — and IPv4 entries cover the mapped
// IPv6 form of the same address.
func TestAllowList(t *testing.T) {
	t.Parallel()
	rules, err := netguard.ParseAllow("127.0.0.0/8,10.1.2.3:587,fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	g := netguard.New(rules...)
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:80", true},
		{"127.9.9.9:1", true},
		{"[::ffff:127.0.0.1]:80", true},
		{"10.1.2.3:587", true},
		{"10.1.2.3:25", false},
		{"10.1.2.4:587", false},
		{"[fd00::1]:443", true},
		{"[fc00::1]:443", false},
		{"[::1]:80", false},
		{"169.254.169.254:80", false},
		{"8.8.8.8:53", true},
	} {
		err := g.Check("", netip.MustParseAddrPort(tc.addr))
		if (err == nil) != tc.ok {
			t.Errorf("Check(%s) = %v, want allowed %v", tc.addr, err, tc.ok)
		}
		if err != nil && !errors.Is(err, netguard.ErrRefused) {
			t.Errorf("Check(%s) = %v, not ErrRefused", tc.addr, err)
		}
	}
	if got := netguard.New().Check("", netip.MustParseAddrPort("127.0.0.1:80")); got == nil {
		t.Error("a guard without an allow-list allows loopback")
	}
}

// lookup is a resolver for tests: names map to fixed addresses, or to a
// sequence of answers, one per lookup (the last repeats).
type lookup struct {
	mu    sync.Mutex
	names map[string][]string
	calls map[string]int
}

func (l *lookup) fn(ctx context.Context, network, host string) ([]netip.Addr, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	answers, ok := l.names[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	if l.calls == nil {
		l.calls = map[string]int{}
	}
	n := l.calls[host]
	l.calls[host]++
	var out []netip.Addr
	for _, a := range strings.Split(answers[min(n, len(answers)-1)], ",") {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// server is a loopback HTTP server that counts the connections it accepts.
type server struct {
	*httptest.Server
	conns atomic.Int64
}

func startServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *server) port() string {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	return p
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }

func client(g *netguard.Guard) *http.Client {
	tr := g.Transport()
	tr.DisableKeepAlives = true
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// TestDialRefusesBeforeConnecting: a refused address gets the same error
// whether something listens there or not, and no connection is made.
func TestDialRefusesBeforeConnecting(t *testing.T) {
	t.Parallel()
	live := startServer(t, ok)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	c := client(netguard.New())
	var texts []string
	for _, addr := range []string{live.Listener.Addr().String(), closedAddr} {
		_, err := c.Get("http://" + addr + "/")
		if !netguard.IsRefused(err) {
			t.Fatalf("GET %s: %v, want refused by the guard", addr, err)
		}
		_, port, _ := net.SplitHostPort(addr)
		texts = append(texts, strings.ReplaceAll(err.Error(), port, "PORT"))
	}
	if texts[0] != texts[1] {
		t.Errorf("a live port and a closed port are told apart:\n%s\n%s", texts[0], texts[1])
	}
	if n := live.conns.Load(); n != 0 {
		t.Errorf("the live server accepted %d connections, want none", n)
	}
	// IPv6 loopback and the IPv4-mapped form of 127.0.0.1 alike.
	for _, u := range []string{"http://[::1]:" + live.port() + "/", "http://[::ffff:127.0.0.1]:" + live.port() + "/"} {
		if _, err := c.Get(u); !netguard.IsRefused(err) {
			t.Errorf("GET %s: %v, want refused", u, err)
		}
	}
	if n := live.conns.Load(); n != 0 {
		t.Errorf("the live server accepted %d connections, want none", n)
	}
}

// TestNameResolvingToRefusedAddress: the guard judges what a name resolves
// to, not the name, and each dial resolves again, so a name that first
// pointed at an allowed address and then at a refused one (DNS rebinding)
// is refused on the second connection.
func TestNameResolvingToRefusedAddress(t *testing.T) {
	t.Parallel()
	srv := startServer(t, ok)
	l := &lookup{names: map[string][]string{
		"partner.example":  {"10.20.30.40"},
		"internal.example": {"127.0.0.1"},
		"rebind.example":   {"127.0.0.1", "127.0.0.2"},
		"mixed.example":    {"10.0.0.1,127.0.0.1"},
	}}
	strict := netguard.New().WithLookup(l.fn)
	for _, host := range []string{"partner.example", "internal.example"} {
		_, err := client(strict).Get("http://" + host + ":" + srv.port() + "/")
		var re *netguard.RefusedError
		if !errors.As(err, &re) || re.Host != host {
			t.Errorf("GET %s: %v, want refused naming the host", host, err)
		}
	}
	if n := srv.conns.Load(); n != 0 {
		t.Fatalf("%d connections reached the server, want none", n)
	}

	// Only 127.0.0.1 allowed: the first lookup of rebind.example passes,
	// the second (a new connection) is refused.
	one := netguard.New(netguard.Rule{Prefix: netip.MustParsePrefix("127.0.0.1/32")}).WithLookup(l.fn)
	c := client(one)
	resp, err := c.Get("http://rebind.example:" + srv.port() + "/")
	if err != nil {
		t.Fatalf("first GET: %v", err)
	}
	resp.Body.Close()
	_, err = c.Get("http://rebind.example:" + srv.port() + "/")
	var re *netguard.RefusedError
	if !errors.As(err, &re) || re.Addr.Addr() != netip.MustParseAddr("127.0.0.2") {
		t.Errorf("second GET after the name moved to 127.0.0.2: %v, want refused", err)
	}
	// A name with a refused and an allowed address reaches the allowed one.
	resp, err = c.Get("http://mixed.example:" + srv.port() + "/")
	if err != nil {
		t.Fatalf("GET mixed.example: %v", err)
	}
	resp.Body.Close()
	if n := srv.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (rebind's first, mixed's)", n)
	}
}

// TestRedirectToRefusedAddress: every redirect hop is a dial and is
// checked; a partner at an allowed address cannot bounce the hub to a
// refused one, by address or by name.
func TestRedirectToRefusedAddress(t *testing.T) {
	t.Parallel()
	target := startServer(t, ok)
	l := &lookup{names: map[string][]string{"internal.example": {"10.9.8.7"}}}
	for _, to := range []string{
		"http://127.0.0.1:" + target.port() + "/secret",
		"http://[::1]:" + target.port() + "/secret",
		"http://internal.example:" + target.port() + "/secret",
	} {
		partner := startServer(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) })
		// The operator allowed the partner's port only.
		g := netguard.New(netguard.Rule{Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: portOf(t, partner)}).WithLookup(l.fn)
		_, err := client(g).Get(partner.URL + "/ocpi/versions")
		if !netguard.IsRefused(err) {
			t.Errorf("redirect to %s: %v, want refused", to, err)
		}
		if partner.conns.Load() != 1 {
			t.Errorf("redirect to %s: the partner saw %d connections, want 1", to, partner.conns.Load())
		}
	}
	if n := target.conns.Load(); n != 0 {
		t.Errorf("the redirect target accepted %d connections, want none", n)
	}
}

func portOf(t *testing.T, s *server) uint16 {
	t.Helper()
	var p uint16
	if _, err := fmt.Sscan(s.port(), &p); err != nil {
		t.Fatal(err)
	}
	return p
}
