package party_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/sim"
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
// forwarded request, command, session and CDR is routed by) is read once a
// second, inside a transaction too; the replica's own changes to it (its
// connection found down, a suspension) hold at once, and a transaction
// that changes platforms reads through what it changed.
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

		// A transaction that changes no platform (a session routed to its
		// token's eMSP) answers from memory; one that changes platforms
		// reads through what it changed; rolled back, the remembered
		// platform stands.
		findHost(t, h, ctx(t), "NL", "ACM")
		rollback := errors.New("rolled back")
		err = h.DB.InTx(ctx(t), func(c context.Context, tx *store.Tx) error {
			if p, n := findHost(t, h, c, "NL", "ACM"); p.ID != pl.ID || n != 0 {
				t.Errorf("in a transaction that changed nothing yet: %+v after %d statements; want it from memory", p, n)
			}
			h.Parties.ForgetAtCommit(tx)
			if _, err := tx.Exec(c, "UPDATE platforms SET name = 'Renamed' WHERE id = $1", pl.ID); err != nil {
				return err
			}
			if p, n := findHost(t, h, c, "NL", "ACM"); p.Name != "Renamed" || n == 0 {
				t.Errorf("inside the transaction that renamed it: %q after %d statements; want it read", p.Name, n)
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

// hosts asks h whether cc/pid holds role and counts the statements it took.
func hosts(t *testing.T, h *hubtest.Hub, c context.Context, role party.Role, cc, pid string) (bool, int64) {
	t.Helper()
	c, n := store.CountStmts(c)
	ok, err := h.Parties.Hosts(c, role, cc, pid)
	if err != nil {
		t.Fatalf("hosts %s %s/%s: %v", role, cc, pid, err)
	}
	return ok, n.N()
}

// TestRoleRememberedForASecond: the parties of a role (what every session
// and CDR asks of its token's owner, inside its write transaction) are read
// at once and remembered for a second, the answers "no" included; the
// replica's own registrations hold at once, another process's within the
// second; a transaction that changes platforms reads through its change.
func TestRoleRememberedForASecond(t *testing.T) {
	t.Parallel()
	hubtest.EachFake(t, func(t *testing.T, h *hubtest.Hub, clk *clock.Fake) {
		_, pl := addAcme(t, h)
		if ok, n := hosts(t, h, ctx(t), party.RoleCPO, "nl", "acm"); !ok || n != 1 {
			t.Fatalf("first: %v after %d statements; want true, one read", ok, n)
		}
		for _, c := range []struct {
			cc, pid string
			want    bool
		}{{"NL", "ACM", true}, {"NL", "XXX", false}, {"DE", "ACM", false}} {
			if ok, n := hosts(t, h, ctx(t), party.RoleCPO, c.cc, c.pid); ok != c.want || n != 0 {
				t.Fatalf("%s/%s within the second: %v after %d statements; want %v from memory", c.cc, c.pid, ok, n, c.want)
			}
		}
		if ok, n := hosts(t, h, ctx(t), party.RolePTP, "NL", "ACM"); ok || n != 1 {
			t.Fatalf("another role: %v after %d statements; want false, read", ok, n)
		}

		// Registered here: at once.
		hubtest.Add(t, h, sim.StartCPO, "Bolt", "NL", "BLT")
		if ok, n := hosts(t, h, ctx(t), party.RoleCPO, "NL", "BLT"); !ok || n == 0 {
			t.Fatalf("right after a registration: %v after %d statements; want true, read again", ok, n)
		}

		// Written by another process: within the second.
		exec := func(c context.Context, q string, args ...any) {
			t.Helper()
			if err := h.DB.InTx(c, func(c context.Context, tx *store.Tx) error {
				_, err := tx.Exec(c, q, args...)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		addRole := `INSERT INTO platform_roles (platform_id, role, country_code, party_id, business_details, updated_at)
			SELECT platform_id, 'CPO', 'NL', $2, business_details, 0 FROM platform_roles WHERE platform_id = $1 LIMIT 1`
		exec(ctx(t), addRole, pl.ID, "NEW")
		if ok, n := hosts(t, h, ctx(t), party.RoleCPO, "NL", "NEW"); ok || n != 0 {
			t.Fatalf("another process's new party within the second: %v after %d statements; want false from memory", ok, n)
		}
		clk.Add(time.Second)
		if ok, n := hosts(t, h, ctx(t), party.RoleCPO, "NL", "NEW"); !ok || n != 1 {
			t.Fatalf("a second later: %v after %d statements; want true, read again", ok, n)
		}

		// A transaction that changes platforms reads through its change;
		// rolled back, the remembered parties stand.
		rollback := errors.New("rolled back")
		err := h.DB.InTx(ctx(t), func(c context.Context, tx *store.Tx) error {
			if ok, n := hosts(t, h, c, party.RoleCPO, "NL", "TXN"); ok || n != 0 {
				t.Errorf("in a transaction that changed nothing yet: %v after %d statements; want false from memory", ok, n)
			}
			h.Parties.ForgetAtCommit(tx)
			if _, err := tx.Exec(c, strings.Replace(addRole, "$2", "'TXN'", 1), pl.ID); err != nil {
				return err
			}
			if ok, n := hosts(t, h, c, party.RoleCPO, "NL", "TXN"); !ok || n != 1 {
				t.Errorf("inside the transaction that added it: %v after %d statements; want true, read", ok, n)
			}
			return rollback
		})
		if !errors.Is(err, rollback) {
			t.Fatal(err)
		}
		if ok, n := hosts(t, h, ctx(t), party.RoleCPO, "NL", "NEW"); !ok || n != 0 {
			t.Fatalf("after the rollback: %v after %d statements; want true from memory", ok, n)
		}
		if ok, _ := hosts(t, h, ctx(t), party.RoleCPO, "NL", "TXN"); ok {
			t.Fatal("after the rollback: the party the transaction added")
		}

		// A role with more parties than are remembered: each answer reads
		// its own row.
		exec(ctx(t), `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)
			INSERT INTO platform_roles (platform_id, role, country_code, party_id, business_details, updated_at)
			SELECT $1, 'NSP', 'ZZ', 'P' || i, (SELECT business_details FROM platform_roles WHERE platform_id = $1 LIMIT 1), 0 FROM n`,
			pl.ID, party.RememberMax+1)
		clk.Add(time.Second)
		for i, c := range []struct {
			pid  string
			want bool
		}{{"P1", true}, {"P1", true}, {"Q1", false}, {fmt.Sprint("P", party.RememberMax+1), true}} {
			ok, n := hosts(t, h, ctx(t), party.Role("NSP"), "ZZ", c.pid)
			if ok != c.want || n == 0 || (i > 0 && n != 1) {
				t.Fatalf("a role of %d parties, ZZ/%s: %v after %d statements; want %v, its row read", party.RememberMax+1, c.pid, ok, n, c.want)
			}
		}
	})
}
