package storetest

import (
	"errors"
	"net"
	neturl "net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
)

// Proxy is a TCP relay to the database server. A test can cut it (every
// relayed connection closed, new ones refused, until it is restored) and
// count the round trips that cross it: the times a client sends after the
// server answered it (or first), whatever it sends at once.
type Proxy struct {
	target string
	l      net.Listener
	// flights counts the round trips (Flights).
	flights atomic.Int64

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]bool
}

// ProxiedURL returns a fresh PostgreSQL database's URL as a process reaches
// it through a Proxy, the Proxy, and the URL as it is (for the test's own
// reads).
func ProxiedURL(t testing.TB) (p *Proxy, proxied, direct string) {
	t.Helper()
	direct = URL(t, store.Postgres)
	u, err := neturl.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	p = StartProxy(t, u.Host)
	u.Host = p.Addr()
	return p, u.String(), direct
}

// StartProxy relays to target until the test ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{target: target, l: l, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { l.Close(); p.Cut() })
	go p.serve()
	return p
}

// Addr is the address clients connect to.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// Flights returns the round trips counted since the last ResetFlights.
func (p *Proxy) Flights() int64 { return p.flights.Load() }

// ResetFlights starts the count again.
func (p *Proxy) ResetFlights() { p.flights.Store(0) }

func (p *Proxy) serve() {
	for {
		c, err := p.l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		go p.relay(c)
	}
}

func (p *Proxy) relay(c net.Conn) {
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.mu.Unlock()
	d, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		d.Close()
		return
	}
	p.conns[c], p.conns[d] = true, true
	p.mu.Unlock()
	// answered is set once the server sent something since the client
	// last did: the client's next send is a new round trip.
	var answered atomic.Bool
	answered.Store(true)
	done := make(chan struct{}, 2)
	go pipe(d, c, done, func() {
		if answered.Swap(false) {
			p.flights.Add(1)
		}
	})
	go pipe(c, d, done, func() { answered.Store(true) })
	<-done
	c.Close()
	d.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, d)
	p.mu.Unlock()
}

// pipe copies src to dst, calling sent before passing each read on, until
// either side fails.
func pipe(dst, src net.Conn, done chan<- struct{}, sent func()) {
	defer func() { done <- struct{}{} }()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			sent()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Cut closes every relayed connection and refuses new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}
