package authguard_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/authguard"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

func TestClientAddr(t *testing.T) {
	t.Parallel()
	lb, err := authguard.ParseProxies("10.0.0.0/8, 192.168.1.10")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, remote, xff string
		trusted           authguard.Proxies
		want              string
	}{
		{"no proxy configured: the peer, whatever the header", "203.0.113.9:4000", "198.51.100.1", nil, "203.0.113.9"},
		{"untrusted peer cannot spoof", "203.0.113.9:4000", "198.51.100.1", lb, "203.0.113.9"},
		{"trusted proxy: the client it names", "10.1.2.3:4000", "198.51.100.1", lb, "198.51.100.1"},
		{"client-written hops to the left are ignored", "10.1.2.3:4000", "1.1.1.1, 198.51.100.1", lb, "198.51.100.1"},
		{"chain of trusted proxies", "10.1.2.3:4000", "198.51.100.1, 192.168.1.10", lb, "198.51.100.1"},
		{"trusted proxy without a header", "10.1.2.3:4000", "", lb, "10.1.2.3"},
		{"garbage in the header stops the walk", "10.1.2.3:4000", "198.51.100.1, nonsense", lb, "10.1.2.3"},
		{"IPv4-mapped peer", "[::ffff:10.1.2.3]:4000", "198.51.100.1", lb, "198.51.100.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			if tc.xff != "" {
				r.Header.Set("X-Forwarded-For", tc.xff)
			}
			if got := authguard.ClientAddr(r, tc.trusted); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	if _, err := authguard.ParseProxies("10.0.0.0/33"); err == nil {
		t.Error("a bad CIDR block is accepted")
	}
	if got := authguard.Key("2001:db8:1:2:3:4:5:6"); got != "2001:db8:1:2::/64" {
		t.Errorf("IPv6 key %s", got)
	}
}

// TestGuard: the budget is per client and per window; two replicas (two
// Guards on one database) share it; many other clients failing never wipe a
// client's count; the window's end lifts the block.
func TestGuard(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
		a := authguard.New(db, clk, 10, 5*time.Minute)
		b := authguard.New(db, clk, 10, 5*time.Minute)
		for i := 0; i < 10; i++ {
			g := a
			if i%2 == 1 {
				g = b
			}
			if _, blocked, err := g.Blocked(ctx, "203.0.113.9"); err != nil || blocked {
				t.Fatalf("failure %d: blocked %v, %v", i, blocked, err)
			}
			if err := g.Fail(ctx, "203.0.113.9"); err != nil {
				t.Fatal(err)
			}
		}
		// Many other clients fail (enough to purge expired rows too).
		for i := 0; i < 250; i++ {
			if err := a.Fail(ctx, fmt.Sprintf("198.51.100.%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		wait, blocked, err := b.Blocked(ctx, "203.0.113.9")
		if err != nil || !blocked || wait <= 0 || wait > 5*time.Minute {
			t.Fatalf("after 10 failures on two replicas: blocked %v for %v (%v)", blocked, wait, err)
		}
		if _, blocked, _ := a.Blocked(ctx, "203.0.113.10"); blocked {
			t.Error("another client is blocked too")
		}
		clk.Add(5 * time.Minute)
		if _, blocked, _ := a.Blocked(ctx, "203.0.113.9"); blocked {
			t.Error("still blocked after the window")
		}
		if err := a.Fail(ctx, "203.0.113.9"); err != nil {
			t.Fatal(err)
		}
		if _, blocked, _ := a.Blocked(ctx, "203.0.113.9"); blocked {
			t.Error("one failure in a new window blocks")
		}
	})
}

// TestGuardRemembersASecond: a replica reads a client's counter at most once
// a Seen; its own failures are remembered as counted, so they block at
// once; a budget exhausted on another replica blocks here after at most one
// more failure or a Seen.
func TestGuardRemembersASecond(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
		a := authguard.New(db, clk, 3, 5*time.Minute)
		b := authguard.New(db, clk, 3, 5*time.Minute)
		blocked := func(g *authguard.Guard, client string) (bool, int64) {
			t.Helper()
			ctx, n := store.CountStmts(context.Background())
			_, blocked, err := g.Blocked(ctx, client)
			if err != nil {
				t.Fatal(err)
			}
			return blocked, n.N()
		}
		fail := func(g *authguard.Guard, client string) {
			t.Helper()
			if err := g.Fail(context.Background(), client); err != nil {
				t.Fatal(err)
			}
		}
		const x, y = "203.0.113.9", "203.0.113.10"
		if got, reads := blocked(b, x); got || reads != 1 {
			t.Fatalf("first look at a client: blocked %v after %d reads, want false after 1", got, reads)
		}
		if got, reads := blocked(b, x); got || reads != 0 {
			t.Fatalf("second look within a second: blocked %v after %d reads, want false after 0", got, reads)
		}
		// Replica a counts the whole budget: it blocks at once, without
		// reading.
		for range 3 {
			fail(a, x)
		}
		if got, reads := blocked(a, x); !got || reads != 0 {
			t.Fatalf("after its own 3 failures replica a: blocked %v after %d reads, want true after 0", got, reads)
		}
		// Replica b read the client before that: within the second it still
		// lets the client try, and the first failure it counts blocks.
		if got, _ := blocked(b, x); got {
			t.Fatal("replica b saw the other replica's failures before its second was up")
		}
		fail(b, x)
		if got, reads := blocked(b, x); !got || reads != 0 {
			t.Fatalf("after one more failure on replica b: blocked %v after %d reads, want true after 0", got, reads)
		}
		// Without a failure of its own, a replica sees another's count once
		// its second is up.
		if got, _ := blocked(b, y); got {
			t.Fatal("a client that never failed is blocked")
		}
		for range 3 {
			fail(a, y)
		}
		clk.Add(authguard.Seen)
		if got, reads := blocked(b, y); !got || reads != 1 {
			t.Fatalf("a second after replica a blocked a client, replica b: blocked %v after %d reads, want true after 1", got, reads)
		}
		// The window's end lifts the block without a read.
		clk.Add(5 * time.Minute)
		if got, _ := blocked(b, y); got {
			t.Error("still blocked after the window")
		}
	})
}

// TestGuardForgetsUnderAFlood: a flood of new client addresses keeps a
// bounded memory and each new client is still read.
func TestGuardForgetsUnderAFlood(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
		g := authguard.New(db, clk, 3, 5*time.Minute)
		for range 3 {
			if err := g.Fail(ctx, "203.0.113.9"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 25_000 {
			if i%5000 == 0 {
				clk.Add(authguard.Seen)
			}
			if _, _, err := g.Blocked(ctx, fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255)); err != nil {
				t.Fatal(err)
			}
		}
		if n := g.Remembered(); n > 10_000 {
			t.Errorf("%d clients remembered, want at most 10 000", n)
		}
		if _, blocked, err := g.Blocked(ctx, "203.0.113.9"); err != nil || !blocked {
			t.Errorf("the blocked client was forgotten as blocked: %v, %v", blocked, err)
		}
	})
}
