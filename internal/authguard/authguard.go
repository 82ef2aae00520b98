// Package authguard throttles failed authentication on every token surface
// (the admin API, OCPI, the console's sign-in): each client gets a budget of
// failures per window, counted in the database so every replica enforces
// the same budget.
//
// A client is its address, taken from X-Forwarded-For only when the
// connection comes from a trusted proxy (ClientAddr); IPv6 clients are
// counted per /64, the block one subscriber usually holds. A client past
// its budget is refused before its credential is looked at: answering the
// right token while refusing wrong ones would let guessing continue at full
// speed. The holder of the right credential is therefore never kept out by
// anyone else's failures (there is no shared or global counter, and
// counters are never wiped wholesale), only by failures of its own address.
//
// Each replica remembers for a second what it last read or counted of a
// client (Seen), so a request costs no read of the counter when its client
// was seen in the last second: every authenticated request used to read it.
// A failure is counted in the database at once and the count that comes
// back is what the replica remembers, so a replica enforces the budget the
// moment its own failures exhaust it. What a replica can miss for up to a
// second is a budget exhausted on another replica: the client's next failure
// here is counted, comes back over budget and blocks it, so a client gets at
// most one more guess per replica (and the requests it has in flight there
// at that moment) than the budget.
package authguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Defaults: 10 failures per client per 5 minutes.
const (
	DefaultMax    = 10
	DefaultWindow = 5 * time.Minute
)

// Seen is how long a replica answers Blocked from what it last read or
// counted of a client.
const Seen = time.Second

// maxSeen bounds the clients remembered; past it the entries older than
// Seen are dropped (a flood of new addresses costs reads, not memory).
const maxSeen = 10_000

// seen is a client's counter as this replica last read or counted it.
type seen struct {
	start    int64 // window start, µs; 0: no row
	failures int
	at       int64 // when it was read, µs
}

// Guard counts failed authentications. A nil Guard (or one with Max 0)
// never refuses.
type Guard struct {
	db     *store.DB
	clock  clock.Clock
	max    int
	window time.Duration
	fails  atomic.Int64

	mu   sync.Mutex
	seen map[string]seen
}

// New returns a Guard allowing max failures per client per window; max 0
// turns it off.
func New(db *store.DB, clk clock.Clock, max int, window time.Duration) *Guard {
	if window <= 0 {
		window = DefaultWindow
	}
	return &Guard{db: db, clock: clk, max: max, window: window, seen: map[string]seen{}}
}

func (g *Guard) off() bool { return g == nil || g.max <= 0 }

// Blocked reports whether client has used its budget; wait is the time
// until its window ends. It reads the client's counter unless this replica
// read or counted it in the last Seen.
func (g *Guard) Blocked(ctx context.Context, client string) (wait time.Duration, blocked bool, err error) {
	if g.off() {
		return 0, false, nil
	}
	now := g.clock.Now().UnixMicro()
	c, ok := g.recall(client, now)
	if !ok {
		c = seen{at: now}
		err = g.db.Read().QueryRow(ctx, "SELECT window_start, failures FROM auth_failures WHERE client = $1", client).Scan(&c.start, &c.failures)
		if errors.Is(err, store.ErrNoRows) {
			err = nil
		}
		if err != nil {
			return 0, false, err
		}
		g.remember(client, c)
	}
	end := c.start + g.window.Microseconds()
	if now >= end || c.failures < g.max {
		return 0, false, nil
	}
	return time.Duration(end-now) * time.Microsecond, true, nil
}

// recall returns what this replica read or counted of client in the last
// Seen.
func (g *Guard) recall(client string, now int64) (seen, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.seen[client]
	if !ok || now-c.at >= Seen.Microseconds() || now < c.at {
		return seen{}, false
	}
	return c, true
}

// remember keeps c as client's counter, unless a newer reading is kept
// already.
func (g *Guard) remember(client string, c seen) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if old, ok := g.seen[client]; ok && old.at > c.at {
		return
	}
	if len(g.seen) >= maxSeen {
		for k, v := range g.seen {
			if c.at-v.at >= Seen.Microseconds() {
				delete(g.seen, k)
			}
		}
		if len(g.seen) >= maxSeen {
			clear(g.seen)
		}
	}
	g.seen[client] = c
}

// Fail counts one failed authentication of client. One atomic upsert: the
// replicas of a hub share the count, and the count it returns is what this
// replica remembers of the client.
func (g *Guard) Fail(ctx context.Context, client string) error {
	if g.off() {
		return nil
	}
	now := g.clock.Now().UnixMicro()
	expired := now - g.window.Microseconds()
	c := seen{at: now}
	err := g.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO auth_failures (client, window_start, failures) VALUES ($1, $2, 1)
			ON CONFLICT (client) DO UPDATE SET
				failures = CASE WHEN auth_failures.window_start <= $3 THEN 1 ELSE auth_failures.failures + 1 END,
				window_start = CASE WHEN auth_failures.window_start <= $3 THEN excluded.window_start ELSE auth_failures.window_start END
			RETURNING window_start, failures`,
			client, now, expired).Scan(&c.start, &c.failures)
		if err != nil {
			return err
		}
		// Every 100th failure purges the windows that ended: the table
		// stays as small as the clients failing right now.
		if g.fails.Add(1)%100 == 0 {
			_, err = tx.Exec(ctx, "DELETE FROM auth_failures WHERE window_start <= $1", expired)
		}
		return err
	})
	if err == nil {
		g.remember(client, c)
	}
	return err
}

// Proxies are the addresses whose X-Forwarded-For is believed.
type Proxies []netip.Prefix

// ParseProxies reads a comma-separated list of addresses and CIDR blocks
// ("10.0.0.0/8, 192.168.1.10").
func ParseProxies(s string) (Proxies, error) {
	var out Proxies
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, err
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, err
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

func (ps Proxies) trusts(a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// ClientAddr returns the address of the client of r: the connection's
// peer, or, when the peer is a trusted proxy, the last address in
// X-Forwarded-For that is not itself a trusted proxy (addresses further left
// are written by the client and prove nothing).
func ClientAddr(r *http.Request, trusted Proxies) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap()
	if !trusted.trusts(peer) {
		return peer.String()
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		client = a.Unmap()
		if !trusted.trusts(client) {
			break
		}
	}
	return client.String()
}

// Key is the counter of a client address: the address itself, or its /64
// for IPv6.
func Key(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil || a.Is4() {
		return addr
	}
	p, _ := a.Prefix(64)
	return p.String()
}
