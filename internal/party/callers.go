package party

import (
	"slices"
	"sync"
	"time"
)

// callerTTL is how long a replica answers a connected platform's token
// from what it read. Its own changes to what a caller is (a status, a token
// rotated or withdrawn, roles, a peer hub's represented parties) it sees at
// once: every write that changes one forgets every remembered caller once
// it has committed. Another process's (another replica's, the CLI's, which
// writes to the database directly) it sees within callerTTL, as the
// authentication guard sees another replica's failures within a second
// (authguard): a platform suspended there may be served here for up to a
// second more, and one added a party there may be refused that party here
// for as long. A platform still PENDING is not remembered.
//
// Without it every authenticated request read the platform and its roles
// by the token's hash first: a round trip on PostgreSQL (nearly all of what
// a versions request costs with one client), on SQLite 8 % of an
// authorize-own's CPU.
const callerTTL = time.Second

// callerCacheMax bounds the remembered callers: past it the cache starts
// again. Only tokens that authenticated a platform are remembered, so its
// size is the number of platforms (two tokens each at most, during a
// rotation), not something a stranger with made-up tokens can grow.
const callerCacheMax = 10_000

// callerCache remembers the platform callers by the hash of their token.
type callerCache struct {
	mu sync.Mutex
	// gen counts the forgetting: a caller read by a read that began before
	// the latest one is not put.
	gen     uint64
	callers map[string]cachedCaller
}

type cachedCaller struct {
	c  Caller
	at time.Time
}

func newCallerCache() *callerCache { return &callerCache{callers: map[string]cachedCaller{}} }

// generation is the cache's generation before a read that may put its
// result.
func (cc *callerCache) generation() uint64 {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.gen
}

// get returns a copy of the caller remembered for hash, read within
// callerTTL of now (and since the last forgetting, which drops them all).
func (cc *callerCache) get(hash string, now time.Time) (*Caller, bool) {
	cc.mu.Lock()
	e, ok := cc.callers[hash]
	cc.mu.Unlock()
	if !ok || now.Sub(e.at) >= callerTTL || now.Before(e.at) {
		return nil, false
	}
	c := e.c
	c.Roles = slices.Clone(e.c.Roles)
	return &c, true
}

// put remembers a copy of c, read at now by a read that began in
// generation gen; a forgetting since then leaves it out.
func (cc *callerCache) put(hash string, c *Caller, gen uint64, now time.Time) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if gen != cc.gen {
		return
	}
	if len(cc.callers) >= callerCacheMax {
		clear(cc.callers)
	}
	e := cachedCaller{c: *c, at: now}
	e.c.Roles = slices.Clone(c.Roles)
	e.c.Token, e.c.TokenBase64 = "", false
	cc.callers[hash] = e
}

// forget drops every remembered caller.
func (cc *callerCache) forget() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.gen++
	clear(cc.callers)
}
