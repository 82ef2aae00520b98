package party

import (
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// TestCallerCacheRace: a caller read before a forgetting and put after it
// is not remembered (the write that forgot may have changed it); one read
// after it is. Remembered callers are copies both ways, and last rememberTTL.
func TestCallerCacheRace(t *testing.T) {
	cc := newCallerCache()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &Caller{Kind: CallerPlatform, PlatformID: 7, Status: StatusConnected, Roles: []PartyRef{{Role: RoleCPO, CountryCode: "NL", PartyID: "ACM"}},
		Token: "secret"}

	before := cc.generation()
	cc.forget() // a write committed while the read ran
	cc.put("h", c, before, at)
	if _, ok := cc.get("h", at); ok {
		t.Fatal("a caller read before a forgetting was remembered after it")
	}

	cc.put("h", c, cc.generation(), at)
	c.Roles[0].PartyID, c.Name = "XXX", "changed" // the request's own copy
	got, ok := cc.get("h", at.Add(rememberTTL-time.Nanosecond))
	if !ok || got.Roles[0].PartyID != "ACM" || got.Name != "" || got.Token != "" {
		t.Fatalf("remembered %+v (%v), want the caller as read, without its token", got, ok)
	}
	got.Roles[0].PartyID = "YYY"
	if again, _ := cc.get("h", at); again.Roles[0].PartyID != "ACM" {
		t.Fatal("a caller changed by a request changed the remembered one")
	}
	if _, ok := cc.get("h", at.Add(rememberTTL)); ok {
		t.Fatal("remembered past rememberTTL")
	}
	if _, ok := cc.get("h", at.Add(-time.Second)); ok {
		t.Fatal("remembered before it was read (a clock set back)")
	}
	cc.forget()
	if _, ok := cc.get("h", at); ok {
		t.Fatal("remembered after a forgetting")
	}
}

// TestHostCacheCopies: a remembered platform is a copy both ways (its
// endpoints, roles and warnings included), and one read before a
// forgetting is not put after it.
func TestHostCacheCopies(t *testing.T) {
	hc := newHostCache()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &Platform{ID: 7, Status: StatusConnected, Endpoints: []ocpi.Endpoint{{Identifier: "commands", Role: "RECEIVER", URL: "http://cpo.example/commands"}},
		Roles: []HostedParty{{PartyRef: PartyRef{Role: RoleCPO, CountryCode: "NL", PartyID: "ACM"}}}, Warnings: []string{"w"}}

	before := hc.generation()
	hc.forget()
	hc.put("CPO/NL/ACM", p, before, at)
	if _, ok := hc.get("CPO/NL/ACM", at); ok {
		t.Fatal("a platform read before a forgetting was remembered after it")
	}
	hc.put("CPO/NL/ACM", p, hc.generation(), at)
	p.Endpoints[0].URL, p.Roles[0].PartyID, p.Warnings[0] = "x", "XXX", "x"
	got, ok := hc.get("CPO/NL/ACM", at)
	if !ok || got.Endpoints[0].URL != "http://cpo.example/commands" || got.Roles[0].PartyID != "ACM" || got.Warnings[0] != "w" {
		t.Fatalf("remembered %+v (%v), want the platform as read", got, ok)
	}
	got.Endpoints[0].URL, got.Roles[0].PartyID, got.Warnings[0] = "y", "YYY", "y"
	if again, _ := hc.get("CPO/NL/ACM", at); again.Endpoints[0].URL != "http://cpo.example/commands" || again.Roles[0].PartyID != "ACM" || again.Warnings[0] != "w" {
		t.Fatal("a platform changed by a request changed the remembered one")
	}
	if _, ok := hc.get("CPO/NL/ACM", at.Add(rememberTTL)); ok {
		t.Fatal("remembered past rememberTTL")
	}
}
