package party

import (
	"slices"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// rememberTTL is how long a replica answers a connected platform's token,
// which connected platform hosts a party, and which parties hold a role, from
// what it read. Its own changes to what a caller or a platform is (a status,
// a token rotated or withdrawn, roles, endpoints, the connection
// hubclientinfo reports, a peer hub's represented parties) it sees at once:
// every write that changes one forgets everything remembered once it has
// committed. Another process's (another replica's, the CLI's, which writes
// to the database directly) it sees within
// rememberTTL, as the authentication guard sees another replica's failures
// within a second (authguard): a platform suspended there may be served here
// for up to a second more, and one added a party there may be refused that
// party here for as long. A platform still PENDING is not remembered (the
// parties of a role are all of them, whatever their platform's status, as
// Hosts always read them).
//
// Without it every authenticated request read the platform and its roles
// by the token's hash first: a round trip on PostgreSQL (nearly all of what
// a versions request costs with one client), on SQLite 8 % of an
// authorize-own's CPU; and every request forwarded to a party, and every CDR
// routed to its eMSP, read the party's platform (10 % of a CDR's handling).
const rememberTTL = time.Second

// rememberMax bounds what is remembered: past it the cache starts again.
// Only what a read found connected is remembered (a token that authenticated
// a platform, a party a platform hosts), so its size is the number of
// platforms and their parties, not something a stranger with made-up tokens
// or party ids can grow.
const rememberMax = 10_000

// memo remembers values read from the database by key, for rememberTTL, as
// copies both ways: what a request does with its copy stays its own.
type memo[V any] struct {
	mu sync.Mutex
	// gen counts the forgetting: a value read by a read that began before
	// the latest one is not put.
	gen     uint64
	entries map[string]memoEntry[V]
	// keep is the copy put (what is remembered), give the copy returned.
	keep, give func(V) V
}

type memoEntry[V any] struct {
	v  V
	at time.Time
}

func newMemo[V any](keep, give func(V) V) *memo[V] {
	return &memo[V]{entries: map[string]memoEntry[V]{}, keep: keep, give: give}
}

// callerCache remembers the platform callers by the hash of their token,
// without the token.
type callerCache = memo[Caller]

func newCallerCache() *callerCache {
	return newMemo(func(c Caller) Caller {
		c.Roles = slices.Clone(c.Roles)
		c.Token, c.TokenBase64 = "", false
		return c
	}, func(c Caller) Caller {
		c.Roles = slices.Clone(c.Roles)
		return c
	})
}

// hostCache remembers the connected platform hosting a party, by role and
// party (FindByParty).
type hostCache = memo[Platform]

func newHostCache() *hostCache {
	clone := func(p Platform) Platform {
		p.Endpoints, p.Roles, p.Warnings = slices.Clone(p.Endpoints), slices.Clone(p.Roles), slices.Clone(p.Warnings)
		return p
	}
	return newMemo(clone, clone)
}

// roleCache remembers, by role, every party a platform hosts in it
// (Hosts).
type roleCache = memo[roleSet]

// roleSet is the parties of one role, read at once. It is only read once
// remembered, so its copies share the map.
type roleSet struct {
	// parties holds partyKey of each; nil when the role has more parties
	// than rememberMax (Hosts then reads the one row it asks about).
	parties map[string]struct{}
}

func newRoleCache() *roleCache {
	same := func(r roleSet) roleSet { return r }
	return newMemo(same, same)
}

// partyKey is how a roleSet holds a party: the country code and party id as
// platform_roles stores them (ocpi.Key).
func partyKey(cc, pid string) string { return ocpi.Key(cc) + "/" + ocpi.Key(pid) }

// generation is the cache's generation before a read that may put its
// result.
func (m *memo[V]) generation() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gen
}

// get returns a copy of the value remembered for key, read within rememberTTL
// of now (and since the last forgetting, which drops them all).
func (m *memo[V]) get(key string, now time.Time) (*V, bool) {
	m.mu.Lock()
	e, ok := m.entries[key]
	m.mu.Unlock()
	if !ok || now.Sub(e.at) >= rememberTTL || now.Before(e.at) {
		return nil, false
	}
	v := m.give(e.v)
	return &v, true
}

// put remembers a copy of v, read at now by a read that began in generation
// gen; a forgetting since then leaves it out.
func (m *memo[V]) put(key string, v *V, gen uint64, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen != m.gen {
		return
	}
	if len(m.entries) >= rememberMax {
		clear(m.entries)
	}
	m.entries[key] = memoEntry[V]{v: m.keep(*v), at: now}
}

// forget drops everything remembered.
func (m *memo[V]) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	clear(m.entries)
}
