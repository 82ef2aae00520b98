package party_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/store"
)

// authenticate resolves token on h and counts the statements it took.
func authenticate(t *testing.T, h *hubtest.Hub, token string) (*party.Caller, int64, error) {
	t.Helper()
	c, n := store.CountStmts(ctx(t))
	caller, err := h.Parties.Authenticate(c, []string{token})
	return caller, n.N(), err
}

// TestCallerRememberedForASecond: a replica reads a platform's token once a
// second; its own changes (suspending, resuming, rotating the token,
// unregistering) hold from the next request on, through the API as well.
func TestCallerRememberedForASecond(t *testing.T) {
	t.Parallel()
	hubtest.EachFake(t, func(t *testing.T, h *hubtest.Hub, clk *clock.Fake) {
		cpo, pl := addAcme(t, h)
		if _, _, err := authenticate(t, h, cpo.Token()); err != nil {
			t.Fatal(err)
		}
		c, n, err := authenticate(t, h, cpo.Token())
		if err != nil || n != 0 || c.PlatformID != pl.ID || !c.Owns(party.RoleCPO, "NL", "ACM") || c.Token != cpo.Token() {
			t.Fatalf("again within the second: %+v after %d statements, %v; want the platform from memory", c, n, err)
		}
		// What a request does with its caller stays its own.
		c.Roles, c.Name = nil, "changed"
		if c, _, _ := authenticate(t, h, cpo.Token()); len(c.Roles) == 0 || c.Name == "changed" {
			t.Fatalf("a caller changed by its request changed the remembered one: %+v", c)
		}
		clk.Add(time.Second)
		if _, n, err := authenticate(t, h, cpo.Token()); err != nil || n == 0 {
			t.Fatalf("a second later: %d statements, %v; want the platform read again", n, err)
		}

		if err := h.Parties.Suspend(ctx(t), pl.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := authenticate(t, h, cpo.Token()); ocpi.ErrorCode(err) != ocpi.EUNAUTHORIZED {
			t.Fatalf("right after the suspension: %v, want EUNAUTHORIZED", err)
		}
		st, code := call(t, h, http.MethodGet, "/ocpi/2.2.1/hubclientinfo", cpo.Token(), true, nil)
		wantStatus(t, "suspended", st, code, http.StatusUnauthorized, ocpi.StatusClientError)
		if err := h.Parties.Resume(ctx(t), pl.ID); err != nil {
			t.Fatal(err)
		}
		st, code = call(t, h, http.MethodGet, "/ocpi/2.2.1/hubclientinfo", cpo.Token(), true, nil)
		wantStatus(t, "resumed", st, code, http.StatusOK, ocpi.StatusSuccess)

		old := cpo.Token()
		if _, err := h.Parties.Rotate(ctx(t), pl.ID); err != nil {
			t.Fatal(err)
		}
		if cpo.Token() == old {
			t.Fatal("the CPO kept its token through the rotation")
		}
		st, code = call(t, h, http.MethodGet, "/ocpi/2.2.1/hubclientinfo", old, true, nil)
		wantStatus(t, "the token rotated away", st, code, http.StatusUnauthorized, ocpi.StatusClientError)
		st, code = call(t, h, http.MethodGet, "/ocpi/2.2.1/hubclientinfo", cpo.Token(), true, nil)
		wantStatus(t, "the new token", st, code, http.StatusOK, ocpi.StatusSuccess)

		if err := cpo.Unregister(ctx(t)); err != nil {
			t.Fatal(err)
		}
		st, code = call(t, h, http.MethodGet, "/ocpi/2.2.1/hubclientinfo", cpo.Token(), true, nil)
		wantStatus(t, "unregistered", st, code, http.StatusUnauthorized, ocpi.StatusClientError)
	})
}

// TestOtherReplicaRefusesASuspendedPlatform: two replicas on one PostgreSQL
// database. The replica that suspends a platform refuses it at once; the
// other, which had read it and remembers it for a second, hears of the
// suspension when it commits (store.Listen) and refuses it too, its clock
// unmoved; so it does a platform resumed. (A change another process writes
// without telling, as the tests of the second write the database directly,
// reaches it when the second is up.)
func TestOtherReplicaRefusesASuspendedPlatform(t *testing.T) {
	t.Parallel()
	start := time.Now().Truncate(time.Second)
	clkA, clkB := clock.NewFake(start), clock.NewFake(start)
	a := hubtest.Start(t, store.Postgres, func(o *hubtest.Options) { o.Clock = clkA })
	b := hubtest.Start(t, store.Postgres, func(o *hubtest.Options) { o.Clock, o.DBURL = clkB, a.DBURL })
	cpo, pl := addAcme(t, a)
	if _, _, err := authenticate(t, b, cpo.Token()); err != nil {
		t.Fatal(err)
	}
	if _, n, err := authenticate(t, b, cpo.Token()); err != nil || n != 0 {
		t.Fatalf("the other replica, again: %d statements, %v; want the platform from memory", n, err)
	}
	if err := a.Parties.Suspend(ctx(t), pl.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := authenticate(t, a, cpo.Token()); ocpi.ErrorCode(err) != ocpi.EUNAUTHORIZED {
		t.Fatalf("the suspending replica: %v, want EUNAUTHORIZED", err)
	}
	hubtest.Eventually(t, ctx(t), "the other replica refuses the suspended platform", func() bool {
		_, _, err := authenticate(t, b, cpo.Token())
		return ocpi.ErrorCode(err) == ocpi.EUNAUTHORIZED
	})
	if err := a.Parties.Resume(ctx(t), pl.ID); err != nil {
		t.Fatal(err)
	}
	hubtest.Eventually(t, ctx(t), "the other replica accepts the resumed platform", func() bool {
		_, _, err := authenticate(t, b, cpo.Token())
		return err == nil
	})
	if now := clkB.Now(); !now.Equal(start) {
		t.Fatalf("the other replica's clock moved to %v", now)
	}
}

// findHost finds the platform hosting cc/pid as a CPO on h and counts the
// statements it took.
func findHost(t *testing.T, h *hubtest.Hub, c context.Context, cc, pid string) (*party.Platform, int64) {
	t.Helper()
	c, n := store.CountStmts(c)
	p, err := h.Parties.FindByParty(c, party.RoleCPO, cc, pid)
	if err != nil {
		t.Fatalf("platform of %s/%s: %v", cc, pid, err)
	}
	return p, n.N()
}

// TestHostRememberedForASecond: the platform hosting a party (what every
// forwarded request, command and CDR is routed by) is read once a second;
// the replica's own changes to it (its connection found down, a
// suspension) hold at once, and a transaction reads through what it
// changed.
func TestHostRememberedForASecond(t *testing.T) {
	t.Parallel()
	hubtest.EachFake(t, func(t *testing.T, h *hubtest.Hub, clk *clock.Fake) {
		cpo, pl := addAcme(t, h)
		clk.Add(6 * time.Minute) // silent long enough for the liveness check below
		findHost(t, h, ctx(t), "NL", "ACM")
		p, n := findHost(t, h, ctx(t), "NL", "ACM")
		if n != 0 || p.ID != pl.ID || len(p.Endpoints) == 0 || len(p.Roles) == 0 {
			t.Fatalf("again within the second: %+v after %d statements; want the platform from memory", p, n)
		}
		// What a request does with its platform stays its own.
		p.Endpoints[0].URL, p.Roles, p.Name = "http://elsewhere.invalid", nil, "changed"
		if p, _ := findHost(t, h, ctx(t), "NL", "ACM"); p.Endpoints[0].URL == "http://elsewhere.invalid" || len(p.Roles) == 0 || p.Name == "changed" {
			t.Fatalf("a platform changed by its request changed the remembered one: %+v", p)
		}

		// The liveness check finds the CPO down: OFFLINE here at once.
		cpo.SetDown(true)
		if err := h.Parties.CheckLiveness(ctx(t)); err != nil {
			t.Fatal(err)
		}
		if p, n := findHost(t, h, ctx(t), "NL", "ACM"); p.Connection != party.ClientOffline || n == 0 {
			t.Fatalf("after the failed liveness check: %s after %d statements; want OFFLINE, read again", p.Connection, n)
		}
		_, err := routing.New(h.Parties).Address(ctx(t), party.RoleCPO, routing.Party{CountryCode: "NL", PartyID: "ACM"}, "commands", ocpi.InterfaceReceiver)
		if ocpi.ErrorCode(err) != ocpi.ENOTCONNECTED {
			t.Fatalf("a command to the OFFLINE CPO: %v, want ENOTCONNECTED", err)
		}
		cpo.SetDown(false)
		if err := h.Parties.CheckLiveness(ctx(t)); err != nil {
			t.Fatal(err)
		}
		if p, _ := findHost(t, h, ctx(t), "NL", "ACM"); p.Connection != party.ClientConnected {
			t.Fatalf("after the good liveness check: %s, want CONNECTED", p.Connection)
		}

		// A transaction reads through what it changed; rolled back, the
		// remembered platform stands.
		findHost(t, h, ctx(t), "NL", "ACM")
		rollback := errors.New("rolled back")
		err = h.DB.InTx(ctx(t), func(c context.Context, tx *store.Tx) error {
			if _, err := tx.Exec(c, "UPDATE platforms SET name = 'Renamed' WHERE id = $1", pl.ID); err != nil {
				return err
			}
			if p, _ := findHost(t, h, c, "NL", "ACM"); p.Name != "Renamed" {
				t.Errorf("inside the transaction that renamed it: %q", p.Name)
			}
			return rollback
		})
		if !errors.Is(err, rollback) {
			t.Fatal(err)
		}
		if p, n := findHost(t, h, ctx(t), "NL", "ACM"); p.Name != pl.Name || n != 0 {
			t.Fatalf("after the rollback: %q after %d statements; want %q from memory", p.Name, n, pl.Name)
		}

		// Suspended: at once; a second later read again.
		if err := h.Parties.Suspend(ctx(t), pl.ID); err != nil {
			t.Fatal(err)
		}
		if p, _ := findHost(t, h, ctx(t), "NL", "ACM"); p.Status != party.StatusSuspended {
			t.Fatalf("right after the suspension: %s", p.Status)
		}
		if err := h.Parties.Resume(ctx(t), pl.ID); err != nil {
			t.Fatal(err)
		}
		findHost(t, h, ctx(t), "NL", "ACM")
		clk.Add(time.Second)
		if _, n := findHost(t, h, ctx(t), "NL", "ACM"); n == 0 {
			t.Fatal("a second later: no statement; want the platform read again")
		}
	})
}
