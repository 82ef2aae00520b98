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
package authguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
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

// Guard counts failed authentications. A nil Guard (or one with Max 0)
// never refuses.
type Guard struct {
	db     *store.DB
	clock  clock.Clock
	max    int
	window time.Duration
	fails  atomic.Int64
}

// New returns a Guard allowing max failures per client per window; max 0
// turns it off.
func New(db *store.DB, clk clock.Clock, max int, window time.Duration) *Guard {
	if window <= 0 {
		window = DefaultWindow
	}
	return &Guard{db: db, clock: clk, max: max, window: window}
}

func (g *Guard) off() bool { return g == nil || g.max <= 0 }

// Blocked reports whether client has used its budget; wait is the time
// until its window ends.
func (g *Guard) Blocked(ctx context.Context, client string) (wait time.Duration, blocked bool, err error) {
	if g.off() {
		return 0, false, nil
	}
	now := g.clock.Now().UnixMicro()
	var start int64
	var n int
	err = g.db.Read().QueryRow(ctx, "SELECT window_start, failures FROM auth_failures WHERE client = $1", client).Scan(&start, &n)
	if errors.Is(err, store.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	end := start + g.window.Microseconds()
	if now >= end || n < g.max {
		return 0, false, nil
	}
	return time.Duration(end-now) * time.Microsecond, true, nil
}

// Fail counts one failed authentication of client. One atomic upsert: the
// replicas of a hub share the count.
func (g *Guard) Fail(ctx context.Context, client string) error {
	if g.off() {
		return nil
	}
	now := g.clock.Now().UnixMicro()
	expired := now - g.window.Microseconds()
	err := g.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO auth_failures (client, window_start, failures) VALUES ($1, $2, 1)
			ON CONFLICT (client) DO UPDATE SET
				failures = CASE WHEN auth_failures.window_start <= $3 THEN 1 ELSE auth_failures.failures + 1 END,
				window_start = CASE WHEN auth_failures.window_start <= $3 THEN excluded.window_start ELSE auth_failures.window_start END`,
			client, now, expired)
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
